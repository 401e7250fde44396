/* report_probe.c - `cxlsim probe`'s summary, JSON and CSV (report_probe.h). */
#include "cli/report_probe.h"

#include <math.h>
#include <stdlib.h>

#include "cli/report_json.h"

static const char *const arrivals_names[3] = { "staggered", "poisson", "aligned" };

/* v formatted with fmt, or "n/a" where it is NaN (nothing measured) */
static void fmt_na(char *buf, size_t n, const char *fmt, double v)
{
    if (isnan(v))
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, fmt, v);
}

/* Row label of bandwidth mix i of a probe (i == r->nbw: the single stream). */
static void mix_label(char *buf, size_t n, const probe_result *r, uint32_t i)
{
    if (i == r->nbw)
        snprintf(buf, n, "1 stream, reads");
    else if (r->bw_mix[i][1] == 0)
        snprintf(buf, n, "%u:%u (reads)", r->bw_mix[i][0] ? 100 : 0, 0u);
    else if (r->bw_mix[i][0] == 0)
        snprintf(buf, n, "0:100 (writes)");
    else
        snprintf(buf, n, "%u:%u", r->bw_mix[i][0], r->bw_mix[i][1]);
}

/* JSON key of bandwidth mix i: read_only, rw_2_1, rw_1_1, write_only by default, else "R:W". */
static void mix_key(char *buf, size_t n, const probe_opts *o, const probe_result *r, uint32_t i)
{
    static const char *const def[4] = { "read_only", "rw_2_1", "rw_1_1", "write_only" };
    if (!o->nmixes && i < 4)
        snprintf(buf, n, "%s", def[i]);
    else
        snprintf(buf, n, "%u:%u", r->bw_mix[i][0], r->bw_mix[i][1]);
}

static void text_bandwidth(FILE *so, const probe_result *r)
{
    fprintf(so, "  bandwidth, all requesters streaming (per-requester buffers, staggered starts):\n");
    fprintf(so, "    %-16s %10s %12s %12s %9s %9s %9s\n", "mix", "GB/s", "read mean ns", "read p99 ns", "M2S util",
            "S2M util", "row hits");
    for (uint32_t i = 0; i <= r->nbw; i++) {
        /* the last row: one requester alone */
        const window_stats *w = i < r->nbw ? &r->bw_stats[i] : &r->single_stream_stats;
        char mix[32];
        mix_label(mix, sizeof mix, r, i);
        char v[5][16];
        const double val[5] = { w->read_lat_ns[0], w->read_lat_ns[2], 100 * w->link_utilisation[0],
                                100 * w->link_utilisation[1], 100 * w->row_hit_rate };
        for (int k = 0; k < 5; k++)
            fmt_na(v[k], sizeof v[k], k < 2 ? "%.1f" : "%.1f%%", val[k]); /* n/a: no reads, no link */
        fprintf(so, "    %-16s %10.2f %12s %12s %9s %9s %9s\n", mix,
                i < r->nbw ? r->bw_gbps[i] : r->single_stream_gbps, v[0], v[1], v[2], v[3], v[4]);
    }
}

/* The curves; returns whether a value was n/a. */
static int text_curves(FILE *so, const probe_opts *o, const probe_result *r)
{
    int na = 0;
    for (uint32_t c = 0; c < r->ncurves; c++) {
        const probe_curve *cv = &r->curves[c];
        fprintf(so, "  loaded latency, random %u:%u, %s arrivals (100 %% = %.2f GB/s):\n", cv->rd, cv->wr,
                arrivals_names[o->arrivals], cv->saturation_gbps);
        fprintf(so, "    %12s %12s %12s %12s\n", "offered GB/s", "achieved", cv->rd ? "mean ns" : "wr mean ns",
                cv->rd ? "p99 ns" : "wr p99 ns");
        for (uint32_t i = 0; i < cv->npoints; i++) {
            const probe_point *q = &cv->pt[i];
            char v[3][16];
            const double val[3] = { q->achieved_gbps, q->mean_latency_ns, q->p99_latency_ns };
            for (int k = 0; k < 3; k++) {
                fmt_na(v[k], sizeof v[k], k ? "%.1f" : "%.2f", val[k]);
                na |= isnan(val[k]);
            }
            fprintf(so, "    %12.2f %12s %12s %12s\n", q->offered_gbps, v[0], v[1], v[2]);
        }
    }
    return na;
}

