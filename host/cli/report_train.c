/* report_train.c - `cxlsim train`'s summary and JSON (report_train.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_train.h"

#include <stdlib.h>
#include <string.h>

#include "cli/cli_run.h"
#include "train/collalgo.h"
#include "train/collmodel.h"
#include "train/nccltune.h"
#include "cli/report_json.h"
#include "cli/report_memory.h"

static void text_resolved(FILE *so, const expcfg *x);

static void text_setup(FILE *so, const expcfg *x)
{
    const traincfg *t = &x->train;
    fprintf(so, "%s: %s\n", x->name, x->description);
    fprintf(so, "  model       %s, %.2f B parameters, sequence %llu\n", x->model.name,
            (double)modelcfg_total_params(&x->model) / 1e9, (unsigned long long)x->model.seq_len);
    if (modelcfg_is_moe(&x->model))
        fprintf(so, "  experts     %llu, top-%llu, %.2f B active parameters, ep %llu, etp %llu\n",
                (unsigned long long)x->model.experts, (unsigned long long)x->model.top_k,
                (double)modelcfg_active_params(&x->model) / 1e9, (unsigned long long)t->ep,
                (unsigned long long)(t->etp ? t->etp : t->tp));
    fprintf(so, "  cluster     %llu x %llu %s (%s)\n", (unsigned long long)x->cluster.nodes,
            (unsigned long long)x->cluster.gpus_per_node, x->gpu.name, x->cluster.name);
    fprintf(so, "  layout      tp %llu, pp %llu, dp %llu, sp %s, virtual stages %llu, ZeRO %llu%s, recompute %s, "
            "global batch %llu, micro-batch %llu\n",
            (unsigned long long)t->tp, (unsigned long long)t->pp, (unsigned long long)t->dp, t->sp ? "on" : "off",
            (unsigned long long)t->virtual_stages, (unsigned long long)t->zero,
            t->data_parallel == TRAINCFG_DP_FSDP ? " (Megatron-FSDP)" : "", traincfg_recompute_names[t->recompute],
            (unsigned long long)t->global_batch, (unsigned long long)t->micro_batch);
    if (t->cp > 1 || t->attention != TRAINCFG_ATTENTION_FLASH)
        fprintf(so, "  attention   %s, cp %llu\n", traincfg_attention_names[t->attention], (unsigned long long)t->cp);
    if (t->pipeline_schedule != TRAINCFG_SCHEDULE_AUTO)
        fprintf(so, "  schedule    %s\n", traincfg_schedule_names[t->pipeline_schedule]);
    text_resolved(so, x);
}

/* The bandwidths the engine uses, per direction, in B/s (0: not given or not present). */
typedef struct train_bw {
    double nvlink_gpu;       /* gpu.nvlink_bandwidth (per direction) x nvlink_efficiency (collmodel_fabric) */
    double nic;              /* one NIC: nic_bandwidth x nic_efficiency */
    double scale_out_node;   /* the node's NICs, / oversubscription on a fat tree */
    double scale_out_gpu;    /* one GPU's share of them (collmodel_fabric) */
    double host_link_gpu;    /* cluster.host_link_bandwidth */
    double cxl_gpu_path;     /* cxl.gpu_path_bandwidth, per GPU */
    double cxl_link;         /* the device's host link: rate x width / 8, before flit overhead (the device
                                model charges the flits itself) */
} train_bw;

static void bandwidths(const expcfg *x, train_bw *b)
{
    const clustercfg *c = &x->cluster;
    collalgo_fabric fab;
    double intra, inter;
    collmodel_fabric(c, &x->gpu, &fab, &intra, &inter);
    memset(b, 0, sizeof *b);
    b->nvlink_gpu = x->gpu.nvlink_bw_bps ? intra : 0;
    b->nic = (double)c->nic_bw_bps * c->nic_efficiency;
    b->scale_out_gpu = inter;
    b->scale_out_node = inter * (double)c->gpus_per_node;
    b->host_link_gpu = (double)c->host_link_bw_bps;
    if (x->cxl.memory != CXLCFG_NONE) {
        b->cxl_gpu_path = (double)x->cxl.gpu_path_bw_bps;
        if (x->cxl.dev.path == DEVCFG_PATH_CXL)
            b->cxl_link = (double)x->cxl.dev.link.rate_mts * 1e6 * (double)x->cxl.dev.link.width / 8.0;
    }
}

