/* opgraph.c - per-GPU kernels and tensor-parallel collectives of one layer, embedding, head, optimizer.
 *
 * Notation (per micro-batch): s sequence, b micro-batch, h hidden, a heads, kv KV heads, d = h/a head
 * dimension, f FFN, V vocabulary, t tensor-parallel size; T = s b tokens; E = T h activation elements;
 * Eh = E / t with sequence parallelism, else E (the part of an elementwise op each GPU runs). Activations
 * are 16-bit (2 B) unless training in fp32/tf32 (4 B); dropout masks are 1 B (Korthikanti Sec. 4.1).
 *
 * Elementwise kernel traffic, bytes per element of Eh (the fused kernels of Megatron-LM 2022):
 *   norm forward: read x, write y                                      2 + 2 = 4   (x4/2 fp32)
 *   norm backward: read x, dy and the residual gradient, write dx      2+2+2+2 = 8
 *   bias-dropout-add forward: read x and the residual, write y and the mask   2+2+2+1 = 7 (no dropout: 6)
 *   bias-dropout-add backward: read dy, mask, write dx                 2+1+2 = 5 (no dropout: 4)
 *   scale-mask-softmax forward (per score element): read, write        4; backward read y, dy, write 6
 *   attention dropout forward: read, write, mask 5; backward read dy, mask, write 5
 *   GELU (bias fused) forward per element of T f / t: read, write      4; backward read x, dy, write 6
 *   SwiGLU forward per output element: read gate and up, write         6; backward read 3, write 2: 10
 *   rotary embedding (q and k elements): read, write 4; backward 4
 *   vocabulary-parallel cross entropy per logit element: read the 16-bit logits, write fp32 softmax,
 *     two more fp32 passes (max/sum, loss)                             2 + 4 + 8 = 14; backward read
 *     the fp32 softmax, write 16-bit gradients                         4 + 2 = 6
 *   embedding lookup: read a row, write it (per element of E)          4 (+ learned positions: 2 more);
 *     backward: read the gradient, accumulate into fp32 rows           2 + 8 = 10
 *   Adam step (Megatron's fused Adam on fp32 main parameters) per parameter: read the gradient (2/4),
 *     master weight, m, v (12), write master, m, v (12) and the 16-bit model weight (2); grad-norm for
 *     clipping reads the gradients once more; zeroing the gradient buffer writes it.
 * These are estimates of the fused kernels' traffic; a user with a GPU replaces them by measured times
 * (optimes.h). */
#include "train/opgraph.h"

#include <math.h>
#include <string.h>

#include "config/gpucfg.h"
#include "train/opgraph_int.h"

int opg_add_op(bld *B, const op_desc *d)
{
    opgraph *g = B->g;
    for (uint32_t i = 0; i < g->nops; i++) {
        const op_desc *o = &g->ops[i];
        if (o->name == d->name || !strcmp(o->name, d->name)) {
            if (o->kind == d->kind && o->batch == d->batch && o->m == d->m && o->n == d->n && o->k == d->k &&
                o->bytes == d->bytes && o->dtype == d->dtype &&
                o->launches == d->launches && o->block_scaled == d->block_scaled && o->calls == d->calls &&
                o->streams == d->streams)
                return (int)i;
        }
    }
    if (g->nops >= OPGRAPH_MAX_OPS) {
        B->failed = cxl_errf(B->err, CXL_ELIMIT, "internal: more than %d distinct kernels", OPGRAPH_MAX_OPS);
        return 0;
    }
    g->ops[g->nops] = *d;
    return (int)g->nops++;
}

/* 1 when a name ends in suffix */
static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static void push(bld *B, int tpl, opgraph_entry e)
{
    opgraph_tpl *T = &B->g->tpl[tpl];
    /* the weight-gradient entries, by their stable names (op.h): the weight GEMMs X^T.dY and the input
     * all-gather sequence parallelism repeats for them */
    const char *name = e.kind == OPGRAPH_KERNEL ? B->g->ops[e.op].name : e.name;
    e.wgrad = (uint8_t)(name && (ends_with(name, ".bwd_weight") || ends_with(name, ".wgrad")));
    e.node = B->node;
    e.experts_hook = B->experts_hook;
    B->experts_hook = 0;
    if (T->n >= OPGRAPH_MAX_TPL) {
        B->failed = cxl_errf(B->err, CXL_ELIMIT, "internal: template %d longer than %d", tpl, OPGRAPH_MAX_TPL);
        return;
    }
    T->e[T->n++] = e;
}

