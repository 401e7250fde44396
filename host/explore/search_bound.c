/* search_bound.c - the lower bound of a layout's iteration time that orders and prunes the search
 * (search_bound_ps, search.h; docs/search.md). */
#include "explore/search.h"

#include <stdlib.h>

#include "cxl/backend.h"
#include "config/devcfg.h"
#include "config/modelcfg.h"
#include "config/parallel.h"
#include "train/compute.h"
#include "train/gpumem.h"
#include "train/opgraph.h"
#include "train/tiers.h"

/* The CXL terms of the bound come from the bytes the engine waits for (train_cxl.c, policy_*.c) over the
 * screen backend's peak (cxl_analytical_peak_Bps: each device serves one 64 B line per line time, the
 * slower of its link's payload rate and its DRAM's). Detailed stretches never beat it; extrapolated ones
 * (cxlmem.h) move at rates measured in windows of at least CXLMEM_WINDOW cycles, whose counts can exceed
 * the peak by the change of the lines in flight between a window's ends (at most a chunk per requester
 * plus a latency's worth; for the mean of two windows that agree within CXLMEM_TOLERANCE, as steadiness
 * requires, a few per cent at most); the bound takes SEARCH_CXL_MARGIN of the time the bytes need, so it
 * stays below, and a run faster than its bound still stops the search. */
#define SEARCH_CXL_MARGIN 0.9

/* Adam's state in CXL, per parameter (policy_opt_gpu.c: 2 x 12 B streamed; policy_opt_cpu.c: the CPU
 * reads 16 B and writes 14 B) */
#define SEARCH_OPT_GPU_BYTES 24u
#define SEARCH_OPT_CPU_BYTES 30u

/* The fewest layers of any model chunk (L / (pp x v) for an even split), so that bounds built on it stay
 * below an uneven split's time. */
static double min_chunk_layers(const expcfg *x)
{
    const traincfg *t = &x->train;
    double lc = (double)(x->model.layers / (t->pp * t->virtual_stages));
    for (uint64_t vs = 0; parallel_uneven_split(t) && vs < t->pp * t->virtual_stages; vs++) {
        double n = (double)parallel_chunk_layers(&x->model, t, vs % t->pp, vs / t->pp, NULL);
        lc = vs == 0 || n < lc ? n : lc;
    }
    return lc;
}

/* Parameters of pipeline stage r, as the engine's setup_stages counts them (train_setup.c). */
static uint64_t stage_params(const expcfg *x, const opgraph *g, uint64_t r)
{
    const traincfg *t = &x->train;
    uint64_t p = (r == 0 ? g->embed_params : 0) + (r == t->pp - 1 ? g->head_params : 0);
    for (uint64_t c = 0; c < t->virtual_stages; c++) {
        uint64_t first, n = parallel_chunk_layers(&x->model, t, r, c, &first);
        for (uint64_t l = 0; l < n; l++)
            p += modelcfg_layer_is_moe(&x->model, first + l) ? g->moe_layer_params : g->layer_params;
    }
    return p;
}

/* GPUs of pipeline stage r (GPUs [r x tp x dp, (r + 1) x tp x dp), train_setup.c) in CXL domain d
 * (pool_nodes consecutive nodes). */
static uint64_t stage_gpus_in(const expcfg *x, uint64_t r, uint64_t d)
{
    uint64_t per = x->train.tp * x->train.dp, span = (uint64_t)x->cxl.pool_nodes * x->cluster.gpus_per_node;
    uint64_t lo = r * per, hi = lo + per, dlo = d * span, dhi = dlo + span;
    lo = lo > dlo ? lo : dlo;
    hi = hi < dhi ? hi : dhi;
    return hi > lo ? hi - lo : 0;
}

/* The CXL terms for a layout with CXL memory. *opt (the first stage's optimizer step) grows to what its
 * transfers need: with offload_optimizer gpu, the state stream runs beside the optimizer kernel; cpu, the
 * gradients out, the CPU's Adam (no faster than the cpu_adam_rate floor already in *opt), the weights
 * back, one after the other. *cxl: the iteration's time at least, the bytes every domain moves for
 * transfers some stage waits for (the layer policies' reads before a layer's pass, m x v passes each way
 * per stage, and the optimizer's) over the domain's peak. Writes nobody waits for are left out. *opt_all:
 * the iteration's time at least, from the optimizer steps of all the stages in one domain: stage r starts
 * its step after its last backward, no earlier than the last stage's kernels (w) after the forward of the
 * pp - 1 chunks ahead of it and then the backward of the pp - 1 - r chunks back to r (fc, bc: a chunk's
 * forward and backward, as search_bound_ps counts them); so the domain's step transfers start no earlier
 * than its last stage's start and need their bytes over the peak after it. */
