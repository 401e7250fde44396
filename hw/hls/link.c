#include "link.h"

/* Slot formats usable by CXL.mem, as counts of {Req, RwD, DRS, NDR} (CXL 3.x Tables 4-7, 4-8). A format
 * is packed one class per 4-bit field (class k in bits 4k..4k+3); every count is at most 3. */
#define SLOT_FMT(req, rwd, drs, ndr) \
    ((uint32_t)(req) | (uint32_t)(rwd) << 4 | (uint32_t)(drs) << 8 | (uint32_t)(ndr) << 12)

static const uint32_t m2s_h[] = { SLOT_FMT(0, 1, 0, 0) /* H4 */, SLOT_FMT(1, 0, 0, 0) /* H5 */ };
static const uint32_t m2s_g[] = { SLOT_FMT(1, 0, 0, 0) /* G4 */, SLOT_FMT(0, 1, 0, 0) /* G5 */ };
static const uint32_t s2m_h[] = { SLOT_FMT(0, 0, 0, 1) /* H0 */, SLOT_FMT(0, 0, 1, 1) /* H3 */,
                                  SLOT_FMT(0, 0, 0, 2) /* H4 */, SLOT_FMT(0, 0, 2, 0) /* H5 */ };
static const uint32_t s2m_g[] = { SLOT_FMT(0, 0, 1, 2) /* G4 */, SLOT_FMT(0, 0, 0, 2) /* G5 */,
                                  SLOT_FMT(0, 0, 3, 0) /* G6 */ };
/* Per-flit maxima (spec 4.2.4): 2 M2S Req, 1 M2S RwD, 3 S2M DRS, 2 S2M NDR. */
static const uint8_t flit_max[CXL_NCLASS] = { 2, 1, 3, 2 };

#define CHUNKS_PER_LINE 4u
#define DATA_CLASSES (1u << CXL_M2S_RWD | 1u << CXL_S2M_DRS)
#define FIELD_GUARD 0x8888u  /* bit 3 of each 4-bit field */

/* The classes c for which a slot already holding the packed counts cnt can take one more message of
 * class c: some format of the slot holds cnt plus one c, i.e. holds cnt (every field f_k >= cnt_k) and
 * has f_c > cnt_c. Per field, (f | 8) - cnt = 8 + f_k - cnt_k never borrows (counts are at most 3):
 * bit 3 is set iff f_k >= cnt_k, and then the low 3 bits are f_k - cnt_k. */
static uint32_t fmt_addable(const uint32_t *t, uint32_t n, uint32_t cnt)
{
    uint32_t room = 0;
fmt_scan:
    for (uint32_t f = 0; f < n; f++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* slot formats per table */
        uint32_t d = (t[f] | FIELD_GUARD) - cnt;
        if ((d & FIELD_GUARD) == FIELD_GUARD) /* the format holds cnt */
            room |= d & ~FIELD_GUARD;         /* nonzero fields: classes it has room for */
    }
    room |= room >> 1;
    room |= room >> 2;
    room &= 0x1111u;
    return (room & 1u) | (room >> 3 & 2u) | (room >> 6 & 4u) | (room >> 9 & 8u);
}

static int has_data(uint32_t cls) { return cls == CXL_M2S_RWD || cls == CXL_S2M_DRS; }

void link_init(cxl_link_dir *l, uint32_t dir, const cxl_link_params *p, const uint32_t credits[CXL_NCLASS])
{
    l->dir = dir;
    l->cost = (int64_t)p->flit_cost;
    l->inc = (int64_t)p->flit_inc;
    l->acc = l->inc; /* an idle link may start a flit at once */
    l->latency = p->ser_cycles + p->phy_cycles;
    credit_init(&l->cr, credits, p->credit_return_cycles);
    l->owed_head = l->owed_count = l->owed_left = l->owed_chunks = 0;
    l->fl_head = l->fl_count = 0;
    l->rr = 0;
}

/* Send one owed data chunk; a data message whose last chunk goes is delivered with this flit. */
static void send_chunk(cxl_link_dir *l, cxl_flight *f)
{
    l->owed_left--;
    l->owed_chunks--;
    if (l->owed_left == 0) {
        f->done[f->n++] = l->owed[l->owed_head];
        l->owed_head = (l->owed_head + 1) % CXL_OWED_MAX;
        l->owed_count--;
        l->owed_left = l->owed_count ? CHUNKS_PER_LINE : 0;
    }
}