/* A GEMM of `batch` products (m x k).(k x n), 16-bit operands (or the training precision's), launched as
 * `launches` kernels (op.h; 0: one). An MXFP8 GEMM first swizzles its two operands' block scales into the
 * layout the tensor cores read, one kernel per operand (a grouped GEMM: one multi-tensor kernel per operand
 * for all its experts): Transformer Engine pytorch/csrc/extensions/gemm.cpp, gemm() calls
 * swizzle_scaling_factors on A and B, te_general_grouped_gemm multi_tensor_swizzle_scaling_factors; common/
 * swizzle/swizzle.cu. Two more launch gaps; their bytes (the scales, 1/32 of the FP8 operands' read and
 * written once) are left in the GEMM's, which already counts its operands at 2 B. */
static void gemm_ns(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                    uint32_t launches, uint32_t streams)
{
    uint32_t calls = launches ? launches : 1;
    if (B->mx && B->dtype == GPUCFG_FP8)
        launches = (launches ? launches : 1) + (launches < UINT32_MAX - 2 ? 2 : 0);
    op_desc d = { name, OP_GEMM, B->dtype, batch, m, n, k, 0, 0, launches, B->mx && B->dtype == GPUCFG_FP8, calls,
                  streams > 1 ? (streams < calls ? streams : calls) : 0 };
    d.flops = 2.0 * (double)batch * (double)m * (double)n * (double)k;
    d.bytes = B->act * (double)batch * ((double)m * (double)k + (double)k * (double)n + (double)m * (double)n);
    opgraph_entry e = { OPGRAPH_KERNEL, 0, (uint16_t)opg_add_op(B, &d), 0, NULL, 0, 0, 0, 0 };
    push(B, tpl, e);
}

static void gemm_n(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                   uint32_t launches)
{
    gemm_ns(B, tpl, name, batch, m, n, k, launches, 0);
}

static void gemm(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k)
{
    gemm_n(B, tpl, name, batch, m, n, k, 0);
}

/* A memory-bound kernel over `elems` elements moving bytes_per_elem each (at 16-bit activations; scaled
 * for fp32 training where the factor applies to activation traffic). */
static void mem_n(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem, uint32_t launches)
{
    op_desc d = { name, OP_MEM, B->dtype, 1, elems, 1, 1, 0, 0, launches > 1 ? launches : 0, 0, 0, 0 };
    d.bytes = (double)elems * bytes_per_elem * (B->act / 2.0);
    d.flops = (double)elems * 4.0;
    opgraph_entry e = { OPGRAPH_KERNEL, 0, (uint16_t)opg_add_op(B, &d), 0, NULL, 0, 0, 0, 0 };
    push(B, tpl, e);
}

static void mem(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem)
{
    mem_n(B, tpl, name, elems, bytes_per_elem, 0);
}

/* FP8 training (Transformer Engine): every GEMM operand that is an activation or an output gradient is
 * quantized before its GEMM, to the rowwise copy its own GEMM reads and the columnwise copy the other
 * backward GEMM reads. Weights are quantized once per iteration (the first micro-batch, or after the
 * optimizer's parameter all-gather with fp8_param_gather): not counted (about 4 B per weight per
 * iteration). `name` is the MXFP8 kernel's, "mxfp8.quant.<what>"; the tensorwise kernel is named by the same
 * string without its "mx" (name + 2, "mxfp8.quant.<what>").
 *   tensorwise (per-tensor current scaling, Megatron-Bridge's FP8-CS): a pass computing the tensor's amax
 *     (reading the 16-bit tensor, 2 B per element), then the cast-transpose writing the rowwise and the
 *     columnwise FP8 copies (read 2 B, write 1 + 1 B): 6 B per element, priced as one memory-bound kernel
 *     (TE transformer_engine/pytorch/tensor/float8_tensor.py Float8CurrentScalingQuantizer; common/
 *     recipe/current_scaling.cu nvte_compute_amax, nvte_compute_scale_from_amax; common/transpose/
 *     cast_transpose.cu), three launches: nvte_compute_amax, nvte_compute_scale_from_amax and
 *     nvte_quantize_v2 (TE pytorch/csrc/quantizer.cpp, Float8CurrentScalingQuantizer::quantize_impl).
 *   mxfp8 (MXFP8BlockScaling, FP8-MX): one kernel reads the 16-bit tensor once and writes both copies with
 *     their E8M0 scales, one per 32 elements along the rows and along the columns, computed in the kernel
 *     from each block's own amax: no amax pass, no scale history (TE common/util/cast_kernels.cuh
 *     cast_mxfp8_2D_kernel, SCALE_DIM_X = SCALE_DIM_Y = 32; pytorch/tensor/mxfp8_tensor.py MXFP8Quantizer;
 *     OCP Microscaling Formats (MX) v1.0, Sec. 5.3): 2 + 2 x (1 + 1/32) = 4.0625 B per element. The
 *     GEMMs swizzle the scales before they run (gemm_n); one launch (nvte_quantize_v2).
 * `tensors` is how many tensors the elements are quantized as, each with its own kernels: 1, or for a
 * grouped expert GEMM's input the local experts (Transformer Engine's GroupedLinear quantizes with
 * tex.split_quantize, which for current scaling and MXFP8 quantizers runs each split's quantize in a loop:
 * pytorch/csrc/extensions/cast.cpp, split_quantize and multi_tensor_quantize_impl, whose one fused
 * multi-tensor kernel serves only delayed scaling). Its bytes are the same; its launches multiply. */
