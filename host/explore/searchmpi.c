/* searchmpi.c - a search's rounds over MPI ranks (searchmpi.h); the MPI calls are sweepmpi.c's. */
#define _POSIX_C_SOURCE 200809L
#include "explore/searchmpi.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cfgdump.h"
#include "explore/sweepmpi.h"

/* What rank 0 broadcasts before a round: the items it hands out are indices into l. */
typedef struct round_params {
    uint64_t fingerprint;
    int32_t stage, n;
    char backend[16];
    search_layout l[SEARCH_ROUND];
} round_params;

_Static_assert(sizeof(round_params) <= SWEEPMPI_MAX_PARAMS, "a round's layouts fit in one broadcast");

typedef struct serve_ctx {
    const expcfg *base;
    uint64_t fingerprint;
    int jobs;
} serve_ctx;

/* ---- results as lines ---- */

char *searchmpi_eval_line(const search_eval *ev)
{
    char *b = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&b, &len);
    if (!m)
        return NULL;
    fprintf(m, "%d %" PRId64, ev->rc, ev->iteration_ps);
    for (int k = 0; k < TRAIN_BK_N; k++)
        fprintf(m, " %a", ev->breakdown_s[k]);
    fprintf(m, " %a %a %" PRIu64 " %" PRIu64 " ", ev->tokens_per_s, ev->mfu, ev->events, ev->cxl_cycles);
    for (const char *p = ev->reason; p < ev->reason + sizeof ev->reason && *p; p++) {
        if (*p == '\\' || *p == '\n')
            fputc('\\', m);
        fputc(*p == '\n' ? 'n' : *p, m);
    }
    if (fclose(m)) {
        free(b);
        return NULL;
    }
    return b;
}

/* The next space-separated number: its end, or NULL when there is none. */
static const char *num_end(const char *p, char *end)
{
    return end == p || *end != ' ' ? NULL : end + 1;
}

int searchmpi_line_eval(const char *line, search_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    const char *p = line;
    char *end;
    long rc = strtol(p, &end, 10);
    if (!(p = num_end(p, end)) || rc < CXL_EDEVICE || rc > 0)
        return -1;
    ev->rc = (int)rc;
    ev->iteration_ps = strtoll(p, &end, 10);
    for (int k = 0; p && k < TRAIN_BK_N; k++)
        if ((p = num_end(p, end)))
            ev->breakdown_s[k] = strtod(p, &end);
    if (p && (p = num_end(p, end)))
        ev->tokens_per_s = strtod(p, &end);
    if (p && (p = num_end(p, end)))
        ev->mfu = strtod(p, &end);
    if (p && (p = num_end(p, end)))
        ev->events = strtoull(p, &end, 10);
    if (p && (p = num_end(p, end)))
        ev->cxl_cycles = strtoull(p, &end, 10);
    if (!p || !(p = num_end(p, end)))
        return -1;
    for (size_t k = 0; *p; p++) {
        char c = *p;
        if (c == '\\') {
            c = *++p;                                       /* a final '\' is refused too */
            if (c == 'n')
                c = '\n';
            else if (c != '\\')
                return -1;
        }
        if (k + 1 >= sizeof ev->reason)
            return -1;
        ev->reason[k++] = c;
    }
    return 0;
}

/* ---- ranks 1..N-1 ---- */

