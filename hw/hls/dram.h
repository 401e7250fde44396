/* dram.h - the DRAM controller of a device: per-channel read and write queues, FR-FCFS scheduling with
 * an open- or closed-page row policy, write draining with watermarks, all-bank refresh, read data return.
 *
 * Per cycle and per channel (dram_tick; channel (now + k) mod channels goes k-th, so channels take turns
 * at the response-queue entries they share):
 *  1. Reads whose data burst ended (RD + tCL + tBL <= now) leave, oldest first, as completions.
 *  2. At most one command issues, chosen in this order:
 *     a. refresh. All-bank (REFab): a rank whose deadline has passed takes no new ACT/RD/WR; its open
 *        banks are precharged (the lowest-numbered open bank whose PRE is allowed now), then REF issues
 *        once every bank of the rank may be activated again (including the rank's tRRD_S/tFAW/tRFC
 *        window); while a refresh is due the scheduler issues nothing else to those banks; the next deadline is the previous one + tREFI.
 *        Same-bank (DDR5 REFsb): deadlines come every tREFI / banks-per-group, each for the next bank
 *        index in round-robin order (0, 1, ...); only that bank index, in every bank group of the rank,
 *        is blocked, precharged and refreshed (tRFCsb); the other banks keep serving. Deadlines are
 *        staggered: unit k = channel * ranks + rank of n first refreshes at interval * (k + 1) / n.
 *     b. mode: read mode switches to write mode when the write queue holds >= wdrain_high entries, or
 *        holds any while the read queue is empty; write mode returns to read mode when the write queue
 *        is empty, or holds <= wdrain_low entries while reads wait.
 *     c. FR-FCFS over the mode's queue in age order: the oldest entry whose row is open and whose column
 *        command (RD/WR) is ready issues it; otherwise the oldest entry whose next command is ready
 *        issues that: ACT to a closed bank, or PRE to a bank open on another row when no entry of the
 *        mode's queue still hits the open row. FCFS considers only the oldest entry.
 *     d. closed-page policy: every RD/WR carries auto-precharge.
 * Reads and writes enter with dram_enqueue before dram_tick of the same cycle, so an idle bank can be
 * activated in the cycle its request arrives: an unloaded read to a precharged bank completes exactly
 * tRCD + tCL + tBL after it is enqueued.
 */
#ifndef CXL_DRAM_H
#define CXL_DRAM_H

#include <stdint.h>

#include "cxl_types.h"
#include "dram_map.h"
#include "dram_timing.h"

#define CXL_RD_INFLIGHT 32u
#define CXL_DRAM_TRACE 256u /* command-trace ring entries per channel */

/* One issued command. PRE and REF record row 0 (REF also bg = bank = 0). auto_pre: a RD/WR with
 * auto-precharge (closed-page policy). */
typedef struct cxl_dram_trace_rec {
    uint64_t cycle;
    uint32_t row;
    uint8_t cmd, rank, bg, bank;    /* cmd: enum cxl_dram_cmd */
    uint8_t auto_pre;
    uint8_t pad[7];
} cxl_dram_trace_rec;

typedef struct cxl_dram_entry {
    cxl_msg msg;
    uint32_t rank, bg, bank, row, bidx;
} cxl_dram_entry;

typedef struct cxl_dram_chan {
    cxl_dram_timing t;
    cxl_dram_entry rq[CXL_MAX_DRAMQ], wq[CXL_MAX_DRAMQ];
    uint32_t nr, nw;
    uint16_t hits_r[CXL_MAX_BANKS], hits_w[CXL_MAX_BANKS]; /* queued entries hitting the open row */
    uint32_t write_mode;
    uint64_t ref_due[CXL_MAX_RANKS];
    uint32_t ref_bank[CXL_MAX_RANKS];   /* same-bank refresh: the bank index refreshed next */
    uint64_t wake;                  /* no command can issue before this cycle (exact; see dram.c) */
    uint32_t wake_on_room;          /* ... unless a response-queue entry frees up */
    cxl_msg rd_msg[CXL_RD_INFLIGHT];
    uint64_t rd_done[CXL_RD_INFLIGHT];
    uint32_t rd_head, rd_count;
    /* Command trace, recorded always (one store per command): the last CXL_DRAM_TRACE commands, command
     * number i (counting from 0) at trace[i % CXL_DRAM_TRACE]; trace_n commands issued so far. For tests
     * and for cross-checking hw/rtl; it has no effect on scheduling. */
    cxl_dram_trace_rec trace[CXL_DRAM_TRACE];
    uint64_t trace_n;
} cxl_dram_chan;

typedef struct cxl_dram {
    cxl_dram_chan ch[CXL_MAX_CH];
} cxl_dram;

void dram_init(cxl_dram *d, const cxl_dram_params *p);
uint32_t dram_channel_of(const cxl_dram_params *p, uint64_t addr);
/* Free entries of a channel's read (is_write = 0) or write queue. */
uint32_t dram_space(const cxl_dram *d, const cxl_dram_params *p, uint32_t ch, int is_write);
/* Queue a request (caller checked space). */
void dram_enqueue(cxl_dram *d, const cxl_dram_params *p, const cxl_msg *m, uint64_t now);
/* One cycle. Completed reads are written to out (at most CXL_MAX_CH); returns their number. A RD may
 * issue only while *rsp_room > 0 (a response-queue entry for its data); each RD issued takes one. */
uint32_t dram_tick(cxl_dram *d, const cxl_dram_params *p, uint64_t now, cxl_msg *out, cxl_dev_stats *st,
                   uint32_t *rsp_room);
uint32_t dram_occupancy(const cxl_dram *d, const cxl_dram_params *p);

/* Idle fast-forward (cxl_model_run). With no request anywhere, a channel only refreshes, and its refresh
 * commands repeat with the period dram_idle_period(): every deadline interval times the banks a same-bank
 * refresh cycles through, times the channels (their rotation in dram_tick). Once a channel has issued
 * nothing but refreshes for a period plus every timing constraint (the "settled" state, read from its
 * command trace), the state k periods later is the state now with each time that a refresh of the last
 * period set (every time >= now - period) moved on by k periods, and every other time (from commands
 * before that, too old to constrain anything) as it is; the statistics count k periods' refreshes and the
 * command trace holds the last commands of the periodic pattern. dram_idle_settled() checks the state
 * (every channel: queues and reads empty, banks precharged, no refresh overdue, only refreshes in its
 * trace for that long, and the trace reaching back so far) and returns the refresh commands one period
 * holds per channel in cmds_per_period[] (0: not settled, or refresh off); dram_idle_jump() applies k
 * periods. Exact: the same state and statistics as ticking through them (tests/hw/test_model.c). Cost:
 * O(banks + the trace's 256 entries) per channel, whatever k is. */
uint64_t dram_idle_period(const cxl_dram_params *p);
int dram_idle_settled(const cxl_dram *d, const cxl_dram_params *p, uint64_t now, uint32_t *cmds_per_period);
void dram_idle_jump(cxl_dram *d, const cxl_dram_params *p, uint64_t now, uint64_t k,
                    const uint32_t *cmds_per_period, cxl_dev_stats *st);

#endif
