/* test_override.c - `--set KEY=VALUE` (override.h): parsing, applying to experiments and devices through
 * the same checks as file values, errors named `--set KEY`, references turned into `extends`, and
 * training.dp derived from the GPUs when not given (parallel_derive_dp). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/devcfg.h"
#include "config/expcfg.h"
#include "config/override.h"

#include "tmpdir_fixture.h"

static void ok_or_fail(int rc, const cxl_err *e, const char *what)
{
    if (rc)
        fail_msg("%s: %s:%d:%d: %s", what, e->file, e->line, e->col, e->msg);
}

/* Load the default experiment with the given KEY=VALUE overrides (NULL-terminated). */
static int load(const char *exp, const char *const *sets, expcfg *x, cxl_err *e)
{
    override_list ov = { 0 };
    int rc = 0;
    for (size_t i = 0; sets[i] && !rc; i++)
        rc = override_parse(&ov, sets[i], e);
    if (!rc)
        rc = expcfg_load_with(exp, &ov, 0, x, e);
    override_free(&ov);
    return rc;
}

static void parse_forms(void **state)
{
    (void)state;
    override_list ov = { 0 };
    cxl_err e;
    assert_int_equal(override_parse(&ov, "training.tp=8", &e), 0);
    assert_int_equal(override_parse(&ov, "name=a=b", &e), 0);    /* the first '=' splits */
    assert_int_equal(override_parse(&ov, "cxl.device=", &e), 0);  /* empty: refused when bound */
    assert_int_equal(ov.n, 3);
    assert_string_equal(ov.items[1].key, "name");
    assert_string_equal(ov.items[1].value, "a=b");
    assert_int_equal(override_parse(&ov, "training.tp", &e), CXL_EUSAGE);
    assert_non_null(strstr(e.msg, "KEY=VALUE"));
    assert_int_equal(override_parse(&ov, "=8", &e), CXL_EUSAGE);
    assert_int_equal(override_parse(&ov, "training..tp=8", &e), CXL_EUSAGE);
    assert_non_null(strstr(e.msg, "empty name"));
    assert_int_equal(override_parse(&ov, ".tp=8", &e), CXL_EUSAGE);
    assert_int_equal(override_parse(&ov, "tp.=8", &e), CXL_EUSAGE);
    assert_int_equal(ov.n, 3);
    override_free(&ov);
    assert_int_equal(ov.n, 0);
}

static void values_reach_the_experiment(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    const char *const sets[] = { "training.tp=4", "training.dp=4", "training.grad_bucket=25MB",
                                 "training.recompute=full", "training.tp=8", "training.dp=2", NULL };
    ok_or_fail(load(EXPCFG_DEFAULT, sets, x, &e), &e, "overrides");
    assert_int_equal(x->train.tp, 8);            /* the later one wins */
    assert_int_equal(x->train.dp, 2);
    assert_int_equal(x->train.grad_bucket_bytes, 25000000);
    assert_int_equal(x->train.recompute, TRAINCFG_RECOMPUTE_FULL);
    assert_string_equal(x->train.loc[TRAINCFG_F_TP].file, "--set training.tp");
    assert_int_equal(x->train.loc[TRAINCFG_F_TP].line, 0);
    free(x);
}

static void reference_becomes_extends(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    /* model: llama2-7b (a preset name) -> { extends: llama2-7b, layers: 16 } */
    const char *const sets[] = { "model.layers=16", "cluster.nodes=4", "training.dp=16", NULL };
    ok_or_fail(load(EXPCFG_DEFAULT, sets, x, &e), &e, "model.layers");
    assert_int_equal(x->model.layers, 16);
    assert_int_equal(x->model.heads, 32);        /* the rest from the preset */
    assert_int_equal(x->cluster.nodes, 4);
    assert_int_equal(x->cluster.gpus_per_node, 8);
    /* a new section: cxl */
    const char *const cxl[] = { "cxl={memory: per-node, device: asic, offload_optimizer: cpu}", NULL };
    ok_or_fail(load(EXPCFG_DEFAULT, cxl, x, &e), &e, "cxl");
    assert_int_equal(x->cxl.memory, CXLCFG_PER_NODE);
    free(x);
}

