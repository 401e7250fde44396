/* backend_analytical.c - the analytical backend: what ASTRA-sim 2.0's analytical memory model and
 * Calculon charge for a memory transfer, latency + size / bandwidth, with FIFO queueing per device.
 *
 * No cycle is simulated. open() reduces the cxl_params to two figures: an idle latency per 64 B line
 * (`lat`, the sum of the fixed path latencies) and a device line time (cycles per 64 B line, the
 * slower of the link's payload rate and the DRAM's peak). A descriptor then runs as
 *     start = max(not_before, submitted, the requester's previous transfer end, the device FIFO)
 *     end   = start + ceil(lines x max(device line time, the descriptor's own cap))
 *     done  = end + lat
 * where the descriptor's cap is gap_cycles per line and max_outstanding lines per `lat` (Little's law).
 * The read:write mix changes nothing. docs/analytical.md gives the formulas, what is left out, and
 * figures next to csim's.
 *
 * The device FIFO is event driven: each device serves one 4 KiB chunk (ANL_CHUNK_LINES) at a time, always
 * from the oldest descriptor (activation cycle, then submission order) that has a chunk ready. A
 * descriptor limited by the device is always ready, so it runs to its end before the next one starts
 * (plain FIFO, total time = sum). A descriptor held back by its own cap leaves the device's spare time to
 * the next ones (work-conserving), so that many slow requesters share a device as they would in hardware.
 * Cost: O(requesters x devices) per chunk served; no per-cycle work.
 *
 * Exact integer arithmetic throughout: every rate is a fraction (cycles per line), the device and each
 * descriptor keep a clock "base + ceil(n x fraction)" (idle time is not banked, as in hw/hls/link.c), and
 * products use 128-bit integers. Deterministic: no floating point, no hashing, fixed scan orders.
 */
#include <stdlib.h>
#include <string.h>

#include "../hw/hls/cxl_types.h"
#include "cxl/backend.h"

__extension__ typedef unsigned __int128 anl_u128;

#define ANL_CHUNK_LINES 64u /* 4 KiB: the unit the device FIFO switches descriptors at */
#define ANL_COMPS 1024u     /* completions buffered between polls */
#define ANL_NEVER UINT64_MAX

enum { ANL_QUEUED = 0, ANL_ACTIVE = 1, ANL_SERVED = 2 };

typedef struct anl_frac {
    uint64_t num, den; /* cycles per line = num / den, both > 0 */
} anl_frac;

/* One descriptor's lines on one device. */
typedef struct anl_job {
    uint64_t lines, served;
    anl_frac pace;       /* the descriptor's own cap on this device, cycles per line */
    uint64_t pbase, pn;  /* pace clock: line pn may start at pbase + ceil(pn x pace) */
    uint64_t ready;      /* = pbase + ceil(pn x pace): when the next chunk may start */
    uint64_t last_end;   /* device end of this job's previous chunk */
} anl_job;

typedef struct anl_slot {
    cxl_desc d;
    uint64_t seq, submitted, act; /* FIFO key at the devices: (act, seq) */
    uint64_t start, end, done_at; /* first chunk served, transfer end, completion (= end + lat) */
    uint64_t lines, left;         /* total lines, lines not yet served */
    int state, started;
    anl_job job[CXL_MAX_DEVS];
} anl_slot;

typedef struct anl_req {
    anl_slot q[CXL_DESCQ];
    uint32_t head, count; /* descriptors not yet completed */
    uint32_t next;        /* offset from head of the first descriptor not fully served */
    uint64_t free_at;     /* transfer end of the last fully served descriptor */
} anl_req;

typedef struct anl_dev {
    uint64_t base, n, free; /* free = base + ceil(n x line) */
} anl_dev;

/* A served chunk whose lines have not all completed yet: line i (0..m-1) is done at
 * max(dbase + ceil((dn0+i+1) x line), pbase + ceil((pn0+i+1) x pace)) and completes lat later. */
