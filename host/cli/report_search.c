/* report_search.c - what `cxlsim search` prints and writes (report_search.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_search.h"

#include <stdlib.h>

typedef unsigned long long ull;

void report_search_text(FILE *so, const expcfg *x, const search_opts *o, const search_report *r, int jobs,
                        int ranks)
{
    fprintf(so, "search %s: model %s on %llu x %llu %s (%llu GPUs), global batch %llu\n", x->name, x->model.name,
            (ull)x->cluster.nodes, (ull)x->cluster.gpus_per_node, x->gpu.name,
            (ull)clustercfg_gpus(&x->cluster), (ull)x->train.global_batch);
    fprintf(so, "  varied       ");
    for (int d = 0, k = 0; d < SEARCH_NDIMS; d++)
        if (r->vary & (1u << d))
            fprintf(so, "%s%s", k++ ? ", " : "", search_dim_names[d]);
    fprintf(so, "%s; dp derived\n", r->cxl ? "" : " (no CXL memory: no offload)");
    fprintf(so, "  layouts      %llu enumerated: %llu invalid, %llu out of memory, %llu feasible\n",
            (ull)r->enumerated, (ull)r->invalid, (ull)r->infeasible, (ull)r->feasible);
    fprintf(so, "  engine       %llu run (%s), %llu refused by the engine, %llu skipped: their lower bound exceeds the "
            "%u-th best%s\n", (ull)r->screened, r->cxl ? r->screen_backend : "no CXL", (ull)r->failed, (ull)r->pruned,
            o->top, r->cxl && o->rerun ? " and the rerun-th best of those that offload" : "");
    if (r->nreasons) {
        fprintf(so, "  excluded by\n");
        for (size_t i = 0; i < r->nreasons; i++) {
            char l[256];
            search_layout_format(&r->reasons[i].first, r->cxl, l, sizeof l);
            fprintf(so, "    %8llu  %s\n              e.g. %s: %s\n", (ull)r->reasons[i].count, r->reasons[i].key, l,
                    r->reasons[i].example);
        }
        if (r->reasons_other)
            fprintf(so, "    %8llu  other reasons\n", (ull)r->reasons_other);
    }
    size_t top = r->nbest < o->top ? r->nbest : o->top;
    fprintf(so, "\nbest %zu by iteration time%s:\n", top, r->cxl ? " (CXL on the screen's backend)" : "");
    int cp = (r->vary >> SEARCH_CP) & 1; /* a cp column when cp is searched */
    fprintf(so, "  rank iter_s    tokens/s  mfu    tp  pp   dp%s  vs  mb sp  recompute zero%s  compute tp_comm pp_comm "
            "dp_comm  bubble     cxl  hbm_gib\n", cp ? "  cp" : "", r->cxl ? " opt act par" : "");
    for (size_t i = 0; i < top; i++) {
        const search_entry *e = &r->best[i];
        const search_layout *l = &e->l;
        fprintf(so, "  %4u %8.4f %10.1f %5.3f %4llu %3llu %4llu", e->screen_rank, (double)e->screen.iteration_ps / 1e12,
                e->screen.tokens_per_s, e->screen.mfu, (ull)l->tp, (ull)l->pp, (ull)l->dp);
        if (cp)
            fprintf(so, " %3llu", (ull)(l->cp ? l->cp : 1));
        fprintf(so, " %3llu %3llu %-3s %-9s %4llu", (ull)l->virtual_stages, (ull)l->micro_batch, l->sp ? "on" : "off",
                traincfg_recompute_names[l->recompute], (ull)l->zero);
        if (r->cxl)
            fprintf(so, " %3s %3s %3s", cxlcfg_opt_names[l->offload_optimizer], l->offload_activations ? "on" : "off",
                    l->offload_parameters ? "on" : "off");
        for (int k = 0; k < TRAIN_BK_N; k++)
            fprintf(so, " %7.3f", e->screen.breakdown_s[k]);
        fprintf(so, " %8.2f\n", e->hbm_bytes / GIB);
    }
    if (top) {
        override_list ov = { 0 };
        cxl_err e;
        if (!search_layout_overrides(x, &r->best[0].l, &ov, &e)) {
            fprintf(so, "  the best as a run: cxlsim train %s", x->source);
            for (size_t i = 0; i < ov.n; i++)
                fprintf(so, " --set %s=%s", ov.items[i].key, ov.items[i].value);
            fprintf(so, "\n");
        }
        override_free(&ov);
    }
    if (r->rerun) {
        fprintf(so, "\nrerun of the best %llu that offload to CXL on the %s backend (cycle by cycle; the others "
                "move no CXL traffic, their times are the same on every backend):\n", (ull)r->rerun, r->rerun_backend);
        fprintf(so, "  rank  was   %-10s  %-10s  change   cxl_stall_s\n", r->screen_backend, r->rerun_backend);
        for (uint32_t want = 1; want <= r->rerun; want++)
            for (size_t i = 0; i < r->nbest; i++) {
                const search_entry *e = &r->best[i];
                if (!e->has_rerun || e->rerun_rank != want)
                    continue;
                if (e->rerun.rc) {
                    fprintf(so, "  %4u  %4u  failed: %s\n", e->rerun_rank, e->screen_rank, e->rerun.reason);
                    continue;
                }
                double a = (double)e->screen.iteration_ps / 1e12, b = (double)e->rerun.iteration_ps / 1e12;
                fprintf(so, "  %4u  %4u  %10.4f  %10.4f  %+6.2f%%  %10.4f\n", e->rerun_rank, e->screen_rank, a, b,
                        (b / a - 1) * 100, e->rerun.breakdown_s[TRAIN_BK_CXL]);
            }
        int moved = 0;      /* the re-run ones out of their screen order */
        for (size_t i = 0; i < r->nbest; i++)
            for (size_t j = i + 1; j < r->nbest; j++)
                moved += r->best[i].has_rerun && r->best[j].has_rerun && r->best[j].rerun_rank < r->best[i].rerun_rank;
        fprintf(so, "  %s\n", moved ? "the ranking changed: the detailed model reorders these layouts"
                                    : "the ranking is unchanged");
    } else if (!r->cxl)
        fprintf(so, "\nno rerun: the experiment has no CXL memory, so the cycle-level backend plays no part\n");
    else if (o->rerun)
        fprintf(so, "\nno rerun: no feasible layout offloads to CXL\n");
    char where[64] = "";
    if (ranks > 0)
        snprintf(where, sizeof where, "%d MPI rank%s x ", ranks, ranks == 1 ? "" : "s");
    fprintf(so, "\ntiming: check %.3f s (%.0f layouts/s); screen %.3f s (%.1f layouts/s, %s%d worker%s); rerun %.3f s "
            "(%.2f layouts/s)\n", r->wall_s[0], r->wall_s[0] > 0 ? (double)r->enumerated / r->wall_s[0] : 0,
            r->wall_s[1], r->wall_s[1] > 0 ? (double)r->screened / r->wall_s[1] : 0, where, jobs, jobs == 1 ? "" : "s",
            r->wall_s[2], r->wall_s[2] > 0 ? (double)r->rerun / r->wall_s[2] : 0);
}

