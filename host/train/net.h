/* net.h - network links shared by concurrent flows, for the training engine.
 *
 * A link is one direction of a physical channel with a bandwidth (bytes per picosecond: NVLink out of a
 * GPU, a NIC's receive side, ...). A flow moves a number of bytes across one or more links at once (a
 * point-to-point send uses the sender's transmit and the receiver's receive link). Concurrent flows
 * share bandwidth max-min fairly (progressive filling, as in SimAI's and ASTRA-sim's analytical network
 * back ends): each flow's rate is limited by its most contended link, and bandwidth a limited flow
 * cannot use is redistributed among the others. This is the fluid model of TCP-like or credit-based
 * fair sharing; packet-level effects (congestion control dynamics, head-of-line blocking) are not
 * modelled.
 *
 * Time is integer picoseconds; remaining bytes and rates are doubles (deterministic: same operations in
 * the same order). A flow's completion time is its last rate change plus ceil(remaining / rate).
 *
 * Rates are recomputed only for the connected component (links joined by shared flows) touched by a
 * start or a finish, so the cost of a change is O(size of that component x its iterations), not of the
 * whole network. Each recomputation bumps the version of every flow whose rate it changed and lists the
 * flow in a "changed" set; the engine drains it with net_take_changed() and schedules one completion
 * event per changed flow at net_flow_eta(), carrying the version; net_flow_finish() with an outdated
 * version is a no-op (returns 0), which is how stale events are dropped.
 */
#ifndef CXLSIM_NET_H
#define CXLSIM_NET_H

#include <stdint.h>

#include "util/err.h"

#define NET_MAX_FLOW_LINKS 4

typedef struct net net;

int net_new(net **out, cxl_err *err);
void net_free(net *n);

/* A link of bytes_per_ps > 0; returns its id (>= 0) or CXL_ENOMEM / CXL_ECONFIG. */
int net_add_link(net *n, double bytes_per_ps, cxl_err *err);
uint32_t net_link_count(const net *n);

/* Start a flow of `bytes` (> 0) over 1..NET_MAX_FLOW_LINKS distinct links at time now_ps. `owner` is the
 * caller's tag, returned on completion. *flow_out receives the flow id. 0 or CXL_ENOMEM / CXL_ECONFIG. */
int net_flow_start(net *n, int64_t now_ps, double bytes, const uint32_t *links, uint32_t nlinks, uint32_t owner,
                   uint32_t *flow_out, cxl_err *err);
/* Completion time and version of an active flow under the current rates. */
int64_t net_flow_eta(const net *n, uint32_t flow);
uint32_t net_flow_version(const net *n, uint32_t flow);
/* The completion event of (flow, version) fired at now_ps: when the version is current, the flow ends
 * (its bandwidth is redistributed), *owner_out is set and 1 is returned; a stale version returns 0. */
int net_flow_finish(net *n, int64_t now_ps, uint32_t flow, uint32_t version, uint32_t *owner_out);

/* Flows whose rate changed since the last call: up to max ids into out; returns how many were written
 * and forgets them (call again while it returns max). */
uint32_t net_take_changed(net *n, uint32_t *out, uint32_t max);

/* Busy time and bytes carried per link so far (for reports and trace tracks). */
double net_link_bytes(const net *n, uint32_t link);
uint32_t net_link_active(const net *n, uint32_t link);
/* Sum of the current rates of the link's flows over its bandwidth, in [0, 1]. O(flows on the link). */
double net_link_utilisation(const net *n, uint32_t link);
/* The links of an active flow into out (NET_MAX_FLOW_LINKS entries); returns how many. */
uint32_t net_flow_links(const net *n, uint32_t flow, uint32_t *out);
/* Bytes the network model has allocated. */
uint64_t net_bytes(const net *n);
/* Total flows ever started. */
uint64_t net_flows_started(const net *n);

#endif
