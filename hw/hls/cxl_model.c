#include "cxl_model.h"

#include <string.h>

void cxl_model_init(cxl_model *m, const cxl_params *p)
{
    memset(&m->st, 0, sizeof m->st);
    m->p = *p;
    m->now = 0;
model_init_req:
    for (uint32_t r = 0; r < CXL_MAX_REQ; r++) {
        requester_init(&m->req[r], p->tags);
        pipe_init(&m->host_req[r], CXL_MAX_FIFO);
    }
    pipe_init(&m->host_rsp, CXL_MAX_FIFO);
    m->local_rr = 0;
    uint32_t m2s_cr[CXL_NCLASS] = { p->link.m2s_req_credits, p->link.m2s_data_credits, 0, 0 };
    uint32_t s2m_cr[CXL_NCLASS] = { 0, 0, p->link.s2m_data_credits, p->link.s2m_rsp_credits };
    link_init(&m->m2s, CXL_DIR_M2S, &p->link, m2s_cr);
    link_init(&m->s2m, CXL_DIR_S2M, &p->link, s2m_cr);
    devctrl_init(&m->dev, p);
    m->comp_head = m->comp_count = 0;
    m->model_error = 0;
}

int cxl_model_submit(cxl_model *m, const cxl_desc *d)
{
    return requester_submit(&m->req[d->requester], d);
}

static void model_cycle(cxl_model *m)
{
    const cxl_params *p = &m->p;
    uint64_t now = m->now;
    cxl_msg in[CXL_FLIT_MAXDONE];

    if (p->link_present) {
        credit_tick(&m->m2s.cr, now);
        credit_tick(&m->s2m.cr, now);
        /* 2. M2S arrivals into device ingress */
        uint32_t n = link_rx(&m->m2s, now, in);
    rx_m2s:
        for (uint32_t i = 0; i < n; i++)
            if (pipe_push(in[i].cls == CXL_M2S_RWD ? &m->dev.ing_rwd : &m->dev.ing_req, &in[i], now))
                m->model_error = 1;
        /* 3. S2M arrivals into the host response path */
        n = link_rx(&m->s2m, now, in);
    rx_s2m:
        for (uint32_t i = 0; i < n; i++) {
            if (pipe_push(&m->host_rsp, &in[i], now + p->host_rsp_cycles))
                m->model_error = 2;
            credit_return(&m->s2m.cr, in[i].cls, now);
        }
    }
    /* 4. responses reach their requesters */
host_complete:
    for (;;) {
        const cxl_msg *r = pipe_ready(&m->host_rsp, now);
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
        pipe_pop(&m->host_rsp);
    }
    /* local path: host request path straight into the controller's ingress */
    if (!p->link_present) {
    local_in:
        for (uint32_t k = 0; k < p->requesters; k++) {
            uint32_t r = (m->local_rr + k) % p->requesters;
            const cxl_msg *q = pipe_ready(&m->host_req[r], now);
            if (!q)
                continue;
            cxl_pipe *dst = q->cls == CXL_M2S_RWD ? &m->dev.ing_rwd : &m->dev.ing_req;
            if (!pipe_space(dst))
                continue;
            pipe_push(dst, q, now);
            pipe_pop(&m->host_req[r]);
            m->local_rr = (r + 1) % p->requesters;
        }
    }
    /* 5. device */
    devctrl_tick(&m->dev, p, now, p->link_present ? &m->m2s.cr : 0, &m->st.dev[0]);
    /* 6. S2M transmit (local path: responses go straight to the host response path) */
    if (p->link_present) {
        cxl_pipe *src[2] = { &m->dev.rsp_drs, &m->dev.rsp_ndr };
        uint32_t before = pipe_count(src[0]) + pipe_count(src[1]);
        link_tx(&m->s2m, now, src, 2, &m->st.link[0]);
        devctrl_sent(&m->dev, before - pipe_count(src[0]) - pipe_count(src[1]));
    } else {
    local_out:
        for (uint32_t k = 0; k < 2; k++) {
            cxl_pipe *src = k ? &m->dev.rsp_ndr : &m->dev.rsp_drs;
            for (;;) {
                const cxl_msg *r = pipe_ready(src, now);
                if (!r)
                    break;
                if (pipe_push(&m->host_rsp, r, now + p->host_rsp_cycles))
                    m->model_error = 2;
                pipe_pop(src);
                devctrl_sent(&m->dev, 1);
            }
        }
    }
    /* 7. requesters issue */
req_issue:
    for (uint32_t r = 0; r < p->requesters; r++) {
        cxl_msg q;
        if (!pipe_space(&m->host_req[r]))
            continue;
        if (requester_issue(&m->req[r], r, p->req_host[r], now, &q))
            pipe_push(&m->host_req[r], &q, now + p->host_req_cycles);
    }
    /* 8. M2S transmit */
    if (p->link_present) {
        cxl_pipe *src[CXL_MAX_REQ];
        for (uint32_t r = 0; r < p->requesters; r++)
            src[r] = &m->host_req[r];
        link_tx(&m->m2s, now, src, p->requesters, &m->st.link[0]);
    }
    m->now = now + 1;
    m->st.cycles++;
}

/* With nothing in flight anywhere, the first cycle at which something can happen: a descriptor's
 * not_before or a DRAM refresh deadline (credit returns and the link accumulators only saturate, which
 * the skip reproduces). Returns m->now when something is in flight. */
static uint64_t quiet_until(const cxl_model *m)
{
    const cxl_params *p = &m->p;
    uint64_t t = UINT64_MAX;
    for (uint32_t r = 0; r < p->requesters; r++) {
        uint64_t q = requester_quiet_until(&m->req[r]);
        if (q <= m->now || pipe_count(&m->host_req[r]))
            return m->now;
        if (q < t)
            t = q;
    }
    if (pipe_count(&m->host_rsp))
        return m->now;
    if (p->link_present && (!link_idle(&m->m2s) || !link_idle(&m->s2m)))
        return m->now;
    if (!devctrl_idle(&m->dev, p))
        return m->now;
    for (uint32_t c = 0; c < p->dram.channels; c++)
        for (uint32_t r = 0; r < p->dram.ranks; r++)
            if (m->dev.dram.ch[c].ref_due[r] < t)
                t = m->dev.dram.ch[c].ref_due[r];
    return t;
}

int cxl_model_idle(const cxl_model *m)
{
    for (uint32_t r = 0; r < m->p.requesters; r++)
        if (m->req[r].count)
            return 0;
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

void cxl_model_run(cxl_model *m, uint64_t until, int stop_on_completion)
{
model_run:
    while (m->now < until) {
        if (stop_on_completion && m->comp_count)
            return;
        if (m->comp_count >= CXL_COMPQ)
            return;
        uint64_t t = quiet_until(m);
        if (t > m->now) {
            /* skip to the next thing that can happen, exactly */
            if (t > until)
                t = until;
            uint64_t k = t - m->now;
            m->m2s.acc = sat_add(m->m2s.acc, m->m2s.inc, k);
            m->s2m.acc = sat_add(m->s2m.acc, m->s2m.inc, k);
            m->st.cycles += k;
            m->now = t;
            continue;
        }
        model_cycle(m);
    }
}

uint32_t cxl_model_drain(cxl_model *m, cxl_completion *out, uint32_t max)
{
    uint32_t n = 0;
    while (n < max && m->comp_count) {
        out[n++] = m->comp[m->comp_head];
        m->comp_head = (m->comp_head + 1) % CXL_COMPQ;
        m->comp_count--;
    }
    return n;
}
