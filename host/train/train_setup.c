/* train_setup.c - the training engine built from an experiment: the fabric and the collective groups,
 * one representative per pipeline stage with its schedule, the kernels priced, the network's links, the
 * CXL domains with the representatives' routes into them and the offload policies (policy.h), and the
 * trace's metadata; and its teardown. Configuration errors point at the key that caused them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/compute.h"
#include "config/devcfg.h"
#include "train/gpumem.h"
#include "config/parallel.h"
#include "train/train_eng.h"

/* Point err (filled) at l, prefixed with the key, keeping its code; returns the code. */
int eng_relocate(cxl_err *err, const cfgloc *l, const char *key)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    int code = err->code ? err->code : CXL_EINTERNAL;
    if (l && l->file[0])
        cxl_errf_at(err, code, l->file, l->line, l->col, "%s: %s", key, msg);
    else
        cxl_errf(err, code, "%s: %s", key, msg);
    return code;
}

int eng_kernel_blame(eng *E, uint32_t op, cxl_err *err)
{
    const op_desc *d = &E->g.ops[op];
    const char *file;
    int line, col;
    if (E->measured[op] && optimes_where(E->o->measured, d, &file, &line, &col)) {
        cfgloc l;
        snprintf(l.file, sizeof l.file, "%s", file);
        l.line = line;
        l.col = col;
        return eng_relocate(err, &l, "op-times");
    }
    compute_cost cc;
    compute_op_cost(&E->x->gpu, d, &cc, NULL);
    int f = cc.memory_bound ? GPUCFG_F_HBM_BW : GPUCFG_F_TFLOPS0 + d->dtype;
    char key[48];
    snprintf(key, sizeof key, "gpu.%s", cc.memory_bound ? "hbm_bandwidth" : "tflops");
    if (!cc.memory_bound)
        snprintf(key, sizeof key, "gpu.%s_tflops", gpucfg_dtype_names[d->dtype]);
    return eng_relocate(err, &E->x->gpu.loc[f], key);
}

/* A measured time below what the GPU's dense peak allows (2 x batch x m x n x k FLOPs of a GEMM at
 * tflops[dtype]): the file was measured on another GPU, or is wrong. Counted, and the first one kept
 * as a warning for the caller to print (MFU can then exceed 100 %). */
static void above_peak(eng *E, const op_desc *op, int64_t ps, train_result *res)
{
    double peak = E->x->gpu.tflops[op->dtype] * 1e12;
    if (op->kind != OP_GEMM || !(peak > 0))
        return;
    double flops = 2.0 * (double)op->batch * (double)op->m * (double)op->n * (double)op->k;
    double floor_ps = flops / peak * 1e12;
    if ((double)ps >= floor_ps)
        return;
    if (res->ops_above_peak++ == 0) {
        const char *file = "";
        int line = 0, col = 0;
        optimes_where(E->o->measured, op, &file, &line, &col);
        snprintf(res->peak_warning, sizeof res->peak_warning,
                 "%s:%d:%d: measured time of %s (%s) is %.3g us, below the %.3g us that gpu '%s' needs at its "
                 "%s peak of %g TFLOP/s: the file does not match the GPU (MFU may exceed 100 %%)",
                 file, line, col, op->name, gpucfg_dtype_names[op->dtype], (double)ps / 1e6, floor_ps / 1e6,
                 E->x->gpu.name, gpucfg_dtype_names[op->dtype], E->x->gpu.tflops[op->dtype]);
    }
}


/* The fabric (collmodel.h, shared with libcxlsim's collective model): per GPU and direction, NVLink and its
 * share of the node's NICs (returned in B/s as doubles too: the links of the network take them
 * untruncated), and their latencies. */
static int setup_fabric(eng *E, double *intra_Bps, double *inter_Bps, cxl_err *err)
{
    const expcfg *x = E->x;
    const clustercfg *c = &x->cluster;
    uint64_t gpn = c->gpus_per_node;
    if (x->gpu.nvlink_bw_bps == 0 && clustercfg_domain(c) > 1)
        return cfgloc_errf(err, &x->gpu.ref, "gpu '%s' has no NVLink bandwidth ('nvlink_bandwidth'); the intra-node "
                           "fabric needs one", x->gpu.name);
    double intra, inter;
    collmodel_fabric(c, &x->gpu, &E->fab, &intra, &inter);
    if (c->nodes > 1 && inter < 1) {
        double need = (double)gpn / ((double)c->nics_per_node * c->nic_efficiency) *
                      (c->topology == CLUSTERCFG_FAT_TREE ? c->oversubscription : 1.0);
        return cfgloc_errf(err, &c->loc[CLUSTERCFG_F_NIC_BW], "cluster.nic_bandwidth: %llu B/s x %llu NICs per node, "
                           "shared by %llu GPUs, gives each GPU %.3g B/s of inter-node bandwidth, below the model's "
                           "1 B/s; need at least %.0f B/s", (unsigned long long)c->nic_bw_bps,
                           (unsigned long long)c->nics_per_node, (unsigned long long)gpn, inter, ceil(need));
    }
    collmodel_set(&E->coll, c, &x->gpu, &E->fab, intra, inter);
    *intra_Bps = intra;
    *inter_Bps = inter;
    return 0;
}

