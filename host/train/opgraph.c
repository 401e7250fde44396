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
    opgraph_entry e = { OPGRAPH_KERNEL, 0, (uint16_t)opg_add_op(B, &d), 0, NULL, 0, 0 };
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

/* The routed experts' GEMM on one GPU: `le` local experts, each an (m x k).(k x n) product. Megatron-Core's
 * TEGroupedMLP (moe_grouped_gemm, moe_use_legacy_grouped_gemm False: Megatron-LM 0d8e071,
 * transformer_engine_spec_provider.py grouped_mlp_modules) runs it through Transformer Engine's GroupedLinear
 * and general_grouped_gemm, which in TE v2.9 (commit 70f5366) reach nvte_multi_tensor_gemm
 * (transformer_engine/common/gemm/cublaslt_gemm.cu): unless NVTE_USE_CUTLASS_GROUPED_GEMM is set on a Hopper GPU
 * for bf16/fp16 operands without bias (no Megatron-Bridge recipe sets it), multi_stream_cublas_gemm launches
 * one cuBLAS GEMM per expert, expert i on compute stream i % num_streams, the streams forked from and joined
 * back to the current one by events; num_streams is 4 (common/util/multi_stream.cpp,
 * get_num_compute_streams). So: le launches over min(streams, le) streams (training.grouped_gemm_streams,
 * default 4), each paying the launch gap, the gaps of different streams overlapping; the tiles quantize per
 * expert (ceil(m / tile_m) for a small per-expert m) and the waves over all of them (compute.h). */
static void grouped_gemm(bld *B, int tpl, const char *name, uint64_t le, uint64_t m, uint64_t n, uint64_t k)
{
    gemm_ns(B, tpl, name, le, m, n, k, (uint32_t)(le > UINT32_MAX ? UINT32_MAX : le), B->gg_streams);
}

/* A memory-bound kernel over `elems` elements moving bytes_per_elem each (at 16-bit activations; scaled
 * for fp32 training where the factor applies to activation traffic). */
static void mem_n(bld *B, int tpl, const char *name, uint64_t elems, double bytes_per_elem, uint32_t launches)
{
    op_desc d = { name, OP_MEM, B->dtype, 1, elems, 1, 1, 0, 0, launches > 1 ? launches : 0, 0, 0, 0 };
    d.bytes = (double)elems * bytes_per_elem * (B->act / 2.0);
    d.flops = (double)elems * 4.0;
    opgraph_entry e = { OPGRAPH_KERNEL, 0, (uint16_t)opg_add_op(B, &d), 0, NULL, 0, 0 };
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
    opgraph_entry e = { OPGRAPH_TP_COLL, (uint8_t)coll, 0, bytes, name, 0, 0 };
    push(B, tpl, e);
}

/* A tensor-parallel collective started beside the compute stream (async), and the stream's wait for it. */
static void tpc_async(bld *B, int tpl, int coll, uint64_t bytes, const char *name, uint64_t tp)
{
    if (tp <= 1 || bytes == 0)
        return;
    opgraph_entry e = { OPGRAPH_TP_ASYNC, (uint8_t)coll, 0, bytes, name, 0, 0 };
    push(B, tpl, e);
}