#define READY_STALE 0x80000000u /* *ready unknown: a source was popped since it was taken */

/* Classes of the ready source heads (bit c: some source's head is ready and of class c). */
static uint32_t ready_classes(uint64_t now, cxl_pipe *const *src, uint32_t nsrc)
{
    uint32_t ready = 0;
link_heads:
    for (uint32_t s = 0; s < nsrc; s++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ sources */
        ready |= pipe_ready_cls_bit(src[s], now);
    }
    return ready;
}

/* Classes holding a credit. */
static uint32_t credit_classes(const cxl_credits *c)
{
    return (uint32_t)(c->avail[0] != 0) | (uint32_t)(c->avail[1] != 0) << 1 |
           (uint32_t)(c->avail[2] != 0) << 2 | (uint32_t)(c->avail[3] != 0) << 3;
}

/* What the slots of the flit being built share. */
typedef struct flit_build {
    const uint32_t *fmt[2];       /* slot formats: [0] generic, [1] header */
    uint32_t nfmt[2];
    uint32_t cnt[CXL_NCLASS];     /* messages of each class in the flit */
    uint32_t full;                /* classes at their per-flit maximum */
    uint32_t stalled;             /* classes whose ready head found no credit */
    uint32_t ready;               /* classes of the ready source heads, or READY_STALE */
} flit_build;

/* Fill one header-carrying slot from the sources: scan the ready heads in round-robin order from l->rr;
 * each header placed moves l->rr past its source and restarts the scan there (so a source may place
 * again only after every other source had its turn). Returns the number of headers placed.
 * A round is the scan of every source once (from the one after the last placed). Nothing changes
 * within a round until a header is placed: a head of class c is placed iff c fits the slot, is below its
 * per-flit maximum and (data) has room among the owed messages (mask allow), and holds a credit;
 * otherwise, when c is in allow, it only records a credit stall. A round that could do neither for any
 * class of a ready head (b->ready, while known: a source popped since makes it stale) would change
 * nothing and is skipped. */
static uint32_t fill_slot(cxl_link_dir *l, uint64_t now, int header_slot, cxl_pipe *const *src, uint32_t nsrc,
                          flit_build *b, cxl_flight *f, cxl_link_stats *st)
{
    uint32_t slot_cnt = 0; /* packed as the formats */
    uint32_t placed = 0;
    if (nsrc == 0)
        return 0;
    uint32_t pos = l->rr % nsrc;
slot_rounds:
    while (placed < 3) { /* at most 3 messages share a slot (G6) */
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 3 /* messages per slot */
        uint32_t allow = fmt_addable(b->fmt[header_slot], b->nfmt[header_slot], slot_cnt) & ~b->full;
        if (l->owed_count >= CXL_OWED_MAX)
            allow &= ~DATA_CLASSES;
        uint32_t useful = allow & (credit_classes(&l->cr) | ~b->stalled);
        if (!useful)
            break;
        if (!(b->ready & READY_STALE) && !(b->ready & useful))
            break; /* (with b->ready stale, the round itself finds out) */
        uint32_t hit = nsrc, seen = 0;
    slot_scan:
        for (uint32_t scanned = 0; scanned < nsrc; scanned++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ sources */
            uint32_t s = pos;
            pos = s + 1 == nsrc ? 0 : s + 1;
            const cxl_msg *m = pipe_ready(src[s], now);
            if (!m)
                continue;
            uint32_t c = m->cls;
            seen |= 1u << c;
            if (!(allow >> c & 1))
                continue;
            if (!credit_have(&l->cr, c)) {
                b->stalled |= 1u << c;
                continue;
            }
            credit_take(&l->cr, c);
            slot_cnt += 1u << (4 * c);
            b->cnt[c]++;
            if (b->cnt[c] + 1 > flit_max[c])
                b->full |= 1u << c;
            st->msgs[c]++;
            if (has_data(c)) {
                l->owed[(l->owed_head + l->owed_count) % CXL_OWED_MAX] = *m;
                if (l->owed_count == 0)
                    l->owed_left = CHUNKS_PER_LINE;
                l->owed_count++;
                l->owed_chunks += CHUNKS_PER_LINE;
            } else {
                f->done[f->n++] = *m;
            }
            pipe_pop(src[s]);
            l->rr = pos;
            hit = s;
            break;
        }
        if (hit == nsrc) {
            b->ready = seen; /* a round without a placement saw every source's head */
            break;
        }
        placed++;
        b->ready = READY_STALE; /* the popped source has a new head (or none) */
    }
    return placed;
}