static void fp8_quant_n(bld *B, int tpl, const char *name, uint64_t elems, uint64_t tensors)
{
    if (B->dtype != GPUCFG_FP8)
        return;
    uint64_t per = B->mx ? 1 : 3, n = (tensors ? tensors : 1) * per;
    mem_n(B, tpl, B->mx ? name : name + 2, elems, B->mx ? 2 + 2 * (1 + 1.0 / 32) : 6,
          (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
}

static void fp8_quant(bld *B, int tpl, const char *name, uint64_t elems)
{
    fp8_quant_n(B, tpl, name, elems, 1);
}

static void tpc(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp)
{
    if (tp <= 1 || bytes == 0)
        return;
    opgraph_entry e = { OPGRAPH_TP_COLL, (uint8_t)coll, 0, bytes, name, 0, 0, 0, 0 };
    push(B, tpl, e);
}

/* A tensor-parallel collective started beside the compute stream (async), and the stream's wait for it. */
static void tpc_async(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp)
{
    if (tp <= 1 || bytes == 0)
        return;
    opgraph_entry e = { OPGRAPH_TP_ASYNC, (uint8_t)coll, 0, bytes, name, 0, 0, 0, 0 };
    push(B, tpl, e);
}

static void tp_wait(bld *B, int tpl, uint64_t tp)
{
    if (tp <= 1)
        return;
    opgraph_entry e = { OPGRAPH_TP_WAIT, 0, 0, 0, "tp.wait", 0, 0, 0, 0 };
    push(B, tpl, e);
}


/* Mark the entries [from, end) of template L as one CUDA graph (lshape.graph_attn): Megatron-Core's
 * cuda_graph_scope "attn" captures TransformerLayer's attention half (input layernorm, self-attention with its
 * linear layers and core attention, the bias-dropout-add), forward and backward, with Transformer Engine's
 * make_graphed_callables (megatron/core/transformer/transformer_layer.py, cuda_graphs.py): the host replays
 * each as one cudaGraphLaunch. */
static void graph_mark(bld *B, int L, uint32_t from)
{
    opgraph_tpl *T = &B->g->tpl[L];
    for (uint32_t i = from; i < T->n; i++)
        T->e[i].graph = i == from ? OPGRAPH_GRAPH_HEAD : OPGRAPH_GRAPHED;
}

static void attn_fwd_eager(bld *B, int L, const lshape *x);
static void attn_bwd_eager(bld *B, int L, const lshape *x);

static void attn_fwd(bld *B, int L, const lshape *x)
{
    uint32_t from = B->g->tpl[L].n;
    attn_fwd_eager(B, L, x);
    if (x->graph_attn)
        graph_mark(B, L, from);
}

static void attn_bwd(bld *B, int L, const lshape *x)
{
    uint32_t from = B->g->tpl[L].n;
    attn_bwd_eager(B, L, x);
    if (x->graph_attn)
        graph_mark(B, L, from);
}

static void attn_fwd_eager(bld *B, int L, const lshape *x)
{
    if (x->mla) {
        opg_mla_fwd(B, L, x);
        return;
    }
    mem(B, L, "ln1.fwd", x->Eh, 4);
    fp8_quant(B, L, "mxfp8.quant.qkv.fwd", x->Eh);
    if (x->ub) {
        opg_ring_ag(B, L, x, "qkv.fwd", "qkv.fwd.ub", x->qkv_n, x->h, x->act_bytes, "tp.allgather.attn");
    } else {
        if (x->sp)
            tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, "tp.allgather.attn", x->tp);
        gemm(B, L, "qkv.fwd", 1, x->T, x->qkv_n, x->h);
    }
    if (x->rope)
        mem(B, L, "rope.fwd", x->T * (x->at + 2 * x->kv / x->tp) * x->dh, 4);
    opg_attn_core(B, L, x, 0);
    fp8_quant(B, L, "mxfp8.quant.proj.fwd", x->T * x->at * x->dh);
    if (x->ub) {
        opg_ring_rs(B, L, x, "proj.fwd", "proj.fwd.ub", x->h, x->at * x->dh, x->act_bytes, "tp.reducescatter.attn",
                "tp.ub.reduce.attn");
    } else {
        gemm(B, L, "proj.fwd", 1, x->T, x->h, x->at * x->dh);
        tpc(B, L, x->ar, x->act_bytes, x->sp ? "tp.reducescatter.attn" : "tp.allreduce.attn", x->tp);
    }
    mem(B, L, "resid1.fwd", x->Eh, x->drop ? 7 : 6);
}

static void col_bwd(bld *B, int L, const lshape *x, const col_bwd_names *nm, const uint64_t bd[3], const uint64_t bw[3])
{
    opg_col_bwd(B, L, x, nm, x->act_bytes, bd, bw);
}

static void attn_bwd_eager(bld *B, int L, const lshape *x)
{
    uint64_t dh = x->dh;
    if (x->mla) {
        opg_mla_bwd(B, L, x);
        return;
    }
    mem(B, L, "resid1.bwd", x->Eh, x->drop ? 5 : 4);
    if (x->sp && !x->ub)
        tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, "tp.allgather.attn.grad", x->tp);
    fp8_quant(B, L, "mxfp8.quant.proj.bwd", x->T * x->h);
    if (x->ub) /* TE's proj_dgrad ring exchange; the gathered gradient is kept for the weight gradient */
        opg_ring_ag(B, L, x, "proj.bwd_data", "proj.bwd_data.ub", x->at * dh, x->h, x->act_bytes,
                "tp.allgather.attn.grad");
    else
        gemm(B, L, "proj.bwd_data", 1, x->T, x->at * dh, x->h);
    gemm(B, L, "proj.bwd_weight", 1, x->at * dh, x->h, x->T);
    opg_attn_core(B, L, x, 1);
    if (x->rope)
        mem(B, L, "rope.bwd", x->T * (x->at + 2 * x->kv / x->tp) * dh, 4);
    fp8_quant(B, L, "mxfp8.quant.qkv.bwd", x->T * x->qkv_n);
    const col_bwd_names nm = { "qkv.bwd_data", "qkv.bwd_weight", "tp.allgather.attn.wgrad",
                               x->sp ? "tp.reducescatter.attn.grad" : "tp.allreduce.attn.grad" };
    col_bwd(B, L, x, &nm, (const uint64_t[3]){ x->T, x->h, x->qkv_n }, (const uint64_t[3]){ x->h, x->qkv_n, x->T });
    mem(B, L, "ln1.bwd", x->Eh, 8);
}

