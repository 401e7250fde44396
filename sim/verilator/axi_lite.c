#include "axi_lite.h"

#include <string.h>

void axil_init(axil_master *m) { memset(m, 0, sizeof *m); }

void axil_write(axil_master *m, uint32_t addr, uint32_t data)
{
    m->phase = AXIL_AW;
    m->addr = addr;
    m->wdata = data;
    m->resp = 0;
}

void axil_read(axil_master *m, uint32_t addr)
{
    m->phase = AXIL_AR;
    m->addr = addr;
    m->resp = 0;
}

int axil_busy(const axil_master *m) { return m->phase != AXIL_IDLE; }

void axil_drive(const axil_master *m, axil_m2s *o)
{
    memset(o, 0, sizeof *o);
    o->awvalid = m->phase == AXIL_AW;
    o->awaddr = m->addr;
    o->wvalid = m->phase == AXIL_W;
    o->wdata = m->wdata;
    o->wstrb = 0xf;
    o->bready = m->phase == AXIL_B;
    o->arvalid = m->phase == AXIL_AR;
    o->araddr = m->addr;
    o->rready = m->phase == AXIL_R;
}

void axil_update(axil_master *m, const axil_m2s *o, const axil_s2m *s)
{
    switch (m->phase) {
    case AXIL_AW:
        if (o->awvalid && s->awready)
            m->phase = AXIL_W;
        break;
    case AXIL_W:
        if (o->wvalid && s->wready)
            m->phase = AXIL_B;
        break;
    case AXIL_B:
        if (o->bready && s->bvalid) {
            m->resp = s->bresp;
            m->phase = AXIL_IDLE;
        }
        break;
    case AXIL_AR:
        if (o->arvalid && s->arready)
            m->phase = AXIL_R;
        break;
    case AXIL_R:
        if (o->rready && s->rvalid) {
            m->rdata = s->rdata;
            m->resp = s->rresp;
            m->phase = AXIL_IDLE;
        }
        break;
    case AXIL_IDLE:
        break;
    }
}
