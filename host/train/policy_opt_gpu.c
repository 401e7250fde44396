/* policy_opt_gpu.c - the optimizer states and fp32 master weights live in CXL and stream through the GPU
 * while its optimizer kernel runs: the GPUs read every state and write it back. The compute stream runs
 * the kernel, then waits for the stream's end. With cxl.offload_scope experts only the routed experts'
 * states stream; the kernel still updates the whole shard (the rest's states are in HBM). */
#include "train/policy.h"
#include "train/train_eng.h"

/* Mixed-precision Adam's optimizer state: an fp32 master weight, momentum and variance, K = 12 B per
 * parameter (ZeRO, Rajbhandari et al., SC20, Sec. 3.1). Each is read and written back once: 2 x 12 B at
 * a 1:1 mix. */
#define ADAM_STATE_BYTES 12u
#define GPU_STREAM_MIX ((cxl_mix){ 1, 1 })

enum { GPU_STREAM, GPU_WAIT };

static int wanted(const cxlcfg *cx) { return cx && cx->offload_optimizer == CXLCFG_OPT_GPU; }

static int step(eng *E, rep *R)
{
    if (R->opt_step == GPU_STREAM) {
        R->opt_step = GPU_WAIT;
        eng_cxl_start(E, R, eng_cxl_opt_params(E, R) * 2 * ADAM_STATE_BYTES, GPU_STREAM_MIX, CXL_BY_GPU, 0,
                      "cxl.optimizer.stream");
        eng_run_kernel(E, R, R->opt_op);
        return STEP_BLOCKED;
    }
    return eng_cxl_wait(E, R, 0) ? STEP_BLOCKED : STEP_NEXT;
}

const train_policy policy_opt_gpu = { .name = "optimizer-gpu", .wanted = wanted, .optimizer_step = step };
