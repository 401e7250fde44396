/* test_window.c - sliding-window attention (model.window_size, window_attn_skip_freq; issue 31, GPT-OSS):
 * which layers are windowed (Megatron-Core's is_layer_window_attention, 1-based, every N-th layer full);
 * the windowed layer templates (OPGRAPH_VARIANT_OF ... OPGRAPH_VAR_WINDOW) differ from the full ones in the
 * flash kernels only, whose FLOPs count the window's query-key pairs; the engine runs the GPT-OSS-120B row
 * faster with the window than without and the search bound stays below it; window_attn_skip_freq without
 * a window is a file:line:column error. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "explore/search.h"
#include "train/compute.h"
#include "train/opgraph.h"
#include "train/train.h"

#include "tmpdir_fixture.h"
#include "train_fixture.h"

#define GPT_OSS_H100 CXLSIM_SOURCE_DIR "/configs/validation/megatron-bridge/gpt-oss-120b.yaml"

/* GPT-OSS-120B: window 128 on layers 1, 3, 5, ... (1-based; 0, 2, 4 ... here), layers 2, 4, ... full. */
static void window_layers(void **state)
{
    (void)state;
    modelcfg m;
    cxl_err e;
    if (modelcfg_load("gpt-oss-120b", &m, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(m.window_size, 128);
    assert_int_equal(m.window_attn_skip_freq, 2);
    assert_int_equal(modelcfg_layer_windowed(&m, 0), 1);
    assert_int_equal(modelcfg_layer_windowed(&m, 1), 0);
    assert_int_equal(modelcfg_layer_windowed(&m, 34), 1);
    assert_int_equal(modelcfg_layer_windowed(&m, 35), 0);
    m.window_attn_skip_freq = 0; /* Megatron-Core's None: every layer windowed */
    assert_int_equal(modelcfg_layer_windowed(&m, 1), 1);
    m.window_size = 0;
    assert_int_equal(modelcfg_layer_windowed(&m, 0), 0);
    if (modelcfg_load("qwen3-30b-a3b", &m, &e))
        fail_msg("%s", e.msg);
    assert_int_equal(modelcfg_layer_windowed(&m, 0), 0);
}

/* The windowed templates: the same entries as the full ones but the flash kernels, whose FLOPs are the
 * window's pairs over the causal count: 2 P / s^2 with P = 129 x 130 / 2 + (4096 - 129) x 129 = 520,128
 * (s = 4096, w = 128), the backward 2.5x the forward as for the full kernel; bytes unchanged. A bf16 run
 * has no bf16 variants; a model without a window no windowed ones. */
static void window_templates(void **state)
{
    (void)state;
    expcfg *x = tfx_load_file(GPT_OSS_H100);
    opgraph *g = malloc(sizeof *g);
    assert_non_null(g);
    cxl_err e;
    assert_int_equal(opgraph_build(&x->model, &x->train, g, &e), 0);
    static const int ids[] = { OPGRAPH_MOE_FWD, OPGRAPH_MOE_BWD };
    for (int i = 0; i < 2; i++) {
        int id = ids[i], wid = OPGRAPH_VARIANT_OF(id, OPGRAPH_VAR_WINDOW);
        assert_int_equal(g->tpl[id].n, g->tpl[wid].n);
        int diff = 0;
        for (uint32_t k = 0; k < g->tpl[id].n; k++)
            if (g->tpl[id].e[k].kind != g->tpl[wid].e[k].kind || g->tpl[id].e[k].op != g->tpl[wid].e[k].op)
                diff++;
        assert_int_equal(diff, 1);
        const char *full = i ? "attn.flash.bwd" : "attn.flash.fwd", *swa = i ? "attn.flash.swa.bwd" : "attn.flash.swa.fwd";
        int f = tfx_find_op(g, id, full), w = tfx_find_op(g, wid, swa);
        assert_true(f >= 0 && w >= 0);
        assert_int_equal(tfx_find_op(g, wid, full), -1);
        double s = 4096, P = 129.0 * 130 / 2 + (4096.0 - 129) * 129;
        double ratio = g->ops[w].flops / g->ops[f].flops;
        assert_true(ratio > 2 * P / (s * s) * (1 - 1e-12) && ratio < 2 * P / (s * s) * (1 + 1e-12));
        assert_true(g->ops[w].bytes == g->ops[f].bytes);
        assert_true(compute_op_ps(&x->gpu, &g->ops[w]) < compute_op_ps(&x->gpu, &g->ops[f]));
    }
    assert_int_equal(g->tpl[OPGRAPH_VARIANT_OF(OPGRAPH_MOE_FWD, OPGRAPH_VAR_BF16 | OPGRAPH_VAR_WINDOW)].n, 0);
    assert_int_equal(g->tpl[OPGRAPH_LAYER_FWD_BF16].n, 0);
    /* the model's FLOPs (MFU numerator) stay those of full attention on every layer */
    double mf = g->model_flops_iteration;
    x->model.window_size = 0;
    x->model.window_attn_skip_freq = 0;
    assert_int_equal(opgraph_build(&x->model, &x->train, g, &e), 0);
    assert_int_equal(g->tpl[OPGRAPH_VARIANT_OF(OPGRAPH_MOE_FWD, OPGRAPH_VAR_WINDOW)].n, 0);
    assert_true(g->model_flops_iteration == mf);
    free(g);
    free(x);
}

/* The engine: the H100 row with the window runs faster than with full attention everywhere, and the
 * search's lower bound (search.h) stays at or below the simulated time. */
static void window_engine(void **state)
{
    (void)state;
    expcfg *x = tfx_load_file(GPT_OSS_H100);
    cxl_err e;
    train_result with, without;
    tfx_run(x, NULL, &with);
    int64_t bound = search_bound_ps(x, &e);
    assert_true(bound >= 0);
    assert_true(bound <= with.iteration_ps);
    x->model.window_size = 0;
    x->model.window_attn_skip_freq = 0;
    tfx_run(x, NULL, &without);
    printf("GPT-OSS-120B H100: %.4f s with the window, %.4f s without\n", (double)with.iteration_ps / 1e12,
           (double)without.iteration_ps / 1e12);
    assert_true(with.iteration_ps < without.iteration_ps);
    train_result_free(&with);
    train_result_free(&without);
    free(x);
}

/* window_attn_skip_freq without window_size names the key at its line and column. */
static void window_key_error(void **state)
{
    (void)state;
    const char *p = tmpdir_write("swa-bad.yaml", "name: swa-bad\nlayers: 2\nhidden: 64\nheads: 4\nvocab: 1000\n"
                                                 "seq_len: 64\nwindow_attn_skip_freq: 2\n");
    modelcfg m;
    cxl_err e;
    cxl_err_clear(&e);
    assert_int_equal(modelcfg_load(p, &m, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "model.window_attn_skip_freq: 2, but there is no sliding window"));
    assert_int_equal(e.line, 7);
    assert_int_equal(e.col, 24);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(window_layers),
        cmocka_unit_test(window_templates),
        cmocka_unit_test(window_engine),
        cmocka_unit_test(window_key_error),
    };
    return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
