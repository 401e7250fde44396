/* link.h - one direction of a CXL link in 68 B flit mode: flit packing, credits, serialization, PHY.
 *
 * Transmit (link_tx, once per cycle): the wire is modelled in exact rational time. A flit takes
 * flit_cost / flit_inc cycles on the wire. acc = (end of this cycle - the moment the wire frees) x
 * flit_inc: each cycle adds flit_inc, clamped to flit_inc (a wire idle since before this cycle frees at
 * its start). When acc > 0 the wire frees during this cycle and, if there is anything to send, one flit
 * starts (at the later of that moment and the cycle's start) and acc pays flit_cost. Back-to-back flits
 * thus start at fractional times and the rate is exactly flit_inc / flit_cost flits per cycle, with
 * no rounding loss; each flit's start is reported in the cycle during which it starts. Packing follows CXL 3.x section 4.2 (68 B flits): slot 0 is a header slot
 * (formats H*), slots 1-3 are generic (G*); data chunks owed by headers already sent take the next
 * available slots in header order; more than 3 owed chunks make the next flit an all-data flit. Only the
 * CXL.mem slot formats are used (the CXL.cache parts of mixed formats stay empty):
 *   M2S  H4: 1 RwD   H5: 1 Req   G4: 1 Req   G5: 1 RwD
 *   S2M  H0: 1 NDR   H3: 1 DRS + 1 NDR   H4: 2 NDR   H5: 2 DRS   G4: 1 DRS + 2 NDR   G5: 2 NDR   G6: 3 DRS
 * and at most 2 Req, 1 RwD, 3 DRS, 2 NDR per flit. Headers are taken from the ready heads of the source
 * pipes in round-robin order; a header is placed only with a credit of its class.
 *
 * Receive (link_rx, once per cycle): a flit sent at cycle t arrives at t + ser_cycles + phy_cycles; it
 * delivers the header-only messages it carried and every data message whose last chunk it carried.
 */
#ifndef CXL_LINK_H
#define CXL_LINK_H

#include <stdint.h>

#include "credit.h"
#include "pipe.h"

#define CXL_FLIT_SLOTS 4u
#define CXL_FLIT_MAXDONE 8u
#define CXL_OWED_MAX 8u

enum cxl_dir { CXL_DIR_M2S = 0, CXL_DIR_S2M = 1 };

typedef struct cxl_flight {
    uint64_t arrive;
    uint32_t n;
    cxl_msg done[CXL_FLIT_MAXDONE];
} cxl_flight;

typedef struct cxl_link_dir {
    uint32_t dir;                      /* enum cxl_dir */
    int64_t acc, cost, inc;
    uint32_t latency;                  /* ser_cycles + phy_cycles */
    cxl_credits cr;
    cxl_msg owed[CXL_OWED_MAX];        /* data messages whose header is sent, in header order */
    uint32_t owed_head, owed_count;
    uint32_t owed_left;                /* chunks still to send of the head owed message */
    uint32_t owed_chunks;              /* chunks still to send, all owed messages */
    cxl_flight fl[CXL_MAX_FLIGHT];
    uint32_t fl_head, fl_count;
    uint32_t rr;                       /* round-robin pointer over sources */
} cxl_link_dir;

void link_init(cxl_link_dir *l, uint32_t dir, const cxl_link_params *p, const uint32_t credits[CXL_NCLASS]);
/* One cycle of transmit. src: the pipes whose ready heads compete for the link. Returns 1 if a flit
 * was sent. */
int link_tx(cxl_link_dir *l, uint64_t now, cxl_pipe *const *src, uint32_t nsrc, cxl_link_stats *st);
/* Messages delivered at `now` (at most CXL_FLIT_MAXDONE); returns how many were written to out. */
uint32_t link_rx(cxl_link_dir *l, uint64_t now, cxl_msg *out);
/* Nothing queued inside the link (owed data or flits in flight). */
static inline int link_idle(const cxl_link_dir *l) { return l->owed_count == 0 && l->fl_count == 0; }

#endif
