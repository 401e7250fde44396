/* train.c - the discrete-event engine of one training iteration (see train.h for the model).
 *
 * Each representative (one per pipeline stage) executes a program generated on the fly from its
 * schedule (schedule.h) and the templates (opgraph.h), so memory is O(stages x (schedule + templates))
 * rather than O(kernels). Events: a kernel's end, a transfer phase's latency elapsing, a flow's end. */
#include "train.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "ctrace.h"
#include "cxlmem.h"
#include "devcfg.h"
#include "collalgo.h"
#include "nccltune.h"
#include "compute.h"
#include "evq.h"
#include "json.h"
#include "net.h"
#include "opgraph.h"
#include "parallel.h"
#include "schedule.h"

const char *const train_bk_names[] = { "compute", "exposed_tp_comm", "exposed_pp_comm", "exposed_dp_comm",
                                       "pipeline_bubble", "cxl_stall", NULL };

enum { EV_KERNEL, EV_LATENCY, EV_FLOW, EV_CXL_DONE, EV_TIMER };
enum { ST_RUN, ST_KERNEL, ST_TP, ST_WAIT_RECV, ST_WAIT_SEND, ST_WAIT_DP, ST_WAIT_GATHER, ST_WAIT_CXL, ST_WAIT_TIMER,
       ST_DONE };
enum { XK_TP, XK_PP, XK_DP, XK_EMB, XK_CXL };
#define CXL_SLOTS 2          /* 0: what the stream needs now, 1: the next layer's prefetch */
#define CXL_UNTRACKED 255u   /* asynchronous transfers nobody waits for */
#define SHAPE_LEN 80         /* a kernel's dtype and shape in the trace */
enum { L_INTRA_TX, L_INTRA_RX, L_INTER_TX, L_INTER_RX, L_PER_REP };
enum { FAB_INTRA, FAB_INTER };

/* program position: which part of the current schedule item */
enum { PC_RECV, PC_GATHER, PC_BODY, PC_SEND, PC_NEXT };
/* The longest iteration simulated: 10^6 s. Every time in the engine is int64 picoseconds; the bound keeps
 * each sum (an event time plus a kernel, a latency, a flow) far from INT64_MAX (9.2 x 10^18), so that an
 * absurd input (hbm_bandwidth 1MB/s, a measured op of hours) is refused with the key that caused it
 * instead of wrapping into negative times. */
#define TRAIN_MAX_PS 1000000000000000000LL

/* The most gradient buckets (collectives) one stage cuts its gradients or parameters into per
 * iteration: the engine holds one queue entry per bucket, so memory and time grow with their number. */
#define TRAIN_MAX_BUCKETS 65536u

/* body segments */
enum { SEG_PRE, SEG_LAYERS, SEG_POST, SEG_END };

typedef struct xfer {
    uint8_t kind, active;
    uint32_t rep, dst;          /* XK_PP: receiver; XK_EMB: the other stage */
    uint32_t key;               /* XK_PP: receiver's arrival slot */
    collalgo_phase ph[COLLALGO_MAX_PHASES];
    uint32_t nph, cur, pending;
    int fabric;                 /* XK_PP / XK_EMB: FAB_INTRA or FAB_INTER */
    double bytes;               /* XK_PP / XK_EMB */
    int64_t t_start;
    const char *name;
    uint8_t slot;               /* XK_CXL: the representative's slot, or CXL_UNTRACKED */
    /* for the trace's args */
    uint8_t op, algo, proto;    /* XK_TP / XK_DP: collalgo_op, the algorithm planned, its nccltune_proto */
    int64_t hop_intra_ps, hop_inter_ps; /* XK_TP / XK_DP: latency per message on NVLink / the network */
    uint8_t rd, wr, by_gpu;     /* XK_CXL: read:write weights, issued by the GPUs (1) or the CPUs (0) */
    uint64_t coll_bytes;        /* XK_TP / XK_DP: bytes per rank; XK_CXL: bytes per GPU */
} xfer;

/* Where a representative's CXL traffic lands: `count` of its GPUs on host port `host` of domain `domain`. */
typedef struct cxl_route { uint32_t domain, host, count; } cxl_route;

typedef struct dpq_item { int op; uint64_t bytes; const char *name; } dpq_item;

typedef struct rep {
    uint32_t r;
    schedule_item *items;
    size_t nitems, it;
    int pc;
    /* body walk */
    int seg, back;
    uint32_t layer, entry, sub;     /* sub: within a backward layer: 0 recompute, 1 backward, 2 bucket */
    const opgraph_tpl *cur_tpl;
    /* compute stream */
    int state;
    int64_t since;
    int64_t bk[TRAIN_BK_N];
    uint32_t wait_key;
    uint32_t send_xid;              /* the blocking send the stream waits for (ST_WAIT_SEND) */
    /* pipeline arrivals, per (chunk, micro-batch, direction): arrival and send times, -1 = not yet */
    int64_t *arrived, *sent;
    /* data parallel */
    dpq_item *dpq;
    uint32_t dpq_head, dpq_len, dpq_cap;
    int dp_running;
    uint64_t dp_enq, dp_done;       /* data-parallel collectives enqueued / completed (FIFO order) */
    uint64_t gather_wait;           /* ZeRO-3: the parameter gather the stream waits for (its dp_enq number) */
    uint64_t gather_next;           /* ZeRO-3: the prefetched gather of the next layer, 0 = none */
    int layer_gathered;             /* ZeRO-3: the current layer's parameters are in place */
    uint64_t bucket_acc;
    uint32_t *bwd_done;             /* backward passes done per chunk */
    int tail;                       /* end-of-iteration step: 0 flush, 1 emb sync, 2 optimizer, 3 gather, 4 end */
    int emb_waiting;
    int64_t finish_ps;
    uint32_t opt_op;
    uint64_t params;                /* before ZeRO */
    int first_stage, last_stage;    /* holds the embedding / the head */
    /* CXL */
    cxl_route *routes;
    uint32_t nroutes;
    uint32_t slot_xid[CXL_SLOTS];
    uint8_t slot_busy[CXL_SLOTS];
    uint8_t prefetched;             /* slot 1 holds the current layer's fetch */
    uint8_t layer_fetched;          /* the current layer's CXL fetch has been waited for */
    uint8_t host_paid;              /* the current schedule item's host overhead has run */
    int wait_slot;
    int opt_sub;                    /* step of an offloaded optimizer */
    int64_t cpu_start;
    uint64_t shard_params;
} rep;

typedef struct eng {
    const expcfg *x;
    const traincfg *t;
    opgraph g;
    int64_t *dur;                   /* per kernel */
    uint8_t *measured;              /* per kernel: priced from the measured file (o->measured) */
    evq q;
    net *n;
    rep *reps;
    uint32_t pp, v, m, layers_per_chunk;
    xfer *xf;
    uint32_t nxf, capxf, *xfree, nxfree, capxfree;
    collalgo_fabric fab;
    collalgo_group tp_group, dp_group;
    train_coll *colls;              /* the result's list of distinct collectives (note_coll) */
    uint32_t ncolls;
    uint64_t colls_other;
    int pp_fabric_next[1];          /* unused */
    uint8_t *pp_intra;              /* per stage r: the link r -> r+1 (mod pp) stays in the node */
    int64_t now;
    cxl_err *err;
    int rc;
    uint64_t items_done, items_total;
    const train_opts *o;
    /* trace (o->trace set; see "Chrome trace" below) */
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
    uint64_t act_bytes;             /* one layer's activations without recomputation (offload_activations) */
    uint64_t param_bytes;           /* one layer's 16-bit parameters (offload_parameters) */
    uint32_t ndomains;
    uint32_t *domain_copies, *domain_nodes;
    uint32_t *domain_active;        /* transfers active per domain (trace) */
    int64_t *domain_since;
    uint32_t *port_active;          /* per domain x host port (trace) */
    int64_t *port_since;
    uint32_t ports;
} eng;

static int oom(eng *E) { return E->rc = cxl_errf(E->err, CXL_ENOMEM, "out of memory (training engine)"); }

/* ---- Chrome trace (ctrace.h) ----
 * Processes: stage r (pid r) with its compute stream (tid 0), data-parallel stream (tid 1) and lane
 * groups for what may overlap (pipeline sends, receives, CXL transfers: TL_TID0 x (group + 1)); the
 * links of stage r (pid TP_LINKS + r: a utilisation counter per link); CXL domain d
 * (pid TP_DOMAIN + d: traffic and host-port slices, counters of transfers in flight and bandwidth). */
enum { TP_LINKS = 100000, TP_DOMAIN = 200000 };
enum { TL_SEND, TL_RECV, TL_CXL, TL_N };
#define TL_TID0 100u
/* utilisation counters: one per fabric, series out and in (a link and its reverse change together) */
static const char *const fab_names[2] = { "nvlink utilisation", "nic utilisation" };
static const char *const out_in[2] = { "out", "in" };

static int traced(const eng *E, uint32_t r) { return E->ct && (!E->o->trace_stages || E->o->trace_stages[r]); }

static void trace_check(eng *E)
{
    if (!E->rc && ctrace_failed(E->ct, NULL))
        E->rc = ctrace_failed(E->ct, E->err);
}

static void trace_slice(eng *E, uint32_t pid, uint32_t tid, const char *cat, const char *name, int64_t t0, int64_t t1,
                        const ctrace_arg *args, uint32_t nargs)
{
    if (t1 <= t0)
        return;
    ctrace_slice(E->ct, pid, tid, cat, name, t0, t1, args, nargs);
    trace_check(E);
}

/* A wait of stage r's compute stream (tid 0). */
static void trace_wait(eng *E, uint32_t r, const char *name, int64_t t0)
{
    if (traced(E, r))
        trace_slice(E, r, 0, "wait", name, t0, E->now, NULL, 0);
}

#define ARG_U(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_U64, .u = (v) })
#define ARG_S(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_STR, .s = (v) })
#define ARG_N(k, v) ((ctrace_arg){ .key = (k), .type = CTRACE_NUM, .d = (v) })

static const char *fabric_name(int fabric) { return fabric == FAB_INTRA ? "nvlink" : "network"; }