static int serve_eval(void *ctx, const void *params, size_t plen, const uint64_t *items, size_t n, char **out,
                      cxl_err *err)
{
    const serve_ctx *c = ctx;
    const size_t head = offsetof(round_params, l);
    round_params p;
    memset(&p, 0, sizeof p);
    if (plen >= head && plen <= sizeof p)
        memcpy(&p, params, plen);
    if (plen < head || p.n < 0 || p.n > SEARCH_ROUND || plen != head + (size_t)p.n * sizeof p.l[0] ||
        (p.stage != 2 && p.stage != 3) || !memchr(p.backend, '\0', sizeof p.backend))
        return cxl_errf(err, CXL_EINTERNAL, "search: a round of %zu bytes from rank 0 that is not one", plen);
    if (p.fingerprint != c->fingerprint)
        return cxl_errf(err, CXL_ECONFIG, "search: the experiment '%s' resolves to another configuration here than "
                        "on rank 0 (its files or --set differ): every rank must read the same files", c->base->name);
    search_entry *en = calloc(n ? n : 1, sizeof *en);
    search_entry **pe = malloc((n ? n : 1) * sizeof *pe);
    int rc = en && pe ? 0 : cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    for (size_t i = 0; !rc && i < n; i++) {
        if (items[i] >= (uint64_t)p.n)
            rc = cxl_errf(err, CXL_EINTERNAL, "search: layout %" PRIu64 " from rank 0 is beyond its round's %d",
                          items[i], (int)p.n);
        en[i].index = items[i];
        en[i].l = p.l[rc ? 0 : items[i]];
        pe[i] = &en[i];
    }
    if (!rc)
        rc = search_eval_batch(c->base, pe, n, c->jobs, p.stage, p.backend, err);
    for (size_t i = 0; !rc && i < n; i++)
        if (!(out[i] = searchmpi_eval_line(p.stage == 2 ? &en[i].screen : &en[i].rerun)))
            rc = cxl_errf(err, CXL_ENOMEM, "out of memory (search)");
    free(en);
    free(pe);
    return rc;
}

/* ---- rank 0 ---- */

static int spread_batch(void *ctx, const expcfg *base, search_entry **en, size_t n, int stage, const char *backend,
                        cxl_err *err)
{
    searchmpi *m = ctx;
    (void)base;
    if (n > SEARCH_ROUND)
        return cxl_errf(err, CXL_EINTERNAL, "search: a round of %zu layouts (at most %d)", n, SEARCH_ROUND);
    round_params p;
    memset(&p, 0, sizeof p);
    p.fingerprint = m->fingerprint;
    p.stage = stage;
    p.n = (int32_t)n;
    snprintf(p.backend, sizeof p.backend, "%s", backend);
    uint64_t items[SEARCH_ROUND];
    char *lines[SEARCH_ROUND] = { NULL };
    for (size_t i = 0; i < n; i++) {
        p.l[i] = en[i]->l;
        items[i] = i;
    }
    int rc = sweepmpi_spread(items, n, &p, offsetof(round_params, l) + n * sizeof p.l[0], NULL, NULL, lines, err);
    for (size_t i = 0; i < n; i++) {
        if (!rc && searchmpi_line_eval(lines[i], stage == 2 ? &en[i]->screen : &en[i]->rerun)) {
            char l[256];
            search_layout_format(&en[i]->l, base->cxl.memory != CXLCFG_NONE, l, sizeof l);
            rc = cxl_errf(err, CXL_EINTERNAL, "search: a rank sent a malformed result for layout %s", l);
        }
        free(lines[i]);
    }
    m->failed |= rc != 0;
    return rc;
}

/* FNV-1a of the experiment as `train --dump-config` prints it: every value in effect. */
static int fingerprint(const expcfg *x, uint64_t *fp, cxl_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int rc = m ? expcfg_dump(m, x) : CXL_ENOMEM;
    if (m && fclose(m) && !rc)
        rc = CXL_ENOMEM;
    if (!rc)
        *fp = cfgdump_fnv1a64(text, len);
    free(text);
    return rc ? cxl_errf(err, CXL_ENOMEM, "out of memory (search)") : 0;
}

int searchmpi_setup(searchmpi *m, const expcfg *base, search_opts *o, cxl_err *err)
{
    memset(m, 0, sizeof *m);
    sweepmpi_launch l;
    sweepmpi_launch_get(&l);
    int rc = sweepmpi_require(&l, "search", err);
    if (rc || l.size < 2 || (rc = fingerprint(base, &m->fingerprint, err)))
        return rc;
    if (l.rank != 0) {
        serve_ctx c = { base, m->fingerprint, o->jobs < 1 ? 1 : o->jobs > SEARCH_MAX_JOBS ? SEARCH_MAX_JOBS : o->jobs };
        if ((rc = sweepmpi_serve(serve_eval, &c, (size_t)c.jobs, err)))
            return rc;
        exit(0);
    }
    if ((rc = sweepmpi_start(err)))          /* a job without the launcher's ranks fails before any output */
        return rc;
    m->ranks = l.size - 1;
    o->batch = spread_batch;
    o->batch_ctx = m;
    return 0;
}

int searchmpi_finish(searchmpi *m, cxl_err *err)
{
    if (!m->ranks || m->failed)
        return 0;
    return sweepmpi_finish(err);
}
