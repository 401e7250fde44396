/* train_eng.h - the inside of the training engine (train.h), shared by its files and nobody else.
 *
 * Files: train.c (train_run: the event loop and the result), train_setup.c (the engine built from an
 * experiment), train_step.c (the program of a representative: the named steps of an iteration), train_fsdp.c
 * (Megatron-FSDP's steps), train_pgather.c (the distributed optimizer's parameter all-gather), train_grads.c
 * (the gradient reduction's buckets),
 * train_net.c (transfers: network flows, collectives), train_cxl.c (CXL transfers and the offload
 * policies' slots), train_trace.c (the Chrome trace), policy.h + policy_*.c (offload policies).
 *
 * An iteration, per representative (one per pipeline stage): for each item of its schedule (a forward or
 * backward pass of one micro-batch over one model chunk), the item steps of enum item_step, whose body
 * walks segments (enum body_seg) and, inside the layers, layer steps (enum layer_step); then the end
 * steps of enum end_step. A step either moves on (STEP_NEXT) or leaves the compute stream blocked
 * (STEP_BLOCKED: a kernel, a collective or a wait); an event later puts it back in ST_RUN and calls
 * eng_advance, which resumes at the recorded step. */
#ifndef CXLSIM_TRAIN_ENG_H
#define CXLSIM_TRAIN_ENG_H

#include <stdint.h>

#include "train/collalgo.h"
#include "train/collmodel.h"
#include "out/ctrace.h"
#include "config/cxlcfg.h"
#include "cxl/cxlmem.h"
#include "train/evq.h"
#include "train/fsdp.h"
#include "train/nccltune.h"
#include "train/net.h"
#include "train/opgraph.h"
#include "train/policy.h"
#include "train/schedule.h"
#include "train/train.h"

/* events of the queue: a kernel's (or host time's) end, a transfer phase's latency elapsing, a flow's
 * end, a CXL transfer usable (after the GPU path's latency), a timer (the CPU optimizer's floor) */
enum { EV_KERNEL, EV_LATENCY, EV_FLOW, EV_CXL_DONE, EV_TIMER,
       EV_SIDE };  /* EV_SIDE: a kernel of the MoE communication stream has ended (train_a2a.c) */
/* what the compute stream is doing */
enum { ST_RUN, ST_KERNEL, ST_TP, ST_WAIT_RECV, ST_WAIT_SEND, ST_WAIT_DP, ST_WAIT_GATHER, ST_WAIT_CXL, ST_WAIT_TIMER,
       ST_WAIT_CP, ST_WAIT_TPA, ST_WAIT_EP, ST_DONE };  /* ST_WAIT_EP: for the MoE communication stream */
/* kinds of transfer: tensor-parallel collective, pipeline send, data-parallel collective, the tied
 * embeddings' all-reduce between the first and the last stage, CXL transfer */
enum { XK_TP, XK_PP, XK_DP, XK_EMB, XK_CXL, XK_EP,    /* XK_EP: an expert-parallel all-to-all */
       XK_CP };                                         /* XK_CP: context parallelism's ring exchange */
#define CXL_SLOTS 2          /* 0: what the stream needs now, 1: the next layer's prefetch */
#define CXL_UNTRACKED 255u   /* asynchronous transfers nobody waits for */
#define SHAPE_LEN 80         /* a kernel's dtype and shape in the trace */
/* the four links of a representative: NVLink out and in, its share of the node's NICs out and in */
enum { L_INTRA_TX, L_INTRA_RX, L_INTER_TX, L_INTER_RX, L_PER_REP };
enum { FAB_INTRA, FAB_INTER };

/* The longest iteration simulated: 10^6 s. Every time in the engine is int64 picoseconds; the bound keeps
 * each sum (an event time plus a kernel, a latency, a flow) far from INT64_MAX (9.2 x 10^18), so that an
 * absurd input (hbm_bandwidth 1MB/s, a measured op of hours) is refused with the key that caused it
 * instead of wrapping into negative times. */
#define TRAIN_MAX_PS 1000000000000000000LL

/* The most gradient buckets (collectives) one stage cuts its gradients or parameters into per
 * iteration: the engine holds one queue entry per bucket, so memory and time grow with their number. */
#define TRAIN_MAX_BUCKETS 65536u

/* A step's outcome: move on to the next step now, or the compute stream is blocked (or the run failed). */
enum { STEP_NEXT = 0, STEP_BLOCKED = 1 };

/* The steps of one schedule item, in order. */
enum item_step {
    ITEM_PRE_RECV,  /* training.p2p_exchange batched: the receives of the exchange before this pass */
    ITEM_HOST,      /* the framework's host time for this pass (training.host_overhead_microbatch) */
    ITEM_RECV,      /* wait for the activation (forward) or gradient (backward) from the neighbour */
    ITEM_GATHER,    /* without sp: all-gather the received 1/tp slice over NVLink (Megatron's scatter-gather) */
    ITEM_BODY,      /* the kernels and tensor-parallel collectives (enum body_seg) */
    ITEM_SEND,      /* send the output to the next stage (backward: the previous) */
    ITEM_NEXT       /* the next item */
};
/* The body of an item: what comes before the layers (embedding forward, head backward), the layers, what
 * comes after them (head forward, embedding backward), the item's end. */
