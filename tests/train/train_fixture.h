/* train_fixture.h - what the train tests share: an experiment loaded from a file or from YAML text (malloc'd,
 * the caller frees it), the training engine run on it, an op found by name in a layer template. Every "must"
 * helper fails the test with the loader's or the engine's message (file:line:column for text);
 * tfx_try_load_text returns NULL and tfx_check_text nonzero with *e filled instead, for the tests of
 * configuration errors. Header-only (static inline), as tests/hw_fixture.h and tests/preset_fixture.h.
 * Include after <cmocka.h>. */
#ifndef CXLSIM_TEST_TRAIN_FIXTURE_H
#define CXLSIM_TEST_TRAIN_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "config/expcfg.h"
#include "train/opgraph.h"
#include "train/tiers.h"
#include "train/train.h"

/* The experiment of text (file names it in the messages), or NULL with *e filled. */
static inline expcfg *tfx_try_load_text(const char *file, const char *text, cxl_err *e)
{
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err_clear(e);
    if (expcfg_load_text(file, text, NULL, x, e)) {
        free(x);
        return NULL;
    }
    return x;
}

/* The experiment of text; an error fails the test with file:line:column and the message. */
static inline expcfg *tfx_load_text(const char *file, const char *text)
{
    cxl_err e;
    expcfg *x = tfx_try_load_text(file, text, &e);
    if (!x)
        fail_msg("%s:%d:%d: %s", e.file, e.line, e.col, e.msg);
    return x;
}

/* 0 when text loads and its memory tiers fit (tiers_check), else the error code with *e filled. */
static inline int tfx_check_text(const char *file, const char *text, cxl_err *e)
{
    expcfg *x = tfx_try_load_text(file, text, e);
    if (!x)
        return e->code ? e->code : -1;
    tiers t;
    tiers_compute(x, &t);
    int rc = tiers_check(x, &t, e);
    free(x);
    return rc;
}

/* The experiment file at path; an error fails the test with the path and the message. */
static inline expcfg *tfx_load_file(const char *path)
{
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err e;
    cxl_err_clear(&e);
    if (expcfg_load(path, x, &e))
        fail_msg("%s: %s", path, e.msg);
    return x;
}

/* train_run(x, o, r); an error fails the test. The caller frees *r (train_result_free). */
static inline void tfx_run(const expcfg *x, const train_opts *o, train_result *r)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (train_run(x, o, r, &e))
        fail_msg("train_run: %s", e.msg);
}

/* The iteration time of x in seconds, and where bk_s is given the breakdown's part bk (TRAIN_BK_*, s). */
static inline double tfx_iteration_s(const expcfg *x, int bk, double *bk_s)
{
    train_result r;
    tfx_run(x, NULL, &r);
    double t = (double)r.iteration_ps / 1e12;
    if (bk_s)
        *bk_s = r.breakdown_s[bk];
    train_result_free(&r);
    return t;
}

/* The op of the kernel entry named name in template tpl, or -1. O(entries). */
static inline int tfx_find_op(const opgraph *g, int tpl, const char *name)
{
    for (uint32_t i = 0; i < g->tpl[tpl].n; i++) {
        const opgraph_entry *en = &g->tpl[tpl].e[i];
        if (en->kind == OPGRAPH_KERNEL && !strcmp(g->ops[en->op].name, name))
            return en->op;
    }
    return -1;
}

#endif
