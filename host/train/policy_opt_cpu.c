/* policy_opt_cpu.c - ZeRO-Offload (Ren et al., USENIX ATC 2021): the optimizer states and fp32 master
 * weights live in CXL and the nodes' CPUs run Adam on them. At the optimizer step, one after the other,
 * the compute stream waiting for each:
 *   1. the GPUs write their shard's gradients to CXL;
 *   2. the CPUs run Adam over CXL memory (CPU_ADAM_* bytes per parameter, at the mix below);
 *   3. ... and take at least params / cxl.cpu_adam_rate, the CPU's own speed (a timer);
 *   4. the GPUs read the updated 16-bit weights back.
 * With cxl.offload_scope experts only the routed experts' shard goes through these steps; the GPU runs
 * its optimizer kernel on the rest of its shard (states in HBM) while its expert gradients go out (step 1
 * waits for both), as ZeRO-Offload overlaps GPU work with the CPU's step. */
#include <math.h>

#include "train/policy.h"
#include "train/train_eng.h"

/* Bytes per parameter the CPU's Adam moves. Mixed-precision Adam keeps an fp32 master weight, momentum
 * and variance, K = 12 B per parameter (ZeRO, Rajbhandari et al., SC20, Sec. 3.1). The CPU reads the
 * gradient, the master weight and both moments, 4 B each (4 x 4 B: the gradient counted as fp32 whatever
 * training.main_grads says), and writes the master weight and moments (3 x 4 B) and the 16-bit weight the
 * GPUs read back (2 B). */
#define CPU_ADAM_READ_BYTES 16u
#define CPU_ADAM_WRITE_BYTES 14u
/* ... so its read:write mix is 16:14, in lowest terms 8:7 (the weights cxlmem_start interleaves) */
#define CPU_ADAM_MIX_RD 8u
#define CPU_ADAM_MIX_WR 7u
_Static_assert(CPU_ADAM_READ_BYTES * CPU_ADAM_MIX_WR == CPU_ADAM_WRITE_BYTES * CPU_ADAM_MIX_RD,
               "the CPU's read:write mix is its bytes' ratio");
#define CPU_ADAM_MIX ((cxl_mix){ CPU_ADAM_MIX_RD, CPU_ADAM_MIX_WR })

enum { CPU_GRADS_OUT, CPU_GRADS_WAIT, CPU_ADAM, CPU_ADAM_FLOOR, CPU_PARAMS_IN, CPU_DONE };

static int wanted(const cxlcfg *cx) { return cx && cx->offload_optimizer == CXLCFG_OPT_CPU; }

static int step(eng *E, rep *R)
{
    uint64_t P = eng_cxl_opt_params(E, R);
    switch (R->opt_step) {
    case CPU_GRADS_OUT:
        R->opt_step = CPU_GRADS_WAIT;
        eng_cxl_start(E, R, P * E->g.grad_elem_bytes, CXL_MIX_WRITE, CXL_BY_GPU, 0, "cxl.grads.out");
        if (P < R->shard_params) {
            /* offload_scope experts: the rest's states are in HBM, the GPU updates them meanwhile */
            eng_run_kernel(E, R, R->opt_dense_op);
            return STEP_BLOCKED;
        }
        /* fall through */
    case CPU_GRADS_WAIT:
        R->opt_step = CPU_ADAM;
        if (eng_cxl_wait(E, R, 0))
            return STEP_BLOCKED;
        /* fall through */
    case CPU_ADAM:
        R->opt_step = CPU_ADAM_FLOOR;
        R->cpu_start = E->now;
        eng_cxl_start(E, R, P * (CPU_ADAM_READ_BYTES + CPU_ADAM_WRITE_BYTES), CPU_ADAM_MIX, CXL_BY_CPU, 0,
                      "cxl.cpu_adam");
        if (eng_cxl_wait(E, R, 0))
            return STEP_BLOCKED;
        /* fall through */
    case CPU_ADAM_FLOOR: {
        R->opt_step = CPU_PARAMS_IN;
        /* the node's CPUs update the parameters of all its GPUs */
        double node_params = (double)P * (double)E->x->cluster.gpus_per_node;
        int64_t floor_ps = (int64_t)ceil(node_params / E->cx->cpu_adam_rate * 1e12);
        if (eng_wait_until(E, R, R->cpu_start + floor_ps))
            return STEP_BLOCKED;
    }
        /* fall through */
    case CPU_PARAMS_IN:
        R->opt_step = CPU_DONE;
        eng_cxl_start(E, R, P * E->g.weight_elem_bytes, CXL_MIX_READ, CXL_BY_GPU, 0, "cxl.params.in");
        if (eng_cxl_wait(E, R, 0))
            return STEP_BLOCKED;
        /* fall through */
    default:
        return STEP_NEXT;
    }
}

const train_policy policy_opt_cpu = { .name = "optimizer-cpu", .wanted = wanted, .optimizer_step = step };