enum body_seg { SEG_PRE, SEG_LAYERS, SEG_POST, SEG_END };
/* The steps of one layer. A forward layer has one template (LAYER_START); a backward layer runs the
 * recomputation (LAYER_START; skipped when a policy keeps the activations), the backward template
 * (LAYER_BACKWARD), then hands its gradients on (LAYER_GRADS). CXL fetches happen at LAYER_START. */
enum layer_step { LAYER_START, LAYER_BACKWARD, LAYER_GRADS };
/* The end of the iteration, after the last item. */
enum end_step {
    END_HOST,           /* the framework's host time per iteration (training.host_overhead_iteration) */
    END_GRAD_FLUSH,     /* the last gradient bucket, or every bucket without overlap; wait for the reduction */
    END_TP_GRADS,       /* sp: all-reduce over tp of the gradients of parameters every tp rank holds (rep.tp_grad_bytes) */
    END_EMBEDDING_SYNC, /* tied embeddings over stages: the first and the last stage all-reduce them */
    END_OPTIMIZER,      /* the optimizer step, as the optimizer policy places it (policy.h) */
    END_PARAM_GATHER,   /* distributed optimizer (ZeRO >= 1): all-gather the updated parameters */
    END_DONE
};

/* Read:write weights of a CXL transfer (cxlmem_start): the share of its bytes read and written. */
typedef struct cxl_mix { uint8_t rd, wr; } cxl_mix;
#define CXL_MIX_READ ((cxl_mix){ 1, 0 })
#define CXL_MIX_WRITE ((cxl_mix){ 0, 1 })
/* Who issues a CXL transfer: the nodes' CPUs, or the GPUs (peer to peer, capped by their PCIe path). */
enum { CXL_BY_CPU = 0, CXL_BY_GPU = 1 };

typedef struct xfer {
    uint8_t kind, active;
    uint32_t rep, dst;          /* XK_PP: receiver; XK_EMB: the other stage */
    uint32_t key;               /* XK_PP: receiver's arrival slot */
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t nph, cur, pending;
    int fabric;                 /* XK_PP / XK_EMB: FAB_INTRA or FAB_INTER */
    double bytes;               /* XK_PP / XK_EMB */
    double wire;                /* XK_PP: bytes on the wire per byte sent (its protocol's; 1 unless LL) */
    int64_t t_start;
    const char *name;
    uint8_t slot;               /* XK_CXL: the representative's slot, or CXL_UNTRACKED */
    /* for the trace's args */
    uint8_t op, algo, proto;    /* XK_TP / XK_DP: collalgo_op, the algorithm planned; its nccltune_proto (also
                                   XK_PP / XK_EP / XK_CP) */
    int64_t hop_intra_ps, hop_inter_ps; /* XK_TP / XK_DP / XK_PP / XK_EP / XK_CP: latency per message on NVLink
                                           / the network */
    uint8_t rd, wr, by_gpu;     /* XK_CXL: read:write weights, issued by the GPUs (1) or the CPUs (0) */
    uint64_t coll_bytes;        /* XK_TP / XK_DP: bytes per rank; XK_CXL: bytes per GPU */
    uint32_t coll_ranks;        /* XK_TP / XK_DP: the group's ranks */
    uint8_t side;               /* XK_EP / XK_TP: runs on the MoE communication stream (train_a2a.c) */
    uint8_t dq;                 /* XK_DP: its queue (DPQ_DP, DPQ_EDP) */
} xfer;

/* Where a representative's CXL traffic lands: `count` of its GPUs on host port `host` of domain `domain`. */
typedef struct cxl_route { uint32_t domain, host, count; } cxl_route;

/* a queued data-parallel collective; after: the other group's queue must have completed this many collectives
 * before it starts (a synchronous call: the compute stream waited for the call before it, 0 = none) */
typedef struct dpq_item { int op; uint64_t bytes; const char *name; uint64_t after; } dpq_item;
/* The queues of a representative's data-parallel collectives, one per process group: the data-parallel group's
 * (DPQ_DP: the dense buffers, ZeRO-3's and Megatron-FSDP's collectives) and the expert-data-parallel group's
 * (DPQ_EDP: the routed experts' buffers). Each group is its own NCCL communicator on its own CUDA stream
 * (PyTorch's ProcessGroupNCCL: one stream per process group and device), so a queue runs its collectives in
 * order and the two queues run side by side. */
enum { DPQ_DP = 0, DPQ_EDP = 1, DPQ_N = 2 };
typedef struct dp_queue {
    dpq_item *q;
    uint32_t head, len, cap;
    int running;
    uint64_t enq, done;             /* collectives enqueued / completed (FIFO order) */
} dp_queue;

/* training.moe_a2a_overlap (train_a2a.c): one step of the program of a steady forward-backward pair, run
 * layer by layer as Megatron-Core's combined 1F1B schedule runs it. */
