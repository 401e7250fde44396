/* coll.c - NCCL ring all-reduce: closed form, decomposition into per-step messages, time, bandwidth.
 *
 * The decomposition follows NCCL 2.19 runRing (src/collectives/device/all_reduce.h), Simple protocol:
 *   chunkSize = stepBytes x ALLREDUCE_CHUNKSTEPS            (512 KiB x 4 = 2 MiB)
 *   loopSize  = nChannels x nRanks x chunkSize
 *   for (gridOffset = 0; gridOffset < size; gridOffset += loopSize)
 *     realChunkSize = roundUp(min(chunkSize, divUp(size - gridOffset, nChannels x nRanks)),
 *                             (nthreads - WARP_SIZE) x sizeof(uint64_t))
 *     send; (n-2) x recvReduceSend; recvReduceCopySend; (n-2) x recvCopySend; recv
 * so each rank sends 2(n-1) messages per channel and loop: n-1 while reducing, n-1 while gathering (the
 * final recv sends nothing). We work in bytes (sizeof(T) = 1); NCCL's element counts times sizeof(T) give
 * the same byte sizes whenever the rounding unit and the size are multiples of sizeof(T).
 *
 * Arithmetic on times uses 128-bit integers so that S x 10^12 cannot overflow for any 64-bit S.
 */
#include "train/coll.h"

__extension__ typedef unsigned __int128 coll_u128;

#define PS_PER_S 1000000000000ull

static int coll_check_params(const coll_ring_params *p, cxl_err *err)
{
    if (!p)
        return cxl_errf(err, CXL_EINTERNAL, "coll: no ring parameters");
    if (p->n_ranks < 1)
        return cxl_errf(err, CXL_ECONFIG, "coll: ring of %u ranks; need at least 1", p->n_ranks);
    if (p->n_channels < 1 || p->n_channels > COLL_MAX_CHANNELS)
        return cxl_errf(err, CXL_ECONFIG, "coll: %u channels; valid: 1..%u", p->n_channels, COLL_MAX_CHANNELS);
    if (p->nthreads <= COLL_WARP_SIZE || p->nthreads > COLL_MAX_NTHREADS || p->nthreads % COLL_WARP_SIZE)
        return cxl_errf(err, CXL_ECONFIG, "coll: nthreads %u; valid: a multiple of %u in %u..%u", p->nthreads,
                        COLL_WARP_SIZE, 2 * COLL_WARP_SIZE, COLL_MAX_NTHREADS);
    return 0;
}

/* ceil(num / den) picoseconds of a transfer, num in bytes x 10^12; CXL_ELIMIT past INT64_MAX. */
static int coll_div_ps(coll_u128 num, uint64_t den, uint64_t *out, cxl_err *err)
{
    coll_u128 q = (num + den - 1) / den;
    if (q > (coll_u128)INT64_MAX)
        return cxl_errf(err, CXL_ELIMIT, "coll: transfer time beyond %lld ps", (long long)INT64_MAX);
    *out = (uint64_t)q;
    return 0;
}

int64_t coll_ring_allreduce_closed_form_ps(uint32_t n, uint64_t bytes, uint64_t link_bw_Bps, uint64_t latency_ps,
                                           cxl_err *err)
{
    if (n < 1)
        return cxl_errf(err, CXL_ECONFIG, "coll: ring of %u ranks; need at least 1", n);
    if (link_bw_Bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "coll: link bandwidth 0 B/s; need > 0");
    if (n == 1 || bytes == 0)
        return 0;
    uint64_t steps = 2 * (uint64_t)(n - 1);
    /* 2(n-1)/n x S / B seconds = 2(n-1) S 10^12 / (n B) ps. 2(n-1) S < 2^97 always; times 10^12 it fits
     * in 128 bits while 2(n-1) S < 2^88, i.e. any 64-bit S up to 2^23 ranks. */
    coll_u128 a = (coll_u128)steps * bytes;
    if (a >= ((coll_u128)1 << 88))
        return cxl_errf(err, CXL_ELIMIT, "coll: %llu bytes on %u ranks exceed the closed form's 128-bit range",
                        (unsigned long long)bytes, n);
    coll_u128 num = a * PS_PER_S, den = (coll_u128)n * link_bw_Bps;
    coll_u128 q = (num + den - 1) / den;
    if (q > (coll_u128)INT64_MAX)
        return cxl_errf(err, CXL_ELIMIT, "coll: all-reduce time beyond %lld ps", (long long)INT64_MAX);
    coll_u128 total = q + (coll_u128)steps * latency_ps;
    if (total > (coll_u128)INT64_MAX)
        return cxl_errf(err, CXL_ELIMIT, "coll: all-reduce time beyond %lld ps", (long long)INT64_MAX);
    return (int64_t)total;
}