/* A finished collective, send or CXL transfer X, on its streams and lanes. */
static void trace_xfer(eng *E, const xfer *X)
{
    if (!E->ct || E->now <= X->t_start)
        return;
    ctrace_arg a[6];
    if (X->kind == XK_TP || X->kind == XK_DP) {
        if (!traced(E, X->rep))
            return;
        a[0] = ARG_U("bytes", X->coll_bytes);
        a[1] = ARG_S("op", collalgo_op_name((collalgo_op)X->op));
        a[2] = ARG_S("algorithm", collalgo_algo_name((collalgo_algo)X->algo));
        a[3] = ARG_S("protocol", nccltune_proto_name((nccltune_proto)X->proto));
        a[4] = ARG_U("ranks", X->kind == XK_TP ? E->tp_group.ranks : E->dp_group.ranks);
        if (X->kind == XK_TP)
            trace_slice(E, X->rep, 0, "tp", X->name, X->t_start, E->now, a, 5);
        else
            trace_slice(E, X->rep, 1, "dp", X->name, X->t_start, E->now, a, 5);
    } else if (X->kind == XK_PP || X->kind == XK_EMB) {
        const char *cat = X->kind == XK_PP ? "pp" : "dp";
        a[0] = ARG_U("bytes", (uint64_t)X->bytes);
        a[1] = ARG_U("from_stage", X->rep);
        a[2] = ARG_U("to_stage", X->dst);
        a[3] = ARG_S("fabric", fabric_name(X->fabric));
        int s = traced(E, X->rep), d = traced(E, X->dst);
        uint32_t ts = s ? ctrace_lane(E->ct, &E->lanes[X->rep * TL_N + TL_SEND], X->t_start, E->now) : 0;
        uint32_t td = d ? ctrace_lane(E->ct, &E->lanes[X->dst * TL_N + TL_RECV], X->t_start, E->now) : 0;
        if (s)
            trace_slice(E, X->rep, ts, cat, X->name, X->t_start, E->now, a, 4);
        if (d)
            trace_slice(E, X->dst, td, cat, X->name, X->t_start, E->now, a, 4);
        if (s && d && ctrace_in_window(E->ct, X->t_start, E->now)) {
            /* the arrow joins the two slices at their middle, inside both */
            int64_t mid = X->t_start + (E->now - X->t_start) / 2;
            uint64_t id = ++E->flow_ids;
            ctrace_flow(E->ct, 1, id, X->rep, ts, cat, X->name, mid);
            ctrace_flow(E->ct, 0, id, X->dst, td, cat, X->name, mid);
        }
    } else if (X->kind == XK_CXL) {
        if (!traced(E, X->rep))
            return;
        char mix[16];
        snprintf(mix, sizeof mix, "%u:%u", X->rd, X->wr);
        double secs = (double)(E->now - X->t_start) / 1e12;
        a[0] = ARG_U("bytes_per_gpu", X->coll_bytes);
        a[1] = ARG_S("read:write", mix);
        a[2] = ARG_S("issued_by", X->by_gpu ? "gpu" : "cpu");
        a[3] = ARG_N("gbps_per_gpu", (double)X->coll_bytes / secs / 1e9);
        uint32_t t = ctrace_lane(E->ct, &E->lanes[X->rep * TL_N + TL_CXL], X->t_start, E->now);
        trace_slice(E, X->rep, t, "cxl", X->name, X->t_start, E->now, a, 4);
    }
    trace_check(E);
}

/* Metadata, written once the layout is known. */
static void trace_names(eng *E)
{
    static const char *const gnames[TL_N] = { "pipeline sends", "pipeline receives", "CXL transfers" };
    char buf[512];
    for (uint32_t r = 0; r < E->pp; r++) {
        for (int g = 0; g < TL_N; g++)
            E->lanes[r * TL_N + g] = (ctrace_lanes){ .pid = r, .tid0 = TL_TID0 * (uint32_t)(g + 1), .name = gnames[g] };
        if (!traced(E, r))
            continue;
        snprintf(buf, sizeof buf, "stage %u (GPU of TP 0, DP 0)", r);
        ctrace_process(E->ct, r, buf);
        ctrace_thread(E->ct, r, 0, "compute stream");
        ctrace_thread(E->ct, r, 1, "data-parallel collectives");
        snprintf(buf, sizeof buf, "links of stage %u", r);
        ctrace_process(E->ct, TP_LINKS + r, buf);
        static const double zero[2] = { 0, 0 };
        for (uint32_t k = 0; k < 2; k++)
            ctrace_counter(E->ct, TP_LINKS + r, fab_names[k], out_in, zero, 2, 0);
    }
    for (uint32_t d = 0; d < E->ndomains; d++) {
        snprintf(buf, sizeof buf, "CXL domain %u (%s '%s', stands for %u)", d, cxlcfg_memory_names[E->cx->memory],
                 E->cx->dev.name, E->domain_copies[d]);
        ctrace_process(E->ct, TP_DOMAIN + d, buf);
        ctrace_thread(E->ct, TP_DOMAIN + d, 0, "devices (any transfer active)");
        for (uint32_t k = 0; k < E->ports; k++) {
            snprintf(buf, sizeof buf, "host port %u link (node %u of the domain)", k, k);
            ctrace_thread(E->ct, TP_DOMAIN + d, 1 + k, buf);
        }
    }
    trace_check(E);
}

/* The DevLoad mix and the mean queue depths of domain d over an interval, from its load at both ends
 * (cxlmem_load), written at the interval's start. */
static void trace_load(eng *E, uint32_t d, const cxlmem_load_sums *a, const cxlmem_load_sums *b, int64_t t)
{
    static const char *const dl[4] = { "light", "optimal", "moderate", "severe" };
    static const char *const qs[2] = { "ingress", "dram" };
    double msgs = 0, mix[4], cyc = b->cycles - a->cycles, q[2] = { 0, 0 };
    for (int k = 0; k < 4; k++)
        msgs += b->devload_msgs[k] - a->devload_msgs[k];
    for (int k = 0; k < 4; k++)
        mix[k] = msgs > 0 ? (b->devload_msgs[k] - a->devload_msgs[k]) / msgs : 0;
    if (cyc > 0) {
        q[0] = (b->ingress_occ - a->ingress_occ) / cyc;
        q[1] = (b->dram_queue_occ - a->dram_queue_occ) / cyc;
    }
    ctrace_counter(E->ct, TP_DOMAIN + d, "CXL DevLoad", dl, mix, 4, t);
    ctrace_counter(E->ct, TP_DOMAIN + d, "CXL queue depth", qs, q, 2, t);
}

/* Counters of domain d after a change of its transfers: in flight, and the bandwidth, DevLoad mix and
 * queue depths since the last change (written at the last change's time: the mean over the interval it
 * held). */
static void trace_domain(eng *E, uint32_t d)
{
    if (!E->ct)
        return;
    double rd, wr;
    cxlmem_domain_bytes(E->cm, d, &rd, &wr);
    cxlmem_load_sums load;
    cxlmem_load(E->cm, d, &load);
    uint32_t pid = TP_DOMAIN + d;
    if (E->now > E->dom_t[d]) {
        double secs = (double)(E->now - E->dom_t[d]) / 1e12;
        static const char *const rw[2] = { "read", "write" };
        double gbps[2] = { (rd - E->dom_bytes[2 * d]) / secs / 1e9, (wr - E->dom_bytes[2 * d + 1]) / secs / 1e9 };
        ctrace_counter(E->ct, pid, "CXL GB/s", rw, gbps, 2, E->dom_t[d]);
        trace_load(E, d, &E->dom_load[d], &load, E->dom_t[d]);
    }
    E->dom_load[d] = load;
    E->dom_bytes[2 * d] = rd;
    E->dom_bytes[2 * d + 1] = wr;
    E->dom_t[d] = E->now;
    static const char *const tr[1] = { "transfers" };
    double n = E->domain_active[d];
    ctrace_counter(E->ct, pid, "CXL in flight", tr, &n, 1, E->now);
    trace_check(E);
}

/* ---- compute-stream accounting ---- */

static void set_state(eng *E, rep *R, int st, int bk)
{
    if (bk >= 0)
        R->bk[bk] += E->now - R->since;
    R->state = st;
    R->since = E->now;
}

/* ---- network ---- */

static uint32_t link_of(uint32_t r, int which) { return r * L_PER_REP + (uint32_t)which; }

/* Utilisation counters of links whose flows may have changed: a sample when the value changes (a link
 * is busy exactly while its counter is above 0, so no busy slices are written besides). */
static void note_links(eng *E, const uint32_t *links, uint32_t nl)
{
    if (!E->ct)
        return;
    uint32_t changed[2 * L_PER_REP], nc = 0; /* a fabric's out and in link: l0 and l0 + 1 */
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = links[i];
        if (!traced(E, l / L_PER_REP))
            continue;
        double u = net_link_utilisation(E->n, l);
        if (u == E->link_util[l])
            continue;
        E->link_util[l] = u;
        uint32_t l0 = l & ~1u, k = 0;
        while (k < nc && changed[k] != l0)
            k++;
        if (k == nc && nc < 2 * L_PER_REP)
            changed[nc++] = l0;
    }
    for (uint32_t k = 0; k < nc; k++)
        ctrace_counter(E->ct, TP_LINKS + changed[k] / L_PER_REP, fab_names[changed[k] % L_PER_REP / 2], out_in,
                       &E->link_util[changed[k]], 2, E->now);
    trace_check(E);
}

static void schedule_changed(eng *E)
{
    uint32_t ids[64], k;
    while ((k = net_take_changed(E->n, ids, 64)) > 0) {
        for (uint32_t i = 0; i < k; i++) {
            if (E->ct) {
                uint32_t ls[NET_MAX_FLOW_LINKS];
                note_links(E, ls, net_flow_links(E->n, ids[i], ls));
            }
            int64_t eta = net_flow_eta(E->n, ids[i]);
            if (eta == INT64_MAX) {
                E->rc = cxl_errf(E->err, CXL_ELIMIT, "a network flow would never finish (zero rate)");
                return;
            }
            if (evq_push(&E->q, eta, EV_FLOW, ids[i], net_flow_version(E->n, ids[i]))) {
                oom(E);
                return;
            }
        }
        if (k < 64)
            break;
    }
}

static void start_flow(eng *E, uint32_t xid, double bytes, uint32_t l0, uint32_t l1)
{
    uint32_t links[2] = { l0, l1 }, fid;
    if (net_flow_start(E->n, E->now, bytes, links, 2, xid, &fid, E->err)) {
        E->rc = E->err->code ? E->err->code : CXL_EINTERNAL;
        return;
    }
    E->xf[xid].pending++;
    note_links(E, links, 2);
    schedule_changed(E);
}

static uint32_t new_xfer(eng *E)
{
    uint32_t id;
    if (E->nxfree) {
        id = E->xfree[--E->nxfree];
    } else {
        if (E->nxf == E->capxf) {
            uint32_t nc = E->capxf ? 2 * E->capxf : 256;
            xfer *nx = realloc(E->xf, nc * sizeof *nx);
            if (!nx) {
                oom(E);
                return UINT32_MAX;
            }
            E->xf = nx;
            E->capxf = nc;
        }
        id = E->nxf++;
    }
    memset(&E->xf[id], 0, sizeof E->xf[id]);
    E->xf[id].active = 1;
    E->xf[id].t_start = E->now;
    return id;
}

static void free_xfer(eng *E, uint32_t id)
{
    E->xf[id].active = 0;
    if (E->nxfree == E->capxfree) {
        uint32_t nc = E->capxfree ? 2 * E->capxfree : 256;
        uint32_t *nf = realloc(E->xfree, nc * sizeof *nf);
        if (!nf) {
            oom(E);
            return;
        }
        E->xfree = nf;
        E->capxfree = nc;
    }
    E->xfree[E->nxfree++] = id;
}

