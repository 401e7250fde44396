/* report_compare.c - `cxlsim compare`'s summary and JSON (report_compare.h). */
#include "cli/report_compare.h"

#include <string.h>

static void text_diff(FILE *so, const cmp_result *r, const char *la, const char *lb)
{
    int w = (int)(strlen(la) > strlen(lb) ? strlen(la) : strlen(lb));
    if (w < 12)
        w = 12;
    fprintf(so, "  result       DIFFERENT: first diverging event at cycle %llu\n", (unsigned long long)r->diff.cycle);
    fprintf(so, "    %-*s %s\n", w, "unit", r->diff.unit);
    fprintf(so, "    %-*s %s\n", w, "field", r->diff.field);
    fprintf(so, "    %-*s %s\n", w, la, r->diff.a);
    fprintf(so, "    %-*s %s\n", w, lb, r->diff.b);
    if (r->located)
        fprintf(so, "  first seen   at cycle %llu: %s, %s: %s %s, %s %s (the statistics locate the earlier event)\n",
                (unsigned long long)r->seen.cycle, r->seen.unit, r->seen.field, la, r->seen.a, lb, r->seen.b);
    fprintf(so, "  compared     %llu of %llu descriptors completed identically before that\n",
            (unsigned long long)r->completions, (unsigned long long)r->descriptors);
}

void report_compare_text(FILE *so, const compare_report *c, const cmp_result *r)
{
    /* labels: the backend names, told apart when they are the same */
    char la[80], lb[80];
    int same = !strcmp(c->backend_a, c->backend_b);
    snprintf(la, sizeof la, "%s%s", c->backend_a, same ? " (A)" : "");
    snprintf(lb, sizeof lb, "%s%s", c->backend_b, same ? " (B)" : "");
    fprintf(so, "cxlsim compare: %s (%s), %s vs %s\n", c->dev->name, c->dev->description, c->backend_a,
            c->backend_b);
    if (c->trace_path)
        fprintf(so, "  trace        %s: %llu descriptors\n", c->trace_path, (unsigned long long)r->descriptors);
    else
        fprintf(so, "  trace        random: %llu descriptors, seed %llu\n", (unsigned long long)r->descriptors,
                (unsigned long long)c->seed);
    if (r->equal && !r->truncated)
        fprintf(so, "  result       equal: %llu descriptors, %llu completions, %llu cycles, statistics identical\n",
                (unsigned long long)r->descriptors, (unsigned long long)r->completions, (unsigned long long)r->cycles);
    else if (r->equal)
        fprintf(so, "  result       equal up to cycle %llu (--max-cycles): %llu of %llu descriptors completed, "
                "statistics identical there\n",
                (unsigned long long)r->cycles, (unsigned long long)r->completions, (unsigned long long)r->descriptors);
    else
        text_diff(so, r, la, lb);
    fprintf(so, "  cost         %llu advance calls per backend, %u runs again to locate, %.2f s\n",
            (unsigned long long)r->advances, r->replays, c->wall);
    if (c->traced)
        fprintf(so, "  waveform     %s: model cycles %llu to %llu; view: gtkwave %s\n", c->fst_path,
                (unsigned long long)c->from_cycle, (unsigned long long)c->to_cycle, c->gtkw_path);
    else if (c->fst_path)
        fprintf(so, "  waveform     none written: the backends agree (--cycles A:B records a window anyway)\n");
}

static void json_diff(json_w *w, const char *key, const cmp_diff *d)
{
    json_obj_begin(w, key);
    json_u64(w, "cycle", d->cycle);
    json_str(w, "unit", d->unit);
    json_str(w, "field", d->field);
    json_str(w, "a", d->a);
    json_str(w, "b", d->b);
    json_obj_end(w);
}

void report_compare_json(json_w *w, const compare_report *c, const cmp_result *r)
{
    json_str(w, "device", c->dev->name);
    json_str(w, "device_source", c->dev->source);
    json_str(w, "backend_a", c->backend_a);
    json_str(w, "backend_b", c->backend_b);
    json_str(w, "trace", c->trace_path ? c->trace_path : "random");
    json_u64(w, "seed", c->trace_path ? 0 : c->seed);
    json_u64(w, "max_cycles", c->max_cycles);
    json_str(w, "result", r->equal ? "equal" : "different");
    json_u64(w, "truncated", (uint64_t)r->truncated);
    json_u64(w, "descriptors", r->descriptors);
    json_u64(w, "submitted", r->submitted);
    json_u64(w, "completions", r->completions);
    json_u64(w, "cycles", r->cycles);
    if (!r->equal) {
        json_diff(w, "divergence", &r->diff);
        if (r->located)
            json_diff(w, "first_seen", &r->seen);
    }
    if (c->traced) {
        json_obj_begin(w, "waveform");
        json_str(w, "fst", c->fst_path);
        json_str(w, "gtkw", c->gtkw_path);
        json_u64(w, "from_cycle", c->from_cycle);
        json_u64(w, "to_cycle", c->to_cycle);
        json_obj_end(w);
    }
    json_u64(w, "advances", r->advances);
    json_u64(w, "replays", r->replays);
    json_num(w, "wall_seconds", c->wall);
}