enum a2a_op {
    A2A_RUN,    /* on the compute stream: the entries of part `node` (A2A_ALL: every part) of a layer's template */
    A2A_SIDE,   /* queue part `node`'s entries on the communication stream, where the node's input is ready */
    A2A_LAUNCH, /* the host issues the A2A_SIDE step `ref`'s node where Megatron-Core's host does: its marks and
                   Python on the host timeline, its entries' launches (no entry starts before its launch) */
    A2A_WAIT,   /* the compute stream waits for the A2A_SIDE step `ref` (A2A_NONE: nothing) */
    A2A_SEG,    /* on the compute stream: the embedding's or the head's template `layer` */
    A2A_GRADS,  /* the backward layer's gradients are complete (as LAYER_GRADS) */
    A2A_SEND    /* the pass's pipeline send (tpl: A2A_TPL_FWD on the communication stream, after its combine;
                   A2A_TPL_BWD on the compute stream), before the first layer's attention weight gradients */
};
enum { A2A_ALL = 255, A2A_NONE = UINT32_MAX };
enum { A2A_SEL_ALL, A2A_SEL_DGRAD, A2A_SEL_WGRAD };  /* entries: every one, all but the weight gradients', those */
enum { A2A_TPL_FWD, A2A_TPL_BWD, A2A_TPL_RECOMPUTE };
typedef struct a2a_step {
    uint8_t op, tpl, node, sel;     /* enum a2a_op; A2A_TPL_*; enum opgraph_node or A2A_ALL; A2A_SEL_* */
    uint32_t layer;                 /* the chunk's layer (A2A_SEG: the template id) */
    uint32_t ref;                   /* A2A_WAIT: the A2A_SIDE step it waits for */
    uint64_t seq;                   /* A2A_SIDE, once run: the stream's count after its last entry, 0 = none */
    uint64_t first;                 /* A2A_SIDE, once run: the stream's count before its first entry */
} a2a_step;
/* an entry of the communication stream: an all-to-all (or expert-TP collective) or a kernel */
typedef struct a2a_side {
    const opgraph_entry *e; /* NULL: the pipeline send of item send_it (Megatron-Core's post_forward) */
    int64_t launch_ps;      /* when the host has launched it (A2A_LAUNCH); -1: not yet */
    size_t send_it;
} a2a_side;
#define A2A_SIDE_CAP 64u