void report_probe_text(FILE *so, const devcfg *dev, const devcfg *ref, const probe_opts *o, const probe_result *r,
                       double wall)
{
    fprintf(so, "cxlsim probe: %s (%s), backend %s\n", dev->name, dev->description, o->backend);
    fprintf(so, "  idle load-to-use latency   %8.1f ns   (random dependent 64 B reads, 1 GiB)\n",
            r->idle_read_latency_ns);
    fprintf(so, "  local DDR reference        %8.1f ns   (%s)\n", r->local_idle_read_latency_ns, ref->name);
    fprintf(so, "  CXL / local                %8.2f x\n", r->idle_read_latency_ns / r->local_idle_read_latency_ns);
    text_bandwidth(so, r);
    if (text_curves(so, o, r))
        fprintf(so, "    (n/a: nothing completed in the measurement window at that load; a longer --window measures it)\n");
    fprintf(so, "  simulated cycles %llu in %.2f s\n", (unsigned long long)r->simulated_cycles, wall);
}

/* {"m2s": v[0], "s2m": v[1]} */
static void json_dirs(json_w *w, const char *key, const double v[2])
{
    json_obj_begin(w, key);
    json_num(w, "m2s", v[0]);
    json_num(w, "s2m", v[1]);
    json_obj_end(w);
}

static void json_window_stats(json_w *w, const char *key, const window_stats *s)
{
    static const char *const cls[CXL_NCLASS] = { "req", "rwd", "drs", "ndr" };
    json_obj_begin(w, key);
    json_num(w, "read_gbps", s->read_gbps);
    json_num(w, "write_gbps", s->write_gbps);
    report_json_lat(w, "read_latency_ns", s->read_lat_ns);
    report_json_lat(w, "write_latency_ns", s->write_lat_ns);
    json_u64(w, "reads", s->reads);
    json_u64(w, "writes", s->writes);
    json_obj_begin(w, "flits");
    json_u64(w, "m2s", s->flits[0]);
    json_u64(w, "s2m", s->flits[1]);
    json_u64(w, "m2s_all_data", s->data_flits[0]);
    json_u64(w, "s2m_all_data", s->data_flits[1]);
    json_obj_end(w);
    json_dirs(w, "link_utilisation", s->link_utilisation);
    json_dirs(w, "slot_utilisation", s->slot_utilisation);
    json_obj_begin(w, "credit_stalls");
    for (int c = 0; c < CXL_NCLASS; c++)
        json_u64(w, cls[c], s->credit_stalls[c]);
    json_obj_end(w);
    json_num(w, "row_buffer_hit_rate", s->row_hit_rate);
    json_u64(w, "row_conflicts", s->row_conflicts);
    json_u64(w, "refreshes", s->refreshes);
    json_num(w, "ingress_occupancy_mean", s->ingress_mean);
    json_u64(w, "ingress_occupancy_max", s->ingress_max);
    json_num(w, "dram_queue_occupancy_mean", s->dram_queue_mean);
    report_json_devload(w, s->devload);
    json_u64(w, "switch_stalls", s->switch_stalls);
    json_obj_end(w);
}

static void json_curve_points(json_w *w, const char *key, const probe_curve *c)
{
    json_arr_begin(w, key);
    for (uint32_t i = 0; i < c->npoints; i++) {
        json_obj_begin(w, NULL);
        json_num(w, "offered_gbps", c->pt[i].offered_gbps);
        json_num(w, "achieved_gbps", c->pt[i].achieved_gbps);
        json_num(w, "mean_latency_ns", c->pt[i].mean_latency_ns);
        json_num(w, "p99_latency_ns", c->pt[i].p99_latency_ns);
        json_obj_end(w);
    }
    json_arr_end(w);
}

