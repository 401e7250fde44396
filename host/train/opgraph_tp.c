/* opgraph_tp.c - the tensor-parallel pieces of a layer's templates (opgraph_int.h): the column-parallel
 * backward's tail with its collectives beside the GEMMs, and Transformer Engine's userbuffers ring exchanges
 * (training.tp_comm_overlap). Called by opgraph.c and opgraph_mla.c. */
#include <string.h>

#include "config/traincfg.h"
#include "train/opgraph.h"
#include "train/opgraph_int.h"

/* A GEMM beside a userbuffers bulk overlap, which holds `sms` SMs for the GEMM's time (op_sms_off). */
static void gemm_beside(bld *B, int tpl, const char *name, uint64_t m, uint64_t n, uint64_t k, uint64_t sms)
{
    opg_gemm(B, tpl, name, 1, m, n, k);
    opgraph_tpl *T = &B->g->tpl[tpl];
    if (!B->failed && T->n && sms) {
        uint16_t op = T->e[T->n - 1].op;
        B->g->op_sms_off[op] = (uint16_t)(sms > UINT16_MAX ? UINT16_MAX : sms);
    }
}

/* n chunks of a userbuffers GEMM (c x k).(k x nn) spread over Transformer Engine's 3 compute streams
 * (_NUM_MAX_UB_STREAMS, transformer_engine/pytorch/module/base.py; chunk i on stream i % 3): each group of
 * 3 shares its waves, as the grouped GEMM's streams do (opgraph_moe.c grouped_gemm), the groups one after another. */
static void ub_chunks(bld *B, int tpl, const char *name, uint64_t n, uint64_t c, uint64_t nn, uint64_t k)
{
    for (uint64_t done = 0; done < n;) {
        uint64_t b = n - done < 3 ? n - done : 3;
        opg_gemm_n(B, tpl, name, b, c, nn, k, (uint32_t)b);
        done += b;
    }
}

/* Transformer Engine's userbuffers ring exchange of an all-gather into a GEMM (CommOverlapP2PBase::
 * split_overlap_ag, transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp, aggregate off): the
 * GEMM of m = T rows runs as tp chunks of T / tp rows, chunk i on the local or the i-th received slice while
 * the next slice arrives over the copy engines (use_ce, no SMs), the chunks spread over 3 compute streams
 * (ub_chunks). Priced as the all-gather beside the first tp - 1 chunks and the last chunk after it:
 * max(tp - 1 chunks, all-gather) + the last chunk. `last` names the last chunk's GEMM (no module of its own
 * on the host: name.ub). */
void opg_ring_ag(bld *B, int tpl, const lshape *x, const char *name, const char *last, uint64_t n, uint64_t k,
                    uint64_t bytes, const char *agname)
{
    uint64_t tp = x->tp, c = x->T / tp;
    opg_tpc_async(B, tpl, OPGRAPH_ALLGATHER, bytes, agname, tp);
    ub_chunks(B, tpl, name, tp - 1, c, n, k);
    opg_tp_wait(B, tpl, tp);
    opg_gemm(B, tpl, last, 1, c, n, k);
}

/* The userbuffers ring exchange of a GEMM's output into a reduce-scatter (CommOverlapP2PBase::
 * split_overlap_rs): the first of tp chunks of T / tp rows, then its partial sums travel the ring (copy
 * engines) beside the other chunks, then the received partial sums are reduced (TE's reduce kernel: tp
 * slices of T / tp x n read, one written). */
void opg_ring_rs(bld *B, int tpl, const lshape *x, const char *first, const char *name, uint64_t n, uint64_t k,
                    uint64_t bytes, const char *rsname, const char *reduce)
{
    uint64_t tp = x->tp, c = x->T / tp;
    opg_gemm(B, tpl, first, 1, c, n, k);
    opg_tpc_async(B, tpl, OPGRAPH_REDUCE_SCATTER, bytes, rsname, tp);
    ub_chunks(B, tpl, name, tp - 1, c, n, k);
    opg_tp_wait(B, tpl, tp);
    opg_mem(B, tpl, reduce, c * n, 2.0 * (double)(tp + 1));
}


/* The tail of a column-parallel layer's backward (QKV, FC1, MLA's up-projections) after its output gradient:
 * the input-gradient GEMM bd (m x n x k), the weight-gradient GEMM bw (wm x wn x wk; with sp on the
 * all-gathered input ag), and the input gradient's all-reduce (sp: reduce-scatter) red, of in_bytes (the
 * layer's whole input: ag and red move the same tensor). With tp_grad_comm_overlap, as Megatron-LM's
 * LinearWithGradAccumulationAndAsyncCommunication.backward (NVIDIA/Megatron-LM cf7efd4f5a, 2021-08-30; the
 * sp form 02bb1f5c86, 2022-03-02; megatron/core/tensor_parallel/layers.py): sp's all-gather starts before bd and is waited for
 * after it; red starts after bd and is waited for after bw. Without (Megatron-LM before 2021-08): each
 * collective blocks the stream where it stands. */
void opg_col_bwd(bld *B, int L, const lshape *x, const col_bwd_names *nm, uint64_t in_bytes, const uint64_t bd[3],
                 const uint64_t bw[3])
{
    if (!x->tpo) {
        opg_gemm(B, L, nm->bd, 1, bd[0], bd[1], bd[2]);
        if (x->sp)
            opg_tpc(B, L, OPGRAPH_ALLGATHER, in_bytes, nm->ag, x->tp);
        opg_gemm(B, L, nm->bw, 1, bw[0], bw[1], bw[2]);
        opg_tpc(B, L, x->ar, in_bytes, nm->red, x->tp);
        return;
    }
    /* with userbuffers (tp_comm_overlap) both are TE's bulk overlaps, each holding its num_sm SMs beside the
     * GEMM (QKV's or FC1's: qkv_dgrad / qkv_wgrad, fc1_dgrad / fc1_wgrad) */
    uint64_t sd = 0, sw = 0;
    if (x->ub && x->ub_sms) {
        int fc1 = !strcmp(nm->bd, "fc1.bwd_data");
        if (fc1 || !strcmp(nm->bd, "qkv.bwd_data")) {
            sd = x->ub_sms[fc1 ? TRAINCFG_UB_FC1_DGRAD : TRAINCFG_UB_QKV_DGRAD];
            sw = x->ub_sms[fc1 ? TRAINCFG_UB_FC1_WGRAD : TRAINCFG_UB_QKV_WGRAD];
        }
    }
    if (x->sp)
        opg_tpc_async(B, L, OPGRAPH_ALLGATHER, in_bytes, nm->ag, x->tp);
    gemm_beside(B, L, nm->bd, bd[0], bd[1], bd[2], x->sp ? sd : 0);
    if (x->sp)
        opg_tp_wait(B, L, x->tp);
    opg_tpc_async(B, L, x->ar, in_bytes, nm->red, x->tp);
    gemm_beside(B, L, nm->bw, bw[0], bw[1], bw[2], sw);
    opg_tp_wait(B, L, x->tp);
}

