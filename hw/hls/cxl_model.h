/* cxl_model.h - the whole cycle-level CXL.mem model: requesters, host path, link, device controller,
 * DRAM; its state, and the one function that advances it.
 *
 * Topology now: one host port, one link, one Type-3 device (or, with link_present = 0, the local-DDR
 * reference path: requesters, host path and the DRAM controller, no link and no CXL controller). The
 * state arrays are sized for CXL_MAX_HOSTS / CXL_MAX_DEVS so a switch slots in without reshaping them.
 *
 * One model cycle, in this order (docs/cxl-model.md gives the full semantics):
 *   1. credit returns due this cycle become visible to both link transmitters
 *   2. the M2S receiver delivers the flit arriving now into the device's ingress queues
 *   3. the S2M receiver delivers into the host response path (credits return at once: the host
 *      consumes responses at line rate) which holds them host_rsp_cycles
 *   4. responses leaving the host response path complete at their requesters (completions emitted)
 *   5. the device controller ticks (accept, processing, DRAM)
 *   6. the S2M transmitter may send one flit
 *   7. requesters 0..n-1 each may issue one request into their host request path (host_req_cycles)
 *   8. the M2S transmitter may send one flit
 * Local path: step 8 is replaced by moving ready host-path heads (requesters in round-robin order from
 * the one after the last moved) into the controller's ingress, before step 5 of the next cycle.
 */
#ifndef CXL_MODEL_H
#define CXL_MODEL_H

#include <stdint.h>

#include "cxl_types.h"
#include "devctrl.h"
#include "link.h"
#include "requester.h"

#define CXL_COMPQ 1024u /* completions buffered inside the model between drains */

typedef struct cxl_model {
    cxl_params p;
    uint64_t now;
    cxl_requester req[CXL_MAX_REQ];
    cxl_pipe host_req[CXL_MAX_REQ];
    cxl_pipe host_rsp;
    uint32_t local_rr;
    cxl_link_dir m2s, s2m;
    cxl_devctrl dev;
    cxl_stats st;
    cxl_completion comp[CXL_COMPQ];
    uint32_t comp_head, comp_count;
    uint32_t model_error;       /* nonzero: an internal bound was exceeded (see cxl_model_error_str) */
} cxl_model;

/* Reset to cycle 0 with parameters p (validated by the caller: host/devparams.c). */
void cxl_model_init(cxl_model *m, const cxl_params *p);
/* Queue a descriptor; -1 when that requester's queue is full. */
int cxl_model_submit(cxl_model *m, const cxl_desc *d);
/* Advance until cycle `until` (exclusive: the model stops with now == until), or earlier once at least
 * one completion is buffered if stop_on_completion, or when the completion buffer is full. Idle
 * stretches are skipped exactly (nothing can happen until the next descriptor start or refresh). */
void cxl_model_run(cxl_model *m, uint64_t until, int stop_on_completion);
/* Take up to max buffered completions, oldest first. */
uint32_t cxl_model_drain(cxl_model *m, cxl_completion *out, uint32_t max);
/* Nothing queued or in flight anywhere. */
int cxl_model_idle(const cxl_model *m);
/* Cycles the model actually stepped (not skipped as idle). */

#endif