static int bound_cxl(const expcfg *x, const opgraph *g, double fc, double bc, double w, double *opt, double *cxl,
                     double *opt_all, cxl_err *err)
{
    const traincfg *t = &x->train;
    const cxlcfg *cx = &x->cxl;
    cxl_params cp;
    int rc = devcfg_to_params(&cx->dev, &cp, err);
    if (rc)
        return rc;
    double peak = cxl_analytical_peak_Bps(&cp);
    uint64_t P = cx->pool_nodes ? cx->pool_nodes : 1, domains = x->cluster.nodes / P;
    if (!(peak > 0) || !domains)
        return 0;
    double ps_per_byte = SEARCH_CXL_MARGIN * 1e12 / peak;
    /* the layer policies: parameters before every pass, activations before the backward (policy_*.c) */
    double fwd = 0, bwd = 0;
    if (cx->offload_parameters) {
        fwd += (double)(g->layer_params * g->weight_elem_bytes);
        bwd += (double)(g->layer_params * g->weight_elem_bytes);
    }
    if (cx->offload_activations) {
        traincfg none = *t;
        none.recompute = TRAINCFG_RECOMPUTE_NONE;
        bwd += (double)(uint64_t)gpumem_layer_activation_bytes(&x->model, &none);
    }
    double passes = (double)parallel_microbatches(t) * (double)t->virtual_stages * min_chunk_layers(x);
    /* the optimizer's bytes per parameter: each transfer, then all of them */
    double step[3] = { 0, 0, 0 }, per_param = 0;
    if (cx->offload_optimizer == CXLCFG_OPT_CPU) {
        step[0] = (double)g->grad_elem_bytes;
        step[1] = SEARCH_OPT_CPU_BYTES;
        step[2] = (double)g->weight_elem_bytes;
    } else if (cx->offload_optimizer == CXLCFG_OPT_GPU) {
        step[0] = SEARCH_OPT_GPU_BYTES;
    }
    per_param = step[0] + step[1] + step[2];
    double worst = 0, pp = (double)t->pp;
    *opt_all = 0;
    for (uint64_t d = 0; d < domains; d++) {
        double bytes = 0, ob = 0, last = 0;
        for (uint64_t r = 0; r < t->pp; r++) {
            uint64_t n = stage_gpus_in(x, r, d);
            if (!n)
                continue;
            uint64_t sp = stage_params(x, g, r), shard = t->zero >= 1 ? (sp + t->dp - 1) / t->dp : sp;
            bytes += (double)n * (passes * (fwd + bwd) + (double)shard * per_param);
            ob += (double)n * (double)shard * per_param;
            last = (double)r;
        }
        worst = bytes > worst ? bytes : worst;
        double start = w + (pp - 1) * fc + (pp - 1 - last) * bc;
        if (start + ob * ps_per_byte > *opt_all)
            *opt_all = start + ob * ps_per_byte;
    }
    *cxl = worst * ps_per_byte;
    /* the first stage's step: a transfer of b bytes per GPU takes b x (its GPUs in the domain) over the
     * peak there (the GPU path's cap only adds; it is left out, as cxlmem drops a cap finer than a cycle) */
    uint64_t n0 = 0;
    for (uint64_t d = 0; d < domains; d++) {
        uint64_t n = stage_gpus_in(x, 0, d);
        n0 = n > n0 ? n : n0;
    }
    uint64_t sp0 = stage_params(x, g, 0), shard0 = t->zero >= 1 ? (sp0 + t->dp - 1) / t->dp : sp0;
    double st[3];
    for (int k = 0; k < 3; k++)
        st[k] = (double)shard0 * step[k] * (double)n0 * ps_per_byte;
    if (cx->offload_optimizer == CXLCFG_OPT_CPU)
        *opt = st[0] + (st[1] > *opt ? st[1] : *opt) + st[2];
    else if (cx->offload_optimizer == CXLCFG_OPT_GPU && st[0] > *opt)
        *opt = st[0];
    return 0;
}