/* expcfg_options_diff callbacks */
static void text_option(void *ctx, const char *key, const char *value, const char *dflt)
{
    fprintf((FILE *)ctx, "    %-38s %s (default %s)\n", key, value, dflt);
}

static void json_option(void *ctx, const char *key, const char *value, const char *dflt)
{
    json_w *w = ctx;
    json_obj_begin(w, NULL);
    json_str(w, "key", key);
    json_str(w, "value", value);
    json_str(w, "default", dflt);
    json_obj_end(w);
}

static void text_resolved(FILE *so, const expcfg *x)
{
    train_bw b;
    bandwidths(x, &b);
    const clustercfg *c = &x->cluster;
    fprintf(so, "  bandwidth   per direction, efficiencies applied, as the engine uses it (GB/s):\n");
    fprintf(so, "    NVLink      %.2f per GPU (%.2f x %.3g)\n", b.nvlink_gpu / 1e9,
            (double)x->gpu.nvlink_bw_bps / 1e9, c->nvlink_efficiency);
    fprintf(so, "    NIC         %.2f each (%.2f x %.3g), %llu per node\n", b.nic / 1e9, (double)c->nic_bw_bps / 1e9,
            c->nic_efficiency, (unsigned long long)c->nics_per_node);
    fprintf(so, "    scale-out   %.2f per node, %.2f per GPU", b.scale_out_node / 1e9, b.scale_out_gpu / 1e9);
    if (c->topology == CLUSTERCFG_FAT_TREE && c->oversubscription != 1)
        fprintf(so, " (oversubscription %.3g)", c->oversubscription);
    fprintf(so, "\n");
    if (b.host_link_gpu > 0)
        fprintf(so, "    host link   %.2f per GPU\n", b.host_link_gpu / 1e9);
    if (x->cxl.memory != CXLCFG_NONE) {
        fprintf(so, "    CXL         GPU path %.2f per GPU", b.cxl_gpu_path / 1e9);
        if (b.cxl_link > 0)
            fprintf(so, "; device link %.2f (x%llu at %.1f GT/s, before flit overhead)", b.cxl_link / 1e9,
                    (unsigned long long)x->cxl.dev.link.width, (double)x->cxl.dev.link.rate_mts / 1e3);
        fprintf(so, "\n");
    }
    fprintf(so, "  options     differing from the defaults:\n");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (m) {
        expcfg_options_diff(x, text_option, m);
        fclose(m);
    }
    fprintf(so, "%s", text && len ? text : "    none\n");
    free(text);
}

static void json_resolved(json_w *w, const expcfg *x)
{
    train_bw b;
    bandwidths(x, &b);
    json_obj_begin(w, "bandwidth_gbps");
    json_num(w, "nvlink_per_gpu", b.nvlink_gpu / 1e9);
    json_num(w, "nic", b.nic / 1e9);
    json_num(w, "scale_out_per_node", b.scale_out_node / 1e9);
    json_num(w, "scale_out_per_gpu", b.scale_out_gpu / 1e9);
    if (b.host_link_gpu > 0)
        json_num(w, "host_link_per_gpu", b.host_link_gpu / 1e9);
    if (x->cxl.memory != CXLCFG_NONE) {
        json_num(w, "cxl_gpu_path_per_gpu", b.cxl_gpu_path / 1e9);
        if (b.cxl_link > 0)
            json_num(w, "cxl_link", b.cxl_link / 1e9);
    }
    json_obj_end(w);
    json_arr_begin(w, "options");
    expcfg_options_diff(x, json_option, w);
    json_arr_end(w);
}

