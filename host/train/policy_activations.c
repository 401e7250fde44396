/* policy_activations.c - activation checkpoints in CXL instead of recomputation (cxl.offload_activations):
 * after each layer's forward the GPUs write the layer's activations (as kept without recomputation) to
 * CXL, nobody waiting; before the layer's backward they read them back (the compute stream waits for its
 * layer, the next layer's prefetched), and the backward runs without recomputing. */
#include "train/gpumem.h"
#include "train/policy.h"
#include "train/train_eng.h"

static int wanted(const cxlcfg *cx) { return cx && cx->offload_activations; }

/* a dense or an MoE layer's activations as kept without recomputation (gpumem.h) */
static uint64_t layer_bytes(const eng *E, int moe)
{
    traincfg none = *E->t;
    none.recompute = TRAINCFG_RECOMPUTE_NONE;
    return (uint64_t)(moe ? gpumem_moe_layer_activation_bytes(&E->x->model, &none)
                          : gpumem_layer_activation_bytes(&E->x->model, &none));
}

static void layer_out(eng *E, rep *R, uint64_t bytes, int backward, int last_microbatch)
{
    (void)last_microbatch;
    if (!backward)
        eng_cxl_start(E, R, bytes, CXL_MIX_WRITE, CXL_BY_GPU, CXL_UNTRACKED, "cxl.activations.out");
}

const train_policy policy_activations = { .name = "activations", .wanted = wanted, .layer_bytes = layer_bytes,
                                          .in_backward = 1, .keeps_activations = 1, .layer_out = layer_out };