int64_t search_bound_ps(const expcfg *x, cxl_err *err)
{
    opgraph *g = malloc(sizeof *g);
    if (!g)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (search bound)");
    int rc = opgraph_build(&x->model, &x->train, g, err);
    double sum[OPGRAPH_NTPL] = { 0 };
    /* A tensor-parallel collective on n ranks makes each rank send at least (n - 1) / n of its buffer
     * (twice for an all-reduce: ring, tree and hierarchical plans alike, docs/collectives.md), no faster
     * than the fabric the engine gives one GPU (train.h: NVLink per direction x nvlink_efficiency, and its
     * share of the NICs x nic_efficiency, which a group inside one NVLink domain does not use), without
     * latency; protocols other than Simple only move more (nccltune_factors). */
    const clustercfg *cl = &x->cluster;
    double n = (double)x->train.tp, gpn = (double)cl->gpus_per_node;
    double bps = (double)x->gpu.nvlink_bw_bps * cl->nvlink_efficiency;
    uint64_t dom = clustercfg_domain(cl);
    if (clustercfg_gpus(cl) > dom && !(x->train.tp <= dom && dom % x->train.tp == 0))
        bps += (double)cl->nic_bw_bps * (double)cl->nics_per_node / gpn * cl->nic_efficiency;
    for (int id = 0; !rc && id < OPGRAPH_NTPL; id++)
        for (uint32_t e = 0; e < g->tpl[id].n; e++) {
            const opgraph_entry *en = &g->tpl[id].e[e];
            if (en->kind == OPGRAPH_TP_COLL) {
                if (n > 1 && bps > 0)
                    sum[id] += (en->coll == OPGRAPH_ALLREDUCE ? 2 : 1) * (n - 1) / n * (double)en->bytes / bps * 1e12;
                continue;
            }
            if (en->kind == OPGRAPH_CP_P2P || en->kind == OPGRAPH_CP_WAIT || en->kind == OPGRAPH_DTOH ||
                en->kind == OPGRAPH_HOST_SYNC || en->kind == OPGRAPH_HOST_PY)
                continue; /* overlapped with the attention kernel: no bound of its own */
            if (en->kind == OPGRAPH_TP_ASYNC || en->kind == OPGRAPH_TP_WAIT)
                continue; /* overlapped with the weight-gradient GEMM: no bound of its own */
            int64_t ps = compute_op_ps(&x->gpu, &g->ops[en->op]);
            if (ps < 0) {
                rc = cxl_errf(err, (int)ps, "a kernel of the layout cannot be priced");
                break;
            }
            sum[id] += (double)ps;
        }
    const traincfg *t = &x->train;
    /* the first stage's optimizer step follows its last backward (train.c): Adam on the GPU, or with
     * offload_optimizer cpu the CPU's, no faster than cpu_adam_rate over the node's parameters; with the
     * optimizer in CXL, no faster than its transfers either (bound_cxl) */
    double opt = 0, cxl = 0, opt_all = 0;
    if (x->cxl.memory != CXLCFG_NONE && x->cxl.offload_activations)
        sum[OPGRAPH_LAYER_RECOMPUTE] = 0;   /* the engine fetches them back instead */
    /* a sliding-window model's windowed layers are the cheaper ones: bound every layer by them */
    for (int id = OPGRAPH_LAYER_FWD; x->model.window_size && id <= OPGRAPH_LAYER_RECOMPUTE; id++) {
        double wsum = sum[OPGRAPH_VARIANT_OF(id, OPGRAPH_VAR_WINDOW)];
        if (wsum < sum[id])
            sum[id] = wsum;
    }
    double pp = (double)t->pp, v = (double)t->virtual_stages, m = (double)parallel_microbatches(t);
    double lc = min_chunk_layers(x);
    /* block recomputation: only a chunk's first recompute_num_layers layers recompute (traincfg.h) */
    double lr = t->recompute_method == TRAINCFG_RECOMPUTE_BLOCK && (double)t->recompute_num_layers < lc
                    ? (double)t->recompute_num_layers : lc;
    double fc = lc * sum[OPGRAPH_LAYER_FWD], bc = lc * sum[OPGRAPH_LAYER_BWD] + lr * sum[OPGRAPH_LAYER_RECOMPUTE];
    double ends = sum[OPGRAPH_EMBED_FWD] + sum[OPGRAPH_EMBED_BWD];
    /* the last stage's own kernels, then the chain before its first and after its last chunk */
    double w = m * v * (fc + bc) + m * (sum[OPGRAPH_HEAD_FWD] + sum[OPGRAPH_HEAD_BWD]) + (t->pp == 1 ? m * ends : 0);
    double chain = t->pp > 1 ? ends + (pp - 1) * (fc + bc) : 0;
    if (!rc) {
        uint64_t l0 = 0; /* the first stage's layers */
        for (uint64_t c = 0; c < t->virtual_stages; c++)
            l0 += parallel_chunk_layers(&x->model, t, 0, c, NULL);
        uint64_t p = l0 * g->layer_params + g->embed_params + (t->pp == 1 ? g->head_params : 0);
        uint64_t shard = t->zero >= 1 ? (p + traincfg_dpcp(t) - 1) / traincfg_dpcp(t) : p;
        if (x->cxl.memory != CXLCFG_NONE && x->cxl.offload_optimizer == CXLCFG_OPT_CPU)
            opt = (double)shard * (double)x->cluster.gpus_per_node / x->cxl.cpu_adam_rate * 1e12;
        else {
            int op = opgraph_optimizer_op(g, t, shard, err);
            int64_t ps = op < 0 ? op : compute_op_ps(&x->gpu, &g->ops[op]);
            if (ps < 0)
                rc = cxl_errf(err, (int)ps, "the optimizer kernel of the layout cannot be priced");
            opt = (double)ps;
        }
        if (!rc && x->cxl.memory != CXLCFG_NONE)
            rc = bound_cxl(x, g, fc, bc, w, &opt, &cxl, &opt_all, err);
    }
    free(g);
    if (rc)
        return rc;
    double b = w + chain + opt;
    if (opt_all > b)
        b = opt_all;
    if (cxl > b)
        b = cxl;
    return b >= 9.2e18 ? INT64_MAX : (int64_t)b;
}