static void text_cxl(FILE *so, const expcfg *x, const train_result *r, int exact)
{
    fprintf(so, "  CXL memory       %s '%s' on backend %s: %llu transfers, %llu cycles in detail, %llu extrapolated, "
            "%llu memo hits%s\n",
            cxlcfg_memory_names[x->cxl.memory], x->cxl.dev.name, r->cxl_backend, (unsigned long long)r->cxl_transfers,
            (unsigned long long)r->detailed_cycles, (unsigned long long)r->extrapolated_cycles,
            (unsigned long long)r->memo_hits, exact ? " (exact)" : "");
    fprintf(so, "  memory tiers     HBM %.2f GiB per GPU; CXL %.2f GiB per GPU, %.2f of %.2f GiB in the fullest domain\n",
            r->tiers.hbm_bytes / GIB, r->tiers.cxl_bytes_per_gpu / GIB, r->tiers.cxl_bytes_per_domain / GIB,
            r->tiers.cxl_capacity_per_domain / GIB);
    for (uint32_t d = 0; d < r->ndomains; d++) {
        const train_cxl_domain *D = &r->domains[d];
        fprintf(so, "    domain %u (x%u cop%s, %u node%s each): read %.2f GB/s, write %.2f GB/s over %.4f s busy; "
                "read latency mean %.0f ns, p99 %.0f ns\n",
                d, D->copies, D->copies == 1 ? "y" : "ies", D->nodes, D->nodes > 1 ? "s" : "", D->read_gbps,
                D->write_gbps, D->busy_s, D->read_lat_ns[0], D->read_lat_ns[2]);
    }
}

void report_train_text(FILE *so, const expcfg *x, const train_result *r, const char *times_path, int exact,
                       double wall)
{
    text_setup(so, x);
    if (times_path)
        fprintf(so, "  kernels     %llu distinct, %llu from %s\n", (unsigned long long)r->kernels,
                (unsigned long long)r->kernels_measured, times_path);
    if (r->ops_above_peak)
        fprintf(stderr, "cxlsim: warning: %s%s\n", r->peak_warning,
                r->ops_above_peak > 1 ? " (and more measured kernels below the peak's time)" : "");
    if (r->mfu > 1.0)
        fprintf(stderr, "cxlsim: warning: MFU %.1f %% exceeds 100 %%: some kernel times are faster than the GPU's "
                "peak allows\n", 100.0 * r->mfu);
    double T = (double)r->iteration_ps / 1e12;
    fprintf(so, "\n  iteration time   %.4f s\n  tokens/s         %.0f\n  MFU              %.1f %%\n", T,
            r->tokens_per_s, 100.0 * r->mfu);
    fprintf(so, "  breakdown (mean over pipeline stages):\n");
    static const char *const label[TRAIN_BK_N] = { "compute", "exposed TP comm", "exposed PP comm",
                                                   "exposed DP comm", "pipeline bubble", "CXL stall" };
    for (int k = 0; k < TRAIN_BK_N; k++)
        fprintf(so, "    %-16s %10.4f s  %5.1f %%\n", label[k], r->breakdown_s[k],
                T > 0 ? 100.0 * r->breakdown_s[k] / T : 0);
    fprintf(so, "  memory per GPU (stage %llu): weights %.2f, gradients %.2f, optimizer %.2f, activations %.2f, "
            "total %.2f GiB\n",
            (unsigned long long)r->mem.stage, r->mem.weights_bytes / GIB, r->mem.gradients_bytes / GIB,
            r->mem.optimizer_bytes / GIB, r->mem.activations_bytes / GIB, r->mem.total_bytes / GIB);
    if (x->cxl.memory != CXLCFG_NONE)
        text_cxl(so, x, r, exact);
    fprintf(so, "  engine           %llu events, %llu flows, %.3f s wall\n", (unsigned long long)r->events,
            (unsigned long long)r->flows, wall);
}

static void json_breakdown(json_w *w, const char *key, const double *s, const int64_t *ps)
{
    json_obj_begin(w, key);
    for (int k = 0; k < TRAIN_BK_N; k++)
        json_num(w, train_bk_names[k], s ? s[k] : (double)ps[k] / 1e12);
    json_obj_end(w);
}

