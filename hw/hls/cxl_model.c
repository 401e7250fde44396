#include "cxl_model.h"

#include <string.h>

void cxl_model_init(cxl_model *m, const cxl_params *p)
{
    memset(&m->st, 0, sizeof m->st);
    m->p = *p;
    m->now = 0;
    m->idle_jumped = 0;
model_init_req:
    for (uint32_t r = 0; r < CXL_MAX_REQ; r++) {
        requester_init(&m->req[r], p->tags);
        pipe_init(&m->host_req[r], CXL_MAX_FIFO);
    }
    m->local_rr = 0;
    for (uint32_t h = 0; h < CXL_MAX_HOSTS; h++)
        m->host_nreq[h] = 0;
    for (uint32_t r = 0; r < p->requesters; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
        uint32_t h = p->req_host[r];
        m->host_reqs[h][m->host_nreq[h]++] = (uint8_t)r;
    }
    /* Credits each receiver advertises: a device its ingress depth, the switch port_queue per class,
     * a host its response buffers. */
    uint32_t dev_cr[CXL_NCLASS] = { p->link.m2s_req_credits, p->link.m2s_data_credits, 0, 0 };
    uint32_t host_cr[CXL_NCLASS] = { 0, 0, p->link.s2m_data_credits, p->link.s2m_rsp_credits };
    uint32_t q = p->sw.port_queue;
    uint32_t sw_m2s_cr[CXL_NCLASS] = { q, q, 0, 0 };
    uint32_t sw_s2m_cr[CXL_NCLASS] = { 0, 0, q, q };
model_init_links:
    for (uint32_t h = 0; h < CXL_MAX_HOSTS; h++) {
        pipe_init(&m->host_rsp[h], CXL_MAX_FIFO);
        link_init(&m->up_m2s[h], CXL_DIR_M2S, &p->link, p->sw.present ? sw_m2s_cr : dev_cr);
        link_init(&m->up_s2m[h], CXL_DIR_S2M, &p->link, host_cr);
    }
    for (uint32_t d = 0; d < CXL_MAX_DEVS; d++) {
        link_init(&m->dn_m2s[d], CXL_DIR_M2S, &p->link, dev_cr);
        link_init(&m->dn_s2m[d], CXL_DIR_S2M, &p->link, sw_s2m_cr);
        devctrl_init(&m->dev[d], p);
    }
    switch_init(&m->sw, p);
    m->comp_head = m->comp_count = 0;
    m->model_error = 0;
}

int cxl_model_submit(cxl_model *m, const cxl_desc *d)
{
    return requester_submit(&m->req[d->requester], d);
}

/* The link that carries M2S into device d and S2M out of it. */
static cxl_link_dir *dev_m2s(cxl_model *m, uint32_t d) { return m->p.sw.present ? &m->dn_m2s[d] : &m->up_m2s[0]; }
static cxl_link_dir *dev_s2m(cxl_model *m, uint32_t d) { return m->p.sw.present ? &m->dn_s2m[d] : &m->up_s2m[0]; }

static void to_ingress(cxl_model *m, uint32_t d, const cxl_msg *msg, uint64_t now)
{
    cxl_devctrl *c = &m->dev[d];
    if (pipe_push(msg->cls == CXL_M2S_RWD ? &c->ing_rwd : &c->ing_req, msg, now))
        m->model_error = 1;
}