static int64_t phase_latency(const eng *E, const xfer *X)
{
    if (X->kind == XK_PP || X->kind == XK_EMB) {
        int hops = X->kind == XK_EMB ? 2 : 1;
        return hops * (X->fabric == FAB_INTRA ? (int64_t)E->fab.intra_latency_ps : (int64_t)E->fab.inter_latency_ps);
    }
    const collalgo_phase *p = &X->ph[X->cur];
    return (int64_t)p->intra_hops * X->hop_intra_ps + (int64_t)p->inter_hops * X->hop_inter_ps;
}

/* Start phase X->cur: its latency first, then its flows (EV_LATENCY). */
static void phase_begin(eng *E, uint32_t xid)
{
    int64_t lat = phase_latency(E, &E->xf[xid]);
    if (evq_push(&E->q, E->now + lat, EV_LATENCY, xid, 0))
        oom(E);
}

static void xfer_done(eng *E, uint32_t xid);

static void phase_flows(eng *E, uint32_t xid)
{
    xfer *X = &E->xf[xid];
    X->pending = 0;
    if (X->kind == XK_PP) {
        int tx = X->fabric == FAB_INTRA ? L_INTRA_TX : L_INTER_TX, rx = X->fabric == FAB_INTRA ? L_INTRA_RX : L_INTER_RX;
        start_flow(E, xid, X->bytes, link_of(X->rep, tx), link_of(X->dst, rx));
    } else if (X->kind == XK_EMB) {
        int tx = X->fabric == FAB_INTRA ? L_INTRA_TX : L_INTER_TX, rx = X->fabric == FAB_INTRA ? L_INTRA_RX : L_INTER_RX;
        start_flow(E, xid, X->bytes, link_of(X->rep, tx), link_of(X->dst, rx));
        if (E->rc == 0)
            start_flow(E, xid, X->bytes, link_of(X->dst, tx), link_of(X->rep, rx));
    } else {
        const collalgo_phase *p = &X->ph[X->cur];
        if (p->intra_bytes)
            start_flow(E, xid, (double)p->intra_bytes, link_of(X->rep, L_INTRA_TX), link_of(X->rep, L_INTRA_RX));
        if (p->inter_bytes && E->rc == 0)
            start_flow(E, xid, (double)p->inter_bytes, link_of(X->rep, L_INTER_TX), link_of(X->rep, L_INTER_RX));
    }
    if (E->rc == 0 && E->xf[xid].pending == 0) {
        /* nothing to move in this phase */
        X = &E->xf[xid];
        if (X->kind == XK_TP || X->kind == XK_DP) {
            if (++X->cur < X->nph) {
                phase_begin(E, xid);
                return;
            }
        }
        xfer_done(E, xid);
    }
}

static void flow_done(eng *E, uint32_t xid)
{
    xfer *X = &E->xf[xid];
    if (--X->pending)
        return;
    if ((X->kind == XK_TP || X->kind == XK_DP) && ++X->cur < X->nph) {
        phase_begin(E, xid);
        return;
    }
    xfer_done(E, xid);
}

/* NCCL's ring moves whole chunks (coll.h: loops of channels x ranks x 2 MiB, messages rounded up to the
 * threads' unit) and pays a latency per message: scale the phase's bytes to NCCL's and its hops by the
 * number of loops. */
static int nccl_ring(eng *E, const collalgo_group *grp, int op, uint64_t bytes, collalgo_phase *ph)
{
    coll_ring_params p;
    coll_ring_params_default(&p, grp->ranks, (uint32_t)E->x->cluster.nccl_channels);
    uint32_t passes = op == COLLALGO_ALLREDUCE ? 2 : 1;
    uint64_t total, steps;
    int rc = coll_ring_totals(&p, passes, bytes, &total, &steps, E->err);
    if (rc || total == 0)
        return rc;
    double ideal = (double)passes * (double)(grp->ranks - 1) / (double)grp->ranks * (double)bytes;
    double ratio = (double)total / ideal;
    uint64_t loops = steps / ((uint64_t)passes * (grp->ranks - 1));
    ph->intra_bytes = (uint64_t)ceil((double)ph->intra_bytes * ratio);
    ph->inter_bytes = (uint64_t)ceil((double)ph->inter_bytes * ratio);
    ph->intra_hops = (uint32_t)(ph->intra_hops * loops);
    ph->inter_hops = (uint32_t)(ph->inter_hops * loops);
    return 0;
}

/* Point err (filled) at l, prefixed with the key, keeping its code; returns the code. */
static int relocate(cxl_err *err, const cfgloc *l, const char *key)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    int code = err->code ? err->code : CXL_EINTERNAL;
    if (l && l->file[0])
        cxl_errf_at(err, code, l->file, l->line, l->col, "%s: %s", key, msg);
    else
        cxl_errf(err, code, "%s: %s", key, msg);
    return code;
}

/* Where kernel op's time came from: its entry in the measured file, or the GPU key that bounds it. */
static int kernel_blame(eng *E, uint32_t op, cxl_err *err)
{
    const op_desc *d = &E->g.ops[op];
    const char *file;
    int line, col;
    if (E->measured[op] && optimes_where(E->o->measured, d, &file, &line, &col)) {
        cfgloc l;
        snprintf(l.file, sizeof l.file, "%s", file);
        l.line = line;
        l.col = col;
        return relocate(err, &l, "op-times");
    }
    compute_cost cc;
    compute_op_cost(&E->x->gpu, d, &cc, NULL);
    int f = cc.memory_bound ? GPUCFG_F_HBM_BW : GPUCFG_F_TFLOPS0 + d->dtype;
    char key[48];
    snprintf(key, sizeof key, "gpu.%s", cc.memory_bound ? "hbm_bandwidth" : "tflops");
    if (!cc.memory_bound)
        snprintf(key, sizeof key, "gpu.%s_tflops", gpucfg_dtype_names[d->dtype]);
    return relocate(err, &E->x->gpu.loc[f], key);
}

/* A measured time below what the GPU's dense peak allows (2 x batch x m x n x k FLOPs of a GEMM at
 * tflops[dtype]): the file was measured on another GPU, or is wrong. Counted, and the first one kept
 * as a warning for the caller to print (MFU can then exceed 100 %). */
static void above_peak(eng *E, const op_desc *op, int64_t ps, train_result *res)
{
    double peak = E->x->gpu.tflops[op->dtype] * 1e12;
    if (op->kind != OP_GEMM || !(peak > 0))
        return;
    double flops = 2.0 * (double)op->batch * (double)op->m * (double)op->n * (double)op->k;
    double floor_ps = flops / peak * 1e12;
    if ((double)ps >= floor_ps)
        return;
    if (res->ops_above_peak++ == 0) {
        const char *file = "";
        int line = 0, col = 0;
        optimes_where(E->o->measured, op, &file, &line, &col);
        snprintf(res->peak_warning, sizeof res->peak_warning,
                 "%s:%d:%d: measured time of %s (%s) is %.3g us, below the %.3g us that gpu '%s' needs at its "
                 "%s peak of %g TFLOP/s: the file does not match the GPU (MFU may exceed 100 %%)",
                 file, line, col, op->name, gpucfg_dtype_names[op->dtype], (double)ps / 1e6, floor_ps / 1e6,
                 E->x->gpu.name, gpucfg_dtype_names[op->dtype], E->x->gpu.tflops[op->dtype]);
    }
}

/* Point a collective's error at the key behind it: training.collectives when the algorithm cannot do
 * the operation, the NIC bandwidth when the group spans nodes over a slower inter-node fabric, else the
 * GPU's NVLink. */
/* The training key behind field f (training.collectives, tp_/dp_collectives, protocol, tp_/dp_protocol). */
static const char *train_key(int f)
{
    switch (f) {
    case TRAINCFG_F_TP_COLL: return "training.tp_collectives";
    case TRAINCFG_F_DP_COLL: return "training.dp_collectives";
    case TRAINCFG_F_PROTOCOL: return "training.protocol";
    case TRAINCFG_F_TP_PROTO: return "training.tp_protocol";
    case TRAINCFG_F_DP_PROTO: return "training.dp_protocol";
    default: return "training.collectives";
    }
}

static int coll_blame(eng *E, const collalgo_group *grp, int rc, int algo_field)
{
    const expcfg *x = E->x;
    if (strstr(E->err->msg, "does not support"))
        return relocate(E->err, &x->train.loc[algo_field], train_key(algo_field));
    if (grp->ranks_per_node < grp->ranks && E->fab.inter_Bps <= E->fab.intra_Bps)
        return relocate(E->err, &x->cluster.loc[CLUSTERCFG_F_NIC_BW], "cluster.nic_bandwidth");
    if (rc == CXL_ECONFIG || rc == CXL_ELIMIT)
        return relocate(E->err, &x->gpu.loc[GPUCFG_F_NVLINK], "gpu.nvlink");
    return rc;
}

/* NCCL's view of group grp (nccltune.h): its ranks and nodes, the channels, and the bus bandwidth per
 * direction of one rank (NVLink on one node, else its share of the NICs, which bounds NCCL's multi-node
 * graphs). Hopper-class GPUs are those with fp8 tensor cores. */
static void nccl_comm(const eng *E, const collalgo_group *grp, nccltune_comm *c)
{
    memset(c, 0, sizeof *c);
    c->ranks = grp->ranks;
    c->nodes = grp->ranks / grp->ranks_per_node;
    c->channels = (uint32_t)E->x->cluster.nccl_channels;
    uint64_t bw = c->nodes == 1 ? E->fab.intra_Bps : E->fab.inter_Bps;
    if (c->nodes > 1 && E->fab.intra_Bps && E->fab.intra_Bps < bw)
        bw = E->fab.intra_Bps;
    c->bus_gbps = (double)(bw ? bw : 1) / 1e9;
    c->hopper = E->x->gpu.tflops[GPUCFG_FP8] > 0;
    c->amd_cpu = E->x->cluster.cpu_vendor == CLUSTERCFG_CPU_AMD;
}

/* Count one collective in the run's list of distinct choices (train_result.colls). */
static void note_coll(eng *E, int kind, const xfer *X, const nccltune_comm *c)
{
    train_coll *L = E->colls;
    for (uint32_t i = 0; i < E->ncolls; i++)
        if (L[i].tp == (kind == XK_TP) && L[i].op == X->op && L[i].bytes == X->coll_bytes && L[i].algo == X->algo &&
            L[i].proto == X->proto) {
            L[i].count++;
            return;
        }
    if (E->ncolls == TRAIN_MAX_COLL_KINDS) {
        E->colls_other++;
        return;
    }
    train_coll *n = &L[E->ncolls++];
    n->tp = kind == XK_TP;
    n->op = X->op;
    n->algo = X->algo;
    n->proto = X->proto;
    n->bytes = X->coll_bytes;
    n->ranks = c->ranks;
    n->nodes = c->nodes;
    n->count = 1;
}