/* The names of one MLP's kernels and collectives: the dense MLP's, or a shared expert's. */
typedef struct mlp_names {
    const char *fc1, *act, *fc2, *ag, *rs_ar_sp, *rs_ar;
    const char *fc2_bd, *fc2_bw, *act_b, *fc1_bd, *fc1_bw, *ag_g, *ag_wg, *rs_ar_g_sp, *rs_ar_g;
    const char *q_fc1, *q_fc2, *q_fc2_b, *q_fc1_b; /* FP8 quantization of the GEMMs' inputs / output gradients */
} mlp_names;
static const mlp_names dense_mlp = {
    "fc1.fwd", NULL, "fc2.fwd", "tp.allgather.mlp", "tp.reducescatter.mlp", "tp.allreduce.mlp",
    "fc2.bwd_data", "fc2.bwd_weight", NULL, "fc1.bwd_data", "fc1.bwd_weight", "tp.allgather.mlp.grad",
    "tp.allgather.mlp.wgrad", "tp.reducescatter.mlp.grad", "tp.allreduce.mlp.grad",
    "mxfp8.quant.fc1.fwd", "mxfp8.quant.fc2.fwd", "mxfp8.quant.fc2.bwd", "mxfp8.quant.fc1.bwd",
};
static const mlp_names shared_mlp = {
    "moe.shared.fc1.fwd", "moe.shared.act.fwd", "moe.shared.fc2.fwd", "tp.allgather.shared",
    "tp.reducescatter.shared", "tp.allreduce.shared", "moe.shared.fc2.bwd_data", "moe.shared.fc2.bwd_weight",
    "moe.shared.act.bwd", "moe.shared.fc1.bwd_data", "moe.shared.fc1.bwd_weight", "tp.allgather.shared.grad",
    "tp.allgather.shared.wgrad", "tp.reducescatter.shared.grad", "tp.allreduce.shared.grad",
    "mxfp8.quant.moe.shared.fc1.fwd", "mxfp8.quant.moe.shared.fc2.fwd", "mxfp8.quant.moe.shared.fc2.bwd",
    "mxfp8.quant.moe.shared.fc1.bwd",
};

/* A tensor-parallel MLP of fin inputs / fo outputs per rank: [all-gather], fc1, activation, fc2,
 * reduce-scatter (sp) or all-reduce. */