void coll_ring_params_default(coll_ring_params *p, uint32_t n_ranks, uint32_t n_channels)
{
    p->n_ranks = n_ranks;
    p->n_channels = n_channels;
    p->nthreads = COLL_SIMPLE_NTHREADS;
}

static uint64_t coll_loop_bytes(const coll_ring_params *p)
{
    return (uint64_t)p->n_channels * p->n_ranks * COLL_ALLREDUCE_CHUNK_BYTES;
}

/* NCCL's realChunkSize for the loop starting `done` bytes into a buffer of `bytes`. */
static uint64_t coll_real_chunk_bytes(const coll_ring_params *p, uint64_t bytes, uint64_t done)
{
    uint64_t parts = (uint64_t)p->n_channels * p->n_ranks, rem = bytes - done;
    uint64_t c = rem / parts + (rem % parts != 0);
    uint64_t unit = (uint64_t)(p->nthreads - COLL_WARP_SIZE) * sizeof(uint64_t);
    if (c > COLL_ALLREDUCE_CHUNK_BYTES)
        c = COLL_ALLREDUCE_CHUNK_BYTES;
    /* rounding after the min: a full loop carries roundUp(2 MiB, unit) > 2 MiB, as in NCCL */
    return (c + unit - 1) / unit * unit;
}

int coll_ring_plan_len(const coll_ring_params *p, uint64_t bytes, size_t *n_out, cxl_err *err)
{
    int rc = coll_check_params(p, err);
    if (rc)
        return rc;
    *n_out = 0;
    if (p->n_ranks == 1 || bytes == 0)
        return 0;
    uint64_t lb = coll_loop_bytes(p);
    uint64_t loops = bytes / lb + (bytes % lb != 0);
    coll_u128 n = (coll_u128)loops * p->n_channels * 2 * (p->n_ranks - 1);
    if (n > (coll_u128)SIZE_MAX || loops > UINT32_MAX)
        return cxl_errf(err, CXL_ELIMIT, "coll: %llu bytes need more ring steps than fit in memory",
                        (unsigned long long)bytes);
    *n_out = (size_t)n;
    return 0;
}

int coll_ring_totals(const coll_ring_params *p, uint32_t passes, uint64_t bytes, uint64_t *bytes_per_rank,
                     uint64_t *steps_per_channel, cxl_err *err)
{
    size_t need;
    int rc = coll_ring_plan_len(p, bytes, &need, err);
    if (rc)
        return rc;
    if (passes < 1 || passes > 2)
        return cxl_errf(err, CXL_ECONFIG, "coll: a ring makes 1 or 2 passes (got %u)", passes);
    *bytes_per_rank = *steps_per_channel = 0;
    if (need == 0)
        return 0;
    uint64_t lb = coll_loop_bytes(p), per_loop = (uint64_t)p->n_channels * passes * (p->n_ranks - 1);
    coll_u128 total = 0, steps = 0;
    for (uint64_t done = 0; done < bytes; done += lb) {
        total += (coll_u128)per_loop * coll_real_chunk_bytes(p, bytes, done);
        steps += (coll_u128)passes * (p->n_ranks - 1);
        if (bytes - done <= lb)
            break;
    }
    if (total > (coll_u128)UINT64_MAX)
        return cxl_errf(err, CXL_ELIMIT, "coll: %llu bytes exceed the ring's 64-bit byte count",
                        (unsigned long long)bytes);
    *bytes_per_rank = (uint64_t)total;
    *steps_per_channel = (uint64_t)steps;
    return 0;
}