/* A collective of the tensor- or data-parallel group of representative r. The algorithm and protocol are
 * NCCL's choice (nccltune.h) within what training.collectives and training.protocol allow (hierarchical,
 * not an NCCL algorithm, takes the ring's protocol); the phases are collalgo's for that algorithm, with
 * the protocol's bytes on the wire and message latency (nccltune_factors; Simple changes nothing). */
static uint32_t start_coll(eng *E, int kind, uint32_t r, int op, uint64_t bytes, const char *name)
{
    const collalgo_group *grp = kind == XK_TP ? &E->tp_group : &E->dp_group;
    uint32_t xid = new_xfer(E);
    if (xid == UINT32_MAX)
        return xid;
    xfer *X = &E->xf[xid];
    X->kind = (uint8_t)kind;
    X->rep = r;
    X->name = name;
    const traincfg *t = &E->x->train;
    int ga = kind == XK_TP ? t->tp_collective_algo : t->dp_collective_algo;
    int gp = kind == XK_TP ? t->tp_protocol : t->dp_protocol;
    int fa = ga == TRAINCFG_INHERIT ? TRAINCFG_F_COLLECTIVES : kind == XK_TP ? TRAINCFG_F_TP_COLL : TRAINCFG_F_DP_COLL;
    int fp = gp == TRAINCFG_INHERIT ? TRAINCFG_F_PROTOCOL : kind == XK_TP ? TRAINCFG_F_TP_PROTO : TRAINCFG_F_DP_PROTO;
    collalgo_algo want = (collalgo_algo)(ga == TRAINCFG_INHERIT ? t->collective_algo : ga), chosen;
    nccltune_proto proto = (nccltune_proto)(gp == TRAINCFG_INHERIT ? t->protocol : gp);
    nccltune_comm c;
    nccl_comm(E, grp, &c);
    nccltune_choice ch = { COLLALGO_RING, NCCLTUNE_SIMPLE, 0, 0, 0 };
    collalgo_algo ask = want == COLLALGO_HIERARCHICAL || (want == COLLALGO_TREE && op != COLLALGO_ALLREDUCE)
                            ? COLLALGO_RING : want;
    int rc = 0;
    if (grp->ranks > 1 && bytes)
        rc = nccltune_pick(&c, (collalgo_op)op, bytes, ask, proto, &ch, E->err);
    if (rc) {
        E->rc = relocate(E->err, &t->loc[fp], train_key(fp));
        return UINT32_MAX;
    }
    collalgo_algo plan = want == COLLALGO_AUTO ? ch.algo : want;
    rc = collalgo_plan((collalgo_op)op, plan, grp, bytes, &E->fab, X->ph, &X->nph, &chosen, E->err);
    if (rc == 0 && X->nph && collalgo_time_ps(X->ph, X->nph, &E->fab, E->err) < 0)
        rc = E->err->code ? E->err->code : CXL_ELIMIT; /* a time beyond int64 (gpu.nvlink: 1B/s) */
    if (rc) {
        E->rc = coll_blame(E, grp, rc, fa);
        return UINT32_MAX;
    }
    X->op = (uint8_t)op;
    X->algo = (uint8_t)chosen;
    X->proto = (uint8_t)ch.proto;
    X->coll_bytes = bytes;
    X->hop_intra_ps = (int64_t)E->fab.intra_latency_ps;
    X->hop_inter_ps = (int64_t)E->fab.inter_latency_ps;
    if (X->nph == 0) {
        xfer_done(E, xid);
        return xid;
    }
    note_coll(E, kind, X, &c);
    if (ch.proto == NCCLTUNE_SIMPLE) {
        if (chosen == COLLALGO_RING && op != COLLALGO_BROADCAST && X->nph == 1 &&
            nccl_ring(E, grp, op, bytes, &X->ph[0])) {
            E->rc = E->err->code ? E->err->code : CXL_EINTERNAL;
            return UINT32_MAX;
        }
    } else {
        double fb, fi, fo;
        if (nccltune_factors(&c, (collalgo_op)op, chosen == COLLALGO_TREE ? COLLALGO_TREE : COLLALGO_RING, ch.proto,
                             &fb, &fi, &fo, E->err)) {
            E->rc = E->err->code ? E->err->code : CXL_EINTERNAL;
            return UINT32_MAX;
        }
        for (uint32_t i = 0; i < X->nph; i++) {
            X->ph[i].intra_bytes = (uint64_t)ceil((double)X->ph[i].intra_bytes * fb);
            X->ph[i].inter_bytes = (uint64_t)ceil((double)X->ph[i].inter_bytes * fb);
        }
        X->hop_intra_ps = (int64_t)llround((double)X->hop_intra_ps * fi);
        X->hop_inter_ps = (int64_t)llround((double)X->hop_inter_ps * fo);
    }
    phase_begin(E, xid);
    return xid;
}

/* ---- CXL memory ---- */

/* Start a transfer of `bytes` per GPU of representative R into its CXL domains (every route), issued by
 * the GPUs (capped by their PCIe path) or by the nodes' CPUs. Returns the xfer id, or UINT32_MAX when
 * there is nothing to move (or on error, E->rc set). */
static uint32_t cxl_start(eng *E, rep *R, uint64_t bytes, uint8_t rd, uint8_t wr, int by_gpu, uint8_t slot,
                          const char *name)
{
    if (!E->cm || bytes == 0 || R->nroutes == 0)
        return UINT32_MAX;
    uint32_t xid = new_xfer(E);
    if (xid == UINT32_MAX)
        return xid;
    xfer *X = &E->xf[xid];
    X->kind = XK_CXL;
    X->rep = R->r;
    X->name = name;
    X->slot = slot;
    X->rd = rd;
    X->wr = wr;
    X->by_gpu = (uint8_t)by_gpu;
    X->coll_bytes = bytes;
    for (uint32_t i = 0; i < R->nroutes && E->rc == 0; i++) {
        const cxl_route *rt = &R->routes[i];
        double cap = by_gpu ? (double)E->cx->gpu_path_bw_bps * rt->count : 0;
        int rc = cxlmem_start(E->cm, E->now, rt->domain, rt->host, bytes * rt->count, rd, wr, cap, xid, E->err);
        if (rc)
            E->rc = rc;
        else
            E->xf[xid].pending++;
        if (E->ct && E->domain_active[rt->domain]++ == 0)
            E->domain_since[rt->domain] = E->now;
        if (E->ct && E->port_active[rt->domain * E->ports + rt->host]++ == 0)
            E->port_since[rt->domain * E->ports + rt->host] = E->now;
        if (E->ct)
            trace_domain(E, rt->domain);
    }
    if (slot < CXL_SLOTS) {
        R->slot_xid[slot] = xid;
        R->slot_busy[slot] = 1;
    }
    return xid;
}

/* 1 when the stream must wait for slot `slot` (state set), 0 when it is free. */
static int cxl_wait(eng *E, rep *R, int slot)
{
    if (!R->slot_busy[slot])
        return 0;
    R->wait_slot = slot;
    set_state(E, R, ST_WAIT_CXL, -1);
    return 1;
}

static void advance(eng *E, rep *R);

/* All of an xfer's domains are done: after the GPU path's latency the data is usable. */
static void cxl_xfer_done(eng *E, uint32_t xid)
{
    xfer X = E->xf[xid];
    free_xfer(E, xid);
    rep *R = &E->reps[X.rep];
    trace_xfer(E, &X);
    if (X.slot < CXL_SLOTS && R->slot_xid[X.slot] == xid && R->slot_busy[X.slot]) {
        R->slot_busy[X.slot] = 0;
        if (R->state == ST_WAIT_CXL && R->wait_slot == X.slot) {
            trace_wait(E, R->r, "wait cxl", R->since);
            set_state(E, R, ST_RUN, TRAIN_BK_CXL);
            advance(E, R);
        }
    }
}

static void cxl_sub_done(eng *E, uint32_t xid)
{
    if (xid >= E->nxf || !E->xf[xid].active || E->xf[xid].kind != XK_CXL) {
        E->rc = cxl_errf(E->err, CXL_EINTERNAL, "internal: completion of an unknown CXL transfer");
        return;
    }
    if (--E->xf[xid].pending)
        return;
    int64_t lat = (int64_t)E->cx->gpu_path_latency_ps;
    if (lat > 0) {
        if (evq_push(&E->q, E->now + lat, EV_CXL_DONE, xid, 0))
            oom(E);
    } else {
        cxl_xfer_done(E, xid);
    }
}

/* Fetch what the current layer needs from CXL (parameters, saved activations) into slot 0, the next
 * layer's into slot 1 as a prefetch. Returns 1 when the stream must wait. */
static int cxl_layer_fetch(eng *E, rep *R, uint64_t now_bytes, uint64_t next_bytes, const char *name)
{
    if (R->layer_fetched)
        return 0;
    R->layer_fetched = 1;
    if (now_bytes == 0)
        return 0;
    if (R->prefetched) {
        /* the prefetch becomes the current fetch */
        R->slot_xid[0] = R->slot_xid[1];
        R->slot_busy[0] = R->slot_busy[1];
        R->slot_busy[1] = 0;
        R->prefetched = 0;
        if (R->slot_busy[0])
            E->xf[R->slot_xid[0]].slot = 0;
    } else {
        cxl_start(E, R, now_bytes, 1, 0, 1, 0, name);
    }
    if (next_bytes) {
        cxl_start(E, R, next_bytes, 1, 0, 1, 1, name);
        R->prefetched = 1;
    }
    return cxl_wait(E, R, 0);
}

/* ---- data-parallel stream ---- */

static void dp_kick(eng *E, rep *R)
{
    if (R->dp_running || R->dpq_len == 0)
        return;
    dpq_item it = R->dpq[R->dpq_head];
    R->dpq_head = (R->dpq_head + 1) % R->dpq_cap;
    R->dpq_len--;
    R->dp_running = 1;
    start_coll(E, XK_DP, R->r, it.op, it.bytes, it.name);
}

static void dp_enqueue(eng *E, rep *R, int op, uint64_t bytes, const char *name)
{
    if (bytes == 0 || E->t->dp <= 1)
        return;
    if (R->dpq_len == R->dpq_cap) {
        uint32_t nc = R->dpq_cap ? 2 * R->dpq_cap : 64;
        dpq_item *nq = malloc(nc * sizeof *nq);
        if (!nq) {
            oom(E);
            return;
        }
        for (uint32_t i = 0; i < R->dpq_len; i++)
            nq[i] = R->dpq[(R->dpq_head + i) % R->dpq_cap];
        free(R->dpq);
        R->dpq = nq;
        R->dpq_cap = nc;
        R->dpq_head = 0;
    }
    R->dpq[(R->dpq_head + R->dpq_len) % R->dpq_cap] = (dpq_item){ op, bytes, name };
    R->dpq_len++;
    R->dp_enq++;
    dp_kick(E, R);
}

static int grad_op(const eng *E) { return E->t->zero >= 1 ? COLLALGO_REDUCE_SCATTER : COLLALGO_ALLREDUCE; }