static void tp_wait(bld *B, int tpl, uint64_t tp)
{
    if (tp <= 1)
        return;
    opgraph_entry e = { OPGRAPH_TP_WAIT, 0, 0, 0, "tp.wait", 0, 0 };
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

/* An all-to-all over the EP group (ep > 1) or a collective over the ETP group (etp > 1). */
static void moec(bld *B, int tpl, int kind, int coll, uint64_t bytes, const char *name, uint64_t ranks)
{
    if (ranks <= 1 || bytes == 0)
        return;
    opgraph_entry e = { (uint8_t)kind, (uint8_t)coll, 0, bytes, name, 0, 0 };
    push(B, tpl, e);
}

/* A host-timeline mark (OPGRAPH_DTOH with its copies, OPGRAPH_HOST_SYNC) */
static void host_mark(bld *B, int tpl, int kind, uint64_t copies)
{
    opgraph_entry e = { (uint8_t)kind, 0, 0, copies, kind == OPGRAPH_DTOH ? "moe.dispatch.dtoh" : "moe.dispatch.sync",
                        0, 0 };
    push(B, tpl, e);
}

/* The framework's Python on the host timeline (OPGRAPH_HOST_PY), `ps` before the host_time_scale. */
static void host_py(bld *B, int tpl, uint64_t ps, const char *name)
{
    if (!ps)
        return;
    opgraph_entry e = { OPGRAPH_HOST_PY, 0, 0, ps, name, 0, 0 };
    push(B, tpl, e);
}

/* The expert half of an MoE layer (after the attention half). Per GPU: tl = T / tp tokens (sp; tp 1: T),
 * each sent to top_k experts; the busiest GPU receives load x tl x top_k of them (x etp after the ETP
 * all-gather) over its experts / ep local experts. */
typedef struct moe_shape {
    uint64_t tl, ep, etp, le, me, fin_e, fo_e, routed, a2a_bytes, etp_bytes, nexp, sh_fin, sh_fo, h;
    uint64_t probs_bytes; /* the all-to-all dispatcher's permuted probabilities, 4 B per routed copy */
    int bias;             /* the experts' linear layers have biases (model.bias: GPT-OSS) */
    int aux;              /* enum modelcfg_aux: the router's load-balancing loss */
    int force_balance;    /* training.moe_force_load_balancing: RandomSTE's random logits */
    uint64_t py_router_ps, py_dispatch_ps, py_experts_ps; /* the framework's Python (OPGRAPH_HOST_PY), 0: none */
    /* moe_dispatcher hybridep (Megatron-Core token_dispatcher.py _HybridEPManager, fused_a2a.py
     * hybrid_ep_dispatch / hybrid_ep_combine: DeepEP's hybrid-ep HybridEPBuffer dispatch_with_permute and
     * combine_with_unpermute, csrc/hybrid_ep/hybrid_ep.cu and executor/executor.cu, branch hybrid-ep of
     * 2025-11-18): the dispatch kernel reads the tokens in token order through its sparse-to-dense map and
     * the combine kernel sums the returned copies with the router's weights back into token order, so
     * permutation 1 and its inverse (moe.permute, moe.unpermute) are no kernels of their own; the received
     * tokens are still permuted by expert out of the dispatch buffer (dispatch_postprocess's permute kernel)
     * and back into it before the combine (combine_preprocess), as sort_chunks prices, one local expert or more */
    int fused_perm;
} moe_shape;

/* The router's GEMM: Megatron-Core's TopKRouter.gating computes the logits with router_gating_linear in
 * the input's dtype or fp32 (moe_router_dtype), a plain matrix product outside Transformer Engine's FP8
 * autocast (megatron/core/transformer/moe/router.py, moe_utils.py): 16-bit under FP8 training, as the
 * flash attention kernel. */
static void router_gemm(bld *B, int L, const char *name, uint64_t m, uint64_t n, uint64_t k)
{
    int dt = B->dtype;
    if (dt == GPUCFG_FP8)
        B->dtype = GPUCFG_BF16;
    gemm(B, L, name, 1, m, n, k);
    B->dtype = dt;
}

/* The all-to-all dispatcher's second permutation: the received tokens arrive grouped by source rank, then
 * by local expert; with more than one local expert they are re-sorted by expert before the grouped GEMM,
 * and back by rank before the combine (Megatron-Core token_dispatcher.py, MoEAlltoAllTokenDispatcher
 * "Permutation 2", moe_utils.py sort_chunks_by_idxs; Transformer Engine's moe_sort_chunks_by_index with
 * moe_permute_fusion). A copy of every received token's hidden vector: read 2 + write 2 B per element of
 * le x me x h (the routing probabilities, 4 B a token, left out); the backward pass runs the inverse. */
static void sort_chunks(bld *B, int L, const moe_shape *e, const char *name, int fwd)
{
    /* Transformer Engine's fused chunk sort (v2.9, transformer_engine/pytorch/permutation.py _moe_chunk_sort;
     * pytorch/triton/permutation.py): the forward builds its map (make_chunk_sort_map) and then moves the
     * tokens and their probabilities (sort_chunks_by_map), two kernels; the backward reuses the map, one.
     * HybridEP's own permute kernel (dispatch_postprocess, combine_preprocess) is one either way. */
    if (e->le > 1 || e->fused_perm)
        mem_n(B, L, name, e->le * e->me * e->h, 4, fwd && !e->fused_perm ? 2 : 1);
}

/* Permutation 1 and its inverse (Transformer Engine's fused moe_permute / moe_unpermute with the router's
 * weights), unless the dispatcher's own kernels do it (moe_shape.fused_perm) */
static void permute(bld *B, int L, const moe_shape *e, const char *name, double bytes_per_elem)
{
    if (!e->fused_perm)
        mem(B, L, name, e->routed * e->h, bytes_per_elem);
}

/* The experts' fc2 bias with biased linear layers (GPT-OSS: add_bias_linear). Megatron-Core's TEGroupedMLP
 * builds fc2 with skip_bias_add=True and adds the bias weighted by the router's probabilities itself,
 * expert by expert (Megatron-LM 0d8e071 megatron/core/transformer/moe/experts.py, TEGroupedMLP._apply_bias:
 * torch.cat([t + b * p for t, b, p in zip(torch.split(output, tokens_per_expert), biases,
 * torch.split(probs, tokens_per_expert))])); fc1's bias is in its GEMM (skip_bias_add=False). Forward: per
 * local expert b * p (writes the expert's tokens x h, 2 B) and t + b * p (reads 2 + 2, writes 2), then the
 * cat (reads 2, writes 2): 2 le + 1 kernels, 12 B per element of le x me x h. Backward (PyTorch autograd):
 * per expert MulBackward's two products with their reductions to b's and p's shapes (grad * p summed over
 * the tokens, grad * b summed over h: two products, 2 + 2 B each, two reductions reading them, 2 B each),
 * then split_with_sizes' backward concatenating the output's gradient slices (2 + 2 B) and the
 * probabilities' (tokens only, left out): 4 le + 1 kernels, 16 B per element. */
static void expert_fc2_bias(bld *B, int L, const moe_shape *e, int fwd)
{
    if (!e->bias)
        return;
    uint64_t n = fwd ? 2 * e->le + 1 : 4 * e->le + 1;
    mem_n(B, L, fwd ? "moe.expert.fc2.bias.fwd" : "moe.expert.fc2.bias.bwd", e->le * e->me * e->h, fwd ? 12 : 16,
          (uint32_t)(n > UINT32_MAX ? UINT32_MAX : n));
}

/* The router's load-balancing loss with moe_router_fusion (Megatron-Core 0d8e071 router.py TopKRouter.routing:
 * compute_routing_scores_for_aux_loss, then _apply_aux_loss / _apply_seq_aux_loss / _apply_global_aux_loss;
 * moe_utils.py switch_load_balancing_loss_func, save_to_aux_losses_tracker, MoEAuxLossAutoScaler; Transformer
 * Engine v2.9 pytorch/router.py FusedComputeScoresForMoEAuxLoss, FusedAuxLoss). Forward: the fused scores
 * kernel (reads the logits, writes the scores, a routing map and its saved intermediate), routing_map.sum
 * over the tokens, the fused loss kernel (reads the scores), the tracker's loss / coeff and its in-place add:
 * 5 kernels (seq_aux_loss: the division by the batch, 6; global_aux_loss: the running counts' add, the step
 * counter's and their quotient, 8), about 10 B per logit at 16-bit logits. Backward: the auto-scaler's
 * ones_like x scale (two), the loss's and the scores' backward kernels, and the sum of this logits gradient
 * with the top-k's: 5 kernels, about 14 B per logit. The tokens-per-expert all-reduce over the TP x CP group
 * (dp too for global_aux_loss) is not modelled. */
static void moe_aux_loss(bld *B, int L, const moe_shape *e, int fwd)
{
    if (e->aux == MODELCFG_AUX_NONE)
        return;
    uint32_t n = !fwd ? 5 : e->aux == MODELCFG_AUX_SEQ ? 6 : e->aux == MODELCFG_AUX_GLOBAL ? 8 : 5;
    mem_n(B, L, fwd ? "moe.router.aux_loss.fwd" : "moe.router.aux_loss.bwd", e->tl * e->nexp, fwd ? 10 : 14, n);
}

static void moe_fwd(bld *B, int L, const lshape *x, const moe_shape *e)
{
    mem(B, L, "ln2.fwd", x->Eh, 4);
    /* Megatron-Core's Python of the router and the dispatcher's preprocessing (training.host_moe_router;
     * MoELayer.router_and_preprocess), unless a CUDA graph replays them */
    host_py(B, L, e->py_router_ps, "moe.router.python");
    router_gemm(B, L, "moe.router.fwd", e->tl, e->nexp, x->h);
    /* forced load balancing replaces the logits by random ones (Megatron-Core 0d8e071 moe_utils.py RandomSTE:
     * logits.clone().normal_(generator), two kernels: the copy reads and writes the logits, normal_ writes
     * them again, 3 x 2 B per logit; its backward passes the gradient through) */
    if (e->force_balance)
        mem_n(B, L, "moe.router.random.fwd", e->tl * e->nexp, 6, 2);
    /* read the logits, write fp32 probabilities, top-k selection reads them again (10 B per logit) */
    mem(B, L, "moe.router.topk.fwd", e->tl * e->nexp, 10);
    moe_aux_loss(B, L, e, 1);
    /* the dropless all-to-all dispatcher's split sizes go to the host: copies queued before permutation 1,
     * the host waiting for them before the all-to-all (or, with no EP or TP group, before the experts, whose
     * grouped GEMM takes the tokens per expert as a host list; the dispatcher's TP group is the expert-
     * tensor-parallel one, expt_tp). Megatron-Core token_dispatcher.py,
     * MoEAlltoAllTokenDispatcher.preprocess and _maybe_dtoh_and_synchronize: tokens_per_expert,
     * input_splits, output_splits and output_splits_tp moved with maybe_move_tensor_to_cpu on the side
     * stream (only tokens_per_expert without an EP or TP group), then d2h_event.synchronize() */
    int groups = e->ep > 1 || e->etp > 1;
    /* the all-to-all dispatcher's preprocess (Megatron-Core 0d8e071 token_dispatcher.py,
     * MoEAlltoAllTokenDispatcher.preprocess, dropless): the tokens per expert (routing_map.sum, reading the
     * tl x experts map, 1 B an entry) and, with an EP or expert-TP group, five more small kernels on vectors
     * of experts' counts (the input splits' sum, the .contiguous() copy of the local experts' counts, the
     * output splits', output_splits_tp's and the local experts' sums); their all-gather of the counts over the
     * EP x TP group (gather_from_sequence_parallel_region, a few hundred bytes) is not modelled. HybridEP
     * computes its own metadata (_HybridEPManager.setup_metadata): not this. */
    if (!e->fused_perm)
        mem_n(B, L, "moe.preprocess.fwd", e->tl * e->nexp, 1, groups ? 6 : 1);
    host_mark(B, L, OPGRAPH_DTOH, groups ? 4 : 1);
    /* the permutation's index map, built once and kept for the unpermutation and both backward passes:
     * Transformer Engine's fused moe_permute (transformer_engine/pytorch/permutation.py, the mask-map path;
     * common/permutation/permutation.cu) reads the tl x experts routing map (1 B per entry, bool) and writes
     * an int32 row-id map of the same shape: 1 + 4 = 5 B per entry, in three kernels (TE v2.9
     * pytorch/triton/permutation.py make_row_id_map: _row_id_map_pass_1/2/3_kernel) */
    mem_n(B, L, "moe.permute.rowmap.fwd", e->tl * e->nexp, 5, e->fused_perm ? 1 : 3);
    permute(B, L, e, "moe.permute.fwd", 4);
    if (groups) {
        host_mark(B, L, OPGRAPH_HOST_SYNC, 0);
        /* the all-to-all dispatcher's Python after its synchronisation (training.host_moe_dispatch;
         * MoEAlltoAllTokenDispatcher.token_dispatch and dispatch_postprocess) */
        host_py(B, L, e->py_dispatch_ps, "moe.dispatch.python");
    }
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.dispatch", e->ep);
    /* the all-to-all dispatcher sends the permuted probabilities in an all-to-all of their own after the
     * tokens' (MoEAlltoAllTokenDispatcher.token_dispatch: all_to_all of permutated_local_input_tokens, then of
     * permuted_probs), and its autograd function returns their gradients the same way in the backward */
    if (!e->fused_perm)
        moec(B, L, OPGRAPH_EP_A2A, 0, e->probs_bytes, "ep.alltoall.dispatch.probs", e->ep);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_ALLGATHER, e->etp_bytes, "etp.allgather.dispatch", e->etp);
    sort_chunks(B, L, e, "moe.sort_chunks.fwd", 1);
    if (!groups)
        host_mark(B, L, OPGRAPH_HOST_SYNC, 0);
    /* the grouped MLP's Python per local expert (training.host_moe_expert; MoELayer.routed_experts_compute) */
    host_py(B, L, e->py_experts_ps, "moe.experts.python");
    fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc1.fwd", e->le * e->me * x->h, e->le);
    grouped_gemm(B, L, "moe.expert.fc1.fwd", e->le, e->me, e->fin_e, x->h);
    mem(B, L, x->swiglu ? "moe.expert.swiglu.fwd" : "moe.expert.gelu.fwd", e->le * e->me * e->fo_e, x->swiglu ? 6 : 4);
    fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc2.fwd", e->le * e->me * e->fo_e, e->le);
    grouped_gemm(B, L, "moe.expert.fc2.fwd", e->le, e->me, x->h, e->fo_e);
    expert_fc2_bias(B, L, e, 1);
    sort_chunks(B, L, e, "moe.unsort_chunks.fwd", 1);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_REDUCE_SCATTER, e->etp_bytes, "etp.reducescatter.combine", e->etp);
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.combine", e->ep);
    /* gather the expert outputs back into token order and sum them with the router's weights */
    permute(B, L, e, "moe.unpermute.fwd", 6);
    if (e->sh_fo)
        mlp_fwd(B, L, x, e->sh_fin, e->sh_fo, &shared_mlp);
    mem(B, L, "resid2.fwd", x->Eh, x->drop ? 7 : 6);
}

