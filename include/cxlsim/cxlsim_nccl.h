/* cxlsim_nccl.h - a delay plugin for NCCL emulators (libcxlsim_nccl.so): the time one collective would take
 * on a simulated cluster, from cxlsim's collective model (cxlsim_collective_time), for an emulator such as
 * NeuronaBox (arXiv 2405.02969) that runs a few real ranks and must make each emulated collective last as
 * long as it would on the full cluster.
 *
 * Arguments use NCCL's own values, as an emulator inside NCCL sees them (NCCL 2.19 nccl.h and
 * nccl_common.h): coll is ncclFunc_t (0 broadcast, 1 reduce, 2 all-gather, 3 reduce-scatter,
 * 4 all-reduce), datatype is ncclDataType_t (0 int8 ... 9 bfloat16), algo NCCL_ALGO_* (0 tree, 1 ring) or
 * -1 for NCCL's own choice, proto NCCL_PROTO_* (0 LL, 1 LL128, 2 Simple) or -1. count is the ncclInfo
 * count (per rank for all-gather and reduce-scatter), as passed to the collective call; the bytes follow
 * ncclInfoSetDerived (nBytes = count x size, times nranks for all-gather and reduce-scatter).
 * Reduce is timed as Broadcast: NCCL runs both on the ring as a pipelined chain (ncclPatternPipelineTo /
 * PipelineFrom, enqueue.cc getPatternInfo) of the same nBytes, one chunk per loop step, and times both with
 * the same ring model (tuning.cc); the reduction arithmetic on the chain is not timed.
 * nranks / nnodes ranks share a node; nchannels 0 takes the cluster's nccl_channels. With ring/Simple
 * the delay follows NCCL's chunking (loops of nChannels x nRanks x 2 MiB; every step a message).
 *
 * The plugin holds no global state: the emulator keeps the handle (NeuronaBox: in its modController)
 * and calls cxlsim_nccl_delay_ms where it busy-waits MOD_DELAY today. docs/library.md shows the hook.
 */
#ifndef CXLSIM_CXLSIM_NCCL_H
#define CXLSIM_CXLSIM_NCCL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cxlsim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cxlsim_nccl cxlsim_nccl;

/* The cluster (configs/clusters file or preset) and the GPU of its nodes (configs/gpus file or preset). */
CXLSIM_API int cxlsim_nccl_open(const char *cluster, const char *gpu, cxlsim_nccl **out, cxlsim_error *err);
CXLSIM_API void cxlsim_nccl_close(cxlsim_nccl *p);

/* The delay of one collective in picoseconds (*delay_ps) and what was planned (res, may be NULL). */
CXLSIM_API int cxlsim_nccl_delay(cxlsim_nccl *p, int coll, uint64_t count, int datatype, int nranks, int nnodes,
                                 int algo, int proto, int nchannels, int64_t *delay_ps, cxlsim_collective_result *res,
                                 cxlsim_error *err);
/* The same in milliseconds, the unit of NeuronaBox's busy_wait; a negative CXLSIM_E* code on error. */
CXLSIM_API double cxlsim_nccl_delay_ms(cxlsim_nccl *p, int coll, uint64_t count, int datatype, int nranks,
                                       int nnodes, int algo, int proto, int nchannels);

/* Replay a CSV of recorded collectives: a header line, then per line
 *     coll,count,datatype,nranks,nnodes,algo,proto,nchannels
 * each a name (allreduce, allgather, reducescatter, broadcast, reduce; int8 ... bfloat16; ring, tree, auto; LL, LL128,
 * Simple, auto) or NCCL's number. Writes the same columns and delay_ps,algo_used,proto_used to out (may be
 * NULL), and the sum of the delays to *total_ps. Errors name the line and column. */
CXLSIM_API int cxlsim_nccl_replay(cxlsim_nccl *p, FILE *in, const char *in_name, FILE *out, int64_t *total_ps,
                                  cxlsim_error *err);

#ifdef __cplusplus
}
#endif

#endif
