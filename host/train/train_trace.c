/* train_trace.c - the training engine's Chrome trace (ctrace.h), written as the run goes when
 * train_opts.trace is set (see docs/training.md "Trace").
 *
 * Processes: stage r (pid r) with its compute stream (tid 0), data-parallel stream (tid 1), MoE communication
 * stream (tid 2, training.moe_a2a_overlap), the expert-data-parallel group's stream (tid 3) and lane
 * groups for what may overlap (pipeline sends, receives, CXL transfers: TL_TID0 x (group + 1)); the
 * links of stage r (pid TP_LINKS + r: a utilisation counter per link); CXL domain d
 * (pid TP_DOMAIN + d: traffic and host-port slices, counters of transfers in flight and bandwidth). */
#include <stdio.h>

#include "train/train_eng.h"

#define TL_TID0 100u
/* utilisation counters: one per fabric, series out and in (a link and its reverse change together) */
static const char *const fab_names[2] = { "nvlink utilisation", "nic utilisation" };
static const char *const out_in[2] = { "out", "in" };

int eng_traced(const eng *E, uint32_t r) { return E->ct && (!E->o->trace_stages || E->o->trace_stages[r]); }

static void trace_check(eng *E)
{
    if (!E->rc && ctrace_failed(E->ct, NULL))
        E->rc = ctrace_failed(E->ct, E->err);
}

void eng_trace_slice(eng *E, uint32_t pid, uint32_t tid, const char *cat, const char *name, int64_t t0, int64_t t1,
                     const ctrace_arg *args, uint32_t nargs)
{
    if (t1 <= t0)
        return;
    ctrace_slice(E->ct, pid, tid, cat, name, t0, t1, args, nargs);
    trace_check(E);
}

/* A wait of stage r's compute stream (tid 0). */
void eng_trace_wait(eng *E, uint32_t r, const char *name, int64_t t0)
{
    if (eng_traced(E, r))
        eng_trace_slice(E, r, 0, "wait", name, t0, E->now, NULL, 0);
}


static const char *fabric_name(int fabric) { return fabric == FAB_INTRA ? "nvlink" : "network"; }

/* A finished collective, send or CXL transfer X, on its streams and lanes. */
void eng_trace_xfer(eng *E, const xfer *X)
{
    if (!E->ct || E->now <= X->t_start)
        return;
    ctrace_arg a[6];
    if (X->kind == XK_CP) {
        if (!eng_traced(E, X->rep))
            return;
        a[0] = ARG_U("bytes", X->coll_bytes);
        a[1] = ARG_S("op", train_coll_op_name(X->op));
        a[2] = ARG_S("algorithm", train_coll_algo_name(X->algo));
        a[3] = ARG_S("protocol", nccltune_proto_name((nccltune_proto)X->proto));
        a[4] = ARG_U("ranks", E->cp_group.ranks);
        uint32_t t = ctrace_lane(E->ct, &E->lanes[X->rep * TL_N + TL_SEND], X->t_start, E->now);
        eng_trace_slice(E, X->rep, t, "cp", X->name, X->t_start, E->now, a, 5);
    } else if (X->kind == XK_EP) {
        if (!eng_traced(E, X->rep))
            return;
        a[0] = ARG_U("bytes", X->coll_bytes);
        a[1] = ARG_S("op", train_coll_op_name(X->op));
        a[2] = ARG_S("algorithm", train_coll_algo_name(X->algo));
        a[3] = ARG_S("protocol", nccltune_proto_name((nccltune_proto)X->proto));
        a[4] = ARG_U("ranks", E->ep_group.ranks);
        eng_trace_slice(E, X->rep, X->side ? 2 : 0, "ep", X->name, X->t_start, E->now, a, 5);
    } else if (X->kind == XK_TP || X->kind == XK_DP) {
        if (!eng_traced(E, X->rep))
            return;
        a[0] = ARG_U("bytes", X->coll_bytes);
        a[1] = ARG_S("op", collalgo_op_name((collalgo_op)X->op));
        a[2] = ARG_S("algorithm", collalgo_algo_name((collalgo_algo)X->algo));
        a[3] = ARG_S("protocol", nccltune_proto_name((nccltune_proto)X->proto));
        a[4] = ARG_U("ranks", X->kind == XK_TP ? E->tp_group.ranks : X->coll_ranks);
        if (X->kind == XK_TP)
            eng_trace_slice(E, X->rep, 0, "tp", X->name, X->t_start, E->now, a, 5);
        else
            eng_trace_slice(E, X->rep, X->dq == DPQ_EDP ? 3 : 1, "dp", X->name, X->t_start, E->now, a, 5);
    } else if (X->kind == XK_PP || X->kind == XK_EMB) {
        const char *cat = X->kind == XK_PP ? "pp" : "dp";
        a[0] = ARG_U("bytes", (uint64_t)X->bytes);
        a[1] = ARG_U("from_stage", X->rep);
        a[2] = ARG_U("to_stage", X->dst);
        a[3] = ARG_S("fabric", fabric_name(X->fabric));
        int na = 4;
        if (X->kind == XK_PP)
            a[na++] = ARG_S("protocol", nccltune_proto_name((nccltune_proto)X->proto));
        int s = eng_traced(E, X->rep), d = eng_traced(E, X->dst);
        uint32_t ts = s ? ctrace_lane(E->ct, &E->lanes[X->rep * TL_N + TL_SEND], X->t_start, E->now) : 0;
        uint32_t td = d ? ctrace_lane(E->ct, &E->lanes[X->dst * TL_N + TL_RECV], X->t_start, E->now) : 0;
        if (s)
            eng_trace_slice(E, X->rep, ts, cat, X->name, X->t_start, E->now, a, na);
        if (d)
            eng_trace_slice(E, X->dst, td, cat, X->name, X->t_start, E->now, a, na);
        if (s && d && ctrace_in_window(E->ct, X->t_start, E->now)) {
            /* the arrow joins the two slices at their middle, inside both */
            int64_t mid = X->t_start + (E->now - X->t_start) / 2;
            uint64_t id = ++E->flow_ids;
            ctrace_flow(E->ct, 1, id, X->rep, ts, cat, X->name, mid);
            ctrace_flow(E->ct, 0, id, X->dst, td, cat, X->name, mid);
        }
    } else if (X->kind == XK_CXL) {
        if (!eng_traced(E, X->rep))
            return;
        char mix[16];
        snprintf(mix, sizeof mix, "%u:%u", X->rd, X->wr);
        double secs = (double)(E->now - X->t_start) / 1e12;
        a[0] = ARG_U("bytes_per_gpu", X->coll_bytes);
        a[1] = ARG_S("read:write", mix);
        a[2] = ARG_S("issued_by", X->by_gpu ? "gpu" : "cpu");
        a[3] = ARG_N("gbps_per_gpu", (double)X->coll_bytes / secs / 1e9);
        uint32_t t = ctrace_lane(E->ct, &E->lanes[X->rep * TL_N + TL_CXL], X->t_start, E->now);
        eng_trace_slice(E, X->rep, t, "cxl", X->name, X->t_start, E->now, a, 4);
    }
    trace_check(E);
}