/* Ranks of a group of n that comes after the tp ranks in the rank order, per node of gpn GPUs: all of them
 * when tp x n fits in a node, else the node's gpn / tp when that divides n, else 1 (spread). */
static uint32_t ranks_per_node_after_tp(uint64_t tp, uint64_t n, uint64_t gpn)
{
    if (tp * n <= gpn)
        return (uint32_t)n;
    if (gpn % tp == 0 && n % (gpn / tp) == 0)
        return (uint32_t)(gpn / tp);
    return 1;
}

/* The tensor-, context- and data-parallel groups (Megatron rank order: tensor fastest, then context, then
 * data, then pipeline). The gradients are reduced over the dp x cp ranks that hold the same parameters
 * (Megatron's data-parallel group with context parallelism): the "dp" group here. */
static void setup_groups(eng *E)
{
    /* "node" below: the NVLink domain (clustercfg_domain), the GPUs a group reaches without the NICs */
    uint64_t tp = E->t->tp, dp = traincfg_dpcp(E->t), gpn = clustercfg_domain(&E->x->cluster);
    uint64_t cp = E->t->cp ? E->t->cp : 1;
    E->cp_group.ranks = (uint32_t)cp;
    E->cp_group.ranks_per_node = ranks_per_node_after_tp(tp, cp, gpn);
    E->tp_group.ranks = (uint32_t)tp;
    E->tp_group.ranks_per_node = (uint32_t)(tp <= gpn ? tp : gpn);
    if (tp > gpn && tp % gpn)
        E->tp_group.ranks_per_node = 1;
    E->dp_group.ranks = (uint32_t)dp;
    E->dp_group.ranks_per_node = ranks_per_node_after_tp(tp, dp, gpn);
    /* The expert grid (Megatron-Core RankGenerator, order tp-cp-ep-dp-pp with etp in place of tp): the
     * ETP ranks are the fastest, then the EP ranks; parallel_check keeps the ETP group in a domain and the
     * EP x ETP group either in one domain or over whole domains. */
    uint64_t ep = E->t->ep, etp = parallel_etp(E->t);
    E->etp_group.ranks = (uint32_t)etp;
    E->etp_group.ranks_per_node = (uint32_t)(etp <= gpn ? etp : 1);
    E->ep_group.ranks = (uint32_t)ep;
    E->ep_group.ranks_per_node = (uint32_t)(ep * etp <= gpn ? ep : (gpn % etp == 0 ? gpn / etp : 1));
    if (E->ep_group.ranks_per_node == 0 || ep % E->ep_group.ranks_per_node)
        E->ep_group.ranks_per_node = 1;
    /* The expert-data-parallel group: the ranks after the etp x ep ones in that grid (Megatron-LM 0d8e071
     * megatron/core/parallel_state.py: expert_data_parallel_size = world / (etp x ep x pp), the "dp" of the
     * expert RankGenerator, whose cp is 1); without experts it is the data-parallel group. */
    E->edp_group = E->dp_group;
    if (E->x->model.experts) {
        uint64_t edp = gpumem_expert_dp(E->t);
        E->edp_group.ranks = (uint32_t)edp;
        E->edp_group.ranks_per_node = ranks_per_node_after_tp(etp * (ep ? ep : 1), edp, gpn);
    }
}

int eng_layer_moe(const eng *E, uint32_t vs, uint32_t layer)
{
    return modelcfg_layer_is_moe(&E->x->model, (uint64_t)E->chunk_first[vs] + layer);
}

int eng_layer_bf16(const eng *E, uint32_t vs, uint32_t layer)
{
    return traincfg_layer_bf16(E->t, (uint64_t)E->chunk_first[vs] + layer, E->x->model.layers);
}

int eng_layer_windowed(const eng *E, uint32_t vs, uint32_t layer)
{
    return modelcfg_layer_windowed(&E->x->model, (uint64_t)E->chunk_first[vs] + layer);
}

uint64_t eng_layer_params(const eng *E, uint32_t vs, uint32_t layer)
{
    return eng_layer_moe(E, vs, layer) ? E->g.moe_layer_params : E->g.layer_params;
}

uint64_t eng_layer_grad_bytes(const eng *E, uint32_t vs, uint32_t layer)
{
    return eng_layer_moe(E, vs, layer) ? E->g.moe_layer_grad_bytes : E->g.layer_grad_bytes;
}