static void mlp_fwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo, const mlp_names *nm)
{
    fp8_quant(B, L, nm->q_fc1, x->Eh);
    int ub = x->ub && nm == &dense_mlp;
    if (ub) {
        opg_ring_ag(B, L, x, nm->fc1, "fc1.fwd.ub", fin, x->h, x->act_bytes, nm->ag);
    } else {
        if (x->sp)
            tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, nm->ag, x->tp);
        gemm(B, L, nm->fc1, 1, x->T, fin, x->h);
    }
    if (x->swiglu)
        mem(B, L, nm->act ? nm->act : "swiglu.fwd", x->T * fo, 6);
    else
        mem(B, L, nm->act ? nm->act : "gelu.fwd", x->T * fo, 4);
    fp8_quant(B, L, nm->q_fc2, x->T * fo);
    if (ub) {
        opg_ring_rs(B, L, x, nm->fc2, "fc2.fwd.ub", x->h, fo, x->act_bytes, nm->rs_ar_sp, "tp.ub.reduce.mlp");
    } else {
        gemm(B, L, nm->fc2, 1, x->T, x->h, fo);
        tpc(B, L, x->ar, x->act_bytes, x->sp ? nm->rs_ar_sp : nm->rs_ar, x->tp);
    }
}

static void mlp_bwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo, const mlp_names *nm)
{
    int ub = x->ub && nm == &dense_mlp;
    if (x->sp && !ub)
        tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, nm->ag_g, x->tp);
    fp8_quant(B, L, nm->q_fc2_b, x->T * x->h);
    if (ub) /* TE's fc2_dgrad ring exchange */
        opg_ring_ag(B, L, x, nm->fc2_bd, "fc2.bwd_data.ub", fo, x->h, x->act_bytes, nm->ag_g);
    else
        gemm(B, L, nm->fc2_bd, 1, x->T, fo, x->h);
    gemm(B, L, nm->fc2_bw, 1, fo, x->h, x->T);
    if (x->swiglu)
        mem(B, L, nm->act_b ? nm->act_b : "swiglu.bwd", x->T * fo, 10);
    else
        mem(B, L, nm->act_b ? nm->act_b : "gelu.bwd", x->T * fo, 6);
    fp8_quant(B, L, nm->q_fc1_b, x->T * fin);
    const col_bwd_names cn = { nm->fc1_bd, nm->fc1_bw, nm->ag_wg, x->sp ? nm->rs_ar_g_sp : nm->rs_ar_g };
    col_bwd(B, L, x, &cn, (const uint64_t[3]){ x->T, x->h, fin }, (const uint64_t[3]){ x->h, fin, x->T });
}

/* An op's share of the model FLOPs (MFU's numerator): a GEMM's FLOPs; a flash forward kernel as the
 * model's Q.K^T and P.V at full s x s (what the unfused GEMMs count), so the model FLOPs do not depend on
 * the kernels that run them; nothing for other kernels. */
static double model_flops(const op_desc *o)
{
    if (o->kind == OP_GEMM)
        return o->flops;
    if (o->kind == OP_ATTN_FWD)
        return 4.0 * (double)o->batch * (double)o->m * (double)o->n * (double)o->k;
    return 0;
}

static double tpl_gemm_flops(const opgraph *g, int tpl)
{
    double f = 0;
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *e = &g->tpl[tpl].e[i];
        if (e->kind == OPGRAPH_KERNEL)
            f += model_flops(&g->ops[e->op]);
    }
    return f;
}

/* The six layer templates (dense and MoE forward, backward, recomputation), or with var their variants
 * (OPGRAPH_VARIANT_OF: bf16, windowed) built by B (whose dtype the GEMMs and quantizations follow) over
 * x (whose window the windowed ones carry). */
