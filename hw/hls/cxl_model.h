/* cxl_model.h - the whole cycle-level CXL.mem model: requesters, host paths, links, an optional
 * switch, device controllers, DRAM; its state, and the one function that advances it.
 *
 * Topologies:
 *   - direct: one host port, link 0 (host <-> device 0), one Type-3 device;
 *   - switch: H host ports, each with its link to the switch (up links 0..H-1), D devices, each with its
 *     link from the switch (down links 0..D-1); requester r belongs to host port req_host[r];
 *   - local (link_present = 0): the local-DDR reference path: requesters, host path and the memory
 *     controller of device 0, with its CXL processing latencies set to 0 by the host; no link.
 *
 * One model cycle, in this order (docs/cxl-model.md gives the full semantics):
 *   1. credit returns due this cycle become visible to every link transmitter
 *   2. down links (direct: link 0) deliver M2S flits into device ingress queues
 *   3. up links deliver S2M flits into their host's response path (credits return at once: hosts
 *      consume responses at line rate: the credit is returned on arrival and the device sees it
 *      credit_return_cycles later), which holds them host_rsp_cycles
 *   4. switch: up links deliver M2S into the switch, down links deliver S2M into the switch
 *   5. responses leaving the host response paths complete at their requesters (hosts 0..H-1)
 *   6. devices 0..D-1 tick (accept, processing, DRAM)
 *   7. S2M transmit of the device links (direct: link 0)
 *   8. switch: forward (switch.h), then S2M transmit of the up links
 *   9. requesters 0..n-1 each may issue one request into their host request path (host_req_cycles)
 *  10. M2S transmit of the up links (direct: link 0), sources: the host request paths of the host's
 *      requesters; switch: then M2S transmit of the down links from the switch egress queues
 * Local path: steps 7 and 10 are replaced: ready host-path heads move into the controller's ingress just
 * before step 6 (requesters visited once each, in order from the one after the last that moved in the
 * previous cycle), and ready responses move from the response queues (DRS, then NDR) into the host
 * response path just after it.
 */
#ifndef CXL_MODEL_H
#define CXL_MODEL_H

#include <stdint.h>

#include "cxl_types.h"
#include "devctrl.h"
#include "link.h"
#include "requester.h"
#include "switch.h"

#define CXL_COMPQ 1024u /* completions buffered inside the model between drains */

typedef struct cxl_model {
    cxl_params p;
    uint64_t now;
    cxl_requester req[CXL_MAX_REQ];
    cxl_pipe host_req[CXL_MAX_REQ];
    cxl_pipe host_rsp[CXL_MAX_HOSTS];
    uint32_t local_rr;
    uint8_t host_reqs[CXL_MAX_HOSTS][CXL_MAX_REQ]; /* the requesters of each host port, in order */
    uint32_t host_nreq[CXL_MAX_HOSTS];
    cxl_link_dir up_m2s[CXL_MAX_HOSTS], up_s2m[CXL_MAX_HOSTS]; /* host side (direct: the only link) */
    cxl_link_dir dn_m2s[CXL_MAX_DEVS], dn_s2m[CXL_MAX_DEVS];   /* switch to device */
    cxl_switch sw;
    cxl_devctrl dev[CXL_MAX_DEVS];
    cxl_stats st;
    cxl_completion comp[CXL_COMPQ];
    uint32_t comp_head, comp_count;
    uint32_t model_error;       /* nonzero: an internal bound was exceeded (1-3: which queue; a model bug) */
    uint64_t idle_jumped;       /* cycles crossed by whole refresh periods (not a statistic: for tests) */
} cxl_model;

/* Reset to cycle 0 with parameters p (validated by the caller: host/config/devcfg.c). */
void cxl_model_init(cxl_model *m, const cxl_params *p);
/* Queue a descriptor; -1 when that requester's queue is full. */
int cxl_model_submit(cxl_model *m, const cxl_desc *d);
/* Advance until cycle `until` (exclusive: the model stops with now == until), or earlier once at least
 * one completion is buffered if stop_on_completion, or when the completion buffer is full. Idle
 * stretches are skipped exactly (nothing can happen until the next descriptor start or refresh), and
 * long ones whole refresh periods at a time (dram.h, "idle fast-forward"), so a wait costs O(1). */
void cxl_model_run(cxl_model *m, uint64_t until, int stop_on_completion);
/* Take up to max buffered completions, oldest first. */
uint32_t cxl_model_drain(cxl_model *m, cxl_completion *out, uint32_t max);
/* Nothing queued or in flight anywhere. */
int cxl_model_idle(const cxl_model *m);

#endif