static void model_cycle(cxl_model *m)
{
    const cxl_params *p = &m->p;
    uint64_t now = m->now;
    cxl_msg in[CXL_FLIT_MAXDONE];
    const uint32_t H = p->hosts, D = p->devices, sw = p->sw.present;

    if (p->link_present) {
        /* 1. credits */
    cr_tick:
        for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
            credit_tick(&m->up_m2s[h].cr, now);
            credit_tick(&m->up_s2m[h].cr, now);
        }
        if (sw)
            for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
                credit_tick(&m->dn_m2s[d].cr, now);
                credit_tick(&m->dn_s2m[d].cr, now);
            }
        /* 2. M2S into devices */
    rx_dev:
        for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
            uint32_t n = link_rx(dev_m2s(m, d), now, in);
            for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 8 /* CXL_FLIT_MAXDONE */
                to_ingress(m, d, &in[i], now);
            }
        }
        /* 3. S2M into hosts */
    rx_host:
        for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
            uint32_t n = link_rx(&m->up_s2m[h], now, in);
            for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 8 /* CXL_FLIT_MAXDONE */
                if (pipe_push(&m->host_rsp[h], &in[i], now + p->host_rsp_cycles))
                    m->model_error = 2;
                credit_return(&m->up_s2m[h].cr, in[i].cls, now);
            }
        }
        /* 4. into the switch */
        if (sw) {
        rx_sw:
            for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
                uint32_t n = link_rx(&m->up_m2s[h], now, in);
                for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 8 /* CXL_FLIT_MAXDONE */
                    if (switch_ingress_m2s(&m->sw, p, h, in[i], now))
                        m->model_error = 1;
                }
            }
            for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
                uint32_t n = link_rx(&m->dn_s2m[d], now, in);
                for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 8 /* CXL_FLIT_MAXDONE */
                    if (switch_ingress_s2m(&m->sw, p, d, &in[i], now))
                        m->model_error = 1;
                }
            }
        }
    }
    /* 5. responses reach their requesters */
host_complete:
    for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
        for (;;) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 256 /* CXL_MAX_FIFO */
            const cxl_msg *r = pipe_ready(&m->host_rsp[h], now);
            if (!r)
                break;
            cxl_completion c;
            if (requester_complete(&m->req[r->req], r->tag, now, &m->st, &c)) {
                if (m->comp_count < CXL_COMPQ) {
                    m->comp[(m->comp_head + m->comp_count) % CXL_COMPQ] = c;
                    m->comp_count++;
                } else {
                    m->model_error = 3;
                }
            }
            pipe_pop(&m->host_rsp[h]);
        }
    }
    /* local path: host request path straight into the controller's ingress */
    if (!p->link_present) {
    local_in:
        for (uint32_t k = 0, start = m->local_rr; k < p->requesters; k++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
            uint32_t r = (start + k) % p->requesters;
            const cxl_msg *q = pipe_ready(&m->host_req[r], now);
            if (!q)
                continue;
            cxl_pipe *dst = q->cls == CXL_M2S_RWD ? &m->dev[0].ing_rwd : &m->dev[0].ing_req;
            if (!pipe_space(dst))
                continue;
            pipe_push(dst, q, now);
            pipe_pop(&m->host_req[r]);
            m->local_rr = (r + 1) % p->requesters;
        }
    }
    /* 6. devices */
dev_tick:
    for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        devctrl_tick(&m->dev[d], p, now, p->link_present ? &dev_m2s(m, d)->cr : 0, &m->st.dev[d]);
    }
    /* 7. S2M transmit out of the devices (local path: straight to the host response path) */
    if (p->link_present) {
    tx_dev:
        for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
            cxl_pipe *src[2] = { &m->dev[d].rsp_drs, &m->dev[d].rsp_ndr };
            uint32_t before = pipe_count(src[0]) + pipe_count(src[1]);
            link_tx(dev_s2m(m, d), now, src, 2, &m->st.link[sw ? H + d : 0]);
            devctrl_sent(&m->dev[d], before - pipe_count(src[0]) - pipe_count(src[1]));
        }
    } else {
    local_out:
        for (uint32_t k = 0; k < 2; k++) {
            cxl_pipe *src = k ? &m->dev[0].rsp_ndr : &m->dev[0].rsp_drs;
            for (;;) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 256 /* CXL_MAX_FIFO */
                const cxl_msg *r = pipe_ready(src, now);
                if (!r)
                    break;
                if (pipe_push(&m->host_rsp[0], r, now + p->host_rsp_cycles))
                    m->model_error = 2;
                pipe_pop(src);
                devctrl_sent(&m->dev[0], 1);
            }
        }
    }
    /* 8. switch forwarding, then S2M transmit towards the hosts */
    if (sw) {
        /* credits go back to the links the messages came in on */
        switch_tick(&m->sw, p, now, m->up_m2s, m->dn_s2m, &m->st);
    tx_up:
        for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
            cxl_pipe *src[1] = { &m->sw.up_out[h] };
            link_tx(&m->up_s2m[h], now, src, 1, &m->st.link[h]);
        }
    }
    /* 9. requesters issue */
