/* train_cpuoff.c - Megatron-Core's activation offloading to the CPU's memory (training.cpu_offload_layers,
 * pp 1) as Transformer Engine schedules its copies (transformer_engine/pytorch/cpu_offload_v1.py,
 * AsyncDoubleBufferGroupOffloadHandler, behind get_cpu_offload_context; Megatron-Core's TransformerBlock
 * commits one group per layer):
 *
 *   forward   after layer 0 the copy of layer 0's saved tensors to pinned host memory starts on a side
 *             stream; after layer window(k) the compute stream waits for copy k (the tensors are freed)
 *             and copy k + 1 starts. One copy at a time, each overlapped with the layers up to its window.
 *   backward  before layer window(k)'s backward (from the last k down) the compute stream waits for the
 *             copy back in flight, then the copy back of layer k starts; before layer 0's backward it
 *             waits for the last one.
 *
 * window(k) = (L / N)(k + 1) - 1 + min(k + 1, L mod N) for N offloaded of L layers (the handler's
 * layer_window_map), so the copies spread evenly over the pass. A copy takes its layer's activation bytes
 * (gpumem.h, as kept without recomputation) over cluster.host_link_bandwidth: each GPU's share of its
 * link to the CPU's memory (NVLink-C2C on GB200, PCIe on x86 nodes), a dedicated path, so no other
 * transfer shares it. What the compute stream waits is accounted as a memory-tier stall (TRAIN_BK_CXL);
 * the copies are traced on the stage's transfer lanes (cpu_offload.out / cpu_offload.in). */
#include <math.h>

#include "train/gpumem.h"
#include "train/train_eng.h"

/* The layer whose forward ends the window of offloaded group k (TE's layer_window_map). */
static uint32_t window(const eng *E, uint32_t k)
{
    uint32_t L = E->cpuoff_model_layers, N = E->cpuoff_layers, q = L / N, r = L % N;
    return q * (k + 1) - 1 + (k + 1 < r ? k + 1 : r);
}

/* A copy of layer `layer`'s activations out (back 0) or back (1) started at t0: its end, and its slice on
 * the stage's transfer lanes of the trace. */
static int64_t copy_end(eng *E, const rep *R, int64_t t0, uint32_t layer, int back)
{
    uint64_t bytes = E->cpuoff_bytes[eng_layer_moe(E, 0, layer)];
    int64_t t1 = t0 + (int64_t)ceil((double)bytes / (double)E->x->cluster.host_link_bw_bps * 1e12);
    if (E->ct && eng_traced(E, R->r)) {
        ctrace_arg a[2] = { ARG_U("bytes", bytes), ARG_U("layer", layer) };
        uint32_t t = ctrace_lane(E->ct, &E->lanes[R->r * TL_N + TL_CXL], t0, t1);
        eng_trace_slice(E, R->r, t, "cpu_offload", back ? "cpu_offload.in" : "cpu_offload.out", t0, t1, a, 2);
    }
    return t1;
}

void eng_cpuoff_setup(eng *E)
{
    const traincfg *t = E->t;
    E->cpuoff_layers = (uint32_t)t->cpu_offload_layers;
    E->cpuoff_model_layers = E->chunk_layers[0];
    if (!E->cpuoff_layers)
        return;
    traincfg none = *t;
    none.recompute = TRAINCFG_RECOMPUTE_NONE;
    E->cpuoff_bytes[0] = (uint64_t)gpumem_layer_activation_bytes(&E->x->model, &none);
    E->cpuoff_bytes[1] = (uint64_t)gpumem_moe_layer_activation_bytes(&E->x->model, &none);
}

void eng_cpuoff_forward_done(eng *E, rep *R, uint32_t layer)
{
    if (!E->cpuoff_layers)
        return;
    if (layer == 0) {
        R->off_count = 0;
        R->off_done_ps = copy_end(E, R, E->now, 0, 0);
    }
    if (R->off_count < E->cpuoff_layers && layer == window(E, R->off_count)) {
        /* both streams synchronise: the compute stream waits for this copy, the next one starts after */
        R->off_wait_ps = R->off_done_ps;
        int64_t t0 = R->off_done_ps > E->now ? R->off_done_ps : E->now;
        if (++R->off_count < E->cpuoff_layers)
            R->off_done_ps = copy_end(E, R, t0, R->off_count, 0);
    }
}

int eng_cpuoff_wait(eng *E, rep *R)
{
    int64_t t = R->off_wait_ps;
    R->off_wait_ps = 0;
    return t > E->now && eng_wait_until(E, R, t);
}

int eng_cpuoff_backward_start(eng *E, rep *R, uint32_t step)
{
    if (!E->cpuoff_layers)
        return 0;
    /* the engine walks a backward pass's layers in the forward's index order; the model's backward runs
     * from the last layer down */
    uint32_t layer = E->cpuoff_model_layers - 1 - step;
    if (!R->off_layer_done) {
        if (layer + 1 == E->cpuoff_model_layers)
            R->in_count = E->cpuoff_layers;
        if (R->in_count && layer == window(E, R->in_count - 1)) {
            if (eng_wait_until(E, R, R->in_done_ps))
                return 1;
            R->in_done_ps = copy_end(E, R, E->now, R->in_count - 1, 1);
            if (R->in_count > 1)
                R->in_count--;
        }
        R->off_layer_done = 1;
    }
    return layer == 0 && eng_wait_until(E, R, R->in_done_ps);
}