/* Metadata, written once the layout is known. */
void eng_trace_names(eng *E)
{
    static const char *const gnames[TL_N] = { "pipeline sends", "pipeline receives", "CXL transfers" };
    char buf[512];
    for (uint32_t r = 0; r < E->pp; r++) {
        for (int g = 0; g < TL_N; g++)
            E->lanes[r * TL_N + g] = (ctrace_lanes){ .pid = r, .tid0 = TL_TID0 * (uint32_t)(g + 1), .name = gnames[g] };
        if (!eng_traced(E, r))
            continue;
        snprintf(buf, sizeof buf, "stage %u (GPU of TP 0, DP 0)", r);
        ctrace_process(E->ct, r, buf);
        ctrace_thread(E->ct, r, 0, "compute stream");
        ctrace_thread(E->ct, r, 1, "data-parallel collectives");
        if (E->t->moe_a2a_overlap)
            ctrace_thread(E->ct, r, 2, "moe communication stream");
        if (E->g.moe_expert_params && E->edp_group.ranks > 1)
            ctrace_thread(E->ct, r, 3, "expert-data-parallel collectives");
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
void eng_trace_domain(eng *E, uint32_t d)
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

void eng_trace_domain_end(eng *E, uint32_t d, uint32_t host)
{
    uint32_t pi = d * E->ports + host;
    if (--E->domain_active[d] == 0)
        eng_trace_slice(E, TP_DOMAIN + d, 0, "cxl.domain", "CXL traffic", E->domain_since[d], E->now, NULL, 0);
    if (--E->port_active[pi] == 0)
        eng_trace_slice(E, TP_DOMAIN + d, 1 + host, "cxl.domain", "host link busy", E->port_since[pi], E->now,
                        NULL, 0);
    eng_trace_domain(E, d);
}

/* Utilisation counters of links whose flows may have changed: a sample when the value changes (a link
 * is busy exactly while its counter is above 0, so no busy slices are written besides). */
void eng_note_links(eng *E, const uint32_t *links, uint32_t nl)
{
    if (!E->ct)
        return;
    uint32_t changed[2 * L_PER_REP], nc = 0; /* a fabric's out and in link: l0 and l0 + 1 */
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t l = links[i];
        if (!eng_traced(E, l / L_PER_REP))
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

void eng_trace_shapes(eng *E)
{
    for (uint32_t i = 0; i < E->g.nops; i++) {
        const op_desc *d = &E->g.ops[i];
        if (d->kind == OP_GEMM)
            snprintf(E->shape[i], SHAPE_LEN, "%s %llux(%llux%llu.%llux%llu)", gpucfg_dtype_names[d->dtype],
                     (unsigned long long)d->batch, (unsigned long long)d->m, (unsigned long long)d->k,
                     (unsigned long long)d->k, (unsigned long long)d->n);
        else if (d->kind == OP_ATTN_FWD || d->kind == OP_ATTN_BWD)
            snprintf(E->shape[i], SHAPE_LEN, "%s %llux(%llux%llu, d %llu)", gpucfg_dtype_names[d->dtype],
                     (unsigned long long)d->batch, (unsigned long long)d->m, (unsigned long long)d->n,
                     (unsigned long long)d->k);
        else
            snprintf(E->shape[i], SHAPE_LEN, "%s %llu", gpucfg_dtype_names[d->dtype], (unsigned long long)d->m);
    }
}
