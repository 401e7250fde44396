/* axi_mem.h - host memory as an AXI4 slave: what answers a kernel's m_axi master (on a card: the
 * shell's memory controller and the card's DDR/HBM, which the host fills and reads back over PCIe).
 *
 * One flat byte array at device addresses [base, base + size); the host side carves buffers out of it
 * (axi_mem_alloc, 4 KiB aligned, never freed: a backend allocates its few buffers once) and reads and
 * writes them directly (axi_mem_host, like a mapped buffer object). The AXI side takes 64-bit INCR bursts
 * (AxSIZE 3) of up to 256 beats, at most AXI_MEM_QUEUE bursts queued per direction; every channel is
 * answered without wait states (AR/AW ready while the queue has room, one R beat per clock from the clock
 * after AR, W ready once its AW was taken, B the clock after WLAST). A beat outside the memory, or a
 * size or burst type other than these, is answered SLVERR and leaves the memory untouched; the first
 * such address is kept for the error message.
 *
 * Each clock: axi_mem_drive() gives the slave's signals, the design is clocked, axi_mem_update() takes
 * the master's signals and the slave's as they were before the edge. No state outside the struct.
 */
#ifndef CXLSIM_AXI_MEM_H
#define CXLSIM_AXI_MEM_H

#include <stdint.h>

/* master to slave */
typedef struct axi_m2s {
    uint8_t awvalid, awlen, awsize, awburst;
    uint64_t awaddr;
    uint8_t wvalid, wlast, wstrb;
    uint64_t wdata;
    uint8_t bready;
    uint8_t arvalid, arlen, arsize, arburst;
    uint64_t araddr;
    uint8_t rready;
} axi_m2s;

/* slave to master */
typedef struct axi_s2m {
    uint8_t awready, wready, bvalid, bresp, arready, rvalid, rresp, rlast;
    uint64_t rdata;
} axi_s2m;

#define AXI_MEM_QUEUE 8u
#define AXI_OKAY 0u
#define AXI_SLVERR 2u
/* Protocol faults the slave can be told to commit, so tests see the kernel's simulation checks fire. */
#define AXI_FAULT_RLAST 1u   /* RLAST on every read beat, not only a burst's last */

typedef struct axi_burst {
    uint64_t addr;       /* next beat */
    uint32_t beats;      /* beats left */
    uint8_t ok;          /* size and burst type supported */
    uint8_t resp;        /* write: worst response of its beats so far */
} axi_burst;

typedef struct axi_mem {
    uint8_t *bytes;
    uint64_t base, size, used;
    axi_burst rq[AXI_MEM_QUEUE];   /* read bursts being answered, oldest first */
    uint32_t rq_head, rq_count;
    axi_burst wq[AXI_MEM_QUEUE];   /* write bursts waiting for data */
    uint32_t wq_head, wq_count;
    uint8_t bq[AXI_MEM_QUEUE];     /* write responses to send */
    uint32_t bq_head, bq_count;
    uint64_t read_beats, write_beats;
    uint32_t fault;                /* AXI_FAULT_* to inject (tests of the kernel's protocol checks) */
    int bad;                       /* a beat was answered SLVERR */
    uint64_t bad_addr;             /* the first such beat's address */
} axi_mem;

/* 0, or -1 when the memory cannot be allocated. */
int axi_mem_init(axi_mem *m, uint64_t base, uint64_t size);
void axi_mem_free(axi_mem *m);
/* A buffer of `bytes` (4 KiB aligned); its device address, 0 when the memory is full. */
uint64_t axi_mem_alloc(axi_mem *m, uint64_t bytes);
/* The host's view of [addr, addr + len), NULL when outside the memory. */
void *axi_mem_host(axi_mem *m, uint64_t addr, uint64_t len);
void axi_mem_drive(const axi_mem *m, axi_s2m *s);
void axi_mem_update(axi_mem *m, const axi_m2s *o, const axi_s2m *s);
/* Nothing accepted and not yet answered. */
int axi_mem_quiet(const axi_mem *m);

#endif