static void bucket_add(eng *E, rep *R, uint64_t bytes, int force)
{
    R->bucket_acc += bytes;
    if (R->bucket_acc && (force || R->bucket_acc >= E->t->grad_bucket_bytes)) {
        dp_enqueue(E, R, grad_op(E), R->bucket_acc, "dp.grads");
        R->bucket_acc = 0;
    }
}

/* ---- the program ---- */

static uint32_t key_of(const eng *E, uint32_t chunk, uint32_t mb, int dir) { return ((chunk * E->m) + mb) * 2 + (uint32_t)dir; }

static void xfer_done(eng *E, uint32_t xid)
{
    xfer X = E->xf[xid];
    free_xfer(E, xid);
    if (X.kind == XK_TP) {
        rep *R = &E->reps[X.rep];
        trace_xfer(E, &X);
        set_state(E, R, ST_RUN, TRAIN_BK_TP);
        advance(E, R);
    } else if (X.kind == XK_PP) {
        rep *D = &E->reps[X.dst], *S = &E->reps[X.rep];
        trace_xfer(E, &X);
        if (S->state == ST_WAIT_SEND && S->send_xid == xid) {
            trace_wait(E, S->r, "wait pp send", S->since);
            set_state(E, S, ST_RUN, TRAIN_BK_PP);
            advance(E, S);
        }
        D->arrived[X.key] = E->now;
        if (D->state == ST_WAIT_RECV && D->wait_key == X.key) {
            /* waiting since D->since; the message was on the wire from its send */
            int64_t start = D->sent[X.key] > D->since ? D->sent[X.key] : D->since;
            D->bk[TRAIN_BK_BUBBLE] += start - D->since;
            D->bk[TRAIN_BK_PP] += E->now - start;
            trace_wait(E, X.dst, "wait pp", D->since);
            D->since = E->now;
            D->state = ST_RUN;
            advance(E, D);
        }
    } else if (X.kind == XK_DP) {
        rep *R = &E->reps[X.rep];
        trace_xfer(E, &X);
        R->dp_running = 0;
        R->dp_done++;
        dp_kick(E, R);
        if (R->state == ST_WAIT_GATHER && R->dp_done >= R->gather_wait) {
            trace_wait(E, R->r, "wait zero-3 gather", R->since);
            set_state(E, R, ST_RUN, TRAIN_BK_DP);
            advance(E, R);
            return;
        }
        if (R->state == ST_WAIT_DP && !R->dp_running && R->dpq_len == 0 && !R->emb_waiting) {
            trace_wait(E, R->r, "wait dp", R->since);
            set_state(E, R, ST_RUN, TRAIN_BK_DP);
            advance(E, R);
        }
    } else if (X.kind == XK_EMB) {
        trace_xfer(E, &X);
        uint32_t two[2] = { X.rep, X.dst };
        for (int i = 0; i < 2; i++) {
            rep *R = &E->reps[two[i]];
            R->emb_waiting = 0;
            trace_wait(E, R->r, "wait embedding grad all-reduce", R->since);
            set_state(E, R, ST_RUN, TRAIN_BK_DP);
            advance(E, R);
        }
    }
}

static void run_kernel(eng *E, rep *R, uint32_t op)
{
    set_state(E, R, ST_KERNEL, -1);
    if (E->dur[op] > TRAIN_MAX_PS - E->now) {
        cxl_errf(E->err, CXL_ELIMIT, "kernel %s (%.6g s each) ends past %g s, the longest iteration simulated",
                 E->g.ops[op].name, (double)E->dur[op] / 1e12, (double)TRAIN_MAX_PS / 1e12);
        E->rc = kernel_blame(E, op, E->err);
        return;
    }
    int64_t end = E->now + E->dur[op];
    if (traced(E, R->r) && ctrace_in_window(E->ct, E->now, end)) {
        const op_desc *d = &E->g.ops[op];
        ctrace_arg a[2] = { ARG_S("shape", E->shape[op]), ARG_N("bytes", d->bytes) };
        trace_slice(E, R->r, 0, "kernel", d->name, E->now, end, a, 2);
    }
    if (evq_push(&E->q, end, EV_KERNEL, R->r, 0))
        oom(E);
}

/* Host time on the compute stream (training.host_overhead_*): the GPU waits for the framework; counted as
 * compute, traced as a "host" slice. */
static void run_host(eng *E, rep *R, int64_t ps, const char *name)
{
    set_state(E, R, ST_KERNEL, -1);
    int64_t end = E->now + ps;
    if (traced(E, R->r) && ctrace_in_window(E->ct, E->now, end))
        trace_slice(E, R->r, 0, "host", name, E->now, end, NULL, 0);
    if (evq_push(&E->q, end, EV_KERNEL, R->r, 0))
        oom(E);
}

static void run_tp(eng *E, rep *R, int coll, uint64_t bytes, const char *name)
{
    set_state(E, R, ST_TP, -1);
    start_coll(E, XK_TP, R->r, coll, bytes, name);
}