/* One op per nonzero entry of params[n] from make (an opgraph_*_op), stored as op + 1 in out[]. */
static int grad_ops(eng *E, const traincfg *t, const uint64_t *params, int n,
                    int (*make)(opgraph *, const traincfg *, uint64_t, cxl_err *), uint32_t *out, cxl_err *err)
{
    for (int k = 0; k < n; k++) {
        if (!params[k])
            continue;
        int op = make(&E->g, t, params[k], err);
        if (op < 0)
            return op;
        out[k] = (uint32_t)op + 1;
    }
    return 0;
}

/* One representative per stage: what it holds, its optimizer kernel, whether its pipeline link stays in
 * the NVLink domain. */
static int setup_stages(eng *E, cxl_err *err)
{
    const traincfg *t = E->t;
    uint64_t tp = t->tp, dp = traincfg_dpcp(t), gpn = clustercfg_domain(&E->x->cluster); /* a stage: tp x cp x dp */
    uint32_t pp = E->pp;
    E->reps = calloc(pp, sizeof *E->reps);
    E->pp_intra = calloc(pp, 1);
    if (!E->reps || !E->pp_intra)
        return eng_oom(E);
    for (uint32_t r = 0; r < pp; r++) {
        uint64_t a = (uint64_t)r * tp * dp, b = (uint64_t)((r + 1) % pp) * tp * dp;
        E->pp_intra[r] = (a / gpn == b / gpn);
        rep *R = &E->reps[r];
        R->r = r;
        /* the iteration starts as the host launches its first entry (train_step.c, host timeline) */
        R->host_ps = -(int64_t)t->host_launch_ps;
        R->first_stage = r == 0;
        R->last_stage = r == traincfg_head_stage(t);
        R->params = (R->first_stage ? E->g.embed_params : 0) + (R->last_stage ? E->g.head_params : 0);
        uint64_t expert = 0;    /* the routed experts' parameters (ZeRO shards them over the expert-dp group) */
        /* sp: the stage's gradients of parameters every tp rank holds, summed over tp at the iteration's end
         * (train_step.c end_tp_grads); priced for MLA, whose duplicated down-projections make them 8 % of a
         * DeepSeek-V3 layer's attention; other models' (norms, biases, routers: a few h per layer) are left
         * out, as before */
        int tp_whole = tp > 1 && t->sp && modelcfg_is_mla(&E->x->model);
        for (uint32_t c = 0; c < E->v; c++)
            for (uint32_t l = 0; l < E->chunk_layers[c * pp + r]; l++) {
                R->params += eng_layer_params(E, c * pp + r, l);
                expert += eng_layer_moe(E, c * pp + r, l) ? E->g.moe_expert_params : 0;
                if (tp_whole)
                    R->tp_grad_bytes += modelcfg_layer_tp_whole_params(&E->x->model, eng_layer_moe(E, c * pp + r, l)) *
                                        E->g.grad_elem_bytes;
            }
        uint64_t edp = gpumem_expert_dp(t), rest = R->params - expert;
        R->expert_shard_params = t->zero >= 1 ? (expert + edp - 1) / edp : expert;
        R->shard_params = (t->zero >= 1 ? (rest + dp - 1) / dp : rest) + R->expert_shard_params;
        int op = opgraph_optimizer_op(&E->g, t, R->shard_params, err);
        if (op < 0)
            return op;
        R->opt_op = (uint32_t)op;
        R->opt_dense_op = R->opt_op;
        if (t->overlap_param_gather_with_optimizer_step && t->overlap_param_gather && E->v > 1) {
            /* two optimizer kernels: the first model chunk's dense parameters (its own optimizer), the rest
             * (policy_opt_hbm.c) */
            uint32_t st = schedule_stage_of(t->pipeline_schedule, pp, r, 0);
            uint64_t first = (st == 0 ? E->g.embed_params : 0) + (st == pp * E->v - 1 ? E->g.head_params : 0);
            for (uint32_t l = 0; l < E->chunk_layers[r]; l++)
                first += eng_layer_params(E, r, l) - (eng_layer_moe(E, r, l) ? E->g.moe_expert_params : 0);
            first = t->zero >= 1 ? (first + dp - 1) / dp : first;
            if (first > R->shard_params)
                first = R->shard_params;
            int a = opgraph_optimizer_op(&E->g, t, first, err);
            int b = a < 0 ? a : opgraph_optimizer_op(&E->g, t, R->shard_params - first, err);
            if (a < 0 || b < 0)
                return a < 0 ? a : b;
            R->opt_first_op = (uint32_t)a;
            R->opt_rest_op = (uint32_t)b;
        }
        const cxlcfg *cx = &E->x->cxl;
        if (cx->memory != CXLCFG_NONE && cx->offload_scope == CXLCFG_SCOPE_EXPERTS &&
            cx->offload_optimizer == CXLCFG_OPT_CPU && R->expert_shard_params) {
            /* the CPU's Adam takes the experts; the GPU's kernel the rest (policy_opt_cpu.c) */
            op = opgraph_optimizer_op(&E->g, t, R->shard_params - R->expert_shard_params, err);
            if (op < 0)
                return op;
            R->opt_dense_op = (uint32_t)op;
        }
        /* without gradient accumulation fusion: Megatron-FSDP's copy into the reduce-scatter buffer per unit
         * kind, or DDP's accumulation kernel after each (dense or MoE) layer's backward */
        if (!t->grad_acc_fusion) {
            int fsdp = t->data_parallel == TRAINCFG_DP_FSDP;
            uint64_t unit_params[FSDP_KINDS] = { E->g.layer_params, E->g.embed_params, E->g.head_params };
            uint64_t acc_params[2] = { E->g.layer_params, E->g.moe_layer_params };
            int rc = fsdp ? grad_ops(E, t, unit_params, FSDP_KINDS, opgraph_fsdp_grad_copy_op, E->fsdp_copy_op, err)
                          : grad_ops(E, t, acc_params, 2, opgraph_grad_accum_op, E->accum_op, err);
            if (rc < 0)
                return rc;
        }
        /* (on Blackwell the gathered FP8 weights serve the backward's GEMM untransposed: traincfg.h fp8_non_tn) */
        if (t->data_parallel == TRAINCFG_DP_FSDP && t->precision == GPUCFG_FP8 && t->fp8_param_gather &&
            !t->keep_fp8_transpose && !(t->fp8_non_tn && !traincfg_mxfp8(t))) {
            int top = opgraph_fsdp_fp8_transpose_op(&E->g, t, E->g.layer_params, err);
            if (top < 0)
                return top;
            E->fsdp_transpose_op = (uint32_t)top + 1;
        }
        /* The gradient reduction without overlap and ZeRO's parameter gather cut a stage's bytes into
         * grad_bucket pieces, one collective each: bound their number (grad_bucket: 1B made one collective
         * per byte, 12.6 GB resident after 120 s). */
        uint64_t elem = E->g.grad_elem_bytes > E->g.weight_elem_bytes ? E->g.grad_elem_bytes : E->g.weight_elem_bytes;
        uint64_t bytes = R->params * elem, gb = t->grad_bucket_bytes ? t->grad_bucket_bytes : 1;
        if (dp > 1 && R->params * E->g.grad_elem_bytes / (E->grad_bucket ? E->grad_bucket : 1) >= TRAIN_MAX_BUCKETS &&
            t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED) {
            uint64_t least = (R->params + TRAIN_MAX_BUCKETS - 1) / TRAIN_MAX_BUCKETS;
            return cfgloc_errf(err, &t->loc[TRAINCFG_F_REDUCE_BUCKET], "training.reduce_bucket_size: %llu elements cut "
                               "pipeline stage %u's %llu gradients into more than %u buckets, the most simulated per "
                               "iteration; use at least %llu (DeepSpeed's default: 500000000)",
                               (unsigned long long)t->reduce_bucket_elems, r, (unsigned long long)R->params,
                               TRAIN_MAX_BUCKETS, (unsigned long long)least);
        }
        if (dp > 1 && bytes / gb >= TRAIN_MAX_BUCKETS) {
            uint64_t least = (bytes + TRAIN_MAX_BUCKETS - 1) / TRAIN_MAX_BUCKETS;
            return cfgloc_errf(err, &t->loc[TRAINCFG_F_GRAD_BUCKET], "training.grad_bucket: %llu B cuts pipeline "
                               "stage %u's %llu B of gradients or parameters into more than %u buckets, the most "
                               "simulated per iteration; use at least %llu B (e.g. 25MB, PyTorch DDP's default)",
                               (unsigned long long)t->grad_bucket_bytes, r, (unsigned long long)bytes,
                               TRAIN_MAX_BUCKETS, (unsigned long long)least);
        }
    }
    return 0;
}

