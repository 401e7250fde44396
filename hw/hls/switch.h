/* switch.h - a CXL switch between host ports (upstream) and Type-3 devices (downstream).
 *
 * Each port has an ingress queue per direction, filled by its link receiver and credited per class
 * (port_queue credits of each class; the queue holds both classes), and an egress queue (port_queue
 * entries) that its link transmitter drains. A message entering at cycle t may leave its ingress queue
 * from t + hop_cycles (the traversal latency). Routing, done on entry:
 *   M2S: device = (addr >> interleave_shift) mod devices; the device bits are removed from the address;
 *        in a partitioned pool the host port (the LD-ID of a multi-logical device) is placed at bit
 *        ld_shift, so every host owns one partition of each device; in a shared pool it is not.
 *   S2M: to the host port in the message (its LD-ID).
 * Each cycle (switch_tick) every egress port, M2S downstream ports 0..D-1 then S2M upstream ports
 * 0..H-1, takes at most one message from the ingress heads routed to it: round-robin from the port after
 * the last one served, or oldest first (earliest ready cycle, then lowest port). An ingress port forwards
 * at most one message per cycle; a head whose egress queue is full waits (counted in switch_stall).
 * Leaving an ingress queue returns the message's credit to that port's link. The switch stores and
 * forwards: a data message enters only when its last chunk has arrived (link_rx delivers it then).
 * Ingress queues are plain FIFOs (no virtual output queues): a head waiting for a full egress port
 * blocks the messages behind it, as in a switch without VOQs.
 */
#ifndef CXL_SWITCH_H
#define CXL_SWITCH_H

#include <stdint.h>

#include "link.h"
#include "pipe.h"

typedef struct cxl_switch {
    cxl_pipe up_in[CXL_MAX_HOSTS];   /* M2S from host links */
    cxl_pipe dn_out[CXL_MAX_DEVS];   /* M2S to device links */
    cxl_pipe dn_in[CXL_MAX_DEVS];    /* S2M from device links */
    cxl_pipe up_out[CXL_MAX_HOSTS];  /* S2M to host links */
    uint32_t rr_dn[CXL_MAX_DEVS], rr_up[CXL_MAX_HOSTS];
} cxl_switch;

void switch_init(cxl_switch *s, const cxl_params *p);
/* A message arrived from a link at `now`: route it (M2S: set dev, translate the address) and queue it. */
int switch_ingress_m2s(cxl_switch *s, const cxl_params *p, uint32_t host, cxl_msg m, uint64_t now);
int switch_ingress_s2m(cxl_switch *s, const cxl_params *p, uint32_t dev, const cxl_msg *m, uint64_t now);
/* One cycle of forwarding. Credits go back to host link h's M2S direction (up_m2s[h]) and device link
 * d's S2M direction (dn_s2m[d]). */
void switch_tick(cxl_switch *s, const cxl_params *p, uint64_t now, cxl_link_dir *up_m2s, cxl_link_dir *dn_s2m,
                 cxl_stats *st);
int switch_idle(const cxl_switch *s, const cxl_params *p);

#endif