static void moe_bwd(bld *B, int L, const lshape *x, const moe_shape *e)
{
    mem(B, L, "resid2.bwd", x->Eh, x->drop ? 5 : 4);
    if (e->sh_fo)
        mlp_bwd(B, L, x, e->sh_fin, e->sh_fo, &shared_mlp);
    permute(B, L, e, "moe.unpermute.bwd", 6);
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.combine.grad", e->ep);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_ALLGATHER, e->etp_bytes, "etp.allgather.combine.grad", e->etp);
    sort_chunks(B, L, e, "moe.unsort_chunks.bwd", 0);
    expert_fc2_bias(B, L, e, 0);
    fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc2.bwd", e->le * e->me * x->h, e->le);
    grouped_gemm(B, L, "moe.expert.fc2.bwd_data", e->le, e->me, e->fo_e, x->h);
    grouped_gemm(B, L, "moe.expert.fc2.bwd_weight", e->le, e->fo_e, x->h, e->me);
    mem(B, L, x->swiglu ? "moe.expert.swiglu.bwd" : "moe.expert.gelu.bwd", e->le * e->me * e->fo_e,
        x->swiglu ? 10 : 6);
    fp8_quant_n(B, L, "mxfp8.quant.moe.expert.fc1.bwd", e->le * e->me * e->fin_e, e->le);
    grouped_gemm(B, L, "moe.expert.fc1.bwd_data", e->le, e->me, x->h, e->fin_e);
    grouped_gemm(B, L, "moe.expert.fc1.bwd_weight", e->le, x->h, e->fin_e, e->me);
    sort_chunks(B, L, e, "moe.sort_chunks.bwd", 0);
    moec(B, L, OPGRAPH_ETP_COLL, OPGRAPH_REDUCE_SCATTER, e->etp_bytes, "etp.reducescatter.dispatch.grad", e->etp);
    moec(B, L, OPGRAPH_EP_A2A, 0, e->a2a_bytes, "ep.alltoall.dispatch.grad", e->ep);
    if (!e->fused_perm)
        moec(B, L, OPGRAPH_EP_A2A, 0, e->probs_bytes, "ep.alltoall.dispatch.probs.grad", e->ep);
    permute(B, L, e, "moe.permute.bwd", 4);
    /* the fused router's backward (moe_router_fusion: Transformer Engine's FusedTopkScoreFunction.backward,
     * tex.fused_topk_with_score_function_bwd, v2.9 pytorch/router.py and common/fused_router/
     * fused_topk_with_score_function.cu): reads the probabilities' gradient, the saved scores and the routing map
     * and writes the logits' gradient, about the forward's 10 B per logit */
    mem(B, L, "moe.router.topk.bwd", e->tl * e->nexp, 10);
    moe_aux_loss(B, L, e, 0);
    router_gemm(B, L, "moe.router.bwd_data", e->tl, x->h, e->nexp);
    router_gemm(B, L, "moe.router.bwd_weight", x->h, e->nexp, e->tl);
    mem(B, L, "ln2.bwd", x->Eh, 8);
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
        moe_fwd(B, ID(OPGRAPH_MOE_FWD), x, e);
        moe_bwd(B, ID(OPGRAPH_MOE_BWD), x, e);
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

/* The EP ranks one token goes to when its top_k experts are drawn uniformly without replacement from
 * `experts` spread evenly over `ep` ranks (Megatron-Core's moe_router_force_load_balancing: random router
 * logits, the balanced routing the validation rows ran): ep x (1 - P(no expert of a given rank)),
 * P = C(experts - experts / ep, top_k) / C(experts, top_k). O(top_k). */
static double ranks_per_token(uint64_t experts, uint64_t ep, uint64_t top_k)
{
    if (ep <= 1 || top_k == 0)
        return 1;
    double miss = 1, others = (double)(experts - experts / ep);
    for (uint64_t i = 0; i < top_k; i++)
        miss *= others - (double)i > 0 ? (others - (double)i) / (double)(experts - i) : 0;
    double d = (double)ep * (1 - miss);
    return d < (double)top_k ? d : (double)top_k;
}

/* The expert half's shapes (moe_shape) of an MoE model's layers on one GPU. */
static void moe_shape_of(const modelcfg *m, const traincfg *t, const lshape *x, double act, moe_shape *e)
{
    uint64_t tp = t->tp, T = x->T, h = x->h;
    uint64_t mats_in = x->swiglu ? 2 : 1;
    memset(e, 0, sizeof *e);
    e->tl = t->sp ? T / tp : T;
    e->ep = t->ep;
    e->etp = t->etp ? t->etp : tp;
    e->nexp = m->experts;
    e->h = h;
    e->le = m->experts / e->ep;
    e->fo_e = m->expert_ffn / e->etp;
    e->fin_e = mats_in * e->fo_e;
    double load = modelcfg_moe_load(m);
    double per_expert = (double)e->tl * (double)m->top_k * (double)(e->ep * e->etp) / (double)m->experts;
    e->me = (uint64_t)ceil(per_expert * load);
    e->routed = e->tl * m->top_k;
    /* each routed copy once per destination expert (the all-to-all dispatcher permutes before sending);
     * HybridEP sends a token once per destination rank and expands it there (its sparse-to-dense map,
     * tokens x ranks; DeepEP hybrid-ep tests/test_hybrid_ep.py counts its bandwidth on those rows), and its
     * combine returns one sum per token and rank: the ranks a token reaches instead of top_k */
    double copies = t->moe_dispatcher == TRAINCFG_MOE_HYBRIDEP ? ranks_per_token(m->experts, e->ep, m->top_k)
                                                                : (double)m->top_k;
    e->a2a_bytes = (uint64_t)ceil((double)e->tl * copies * (double)h * act * load);
    e->etp_bytes = e->etp > 1 ? e->a2a_bytes * e->etp : 0;
    /* fp32 probabilities (moe_router_dtype fp32; the input's 16 bits otherwise: 1/h of the tokens' bytes
     * either way) */
    e->probs_bytes = (uint64_t)ceil((double)e->tl * (double)m->top_k * 4.0 * load);
    e->sh_fo = m->shared_experts * m->expert_ffn / tp;
    e->sh_fin = mats_in * e->sh_fo;
    e->py_router_ps = t->cuda_graph_moe_router ? 0 : t->host_moe_router_ps;
    e->py_experts_ps = e->le * t->host_moe_expert_ps;
    e->py_dispatch_ps = t->moe_dispatcher == TRAINCFG_MOE_ALLTOALL ? t->host_moe_dispatch_ps : 0;
    e->fused_perm = t->moe_dispatcher == TRAINCFG_MOE_HYBRIDEP;
    e->bias = m->bias;
    e->aux = m->moe_aux_loss;
    e->force_balance = t->moe_force_load_balancing;
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
    bld B = { g, t->precision, fp32 ? 4.0 : 2.0, err, 0, traincfg_mxfp8(t), t->grouped_gemm_streams };
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
        moe_shape_of(m, t, &x, B.act, &e);
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