/* A kernel's time on the host timeline (docs/training.md, "Host timeline"; 0 with host_launch 0): its
 * launches at host_launch, except a GEMM's cuBLAS calls (op_desc.calls) at host_gemm (an MXFP8 GEMM's at
 * host_gemm_mxfp8), plus host_module when it begins a framework module's forward or backward: a linear
 * layer's (a GEMM named *.fwd or *.bwd_data: the backward's first GEMM) or the attention core's. The
 * framework's times (host_gemm*, host_module) scale with the cluster's host_time_scale. At most 2^32
 * launches of at most 1 ms (traincfg.c) times a scale of at most 100 (clustercfg.c): no overflow. */
static int64_t host_kernel_ps(const eng *E, const op_desc *o)
{
    const traincfg *t = E->t;
    uint64_t n = o->launches > 1 ? o->launches : 1, g = t->host_gemm_ps, calls = 0;
    if (!t->host_launch_ps)
        return 0;
    if (o->dtype == GPUCFG_FP8 && traincfg_mxfp8(t) && t->host_gemm_mxfp8_ps)
        g = t->host_gemm_mxfp8_ps;
    if (o->kind == OP_GEMM && g)
        calls = o->calls < 1 ? 1 : o->calls > n ? n : o->calls;
    size_t len = strlen(o->name);
    int module = o->kind == OP_ATTN_FWD || o->kind == OP_ATTN_BWD ||
                 (o->kind == OP_GEMM && ((len > 4 && !strcmp(o->name + len - 4, ".fwd")) ||
                                         (len > 9 && !strcmp(o->name + len - 9, ".bwd_data"))));
    double fw = (double)calls * (double)g + (module ? (double)t->host_module_ps : 0);
    return (int64_t)((n - calls) * t->host_launch_ps + (uint64_t)(fw * E->x->cluster.host_time_scale + 0.5));
}

