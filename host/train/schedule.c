/* schedule.c - Megatron-LM's pipeline schedules as ordered lists of passes.
 *
 * Sources (Megatron-LM, megatron/core/pipeline_parallel/schedules.py as of 2023; megatron/schedules.py in
 * 2022 has the same control flow):
 *   forward_backward_no_pipelining: for each micro-batch, forward_step then backward_step.
 *   forward_backward_pipelining_without_interleaving:
 *     num_warmup_microbatches = min(pp - rank - 1, num_microbatches)
 *     warm-up forwards; then num_microbatches - warmup iterations of forward_step + backward_step (the
 *     backward pops input_tensors[0], the oldest forward); then warmup cool-down backwards.
 *   forward_backward_pipelining_with_interleaving:
 *     total_num_microbatches = num_microbatches x num_model_chunks
 *     if num_microbatches == pipeline_parallel_size: warmup = total (all_warmup_microbatches = True)
 *     else warmup = min((pp - rank - 1) x 2 + (num_model_chunks - 1) x pp, total)
 *     for k in range(warmup): forward_step_helper(k)
 *     for k in range(total - warmup): forward_step_helper(k + warmup); backward_step_helper(k)
 *     for k in range(total - warmup, total): backward_step_helper(k)
 *   with get_model_chunk_id(k, forward) = (k mod (pp x chunks)) / pp, reversed (chunks - 1 - id) for
 *   backward. The micro-batch is implicit there: forward_step_helper draws the next item from the chunk's
 *   data iterator, and backward_step_helper pops the chunk's oldest saved activation (input_tensors[c]
 *   .pop(0)). Chunk c's j-th forward is virtual iteration k with k / (pp x chunks) = j / pp and
 *   k mod pp = j mod pp, so its micro-batch is (k / (pp x chunks)) x pp + k mod pp; the FIFO pop gives
 *   backwards the same formula. Later Megatron writes this formula out as get_microbatch_id_in_model_chunk
 *   (and, since 2024, as a lookup table whose default group size is pp: the same order).
 *
 * ZB-H1 (schedule_zb_h1): Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, arXiv 2401.10241,
 * Sec. 3.1, Fig. 3 (top), read as: on stage i the passes of round x are F_x, B_{x-(p-1-i)}, W_{x-(p-1)}.
 * The authors' Megatron patch (sail-sg/zero-bubble-pipeline-parallelism, branch zb-h1-quick-start,
 * megatron/core/pipeline_parallel/schedules.py) runs a variant that splits B from W only where it defers
 * W (a rank's first `rank` backwards and its cool-down), to keep Megatron's batched send/receive and
 * tensor-parallel overlap elsewhere; this module follows the paper's figure (docs/schedules.md).
 */
#include "train/schedule.h"

int schedule_check(uint32_t pp, uint32_t rank, uint32_t m, uint32_t v, cxl_err *err)
{
    if (pp < 1)
        return cxl_errf(err, CXL_ECONFIG, "schedule: pipeline of %u ranks; need pp >= 1", pp);
    if (rank >= pp)
        return cxl_errf(err, CXL_ECONFIG, "schedule: rank %u in a pipeline of %u ranks; valid: 0..%u", rank, pp,
                        pp - 1);
    if (m < 1)
        return cxl_errf(err, CXL_ECONFIG, "schedule: %u micro-batches; need at least 1", m);
    if (v < 1)
        return cxl_errf(err, CXL_ECONFIG, "schedule: %u virtual stages; need at least 1", v);
    if (v > 1 && pp == 1)
        return cxl_errf(err, CXL_ECONFIG,
                        "schedule: %u virtual stages, but interleaving needs a pipeline (pp is 1); use 1", v);
    if (v > 1 && m % pp)
        return cxl_errf(err, CXL_ECONFIG,
                        "schedule: the interleaved schedule (%u virtual stages) needs the %u micro-batches to be "
                        "a multiple of pp %u",
                        v, m, pp);
    return 0;
}

size_t schedule_len(uint32_t microbatches, uint32_t virtual_stages)
{
    uint64_t mv = (uint64_t)microbatches * virtual_stages; /* < 2^64 */
    if (mv > SIZE_MAX / 2)
        return SIZE_MAX;
    return (size_t)(2 * mv);
}

