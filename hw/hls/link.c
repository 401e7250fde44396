#include "link.h"

/* Slot formats usable by CXL.mem, as counts of {Req, RwD, DRS, NDR} (CXL 3.x Tables 4-7, 4-8). */
typedef struct { uint8_t n[CXL_NCLASS]; } slot_fmt;

static const slot_fmt m2s_h[] = { { { 0, 1, 0, 0 } } /* H4 */, { { 1, 0, 0, 0 } } /* H5 */ };
static const slot_fmt m2s_g[] = { { { 1, 0, 0, 0 } } /* G4 */, { { 0, 1, 0, 0 } } /* G5 */ };
static const slot_fmt s2m_h[] = { { { 0, 0, 0, 1 } } /* H0 */, { { 0, 0, 1, 1 } } /* H3 */,
                                  { { 0, 0, 0, 2 } } /* H4 */, { { 0, 0, 2, 0 } } /* H5 */ };
static const slot_fmt s2m_g[] = { { { 0, 0, 1, 2 } } /* G4 */, { { 0, 0, 0, 2 } } /* G5 */,
                                  { { 0, 0, 3, 0 } } /* G6 */ };
/* Per-flit maxima (spec 4.2.4): 2 M2S Req, 1 M2S RwD, 3 S2M DRS, 2 S2M NDR. */
static const uint8_t flit_max[CXL_NCLASS] = { 2, 1, 3, 2 };

#define CHUNKS_PER_LINE 4u

static int fmt_fits(uint32_t dir, int header_slot, const uint32_t cnt[CXL_NCLASS])
{
    const slot_fmt *t;
    uint32_t n;
    if (dir == CXL_DIR_M2S) {
        t = header_slot ? m2s_h : m2s_g;
        n = header_slot ? sizeof m2s_h / sizeof m2s_h[0] : sizeof m2s_g / sizeof m2s_g[0];
    } else {
        t = header_slot ? s2m_h : s2m_g;
        n = header_slot ? sizeof s2m_h / sizeof s2m_h[0] : sizeof s2m_g / sizeof s2m_g[0];
    }
fmt_scan:
    for (uint32_t f = 0; f < n; f++) {
        int ok = 1;
        for (uint32_t k = 0; k < CXL_NCLASS; k++)
            if (cnt[k] > t[f].n[k])
                ok = 0;
        if (ok)
            return 1;
    }
    return 0;
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

/* Fill one header-carrying slot from the sources: scan the ready heads in round-robin order from l->rr;
 * each header placed moves l->rr past its source and restarts the scan there (so a source may place
 * again only after every other source had its turn). Returns the number of headers placed. */
static uint32_t fill_slot(cxl_link_dir *l, uint64_t now, int header_slot, cxl_pipe *const *src, uint32_t nsrc,
                          uint32_t flit_cnt[CXL_NCLASS], uint32_t stalled[CXL_NCLASS], cxl_flight *f,
                          cxl_link_stats *st)
{
    uint32_t slot_cnt[CXL_NCLASS] = { 0, 0, 0, 0 };
    uint32_t placed = 0;
    uint32_t pos = l->rr, scanned = 0;
slot_scan:
    while (scanned < nsrc && placed < 3) { /* at most 3 messages share a slot (G6) */
        uint32_t s = pos % nsrc;
        pos = s + 1;
        scanned++;
        const cxl_msg *m = pipe_ready(src[s], now);
        if (!m)
            continue;
        uint32_t c = m->cls;
        if (flit_cnt[c] + 1 > flit_max[c])
            continue;
        slot_cnt[c]++;
        int fits = fmt_fits(l->dir, header_slot, slot_cnt);
        slot_cnt[c]--;
        if (!fits)
            continue;
        if (has_data(c) && l->owed_count >= CXL_OWED_MAX)
            continue;
        if (!credit_have(&l->cr, c)) {
            stalled[c] = 1;
            continue;
        }
        credit_take(&l->cr, c);
        slot_cnt[c]++;
        flit_cnt[c]++;
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
        l->rr = pos % nsrc;
        scanned = 0; /* a new round starts after the source just served */
        placed++;
    }
    return placed;
}

int link_tx(cxl_link_dir *l, uint64_t now, cxl_pipe *const *src, uint32_t nsrc, cxl_link_stats *st)
{
    uint32_t d = l->dir;
    l->acc += l->inc;
    if (l->acc > l->inc)
        l->acc = l->inc;
    if (l->acc <= 0)
        return 0;
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
        uint32_t flit_cnt[CXL_NCLASS] = { 0, 0, 0, 0 };
        uint32_t stalled[CXL_NCLASS] = { 0, 0, 0, 0 };
        if (l->owed_chunks == 0) {
            /* Fast path, same outcome as the full build: with no owed data and no ready head that holds
             * a credit, no flit goes; heads waiting for credits count as stalls. */
            uint32_t ready = 0;
        link_heads:
            for (uint32_t s = 0; s < nsrc; s++) {
                const cxl_msg *m = pipe_ready(src[s], now);
                if (m)
                    ready |= 1u << m->cls;
            }
            uint32_t sendable = 0;
            for (uint32_t k = 0; k < CXL_NCLASS; k++)
                if ((ready >> k & 1) && credit_have(&l->cr, k))
                    sendable = 1;
            if (!sendable) {
                for (uint32_t k = 0; k < CXL_NCLASS; k++)
                    st->credit_stall[k] += ready >> k & 1;
                return 0;
            }
        }
        used += fill_slot(l, now, 1, src, nsrc, flit_cnt, stalled, f, st) ? 1 : 0;
    generic_slots:
        for (uint32_t s = 1; s < CXL_FLIT_SLOTS; s++) {
            if (l->owed_chunks) {
                send_chunk(l, f);
                used++;
            } else if (fill_slot(l, now, 0, src, nsrc, flit_cnt, stalled, f, st)) {
                used++;
            }
        }
        for (uint32_t k = 0; k < CXL_NCLASS; k++)
            st->credit_stall[k] += stalled[k];
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

uint32_t link_rx(cxl_link_dir *l, uint64_t now, cxl_msg *out)
{
    if (!l->fl_count || l->fl[l->fl_head].arrive > now)
        return 0;
    const cxl_flight *f = &l->fl[l->fl_head];
    uint32_t n = f->n;
link_deliver:
    for (uint32_t i = 0; i < n; i++)
        out[i] = f->done[i];
    l->fl_head = (l->fl_head + 1) % CXL_MAX_FLIGHT;
    l->fl_count--;
    return n;
}
