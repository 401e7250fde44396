/* train.c - the discrete-event engine of one training iteration (see train.h for the model): train_run,
 * its event loop and its result.
 *
 * Each representative (one per pipeline stage) executes a program generated on the fly from its
 * schedule (schedule.h) and the templates (opgraph.h), so memory is O(stages x (schedule + templates))
 * rather than O(kernels). Events: a kernel's end, a transfer phase's latency elapsing, a flow's end, a
 * CXL transfer usable, a timer; between two events the CXL domains run up to the next one. The engine's
 * parts and the steps of an iteration: train_eng.h. */
#include "train/train.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/gpumem.h"
#include "train/tiers.h"
#include "train/train_eng.h"

const char *const train_bk_names[] = { "compute", "exposed_tp_comm", "exposed_pp_comm", "exposed_dp_comm",
                                       "pipeline_bubble", "cxl_stall", NULL };
const char *const train_group_names[] = { "dp", "tp", "ep", "cp", "pp", NULL };

const char *train_coll_op_name(int op)
{
    return op == TRAIN_OP_ALLTOALL ? "all-to-all" : op == TRAIN_OP_SENDRECV ? "send/receive"
                                                                            : collalgo_op_name((collalgo_op)op);
}

const char *train_coll_algo_name(int algo)
{
    return algo == TRAIN_ALGO_P2P ? "p2p" : collalgo_algo_name((collalgo_algo)algo);
}

int eng_oom(eng *E) { return E->rc = cxl_errf(E->err, CXL_ENOMEM, "out of memory (training engine)"); }

/* A network flow's end event (its version current): new rates for the flows that shared its links. */
static void flow_end(eng *E, const evq_event *ev)
{
    uint32_t owner;
    if (!net_flow_finish(E->n, E->now, ev->a, ev->b, &owner))
        return;
    if (E->ct) {
        /* the finished flow's links: refresh all of the owner's representative's links (cheap, trace only) */
        const xfer *X = &E->xf[owner];
        uint32_t ls[2 * L_PER_REP], nl = 0;
        for (int k = 0; k < L_PER_REP; k++)
            ls[nl++] = eng_link_of(X->rep, k);
        if (X->kind == XK_PP || X->kind == XK_EMB)
            for (int k = 0; k < L_PER_REP; k++)
                ls[nl++] = eng_link_of(X->dst, k);
        eng_note_links(E, ls, nl);
    }
    eng_schedule_changed(E);
    if (E->rc == 0)
        eng_flow_done(E, owner);
}

/* One event of the queue, at E->now. */
static void dispatch(eng *E, const evq_event *ev)
{
    rep *R = ev->kind == EV_KERNEL || ev->kind == EV_TIMER ? &E->reps[ev->a] : NULL;
    switch (ev->kind) {
    case EV_CXL_DONE: eng_cxl_xfer_done(E, ev->a); break;
    case EV_TIMER:
        /* a wait for the host's launch is the framework's time (compute, as host_overhead_*); the others
         * are the CPU optimizer's (policy_opt_cpu.c) */
        if (R->host_wait)
            eng_trace_wait(E, R->r, "wait host launch", R->since);
        eng_set_state(E, R, ST_RUN, R->host_wait ? TRAIN_BK_COMPUTE : TRAIN_BK_CXL);
        R->host_wait = 0;
        eng_advance(E, R);
        break;
    case EV_KERNEL:
        eng_set_state(E, R, ST_RUN, TRAIN_BK_COMPUTE);
        eng_advance(E, R);
        break;
    case EV_SIDE: eng_a2a_side_event(E, &E->reps[ev->a], ev->b); break;
    case EV_LATENCY: eng_phase_flows(E, ev->a); break;
    default: flow_end(E, ev); break;
    }
}

/* Runs the events until none is left or the run fails; returns how many ran. */
static uint64_t run_events(eng *E)
{
    const expcfg *x = E->x;
    evq_event ev;
    uint64_t events = 0;
    while (E->rc == 0) {
        if (E->cm) {
            /* the CXL domains run up to the engine's next event (the lookahead): a completion before it is
             * an event of its own */
            int64_t t;
            uint32_t tag;
            int c = cxlmem_next(E->cm, evq_peek_ps(&E->q), &t, &tag, E->err);
            if (c < 0) {
                E->rc = c;
                break;
            }
            if (c == 1) {
                E->now = t;
                events++;
                if (E->ct)
                    eng_trace_domain_end(E, cxlmem_last_domain(E->cm), cxlmem_last_host(E->cm));
                eng_cxl_sub_done(E, tag);
                continue;
            }
        }
        if (!evq_pop(&E->q, &ev))
            break;
        E->now = ev.t_ps;
        if (E->now > TRAIN_MAX_PS) {
            cfgloc_errf(E->err, &x->root, "the iteration runs past %g s of simulated time, the longest simulated: "
                        "a bandwidth or rate of the experiment is far too small", (double)TRAIN_MAX_PS / 1e12);
            E->rc = E->err->code = CXL_ELIMIT;
            break;
        }
        events++;
        dispatch(E, &ev);
    }
    return events;
}