/* Every kernel's time: from the measured file when it lists the kernel, else from the GPU's model; and its
 * time on the host. */
/* Each kernel again on the SMs a running collective leaves (gpu.collective_sms): NCCL runs one thread block
 * per channel, each resident on its own SM for the collective's life (NVIDIA forum, "Compute-Communication
 * Overlap Causes Severe GEMM Performance Degradation because of Tail Effect": on an H100 an ncclAllGather
 * of 24 blocks beside a 132-tile cuBLAS GEMM pushes the GEMM into a second wave). The GPU is priced as one of
 * sms - collective_sms SMs at the same peak per SM: a GEMM's waves and a fused attention kernel's rate
 * shrink with the SMs, a memory-bound kernel keeps the HBM's rate (a few SMs less still saturate it).
 * A measured kernel (optimes.h) takes the model's ratio for its shape. */
static int price_shared(eng *E, cxl_err *err)
{
    const gpucfg *g0 = &E->x->gpu;
    if (!g0->collective_sms || !g0->sms || g0->collective_sms >= g0->sms)
        return 0;
    E->dur_shared = calloc(E->g.nops ? E->g.nops : 1, sizeof *E->dur_shared);
    if (!E->dur_shared)
        return eng_oom(E);
    gpucfg g = *g0;
    compute_fewer_sms(&g, g0->sms - g0->collective_sms);
    for (uint32_t i = 0; i < E->g.nops; i++) {
        const op_desc *op = &E->g.ops[i];
        compute_cost cc;
        cxl_err e;
        if (op->kind == OP_MEM) {
            E->dur_shared[i] = E->dur[i];
            continue;
        }
        if (compute_op_cost(&g, op, &cc, &e)) {
            cfgloc_errf(err, &g0->ref, "gpu '%s': kernel %s on %llu SMs cannot be priced: %s", g0->name, op->name,
                        (unsigned long long)g.sms, e.msg);
            return err->code = e.code;
        }
        E->dur_shared[i] = cc.total_ps;
        if (E->measured[i]) {
            /* a measured kernel slows by the model's own ratio for its shape (the modelled time itself when
             * the file holds the model's time) */
            compute_cost full;
            if (compute_op_cost(g0, op, &full, &e)) {
                cfgloc_errf(err, &g0->ref, "gpu '%s': kernel %s cannot be priced: %s", g0->name, op->name, e.msg);
                return err->code = e.code;
            }
            if (E->dur[i] != full.total_ps && full.total_ps > 0)
                E->dur_shared[i] = (int64_t)ceil((double)E->dur[i] * ((double)cc.total_ps / (double)full.total_ps));
        }
    }
    return 0;
}