/* Executes program steps until the compute stream blocks (kernel, collective, wait) or ends. */
static void advance(eng *E, rep *R)
{
    while (E->rc == 0 && R->state == ST_RUN) {
        if (R->it >= R->nitems) {
            /* ---- end of the iteration ---- */
            if (R->tail == 0 && E->t->host_iteration_ps && !R->host_paid) {
                R->host_paid = 1;
                run_host(E, R, (int64_t)E->t->host_iteration_ps, "host.iteration");
                return;
            }
            if (R->tail == 0) {
                R->tail = 1;
                bucket_add(E, R, 0, 1);
                if (!E->t->overlap_grad_reduce && E->t->dp > 1) {
                    /* all gradients at once, in buckets, after the backward pass */
                    uint64_t total = (uint64_t)E->layers_per_chunk * E->v * E->g.layer_grad_bytes +
                                     (R->first_stage ? E->g.embed_grad_bytes : 0) +
                                     (R->last_stage ? E->g.head_grad_bytes : 0);
                    for (uint64_t left = total; left;) {
                        uint64_t b = left < E->t->grad_bucket_bytes ? left : E->t->grad_bucket_bytes;
                        dp_enqueue(E, R, grad_op(E), b, "dp.grads");
                        left -= b;
                    }
                }
                if (R->dp_running || R->dpq_len) {
                    set_state(E, R, ST_WAIT_DP, -1);
                    return;
                }
                continue;
            }
            if (R->tail == 1) {
                R->tail = 2;
                /* tied embeddings over pipeline stages: all-reduce of the word-embedding gradients between
                 * the first and the last stage (Megatron's _allreduce_embedding_grads) */
                if (E->pp > 1 && E->x->model.tied_embeddings && (R->first_stage || R->last_stage)) {
                    rep *P = &E->reps[R->first_stage ? E->pp - 1 : 0];
                    set_state(E, R, ST_WAIT_DP, -1);
                    R->emb_waiting = 1;
                    if (P->emb_waiting && P->tail == 2) {
                        uint32_t xid = new_xfer(E);
                        if (xid == UINT32_MAX)
                            return;
                        xfer *X = &E->xf[xid];
                        X->kind = XK_EMB;
                        X->rep = 0;
                        X->dst = E->pp - 1;
                        X->fabric = E->pp_intra[E->pp - 1] ? FAB_INTRA : FAB_INTER;
                        X->bytes = (double)(modelcfg_vocab(&E->x->model) * E->x->model.hidden / E->t->tp * E->g.grad_elem_bytes);
                        X->name = "pp.embedding_grads";
                        phase_begin(E, xid);
                    }
                    return;
                }
                continue;
            }
            if (R->tail == 2) {
                int off = E->cm ? E->cx->offload_optimizer : CXLCFG_OPT_NONE;
                uint64_t P = R->shard_params, gb = E->g.grad_elem_bytes;
                if (off == CXLCFG_OPT_CPU) {
                    /* ZeRO-Offload: gradients to CXL, the CPU's Adam reads gradients, fp32 master weights and
                     * both moments (4 x 4 B) and writes master, moments (3 x 4 B) and the 16-bit weights
                     * (2 B), at no more than cpu_adam_rate parameters per second per node; the GPUs read
                     * the 16-bit weights back */
                    if (R->opt_sub == 0) {
                        R->opt_sub = 1;
                        cxl_start(E, R, P * gb, 0, 1, 1, 0, "cxl.grads.out");
                        if (cxl_wait(E, R, 0))
                            return;
                    }
                    if (R->opt_sub == 1) {
                        R->opt_sub = 2;
                        R->cpu_start = E->now;
                        cxl_start(E, R, P * 30, 8, 7, 0, 0, "cxl.cpu_adam");
                        if (cxl_wait(E, R, 0))
                            return;
                    }
                    if (R->opt_sub == 2) {
                        R->opt_sub = 3;
                        double node_params = (double)P * (double)E->x->cluster.gpus_per_node;
                        int64_t floor_ps = (int64_t)ceil(node_params / E->cx->cpu_adam_rate * 1e12);
                        if (R->cpu_start + floor_ps > E->now) {
                            set_state(E, R, ST_WAIT_TIMER, -1);
                            if (evq_push(&E->q, R->cpu_start + floor_ps, EV_TIMER, R->r, 0))
                                oom(E);
                            return;
                        }
                    }
                    if (R->opt_sub == 3) {
                        R->opt_sub = 4;
                        cxl_start(E, R, P * E->g.weight_elem_bytes, 1, 0, 1, 0, "cxl.params.in");
                        if (cxl_wait(E, R, 0))
                            return;
                    }
                    R->tail = 3;
                    continue;
                }
                if (off == CXLCFG_OPT_GPU) {
                    /* the optimizer states stream through the GPU: master weights and moments read (12 B)
                     * and written back (12 B) while the GPU's Adam kernel runs */
                    if (R->opt_sub == 0) {
                        R->opt_sub = 1;
                        cxl_start(E, R, P * 24, 1, 1, 1, 0, "cxl.optimizer.stream");
                        run_kernel(E, R, R->opt_op);
                        return;
                    }
                    if (cxl_wait(E, R, 0))
                        return;
                    R->tail = 3;
                    continue;
                }
                R->tail = 3;
                run_kernel(E, R, R->opt_op);
                return;
            }
            if (R->tail == 3) {
                R->tail = 4;
                if (E->t->zero >= 1 && E->t->dp > 1) {
                    /* distributed optimizer: all-gather the updated 16-bit parameters, bucket by bucket */
                    uint64_t total = R->params * E->g.weight_elem_bytes;
                    for (uint64_t left = total; left;) {
                        uint64_t b = left < E->t->grad_bucket_bytes ? left : E->t->grad_bucket_bytes;
                        dp_enqueue(E, R, COLLALGO_ALLGATHER, b, "dp.params");
                        left -= b;
                    }
                    if (R->dp_running || R->dpq_len) {
                        set_state(E, R, ST_WAIT_DP, -1);
                        return;
                    }
                }
                continue;
            }
            R->finish_ps = E->now;
            set_state(E, R, ST_DONE, -1);
            return;
        }
        const schedule_item *I = &R->items[R->it];
        uint32_t vs = I->chunk * E->pp + R->r, nvs = E->pp * E->v;
        int first_vs = vs == 0, last_vs = vs == nvs - 1;
        if (R->pc == PC_RECV && E->t->host_microbatch_ps && !R->host_paid) {
            /* the framework's Python for this forward or backward step, before its kernels are queued */
            R->host_paid = 1;
            run_host(E, R, (int64_t)E->t->host_microbatch_ps, I->backward ? "host.backward" : "host.forward");
            return;
        }
        if (R->pc == PC_RECV) {
            R->pc = PC_GATHER;
            int need = I->backward ? !last_vs : !first_vs;
            if (need) {
                uint32_t k = key_of(E, I->chunk, I->microbatch, I->backward);
                if (R->arrived[k] < 0) {
                    R->wait_key = k;
                    set_state(E, R, ST_WAIT_RECV, -1);
                    return;
                }
            }
            continue;
        }
        if (R->pc == PC_GATHER) {
            R->pc = PC_BODY;
            R->seg = SEG_PRE;
            R->layer = R->entry = R->sub = 0;
            R->cur_tpl = NULL;
            int need = I->backward ? !last_vs : !first_vs;
            if (need && E->g.pp_gather_bytes) {
                run_tp(E, R, OPGRAPH_ALLGATHER, E->g.pp_gather_bytes, "tp.allgather.pp");
                return;
            }
            continue;
        }
        if (R->pc == PC_BODY) {
            /* pick the template for the current position */
            if (!R->cur_tpl) {
                if (R->seg == SEG_PRE) {
                    int id = I->backward ? (last_vs ? OPGRAPH_HEAD_BWD : -1) : (first_vs ? OPGRAPH_EMBED_FWD : -1);
                    if (id < 0) {
                        R->seg = SEG_LAYERS;
                        continue;
                    }
                    R->cur_tpl = &E->g.tpl[id];
                } else if (R->seg == SEG_LAYERS) {
                    if (R->layer >= E->layers_per_chunk) {
                        R->seg = SEG_POST;
                        continue;
                    }
                    if (E->t->zero >= 3 && E->t->dp > 1 && R->sub < 2 && !R->layer_gathered) {
                        /* ZeRO-3 (DeepSpeed): each layer's parameters are all-gathered before its forward and
                         * again before its backward (recomputation included), the next layer's gather issued
                         * as a prefetch while this one computes; the stream waits only for its own layer. */
                        uint64_t bytes = E->g.layer_params * E->g.weight_elem_bytes, mine;
                        if (R->gather_next) {
                            mine = R->gather_next;
                        } else {
                            dp_enqueue(E, R, COLLALGO_ALLGATHER, bytes, "dp.zero3.params");
                            mine = R->dp_enq;
                        }
                        R->gather_next = 0;
                        if (R->layer + 1 < E->layers_per_chunk) {
                            dp_enqueue(E, R, COLLALGO_ALLGATHER, bytes, "dp.zero3.params");
                            R->gather_next = R->dp_enq;
                        }
                        R->layer_gathered = 1;
                        if (R->dp_done < mine) {
                            R->gather_wait = mine;
                            set_state(E, R, ST_WAIT_GATHER, -1);
                            return;
                        }
                        continue;
                    }
                    if (E->cm && R->sub == 0) {
                        int more = R->layer + 1 < E->layers_per_chunk;
                        uint64_t b = I->backward ? E->param_bytes + E->act_bytes : E->param_bytes;
                        if (cxl_layer_fetch(E, R, b, more ? b : 0, I->backward ? "cxl.layer.bwd_in" : "cxl.layer.fwd_in"))
                            return;
                    }
                    if (!I->backward) {
                        R->cur_tpl = &E->g.tpl[OPGRAPH_LAYER_FWD];
                    } else if (R->sub == 0) {
                        if (E->act_bytes) {
                            /* saved activations come back from CXL instead of being recomputed */
                            R->sub = 1;
                            continue;
                        }
                        R->cur_tpl = &E->g.tpl[OPGRAPH_LAYER_RECOMPUTE];
                    } else if (R->sub == 1) {
                        R->cur_tpl = &E->g.tpl[OPGRAPH_LAYER_BWD];
                    } else {
                        /* the layer's gradients are complete after the chunk's last backward; ZeRO-2/3 keep
                         * only their shard of the gradients, so they reduce-scatter after every backward */
                        if ((R->bwd_done[I->chunk] + 1 == E->m || E->t->zero >= 2) && E->t->overlap_grad_reduce)
                            bucket_add(E, R, E->g.layer_grad_bytes, 0);
                        if (E->param_bytes && R->bwd_done[I->chunk] + 1 == E->m)
                            cxl_start(E, R, E->g.layer_grad_bytes, 0, 1, 1, CXL_UNTRACKED, "cxl.grads.out");
                        R->sub = 0;
                        R->layer++;
                        R->layer_gathered = 0;
                        R->layer_fetched = 0;
                        continue;
                    }
                } else if (R->seg == SEG_POST) {
                    int id = I->backward ? (first_vs ? OPGRAPH_EMBED_BWD : -1) : (last_vs ? OPGRAPH_HEAD_FWD : -1);
                    R->seg = SEG_END;
                    if (id < 0)
                        continue;
                    R->cur_tpl = &E->g.tpl[id];
                } else {
                    if (I->backward) {
                        int last_bwd = R->bwd_done[I->chunk] + 1 == E->m || E->t->zero >= 2;
                        if (last_bwd && E->t->overlap_grad_reduce) {
                            if (last_vs)
                                bucket_add(E, R, E->g.head_grad_bytes, 0);
                            if (first_vs)
                                bucket_add(E, R, E->g.embed_grad_bytes, 0);
                        }
                        R->bwd_done[I->chunk]++;
                    }
                    R->pc = PC_SEND;
                    continue;
                }
                R->entry = 0;
            }
            if (R->entry >= R->cur_tpl->n) {
                R->cur_tpl = NULL;
                if (R->seg == SEG_PRE)
                    R->seg = SEG_LAYERS;
                else if (R->seg == SEG_LAYERS) {
                    if (I->backward) {
                        R->sub++;
                    } else {
                        if (E->act_bytes)
                            cxl_start(E, R, E->act_bytes, 0, 1, 1, CXL_UNTRACKED, "cxl.activations.out");
                        R->layer++;
                        R->layer_gathered = 0;
                        R->layer_fetched = 0;
                    }
                }
                continue;
            }
            const opgraph_entry *e = &R->cur_tpl->e[R->entry++];
            if (e->kind == OPGRAPH_KERNEL) {
                run_kernel(E, R, e->op);
            } else {
                run_tp(E, R, e->coll, e->bytes, e->name);
            }
            return;
        }
        if (R->pc == PC_SEND) {
            R->pc = PC_NEXT;
            int need = I->backward ? !first_vs : !last_vs;
            if (need) {
                uint32_t dvs = I->backward ? vs - 1 : vs + 1;
                uint32_t dst = dvs % E->pp, dchunk = dvs / E->pp;
                uint32_t k = key_of(E, dchunk, I->microbatch, I->backward);
                uint32_t xid = new_xfer(E);
                if (xid == UINT32_MAX)
                    return;
                xfer *X = &E->xf[xid];
                X->kind = XK_PP;
                X->rep = R->r;
                X->dst = dst;
                X->key = k;
                /* the boundary between stage r and r+1 (or r-1 and r) */
                uint32_t lo = I->backward ? dst : R->r;
                if (I->backward ? R->r == 0 : R->r == E->pp - 1)
                    lo = E->pp - 1; /* wrap-around between chunks */
                X->fabric = E->pp_intra[lo] ? FAB_INTRA : FAB_INTER;
                X->bytes = (double)E->g.pp_bytes;
                X->name = I->backward ? "pp.send.grad" : "pp.send.act";
                E->reps[dst].sent[k] = E->now;
                phase_begin(E, xid);
                if (!E->t->overlap_p2p_comm) {
                    /* Megatron-LM waits for its point-to-point operations (batch_isend_irecv + wait) */
                    R->send_xid = xid;
                    set_state(E, R, ST_WAIT_SEND, -1);
                    return;
                }
            }
            continue;
        }
        /* PC_NEXT */
        R->it++;
        R->host_paid = 0;
        R->pc = PC_RECV;
        E->items_done++;
        if (E->o->progress && (E->items_done & 1023) == 0)
            E->o->progress(E->o->progress_ctx, (double)E->items_done / (double)E->items_total);
    }
}

/* ---- setup ---- */

static int64_t ceil_ps(double x) { return (int64_t)ceil(x); }

static int setup_cxl(eng *E, const train_opts *o, cxl_err *err);