static void json_bandwidth(json_w *w, const probe_opts *o, const probe_result *r)
{
    char keys[PROBE_MAX_MIXES][16];
    for (uint32_t i = 0; i < r->nbw; i++)
        mix_key(keys[i], sizeof keys[i], o, r, i);
    json_obj_begin(w, "bandwidth_gbps");
    for (uint32_t i = 0; i < r->nbw; i++)
        json_num(w, keys[i], r->bw_gbps[i]);
    json_obj_end(w);
    json_obj_begin(w, "bandwidth_stats");
    for (uint32_t i = 0; i < r->nbw; i++)
        json_window_stats(w, keys[i], &r->bw_stats[i]);
    json_obj_end(w);
}

void report_probe_json(json_w *w, const devcfg *dev, const devcfg *ref, const probe_opts *o, const probe_result *r,
                       double wall)
{
    json_str(w, "backend", o->backend);
    json_str(w, "device", dev->name);
    json_str(w, "device_source", dev->source);
    json_str(w, "reference", ref->name);
    json_u64(w, "seed", o->seed);
    json_str(w, "arrivals", arrivals_names[o->arrivals]);
    json_num(w, "idle_read_latency_ns", r->idle_read_latency_ns);
    json_num(w, "local_ddr_idle_read_latency_ns", r->local_idle_read_latency_ns);
    json_num(w, "latency_ratio", r->idle_read_latency_ns / r->local_idle_read_latency_ns);
    json_num(w, "single_stream_gbps", r->single_stream_gbps);
    json_window_stats(w, "single_stream_stats", &r->single_stream_stats);
    json_bandwidth(w, o, r);
    json_obj_begin(w, "curve_mix");
    json_u64(w, "read", r->curves[0].rd);
    json_u64(w, "write", r->curves[0].wr);
    json_obj_end(w);
    json_curve_points(w, "curve", &r->curves[0]);
    if (o->nmixes) {
        json_arr_begin(w, "curves");
        for (uint32_t c = 0; c < r->ncurves; c++) {
            json_obj_begin(w, NULL);
            json_u64(w, "read", r->curves[c].rd);
            json_u64(w, "write", r->curves[c].wr);
            json_num(w, "saturation_gbps", r->curves[c].saturation_gbps);
            json_curve_points(w, "points", &r->curves[c]);
            json_obj_end(w);
        }
        json_arr_end(w);
    }
    json_u64(w, "simulated_cycles", r->simulated_cycles);
    json_num(w, "wall_seconds", wall);
}

size_t report_probe_csv(const probe_opts *o, const probe_result *r, char **out)
{
    uint32_t rows = 0;
    for (uint32_t c = 0; c < r->ncurves; c++)
        rows += r->curves[c].npoints;
    char *csv = *out = malloc(80 + (size_t)rows * 112);
    if (!csv)
        return 0;
    /* with --mixes, a first column names each row's mix */
    size_t len = (size_t)sprintf(csv, "%soffered_gbps,achieved_gbps,mean_latency_ns,p99_latency_ns\n",
                                 o->nmixes ? "mix," : "");
    for (uint32_t c = 0; c < r->ncurves; c++)
        for (uint32_t i = 0; i < r->curves[c].npoints; i++) {
            /* n/a (NaN) is an empty field */
            const probe_point *q = &r->curves[c].pt[i];
            const double val[3] = { q->achieved_gbps, q->mean_latency_ns, q->p99_latency_ns };
            if (o->nmixes)
                len += (size_t)sprintf(csv + len, "%u:%u,", r->curves[c].rd, r->curves[c].wr);
            len += (size_t)sprintf(csv + len, "%.6f", q->offered_gbps);
            for (int k = 0; k < 3; k++)
                len += isnan(val[k]) ? (size_t)sprintf(csv + len, ",")
                                     : (size_t)sprintf(csv + len, k ? ",%.3f" : ",%.6f", val[k]);
            len += (size_t)sprintf(csv + len, "\n");
        }
    return len;
}