typedef struct anl_rec {
    uint64_t dbase, dn0, pbase, pn0;
    anl_frac pace;
    uint64_t m, counted, k0; /* lines, lines already in the statistics, index of line 0 in its job */
    uint64_t wait;           /* FIFO wait of the chunk: recorded on its first line (see anl_stats) */
    uint32_t rd, wr;         /* the descriptor's mix */
} anl_rec;

typedef struct anl {
    uint64_t now, seq, lat;
    anl_frac line; /* device: cycles per line */
    uint32_t ndev, nreq, dev_bits, shift;
    anl_dev dev[CXL_MAX_DEVS];
    anl_req req[CXL_MAX_REQ];
    anl_rec *rec;
    size_t nrec, caprec;
    cxl_completion comp[ANL_COMPS];
    uint32_t comp_head, comp_count;
    cxl_stats st;
} anl;

/* ---- integer helpers ---- */

static uint64_t sat64(anl_u128 x) { return x > UINT64_MAX ? UINT64_MAX : (uint64_t)x; }
static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }
static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* ceil(n x f), saturating */
static uint64_t frac_ceil(uint64_t n, anl_frac f)
{
    anl_u128 x = (anl_u128)n * f.num;
    return sat64(x / f.den + (x % f.den != 0));
}

/* The number of lines n with ceil(n x f) <= t: floor(t x den / num). */
static uint64_t frac_count(uint64_t t, anl_frac f) { return sat64((anl_u128)t * f.den / f.num); }

static int frac_less(anl_frac a, anl_frac b) { return (anl_u128)a.num * b.den < (anl_u128)b.num * a.den; }

/* a x mul / div, reduced; precision dropped (deterministically) only if it would not fit 64 bits */
static anl_frac frac_scale(anl_frac a, uint64_t mul, uint64_t div)
{
    uint64_t g = gcd64(mul, div);
    mul /= g;
    div /= g;
    anl_u128 n = (anl_u128)a.num * mul, d = (anl_u128)a.den * div;
    while (n > UINT64_MAX || d > UINT64_MAX) {
        n >>= 1;
        d >>= 1;
    }
    anl_frac r = { (uint64_t)n ? (uint64_t)n : 1, (uint64_t)d ? (uint64_t)d : 1 };
    g = gcd64(r.num, r.den);
    r.num /= g;
    r.den /= g;
    return r;
}

/* Add n lines of latency `cycles` to a histogram: hist_add (hw/hls/stats.c) n times, in O(1). */
static void hist_add_n(cxl_hist *h, uint64_t cycles, uint64_t n)
{
    if (!n)
        return;
    h->count += n;
    h->sum += cycles * n;
    if (cycles > h->max)
        h->max = cycles;
    if (cycles < CXL_HIST_LINEAR) {
        h->linear[cycles] += (uint32_t)n;
        return;
    }
    uint32_t k = 0;
    uint64_t lim = (uint64_t)CXL_HIST_LINEAR << 1;
    while (k + 1 < CXL_HIST_LOG && cycles >= lim) {
        k++;
        lim <<= 1;
    }
    h->log[k] += (uint32_t)n;
}

/* Writes among lines [0, n) of a rd:wr mix, as the requester interleaves them (requester.c: line i is a
 * write iff floor((i+1) w / t) > floor(i w / t)). */
static uint64_t writes_upto(uint64_t n, uint32_t rd, uint32_t wr)
{
    return (uint64_t)((anl_u128)n * wr / (rd + wr));
}

/* ---- the model's two figures ---- */

/* Idle latency of one 64 B read, row-miss case (bank precharged), in cycles: the fixed path latencies.
 * A link crossing is one flit's serialization plus the PHY, each way; a switch adds its hop and a second
 * link, each way. */