uint64_t schedule_warmup(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages)
{
    uint64_t m = microbatches, v = virtual_stages;
    if (pp <= 1)
        return 0;
    if (v == 1) {
        uint64_t w = (uint64_t)(pp - rank - 1);
        return w < m ? w : m;
    }
    uint64_t total = m * v;
    if (m == pp) /* all_warmup_microbatches: every forward, then every backward */
        return total;
    uint64_t w = (uint64_t)(pp - rank - 1) * 2 + (v - 1) * pp;
    return w < total ? w : total;
}

/* Virtual iteration k (forward or backward) of an interleaved rank: its chunk and micro-batch. */
static schedule_item schedule_at(uint64_t k, uint32_t pp, uint32_t v, int backward)
{
    uint64_t group = (uint64_t)pp * v;
    uint32_t chunk = (uint32_t)((k % group) / pp);
    schedule_item it = {.microbatch = (uint32_t)((k / group) * pp + k % pp),
                        .chunk = backward ? v - 1 - chunk : chunk,
                        .backward = (uint8_t)(backward != 0)};
    return it;
}

uint64_t schedule_warmup_combined(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages)
{
    uint64_t w = schedule_warmup(pp, rank, microbatches, virtual_stages) + 1, total = (uint64_t)microbatches * virtual_stages;
    return w < total ? w : total;
}

static int build_phases(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages, int combined,
                        schedule_item *out, size_t max, size_t *n_out, cxl_err *err)
{
    int rc = schedule_check(pp, rank, microbatches, virtual_stages, err);
    if (rc)
        return rc;
    size_t need = schedule_len(microbatches, virtual_stages);
    *n_out = need;
    if (need == SIZE_MAX)
        return cxl_errf(err, CXL_ELIMIT,
                        "schedule: %u micro-batches x %u virtual stages x 2 passes do not fit in memory",
                        microbatches, virtual_stages);
    if (need > max)
        return cxl_errf(err, CXL_ELIMIT,
                        "schedule: %u micro-batches x %u virtual stages need %zu passes; output holds %zu",
                        microbatches, virtual_stages, need, max);
    /* pp = 1 and v = 1 fit the same three phases: warm-up 0 gives F0 B0 F1 B1 ..., and with v = 1 the
     * chunk is 0 and micro-batch k is k. */
    uint64_t total = (uint64_t)microbatches * virtual_stages;
    uint64_t w = combined ? schedule_warmup_combined(pp, rank, microbatches, virtual_stages)
                          : schedule_warmup(pp, rank, microbatches, virtual_stages);
    size_t i = 0;
    for (uint64_t k = 0; k < w; k++)
        out[i++] = schedule_at(k, pp, virtual_stages, 0);
    for (uint64_t k = 0; k < total - w; k++) {
        out[i++] = schedule_at(k + w, pp, virtual_stages, 0);
        out[i++] = schedule_at(k, pp, virtual_stages, 1);
    }
    for (uint64_t k = total - w; k < total; k++)
        out[i++] = schedule_at(k, pp, virtual_stages, 1);
    return 0;
}

int schedule_build(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages, schedule_item *out,
                   size_t max, size_t *n_out, cxl_err *err)
{
    return build_phases(pp, rank, microbatches, virtual_stages, 0, out, max, n_out, err);
}

int schedule_build_combined(uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages,
                            schedule_item *out, size_t max, size_t *n_out, cxl_err *err)
{
    if (pp > 1 && virtual_stages < 2)
        return cxl_errf(err, CXL_ECONFIG, "schedule: the combined 1F1B schedule with pp %u needs virtual stages "
                        "(Megatron-Core runs it in the interleaved schedule only); virtual stages is %u", pp,
                        virtual_stages);
    return build_phases(pp, rank, microbatches, virtual_stages, 1, out, max, n_out, err);
}

