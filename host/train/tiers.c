/* tiers.c - bytes per memory tier after offloading, per stage and per CXL domain; the capacity check.
 * The formulas and their sources are in tiers.h. */
#include "train/tiers.h"

#include <stdio.h>
#include <string.h>

#include "train/gpumem.h"

typedef unsigned long long ull;

static const char *const part_names[TIERS_NPARTS] = { "weights", "gradients", "optimizer states", "activations" };
/* In CXL the gradients are the fp32 copy of offload_optimizer cpu. */
static const char *const cxl_part_names[TIERS_NPARTS] = { "weights", "fp32 gradients", "optimizer states",
                                                          "activations" };

static int offloads(const cxlcfg *c)
{
    return c->memory != CXLCFG_NONE &&
           (c->offload_optimizer != CXLCFG_OPT_NONE || c->offload_parameters || c->offload_activations);
}

static double min2(double a, double b) { return a < b ? a : b; }

/* One GPU of stage s: bytes by part in HBM and in CXL. */
static void split_stage(const expcfg *x, uint64_t s, double hbm[TIERS_NPARTS], double cxl[TIERS_NPARTS])
{
    const modelcfg *m = &x->model;
    const traincfg *t = &x->train;
    const cxlcfg *c = &x->cxl;
    gpumem g;
    gpumem_stage(m, t, s, &g);
    hbm[TIERS_WEIGHTS] = g.weights_bytes;
    hbm[TIERS_GRADIENTS] = g.gradients_bytes;
    hbm[TIERS_OPTIMIZER] = g.optimizer_bytes;
    hbm[TIERS_ACTIVATIONS] = g.activations_bytes;
    memset(cxl, 0, TIERS_NPARTS * sizeof *cxl);
    if (!offloads(c))
        return;
    double P = (double)g.params, X = (double)g.expert_params;
    int experts = c->offload_scope == CXLCFG_SCOPE_EXPERTS;
    if (c->offload_optimizer != CXLCFG_OPT_NONE) {
        cxl[TIERS_OPTIMIZER] = experts ? g.expert_optimizer_bytes : g.optimizer_bytes;
        hbm[TIERS_OPTIMIZER] = g.optimizer_bytes - cxl[TIERS_OPTIMIZER];
    }
    if (c->offload_optimizer == CXLCFG_OPT_CPU) {
        /* 4 B per parameter of the optimizer's shard: the rest over dp, the routed experts over the
         * expert-data-parallel group (gpumem.h) */
        double z = t->zero >= 1 ? (double)traincfg_dpcp(t) : 1, ze = t->zero >= 1 ? (double)gpumem_expert_dp(t) : 1;
        cxl[TIERS_GRADIENTS] = 4 * (X / ze + (experts ? 0 : (P - X) / z));
    }
    if (c->offload_parameters && P > 0) {
        /* two layers' worth stay in HBM: of the largest layer's (an MoE layer's where the stage has one),
         * or with offload_scope experts of its routed experts' */
        double off = experts ? g.expert_weights_bytes : g.weights_bytes, per = experts ? X : P, lp = 0;
        if (X > 0) {
            uint64_t etp = t->etp ? t->etp : t->tp, xl = 0;
            lp = (double)modelcfg_moe_layer_params_tp(m, t->tp, t->ep, etp, &xl);
            lp = experts ? (double)xl : lp;
        } else {
            lp = (double)modelcfg_layer_params_tp(m, t->tp);
        }
        double layer = per > 0 ? off * lp / per : 0;
        double kept = min2(off, 2 * layer);
        hbm[TIERS_WEIGHTS] = g.weights_bytes - off + kept;
        cxl[TIERS_WEIGHTS] = off - kept;
    }
    if (c->offload_activations) {
        traincfg none = *t;
        none.recompute = TRAINCFG_RECOMPUTE_NONE;
        double layer = gpumem_layer_activation_bytes(m, &none), now = gpumem_layer_activation_bytes(m, t);
        double mean = layer, big = layer;
        if (g.moe_layers) {
            /* the stage's mean layer, as gpumem counts it, with and without recomputation; an MoE layer's
             * worth stays in HBM */
            double L = (double)g.layers, E = (double)g.moe_layers;
            double moe_none = gpumem_moe_layer_activation_bytes(m, &none);
            mean = ((L - E) * layer + E * moe_none) / L;
            now = ((L - E) * now + E * gpumem_moe_layer_activation_bytes(m, t)) / L;
            big = moe_none > layer ? moe_none : layer;
        }
        double flight = gpumem_layers_in_flight(m, t, s);
        /* what gpumem adds beyond the layers in flight: the embedding dropout mask, the last stage's
         * logits, and with full recomputation the one layer being recomputed (not needed any more) */
        double extras = g.activations_bytes - flight * now - (t->recompute == TRAINCFG_RECOMPUTE_FULL ? layer : 0);
        double all = flight * mean, kept = min2(all, 2 * big);
        hbm[TIERS_ACTIVATIONS] = kept + extras;
        cxl[TIERS_ACTIVATIONS] = all - kept;
    }
}

