/* report_memory.c - `cxlsim memory`'s summary and JSON (report_memory.h). */
#include "cli/report_memory.h"

#include "cli/cli_run.h"

void report_memory_text(FILE *so, const expcfg *x, const gpumem *m, const tiers *tr)
{
    const traincfg *t = &x->train;
    fprintf(so, "%s: %s\n", x->name, x->description);
    fprintf(so, "  model       %s, %.2f B parameters\n", x->model.name,
            (double)modelcfg_total_params(&x->model) / 1e9);
    fprintf(so, "  cluster     %llu x %llu %s (%s)\n", (unsigned long long)x->cluster.nodes,
            (unsigned long long)x->cluster.gpus_per_node, x->gpu.name, x->cluster.name);
    fprintf(so, "  layout      tp %llu, pp %llu, dp %llu, sp %s, virtual stages %llu, ZeRO %llu%s, recompute %s\n",
            (unsigned long long)t->tp, (unsigned long long)t->pp, (unsigned long long)t->dp, t->sp ? "on" : "off",
            (unsigned long long)t->virtual_stages, (unsigned long long)t->zero,
            t->data_parallel == TRAINCFG_DP_FSDP ? " (Megatron-FSDP)" : "",
            traincfg_recompute_names[t->recompute]);
    if (t->pipeline_schedule != TRAINCFG_SCHEDULE_AUTO)
        fprintf(so, "  schedule    %s\n", traincfg_schedule_names[t->pipeline_schedule]);
    if (t->cp > 1)
        fprintf(so, "  context parallelism: cp %llu (each GPU holds 1/%llu of every sequence)\n",
                (unsigned long long)t->cp, (unsigned long long)t->cp);
    fprintf(so, "  memory per GPU (pipeline stage %llu, the largest), GiB:\n", (unsigned long long)m->stage);
    fprintf(so, "    weights      %8.2f\n    gradients    %8.2f\n    optimizer    %8.2f\n    activations  %8.2f\n"
            "    total        %8.2f   of %.2f GiB HBM\n",
            m->weights_bytes / GIB, m->gradients_bytes / GIB, m->optimizer_bytes / GIB, m->activations_bytes / GIB,
            m->total_bytes / GIB, (double)x->gpu.hbm_bytes / GIB);
    if (m->host_activations_bytes > 0) {
        fprintf(so, "  CPU activation offload: %llu layers, %.2f GiB per GPU in host memory, %.2f GiB per node",
                (unsigned long long)t->cpu_offload_layers, m->host_activations_bytes / GIB,
                m->host_activations_bytes * (double)x->cluster.gpus_per_node / GIB);
        if (x->cluster.host_memory_bytes)
            fprintf(so, " of %.2f GiB\n", (double)x->cluster.host_memory_bytes / GIB);
        else
            fprintf(so, " (the cluster gives no host_memory to check)\n");
    }
    if (tr && x->cxl.memory != CXLCFG_NONE)
        fprintf(so, "  after offloading to CXL (%s '%s'): HBM %.2f GiB per GPU; CXL %.2f GiB per GPU, %.2f of %.2f GiB "
                "in the fullest domain\n",
                cxlcfg_memory_names[x->cxl.memory], x->cxl.dev.name, tr->hbm_bytes / GIB,
                tr->cxl_bytes_per_gpu / GIB, tr->cxl_bytes_per_domain / GIB, tr->cxl_capacity_per_domain / GIB);
}

void report_gpumem_json(json_w *w, const gpumem *m, int with_stage)
{
    json_obj_begin(w, "memory_per_gpu_gib");
    json_num(w, "weights", m->weights_bytes / GIB);
    json_num(w, "gradients", m->gradients_bytes / GIB);
    json_num(w, "optimizer", m->optimizer_bytes / GIB);
    json_num(w, "activations", m->activations_bytes / GIB);
    json_num(w, "total", m->total_bytes / GIB);
    if (m->host_activations_bytes > 0)
        json_num(w, "host_activations", m->host_activations_bytes / GIB);
    if (with_stage)
        json_u64(w, "stage", m->stage);
    json_obj_end(w);
}

void report_tiers_json(json_w *w, const tiers *t)
{
    json_obj_begin(w, "tiers_gib");
    json_num(w, "hbm_per_gpu", t->hbm_bytes / GIB);
    json_num(w, "cxl_per_gpu", t->cxl_bytes_per_gpu / GIB);
    json_num(w, "cxl_per_domain", t->cxl_bytes_per_domain / GIB);
    json_num(w, "cxl_capacity_per_domain", t->cxl_capacity_per_domain / GIB);
    json_obj_end(w);
}

void report_memory_json(json_w *w, const expcfg *x, const gpumem *m, const tiers *tr)
{
    json_str(w, "experiment", x->name);
    json_u64(w, "parameters", modelcfg_total_params(&x->model));
    json_u64(w, "stage", m->stage);
    report_gpumem_json(w, m, 0);
    json_num(w, "hbm_gib", (double)x->gpu.hbm_bytes / GIB);
    report_tiers_json(w, tr);
}