typedef struct rep {
    uint32_t r;
    schedule_item *items;
    size_t nitems, it;
    enum item_step step;
    /* body walk */
    enum body_seg seg;
    enum layer_step lstep;
    uint32_t layer, entry;
    const opgraph_tpl *cur_tpl;
    /* compute stream */
    int state;
    int64_t since;
    int64_t bk[TRAIN_BK_N];
    uint32_t wait_key;
    uint32_t pp_sends;              /* its pipeline sends in flight; ST_WAIT_SEND waits for all of them */
    size_t deferred;                /* p2p_exchange batched, interleaved: the steady-phase forward whose output
                                       goes with the next backward's exchange, its item index + 1; 0 = none */
    size_t steady_lo, steady_hi;    /* items [lo, hi) are the 1F1B steady phase (forward, backward, ...) */
    int cp_running;                 /* a context-parallel ring exchange is under way (ST_WAIT_CP waits for it) */
    int tpa_running;                /* an OPGRAPH_TP_ASYNC collective is under way (ST_WAIT_TPA waits for it) */
    /* pipeline arrivals, per (chunk, micro-batch, direction): arrival and send times, -1 = not yet */
    int64_t *arrived, *sent;
    /* p2p_exchange batched (NCCL's send needs its receive): when the receive of a slot was posted (-1 = not
     * yet), and the send held until then (its xfer id + 1, 0 = none) */
    int64_t *posted;
    uint32_t *held;
    /* data parallel */
    dp_queue dq[DPQ_N];
    uint64_t gather_wait[DPQ_N];    /* the parameter gathers the stream waits for (their queues' enq numbers; ZeRO-3,
                                       Megatron-FSDP: DPQ_DP only) */
    uint64_t gather_next;           /* ZeRO-3: the prefetched gather of the next layer, 0 = none */
    int layer_gathered;             /* ZeRO-3: the current layer's parameters are in place */
    /* Megatron's DDP: the gradient bytes of the bucket being filled, of the dense [0] and the routed experts'
     * [1] buffers (train_grads.c); a chunk's bucket size: eng_grads_bucket */
    uint64_t bucket_acc[2];
    uint64_t sync_acc;              /* grad_sync: this backward's gradients, reduced at its end */
    uint32_t *bwd_done;             /* backward passes done per chunk */
    enum end_step end;
    int emb_waiting;
    int64_t finish_ps;
    uint32_t opt_op;
    uint64_t params;                /* before ZeRO */
    uint64_t tp_grad_bytes;         /* END_TP_GRADS: the gradients' bytes (train_setup.c; 0: no collective) */
    int first_stage, last_stage;    /* holds the embedding / the head */
    /* CXL */
    cxl_route *routes;
    uint32_t nroutes;
    uint32_t slot_xid[CXL_SLOTS];
    uint8_t slot_busy[CXL_SLOTS];
    uint8_t prefetched;             /* slot 1 holds the current layer's fetch */
    uint8_t layer_fetched;          /* the current layer's CXL fetch has been waited for */
    int wait_slot;
    int opt_step;                   /* the optimizer policy's own step (policy.h) */
    int64_t cpu_start;              /* policy_opt_cpu.c: when the CPU's Adam began */
    uint64_t shard_params;          /* the optimizer's parameters on one GPU (after ZeRO) ... */
    uint64_t expert_shard_params;   /* ... of which routed experts' (sharded over the expert-data-parallel group) */
    uint32_t opt_dense_op;          /* cxl.offload_scope experts with the CPU's Adam: the GPU's kernel for the rest */
    uint32_t opt_first_op, opt_rest_op; /* E->pg_opt: the optimizer kernel of the first model chunk's dense
                                           parameters, and of the rest (policy_opt_hbm.c) */
    /* Megatron-FSDP (fsdp.h; train_step.c): the pass under way and its all-gathers, the reduce-scatters in
     * flight (a ring, oldest first), a unit's gradients waiting to be reduce-scattered */
    fsdp_pass fp;
    uint64_t fsdp_comm;             /* the pass's communication unit, elements */
    uint32_t ag_issued;             /* units of the pass whose all-gather is queued */
    uint64_t *ag_enq;               /* per unit of the pass: its all-gather's enq number, 0 = nothing to wait */
    uint64_t *rs_enq, *rs_elems;
    uint32_t rs_head, rs_len, rs_cap;
    uint64_t rs_queued;             /* elements of the reduce-scatters in flight */
    uint64_t rs_pend_elems, rs_pend_bytes;
    uint32_t copy_pend;             /* gradient_accumulation_fusion off: the gradient copy to run first, op + 1 */
    uint8_t unit_transposed;        /* the current layer's FP8 weights are transposed for its backward */
    /* CPU activation offload (train_cpuoff.c): the copy out in flight ends at off_done_ps, off_count groups
     * are synchronised this forward, the compute stream waits until off_wait_ps before its next step; the
     * copy back in flight ends at in_done_ps, in_count as TE's offloaded_group_count in the backward;
     * off_layer_done: the current backward layer's copy back is issued */
    int64_t off_done_ps, off_wait_ps, in_done_ps;
    uint32_t off_count, in_count;
    uint8_t off_layer_done;
    /* the host timeline (train_step.c, host_launch): when the host has launched the last entry, when the
     * stream reached the last device-to-host copies' point, whether the current entry's launch is counted,
     * and whether the stream waits for the host (its EV_TIMER counts as compute) */
    int64_t host_ps, dtoh_ps;
    uint8_t launch_paid, host_wait;
    /* training.moe_a2a_overlap (train_a2a.c): items [pair_lo, pair_hi) are the combined schedule's steady
     * pairs; the program of the pair under way (a2a_n steps, at a2a_i, entry a2a_entry), the backward item
     * already run by it (index + 1; 0 = none); the communication stream: a FIFO of entries, one running
     * (1: an all-to-all, 2: a kernel), entries queued and done, the count the compute stream waits for */
    size_t pair_lo, pair_hi, a2a_item, a2a_ran;
    size_t a2a_sent[2];             /* the forward and the backward whose sends the pair made (index + 1) */
    a2a_step *a2a;
    uint32_t a2a_n, a2a_cap, a2a_i, a2a_entry;
    a2a_side *side;                 /* A2A_SIDE_CAP entries, a ring (allocated with the overlap only) */
    uint32_t side_head, side_len;
    uint8_t side_running, side_timer;   /* side_timer: an EV_SIDE waits for the head entry's launch */
    uint64_t side_enq, side_done, side_wait;
    /* the distributed optimizer's parameter all-gather (train_pgather.c): its buckets in the
     * forward's order, chunk c's at [pg_first[c], pg_first[c + 1]) (the dense chain's, then the experts'): the
     * last forward position each holds (0: the embedding on the first virtual stage, then the layers, the head),
     * its bytes, its enq number in its queue (pg_edp) once issued (UINT64_MAX: not yet); the forwards begun (align_param_gather) */
    uint32_t *pg_first, *pg_last;
    uint64_t *pg_bytes, *pg_enq;
    uint8_t *pg_edp;                /* per bucket: 1 for the routed experts' buffers (expert-data-parallel group) */
    uint64_t fwd_seen;
} rep;

/* A collective's plan as start_coll (train_net.c) derives it from its kind, group, operation and bytes:
 * NCCL's choice, collalgo's phases and the message latencies. Kept per key, direct-mapped, since an
 * iteration repeats the same few collectives thousands of times. */
#define ENG_COLL_MEMO 32u
typedef struct eng_coll_memo {
    const collalgo_group *grp;      /* NULL: empty */
    int kind, op;
    uint64_t bytes;
    collalgo_algo chosen;
    nccltune_proto proto;
    collalgo_phase ph[COLLALGO_MAX_PHASES]; /* with NCCL's ring loops or the protocol's factors applied */
    uint32_t nph;
    int64_t hop_intra_ps, hop_inter_ps;
} eng_coll_memo;