static uint64_t idle_latency(const cxl_params *p)
{
    uint64_t lat = (uint64_t)p->host_req_cycles + p->host_rsp_cycles + p->ctrl.req_latency_cycles +
                   p->ctrl.rsp_latency_cycles + p->dram.tRCD + p->dram.tCL + p->dram.tBL;
    if (p->link_present) {
        lat += 2ull * (p->link.ser_cycles + p->link.phy_cycles);
        if (p->sw.present)
            lat += 2ull * (p->sw.hop_cycles + p->link.ser_cycles + p->link.phy_cycles);
    }
    return lat;
}

/* Cycles per 64 B line a device sustains: the slower of
 *   link: one 68 B flit carries 64 B of payload; a flit takes flit_cost / flit_inc cycles
 *         (lane rate x width x 128/130, devcfg.c), at most one flit per cycle as in link.c;
 *   DRAM: each channel (DDR5 subchannel) moves 64 B per tBL cycles on its data bus. */
static anl_frac device_line_time(const cxl_params *p)
{
    anl_frac dram = { p->dram.tBL, p->dram.channels };
    uint64_t g = gcd64(dram.num, dram.den);
    dram.num /= g;
    dram.den /= g;
    if (!p->link_present)
        return dram;
    anl_frac link = { p->link.flit_cost, p->link.flit_inc };
    if (link.num < link.den)
        link.num = link.den = 1;
    return frac_less(link, dram) ? dram : link;
}

/* The model's peak (backend.h): every device serves one line per device_line_time cycles, the only
 * resource it models, so no stretch of time moves more than that. */
double cxl_analytical_peak_Bps(const cxl_params *p)
{
    if (!p->clk_khz || !p->dram.channels || !p->dram.tBL || (p->link_present && (!p->link.flit_cost || !p->link.flit_inc)))
        return 0;
    anl_frac line = device_line_time(p);
    return (double)CXL_LINE_BYTES * (double)p->devices * (double)line.den / (double)line.num * (double)p->clk_khz *
           1e3;
}

/* ---- address split across pooled devices (hw/hls/switch.c: dev = (addr >> shift) & (D - 1)) ---- */

/* Lines in [0, x) that map to device k. */
static uint64_t lines_below(const anl *a, uint64_t x, uint32_t k)
{
    uint32_t sh = a->shift, b = a->dev_bits;
    uint64_t per = 1ull << (sh - 6); /* lines per interleave granule */
    uint64_t n = (x >> (sh + b)) * per;
    uint64_t o = x & ((1ull << (sh + b)) - 1);
    uint64_t gi = o >> sh;
    if (k < gi)
        n += per;
    else if (k == gi)
        n += (o & ((1ull << sh) - 1)) / CXL_LINE_BYTES;
    return n;
}

static uint64_t lines_in(const anl *a, uint64_t lo, uint64_t hi, uint32_t k)
{
    return lines_below(a, hi, k) - lines_below(a, lo, k);
}

/* Lines of descriptor d on each device. Sequential: exact (whole passes over the footprint plus the
 * start of one more). Random and strided: the footprint's share of each device, largest remainder to
 * the lowest device index. */
static void split_lines(const anl *a, const cxl_desc *d, uint64_t lines, uint64_t out[CXL_MAX_DEVS])
{
    memset(out, 0, sizeof(uint64_t) * CXL_MAX_DEVS);
    if (a->ndev == 1) {
        out[0] = lines;
        return;
    }
    uint64_t fp = d->footprint ? d->footprint : d->bytes;
    uint64_t fl = fp / CXL_LINE_BYTES;
    uint64_t lo = d->base, hi = add_sat(d->base, fp);
    if (d->pattern == CXL_PAT_SEQ) {
        uint64_t full = lines / fl, rem = lines % fl;
        for (uint32_t k = 0; k < a->ndev; k++)
            out[k] = full * lines_in(a, lo, hi, k) + lines_in(a, lo, lo + rem * CXL_LINE_BYTES, k);
        return;
    }
    uint64_t given = 0;
    for (uint32_t k = 0; k < a->ndev; k++) {
        out[k] = (uint64_t)((anl_u128)lines * lines_in(a, lo, hi, k) / fl);
        given += out[k];
    }
    for (uint32_t k = 0; given < lines; k = (k + 1) % a->ndev)
        if (lines_in(a, lo, hi, k)) {
            out[k]++;
            given++;
        }
}

