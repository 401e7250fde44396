/* opgraph_ops.c - the single ops the engine adds outside the layer templates (opgraph.h): Megatron-FSDP's
 * gradient copy and FP8 transpose, the main-gradient accumulation without fusion, the optimizer step. */
#include "train/opgraph_int.h"

int opgraph_fsdp_grad_copy_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err)
{
    bld B = { g, t->precision, 2.0, err, 0, traincfg_mxfp8(t), 0, 0, 0 };
    /* param.main_grad.copy_(param.grad): the weight gradient in the compute dtype read (bf16 under FP8 too:
     * TE's wgrad output), the main gradient written */
    op_desc d = { "fsdp.grad_copy", OP_MEM, GPUCFG_FP32, 1, params, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = (double)params * (double)(g->weight_elem_bytes + g->grad_elem_bytes);
    int idx = opg_add_op(&B, &d);
    return B.failed ? B.failed : idx;
}

int opgraph_grad_accum_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err)
{
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    bld B = { g, t->precision, fp32 ? 4.0 : 2.0, err, 0, 0, 0, 0, 0 };
    /* Without --gradient-accumulation-fusion the weight-gradient GEMM writes a fresh tensor that is then added
     * to the main gradient: with fp32 main gradients Megatron-LM's DDP hook main_grad.add_(grad) (megatron/
     * model/distributed.py, _make_param_hook) reads both and writes the fp32 sum; with gradients in the
     * compute dtype autograd's AccumulateGrad adds in place (read, read, write; the first micro-batch's
     * gradient is taken over without a kernel: train_step.c) */
    double wb = B.act, gb = (double)g->grad_elem_bytes;
    op_desc d = { "grad.accumulate", OP_MEM, GPUCFG_FP32, 1, params, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = (double)params * (wb + 2.0 * gb);
    d.flops = (double)params;
    int idx = opg_add_op(&B, &d);
    return B.failed ? B.failed : idx;
}

int opgraph_fsdp_fp8_transpose_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err)
{
    bld B = { g, t->precision, 2.0, err, 0, traincfg_mxfp8(t), 0, 0, 0 };
    /* fp8_create_transpose_cache: the rowwise FP8 data read, its transpose written, 1 B each */
    op_desc d = { "fsdp.fp8_transpose", OP_MEM, GPUCFG_FP8, 1, params, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = 2.0 * (double)params;
    int idx = opg_add_op(&B, &d);
    return B.failed ? B.failed : idx;
}

int opgraph_optimizer_op(opgraph *g, const traincfg *t, uint64_t params, cxl_err *err)
{
    bld B = { g, t->precision, 2.0, err, 0, 0, 0, 0, 0 };
    double gb = (double)g->grad_elem_bytes;
    int fp32 = g->weight_elem_bytes == 4;
    /* Adam on fp32 master weights (mixed precision): grad + 3 x 4 read, 3 x 4 written, 16-bit weight
     * written; grad-norm reads the gradients again; the gradient buffer is zeroed (written). In fp32
     * training the master copy is the weight itself. */
    double per_param = gb + 12 + 12 + (fp32 ? 0 : 2) + gb + gb;
    /* fp16 with loss scaling: the gradients are unscaled and checked for inf/NaN in one more pass, read and
     * written (Megatron-LM optimizer.py _unscale_main_grads_and_check_for_nan,
     * torch._amp_foreach_non_finite_check_and_unscale_); bf16 needs no loss scale */
    if (t->precision == GPUCFG_FP16)
        per_param += gb + gb;
    /* mixed precision with 16-bit gradients: Megatron-LM's Float16OptimizerWithFloat16Params first copies them
     * to fp32 (_copy_model_grads_to_main_grads: main_param.grad = model_param.grad.float(), read 2 write 4), so
     * the unscale, the norm and Adam read and write 4 B gradients, not 2 (the zeroing stays on the 16-bit
     * ones) */
    if (!fp32 && gb == 2) {
        double passes = 2.0 + (t->precision == GPUCFG_FP16 ? 2.0 : 0.0); /* Adam, norm (+ unscale r/w) */
        per_param += 2 + 4 + passes * (4 - gb);
    }
    op_desc d = { "optimizer.adam", OP_MEM, GPUCFG_FP32, 1, params, 1, 1, 0, 0, 0, 0, 0, 0 };
    d.bytes = (double)params * per_param;
    d.flops = (double)params * 12.0;
    int idx = opg_add_op(&B, &d);
    return B.failed ? B.failed : idx;
}