static int price_kernels(eng *E, train_result *res, cxl_err *err)
{
    const expcfg *x = E->x;
    const optimes *measured = E->o->measured;
    E->dur = calloc(E->g.nops, sizeof *E->dur);
    E->host = calloc(E->g.nops ? E->g.nops : 1, sizeof *E->host);
    E->measured = calloc(E->g.nops ? E->g.nops : 1, 1);
    if (!E->dur || !E->host || !E->measured)
        return eng_oom(E);
    res->kernels = E->g.nops;
    for (uint32_t i = 0; i < E->g.nops; i++) {
        int64_t ps;
        const op_desc *op = &E->g.ops[i];
        if (measured && optimes_lookup(measured, op, &ps)) {
            res->kernels_measured++;
            E->measured[i] = 1;
            above_peak(E, op, ps, res);
        } else {
            compute_cost cc;
            cxl_err e;
            if (compute_op_cost(&x->gpu, op, &cc, &e)) {
                const cfgloc *l = cc.culprit >= 0 ? &x->gpu.loc[cc.culprit] : &x->gpu.ref;
                int code = e.code;
                cfgloc_errf(err, l, "gpu '%s': kernel %s (%s) cannot be priced: %s", x->gpu.name, op->name,
                            gpucfg_dtype_names[op->dtype], e.msg);
                return err->code = code;
            }
            ps = cc.total_ps;
        }
        if (E->g.op_sms_off[i] && x->gpu.sms > E->g.op_sms_off[i]) {
            /* beside a userbuffers bulk overlap (opgraph.h op_sms_off): on the SMs it leaves, as
             * price_shared prices a kernel beside an NCCL collective; a measured kernel by the model's ratio */
            gpucfg g = x->gpu;
            compute_fewer_sms(&g, g.sms - E->g.op_sms_off[i]);
            compute_cost full, part;
            cxl_err e;
            if (compute_op_cost(&x->gpu, op, &full, &e) || compute_op_cost(&g, op, &part, &e)) {
                cfgloc_errf(err, &x->gpu.ref, "gpu '%s': kernel %s on %llu SMs cannot be priced: %s", x->gpu.name,
                            op->name, (unsigned long long)g.sms, e.msg);
                return err->code = e.code;
            }
            if (full.total_ps > 0)
                ps = (int64_t)ceil((double)ps * ((double)part.total_ps / (double)full.total_ps));
        }
        E->dur[i] = ps;
        E->host[i] = host_kernel_ps(E, op);
    }
    return price_shared(E, err);
}