int schedule_zb_h1(uint32_t pp, uint32_t rank, uint32_t microbatches, schedule_item *out, size_t max, size_t *n_out,
                   cxl_err *err)
{
    if (pp < 2)
        return cxl_errf(err, CXL_ECONFIG, "schedule: zb-h1 needs a pipeline of at least 2 ranks; pp is %u", pp);
    int rc = schedule_check(pp, rank, microbatches, 1, err);
    if (rc)
        return rc;
    uint64_t m = microbatches;
    if (3 * m > SIZE_MAX)
        return cxl_errf(err, CXL_ELIMIT, "schedule: %u micro-batches x 3 passes do not fit in memory", microbatches);
    *n_out = (size_t)(3 * m);
    if (*n_out > max)
        return cxl_errf(err, CXL_ELIMIT, "schedule: %u micro-batches need %zu passes; output holds %zu", microbatches,
                        *n_out, max);
    /* triple x: F x, B x - (p - 1 - rank), W x - (p - 1), each when in range (Qi et al. Fig. 3) */
    uint64_t lag_b = (uint64_t)(pp - 1 - rank), lag_w = (uint64_t)(pp - 1);
    size_t i = 0;
    for (uint64_t x = 0; x < m + lag_w; x++) {
        if (x < m)
            out[i++] = (schedule_item){ .microbatch = (uint32_t)x };
        if (x >= lag_b && x - lag_b < m)
            out[i++] = (schedule_item){ .microbatch = (uint32_t)(x - lag_b), .backward = 1, .part = SCHEDULE_B };
        if (x >= lag_w)
            out[i++] = (schedule_item){ .microbatch = (uint32_t)(x - lag_w), .backward = 1, .part = SCHEDULE_W };
    }
    return 0;
}

/* DualPipeV's order, written into out when out is not NULL (it then has room for every item); the count
 * in *n. The weight gradients wait in a FIFO (the code's WeightGradStore): W pops the oldest B' not yet
 * popped, found by a cursor over the items written, since every B' precedes its W. */
typedef struct dpv_walk {
    schedule_item *out;
    size_t n, scan;                   /* items so far; the FIFO's head: no B' before scan is pending */
    uint32_t f[2], b[2];              /* next micro-batch per chunk, forward and backward */
    uint32_t pending;                 /* B' without their W */
} dpv_walk;

static void dpv_put(dpv_walk *w, schedule_item it)
{
    if (w->out)
        w->out[w->n] = it;
    w->n++;
}

static void dpv_f(dpv_walk *w, uint32_t c) { dpv_put(w, (schedule_item){ .microbatch = w->f[c]++, .chunk = c }); }

static void dpv_b(dpv_walk *w, uint32_t c, int split)
{
    dpv_put(w, (schedule_item){ .microbatch = w->b[c]++, .chunk = c, .backward = 1,
                                .part = split ? SCHEDULE_B : SCHEDULE_BW });
    w->pending += split != 0;
}

static void dpv_w(dpv_walk *w)
{
    if (!w->pending)
        return; /* not reached: every W of DualPipeV.step pops a B' queued before it */
    w->pending--;
    if (!w->out) {
        w->n++;
        return;
    }
    while (w->out[w->scan].part != SCHEDULE_B)
        w->scan++;
    schedule_item it = w->out[w->scan++];
    it.part = SCHEDULE_W;
    dpv_put(w, it);
}

/* dualpipe/dualpipev.py DualPipeV.step, steps 1-8 (schedule.h) */
static void dpv_run(dpv_walk *w, uint32_t p, uint32_t r, uint32_t m)
{
    for (uint32_t i = 0; i < 2 * (p - r - 1); i++)
        dpv_f(w, 0);
    for (uint32_t i = 0; i < r + 1; i++) {
        dpv_f(w, 0);
        dpv_f(w, 1);
    }
    for (uint32_t i = 0; i < p - r - 1; i++) {
        dpv_b(w, 1, 1);
        dpv_w(w);
        dpv_f(w, 1);
    }
    for (uint32_t i = 0; i < m - 2 * p + r + 1; i++) {
        dpv_f(w, 0);
        dpv_b(w, 1, 0);
        dpv_f(w, 1);
        dpv_b(w, 0, 0);
    }
    for (uint32_t i = 0; i < p - r - 1; i++) {
        dpv_b(w, 1, 0);
        dpv_f(w, 1);
        dpv_b(w, 0, 0);
    }
    int split = 0;
    for (uint32_t i = 0; i < r + 1; i++) {
        if (i == (r + 1) / 2 && r % 2 == 1)
            split = 1;
        dpv_b(w, 1, split);
        if (i == (r + 1) / 2 && r % 2 == 0)
            split = 1;
        dpv_b(w, 0, split);
    }
    for (uint32_t i = 0; i < p - r - 1; i++) {
        dpv_w(w);
        dpv_b(w, 0, 1);
    }
    for (uint32_t i = 0; i < r + 1; i++)
        dpv_w(w);
}

