/* axi_lite.h - the host's side of an AXI4-Lite control port: one register write or read at a time, as a
 * per-clock state machine (the CPU's MMIO access to a kernel's s_axi_control).
 *
 * Each clock the caller asks axil_drive() for the master's signals, clocks the design, and hands
 * axil_update() the slave's signals as they were before the edge; a handshake is valid && ready then.
 * A write sends AW, then W, then waits for B; a read sends AR, then waits for R. Responses other than
 * OKAY are kept in `resp`. No state outside the struct.
 */
#ifndef CXLSIM_AXI_LITE_H
#define CXLSIM_AXI_LITE_H

#include <stdint.h>

/* master to slave */
typedef struct axil_m2s {
    uint8_t awvalid, wvalid, bready, arvalid, rready;
    uint8_t wstrb;
    uint32_t awaddr, wdata, araddr;
} axil_m2s;

/* slave to master */
typedef struct axil_s2m {
    uint8_t awready, wready, bvalid, arready, rvalid;
    uint8_t bresp, rresp;
    uint32_t rdata;
} axil_s2m;

enum axil_phase { AXIL_IDLE = 0, AXIL_AW, AXIL_W, AXIL_B, AXIL_AR, AXIL_R };

typedef struct axil_master {
    enum axil_phase phase;
    uint32_t addr, wdata;
    uint32_t rdata;      /* the last read's data */
    uint8_t resp;        /* the last transaction's BRESP / RRESP (0 = OKAY) */
} axil_master;

void axil_init(axil_master *m);
/* Start a transaction; only when axil_busy() is 0. */
void axil_write(axil_master *m, uint32_t addr, uint32_t data);
void axil_read(axil_master *m, uint32_t addr);
int axil_busy(const axil_master *m);
/* The master's signals for the coming clock. */
void axil_drive(const axil_master *m, axil_m2s *o);
/* After the clock: o as driven, s the slave's signals before the edge. */
void axil_update(axil_master *m, const axil_m2s *o, const axil_s2m *s);

#endif
