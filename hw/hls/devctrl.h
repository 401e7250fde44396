/* devctrl.h - the CXL.mem device controller of a Type-3 expander (HDM-H), in front of its DRAM.
 *
 * Ingress: the M2S Req and M2S RwD queues, each ingress_depth entries, filled by the link receiver; their
 * depth is the ReqCrd / DataCrd pool the device advertises, so they never overflow (back-pressure is by
 * credits). Each cycle (devctrl_tick):
 *  1. accept: at most one message leaves ingress, the older of the two queue heads (equal ages: Req
 *     first), when its DRAM channel queue has room (counting those in processing) and the processing
 *     pipe has room; if the chosen head cannot move, the other queue's head is not tried. It enters the
 *     processing pipe (req_latency_cycles) and its credit goes back.
 *  2. the processing pipe's ready head enters the DRAM controller; a write is then complete for CXL
 *     (posted at the controller) and its NDR Cmp enters the response path. A write waits in the pipe
 *     while the response queue is full.
 *  3. the DRAM controller ticks; a RD command issues only with a free response-queue entry, which it
 *     holds from then on; each finished read becomes a DRS MemData.
 * The response queue (response_depth) thus holds NDRs and DRSs waiting for the link plus reads whose
 * data is on its way from the DRAM.
 * Responses wait rsp_latency_cycles, then compete for the S2M link from two queues (DRS, NDR). Each
 * S2M message carries DevLoad from the ingress occupancy when it was produced: light below
 * devload_optimal entries, optimal below devload_moderate, moderate below devload_severe, else severe.
 */
#ifndef CXL_DEVCTRL_H
#define CXL_DEVCTRL_H

#include <stdint.h>

#include "credit.h"
#include "dram.h"
#include "pipe.h"

typedef struct cxl_devctrl {
    cxl_pipe ing_req, ing_rwd;
    cxl_pipe proc;
    uint32_t rsv_rd[CXL_MAX_CH], rsv_wr[CXL_MAX_CH]; /* in the processing pipe, per channel */
    cxl_pipe rsp_drs, rsp_ndr;
    uint32_t rsp_reserved;      /* response-queue entries in use: queued NDR/DRS and reads in the DRAM */
    cxl_dram dram;
} cxl_devctrl;

void devctrl_init(cxl_devctrl *c, const cxl_params *p);
/* One cycle. m2s_credits (may be NULL: local path) receives the ingress credit returns. */
void devctrl_tick(cxl_devctrl *c, const cxl_params *p, uint64_t now, cxl_credits *m2s_credits,
                  cxl_dev_stats *st);
/* The S2M transmitter took n messages from the response queues. */
static inline void devctrl_sent(cxl_devctrl *c, uint32_t n) { c->rsp_reserved -= n; }
int devctrl_idle(const cxl_devctrl *c, const cxl_params *p);

#endif