int schedule_dualpipev(uint32_t pp, uint32_t rank, uint32_t microbatches, schedule_item *out, size_t max,
                       size_t *n_out, cxl_err *err)
{
    if (pp < 2)
        return cxl_errf(err, CXL_ECONFIG, "schedule: dualpipev needs a pipeline of at least 2 ranks; pp is %u", pp);
    int rc = schedule_check(pp, rank, microbatches, 1, err);
    if (rc)
        return rc;
    if ((uint64_t)microbatches < 2ull * pp)
        return cxl_errf(err, CXL_ECONFIG,
                        "schedule: dualpipev needs at least 2 x pp = %llu micro-batches; there are %u",
                        2ull * pp, microbatches);
    uint64_t need = 4ull * microbatches + 2ull * pp - rank - 1;
    if (need > SIZE_MAX)
        return cxl_errf(err, CXL_ELIMIT, "schedule: %u micro-batches x 4 passes do not fit in memory", microbatches);
    *n_out = (size_t)need;
    if (need > max)
        return cxl_errf(err, CXL_ELIMIT, "schedule: dualpipev with %u micro-batches needs %zu passes; output holds %zu",
                        microbatches, *n_out, max);
    dpv_walk w = { .out = out };
    dpv_run(&w, pp, rank, microbatches);
    return 0;
}

int schedule_build_kind(int kind, uint32_t pp, uint32_t rank, uint32_t microbatches, uint32_t virtual_stages,
                        schedule_item *out, size_t max, size_t *n_out, cxl_err *err)
{
    switch (kind) {
    case SCHEDULE_AUTO:
        break;
    case SCHEDULE_1F1B:
        if (virtual_stages > 1)
            return cxl_errf(err, CXL_ECONFIG, "schedule: 1f1b runs one model chunk per rank; virtual_stages is %u",
                            virtual_stages);
        break;
    case SCHEDULE_INTERLEAVED:
        if (virtual_stages < 2)
            return cxl_errf(err, CXL_ECONFIG,
                            "schedule: interleaved needs at least 2 model chunks per rank; virtual_stages is %u",
                            virtual_stages);
        break;
    case SCHEDULE_ZB_H1:
        if (virtual_stages != 1)
            return cxl_errf(err, CXL_ECONFIG, "schedule: zb-h1 runs one model chunk per rank; virtual_stages is %u",
                            virtual_stages);
        return schedule_zb_h1(pp, rank, microbatches, out, max, n_out, err);
    case SCHEDULE_DUALPIPEV:
        if (virtual_stages != 2)
            return cxl_errf(err, CXL_ECONFIG,
                            "schedule: dualpipev runs two model chunks per rank in a V; virtual_stages is %u",
                            virtual_stages);
        return schedule_dualpipev(pp, rank, microbatches, out, max, n_out, err);
    default:
        return cxl_errf(err, CXL_ECONFIG, "schedule: unknown schedule kind %d", kind);
    }
    return schedule_build(pp, rank, microbatches, virtual_stages, out, max, n_out, err);
}

int schedule_chunk_layers(uint32_t pp, uint32_t virtual_stages, uint32_t layers, uint32_t rank, uint32_t chunk,
                          uint32_t *first, uint32_t *count, cxl_err *err)
{
    if (pp < 1)
        return cxl_errf(err, CXL_ECONFIG, "schedule: pipeline of %u ranks; need pp >= 1", pp);
    if (virtual_stages < 1)
        return cxl_errf(err, CXL_ECONFIG, "schedule: %u virtual stages; need at least 1", virtual_stages);
    if (rank >= pp)
        return cxl_errf(err, CXL_ECONFIG, "schedule: rank %u in a pipeline of %u ranks; valid: 0..%u", rank, pp,
                        pp - 1);
    if (chunk >= virtual_stages)
        return cxl_errf(err, CXL_ECONFIG, "schedule: model chunk %u of %u virtual stages; valid: 0..%u", chunk,
                        virtual_stages, virtual_stages - 1);
    uint64_t stages = (uint64_t)pp * virtual_stages;
    if (layers == 0 || layers % stages)
        return cxl_errf(err, CXL_ECONFIG,
                        "schedule: %u layers cannot be split evenly over pp %u x virtual_stages %u = %llu model "
                        "chunks; need a positive multiple of %llu",
                        layers, pp, virtual_stages, (unsigned long long)stages, (unsigned long long)stages);
    uint64_t per = layers / stages, s = (uint64_t)chunk * pp + rank;
    *first = (uint32_t)(s * per); /* s < stages, so s x per < layers */
    *count = (uint32_t)per;
    return 0;
}