typedef struct eng {
    const expcfg *x;
    const traincfg *t;
    /* the gradient reduction in effect (traincfg_grad_overlap, traincfg_grad_sync) and its bucket in bytes:
     * grad_bucket with Megatron's overlap, one call without it, DeepSpeed's reduce_bucket_size elements */
    int grad_overlap, grad_sync;
    uint64_t grad_bucket;
    opgraph g;
    int64_t *dur;                   /* per kernel */
    int64_t *dur_shared;            /* per kernel, on sms - collective_sms SMs (NULL: gpu.collective_sms 0) */
    int64_t *host;                  /* per kernel: the host's time to issue it (train_setup.c host_kernel_ps) */
    uint8_t *measured;              /* per kernel: priced from the measured file (o->measured) */
    evq q;
    net *n;
    rep *reps;
    uint32_t pp, v, m;
    uint32_t *chunk_layers, *chunk_first; /* per model chunk vs = chunk x pp + rank: its layers, its first layer's index */
    xfer *xf;
    uint32_t nxf, capxf, *xfree, nxfree, capxfree;
    collalgo_fabric fab;
    collmodel coll;                 /* the collective model over fab (collmodel.h) */
    collalgo_group tp_group, dp_group;
    /* the routed experts' data-parallel group (Megatron-Core's expert-data-parallel group: tp x cp x dp /
     * (ep x etp) ranks, after the etp x ep ranks in the expert grid's order); their gradients and parameter
     * gathers run over it */
    collalgo_group edp_group;
    collalgo_group ep_group, etp_group; /* mixture of experts: expert- and expert-tensor-parallel groups */
    collalgo_group cp_group;            /* context parallelism (ranks_per_node: of the ring, in one node) */
    train_coll *colls;              /* the result's list of distinct collectives (note_coll) */
    uint32_t ncolls;
    uint64_t colls_other;
    uint8_t *pp_intra;              /* per stage r: the link r -> r+1 (mod pp) stays in the NVLink domain */
    int64_t now;
    cxl_err *err;
    int rc;
    uint64_t items_done, items_total;
    const train_opts *o;
    /* trace (o->trace set; train_trace.c) */
    ctrace *ct;
    double *link_util;              /* last utilisation written per link */
    char (*shape)[SHAPE_LEN];       /* per kernel: its shape as the trace shows it */
    ctrace_lanes *lanes;            /* per stage: TL_N groups of lanes */
    uint64_t flow_ids;
    double *dom_bytes;              /* per domain: read and write bytes at the last sample */
    int64_t *dom_t;                 /* per domain: time of the last sample */
    cxlmem_load_sums *dom_load;     /* per domain: its load at the last sample */
    /* CXL */
    cxlmem *cm;
    const cxlcfg *cx;
    const train_policy *opt;        /* where the optimizer step runs (never NULL after setup) */
    train_policy_use layer_pol[TRAIN_POLICY_MAX]; /* the layer-by-layer offloads the experiment asks for */
    uint32_t nlayer_pol;
    uint32_t ndomains;
    uint32_t *domain_copies, *domain_nodes;
    uint32_t *domain_active;        /* transfers active per domain (trace) */
    int64_t *domain_since;
    uint32_t *port_active;          /* per domain x host port (trace) */
    int64_t *port_since;
    uint32_t ports;
    eng_coll_memo coll_memo[ENG_COLL_MEMO]; /* start_coll's plans, direct-mapped */
    uint32_t fsdp_copy_op[FSDP_KINDS];  /* Megatron-FSDP's gradient copy per unit kind, op + 1 (0: none) */
    uint32_t fsdp_transpose_op;         /* its FP8 weight transpose before a layer's backward, op + 1 (0: none) */
    /* CPU activation offload (training.cpu_offload_layers; train_cpuoff.c): layers offloaded of the model's,
     * and a dense [0] and an MoE [1] layer's activation bytes */
    uint32_t cpuoff_layers, cpuoff_model_layers;
    uint64_t cpuoff_bytes[2];
    uint32_t accum_op[2];               /* DDP without gradient accumulation fusion: a dense / MoE layer's
                                           main-gradient accumulation after its backward, op + 1 (0: none) */
    int pg, pg_align;                   /* training.overlap_param_gather in effect; with align_param_gather */
    int pg_opt;                         /* ... with overlap_param_gather_with_optimizer_step: chunk 0's gathers
                                           issued inside the optimizer step (train_pgather.c) */
} eng;

/* ---- train.c ---- */
/* Out of memory: E->rc and E->err set; returns CXL_ENOMEM. */
int eng_oom(eng *E);

/* ---- train_setup.c ---- */
int eng_setup(eng *E, const expcfg *x, const train_opts *o, train_result *res, cxl_err *err);
void eng_teardown(eng *E);
/* Point err (filled) at l, prefixed with the key, keeping its code; returns the code. */
int eng_relocate(cxl_err *err, const cfgloc *l, const char *key);
/* Point err at where kernel op's time came from: its entry in the measured file, or the GPU key that
 * bounds it; returns the code. */
int eng_kernel_blame(eng *E, uint32_t op, cxl_err *err);

/* 1 when layer `layer` of model chunk vs runs in bf16 in an FP8 run (traincfg_layer_bf16) */
int eng_layer_bf16(const eng *E, uint32_t vs, uint32_t layer);
/* Whether layer `layer` of model chunk vs attends over a sliding window (modelcfg_layer_windowed) */
int eng_layer_windowed(const eng *E, uint32_t vs, uint32_t layer);
/* Whether layer `layer` of the model chunk at virtual stage vs is an MoE layer; the parameters and the
 * gradient bytes of such a layer on one GPU (train_setup.c). */
int eng_layer_moe(const eng *E, uint32_t vs, uint32_t layer);
uint64_t eng_layer_params(const eng *E, uint32_t vs, uint32_t layer);
uint64_t eng_layer_grad_bytes(const eng *E, uint32_t vs, uint32_t layer);