static void layer_tpls(bld *B, const lshape *x, const moe_shape *e, int recompute, int up, int var)
{
    opgraph *g = B->g;
#define ID(id) OPGRAPH_VARIANT_OF(id, var)
    int drop = x->drop;
    attn_fwd(B, ID(OPGRAPH_LAYER_FWD), x);
    mem(B, ID(OPGRAPH_LAYER_FWD), "ln2.fwd", x->Eh, 4);
    mlp_fwd(B, ID(OPGRAPH_LAYER_FWD), x, x->fin, x->fo, &dense_mlp);
    mem(B, ID(OPGRAPH_LAYER_FWD), "resid2.fwd", x->Eh, drop ? 7 : 6);
    mem(B, ID(OPGRAPH_LAYER_BWD), "resid2.bwd", x->Eh, drop ? 5 : 4);
    mlp_bwd(B, ID(OPGRAPH_LAYER_BWD), x, x->fin, x->fo, &dense_mlp);
    mem(B, ID(OPGRAPH_LAYER_BWD), "ln2.bwd", x->Eh, 8);
    attn_bwd(B, ID(OPGRAPH_LAYER_BWD), x);
    if (e) {
        attn_fwd(B, ID(OPGRAPH_MOE_FWD), x);
        opg_moe_fwd(B, ID(OPGRAPH_MOE_FWD), x, e);
        opg_moe_bwd(B, ID(OPGRAPH_MOE_BWD), x, e);
        attn_bwd(B, ID(OPGRAPH_MOE_BWD), x);
        if (recompute == TRAINCFG_RECOMPUTE_FULL)
            g->tpl[ID(OPGRAPH_MOE_RECOMPUTE)] = g->tpl[ID(OPGRAPH_MOE_FWD)];
        else if (recompute == TRAINCFG_RECOMPUTE_SELECTIVE)
            opg_attn_core(B, ID(OPGRAPH_MOE_RECOMPUTE), x, 0);
        if (up)
            opg_mla_up(B, ID(OPGRAPH_MOE_RECOMPUTE), x, "tp.allgather.mla.recompute");
    }
    /* recomputation before a layer's backward */
    if (recompute == TRAINCFG_RECOMPUTE_FULL)
        g->tpl[ID(OPGRAPH_LAYER_RECOMPUTE)] = g->tpl[ID(OPGRAPH_LAYER_FWD)];
    else if (recompute == TRAINCFG_RECOMPUTE_SELECTIVE)
        opg_attn_core(B, ID(OPGRAPH_LAYER_RECOMPUTE), x, 0);
    /* Megatron-Core's recompute_modules "mla_up_proj": the up-projections and RoPE run again before the
     * backward (their outputs Q, K, V are discarded after the core's forward: MultiLatentAttention.forward,
     * qkv_up_checkpoint.discard_output_and_register_recompute) */
    if (up)
        opg_mla_up(B, ID(OPGRAPH_LAYER_RECOMPUTE), x, "tp.allgather.mla.recompute");
#undef ID
}

/* The embedding's (first stage) and the head's (last stage) templates. */
static void embed_head_tpls(bld *B, const modelcfg *m, const lshape *x)
{
    uint64_t tp = x->tp, T = x->T, h = x->h, E = T * h, Eh = x->Eh, act_bytes = x->act_bytes;
    uint64_t V = modelcfg_vocab(m);
    int sp = x->sp, drop = x->drop, ar = x->ar, L;

    /* ---- embedding (first stage): vocabulary-parallel lookup, all-reduce (sp: reduce-scatter) ---- */
    L = OPGRAPH_EMBED_FWD;
    mem(B, L, "embed.fwd", E, m->position == MODELCFG_POS_LEARNED ? 6 : 4);
    tpc(B, L, ar, act_bytes, sp ? "tp.reducescatter.embed" : "tp.allreduce.embed", tp);
    if (drop)
        mem(B, L, "embed.dropout.fwd", Eh, 5);
    L = OPGRAPH_EMBED_BWD;
    if (drop)
        mem(B, L, "embed.dropout.bwd", Eh, 5);
    if (sp)
        tpc(B, L, OPGRAPH_ALLGATHER, act_bytes, "tp.allgather.embed.grad", tp);
    mem(B, L, "embed.bwd", E, 10);

    static const head_names head = { "lnf.fwd", "tp.allgather.head", "logits.fwd", "xent.fwd", "tp.allreduce.xent",
                                      "xent.bwd", "logits.bwd_data", "logits.bwd_weight", "tp.reducescatter.head.grad",
                                      "tp.allreduce.head.grad", "lnf.bwd" };
    opg_head(B, x, V, &head);
}

/* The head (last stage): final norm, column-parallel logits, vocabulary-parallel cross entropy (three
 * all-reduces of T fp32 values: max, sum of exponentials, target logit), forward into HEAD_FWD and backward
 * into HEAD_BWD. The output layer is Megatron-Core's own ColumnParallelLinear, not a Transformer Engine
 * module, so under FP8 training its GEMMs stay bf16 (megatron/core/models/gpt/gpt_model.py, output_layer). */
void opg_head(bld *B, const lshape *x, uint64_t V, const head_names *nm)
{
    uint64_t tp = x->tp, T = x->T, h = x->h, Eh = x->Eh;
    int dt = B->dtype;
    if (B->dtype == GPUCFG_FP8)
        B->dtype = GPUCFG_BF16;
    int L = OPGRAPH_HEAD_FWD;
    mem(B, L, nm->lnf, Eh, 4);
    if (x->sp)
        tpc(B, L, OPGRAPH_ALLGATHER, x->act_bytes, nm->ag, tp);
    gemm(B, L, nm->logits, 1, T, V / tp, h);
    mem(B, L, nm->xent, T * V / tp, 14);
    for (int i = 0; i < 3; i++)
        tpc(B, L, OPGRAPH_ALLREDUCE, 4 * T, nm->ar_xent, tp);
    L = OPGRAPH_HEAD_BWD;
    mem(B, L, nm->xent_b, T * V / tp, 6);
    gemm(B, L, nm->logits_bd, 1, T, h, V / tp);
    gemm(B, L, nm->logits_bw, 1, h, V / tp, T);
    tpc(B, L, x->ar, x->act_bytes, x->sp ? nm->rs_g : nm->ar_g, tp);
    mem(B, L, nm->lnf_b, Eh, 8);
    B->dtype = dt;
}