static int setup(eng *E, const expcfg *x, const train_opts *o, train_result *res, cxl_err *err)
{
    const traincfg *t = &x->train;
    const clustercfg *c = &x->cluster;
    E->x = x;
    E->t = t;
    E->o = o;
    E->err = err;
    E->pp = (uint32_t)t->pp;
    E->v = (uint32_t)t->virtual_stages;
    E->m = (uint32_t)parallel_microbatches(t);
    E->layers_per_chunk = (uint32_t)(x->model.layers / (t->pp * t->virtual_stages));
    int rc = opgraph_build(&x->model, t, &E->g, err);
    if (rc)
        return rc;

    /* fabric */
    uint64_t gpn = c->gpus_per_node;
    if (x->gpu.nvlink_bw_bps == 0 && gpn > 1)
        return cfgloc_errf(err, &x->gpu.ref, "gpu '%s' has no NVLink bandwidth ('nvlink'); the intra-node fabric "
                           "needs one", x->gpu.name);
    double intra = (double)x->gpu.nvlink_bw_bps / 2.0 * c->nvlink_efficiency;
    double inter = (double)c->nic_bw_bps * (double)c->nics_per_node / (double)gpn * c->nic_efficiency;
    if (c->topology == CLUSTERCFG_FAT_TREE)
        inter /= c->oversubscription;
    if (intra < 1)
        intra = 1;
    if (c->nodes > 1 && inter < 1) {
        double need = (double)gpn / ((double)c->nics_per_node * c->nic_efficiency) *
                      (c->topology == CLUSTERCFG_FAT_TREE ? c->oversubscription : 1.0);
        return cfgloc_errf(err, &c->loc[CLUSTERCFG_F_NIC_BW], "cluster.nic_bandwidth: %llu B/s x %llu NICs per node, "
                           "shared by %llu GPUs, gives each GPU %.3g B/s of inter-node bandwidth, below the model's "
                           "1 B/s; need at least %.0f B/s", (unsigned long long)c->nic_bw_bps,
                           (unsigned long long)c->nics_per_node, (unsigned long long)gpn, inter, ceil(need));
    }
    E->fab.intra_Bps = (uint64_t)intra;
    E->fab.inter_Bps = (uint64_t)inter;
    E->fab.intra_latency_ps = c->nvlink_latency_ps;
    /* NIC, then one leaf hop (rail-optimized: peers on the same rail) or leaf-spine-leaf (fat tree) */
    E->fab.inter_latency_ps = c->nic_latency_ps + (c->topology == CLUSTERCFG_RAIL_OPTIMIZED ? 1 : 3) * c->switch_latency_ps;

    /* groups (Megatron rank order: tensor fastest, then data, then pipeline) */
    uint64_t tp = t->tp, dp = t->dp;
    E->tp_group.ranks = (uint32_t)tp;
    E->tp_group.ranks_per_node = (uint32_t)(tp <= gpn ? tp : gpn);
    if (tp > gpn && tp % gpn)
        E->tp_group.ranks_per_node = 1;
    E->dp_group.ranks = (uint32_t)dp;
    if (tp * dp <= gpn)
        E->dp_group.ranks_per_node = (uint32_t)dp;
    else if (gpn % tp == 0 && dp % (gpn / tp) == 0)
        E->dp_group.ranks_per_node = (uint32_t)(gpn / tp);
    else
        E->dp_group.ranks_per_node = 1;

    /* kernels */
    uint32_t pp = E->pp;
    E->reps = calloc(pp, sizeof *E->reps);
    E->pp_intra = calloc(pp, 1);
    if (!E->reps || !E->pp_intra)
        return oom(E);
    for (uint32_t r = 0; r < pp; r++) {
        uint64_t a = (uint64_t)r * tp * dp, b = (uint64_t)((r + 1) % pp) * tp * dp;
        E->pp_intra[r] = (a / gpn == b / gpn);
        rep *R = &E->reps[r];
        R->r = r;
        R->first_stage = r == 0;
        R->last_stage = r == pp - 1;
        R->params = (uint64_t)E->layers_per_chunk * E->v * E->g.layer_params + (R->first_stage ? E->g.embed_params : 0) +
                    (R->last_stage ? E->g.head_params : 0);
        uint64_t shard = t->zero >= 1 ? (R->params + dp - 1) / dp : R->params;
        R->shard_params = shard;
        int op = opgraph_optimizer_op(&E->g, t, shard, err);
        if (op < 0)
            return op;
        R->opt_op = (uint32_t)op;
        /* The gradient reduction without overlap and ZeRO's parameter gather cut a stage's bytes into
         * grad_bucket pieces, one collective each: bound their number (grad_bucket: 1B made one collective
         * per byte, 12.6 GB resident after 120 s). */
        uint64_t elem = E->g.grad_elem_bytes > E->g.weight_elem_bytes ? E->g.grad_elem_bytes : E->g.weight_elem_bytes;
        uint64_t bytes = R->params * elem, gb = t->grad_bucket_bytes ? t->grad_bucket_bytes : 1;
        if (dp > 1 && bytes / gb >= TRAIN_MAX_BUCKETS) {
            uint64_t least = (bytes + TRAIN_MAX_BUCKETS - 1) / TRAIN_MAX_BUCKETS;
            return cfgloc_errf(err, &t->loc[TRAINCFG_F_GRAD_BUCKET], "training.grad_bucket: %llu B cuts pipeline "
                               "stage %u's %llu B of gradients or parameters into more than %u buckets, the most "
                               "simulated per iteration; use at least %llu B (e.g. 25MB, PyTorch DDP's default)",
                               (unsigned long long)t->grad_bucket_bytes, r, (unsigned long long)bytes,
                               TRAIN_MAX_BUCKETS, (unsigned long long)least);
        }
    }
    E->dur = calloc(E->g.nops, sizeof *E->dur);
    E->measured = calloc(E->g.nops ? E->g.nops : 1, 1);
    if (!E->dur || !E->measured)
        return oom(E);
    res->kernels = E->g.nops;
    for (uint32_t i = 0; i < E->g.nops; i++) {
        int64_t ps;
        const op_desc *op = &E->g.ops[i];
        if (o->measured && optimes_lookup(o->measured, op, &ps)) {
            res->kernels_measured++;
            E->measured[i] = 1;
            above_peak(E, op, ps, res);
        } else {
            compute_cost cc;
            cxl_err e;
            if (compute_op_cost(&x->gpu, op, &cc, &e)) {
                const cfgloc *l = cc.culprit >= 0 ? &x->gpu.loc[cc.culprit] : &x->gpu.ref;
                int code = e.code;
                cfgloc_errf(err, l, "gpu '%s': kernel %s (%s) cannot be priced: %s", x->gpu.name, op->name,
                            gpucfg_dtype_names[op->dtype], e.msg);
                return err->code = code;
            }
            ps = cc.total_ps;
        }
        E->dur[i] = ps;
    }

    /* network */
    rc = net_new(&E->n, err);
    if (rc)
        return rc;
    for (uint32_t r = 0; r < pp; r++) {
        double bw[L_PER_REP] = { intra, intra, inter, inter };
        for (int k = 0; k < L_PER_REP; k++) {
            rc = net_add_link(E->n, bw[k] / 1e12, err);
            if (rc < 0)
                return rc;
        }
    }
    /* CXL domains */
    if (x->cxl.memory != CXLCFG_NONE) {
        rc = setup_cxl(E, o, err);
        if (rc)
            return rc;
    }

    if (o->trace) {
        E->ct = o->trace;
        uint32_t nl = net_link_count(E->n);
        E->link_util = calloc(nl, sizeof *E->link_util);
        E->shape = malloc(E->g.nops * sizeof *E->shape);
        for (uint32_t i = 0; E->shape && i < E->g.nops; i++) {
            const op_desc *d = &E->g.ops[i];
            if (d->kind == OP_GEMM)
                snprintf(E->shape[i], SHAPE_LEN, "%s %llux(%llux%llu.%llux%llu)", gpucfg_dtype_names[d->dtype],
                         (unsigned long long)d->batch, (unsigned long long)d->m, (unsigned long long)d->k,
                         (unsigned long long)d->k, (unsigned long long)d->n);
            else
                snprintf(E->shape[i], SHAPE_LEN, "%s %llu", gpucfg_dtype_names[d->dtype], (unsigned long long)d->m);
        }
        E->lanes = calloc((size_t)pp * TL_N, sizeof *E->lanes);
        E->dom_bytes = calloc(2 * (size_t)E->ndomains + 1, sizeof *E->dom_bytes);
        E->dom_t = calloc((size_t)E->ndomains + 1, sizeof *E->dom_t);
        E->dom_load = calloc((size_t)E->ndomains + 1, sizeof *E->dom_load);
        if (!E->link_util || !E->shape || !E->lanes || !E->dom_bytes || !E->dom_t || !E->dom_load)
            return oom(E);
        trace_names(E);
        if (E->rc)
            return E->rc;
    }

    /* programs */
    size_t slots = (size_t)E->v * E->m * 2;
    for (uint32_t r = 0; r < pp; r++) {
        rep *R = &E->reps[r];
        size_t n = 0;
        rc = schedule_build(pp, r, E->m, E->v, NULL, 0, &n, err);
        if (rc && rc != CXL_ELIMIT)
            return rc;
        R->items = malloc(n * sizeof *R->items);
        R->arrived = malloc(slots * sizeof *R->arrived);
        R->sent = malloc(slots * sizeof *R->sent);
        R->bwd_done = calloc(E->v, sizeof *R->bwd_done);
        if (!R->items || !R->arrived || !R->sent || !R->bwd_done)
            return oom(E);
        rc = schedule_build(pp, r, E->m, E->v, R->items, n, &R->nitems, err);
        if (rc)
            return rc;
        for (size_t i = 0; i < slots; i++)
            R->arrived[i] = R->sent[i] = -1;
        E->items_total += R->nitems;
    }
    return 0;
}

/* Domains: the GPUs of node n belong to stages (n x gpn + i) / (tp x dp); a domain serves pool_nodes
 * consecutive nodes (one host port each). Domains whose nodes hold the same stages in the same places
 * see the same traffic at the same times (every representative stands for all its copies), so one is
 * simulated for each distinct composition: exact, by the same symmetry as the representatives. */
static int setup_cxl(eng *E, const train_opts *o, cxl_err *err)
{
    const expcfg *x = E->x;
    const cxlcfg *cx = &x->cxl;
    E->cx = cx;
    uint64_t gpn = x->cluster.gpus_per_node, nodes = x->cluster.nodes, per = E->t->tp * E->t->dp;
    uint32_t P = cx->pool_nodes ? cx->pool_nodes : 1, npools = (uint32_t)(nodes / P);
    /* signature of a pool: for each GPU slot, its stage */
    uint64_t sig_len = (uint64_t)P * gpn;
    uint32_t *sig = malloc(npools * sig_len * sizeof *sig), *cls = malloc(npools * sizeof *cls);
    E->domain_copies = calloc(npools, sizeof *E->domain_copies);
    E->domain_nodes = calloc(npools, sizeof *E->domain_nodes);
    if (!sig || !cls || !E->domain_copies || !E->domain_nodes) {
        free(sig);
        free(cls);
        return oom(E);
    }
    uint32_t nd = 0;
    uint32_t *first_of = malloc(npools * sizeof *first_of);
    if (!first_of) {
        free(sig);
        free(cls);
        return oom(E);
    }
    for (uint32_t p = 0; p < npools; p++) {
        for (uint64_t g = 0; g < sig_len; g++)
            sig[p * sig_len + g] = (uint32_t)(((uint64_t)p * sig_len + g) / per);
        /* stages are compared relative to nothing: identical compositions have identical stage lists */
        uint32_t c;
        for (c = 0; c < nd; c++)
            if (!memcmp(&sig[first_of[c] * sig_len], &sig[p * sig_len], sig_len * sizeof *sig))
                break;
        if (c == nd) {
            first_of[nd] = p;
            E->domain_nodes[nd] = P;
            nd++;
        }
        cls[p] = c;
        E->domain_copies[c]++;
    }
    E->ndomains = nd;
    /* routes of each representative: per domain class and host, how many of its GPUs sit there */
    for (uint32_t r = 0; r < E->pp; r++) {
        rep *R = &E->reps[r];
        R->routes = calloc((size_t)nd * P, sizeof *R->routes);
        if (!R->routes) {
            free(sig);
            free(cls);
            free(first_of);
            return oom(E);
        }
        for (uint32_t c = 0; c < nd; c++)
            for (uint32_t h = 0; h < P; h++) {
                uint32_t count = 0;
                for (uint64_t g = 0; g < gpn; g++)
                    count += sig[first_of[c] * sig_len + h * gpn + g] == r;
                if (count)
                    R->routes[R->nroutes++] = (cxl_route){ c, h, count };
            }
    }
    free(sig);
    free(cls);
    free(first_of);
    cxl_params p;
    int rc = devcfg_to_params(&cx->dev, &p, err);
    if (rc)
        return rc;
    E->ports = P;
    E->domain_active = calloc(nd, sizeof *E->domain_active);
    E->domain_since = calloc(nd, sizeof *E->domain_since);
    E->port_active = calloc((size_t)nd * P, sizeof *E->port_active);
    E->port_since = calloc((size_t)nd * P, sizeof *E->port_since);
    if (!E->domain_active || !E->domain_since || !E->port_active || !E->port_since)
        return oom(E);
    const char *backend = o->backend ? o->backend : cx->backend;
    cxl_backend_opts bo = o->bo;
    if (!bo.xclbin && cx->xclbin_path[0])
        bo.xclbin = cx->xclbin_path;
    if (!bo.xrt_card && cx->card[0])
        bo.xrt_card = cx->card;
    bo = cxl_backend_opts_for(backend, &bo);
    rc = cxlmem_new(backend, &bo, &p, nd, o->exact, &E->cm, err);
    if (rc)
        return rc;
    if (cx->offload_activations) {
        traincfg none = *E->t;
        none.recompute = TRAINCFG_RECOMPUTE_NONE;
        E->act_bytes = (uint64_t)gpumem_layer_activation_bytes(&x->model, &none);
    }
    if (cx->offload_parameters)
        E->param_bytes = E->g.layer_params * E->g.weight_elem_bytes;
    return 0;
}