/* ---- train_step.c ---- */
/* Run representative R's steps until its compute stream blocks or ends. */
void eng_advance(eng *E, rep *R);
/* Account the time since R->since to breakdown bucket bk (none: -1) and enter state st. */
void eng_set_state(eng *E, rep *R, int st, int bk);
/* A kernel on R's compute stream (blocks it until EV_KERNEL). */
void eng_run_kernel(eng *E, rep *R, uint32_t op);
/* Transfer xid has finished: wake whoever waits for it. */
void eng_xfer_done(eng *E, uint32_t xid);
/* 1 (the stream waits, until EV_TIMER) when t_ps is in the future, else 0. */
int eng_wait_until(eng *E, rep *R, int64_t t_ps);

/* Run entry e of a template on the compute stream (a kernel, a collective, a wait or a mark on the host
 * timeline), the host's launch first; *idx moves past it once it is issued. STEP_NEXT or STEP_BLOCKED. */
int eng_run_entry(eng *E, rep *R, const opgraph_entry *e, uint32_t *idx);
/* The host timeline's launch of entry e (docs/training.md, "Host timeline"): 1 when the stream must wait for
 * it (an EV_TIMER); R->launch_paid says it is counted, until the caller clears it once the entry is issued. */
int eng_host_launch(eng *E, rep *R, const opgraph_entry *e);
/* The host's issue of entry e without the stream waiting for it (an entry of the MoE communication stream, or
 * a mark): the host's time advanced as eng_host_launch advances it; returns when the host has issued it. */
int64_t eng_host_issue(eng *E, rep *R, const opgraph_entry *e);
/* LAYER_GRADS of layer `layer` of backward item `it` (the combined schedule runs it outside the item). */
void eng_layer_grads(eng *E, rep *R, size_t it, uint32_t layer);

/* ---- train_a2a.c (training.moe_a2a_overlap: Megatron-Core's combined 1F1B schedule) ---- */
/* Setup: the steady pairs of each representative and their programs' room; refuses what the schedule leaves
 * out (the offload policies that act layer by layer). */
int eng_a2a_setup(eng *E, cxl_err *err);
/* ITEM_BODY of item R->it: runs the pair's program when the item opens a steady pair, or marks a backward
 * the pair has run as done (its body goes to SEG_END); -1 when the item's own body runs, else a step's
 * outcome. */
int eng_a2a_body(eng *E, rep *R);
/* ITEM_SEND of item R->it: 1 when the pair has sent its output already. */
int eng_a2a_sent(eng *E, rep *R);
/* The communication stream's running entry has ended (its all-to-all, or EV_SIDE for a kernel). */
void eng_a2a_side_done(eng *E, rep *R);
/* EV_SIDE: b 0, the stream's kernel has ended (eng_a2a_side_done); b 1, its head entry's launch time is reached. */
void eng_a2a_side_event(eng *E, rep *R, uint32_t b);

/* ---- train_grads.c (the gradient reduction's buckets on the data-parallel stream) ---- */
/* The collective that reduces gradients: a reduce-scatter with ZeRO >= 1, else an all-reduce. */
int eng_grad_op(const eng *E);
/* The bucket size in gradient bytes of model chunk `chunk` of R's stage: E->grad_bucket, or with Megatron's DDP
 * UINT64_MAX (one bucket per buffer) on a pipeline rank after the first and for chunks after the first. */
uint64_t eng_grads_bucket(const eng *E, const rep *R, uint32_t chunk);
/* Gradients of chunk `chunk` ready during the backward, `expert` bytes of `bytes` the routed experts' (their
 * own buckets, over the expert-data-parallel group, with Megatron's DDP): into the side stream's buckets, or
 * with grad_sync into *acc, reduced on the compute stream at the end of the backward pass. */
void eng_grads_add(eng *E, rep *R, uint32_t chunk, uint64_t *acc, uint64_t bytes, uint64_t expert);
/* With Megatron's DDP and overlap_grad_reduce: a chunk's last backward has ended, its buckets still filling are
 * reduced (a bucket never spans two chunks). */
void eng_grads_chunk_end(eng *E, rep *R);
/* END_GRAD_FLUSH: what the buckets hold, and without overlap all the gradients (Megatron: one call per buffer
 * and model chunk; DeepSpeed: reduce buckets), queued on the data-parallel stream. */
void eng_grads_flush(eng *E, rep *R);
/* The routed experts' gradient bytes of layer `layer` of virtual stage vs (0 for a dense layer). */
uint64_t eng_layer_expert_grad_bytes(const eng *E, uint32_t vs, uint32_t layer);
/* total bytes cut into `bucket` pieces, one data-parallel collective each. */
void eng_dp_enqueue_buckets(eng *E, rep *R, int op, uint64_t total, uint64_t bucket, const char *name);

/* ---- train_pgather.c (the distributed optimizer's parameter all-gather) ---- */
/* Setup: each representative's gather buckets (ZeRO 1-2 with Megatron-Core's DDP and dp > 1) and bytes. */
int eng_pg_setup(eng *E);
void eng_pg_free(rep *R);
/* Bytes per gathered element: 1 in the FP8 buffer (fp8 1), else the weights' (weight_elem_bytes). */
uint64_t eng_pg_elem_bytes(const eng *E, int fp8);
/* END_PARAM_GATHER: queue the gathers that run after the optimizer step (all of them without
 * overlap_param_gather; with it, buckets no forward issued); 1 when the stream must wait for the queue. */
