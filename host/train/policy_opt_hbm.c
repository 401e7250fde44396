/* policy_opt_hbm.c - no optimizer offload: the optimizer states stay in HBM and the GPU runs its optimizer
 * kernel (opgraph_optimizer_op) on them. Moves nothing; the compute stream runs the kernel. The policy of
 * every run without CXL memory, and of cxl.offload_optimizer: none. */
#include "train/policy.h"
#include "train/train_eng.h"

enum { HBM_KERNEL, HBM_DONE };

static int wanted(const cxlcfg *cx) { return !cx || cx->offload_optimizer == CXLCFG_OPT_NONE; }

static int step(eng *E, rep *R)
{
    if (R->opt_step == HBM_DONE)
        return STEP_NEXT;
    R->opt_step = HBM_DONE;
    eng_run_kernel(E, R, R->opt_op);
    return STEP_BLOCKED;
}

const train_policy policy_opt_hbm = { .name = "optimizer-hbm", .wanted = wanted, .optimizer_step = step };