req_issue:
    for (uint32_t r = 0; r < p->requesters; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
        cxl_msg q;
        if (!requester_may_issue(&m->req[r]) || !pipe_space(&m->host_req[r]))
            continue;
        if (requester_issue(&m->req[r], r, p->req_host[r], now, &q))
            pipe_push(&m->host_req[r], &q, now + p->host_req_cycles);
    }
    /* 10. M2S transmit from the hosts, then (switch) towards the devices */
    if (p->link_present) {
    tx_host:
        for (uint32_t h = 0; h < H; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
            cxl_pipe *src[CXL_MAX_REQ];
            uint32_t n = m->host_nreq[h];
            for (uint32_t k = 0; k < n; k++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
                src[k] = &m->host_req[m->host_reqs[h][k]];
            }
            link_tx(&m->up_m2s[h], now, src, n, &m->st.link[h]);
        }
        if (sw) {
        tx_sw:
            for (uint32_t d = 0; d < D; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
                cxl_pipe *src[1] = { &m->sw.dn_out[d] };
                link_tx(&m->dn_m2s[d], now, src, 1, &m->st.link[H + d]);
            }
        }
    }
    m->now = now + 1;
    m->st.cycles++;
}

/* With nothing in flight anywhere, the first cycle at which something can happen: a descriptor's
 * next issue or a DRAM refresh deadline (credit returns and the link accumulators only saturate, which
 * the skip reproduces). Returns m->now when something is in flight. */
static uint64_t quiet_until(const cxl_model *m)
{
    const cxl_params *p = &m->p;
    uint64_t t = UINT64_MAX;
    for (uint32_t r = 0; r < p->requesters; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
        uint64_t q = requester_quiet_until(&m->req[r]);
        if (q <= m->now || pipe_count(&m->host_req[r]))
            return m->now;
        if (q < t)
            t = q;
    }
    for (uint32_t h = 0; h < p->hosts; h++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_HOSTS */
        if (pipe_count(&m->host_rsp[h]))
            return m->now;
        if (p->link_present && (!link_idle(&m->up_m2s[h]) || !link_idle(&m->up_s2m[h])))
            return m->now;
    }
    if (p->sw.present) {
        if (!switch_idle(&m->sw, p))
            return m->now;
        for (uint32_t d = 0; d < p->devices; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
            if (!link_idle(&m->dn_m2s[d]) || !link_idle(&m->dn_s2m[d]))
                return m->now;
        }
    }
    for (uint32_t d = 0; d < p->devices; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        if (!devctrl_idle(&m->dev[d], p))
            return m->now;
        for (uint32_t c = 0; c < p->dram.channels; c++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
            for (uint32_t r = 0; r < p->dram.ranks; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
                if (m->dev[d].dram.ch[c].ref_due[r] < t)
                    t = m->dev[d].dram.ch[c].ref_due[r];
            }
        }
    }
    return t;
}

int cxl_model_idle(const cxl_model *m)
{
    for (uint32_t r = 0; r < m->p.requesters; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
        if (m->req[r].count)
            return 0;
    }
    return quiet_until(m) > m->now;
}

/* k idle cycles of a link accumulator: acc + k*inc, clamped to inc (see link.h) */
static int64_t sat_add(int64_t acc, int64_t inc, uint64_t k)
{
    if (acc >= inc)
        return inc;
    uint64_t need = (uint64_t)((inc - acc + inc - 1) / inc);
    return k >= need ? inc : acc + (int64_t)k * inc;
}