/* ---- events ---- */

static anl_slot *slot_at(anl_req *r, uint32_t off) { return &r->q[(r->head + off) % CXL_DESCQ]; }

/* Activation cycle of requester r's next descriptor, or ANL_NEVER (none queued, or one still active). */
static uint64_t activation_time(anl_req *r)
{
    if (r->next >= r->count)
        return ANL_NEVER;
    anl_slot *s = slot_at(r, r->next);
    if (s->state != ANL_QUEUED)
        return ANL_NEVER;
    return max64(max64(s->d.not_before, s->submitted), r->free_at);
}

/* The next cycle something happens: a completion, an activation, or a device decision (device k is free
 * and some active job on it has a chunk ready). One pass over the requesters. */
static uint64_t next_event(anl *a)
{
    uint64_t t = ANL_NEVER, ready[CXL_MAX_DEVS];
    for (uint32_t k = 0; k < a->ndev; k++)
        ready[k] = ANL_NEVER;
    for (uint32_t r = 0; r < a->nreq; r++) {
        anl_req *q = &a->req[r];
        if (!q->count)
            continue;
        if (slot_at(q, 0)->state == ANL_SERVED)
            t = min64(t, slot_at(q, 0)->done_at);
        if (q->next >= q->count)
            continue;
        anl_slot *s = slot_at(q, q->next);
        if (s->state == ANL_QUEUED)
            t = min64(t, activation_time(q));
        else if (s->state == ANL_ACTIVE)
            for (uint32_t k = 0; k < a->ndev; k++)
                if (s->job[k].served < s->job[k].lines)
                    ready[k] = min64(ready[k], s->job[k].ready);
    }
    for (uint32_t k = 0; k < a->ndev; k++)
        if (ready[k] != ANL_NEVER)
            t = min64(t, max64(ready[k], a->dev[k].free));
    return t;
}

static void activate(anl_req *q, uint64_t t)
{
    anl_slot *s = slot_at(q, q->next);
    s->state = ANL_ACTIVE;
    s->act = t;
    for (uint32_t k = 0; k < CXL_MAX_DEVS; k++) {
        anl_job *j = &s->job[k];
        j->pbase = j->ready = t;
        j->pn = j->served = 0;
        j->last_end = 0;
    }
}

static int push_rec(anl *a, const anl_rec *r, cxl_err *err)
{
    if (a->nrec == a->caprec) {
        size_t cap = a->caprec ? 2 * a->caprec : 256;
        anl_rec *n = realloc(a->rec, cap * sizeof *n);
        if (!n)
            return cxl_errf(err, CXL_ENOMEM, "analytical backend: out of memory for %zu chunks in flight", cap);
        a->rec = n;
        a->caprec = cap;
    }
    a->rec[a->nrec++] = *r;
    return 0;
}