int eng_pg_after_step(eng *E, rep *R);
/* E->pg_opt: the first model chunk's gathers, issued after its own optimizer's step (ChainedOptimizer
 * step_with_ready_grads, force_dispatch), beside the rest of the step; they stand for the next iteration's,
 * so this iteration's chunk 0 finds its parameters gathered and END_PARAM_GATHER waits for these. */
void eng_pg_with_step(eng *E, rep *R);
/* ITEM_HOST of item I: with align_param_gather, its points of issue in the interleaved schedule. */
void eng_pg_item(eng *E, rep *R, const schedule_item *I);
/* Item I's forward reaches position `pos` of its chunk (0: the embedding on the first virtual stage, then the
 * layers, the head) at a module of chain x (0: the dense buffers', at the position's start; 1: the routed
 * experts', at the experts' own pre-hook, opgraph_entry.experts_hook): with overlap_param_gather, in a chunk's
 * first micro-batch, the chain's bucket gather there issued as Megatron-Core's pre-hook does and waited for;
 * STEP_NEXT or STEP_BLOCKED (ST_WAIT_GATHER). */
int eng_pg_need(eng *E, rep *R, const schedule_item *I, uint32_t pos, int x);

/* ---- train_pp.c (pipeline transfers: per pass or as Megatron's exchanges, training.p2p_exchange) ---- */
/* ITEM_PRE_RECV: with Megatron's exchanges, wait for the receives of the exchange before item R->it (its
 * input, and a steady interleaved forward's next backward's); STEP_BLOCKED while one is missing. */
int eng_pp_pre_recv(eng *E, rep *R);
/* 1 (the stream waits, ST_WAIT_RECV) until item I's input from its neighbouring stage has arrived; 0 when it
 * has arrived or I has none. Posts the receive. */
int eng_pp_await_input(eng *E, rep *R, const schedule_item *I);
/* ITEM_SEND: send item R->it's output (and a deferred steady forward's), posting the exchange's receives;
 * without overlap_p2p_comm the stream waits for its sends (ST_WAIT_SEND). STEP_NEXT or STEP_BLOCKED. */
int eng_pp_send(eng *E, rep *R);

/* Send item it's output now (per pass, asynchronously: training.moe_a2a_overlap's pairs, which run with
 * overlap_p2p_comm); -1 (E->rc set) on error. */
int eng_pp_send_item(eng *E, rep *R, size_t it);

/* ---- train_fsdp.c (Megatron-FSDP's steps, fsdp.h) ---- */
/* Megatron-FSDP is on and shards over more than one GPU. */
int eng_fsdp_on(const eng *E);
/* Queue the all-gathers of unit `pos`'s prefetch window. */
void eng_fsdp_prefetch(eng *E, rep *R, uint32_t pos);
/* Unit `pos` needs its parameters: queue its all-gather (and with `prefetch` the window's) and wait. */
int eng_fsdp_gather(eng *E, rep *R, uint32_t pos, int prefetch);
/* Unit u's backward is done: its reduce-scatter is pending (eng_fsdp_flush queues it). */
void eng_fsdp_grads(eng *E, rep *R, fsdp_unit u);
/* Queue the pending reduce-scatter, after waiting for older ones beyond the limit in flight. */
int eng_fsdp_flush(eng *E, rep *R);
/* The end of a backward pass: wait for every reduce-scatter. */
int eng_fsdp_backward_end(eng *E, rep *R);

/* ---- train_cpuoff.c (activation offload to the CPU's memory, pp 1) ---- */
void eng_cpuoff_setup(eng *E);
/* Layer `layer`'s forward has ended: start or synchronise the copies out (the wait is eng_cpuoff_wait's). */
void eng_cpuoff_forward_done(eng *E, rep *R, uint32_t layer);
/* Before the stream's next step: 1 (blocked) while a synchronised copy out is in flight. */
int eng_cpuoff_wait(eng *E, rep *R);
/* Before the backward pass's step-th layer (the model's layer L - 1 - step): the copies back; 1 when the
 * stream must wait. */
int eng_cpuoff_backward_start(eng *E, rep *R, uint32_t step);

/* ---- train_net.c ---- */
uint32_t eng_link_of(uint32_t r, int which);
/* A new transfer of kind XK_* for representative rep, started now; its id, or UINT32_MAX (E->rc set). */
uint32_t eng_new_xfer(eng *E, int kind, uint32_t rep, const char *name);
void eng_free_xfer(eng *E, uint32_t id);
/* Start transfer xid's current phase: its latency first, then its flows (EV_LATENCY: eng_phase_flows). */
void eng_phase_begin(eng *E, uint32_t xid);
void eng_phase_flows(eng *E, uint32_t xid);
/* Network flows whose rates changed get their new end events. */
void eng_schedule_changed(eng *E);
void eng_flow_done(eng *E, uint32_t xid);
/* Queue a data-parallel collective of R's stage on the data-parallel group's queue (it runs in order;
 * R->dq[DPQ_DP].enq counts), and start the queue's next collective when none runs. */
void eng_dp_enqueue(eng *E, rep *R, int op, uint64_t bytes, const char *name);
/* ... on queue g (DPQ_DP, or DPQ_EDP for the routed experts' buffers, over the expert-data-parallel group); sync:
 * a synchronous call (async_op False), which starts only after what the other queue holds now (the compute
 * stream waited for it), where an asynchronous one runs beside the other queue */
