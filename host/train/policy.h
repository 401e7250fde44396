/* policy.h - the offload policies of the training engine (train_eng.h): what a pipeline stage keeps in
 * CXL memory, what it moves between its GPUs and CXL at which step of the iteration, and who waits.
 *
 * Two kinds, one interface, one file each (policy_*.c), listed in train_policies[]:
 * - optimizer policies, exactly one per run: where the optimizer step runs (END_OPTIMIZER) and what it
 *   moves. optimizer_step is called until it returns STEP_NEXT; it keeps its own progress in R->opt_step.
 *   The compute stream waits for whatever the step blocks on (a kernel, a transfer, a timer).
 * - layer policies, any number: a share of every layer that lives in CXL. The engine reads the policies'
 *   layer bytes back before a layer's forward or backward (one transfer for all of them, issued by the
 *   GPUs, the next layer's prefetched while this one computes; the compute stream waits for its own
 *   layer's only), and calls layer_out after the layer's pass for writes nobody waits for.
 * A new policy is a new policy_*.c defining a train_policy, declared below and added to train_policies[]
 * (policy.c). Policies use the engine's calls (train_eng.h: eng_cxl_start, eng_cxl_wait,
 * eng_run_kernel, eng_wait_until) and read its configuration; they own no state beyond R->opt_step. */
#ifndef CXLSIM_POLICY_H
#define CXLSIM_POLICY_H

#include <stdint.h>

#include "config/cxlcfg.h"

struct eng;
struct rep;

typedef struct train_policy {
    const char *name;
    /* 1 when the run uses it; cx is NULL without CXL memory (cxl.memory none) */
    int (*wanted)(const cxlcfg *cx);
    /* optimizer policies (NULL in layer policies): one step of the optimizer; STEP_BLOCKED or STEP_NEXT */
    int (*optimizer_step)(struct eng *E, struct rep *R);
    /* layer policies (NULL in optimizer policies): bytes per GPU of one layer held in CXL, of a dense
     * layer (moe 0) or an MoE layer (1), fixed for the run (asked once per kind, at setup) */
    uint64_t (*layer_bytes)(const struct eng *E, int moe);
    uint8_t in_forward, in_backward;    /* read back before the layer's forward / backward */
    uint8_t keeps_activations;          /* the backward reads the layer's activations instead of recomputing */
    /* after a layer's forward (backward 0) or backward (1; last_microbatch: the chunk's last micro-batch,
     * when its gradients are complete); NULL for none */
    void (*layer_out)(struct eng *E, struct rep *R, uint64_t layer_bytes, int backward, int last_microbatch);
} train_policy;

/* A layer policy in use, with its layer bytes: of a dense layer [0] and of an MoE layer [1]. */
typedef struct train_policy_use { const train_policy *p; uint64_t layer_bytes[2]; } train_policy_use;
#define TRAIN_POLICY_MAX 8

extern const train_policy policy_opt_hbm;       /* policy_opt_hbm.c: no offload, the GPU's optimizer kernel */
extern const train_policy policy_opt_cpu;       /* policy_opt_cpu.c: ZeRO-Offload, Adam on the CPU */
extern const train_policy policy_opt_gpu;       /* policy_opt_gpu.c: states streamed through the GPU */
extern const train_policy policy_activations;   /* policy_activations.c: checkpoints instead of recomputation */
extern const train_policy policy_parameters;    /* policy_parameters.c: 16-bit weights layer by layer */

/* Every policy, the optimizer policies first (the first one wanted runs), NULL-terminated. */
extern const train_policy *const train_policies[];

#endif