/* The links of every representative (L_PER_REP each), in bytes per picosecond. */
static int setup_network(eng *E, double intra, double inter, cxl_err *err)
{
    int rc = net_new(&E->n, err);
    if (rc)
        return rc;
    for (uint32_t r = 0; r < E->pp; r++) {
        double bw[L_PER_REP] = { intra, intra, inter, inter };
        for (int k = 0; k < L_PER_REP; k++) {
            rc = net_add_link(E->n, bw[k] / 1e12, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* Domains: the GPUs of node n belong to stages (n x gpn + i) / (tp x dp); a domain serves pool_nodes
 * consecutive nodes (one host port each). Domains whose nodes hold the same stages in the same places
 * see the same traffic at the same times (every representative stands for all its copies), so one is
 * simulated for each distinct composition: exact, by the same symmetry as the representatives. Then the
 * routes of each representative: per domain and host port, how many of its GPUs sit there. */
static int cxl_domains(eng *E, uint32_t P)
{
    const expcfg *x = E->x;
    uint64_t gpn = x->cluster.gpus_per_node, nodes = x->cluster.nodes, per = E->t->tp * traincfg_dpcp(E->t);
    uint32_t npools = (uint32_t)(nodes / P), nd = 0;
    /* signature of a pool: for each GPU slot, its stage */
    uint64_t sig_len = (uint64_t)P * gpn;
    uint32_t *sig = malloc(npools * sig_len * sizeof *sig), *first_of = malloc(npools * sizeof *first_of);
    E->domain_copies = calloc(npools, sizeof *E->domain_copies);
    E->domain_nodes = calloc(npools, sizeof *E->domain_nodes);
    int rc = !sig || !first_of || !E->domain_copies || !E->domain_nodes ? eng_oom(E) : 0;
    for (uint32_t p = 0; rc == 0 && p < npools; p++) {
        for (uint64_t g = 0; g < sig_len; g++)
            sig[p * sig_len + g] = (uint32_t)(((uint64_t)p * sig_len + g) / per);
        /* identical compositions have identical stage lists */
        uint32_t c;
        for (c = 0; c < nd; c++)
            if (!memcmp(&sig[first_of[c] * sig_len], &sig[p * sig_len], sig_len * sizeof *sig))
                break;
        if (c == nd) {
            first_of[nd] = p;
            E->domain_nodes[nd] = P;
            nd++;
        }
        E->domain_copies[c]++;
    }
    E->ndomains = nd;
    for (uint32_t r = 0; rc == 0 && r < E->pp; r++) {
        rep *R = &E->reps[r];
        R->routes = calloc((size_t)nd * P, sizeof *R->routes);
        if (!R->routes) {
            rc = eng_oom(E);
            break;
        }
        for (uint32_t c = 0; c < nd; c++)
            for (uint32_t h = 0; h < P; h++) {
                uint32_t count = 0;
                for (uint64_t g = 0; g < gpn; g++)
                    count += sig[first_of[c] * sig_len + h * gpn + g] == r;
                if (count)
                    R->routes[R->nroutes++] = (cxl_route){ c, h, count };
            }
    }
    free(sig);
    free(first_of);
    return rc;
}

/* The CXL domains, their backend, and the counters the trace keeps per domain and host port. */
static int setup_cxl(eng *E, const train_opts *o, cxl_err *err)
{
    const cxlcfg *cx = &E->x->cxl;
    E->cx = cx;
    uint32_t P = cx->pool_nodes ? cx->pool_nodes : 1;
    int rc = cxl_domains(E, P);
    if (rc)
        return rc;
    uint32_t nd = E->ndomains;
    cxl_params p;
    rc = devcfg_to_params(&cx->dev, &p, err);
    if (rc)
        return rc;
    E->ports = P;
    E->domain_active = calloc(nd, sizeof *E->domain_active);
    E->domain_since = calloc(nd, sizeof *E->domain_since);
    E->port_active = calloc((size_t)nd * P, sizeof *E->port_active);
    E->port_since = calloc((size_t)nd * P, sizeof *E->port_since);
    if (!E->domain_active || !E->domain_since || !E->port_active || !E->port_since)
        return eng_oom(E);
    const char *backend = o->backend ? o->backend : cx->backend;
    cxl_backend_opts bo = o->bo;
    if (!bo.xclbin && cx->xclbin_path[0])
        bo.xclbin = cx->xclbin_path;
    if (!bo.xrt_card && cx->card[0])
        bo.xrt_card = cx->card;
    bo = cxl_backend_opts_for(backend, &bo);
    return cxlmem_new(backend, &bo, &p, nd, o->exact, &E->cm, err);
}

/* The offload policies the experiment asks for (policy.h): the first optimizer policy wanted, and every
 * layer policy wanted with its layer bytes. */
static int setup_policies(eng *E)
{
    const cxlcfg *cx = E->cm ? E->cx : NULL;
    for (const train_policy *const *p = train_policies; *p; p++) {
        if (!(*p)->wanted(cx))
            continue;
        if ((*p)->optimizer_step) {
            if (!E->opt)
                E->opt = *p;
        } else if (E->nlayer_pol < TRAIN_POLICY_MAX) {
            train_policy_use u = { *p, { (*p)->layer_bytes(E, 0), (*p)->layer_bytes(E, 1) } };
            E->layer_pol[E->nlayer_pol++] = u;
        }
    }
    if (!E->opt)
        return E->rc = cxl_errf(E->err, CXL_EINTERNAL, "internal: no optimizer policy for this experiment");
    return 0;
}

static int setup_trace(eng *E)
{
    E->ct = E->o->trace;
    E->link_util = calloc(net_link_count(E->n), sizeof *E->link_util);
    E->shape = malloc(E->g.nops * sizeof *E->shape);
    E->lanes = calloc((size_t)E->pp * TL_N, sizeof *E->lanes);
    E->dom_bytes = calloc(2 * (size_t)E->ndomains + 1, sizeof *E->dom_bytes);
    E->dom_t = calloc((size_t)E->ndomains + 1, sizeof *E->dom_t);
    E->dom_load = calloc((size_t)E->ndomains + 1, sizeof *E->dom_load);
    if (!E->link_util || !E->shape || !E->lanes || !E->dom_bytes || !E->dom_t || !E->dom_load)
        return eng_oom(E);
    eng_trace_shapes(E);
    eng_trace_names(E);
    return E->rc;
}

/* Each representative's schedule (schedule.h) and its pipeline arrival slots. */
static int setup_programs(eng *E, cxl_err *err)
{
    uint32_t pp = E->pp;
    size_t slots = (size_t)E->v * E->m * 2;
    for (uint32_t r = 0; r < pp; r++) {
        rep *R = &E->reps[r];
        size_t n = 0;
        int kind = E->t->pipeline_schedule;
        /* training.moe_a2a_overlap: Megatron-Core's combined 1F1B order (parallel.c refuses the other schedules) */
        int comb = E->t->moe_a2a_overlap;
        int rc = comb ? schedule_build_combined(pp, r, E->m, E->v, NULL, 0, &n, err)
                      : schedule_build_kind(kind, pp, r, E->m, E->v, NULL, 0, &n, err);
        if (rc && rc != CXL_ELIMIT)
            return rc;
        R->items = malloc(n * sizeof *R->items);
        R->arrived = malloc(slots * sizeof *R->arrived);
        R->sent = malloc(slots * sizeof *R->sent);
        R->posted = malloc(slots * sizeof *R->posted);
        R->held = calloc(slots, sizeof *R->held);
        R->bwd_done = calloc(E->v, sizeof *R->bwd_done);
        uint32_t units = 0;     /* Megatron-FSDP: the most units of a pass (layers + embedding + head) */
        for (uint32_t c = 0; c < E->v; c++)
            units = E->chunk_layers[c * pp + r] + 2 > units ? E->chunk_layers[c * pp + r] + 2 : units;
        R->ag_enq = E->t->data_parallel == TRAINCFG_DP_FSDP ? calloc(units, sizeof *R->ag_enq) : NULL;
        if (!R->items || !R->arrived || !R->sent || !R->posted || !R->held || !R->bwd_done ||
            (E->t->data_parallel == TRAINCFG_DP_FSDP && !R->ag_enq))
            return eng_oom(E);
        rc = comb ? schedule_build_combined(pp, r, E->m, E->v, R->items, n, &R->nitems, err)
                  : schedule_build_kind(kind, pp, r, E->m, E->v, R->items, n, &R->nitems, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < slots; i++)
            R->arrived[i] = R->sent[i] = R->posted[i] = -1;
        if (pp > 1 && kind <= TRAINCFG_SCHEDULE_INTERLEAVED) {
            /* Megatron's 1F1B and interleaved orders (schedule_build): warm-up forwards, then the steady
             * phase's forward-backward pairs */
            uint64_t w = comb ? schedule_warmup_combined(pp, r, E->m, E->v) : schedule_warmup(pp, r, E->m, E->v);
            uint64_t total = (uint64_t)E->m * E->v;
            R->steady_lo = (size_t)w;
            R->steady_hi = (size_t)(w + 2 * (total - w));
        }
        E->items_total += R->nitems;
    }
    return 0;
}

int eng_setup(eng *E, const expcfg *x, const train_opts *o, train_result *res, cxl_err *err)
{
    const traincfg *t = &x->train;
    E->x = x;
    E->t = t;
    E->o = o;
    E->err = err;
    E->pp = (uint32_t)t->pp;
    E->v = (uint32_t)t->virtual_stages;
    E->m = (uint32_t)parallel_microbatches(t);
    E->chunk_layers = calloc((size_t)E->pp * E->v, sizeof *E->chunk_layers);
    E->chunk_first = calloc((size_t)E->pp * E->v, sizeof *E->chunk_first);
    if (!E->chunk_layers || !E->chunk_first)
        return eng_oom(E);
    for (uint32_t c = 0; c < E->v; c++)
        for (uint32_t r = 0; r < E->pp; r++) {
            uint64_t first, n = parallel_chunk_layers(&x->model, t, r, c, &first);
            E->chunk_layers[c * E->pp + r] = (uint32_t)n;
            E->chunk_first[c * E->pp + r] = (uint32_t)first;
        }
    double intra = 0, inter = 0;
    int rc = opgraph_build(&x->model, t, &E->g, err);
    if (!rc)
        rc = setup_fabric(E, &intra, &inter, err);
    if (!rc) {
        E->grad_overlap = traincfg_grad_overlap(t);
        E->grad_sync = traincfg_grad_sync(t);
        E->grad_bucket = t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED ? t->reduce_bucket_elems * E->g.grad_elem_bytes
                         : E->grad_overlap ? t->grad_bucket_bytes : UINT64_MAX;
        setup_groups(E);
        rc = setup_stages(E, err);
    }
    if (!rc)
        rc = price_kernels(E, res, err);
    if (!rc)
        eng_cpuoff_setup(E);
    if (!rc)
        rc = setup_network(E, intra, inter, err);
    if (!rc && x->cxl.memory != CXLCFG_NONE)
        rc = setup_cxl(E, o, err);
    if (!rc)
        rc = setup_policies(E);
    if (!rc && o->trace)
        rc = setup_trace(E);
    if (!rc)
        rc = setup_programs(E, err);
    if (!rc)
        rc = eng_pg_setup(E);
    if (!rc)
        rc = eng_a2a_setup(E, err);
    return rc;
}

void eng_teardown(eng *E)
{
    if (E->reps)
        for (uint32_t r = 0; r < E->pp; r++) {
            free(E->reps[r].items);
            free(E->reps[r].arrived);
            free(E->reps[r].sent);
            free(E->reps[r].posted);
            free(E->reps[r].held);
            free(E->reps[r].bwd_done);
            for (int g = 0; g < DPQ_N; g++)
                free(E->reps[r].dq[g].q);
            free(E->reps[r].ag_enq);
            free(E->reps[r].rs_enq);
            free(E->reps[r].rs_elems);
            free(E->reps[r].routes);
            free(E->reps[r].a2a);
            free(E->reps[r].side);
            eng_pg_free(&E->reps[r]);
        }
    cxlmem_free(E->cm);
    free(E->domain_copies);
    free(E->domain_nodes);
    free(E->domain_active);
    free(E->domain_since);
    free(E->port_active);
    free(E->port_since);
    free(E->reps);
    free(E->pp_intra);
    free(E->chunk_layers);
    free(E->chunk_first);
    free(E->dur);
    free(E->dur_shared);
    free(E->host);
    free(E->measured);
    free(E->xf);
    free(E->xfree);
    if (E->lanes)
        for (uint32_t i = 0; i < E->pp * TL_N; i++)
            ctrace_lanes_free(&E->lanes[i]);
    free(E->lanes);
    free(E->link_util);
    free(E->shape);
    free(E->dom_bytes);
    free(E->dom_t);
    free(E->dom_load);
    net_free(E->n);
    evq_free(&E->q);
}