/* Kept out of line on the host so that link_tx's test of the wire, which fails on most calls, runs
 * without this function's prologue (no effect on synthesis). */
#if defined(__GNUC__) && !defined(__SYNTHESIS__)
#define LINK_OUT_OF_LINE __attribute__((noinline))
#else
#define LINK_OUT_OF_LINE
#endif

/* link_tx once the wire is free during this cycle (acc > 0). */
static LINK_OUT_OF_LINE int tx_free(cxl_link_dir *l, uint64_t now, cxl_pipe *const *src, uint32_t nsrc,
                                    cxl_link_stats *st)
{
    uint32_t d = l->dir;
    if (l->fl_count >= CXL_MAX_FLIGHT)
        return 0; /* cannot happen with validated parameters */

    cxl_flight *f = &l->fl[(l->fl_head + l->fl_count) % CXL_MAX_FLIGHT];
    f->n = 0;
    uint32_t used = 0;
    if (l->owed_chunks > 3) {
        /* all-data flit: the only flit without a header slot */
    all_data:
        for (uint32_t s = 0; s < CXL_FLIT_SLOTS; s++)
            send_chunk(l, f);
        used = CXL_FLIT_SLOTS;
        st->data_flits[d]++;
    } else {
        flit_build b;
        if (l->owed_chunks == 0) {
            /* Fast path, same outcome as the full build: with no owed data and no ready head that holds
             * a credit, no flit goes; heads waiting for credits count as stalls. */
            b.ready = ready_classes(now, src, nsrc);
            if (!(b.ready & credit_classes(&l->cr))) {
                for (uint32_t k = 0; k < CXL_NCLASS; k++)
                    st->credit_stall[k] += b.ready >> k & 1;
                return 0;
            }
        } else {
            b.ready = READY_STALE;
        }
        int m2s = d == CXL_DIR_M2S;
        b.fmt[0] = m2s ? m2s_g : s2m_g;
        b.nfmt[0] = m2s ? sizeof m2s_g / sizeof m2s_g[0] : sizeof s2m_g / sizeof s2m_g[0];
        b.fmt[1] = m2s ? m2s_h : s2m_h;
        b.nfmt[1] = m2s ? sizeof m2s_h / sizeof m2s_h[0] : sizeof s2m_h / sizeof s2m_h[0];
        b.cnt[0] = b.cnt[1] = b.cnt[2] = b.cnt[3] = 0;
        b.full = b.stalled = 0;
        /* a class whose per-flit maximum is 0 can never be placed */
        for (uint32_t k = 0; k < CXL_NCLASS; k++)
            if (flit_max[k] == 0)
                b.full |= 1u << k;
        used += fill_slot(l, now, 1, src, nsrc, &b, f, st) ? 1 : 0;
    generic_slots:
        for (uint32_t s = 1; s < CXL_FLIT_SLOTS; s++) {
            if (l->owed_chunks) {
                send_chunk(l, f);
                used++;
            } else if (fill_slot(l, now, 0, src, nsrc, &b, f, st)) {
                used++;
            }
        }
        for (uint32_t k = 0; k < CXL_NCLASS; k++)
            st->credit_stall[k] += b.stalled >> k & 1;
        if (used == 0)
            return 0; /* nothing to send: the link idles (control flits are not modelled) */
    }
    st->flits[d]++;
    st->slots_used[d] += used;
    l->acc -= l->cost;
    f->arrive = now + l->latency;
    l->fl_count++;
    return 1;
}

int link_tx(cxl_link_dir *l, uint64_t now, cxl_pipe *const *src, uint32_t nsrc, cxl_link_stats *st)
{
    l->acc += l->inc;
    if (l->acc > l->inc)
        l->acc = l->inc;
    if (l->acc <= 0)
        return 0;
    return tx_free(l, now, src, nsrc, st);
}

uint32_t link_rx(cxl_link_dir *l, uint64_t now, cxl_msg *out)
{
    if (!l->fl_count || l->fl[l->fl_head].arrive > now)
        return 0;
    const cxl_flight *f = &l->fl[l->fl_head];
    uint32_t n = f->n;
link_deliver:
    for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 8 /* CXL_FLIT_MAXDONE */
#pragma HLS PIPELINE II = 1
        out[i] = f->done[i];
    }
    l->fl_head = (l->fl_head + 1) % CXL_MAX_FLIGHT;
    l->fl_count--;
    return n;
}