/* Parameters and gradients per GPU, and the FLOPs the MFU counts. */
static void params_and_flops(const modelcfg *m, const traincfg *t, const lshape *x, const moe_shape *e, opgraph *g)
{
    uint64_t tp = t->tp, h = x->h, cp = x->cp;
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    /* ---- parameters and gradients ---- */
    g->weight_elem_bytes = fp32 ? 4 : 2;
    g->grad_elem_bytes = (fp32 || t->main_grads == GPUCFG_FP32) ? 4 : 2;
    g->layer_params = modelcfg_layer_params_tp(m, tp);
    g->embed_params = modelcfg_embedding_params_tp(m, tp);
    g->head_params = modelcfg_head_params_tp(m, tp, t->pp) + modelcfg_mtp_params_tp(m, tp, t->pp);
    g->layer_grad_bytes = g->layer_params * g->grad_elem_bytes;
    g->embed_grad_bytes = g->embed_params * g->grad_elem_bytes;
    g->head_grad_bytes = g->head_params * g->grad_elem_bytes;

    /* ---- FLOPs ---- */
    g->layer_fwd_flops = tpl_gemm_flops(g, OPGRAPH_LAYER_FWD);
    g->head_fwd_flops = tpl_gemm_flops(g, OPGRAPH_HEAD_FWD);
    uint64_t moe_layers = modelcfg_moe_layers_in(m, 0, m->layers);
    if (moe_layers) {
        /* the expert GEMMs at the balanced load: per GPU, tl x top_k tokens through one expert MLP */
        uint64_t mats = x->swiglu ? 3 : 2;
        double expert = 2.0 * (double)e->routed * (double)h * (double)m->expert_ffn * (double)mats / (double)tp;
        double other = 0;
        for (uint32_t i = 0; i < g->tpl[OPGRAPH_MOE_FWD].n; i++) {
            const opgraph_entry *en = &g->tpl[OPGRAPH_MOE_FWD].e[i];
            const op_desc *o = &g->ops[en->op];
            if (en->kind == OPGRAPH_KERNEL && strncmp(o->name, "moe.expert.", 11))
                other += model_flops(o);
        }
        g->moe_fwd_flops = other + expert;
        uint64_t etp = e->etp;
        g->moe_layer_params = modelcfg_moe_layer_params_tp(m, tp, t->ep, etp, &g->moe_expert_params);
        g->moe_layer_grad_bytes = g->moe_layer_params * g->grad_elem_bytes;
    }
    /* all GPUs: tp x cp x (per-GPU flops), micro-batches x dp of them, forward + backward = 3 x forward */
    double mbs = (double)(t->global_batch / t->micro_batch);
    /* the MTP modules' layers are of the last layer's kind (their own GEMMs are in the head's template) */
    double mtp = (double)m->mtp_layers * (modelcfg_layer_is_moe(m, m->layers) ? g->moe_fwd_flops : g->layer_fwd_flops);
    g->model_flops_iteration =
        3.0 * mbs * (double)(tp * cp) * ((double)(m->layers - moe_layers) * g->layer_fwd_flops +
                                  (double)moe_layers * g->moe_fwd_flops + mtp + g->head_fwd_flops);
}

/* The helpers opgraph_mla.c builds with (opgraph_int.h) */
void opg_gemm(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k)
{
    gemm(B, tpl, name, batch, m, n, k);
}
void opg_mem(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem)
{
    mem(B, tpl, name, elems, bytes_per_elem);
}
void opg_fp8_quant(bld *B, int tpl, const char *name, uint64_t elems) { fp8_quant(B, tpl, name, elems); }
void opg_tpc(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp)
{
    tpc(B, tpl, coll, bytes, name, tp);
}
void opg_push(bld *B, int tpl, opgraph_entry e) { push(B, tpl, e); }
void opg_mem_n(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem, uint32_t launches)
{
    mem_n(B, tpl, name, elems, bytes_per_elem, launches);
}
void opg_gemm_ns(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                 uint32_t launches, uint32_t streams)
{
    gemm_ns(B, tpl, name, batch, m, n, k, launches, streams);
}
void opg_fp8_quant_n(bld *B, int tpl, const char *name, uint64_t elems, uint64_t tensors)
{
    fp8_quant_n(B, tpl, name, elems, tensors);
}
void opg_shared_mlp_fwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo)
{
    mlp_fwd(B, L, x, fin, fo, &shared_mlp);
}
void opg_shared_mlp_bwd(bld *B, int L, const lshape *x, uint64_t fin, uint64_t fo)
{
    mlp_bwd(B, L, x, fin, fo, &shared_mlp);
}
void opg_tpc_async(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp)
{
    tpc_async(B, tpl, coll, bytes, name, tp);
}
void opg_tp_wait(bld *B, int tpl, uint64_t tp) { tp_wait(B, tpl, tp); }
void opg_gemm_n(bld *B, int tpl, const char *name, uint64_t batch, uint64_t m, uint64_t n, uint64_t k,
                uint32_t launches)
{
    gemm_n(B, tpl, name, batch, m, n, k, launches);
}