/* Device k serves the next chunk of requester r's active descriptor at cycle t. */
static int serve(anl *a, uint32_t k, uint32_t r, uint64_t t, cxl_err *err)
{
    anl_req *q = &a->req[r];
    anl_slot *s = slot_at(q, q->next);
    anl_job *j = &s->job[k];
    anl_dev *dv = &a->dev[k];
    uint64_t m = min64(ANL_CHUNK_LINES, j->lines - j->served);
    /* FIFO wait: time lost to other descriptors, not to this one's own pace or previous chunk */
    uint64_t since = j->served ? max64(j->ready, j->last_end) : s->act;
    uint64_t wait = t > since ? t - since : 0;
    if (dv->free < t) { /* the device was idle: its clock restarts (idle time is not banked) */
        dv->base = t;
        dv->n = 0;
    }
    if (t > j->ready) { /* the descriptor was held back: its pace restarts */
        j->pbase = t;
        j->pn = 0;
    }
    anl_rec rec = { dv->base, dv->n, j->pbase, j->pn, j->pace, m, 0, j->served, wait, s->d.rd_weight,
                    s->d.wr_weight };
    if (rec.rd == 0 && rec.wr == 0)
        rec.rd = 1;
    int rc = push_rec(a, &rec, err);
    if (rc)
        return rc;
    dv->n += m;
    dv->free = add_sat(dv->base, frac_ceil(dv->n, a->line));
    j->pn += m;
    j->ready = add_sat(j->pbase, frac_ceil(j->pn, j->pace));
    j->last_end = dv->free;
    j->served += m;
    if (!s->started) {
        s->started = 1;
        s->start = t;
    }
    s->end = max64(s->end, max64(dv->free, j->ready));
    s->left -= m;
    if (!s->left) {
        s->state = ANL_SERVED;
        s->done_at = add_sat(s->end, a->lat);
        q->free_at = s->end;
        q->next++;
    }
    return 0;
}

/* Move lines that complete before cycle `limit` (done + lat < limit) into the statistics. */
static void account(anl *a, uint64_t limit)
{
    if (limit <= a->lat)
        return;
    uint64_t T = limit - 1 - a->lat; /* a line counts when its done cycle is <= T */
    size_t w = 0;
    for (size_t i = 0; i < a->nrec; i++) {
        anl_rec *r = &a->rec[i];
        uint64_t ce = T >= r->dbase ? frac_count(T - r->dbase, a->line) : 0;
        uint64_t cp = T >= r->pbase ? frac_count(T - r->pbase, r->pace) : 0;
        ce = ce > r->dn0 ? ce - r->dn0 : 0;
        cp = cp > r->pn0 ? cp - r->pn0 : 0;
        uint64_t n = min64(r->m, min64(ce, cp));
        if (n > r->counted) {
            uint64_t from = r->counted;
            if (from == 0) { /* the chunk's first line carries its FIFO wait */
                int w1 = writes_upto(r->k0 + 1, r->rd, r->wr) > writes_upto(r->k0, r->rd, r->wr);
                hist_add_n(w1 ? &a->st.write_lat : &a->st.read_lat, add_sat(a->lat, r->wait), 1);
                *(w1 ? &a->st.write_bytes : &a->st.read_bytes) += CXL_LINE_BYTES;
                from = 1;
            }
            uint64_t wr = writes_upto(r->k0 + n, r->rd, r->wr) - writes_upto(r->k0 + from, r->rd, r->wr);
            uint64_t rd = n - from - wr;
            a->st.read_bytes += rd * CXL_LINE_BYTES;
            a->st.write_bytes += wr * CXL_LINE_BYTES;
            hist_add_n(&a->st.read_lat, a->lat, rd);
            hist_add_n(&a->st.write_lat, a->lat, wr);
            r->counted = n;
        }
        if (r->counted < r->m)
            a->rec[w++] = *r;
    }
    a->nrec = w;
}

/* Everything that happens at cycle t (or is due by then): completions, then activations, then device
 * decisions.
 * Returns 1 when the completion buffer filled before t was done (t must be processed again). */