void eng_dp_enqueue_group(eng *E, rep *R, int op, uint64_t bytes, const char *name, int g, int sync);
/* Start each queue's next collective where it may start. */
void eng_dp_kick(eng *E, rep *R);
/* No data-parallel collective of R queued or running. */
int eng_dp_idle(const rep *R);
/* A collective of kind XK_TP or XK_DP of representative r; returns the xfer id or UINT32_MAX. */
uint32_t eng_start_coll(eng *E, int kind, uint32_t r, int op, uint64_t bytes, const char *name);
/* A collective over the expert-tensor-parallel group, planned as a tensor-parallel one (XK_TP). */
uint32_t eng_start_etp_coll(eng *E, uint32_t r, int op, uint64_t bytes, const char *name);
/* An all-to-all of `bytes` per rank over the expert-parallel group of representative r (XK_EP). */
uint32_t eng_start_a2a(eng *E, uint32_t r, uint64_t bytes, const char *name);
/* Context parallelism's ring exchange of `bytes` per rank (OPGRAPH_CP_P2P), on NVLink when the CP ring stays
 * in the node, else at the NIC's bandwidth (the ring is as slow as its node-crossing hop). */
uint32_t eng_start_cp(eng *E, uint32_t r, uint64_t bytes, const char *name);
/* A pipeline send X (XK_PP, its bytes and fabric set) priced with NCCL's send protocol (training.pp_protocol,
 * collmodel_p2p_plan) and counted in the run's list of collectives. Non-zero (E->rc set) on error. */
int eng_plan_pp_send(eng *E, xfer *X);

/* ---- train_cxl.c ---- */
/* Parameters of R's optimizer shard whose states the optimizer policy keeps in CXL: all of them, or with
 * cxl.offload_scope experts the routed experts' only. */
uint64_t eng_cxl_opt_params(const eng *E, const rep *R);
/* Bytes per GPU of layer `layer` of model chunk vs that a parameter-sized offload moves: `per_param` bytes
 * per parameter of the layer, or with offload_scope experts per routed-expert parameter (0 for a dense
 * layer). */
uint64_t eng_cxl_layer_param_bytes(const eng *E, int moe, uint64_t per_param);
/* Start a transfer of `bytes` per GPU of representative R into its CXL domains (every route), issued by
 * `by` (CXL_BY_GPU: capped by their PCIe path; CXL_BY_CPU), tracked in slot `slot` (or CXL_UNTRACKED).
 * Returns the xfer id, or UINT32_MAX when there is nothing to move (or on error, E->rc set). */
uint32_t eng_cxl_start(eng *E, rep *R, uint64_t bytes, cxl_mix mix, int by, uint8_t slot, const char *name);
/* 1 when the stream must wait for slot `slot` (state set), 0 when it is free. */
int eng_cxl_wait(eng *E, rep *R, int slot);
/* One domain of CXL transfer xid has finished (a cxlmem completion). */
void eng_cxl_sub_done(eng *E, uint32_t xid);
/* After the GPU path's latency: the transfer's data is usable (EV_CXL_DONE). */
void eng_cxl_xfer_done(eng *E, uint32_t xid);
/* LAYER_START: the layer-by-layer policies' fetch of the current layer (the next one's as a prefetch);
 * 1 when the stream must wait. */
int eng_cxl_layer_in(eng *E, rep *R, uint32_t vs, int backward);
/* Layer R->layer of model chunk vs: its forward (backward 0) or backward (1) has ended: the policies' writes. */
void eng_cxl_layer_out(eng *E, rep *R, uint32_t vs, int backward, int last_microbatch);
/* 1 when a policy keeps the activations, so that the backward pass needs no recomputation. */
int eng_cxl_keeps_activations(const eng *E);

/* ---- train_trace.c ---- */
/* the trace's process ids: stage r is r, its links TP_LINKS + r, CXL domain d TP_DOMAIN + d */
enum { TP_LINKS = 100000, TP_DOMAIN = 200000 };
/* a stage's groups of lanes, for what may overlap */
enum { TL_SEND, TL_RECV, TL_CXL, TL_N };
int eng_traced(const eng *E, uint32_t r);
void eng_trace_slice(eng *E, uint32_t pid, uint32_t tid, const char *cat, const char *name, int64_t t0, int64_t t1,
                     const ctrace_arg *args, uint32_t nargs);
void eng_trace_wait(eng *E, uint32_t r, const char *name, int64_t t0);
void eng_trace_xfer(eng *E, const xfer *X);
void eng_trace_names(eng *E);
/* Counters of domain d after a change of its transfers. */
void eng_trace_domain(eng *E, uint32_t d);
/* A transfer's part in domain d from host port `host` has ended: its slices, then eng_trace_domain. */
void eng_trace_domain_end(eng *E, uint32_t d, uint32_t host);
/* Utilisation counters of links whose flows may have changed. */
void eng_note_links(eng *E, const uint32_t *links, uint32_t nl);
/* Per kernel: the shape shown in its slices. */
void eng_trace_shapes(eng *E);

#define ARG_U(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_U64, .u = (v) })
#define ARG_S(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_STR, .s = (v) })
#define ARG_N(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_NUM, .d = (v) })

#endif