/* Quiet but for refresh until at least t_stop (the next descriptor issue, or `until`): cross whole
 * refresh periods at once when every device's DRAM has settled into them (dram.h), stopping at least
 * one period before t_stop; the ordinary skip then takes the rest deadline by deadline. The time a run
 * takes is then proportional to its work, not to the idle cycles it waits (a not_before far ahead).
 * Returns the cycles crossed (0: not settled, or not worth it). */
static uint64_t idle_jump(cxl_model *m, uint64_t t_stop)
{
    const cxl_params *p = &m->p;
    uint64_t period = dram_idle_period(&p->dram);
    if (!period || t_stop <= m->now || (t_stop - m->now) / period < 3)
        return 0;
    uint32_t cmds[CXL_MAX_DEVS][CXL_MAX_CH];
    for (uint32_t d = 0; d < p->devices; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        if (!dram_idle_settled(&m->dev[d].dram, &p->dram, m->now, cmds[d]))
            return 0;
    }
    uint64_t k = (t_stop - m->now) / period - 1;
    for (uint32_t d = 0; d < p->devices; d++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_DEVS */
        dram_idle_jump(&m->dev[d].dram, &p->dram, m->now, k, cmds[d], &m->st.dev[d]);
    }
    m->idle_jumped += k * period;
    return k * period;
}

/* The first cycle at which a requester issues its next descriptor (quiet_until without the refreshes). */
static uint64_t requesters_quiet_until(const cxl_model *m)
{
    uint64_t t = UINT64_MAX;
    for (uint32_t r = 0; r < m->p.requesters; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_MAX_REQ */
        uint64_t q = requester_quiet_until(&m->req[r]);
        if (q < t)
            t = q;
    }
    return t;
}

/* k quiet cycles pass: the link accumulators saturate, nothing else changes */
static void idle_cycles(cxl_model *m, uint64_t k)
{
    for (uint32_t h = 0; h < CXL_MAX_HOSTS; h++) {
        m->up_m2s[h].acc = sat_add(m->up_m2s[h].acc, m->up_m2s[h].inc, k);
        m->up_s2m[h].acc = sat_add(m->up_s2m[h].acc, m->up_s2m[h].inc, k);
    }
    for (uint32_t d = 0; d < CXL_MAX_DEVS; d++) {
        m->dn_m2s[d].acc = sat_add(m->dn_m2s[d].acc, m->dn_m2s[d].inc, k);
        m->dn_s2m[d].acc = sat_add(m->dn_s2m[d].acc, m->dn_s2m[d].inc, k);
    }
    m->st.cycles += k;
    m->now += k;
}

void cxl_model_run(cxl_model *m, uint64_t until, int stop_on_completion)
{
    /* The cycle loop. Not pipelined: each model cycle reads what the previous one wrote in every unit
     * (queues, credits, bank timers), so iteration n+1 cannot start before n ends; the parallelism is
     * inside model_cycle (units, partitioned per requester, port and device: cxl_kernel.c). The
     * tripcount is the xrt backend's run length limit, 2^24 cycles (docs/xrt.md). */
model_run:
    while (m->now < until) {
#pragma HLS LOOP_TRIPCOUNT min = 1 max = 16777216
        if (stop_on_completion && m->comp_count)
            return;
        if (m->comp_count >= CXL_COMPQ)
            return;
        uint64_t t = quiet_until(m);
        if (t > m->now) {
            /* skip to the next thing that can happen, exactly; whole refresh periods at once when the
             * next descriptor is far away */
            uint64_t ev = requesters_quiet_until(m);
            uint64_t jumped = idle_jump(m, ev < until ? ev : until);
            if (t > until)
                t = until;
            idle_cycles(m, jumped ? jumped : t - m->now);
            continue;
        }
        model_cycle(m);
    }
}

uint32_t cxl_model_drain(cxl_model *m, cxl_completion *out, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && m->comp_count) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 1024 /* CXL_COMPQ */
#pragma HLS PIPELINE II = 1
        out[n++] = m->comp[m->comp_head];
        m->comp_head = (m->comp_head + 1) % CXL_COMPQ;
        m->comp_count--;
    }
    return n;
}