static int step(anl *a, uint64_t t, cxl_err *err, int *rc)
{
    for (uint32_t r = 0; r < a->nreq; r++) {
        anl_req *q = &a->req[r];
        if (!q->count)
            continue;
        anl_slot *s = slot_at(q, 0);
        if (s->state != ANL_SERVED || s->done_at > t)
            continue;
        if (a->comp_count == ANL_COMPS)
            return 1;
        cxl_completion *c = &a->comp[(a->comp_head + a->comp_count++) % ANL_COMPS];
        c->id = s->d.id;
        c->start_cycle = s->start;
        c->end_cycle = s->done_at;
        c->requester = s->d.requester;
        c->lines = (uint32_t)s->lines;
        q->head = (q->head + 1) % CXL_DESCQ;
        q->count--;
        q->next--;
    }
    for (uint32_t r = 0; r < a->nreq; r++)
        if (activation_time(&a->req[r]) <= t)
            activate(&a->req[r], t);
    for (uint32_t k = 0; k < a->ndev; k++) {
        /* while device k is free and a chunk is ready by t (its decision is due) */
        while (a->dev[k].free <= t) {
            /* the oldest descriptor with a chunk ready: smallest (activation cycle, submission order) */
            uint32_t best = a->nreq;
            for (uint32_t r = 0; r < a->nreq; r++) {
                anl_req *q = &a->req[r];
                if (q->next >= q->count)
                    continue;
                anl_slot *s = slot_at(q, q->next);
                if (s->state != ANL_ACTIVE || s->job[k].served >= s->job[k].lines || s->job[k].ready > t)
                    continue;
                if (best == a->nreq) {
                    best = r;
                    continue;
                }
                anl_slot *b = slot_at(&a->req[best], a->req[best].next);
                if (s->act < b->act || (s->act == b->act && s->seq < b->seq))
                    best = r;
            }
            if (best == a->nreq)
                break;
            *rc = serve(a, k, best, t, err);
            if (*rc)
                return 0;
        }
    }
    if (a->nrec > 4096)
        account(a, t);
    return 0;
}

/* ---- backend interface ---- */

static int anl_open(cxl_backend *b, const cxl_params *p, cxl_err *err)
{
    if (!p->clk_khz || !p->dram.channels || !p->dram.tBL || (p->link_present && (!p->link.flit_cost || !p->link.flit_inc)))
        return cxl_errf(err, CXL_ECONFIG, "analytical backend: parameters without a clock, DRAM channels, tBL or link rate");
    if (!p->requesters || p->requesters > CXL_MAX_REQ || !p->devices || p->devices > CXL_MAX_DEVS ||
        (p->devices & (p->devices - 1)))
        return cxl_errf(err, CXL_ELIMIT, "analytical backend: %u requesters (valid: 1-%u) and %u devices (valid: 1, 2, 4)",
                        p->requesters, CXL_MAX_REQ, p->devices);
    if (p->devices > 1 && (p->sw.interleave_shift < 6 || p->sw.interleave_shift + p->sw.dev_bits > 62 ||
                           (1u << p->sw.dev_bits) != p->devices))
        return cxl_errf(err, CXL_ECONFIG, "analytical backend: interleave shift %u / %u device bits do not describe %u devices",
                        p->sw.interleave_shift, p->sw.dev_bits, p->devices);
    if (!idle_latency(p))
        return cxl_errf(err, CXL_ECONFIG, "analytical backend: the path has no latency at all (every latency is 0)");
    anl *a = calloc(1, sizeof *a);
    if (!a)
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the analytical backend (%zu bytes)", sizeof *a);
    a->lat = idle_latency(p);
    a->line = device_line_time(p);
    a->ndev = p->devices;
    a->nreq = p->requesters;
    a->dev_bits = p->sw.dev_bits;
    a->shift = p->sw.interleave_shift;
    b->impl = a;
    return 0;
}