static void errors_name_the_override(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    char buf[2048];
    const char *const unknown[] = { "training.tpp=8", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, unknown, x, &e), CXL_ECONFIG);
    cxl_err_format(&e, buf, sizeof buf);
    assert_non_null(strstr(buf, "--set training.tpp: "));
    assert_non_null(strstr(buf, "did you mean 'tp'"));
    const char *const unit[] = { "training.grad_bucket=40 parsecs", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, unit, x, &e), CXL_ECONFIG);
    cxl_err_format(&e, buf, sizeof buf);
    assert_non_null(strstr(buf, "--set training.grad_bucket: "));
    const char *const choice[] = { "training.recompute=partial", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, choice, x, &e), CXL_ECONFIG);
    cxl_err_format(&e, buf, sizeof buf);
    assert_non_null(strstr(buf, "--set training.recompute: "));
    assert_non_null(strstr(buf, "selective"));
    /* a check after binding: the layout */
    const char *const layout[] = { "training.tp=3", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, layout, x, &e), CXL_ECONFIG);
    cxl_err_format(&e, buf, sizeof buf);
    assert_true(!strncmp(buf, "--set training.tp: training.tp: 3 does not divide", 49));
    /* not YAML; into a sequence; a quoted integer (a trap of files, refused here too) */
    const char *const yaml[] = { "training.tp=[1, 2", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, yaml, x, &e), CXL_ECONFIG);
    assert_string_equal(e.file, "--set training.tp");
    const char *const quoted[] = { "training.tp=\"8\"", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, quoted, x, &e), CXL_ECONFIG);
    assert_string_equal(e.file, "--set training.tp");
    const char *const empty[] = { "training.tp=", NULL };
    assert_int_equal(load(EXPCFG_DEFAULT, empty, x, &e), CXL_ECONFIG);
    assert_string_equal(e.file, "--set training.tp");
    free(x);
}

static void dp_is_derived(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    const char *path = tmpdir_write("nodp.yaml", "name: nodp\nmodel: llama2-7b\ngpu: h100-sxm\n"
                                    "cluster: { extends: dgx-h100, nodes: 4 }\n"
                                    "training: { global_batch: 1024, tp: 2, pp: 2 }\n");
    ok_or_fail(expcfg_load(path, x, &e), &e, "nodp");
    assert_int_equal(x->train.dp, 8);            /* 32 GPUs / (2 x 2) */
    const char *const sets[] = { "training.tp=4", "cluster.nodes=8", NULL };
    ok_or_fail(load(path, sets, x, &e), &e, "nodp with sets");
    assert_int_equal(x->train.dp, 8);            /* 64 / (4 x 2) */
    const char *const bad[] = { "cluster.nodes=3", "training.pp=8", NULL };  /* 16 does not divide 24 */
    assert_int_equal(load(path, bad, x, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "dp is not given"));
    free(x);
}

static void name_given_by_set_is_own(void **state)
{
    (void)state;
    expcfg *x = malloc(sizeof *x);
    cxl_err e;
    const char *path = tmpdir_write("child.yaml", "extends: llama2-7b-2x8-h100\ntraining: { tp: 4, dp: 4 }\n");
    const char *const sets[] = { "name=mine", NULL };
    ok_or_fail(load(path, sets, x, &e), &e, "name");
    assert_string_equal(x->name, "mine");
    free(x);
}

static void device_overrides(void **state)
{
    (void)state;
    devcfg a, b;
    cxl_err e;
    override_list ov = { 0 };
    ok_or_fail(devcfg_load("asic", &a, &e), &e, "asic");
    ok_or_fail(override_parse(&ov, "link.width=16", &e), &e, "parse");
    ok_or_fail(devcfg_load_with("asic", &ov, &b, &e), &e, "asic width 16");
    assert_int_equal(b.link.width, 16);
    assert_int_not_equal(a.link.width, 16);
    override_free(&ov);
    ok_or_fail(override_parse(&ov, "link.widht=8", &e), &e, "parse");
    assert_int_equal(devcfg_load_with("asic", &ov, &b, &e), CXL_ECONFIG);
    assert_string_equal(e.file, "--set link.widht");
    assert_non_null(strstr(e.msg, "did you mean 'width'"));
    override_free(&ov);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_forms),
        cmocka_unit_test(values_reach_the_experiment),
        cmocka_unit_test(reference_becomes_extends),
        cmocka_unit_test(errors_name_the_override),
        cmocka_unit_test(dp_is_derived),
        cmocka_unit_test(name_given_by_set_is_own),
        cmocka_unit_test(device_overrides),
    };
    return cmocka_run_group_tests_name("override", tests, tmpdir_setup, tmpdir_teardown);
}
