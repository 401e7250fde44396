#include "axi_mem.h"

#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

int axi_mem_init(axi_mem *m, uint64_t base, uint64_t size)
{
    memset(m, 0, sizeof *m);
    m->bytes = calloc(1, size);
    if (!m->bytes)
        return -1;
    m->base = base;
    m->size = size;
    return 0;
}

void axi_mem_free(axi_mem *m)
{
    free(m->bytes);
    m->bytes = NULL;
}

uint64_t axi_mem_alloc(axi_mem *m, uint64_t bytes)
{
    uint64_t len = (bytes + PAGE - 1) / PAGE * PAGE;
    if (len == 0)
        len = PAGE;
    if (len > m->size - m->used)
        return 0;
    uint64_t addr = m->base + m->used;
    m->used += len;
    return addr;
}

void *axi_mem_host(axi_mem *m, uint64_t addr, uint64_t len)
{
    if (addr < m->base || addr - m->base > m->size || len > m->size - (addr - m->base))
        return NULL;
    return m->bytes + (addr - m->base);
}

/* one 8-byte beat: a pointer into the memory, or NULL (SLVERR) */
static uint8_t *beat(axi_mem *m, const axi_burst *b)
{
    uint8_t *p = b->ok ? axi_mem_host(m, b->addr, 8) : NULL;
    if (!p && !m->bad) {
        m->bad = 1;
        m->bad_addr = b->addr;
    }
    return p;
}

static uint64_t load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void axi_mem_drive(const axi_mem *m, axi_s2m *s)
{
    memset(s, 0, sizeof *s);
    s->arready = m->rq_count < AXI_MEM_QUEUE;
    s->awready = m->wq_count + m->bq_count < AXI_MEM_QUEUE;
    s->wready = m->wq_count > 0;
    if (m->rq_count) {
        const axi_burst *b = &m->rq[m->rq_head];
        /* drive is const: look the beat up without recording an error (update records it) */
        const uint8_t *p = NULL;
        if (b->ok && b->addr >= m->base && b->addr - m->base <= m->size - 8 && m->size >= 8)
            p = m->bytes + (b->addr - m->base);
        s->rvalid = 1;
        s->rdata = p ? load64(p) : 0;
        s->rresp = p ? AXI_OKAY : AXI_SLVERR;
        s->rlast = b->beats == 1 || (m->fault & AXI_FAULT_RLAST);
    }
    if (m->bq_count) {
        s->bvalid = 1;
        s->bresp = m->bq[m->bq_head];
    }
}

static axi_burst burst(uint64_t addr, uint8_t len, uint8_t size, uint8_t type)
{
    axi_burst b = { addr, (uint32_t)len + 1, (uint8_t)(size == 3 && type == 1 && addr % 8 == 0), AXI_OKAY };
    return b;
}

void axi_mem_update(axi_mem *m, const axi_m2s *o, const axi_s2m *s)
{
    /* R: one beat when the master took it */
    if (s->rvalid && o->rready) {
        axi_burst *b = &m->rq[m->rq_head];
        (void)beat(m, b);
        m->read_beats++;
        b->addr += 8;
        if (--b->beats == 0) {
            m->rq_head = (m->rq_head + 1) % AXI_MEM_QUEUE;
            m->rq_count--;
        }
    }
    /* B */
    if (s->bvalid && o->bready) {
        m->bq_head = (m->bq_head + 1) % AXI_MEM_QUEUE;
        m->bq_count--;
    }
    /* W: into the oldest burst waiting for data */
    if (s->wready && o->wvalid) {
        axi_burst *b = &m->wq[m->wq_head];
        uint8_t *p = beat(m, b);
        if (p) {
            for (int i = 0; i < 8; i++)
                if (o->wstrb >> i & 1)
                    p[i] = (uint8_t)(o->wdata >> (8 * i));
        } else {
            b->resp = AXI_SLVERR;
        }
        m->write_beats++;
        b->addr += 8;
        /* WLAST ends the burst; a beat count that disagrees with AWLEN is the master's error */
        if (--b->beats == 0 || o->wlast) {
            if (b->beats != 0 || !o->wlast)
                b->resp = AXI_SLVERR;
            m->bq[(m->bq_head + m->bq_count) % AXI_MEM_QUEUE] = b->resp;
            m->bq_count++;
            m->wq_head = (m->wq_head + 1) % AXI_MEM_QUEUE;
            m->wq_count--;
        }
    }
    /* AR, AW */
    if (s->arready && o->arvalid) {
        m->rq[(m->rq_head + m->rq_count) % AXI_MEM_QUEUE] = burst(o->araddr, o->arlen, o->arsize, o->arburst);
        m->rq_count++;
    }
    if (s->awready && o->awvalid) {
        m->wq[(m->wq_head + m->wq_count) % AXI_MEM_QUEUE] = burst(o->awaddr, o->awlen, o->awsize, o->awburst);
        m->wq_count++;
    }
}

int axi_mem_quiet(const axi_mem *m) { return m->rq_count == 0 && m->wq_count == 0 && m->bq_count == 0; }
