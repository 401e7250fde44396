/* policy_opt_hbm.c - no optimizer offload: the optimizer states stay in HBM and the GPU runs its optimizer
 * kernel (opgraph_optimizer_op) on them. Moves nothing; the compute stream runs the kernel. The policy of
 * every run without CXL memory, and of cxl.offload_optimizer: none. */
#include "train/policy.h"
#include "train/train_eng.h"

enum { HBM_KERNEL, HBM_DONE, HBM_REST };

static int wanted(const cxlcfg *cx) { return !cx || cx->offload_optimizer == CXLCFG_OPT_NONE; }

/* With overlap_param_gather_with_optimizer_step (E->pg_opt) Megatron-Core chains an optimizer for the first model
 * chunk's dense parameters, one for the other chunks' and the routed experts' (megatron/core/optimizer/
 * __init__.py get_megatron_optimizer; Megatron-LM 0d8e071): the first steps, chunk 0's gathers are issued
 * (optimizer.py ChainedOptimizer.step_with_ready_grads), the rest steps beside them. */
static int step(eng *E, rep *R)
{
    if (R->opt_step == HBM_DONE)
        return STEP_NEXT;
    if (E->pg_opt && R->opt_step == HBM_KERNEL) {
        R->opt_step = HBM_REST;
        eng_run_kernel(E, R, R->opt_first_op);
        return STEP_BLOCKED;
    }
    if (R->opt_step == HBM_REST) {
        eng_pg_with_step(E, R);
        R->opt_step = HBM_DONE;
        eng_run_kernel(E, R, R->opt_rest_op);
        return STEP_BLOCKED;
    }
    R->opt_step = HBM_DONE;
    eng_run_kernel(E, R, R->opt_op);
    return STEP_BLOCKED;
}

const train_policy policy_opt_hbm = { .name = "optimizer-hbm", .wanted = wanted, .optimizer_step = step };