static void json_domain(json_w *w, uint32_t d, const train_cxl_domain *D)
{
    json_obj_begin(w, NULL);
    json_u64(w, "domain", d);
    json_u64(w, "nodes", D->nodes);
    json_u64(w, "copies", D->copies);
    json_num(w, "busy_s", D->busy_s);
    json_num(w, "read_gbps", D->read_gbps);
    json_num(w, "write_gbps", D->write_gbps);
    report_json_lat(w, "read_latency_ns", D->read_lat_ns);
    report_json_devload(w, D->devload);
    json_arr_begin(w, "devices");
    for (uint32_t dv = 0; dv < D->devices; dv++) {
        json_obj_begin(w, NULL);
        json_u64(w, "device", dv);
        json_num(w, "read_gbps", D->dev_read_gbps[dv]);
        json_num(w, "write_gbps", D->dev_write_gbps[dv]);
        report_json_devload(w, D->dev_devload[dv]);
        json_obj_end(w);
    }
    json_arr_end(w);
    json_obj_end(w);
}

static void json_cxl(json_w *w, const expcfg *x, const train_result *r, int exact)
{
    json_obj_begin(w, "cxl");
    json_str(w, "memory", cxlcfg_memory_names[x->cxl.memory]);
    json_str(w, "device", x->cxl.dev.name);
    json_str(w, "backend", r->cxl_backend);
    json_u64(w, "exact", (uint64_t)exact);
    json_u64(w, "transfers", r->cxl_transfers);
    report_tiers_json(w, &r->tiers);
    json_arr_begin(w, "domains");
    for (uint32_t d = 0; d < r->ndomains; d++)
        json_domain(w, d, &r->domains[d]);
    json_arr_end(w);
    json_obj_end(w);
}

static void json_collectives(json_w *w, const train_result *r)
{
    json_arr_begin(w, "collectives");
    for (uint32_t i = 0; i < r->ncolls; i++) {
        const train_coll *C = &r->colls[i];
        json_obj_begin(w, NULL);
        json_str(w, "group", train_group_names[C->group]);
        json_str(w, "op", train_coll_op_name(C->op));
        json_u64(w, "bytes", C->bytes);
        json_u64(w, "ranks", C->ranks);
        json_u64(w, "nodes", C->nodes);
        json_str(w, "algorithm", train_coll_algo_name(C->algo));
        json_str(w, "protocol", nccltune_proto_name((nccltune_proto)C->proto));
        json_u64(w, "count", C->count);
        json_obj_end(w);
    }
    json_arr_end(w);
    json_u64(w, "collectives_not_listed", r->colls_other);
}

void report_train_json(json_w *w, const expcfg *x, const train_result *r, int exact, double wall)
{
    json_str(w, "experiment", x->name);
    json_num(w, "iteration_time_s", (double)r->iteration_ps / 1e12);
    json_u64(w, "iteration_time_ps", (uint64_t)r->iteration_ps);
    json_num(w, "tokens_per_s", r->tokens_per_s);
    json_num(w, "mfu", r->mfu);
    json_num(w, "model_flops", r->model_flops);
    json_resolved(w, x);
    json_breakdown(w, "breakdown_s", r->breakdown_s, NULL);
    report_gpumem_json(w, &r->mem, 1);
    json_arr_begin(w, "stages");
    for (uint32_t s = 0; s < r->nstages; s++) {
        json_obj_begin(w, NULL);
        json_u64(w, "stage", s);
        json_num(w, "finish_s", (double)r->stages[s].finish_ps / 1e12);
        json_breakdown(w, "breakdown_s", NULL, r->stages[s].bk_ps);
        json_obj_end(w);
    }
    json_arr_end(w);
    json_collectives(w, r);
    json_u64(w, "events", r->events);
    json_u64(w, "flows", r->flows);
    json_u64(w, "detailed_cycles", r->detailed_cycles);
    json_u64(w, "extrapolated_cycles", r->extrapolated_cycles);
    json_u64(w, "memo_hits", r->memo_hits);
    if (x->cxl.memory != CXLCFG_NONE)
        json_cxl(w, x, r, exact);
    json_u64(w, "kernels", r->kernels);
    json_u64(w, "kernels_measured", r->kernels_measured);
    json_num(w, "wall_seconds", wall);
}