static double sum(const double v[TIERS_NPARTS])
{
    double s = 0;
    for (int i = 0; i < TIERS_NPARTS; i++)
        s += v[i];
    return s;
}

int tiers_compute(const expcfg *x, tiers *out)
{
    const traincfg *t = &x->train;
    const cxlcfg *c = &x->cxl;
    memset(out, 0, sizeof *out);
    out->hbm_capacity = (double)x->gpu.hbm_bytes;
    double hbm[TIERS_NPARTS], cxl[TIERS_NPARTS];
    if (!offloads(c)) {
        gpumem g;
        gpumem_estimate(&x->model, t, &g);
        split_stage(x, g.stage, out->hbm_part, cxl);
        out->stage = g.stage;
        out->hbm_bytes = g.total_bytes;
    } else {
        for (uint64_t s = 0; s < t->pp; s++) {
            split_stage(x, s, hbm, cxl);
            double h = sum(hbm), o = sum(cxl);
            if (s == 0 || h > out->hbm_bytes) {
                out->stage = s;
                out->hbm_bytes = h;
                memcpy(out->hbm_part, hbm, sizeof hbm);
            }
            if (o > out->cxl_bytes_per_gpu)
                out->cxl_bytes_per_gpu = o;
        }
    }
    if (c->memory == CXLCFG_NONE || !c->pool_nodes)  /* pool_nodes 0: cxlcfg_finish has not run */
        return 0;
    out->gpus_per_domain = (uint32_t)(x->cluster.gpus_per_node * c->pool_nodes);
    out->cxl_capacity_per_domain = (double)c->devices * (double)c->capacity_bytes;
    if (!offloads(c))
        return 0;
    /* Megatron rank order: stage of rank r is r / (tp x cp x dp); domain d holds ranks [d G, (d + 1) G). */
    uint64_t G = out->gpus_per_domain, per_stage = t->tp * traincfg_dpcp(t);
    uint64_t domains = x->cluster.nodes / c->pool_nodes;
    for (uint64_t d = 0; d < domains; d++) {
        uint64_t a = d * G, b = a + G;
        double load[TIERS_NPARTS] = { 0 };
        for (uint64_t s = a / per_stage; s < t->pp && s * per_stage < b; s++) {
            uint64_t lo = s * per_stage > a ? s * per_stage : a;
            uint64_t hi = (s + 1) * per_stage < b ? (s + 1) * per_stage : b;
            split_stage(x, s, hbm, cxl);
            for (int i = 0; i < TIERS_NPARTS; i++)
                load[i] += (double)(hi - lo) * cxl[i];
        }
        if (sum(load) > out->cxl_bytes_per_domain) {
            out->cxl_bytes_per_domain = sum(load);
            memcpy(out->cxl_domain_part, load, sizeof load);
        }
    }
    return 0;
}

