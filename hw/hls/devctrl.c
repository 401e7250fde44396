#include "devctrl.h"

void devctrl_init(cxl_devctrl *c, const cxl_params *p)
{
    pipe_init(&c->ing_req, p->ctrl.ingress_depth);
    pipe_init(&c->ing_rwd, p->ctrl.ingress_depth);
    pipe_init(&c->proc, CXL_MAX_FIFO);
    pipe_init(&c->rsp_drs, CXL_MAX_FIFO);
    pipe_init(&c->rsp_ndr, CXL_MAX_FIFO);
    for (uint32_t i = 0; i < CXL_MAX_CH; i++)
        c->rsv_rd[i] = c->rsv_wr[i] = 0;
    c->rsp_reserved = 0;
    dram_init(&c->dram, &p->dram);
}

static uint8_t devload(const cxl_devctrl *c, const cxl_ctrl_params *p)
{
    uint32_t occ = pipe_count(&c->ing_req) + pipe_count(&c->ing_rwd);
    if (occ < p->devload_optimal)
        return 0;
    if (occ < p->devload_moderate)
        return 1;
    if (occ < p->devload_severe)
        return 2;
    return 3;
}

static void respond(cxl_devctrl *c, const cxl_params *p, const cxl_msg *req, uint32_t cls, uint64_t now,
                    cxl_dev_stats *st)
{
    cxl_msg r = *req;
    r.cls = (uint8_t)cls;
    r.devload = devload(c, &p->ctrl);
    st->devload[r.devload]++;
    pipe_push(cls == CXL_S2M_DRS ? &c->rsp_drs : &c->rsp_ndr, &r, now + p->ctrl.rsp_latency_cycles);
}

void devctrl_tick(cxl_devctrl *c, const cxl_params *p, uint64_t now, cxl_credits *m2s_credits,
                  cxl_dev_stats *st)
{
    /* 1. accept one message from ingress */
    const cxl_msg *hr = pipe_ready(&c->ing_req, now);
    const cxl_msg *hw = pipe_ready(&c->ing_rwd, now);
    if (hr || hw) {
        int take_w;
        if (hr && hw)
            take_w = c->ing_rwd.ready[c->ing_rwd.head] < c->ing_req.ready[c->ing_req.head];
        else
            take_w = hw != 0;
        cxl_pipe *q = take_w ? &c->ing_rwd : &c->ing_req;
        const cxl_msg *m = take_w ? hw : hr;
        uint32_t ch = dram_channel_of(&p->dram, m->addr);
        uint32_t used = take_w ? c->rsv_wr[ch] : c->rsv_rd[ch];
        if (dram_space(&c->dram, &p->dram, ch, take_w) > used && pipe_space(&c->proc)) {
            pipe_push(&c->proc, m, now + p->ctrl.req_latency_cycles);
            if (take_w)
                c->rsv_wr[ch]++;
            else
                c->rsv_rd[ch]++;
            pipe_pop(q);
            if (m2s_credits)
                credit_return(m2s_credits, take_w ? CXL_M2S_RWD : CXL_M2S_REQ, now);
        }
    }
    /* 2. processing done: into the DRAM controller */
    const cxl_msg *m = pipe_ready(&c->proc, now);
    /* a write's NDR needs a response-queue entry; without one the pipe head waits */
    if (m && (m->cls != CXL_M2S_RWD || c->rsp_reserved < p->ctrl.response_depth)) {
        uint32_t ch = dram_channel_of(&p->dram, m->addr);
        int w = m->cls == CXL_M2S_RWD;
        if (w)
            c->rsv_wr[ch]--;
        else
            c->rsv_rd[ch]--;
        dram_enqueue(&c->dram, &p->dram, m, now);
        if (w) {
            respond(c, p, m, CXL_S2M_NDR, now, st);
            c->rsp_reserved++;
        }
        pipe_pop(&c->proc);
    }
    /* 3. DRAM */
    cxl_msg done[CXL_MAX_CH];
    uint32_t room = p->ctrl.response_depth - c->rsp_reserved;
    uint32_t room0 = room;
    uint32_t n = dram_tick(&c->dram, &p->dram, now, done, st, &room);
    c->rsp_reserved += room0 - room; /* reads issued now own a response entry for their data */
dev_done:
    for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH: one read per channel */
        respond(c, p, &done[i], CXL_S2M_DRS, now, st);
    }
    uint32_t occ = pipe_count(&c->ing_req) + pipe_count(&c->ing_rwd);
    st->ingress_occ_sum += occ;
    if (occ > st->ingress_occ_max)
        st->ingress_occ_max = occ;
    st->dramq_occ_sum += dram_occupancy(&c->dram, &p->dram);
}

int devctrl_idle(const cxl_devctrl *c, const cxl_params *p)
{
    uint32_t rd = 0;
    for (uint32_t ch = 0; ch < p->dram.channels; ch++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
        rd += c->dram.ch[ch].rd_count;
    }
    return c->rsp_reserved == 0 && !pipe_count(&c->ing_req) && !pipe_count(&c->ing_rwd) && rd == 0 &&
           dram_occupancy(&c->dram, &p->dram) == 0;
}