int coll_ring_plan(const coll_ring_params *p, uint64_t bytes, coll_step *out, size_t max, size_t *n_out,
                   cxl_err *err)
{
    size_t need;
    int rc = coll_ring_plan_len(p, bytes, &need, err);
    if (rc)
        return rc;
    *n_out = need;
    if (need > max)
        return cxl_errf(err, CXL_ELIMIT, "coll: ring plan of %llu bytes has %zu steps; output holds %zu",
                        (unsigned long long)bytes, need, max);
    uint64_t lb = coll_loop_bytes(p);
    size_t k = 0;
    uint32_t loop = 0;
    for (uint64_t done = 0; done < bytes; done += lb, loop++) {
        uint64_t chunk = coll_real_chunk_bytes(p, bytes, done);
        for (uint32_t c = 0; c < p->n_channels; c++)
            for (int ph = COLL_REDUCE_SCATTER; ph <= COLL_ALL_GATHER; ph++)
                for (uint32_t s = 0; s + 1 < p->n_ranks; s++)
                    out[k++] = (coll_step){.loop = loop, .channel = c, .phase = (coll_phase)ph, .step = s,
                                           .bytes = chunk};
        if (bytes - done <= lb)
            break;
    }
    return 0;
}

int coll_plan_channel_bytes(const coll_step *steps, size_t n_steps, uint32_t n_channels, uint64_t *per_channel,
                            cxl_err *err)
{
    if (n_channels < 1 || n_channels > COLL_MAX_CHANNELS)
        return cxl_errf(err, CXL_ECONFIG, "coll: %u channels; valid: 1..%u", n_channels, COLL_MAX_CHANNELS);
    for (uint32_t c = 0; c < n_channels; c++)
        per_channel[c] = 0;
    for (size_t i = 0; i < n_steps; i++) {
        if (steps[i].channel >= n_channels)
            return cxl_errf(err, CXL_ECONFIG, "coll: step %zu on channel %u; plan has %u channels", i,
                            steps[i].channel, n_channels);
        per_channel[steps[i].channel] += steps[i].bytes;
    }
    return 0;
}

uint64_t coll_plan_total_bytes(const coll_step *steps, size_t n_steps)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n_steps; i++)
        sum += steps[i].bytes;
    return sum;
}

int64_t coll_ring_time_ps(const coll_step *steps, size_t n_steps, uint32_t n_channels, uint64_t link_bw_Bps,
                          uint64_t latency_ps, cxl_err *err)
{
    if (n_channels < 1 || n_channels > COLL_MAX_CHANNELS)
        return cxl_errf(err, CXL_ECONFIG, "coll: %u channels; valid: 1..%u", n_channels, COLL_MAX_CHANNELS);
    if (link_bw_Bps == 0)
        return cxl_errf(err, CXL_ECONFIG, "coll: link bandwidth 0 B/s; need > 0");
    coll_u128 busy[COLL_MAX_CHANNELS] = {0};
    coll_u128 worst = 0;
    for (size_t i = 0; i < n_steps; i++) {
        const coll_step *s = &steps[i];
        if (s->channel >= n_channels)
            return cxl_errf(err, CXL_ECONFIG, "coll: step %zu on channel %u; plan has %u channels", i,
                            s->channel, n_channels);
        uint64_t xfer = 0;
        /* the channel's share is B / n_channels, so the step takes bytes x n_channels / B */
        int rc = coll_div_ps((coll_u128)s->bytes * n_channels * PS_PER_S, link_bw_Bps, &xfer, err);
        if (rc)
            return rc;
        busy[s->channel] += (coll_u128)latency_ps + xfer;
        if (busy[s->channel] > (coll_u128)INT64_MAX)
            return cxl_errf(err, CXL_ELIMIT, "coll: ring time beyond %lld ps", (long long)INT64_MAX);
        if (busy[s->channel] > worst)
            worst = busy[s->channel];
    }
    return (int64_t)worst;
}

int coll_algbw_Bps(uint64_t bytes, int64_t time_ps, double *out, cxl_err *err)
{
    if (time_ps <= 0)
        return cxl_errf(err, CXL_ECONFIG, "coll: algorithm bandwidth over %lld ps; need a time > 0",
                        (long long)time_ps);
    *out = (double)bytes * (double)PS_PER_S / (double)time_ps;
    return 0;
}

int coll_allreduce_busbw_Bps(uint32_t n, uint64_t bytes, int64_t time_ps, double *out, cxl_err *err)
{
    if (n < 1)
        return cxl_errf(err, CXL_ECONFIG, "coll: ring of %u ranks; need at least 1", n);
    double algbw = 0;
    int rc = coll_algbw_Bps(bytes, time_ps, &algbw, err);
    if (rc)
        return rc;
    *out = algbw * 2.0 * (double)(n - 1) / (double)n;
    return 0;
}