static void json_layout(json_w *w, const char *key, const search_layout *l, int cxl)
{
    json_obj_begin(w, key);
    json_u64(w, "tp", l->tp);
    json_u64(w, "pp", l->pp);
    json_u64(w, "dp", l->dp);
    if (l->cp > 1)
        json_u64(w, "cp", l->cp);
    json_u64(w, "virtual_stages", l->virtual_stages);
    json_u64(w, "micro_batch", l->micro_batch);
    json_str(w, "sp", l->sp ? "true" : "false");
    json_str(w, "recompute", traincfg_recompute_names[l->recompute]);
    json_u64(w, "zero", l->zero);
    if (cxl) {
        json_str(w, "offload_optimizer", cxlcfg_opt_names[l->offload_optimizer]);
        json_str(w, "offload_activations", l->offload_activations ? "true" : "false");
        json_str(w, "offload_parameters", l->offload_parameters ? "true" : "false");
    }
    json_obj_end(w);
}

static void json_eval(json_w *w, const search_eval *v)
{
    json_num(w, "iteration_time_s", (double)v->iteration_ps / 1e12);
    json_num(w, "tokens_per_s", v->tokens_per_s);
    json_num(w, "mfu", v->mfu);
    json_obj_begin(w, "breakdown_s");
    for (int k = 0; k < TRAIN_BK_N; k++)
        json_num(w, train_bk_names[k], v->breakdown_s[k]);
    json_obj_end(w);
}

