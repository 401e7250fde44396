/* policy_parameters.c - the 16-bit parameters in CXL, fetched layer by layer (ZeRO-Infinity, Rajbhandari
 * et al., SC21; cxl.offload_parameters): before each layer's forward and backward the GPUs read the
 * layer's weights (the compute stream waits for its layer, the next layer's prefetched); after the
 * chunk's last backward of a layer its gradients are complete and go to CXL, nobody waiting, for the
 * offloaded optimizer (policy_opt_*.c). An MoE layer moves its own parameters (routed experts split by ep
 * and etp); with cxl.offload_scope experts only the routed experts' weights live in CXL, so dense layers
 * move nothing. */
#include "train/policy.h"
#include "train/train_eng.h"

static int wanted(const cxlcfg *cx) { return cx && cx->offload_parameters; }

static uint64_t layer_bytes(const eng *E, int moe) { return eng_cxl_layer_param_bytes(E, moe, E->g.weight_elem_bytes); }

/* the layer's gradients: as many elements as the weights fetched (bytes) */
static void layer_out(eng *E, rep *R, uint64_t bytes, int backward, int last_microbatch)
{
    if (backward && last_microbatch && bytes)
        eng_cxl_start(E, R, bytes / E->g.weight_elem_bytes * E->g.grad_elem_bytes, CXL_MIX_WRITE, CXL_BY_GPU,
                      CXL_UNTRACKED, "cxl.grads.out");
}

const train_policy policy_parameters = { .name = "parameters", .wanted = wanted, .layer_bytes = layer_bytes,
                                         .in_forward = 1, .in_backward = 1, .layer_out = layer_out };