/* The CXL figures of the result: the backend's counters, and each domain's traffic, latency and load. */
static int collect_cxl(eng *E, train_result *res, cxl_err *err)
{
    cxlmem_stats cs;
    cxlmem_get_stats(E->cm, &cs);
    res->detailed_cycles = cs.detailed_cycles;
    res->extrapolated_cycles = cs.extrapolated_cycles;
    res->memo_hits = cs.memo_hits;
    res->cxl_transfers = cs.transfers;
    snprintf(res->cxl_backend, sizeof res->cxl_backend, "%s", E->o->backend ? E->o->backend : E->x->cxl.backend);
    res->domains = calloc(E->ndomains, sizeof *res->domains);
    int rc = res->domains ? 0 : eng_oom(E);
    for (uint32_t d = 0; rc == 0 && d < E->ndomains; d++) {
        cxlmem_domain_report dr;
        rc = cxlmem_report(E->cm, d, &dr, err);
        if (rc)
            break;
        train_cxl_domain *o = &res->domains[d];
        o->nodes = E->domain_nodes[d];
        o->copies = E->domain_copies[d];
        o->busy_s = (double)dr.busy_ps / 1e12;
        o->read_bytes = dr.read_bytes;
        o->write_bytes = dr.write_bytes;
        o->read_gbps = dr.busy_ps ? dr.read_bytes / ((double)dr.busy_ps / 1e12) / 1e9 : 0;
        o->write_gbps = dr.busy_ps ? dr.write_bytes / ((double)dr.busy_ps / 1e12) / 1e9 : 0;
        memcpy(o->read_lat_ns, dr.read_lat_ns, sizeof o->read_lat_ns);
        memcpy(o->devload, dr.devload, sizeof o->devload);
        o->devices = dr.devices < 4 ? dr.devices : 4;
        for (uint32_t dv = 0; dv < o->devices; dv++) {
            o->dev_read_gbps[dv] = o->read_gbps * dr.dev_share[dv];
            o->dev_write_gbps[dv] = o->write_gbps * dr.dev_share[dv];
            memcpy(o->dev_devload[dv], dr.dev_devload[dv], sizeof o->dev_devload[dv]);
        }
    }
    res->ndomains = E->ndomains;
    return rc;
}

/* The result of a finished iteration: its time (the last stage's end; the others idle until then, as
 * bubble), breakdowns, throughput and the engine's own figures. */
static int collect(eng *E, uint64_t events, train_result *res, cxl_err *err)
{
    const expcfg *x = E->x;
    int64_t T = 0;
    for (uint32_t r = 0; r < E->pp; r++)
        if (E->reps[r].finish_ps > T)
            T = E->reps[r].finish_ps;
    res->stages = calloc(E->pp, sizeof *res->stages);
    if (!res->stages)
        return eng_oom(E);
    res->nstages = E->pp;
    res->iteration_ps = T;
    for (uint32_t r = 0; r < E->pp; r++) {
        rep *R = &E->reps[r];
        R->bk[TRAIN_BK_BUBBLE] += T - R->finish_ps;
        memcpy(res->stages[r].bk_ps, R->bk, sizeof R->bk);
        res->stages[r].finish_ps = R->finish_ps;
        for (int k = 0; k < TRAIN_BK_N; k++)
            res->breakdown_s[k] += (double)R->bk[k] / 1e12 / (double)E->pp;
    }
    double secs = (double)T / 1e12;
    res->tokens_per_s = (double)(x->train.global_batch * x->model.seq_len) / secs;
    res->model_flops = E->g.model_flops_iteration;
    double peak = x->gpu.tflops[x->train.precision] * 1e12;
    res->mfu = res->model_flops / (secs * (double)clustercfg_gpus(&x->cluster) * peak);
    res->events = events;
    res->ncolls = E->ncolls;
    res->colls_other = E->colls_other;
    res->flows = net_flows_started(E->n);
    uint64_t mem = net_bytes(E->n) + (uint64_t)E->q.cap * sizeof(evq_event) + (uint64_t)E->capxf * sizeof(xfer) +
                   (uint64_t)E->capxfree * 4 + (uint64_t)E->g.nops * 8 + (uint64_t)E->pp * sizeof(rep);
    for (uint32_t r = 0; r < E->pp; r++)
        mem += (uint64_t)E->reps[r].nitems * sizeof(schedule_item) + 2ull * E->v * E->m * 2 * sizeof(int64_t) +
               (uint64_t)E->v * 4 + ((uint64_t)E->reps[r].dq[DPQ_DP].cap + E->reps[r].dq[DPQ_EDP].cap) * sizeof(dpq_item) +
               (uint64_t)E->reps[r].a2a_cap * sizeof(a2a_step) + (E->reps[r].side ? A2A_SIDE_CAP * sizeof(a2a_side) : 0);
    res->engine_bytes = mem;
    return E->cm ? collect_cxl(E, res, err) : 0;
}

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
    rc = eng_setup(&E, x, o, res, err);
    if (rc) {
        eng_teardown(&E);
        return rc;
    }
    for (uint32_t r = 0; r < E.pp && E.rc == 0; r++) {
        E.reps[r].state = ST_RUN;
        eng_advance(&E, &E.reps[r]);
    }
    uint64_t events = run_events(&E);
    rc = E.rc;
    for (uint32_t r = 0; rc == 0 && r < E.pp; r++)
        if (E.reps[r].state != ST_DONE)
            rc = cxl_errf(err, CXL_EINTERNAL,
                          "internal: pipeline stage %u stopped before the end of the iteration (state %d, pass "
                          "%zu of %zu): the schedule deadlocked",
                          r, E.reps[r].state, E.reps[r].it, E.reps[r].nitems);
    if (rc == 0)
        rc = collect(&E, events, res, err);
    eng_teardown(&E);
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