/* "optimizer states 512.0, fp32 gradients 100.3 GiB" of the non-zero parts. */
static void parts_list(const double v[TIERS_NPARTS], const char *const names[TIERS_NPARTS], char *buf, size_t sz)
{
    static const int order[TIERS_NPARTS] = { TIERS_OPTIMIZER, TIERS_GRADIENTS, TIERS_WEIGHTS, TIERS_ACTIVATIONS };
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; k < TIERS_NPARTS; k++) {
        int i = order[k];
        if (v[i] <= 0)
            continue;
        int w = snprintf(buf + len, sz - len, "%s%s %.1f", len ? ", " : "", names[i], GPUMEM_GIB(v[i]));
        if (w < 0 || (size_t)w >= sz - len)
            break;
        len += (size_t)w;
    }
    if (len + 5 < sz)
        snprintf(buf + len, sz - len, " GiB");
}

static int hbm_error(const expcfg *x, const tiers *t, cxl_err *err)
{
    const cxlcfg *c = &x->cxl;
    const double *v = t->hbm_part;
    int big = 0;
    for (int i = 1; i < TIERS_NPARTS; i++)
        if (v[i] > v[big])
            big = i;
    const char *hint[TIERS_NPARTS] = {
        c->offload_parameters ? "more tensor/pipeline parallelism or ZeRO-3"
                              : "cxl.offload_parameters, ZeRO-3 or more tensor/pipeline parallelism",
        "a higher ZeRO stage, main_grads bf16 or more tensor/pipeline parallelism",
        "cxl.offload_optimizer or a higher ZeRO stage",
        c->offload_activations ? "a smaller micro_batch or more tensor/pipeline parallelism"
                               : "cxl.offload_activations, recomputation or more tensor/pipeline parallelism",
    };
    return cfgloc_errf(err, &x->root,
                       "out of GPU memory after offloading to CXL: pipeline stage %llu needs %.1f GiB of HBM per "
                       "GPU (left in HBM: weights %.1f, gradients %.1f, optimizer states %.1f, activations %.1f GiB; "
                       "%.1f GiB per GPU offloaded) but GPU '%s' has %.1f GiB of HBM; the largest part left is "
                       "the %s (try %s)",
                       (ull)t->stage, GPUMEM_GIB(t->hbm_bytes), GPUMEM_GIB(v[0]), GPUMEM_GIB(v[1]),
                       GPUMEM_GIB(v[2]), GPUMEM_GIB(v[3]), GPUMEM_GIB(t->cxl_bytes_per_gpu), x->gpu.name,
                       GPUMEM_GIB(t->hbm_capacity), part_names[big], hint[big]);
}

static int cxl_error(const expcfg *x, const tiers *t, cxl_err *err)
{
    const cxlcfg *c = &x->cxl;
    const cfgloc *at = c->loc[CXLCFG_F_MEMORY].line ? &c->loc[CXLCFG_F_MEMORY] : &c->ref;
    char parts[256];
    parts_list(t->cxl_domain_part, cxl_part_names, parts, sizeof parts);
    int pool = c->memory == CXLCFG_POOL;
    return cfgloc_errf(err, at,
                       "out of CXL memory: a %s domain (%u node%s x %llu GPUs) needs %.1f GiB for %s but its "
                       "%u device%s hold%s %.1f GiB (%u x %.1f GiB, device '%s'); short by %.1f GiB (try "
                       "cxl.capacity, a device with more DRAM or more devices behind its switch, %sor a higher "
                       "ZeRO stage)",
                       pool ? "pool" : "per-node", c->pool_nodes, c->pool_nodes == 1 ? "" : "s",
                       (ull)x->cluster.gpus_per_node, GPUMEM_GIB(t->cxl_bytes_per_domain), parts, c->devices,
                       c->devices == 1 ? "" : "s", c->devices == 1 ? "s" : "", GPUMEM_GIB(t->cxl_capacity_per_domain),
                       c->devices, GPUMEM_GIB((double)c->capacity_bytes), c->dev.name,
                       GPUMEM_GIB(t->cxl_bytes_per_domain - t->cxl_capacity_per_domain),
                       pool ? "fewer nodes per pool, " : "");
}