static void teardown(eng *E)
{
    if (E->reps)
        for (uint32_t r = 0; r < E->pp; r++) {
            free(E->reps[r].items);
            free(E->reps[r].arrived);
            free(E->reps[r].sent);
            free(E->reps[r].bwd_done);
            free(E->reps[r].dpq);
            free(E->reps[r].routes);
        }
    cxlmem_free(E->cm);
    free(E->domain_copies);
    free(E->domain_nodes);
    free(E->domain_active);
    free(E->domain_since);
    free(E->port_active);
    free(E->port_since);
    free(E->reps);
    free(E->pp_intra);
    free(E->dur);
    free(E->measured);
    free(E->xf);
    free(E->xfree);
    if (E->lanes)
        for (uint32_t i = 0; i < E->pp * TL_N; i++)
            ctrace_lanes_free(&E->lanes[i]);
    free(E->lanes);
    free(E->link_util);
    free(E->shape);
    free(E->dom_bytes);
    free(E->dom_t);
    free(E->dom_load);
    net_free(E->n);
    evq_free(&E->q);
}

/* ---- run ---- */

int train_run(const expcfg *x, const train_opts *o, train_result *res, cxl_err *err)
{
    static const train_opts none = { 0 };
    if (!o)
        o = &none;
    memset(res, 0, sizeof *res);
    gpumem_estimate(&x->model, &x->train, &res->mem);
    int rc = tiers_compute(x, &res->tiers);
    if (rc == 0)
        rc = tiers_check(x, &res->tiers, err);
    if (rc)
        return rc;
    eng E;
    memset(&E, 0, sizeof E);
    E.colls = res->colls;
    evq_init(&E.q);
    rc = setup(&E, x, o, res, err);
    if (rc) {
        teardown(&E);
        return rc;
    }
    for (uint32_t r = 0; r < E.pp && E.rc == 0; r++) {
        E.reps[r].state = ST_RUN;
        advance(&E, &E.reps[r]);
    }
    evq_event ev;
    uint64_t events = 0;
    for (;;) {
        if (E.rc)
            break;
        if (E.cm) {
            /* the CXL domains run up to the engine's next event (the lookahead): a completion before it is
             * an event of its own */
            int64_t t;
            uint32_t tag;
            int c = cxlmem_next(E.cm, evq_peek_ps(&E.q), &t, &tag, err);
            if (c < 0) {
                E.rc = c;
                break;
            }
            if (c == 1) {
                E.now = t;
                events++;
                uint32_t d = cxlmem_last_domain(E.cm), pi = d * E.ports + cxlmem_last_host(E.cm);
                if (E.ct && --E.domain_active[d] == 0)
                    trace_slice(&E, TP_DOMAIN + d, 0, "cxl.domain", "CXL traffic", E.domain_since[d], E.now, NULL, 0);
                if (E.ct && --E.port_active[pi] == 0)
                    trace_slice(&E, TP_DOMAIN + d, 1 + pi % E.ports, "cxl.domain", "host link busy", E.port_since[pi],
                                E.now, NULL, 0);
                if (E.ct)
                    trace_domain(&E, d);
                cxl_sub_done(&E, tag);
                continue;
            }
        }
        if (!evq_pop(&E.q, &ev))
            break;
        E.now = ev.t_ps;
        if (E.now > TRAIN_MAX_PS) {
            cfgloc_errf(err, &x->root, "the iteration runs past %g s of simulated time, the longest simulated: "
                        "a bandwidth or rate of the experiment is far too small", (double)TRAIN_MAX_PS / 1e12);
            E.rc = err->code = CXL_ELIMIT;
            break;
        }
        events++;
        if (ev.kind == EV_CXL_DONE) {
            cxl_xfer_done(&E, ev.a);
            continue;
        }
        if (ev.kind == EV_TIMER) {
            rep *R = &E.reps[ev.a];
            set_state(&E, R, ST_RUN, TRAIN_BK_CXL);
            advance(&E, R);
            continue;
        }
        if (ev.kind == EV_KERNEL) {
            rep *R = &E.reps[ev.a];
            set_state(&E, R, ST_RUN, TRAIN_BK_COMPUTE);
            advance(&E, R);
        } else if (ev.kind == EV_LATENCY) {
            phase_flows(&E, ev.a);
        } else {
            uint32_t owner;
            if (net_flow_finish(E.n, E.now, ev.a, ev.b, &owner)) {
                if (E.ct) {
                    /* the finished flow's links: find through the owner's kind is not needed; refresh all of
                     * the owner's representative's links (cheap, trace only) */
                    const xfer *X = &E.xf[owner];
                    uint32_t ls[2 * L_PER_REP], nl = 0;
                    for (int k = 0; k < L_PER_REP; k++)
                        ls[nl++] = link_of(X->rep, k);
                    if (X->kind == XK_PP || X->kind == XK_EMB)
                        for (int k = 0; k < L_PER_REP; k++)
                            ls[nl++] = link_of(X->dst, k);
                    note_links(&E, ls, nl);
                }
                schedule_changed(&E);
                if (E.rc == 0)
                    flow_done(&E, owner);
            }
        }
    }
    rc = E.rc;
    if (rc == 0) {
        for (uint32_t r = 0; r < E.pp; r++)
            if (E.reps[r].state != ST_DONE) {
                rc = cxl_errf(err, CXL_EINTERNAL,
                              "internal: pipeline stage %u stopped before the end of the iteration (state %d, pass "
                              "%zu of %zu): the schedule deadlocked",
                              r, E.reps[r].state, E.reps[r].it, E.reps[r].nitems);
                break;
            }
    }
    if (rc == 0) {
        int64_t T = 0;
        for (uint32_t r = 0; r < E.pp; r++)
            if (E.reps[r].finish_ps > T)
                T = E.reps[r].finish_ps;
        res->stages = calloc(E.pp, sizeof *res->stages);
        if (!res->stages)
            rc = oom(&E);
        else {
            res->nstages = E.pp;
            res->iteration_ps = T;
            for (uint32_t r = 0; r < E.pp; r++) {
                rep *R = &E.reps[r];
                R->bk[TRAIN_BK_BUBBLE] += T - R->finish_ps;
                memcpy(res->stages[r].bk_ps, R->bk, sizeof R->bk);
                res->stages[r].finish_ps = R->finish_ps;
                for (int k = 0; k < TRAIN_BK_N; k++)
                    res->breakdown_s[k] += (double)R->bk[k] / 1e12 / (double)E.pp;
            }
            double secs = (double)T / 1e12;
            res->tokens_per_s = (double)(x->train.global_batch * x->model.seq_len) / secs;
            res->model_flops = E.g.model_flops_iteration;
            double peak = x->gpu.tflops[x->train.precision] * 1e12;
            res->mfu = res->model_flops / (secs * (double)clustercfg_gpus(&x->cluster) * peak);
            res->events = events;
            res->ncolls = E.ncolls;
            res->colls_other = E.colls_other;
            res->flows = net_flows_started(E.n);
            uint64_t mem = net_bytes(E.n) + (uint64_t)E.q.cap * sizeof(evq_event) + (uint64_t)E.capxf * sizeof(xfer) +
                           (uint64_t)E.capxfree * 4 + (uint64_t)E.g.nops * 8 + (uint64_t)E.pp * sizeof(rep);
            for (uint32_t r = 0; r < E.pp; r++)
                mem += (uint64_t)E.reps[r].nitems * sizeof(schedule_item) + 2ull * E.v * E.m * 2 * sizeof(int64_t) +
                       (uint64_t)E.v * 4 + (uint64_t)E.reps[r].dpq_cap * sizeof(dpq_item);
            res->engine_bytes = mem;
            if (E.cm) {
                cxlmem_stats cs;
                cxlmem_get_stats(E.cm, &cs);
                res->detailed_cycles = cs.detailed_cycles;
                res->extrapolated_cycles = cs.extrapolated_cycles;
                res->memo_hits = cs.memo_hits;
                res->cxl_transfers = cs.transfers;
                snprintf(res->cxl_backend, sizeof res->cxl_backend, "%s", o->backend ? o->backend : x->cxl.backend);
                res->domains = calloc(E.ndomains, sizeof *res->domains);
                if (!res->domains)
                    rc = oom(&E);
                for (uint32_t d = 0; rc == 0 && d < E.ndomains; d++) {
                    cxlmem_domain_report dr;
                    rc = cxlmem_report(E.cm, d, &dr, err);
                    if (rc)
                        break;
                    train_cxl_domain *o2 = &res->domains[d];
                    o2->nodes = E.domain_nodes[d];
                    o2->copies = E.domain_copies[d];
                    o2->busy_s = (double)dr.busy_ps / 1e12;
                    o2->read_gbps = dr.busy_ps ? dr.read_bytes / ((double)dr.busy_ps / 1e12) / 1e9 : 0;
                    o2->write_gbps = dr.busy_ps ? dr.write_bytes / ((double)dr.busy_ps / 1e12) / 1e9 : 0;
                    memcpy(o2->read_lat_ns, dr.read_lat_ns, sizeof o2->read_lat_ns);
                    memcpy(o2->devload, dr.devload, sizeof o2->devload);
                    o2->devices = dr.devices < 4 ? dr.devices : 4;
                    for (uint32_t dv = 0; dv < o2->devices; dv++) {
                        o2->dev_read_gbps[dv] = o2->read_gbps * dr.dev_share[dv];
                        o2->dev_write_gbps[dv] = o2->write_gbps * dr.dev_share[dv];
                        memcpy(o2->dev_devload[dv], dr.dev_devload[dv], sizeof o2->dev_devload[dv]);
                    }
                }
                res->ndomains = E.ndomains;
            }
        }
    }
    (void)ceil_ps;
    teardown(&E);
    if (rc)
        train_result_free(res);
    return rc;
}

void train_result_free(train_result *r)
{
    free(r->domains);
    r->domains = NULL;
    free(r->stages);
    r->stages = NULL;
}