int opgraph_build(const modelcfg *m, const traincfg *t, opgraph *g, cxl_err *err)
{
    memset(g, 0, sizeof *g);
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    bld B = { g, t->precision, fp32 ? 4.0 : 2.0, err, 0, traincfg_mxfp8(t), t->grouped_gemm_streams, 0, 0 };
    /* with context parallelism every kernel but the attention's keys sees this rank's s / cp tokens */
    uint64_t cp = t->cp ? t->cp : 1, tp = t->tp, s = m->seq_len / cp, b = t->micro_batch, h = m->hidden;
    uint64_t a = m->heads, kv = m->kv_heads;
    uint64_t dh = m->head_dim, f = m->ffn, T = s * b, E = T * h, Eh = t->sp ? E / tp : E;
    uint64_t at = a / tp, qkv_n = (a + 2 * kv) * dh / tp, fin = (m->activation == MODELCFG_SWIGLU ? 2 : 1) * f / tp;
    uint64_t fo = f / tp, bah = b * at, act_bytes = (uint64_t)B.act * E;
    int sp = t->sp, drop = m->dropout;
    int ar = sp ? OPGRAPH_REDUCE_SCATTER : OPGRAPH_ALLREDUCE;
    const lshape x = { tp, s, h, dh, kv, f, T, Eh, at, qkv_n, fin, fo, bah, act_bytes,
                       sp, drop, m->position == MODELCFG_POS_ROPE, m->activation == MODELCFG_SWIGLU, ar,
                       traincfg_flash(t), cp, m->seq_len, modelcfg_qk_head_dim(m), modelcfg_is_mla(m),
                       m->q_lora_rank, m->kv_lora_rank, m->qk_nope_head_dim, m->qk_rope_head_dim, sp ? T / tp : T, t->tp_grad_overlap,
                       0, t->tp_comm_overlap && sp && tp > 1, t->ub_sms, t->cuda_graph_attn };

    /* ---- the layers' templates, and their bf16 variants for the FP8 run's bf16 layers ---- */
    moe_shape e = { 0 };
    if (modelcfg_is_moe(m))
        opg_moe_shape(m, t, &x, B.act, &e);
    int up = x.mla && t->recompute_mla_up_proj && t->recompute != TRAINCFG_RECOMPUTE_FULL;
    /* the windowed layers' variants (model.window_size; Megatron-Core is_layer_window_attention picks the
     * layers: eng_layer_windowed) differ in their flash kernels only */
    lshape xw = x;
    xw.window = m->window_size;
    int hp = B.dtype == GPUCFG_FP8 && (t->bf16_layers_start || t->bf16_layers_end);
    for (int var = 0; var <= (OPGRAPH_VAR_BF16 | OPGRAPH_VAR_WINDOW); var++) {
        if (((var & OPGRAPH_VAR_BF16) && !hp) || ((var & OPGRAPH_VAR_WINDOW) && !m->window_size))
            continue;
        bld Bv = B;
        if (var & OPGRAPH_VAR_BF16)
            Bv.dtype = GPUCFG_BF16;
        layer_tpls(&Bv, var & OPGRAPH_VAR_WINDOW ? &xw : &x, modelcfg_is_moe(m) ? &e : NULL, t->recompute, up, var);
        B.failed = Bv.failed;
        if (B.failed)
            break;
    }

    embed_head_tpls(&B, m, &x);
    opg_mtp_tpls(&B, m, &x);
    if (B.failed)
        return B.failed;

    /* ---- pipeline messages: the layer output, split over the tensor-parallel ranks (sp: it already is;
     * without sp Megatron's scatter-gather sends 1/t and all-gathers on the receiver) ---- */
    g->pp_bytes = act_bytes / tp;
    g->pp_gather_bytes = (!sp && tp > 1) ? act_bytes : 0;

    params_and_flops(m, t, &x, &e, g);
    return 0;
}
