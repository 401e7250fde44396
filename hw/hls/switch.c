#include "switch.h"

void switch_init(cxl_switch *s, const cxl_params *p)
{
    uint32_t q = p->sw.port_queue;
sw_init:
    for (uint32_t i = 0; i < CXL_MAX_HOSTS; i++) {
        pipe_init(&s->up_in[i], 2 * q);
        pipe_init(&s->up_out[i], q);
        s->rr_up[i] = 0;
    }
    for (uint32_t i = 0; i < CXL_MAX_DEVS; i++) {
        pipe_init(&s->dn_in[i], 2 * q);
        pipe_init(&s->dn_out[i], q);
        s->rr_dn[i] = 0;
    }
}

int switch_ingress_m2s(cxl_switch *s, const cxl_params *p, uint32_t host, cxl_msg m, uint64_t now)
{
    uint32_t sh = p->sw.interleave_shift, b = p->sw.dev_bits;
    m.dev = (uint8_t)((m.addr >> sh) & ((1u << b) - 1));
    uint64_t low = m.addr & ((1ull << sh) - 1);
    uint64_t local = ((m.addr >> (sh + b)) << sh) | low;
    if (p->sw.ld_shift) {
        local &= (1ull << p->sw.ld_shift) - 1;
        local |= (uint64_t)m.host << p->sw.ld_shift;
    }
    m.addr = local;
    return pipe_push(&s->up_in[host], &m, now + p->sw.hop_cycles);
}

int switch_ingress_s2m(cxl_switch *s, const cxl_params *p, uint32_t dev, const cxl_msg *m, uint64_t now)
{
    return pipe_push(&s->dn_in[dev], m, now + p->sw.hop_cycles);
}

/* Pick, for egress port `out`, one of the n ingress queues whose ready head is routed to it. */
static int pick(cxl_pipe *in, uint32_t n, uint32_t out, int to_dev, uint32_t arb, uint32_t rr, uint32_t used,
                uint64_t now)
{
    int best = -1;
    uint64_t best_t = 0;
sw_pick:
    for (uint32_t k = 0; k < n; k++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS / CXL_MAX_DEVS */
        uint32_t i = arb == CXL_ARB_RR ? (rr + k) % n : k;
        if (used >> i & 1)
            continue;
        const cxl_msg *m = pipe_ready(&in[i], now);
        if (!m || (to_dev ? m->dev : m->host) != out)
            continue;
        if (arb == CXL_ARB_RR)
            return (int)i;
        uint64_t t = in[i].ready[in[i].head];
        if (best < 0 || t < best_t) {
            best = (int)i;
            best_t = t;
        }
    }
    return best;
}

void switch_tick(cxl_switch *s, const cxl_params *p, uint64_t now, cxl_link_dir *up_m2s, cxl_link_dir *dn_s2m,
                 cxl_stats *st)
{
    uint32_t used = 0;
sw_m2s:
    for (uint32_t d = 0; d < p->devices; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        int u = pick(s->up_in, p->hosts, d, 1, p->sw.arbitration, s->rr_dn[d], used, now);
        if (u < 0)
            continue;
        if (!pipe_space(&s->dn_out[d])) {
            st->switch_stall++;
            continue;
        }
        const cxl_msg *m = pipe_head(&s->up_in[u]);
        pipe_push(&s->dn_out[d], m, now);
        credit_return(&up_m2s[u].cr, m->cls, now);
        pipe_pop(&s->up_in[u]);
        used |= 1u << u;
        s->rr_dn[d] = ((uint32_t)u + 1) % p->hosts;
    }
    used = 0;
sw_s2m:
    for (uint32_t h = 0; h < p->hosts; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
        int d = pick(s->dn_in, p->devices, h, 0, p->sw.arbitration, s->rr_up[h], used, now);
        if (d < 0)
            continue;
        if (!pipe_space(&s->up_out[h])) {
            st->switch_stall++;
            continue;
        }
        const cxl_msg *m = pipe_head(&s->dn_in[d]);
        pipe_push(&s->up_out[h], m, now);
        credit_return(&dn_s2m[d].cr, m->cls, now);
        pipe_pop(&s->dn_in[d]);
        used |= 1u << d;
        s->rr_up[h] = ((uint32_t)d + 1) % p->devices;
    }
}

int switch_idle(const cxl_switch *s, const cxl_params *p)
{
    for (uint32_t i = 0; i < p->hosts; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
        if (pipe_count(&s->up_in[i]) || pipe_count(&s->up_out[i]))
            return 0;
    }
    for (uint32_t i = 0; i < p->devices; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        if (pipe_count(&s->dn_in[i]) || pipe_count(&s->dn_out[i]))
            return 0;
    }
    return 1;
}