/* training.cpu_offload_layers: the activations of a node's GPUs in its CPUs' memory (cluster host_memory,
 * when given). pp is 1 (parallel.c): every GPU holds the same layers. */
static int host_check(const expcfg *x, cxl_err *err)
{
    const clustercfg *c = &x->cluster;
    const traincfg *t = &x->train;
    if (x->cxl.memory != CXLCFG_NONE && x->cxl.offload_activations &&
        (t->recompute_method == TRAINCFG_RECOMPUTE_BLOCK || t->recompute_num_layers > 1)) {
        /* the policy keeps every layer's activations in CXL in place of recomputing it; a partial or grouped
         * recomputation beside it is not modelled */
        const cfgloc *a = &x->cxl.loc[CXLCFG_F_OFFLOAD_ACT];
        return cfgloc_errf(err, a->file[0] ? a : &x->cxl.ref,
                           "cxl.offload_activations: keeps every layer's activations in CXL instead of recomputing "
                           "them, but training.recompute_method is %s with recompute_num_layers %llu; use "
                           "recompute_method uniform without recompute_num_layers, or no offload_activations",
                           traincfg_recompute_method_names[t->recompute_method], (ull)t->recompute_num_layers);
    }
    if (x->train.cpu_offload_layers && x->cxl.memory != CXLCFG_NONE && x->cxl.offload_activations) {
        const cfgloc *a = &x->cxl.loc[CXLCFG_F_OFFLOAD_ACT];
        return cfgloc_errf(err, a->file[0] ? a : &x->cxl.ref,
                           "cxl.offload_activations: the activations already go to the CPU's memory "
                           "(training.cpu_offload_layers %llu); use one of the two",
                           (ull)x->train.cpu_offload_layers);
    }
    if (!x->train.cpu_offload_layers || !c->host_memory_bytes)
        return 0;
    gpumem g;
    gpumem_stage(&x->model, &x->train, 0, &g);
    double node = g.host_activations_bytes * (double)c->gpus_per_node;
    if (node <= (double)c->host_memory_bytes)
        return 0;
    const cfgloc *at = x->train.loc[TRAINCFG_F_CPU_OFFLOAD].file[0] ? &x->train.loc[TRAINCFG_F_CPU_OFFLOAD] : &x->root;
    return cfgloc_errf(err, at,
                       "out of CPU memory: training.cpu_offload_layers %llu puts %.1f GiB of activations per GPU in "
                       "host memory, %.1f GiB for the %llu GPUs of a node, but cluster '%s' has host_memory %.1f GiB "
                       "per node (try fewer cpu_offload_layers or a smaller micro_batch)",
                       (ull)x->train.cpu_offload_layers, GPUMEM_GIB(g.host_activations_bytes), GPUMEM_GIB(node),
                       (ull)c->gpus_per_node, c->name, GPUMEM_GIB((double)c->host_memory_bytes));
}

int tiers_check(const expcfg *x, const tiers *t, cxl_err *err)
{
    int rc = host_check(x, err);
    if (rc)
        return rc;
    if (!offloads(&x->cxl)) {
        gpumem g;
        gpumem_stage(&x->model, &x->train, t->stage, &g);
        return gpumem_check(&g, &x->gpu, &x->root, err);
    }
    if (t->hbm_bytes > t->hbm_capacity)
        return hbm_error(x, t, err);
    if (t->cxl_bytes_per_domain > t->cxl_capacity_per_domain)
        return cxl_error(x, t, err);
    return 0;
}