static int anl_submit(cxl_backend *b, const cxl_desc *d, size_t n, cxl_err *err)
{
    anl *a = b->impl;
    uint32_t need[CXL_MAX_REQ] = { 0 };
    for (size_t i = 0; i < n; i++)
        if (d[i].requester >= a->nreq || ++need[d[i].requester] + a->req[d[i].requester].count > CXL_DESCQ)
            return cxl_errf(err, CXL_ELIMIT, "descriptor %llu: requester %u has no room (queue of %u)",
                            (unsigned long long)d[i].id, d[i].requester, CXL_DESCQ);
    for (size_t i = 0; i < n; i++) {
        anl_req *q = &a->req[d[i].requester];
        anl_slot *s = slot_at(q, q->count++);
        memset(s, 0, sizeof *s);
        s->d = d[i];
        s->seq = a->seq++;
        s->submitted = a->now;
        s->lines = s->left = d[i].bytes / CXL_LINE_BYTES;
        /* the descriptor's own cap, cycles per line: gap_cycles, and max_outstanding lines per lat */
        anl_frac cap = { a->lat, d[i].max_outstanding ? d[i].max_outstanding : 1 };
        anl_frac gap = { d[i].gap_cycles, 1 };
        if (d[i].gap_cycles && frac_less(cap, gap))
            cap = gap;
        uint64_t per[CXL_MAX_DEVS];
        split_lines(a, &d[i], s->lines, per);
        for (uint32_t k = 0; k < a->ndev; k++) {
            s->job[k].lines = per[k];
            /* a device's share of the descriptor's rate is its share of the lines */
            if (per[k])
                s->job[k].pace = frac_scale(cap, s->lines, per[k]);
        }
    }
    return 0;
}

static uint32_t anl_space(cxl_backend *b, uint32_t r)
{
    anl *a = b->impl;
    return r < a->nreq ? CXL_DESCQ - a->req[r].count : 0;
}

static int anl_advance(cxl_backend *b, uint64_t until, int stop, cxl_err *err)
{
    anl *a = b->impl;
    int rc = 0;
    while (a->now < until) {
        if ((stop && a->comp_count) || a->comp_count >= ANL_COMPS)
            break;
        uint64_t t = max64(next_event(a), a->now);
        if (t >= until) {
            a->now = until;
            break;
        }
        if (step(a, t, err, &rc)) {
            a->now = t; /* buffer full: finish cycle t after the caller polls */
            break;
        }
        if (rc)
            break;
        a->now = t + 1;
    }
    account(a, a->now);
    return rc;
}

static uint64_t anl_now(cxl_backend *b) { return ((anl *)b->impl)->now; }

static size_t anl_poll(cxl_backend *b, cxl_completion *out, size_t max)
{
    anl *a = b->impl;
    size_t n = 0;
    while (n < max && a->comp_count) {
        out[n++] = a->comp[a->comp_head];
        a->comp_head = (a->comp_head + 1) % ANL_COMPS;
        a->comp_count--;
    }
    return n;
}

/* Filled, at line granularity (a line counts in the cycle it completes): cycles, read/write bytes, and
 * the latency histograms. Each line records lat; the first line of each 4 KiB chunk records lat plus the
 * time the chunk waited in the device FIFO for other descriptors (the rest of the chunk follows it at its
 * own pace), so the mean is lat + total FIFO wait / lines and the tail shows the waits. Zero: link,
 * device and switch counters (no flits, DRAM commands or queues exist in this model). */
static int anl_stats(cxl_backend *b, cxl_stats *out, cxl_err *err)
{
    (void)err;
    anl *a = b->impl;
    account(a, a->now);
    a->st.cycles = a->now;
    memcpy(out, &a->st, sizeof *out);
    return 0;
}

static int anl_counters(cxl_backend *b, cxl_counters *out, cxl_err *err)
{
    (void)err;
    anl *a = b->impl;
    account(a, a->now);
    out->cycles = a->now;
    out->read_bytes = a->st.read_bytes;
    out->write_bytes = a->st.write_bytes;
    memcpy(out->dev, a->st.dev, sizeof out->dev);
    return 0;
}

static int anl_idle(cxl_backend *b)
{
    anl *a = b->impl;
    for (uint32_t r = 0; r < a->nreq; r++)
        if (a->req[r].count)
            return 0;
    return 1;
}

static void anl_close(cxl_backend *b)
{
    anl *a = b->impl;
    if (a)
        free(a->rec);
    free(a);
}

const cxl_backend_ops cxl_backend_analytical_ops = {
    "analytical", "", anl_open, anl_submit, anl_space, anl_advance, anl_now, anl_poll, anl_stats, anl_idle, anl_close,
    anl_counters,
};