int report_search_json(json_w *w, const cli_ctx *cl, const char *cfg, size_t cfg_len, const expcfg *x,
                       const search_opts *o, const search_report *r)
{
    json_obj_begin(w, NULL);
    cli_json_provenance(w, cl, cfg, cfg_len);
    json_str(w, "experiment", x->name);
    json_u64(w, "gpus", clustercfg_gpus(&x->cluster));
    json_arr_begin(w, "varied");
    for (int d = 0; d < SEARCH_NDIMS; d++)
        if (r->vary & (1u << d))
            json_str(w, NULL, search_dim_names[d]);
    json_arr_end(w);
    json_str(w, "screen_backend", r->cxl ? r->screen_backend : "none");
    json_str(w, "rerun_backend", r->rerun ? r->rerun_backend : "none");
    json_obj_begin(w, "layouts");
    json_u64(w, "enumerated", r->enumerated);
    json_u64(w, "invalid", r->invalid);
    json_u64(w, "infeasible", r->infeasible);
    json_u64(w, "feasible", r->feasible);
    json_u64(w, "screened", r->screened);
    json_u64(w, "refused_by_engine", r->failed);
    json_u64(w, "pruned_by_bound", r->pruned);
    json_u64(w, "rerun", r->rerun);
    json_obj_end(w);
    json_arr_begin(w, "excluded");
    for (size_t i = 0; i < r->nreasons; i++) {
        json_obj_begin(w, NULL);
        json_str(w, "reason", r->reasons[i].key);
        json_u64(w, "count", r->reasons[i].count);
        json_layout(w, "first", &r->reasons[i].first, r->cxl);
        json_str(w, "message", r->reasons[i].example);
        json_obj_end(w);
    }
    json_arr_end(w);
    json_arr_begin(w, "ranking");
    size_t top = r->nbest < o->top ? r->nbest : o->top;
    for (size_t i = 0; i < r->nbest; i++) {
        const search_entry *e = &r->best[i];
        if (i >= top && !e->has_rerun)
            continue;
        json_obj_begin(w, NULL);
        json_u64(w, "rank", e->screen_rank);
        json_layout(w, "layout", &e->l, r->cxl);
        json_eval(w, &e->screen);
        json_num(w, "lower_bound_s", (double)e->bound_ps / 1e12);
        json_num(w, "hbm_gib", e->hbm_bytes / GIB);
        json_num(w, "cxl_gib_per_gpu", e->cxl_bytes_per_gpu / GIB);
        if (e->has_rerun) {
            json_obj_begin(w, "rerun");
            json_u64(w, "rank", e->rerun_rank);
            if (e->rerun.rc)
                json_str(w, "error", e->rerun.reason);
            else
                json_eval(w, &e->rerun);
            json_obj_end(w);
        }
        json_obj_end(w);
    }
    json_arr_end(w);
    json_obj_begin(w, "wall_seconds");
    json_num(w, "check", r->wall_s[0]);
    json_num(w, "screen", r->wall_s[1]);
    json_num(w, "rerun", r->wall_s[2]);
    json_obj_end(w);
    json_obj_end(w);
    return w->oom ? -1 : 0;
}

char *report_search_csv(const search_opts *o, const search_report *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    fprintf(f, "rank,tp,pp,dp,virtual_stages,micro_batch,sp,recompute,zero,offload_optimizer,offload_activations,"
               "offload_parameters,iteration_time_s,tokens_per_s,mfu");
    for (int k = 0; k < TRAIN_BK_N; k++)
        fprintf(f, ",%s_s", train_bk_names[k]);
    int cp = (r->vary >> SEARCH_CP) & 1; /* cp as the last column when cp is searched */
    fprintf(f, ",hbm_gib,cxl_gib_per_gpu,lower_bound_s,rerun_rank,rerun_iteration_time_s%s\n", cp ? ",cp" : "");
    size_t top = r->nbest < o->top ? r->nbest : o->top;
    for (size_t i = 0; i < r->nbest; i++) {
        const search_entry *e = &r->best[i];
        const search_layout *l = &e->l;
        if (i >= top && !e->has_rerun)
            continue;
        fprintf(f, "%u,%llu,%llu,%llu,%llu,%llu,%s,%s,%llu,%s,%s,%s,%.10g,%.10g,%.10g", e->screen_rank, (ull)l->tp,
                (ull)l->pp, (ull)l->dp, (ull)l->virtual_stages, (ull)l->micro_batch, l->sp ? "true" : "false",
                traincfg_recompute_names[l->recompute], (ull)l->zero, cxlcfg_opt_names[l->offload_optimizer],
                l->offload_activations ? "true" : "false", l->offload_parameters ? "true" : "false",
                (double)e->screen.iteration_ps / 1e12, e->screen.tokens_per_s, e->screen.mfu);
        for (int k = 0; k < TRAIN_BK_N; k++)
            fprintf(f, ",%.10g", e->screen.breakdown_s[k]);
        fprintf(f, ",%.10g,%.10g,%.10g,", e->hbm_bytes / GIB, e->cxl_bytes_per_gpu / GIB, (double)e->bound_ps / 1e12);
        if (e->has_rerun && !e->rerun.rc)
            fprintf(f, "%u,%.10g", e->rerun_rank, (double)e->rerun.iteration_ps / 1e12);
        else
            fprintf(f, ",");
        if (cp)
            fprintf(f, ",%llu", (ull)(l->cp ? l->cp : 1));
        fprintf(f, "\n");
    }
    if (fclose(f)) {
        free(buf);
        return NULL;
    }
    return buf;
}
