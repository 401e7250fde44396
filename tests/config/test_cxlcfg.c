/* test_cxlcfg.c - the `cxl:` section of an experiment (cxlcfg.h) and the memory tiers (tiers.h): per-node
 * and pool experiments load with their defaults and derived capacity; every check of cxlcfg.h fails with
 * its numbers at file:line:column; offloading moves exactly the documented bytes from HBM to CXL; a 70B
 * model that does not fit in HBM fits with offloads; a pool over capacity reports the shortfall. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "config/expcfg.h"
#include "train/gpumem.h"
#include "train/tiers.h"

#include "tmpdir_fixture.h"

#define GIB 1073741824.0

static void ok_or_fail(int rc, const cxl_err *e, const char *what)
{
    if (rc)
        fail_msg("%s: %s:%d:%d: %s", what, e->file, e->line, e->col, e->msg);
}

/* expcfg is large (it holds a device description): one per test, on the heap. */
static expcfg *load(const char *path)
{
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    cxl_err e;
    ok_or_fail(expcfg_load(path, x, &e), &e, path);
    return x;
}

/* The default experiment (LLaMA-2 7B, 2 x 8 H100, tp 2, dp 8, ZeRO-1) with a cxl section whose lines
 * (each indented two spaces) start at line 4. */
static const char *exp_7b(const char *name, const char *cxl_lines)
{
    char text[2048];
    snprintf(text, sizeof text, "name: t\nextends: llama2-7b-2x8-h100\ncxl:\n%s", cxl_lines);
    return tmpdir_write(name, text);
}

static void expect_err(const char *path, int line, int col, const char *needle1, const char *needle2)
{
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_non_null(x);
    int rc = expcfg_load(path, x, &e);
    free(x);
    assert_int_equal(rc, CXL_ECONFIG);
    if (!strstr(e.msg, needle1) || (needle2 && !strstr(e.msg, needle2)))
        fail_msg("message lacks '%s' / '%s': %s", needle1, needle2 ? needle2 : "", e.msg);
    if (strcmp(e.file, path))
        fail_msg("in '%s', expected '%s': %s", e.file, path, e.msg);
    if (e.line != line || e.col != col)
        fail_msg("at %d:%d, expected %d:%d: %s", e.line, e.col, line, col, e.msg);
}

/* ---- loading ---- */

static void per_node_defaults(void **state)
{
    (void)state;
    const char *p = exp_7b("pn.yaml", "  memory: per-node\n  device: asic\n");
    expcfg *x = load(p);
    const cxlcfg *c = &x->cxl;
    assert_int_equal(c->memory, CXLCFG_PER_NODE);
    assert_string_equal(c->device_name, "asic");
    assert_string_equal(c->dev.name, "asic");
    assert_string_equal(c->backend, "csim");
    assert_int_equal(c->gpu_path, CXLCFG_PATH_P2P);
    assert_int_equal(c->gpu_path_bw_bps, 31500000000ull);   /* PCIe Gen4 x16 per direction */
    assert_int_equal(c->gpu_path_latency_ps, 1000000);
    assert_int_equal(c->offload_optimizer, CXLCFG_OPT_NONE);
    assert_false(c->offload_activations || c->offload_parameters);
    assert_true(c->cpu_adam_rate == 2e9);
    assert_int_equal(c->pool_nodes, 1);
    assert_int_equal(c->devices, 1);
    /* asic: one DDR5 DIMM channel = 2 subchannels x 1 rank x 8 bank groups x 4 banks x 65536 rows x 4 KiB
     * rows = 16 GiB (a 16 GB RDIMM of 16 Gb x8 dies: 8 dies x 2 GB) */
    assert_int_equal(c->capacity_bytes, 17179869184ull);
    assert_int_equal(cxlcfg_device_capacity(&c->dev), 17179869184ull);
    assert_int_equal(c->loc[CXLCFG_F_MEMORY].line, 4);
    assert_int_equal(c->loc[CXLCFG_F_MEMORY].col, 11);
    assert_int_equal(c->ref.line, 4);
    free(x);
}

static void pool_loads(void **state)
{
    (void)state;
    const char *p = exp_7b("pool.yaml", "  memory: pool\n  device: pool-2x2\n  gpu_path: switch\n"
                                        "  gpu_path_bandwidth: 63GB/s\n  gpu_path_latency: 600ns\n"
                                        "  offload_optimizer: gpu\n  capacity: 256GiB\n  cpu_adam_rate: 5e9\n");
    expcfg *x = load(p);
    const cxlcfg *c = &x->cxl;
    assert_int_equal(c->memory, CXLCFG_POOL);
    assert_int_equal(c->gpu_path, CXLCFG_PATH_SWITCH);
    assert_int_equal(c->gpu_path_bw_bps, 63000000000ull);
    assert_int_equal(c->gpu_path_latency_ps, 600000);
    assert_int_equal(c->offload_optimizer, CXLCFG_OPT_GPU);
    assert_int_equal(c->capacity_bytes, 256ull << 30);    /* given: not derived */
    assert_true(c->cpu_adam_rate == 5e9);
    assert_int_equal(c->pool_nodes, 2);
    assert_int_equal(c->devices, 2);
    tiers t;
    cxl_err e;
    ok_or_fail(tiers_compute(x, &t), &e, "compute");
    assert_int_equal(t.gpus_per_domain, 16);
    assert_true(t.cxl_capacity_per_domain == 2 * 256.0 * GIB);
    free(x);
}

static void absent_and_files(void **state)
{
    (void)state;
    /* Without the section: memory none, and tiers_check is gpumem_check. */
    expcfg *x = load("llama2-7b-2x8-h100");
    assert_int_equal(x->cxl.memory, CXLCFG_NONE);
    tiers t;
    cxl_err e;
    ok_or_fail(tiers_compute(x, &t), &e, "compute");
    ok_or_fail(tiers_check(x, &t, &e), &e, "default fits");
    assert_int_equal(t.gpus_per_domain, 0);
    assert_true(t.cxl_bytes_per_gpu == 0);
    free(x);

    /* The section from a file in a subfolder; its relative device resolves from that subfolder. */
    char dir[128];
    snprintf(dir, sizeof dir, "%s/sub", g_tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    tmpdir_write("sub/dev.yaml", "name: mydev\nextends: asic\ndram: { ranks: 2 }\n");
    tmpdir_write("sub/cxl.yaml", "memory: per-node\ndevice: dev.yaml\noffload_optimizer: cpu\n");
    const char *p = tmpdir_write("file.yaml", "name: t\nextends: llama2-7b-2x8-h100\ncxl: sub/cxl.yaml\n");
    x = load(p);
    assert_string_equal(x->cxl.dev.name, "mydev");
    assert_int_equal(x->cxl.capacity_bytes, 2 * 17179869184ull);   /* two ranks */
    assert_non_null(strstr(x->cxl.loc[CXLCFG_F_DEVICE].file, "sub/cxl.yaml"));
    free(x);
    /* ... and next to the experiment, with overrides through extends */
    tmpdir_write("near.yaml", "name: near\nextends: asic\n");
    p = exp_7b("near-exp.yaml", "  extends: sub/cxl.yaml\n  device: near.yaml\n  offload_optimizer: gpu\n");
    x = load(p);
    assert_string_equal(x->cxl.dev.name, "near");
    assert_int_equal(x->cxl.offload_optimizer, CXLCFG_OPT_GPU);
    assert_int_equal(x->cxl.memory, CXLCFG_PER_NODE);
    free(x);
}

/* ---- the checks ---- */

static void err_per_node_pool_device(void **state)
{
    (void)state;
    const char *p = exp_7b("e1.yaml", "  memory: per-node\n  device: pool-2x2\n");
    expect_err(p, 4, 11, "cxl.memory: per-node needs a device with one host; 'pool-2x2' is a switch shared by 2 "
               "hosts", "use memory: pool");
}

static void err_pool_without_switch(void **state)
{
    (void)state;
    const char *p = exp_7b("e2.yaml", "  memory: pool\n  device: asic\n");
    expect_err(p, 4, 11, "cxl.memory: pool needs a device behind a CXL switch; 'asic' has none (try pool-2x2)",
               NULL);
}

static void err_nodes_not_multiple(void **state)
{
    (void)state;
    const char *p = tmpdir_write("e3.yaml", "name: t\nmodel: llama2-7b\ngpu: h100-sxm\n"
                                            "cluster: { extends: dgx-h100, nodes: 3 }\n"
                                            "training: { global_batch: 24, dp: 24 }\n"
                                            "cxl:\n  memory: pool\n  device: pool-2x2\n");
    expect_err(p, 7, 11, "cxl.memory: cluster.nodes 3 is not a multiple of the pool's 2 hosts",
               "e.g. 2 or 4 nodes");
}

static void err_switch_path_without_pool(void **state)
{
    (void)state;
    const char *p = exp_7b("e4.yaml", "  memory: per-node\n  device: asic-switch\n  gpu_path: switch\n");
    expect_err(p, 6, 13, "cxl.gpu_path: switch", "needs memory: pool (memory is per-node)");
}

static void err_offload_without_memory(void **state)
{
    (void)state;
    const char *p = exp_7b("e5.yaml", "  offload_optimizer: cpu\n");
    expect_err(p, 4, 22, "cxl.offload_optimizer: cpu needs CXL memory, but memory is none", NULL);
    p = exp_7b("e5b.yaml", "  memory: none\n  offload_activations: true\n");
    expect_err(p, 5, 24, "cxl.offload_activations: needs CXL memory, but memory is none", NULL);
    p = exp_7b("e5c.yaml", "  offload_parameters: true\n  offload_optimizer: none\n");
    expect_err(p, 4, 23, "cxl.offload_parameters: needs CXL memory", NULL);
}

static void err_parameters_without_optimizer(void **state)
{
    (void)state;
    const char *p = exp_7b("e6.yaml", "  memory: per-node\n  device: asic\n  offload_parameters: true\n");
    expect_err(p, 6, 23, "cxl.offload_parameters: needs offload_optimizer cpu or gpu", "offload_optimizer is none");
}

static void err_backend(void **state)
{
    (void)state;
    const char *p = exp_7b("e7.yaml", "  memory: per-node\n  device: asic\n  backend: gem5\n");
    expect_err(p, 6, 12, "cxl.backend: unknown backend 'gem5'; valid: csim", "verilator");
}

static void err_device(void **state)
{
    (void)state;
    /* no device */
    const char *p = exp_7b("e8.yaml", "  memory: per-node\n");
    expect_err(p, 4, 11, "cxl.device: memory per-node needs a device: a preset or a device file; presets: ",
               "pool-2x2");
    /* unknown name: no file, no preset */
    p = exp_7b("e8b.yaml", "  memory: per-node\n  device: asci\n");
    expect_err(p, 5, 11, "cxl.device: unknown device 'asci': no file", "presets: asic");
    /* the device's own error, unchanged, at its file */
    char d[256];
    snprintf(d, sizeof d, "%s", tmpdir_write("bad-dev.yaml", "name: bad\nextends: asic\nlink:\n  width: 3\n"));
    p = exp_7b("e8c.yaml", "  memory: per-node\n  device: bad-dev.yaml\n");
    cxl_err e;
    expcfg *x = malloc(sizeof *x);
    assert_int_equal(expcfg_load(p, x, &e), CXL_ECONFIG);
    free(x);
    assert_string_equal(e.file, d);
    assert_int_equal(e.line, 4);
    assert_int_equal(e.col, 10);
    assert_non_null(strstr(e.msg, "link.width: 3"));
}

static void err_keys_and_values(void **state)
{
    (void)state;
    const char *p = exp_7b("e9.yaml", "  memory: per-node\n  device: asic\n  offload_optimiser: cpu\n");
    expect_err(p, 6, 3, "unknown key 'cxl.offload_optimiser'; did you mean 'offload_optimizer'?", NULL);
    p = exp_7b("e9b.yaml", "  memory: shared\n");
    expect_err(p, 4, 11, "'cxl.memory' = 'shared' is not a valid choice", "none, per-node, pool");
    p = exp_7b("e9c.yaml", "  memory: per-node\n  device: asic\n  gpu_path_bandwidth: 32\n");
    expect_err(p, 6, 23, "cxl.gpu_path_bandwidth", NULL);
}

/* ---- tiers ---- */

static void optimizer_offload_moves_exactly(void **state)
{
    (void)state;
    expcfg *base = load("llama2-7b-2x8-h100");
    gpumem mem;
    gpumem_estimate(&base->model, &base->train, &mem);
    tiers t0, t;
    cxl_err e;
    tiers_compute(base, &t0);
    assert_true(t0.hbm_bytes == mem.total_bytes);
    const char *p = exp_7b("t1.yaml", "  memory: per-node\n  device: asic\n  capacity: 1TiB\n"
                                      "  offload_optimizer: gpu\n");
    expcfg *x = load(p);
    tiers_compute(x, &t);
    ok_or_fail(tiers_check(x, &t, &e), &e, "gpu");
    /* optimizer states 12 B x 3,369,340,928 parameters / dp 8 (test_traincfg: default_experiment) */
    assert_true(mem.optimizer_bytes == 12.0 * 3369340928.0 / 8);
    assert_true(t.hbm_bytes == t0.hbm_bytes - mem.optimizer_bytes);
    assert_true(t.cxl_bytes_per_gpu == mem.optimizer_bytes);
    assert_true(t.hbm_part[TIERS_OPTIMIZER] == 0);
    assert_int_equal(t.gpus_per_domain, 8);
    assert_true(t.cxl_bytes_per_domain == 8 * mem.optimizer_bytes);
    free(x);
    /* cpu: also the fp32 gradients of the optimizer's shard, 4 B x P / dp; the bf16/fp32 gradients the
     * GPU produces stay in HBM */
    p = exp_7b("t2.yaml", "  memory: per-node\n  device: asic\n  capacity: 1TiB\n  offload_optimizer: cpu\n");
    x = load(p);
    tiers_compute(x, &t);
    assert_true(t.hbm_bytes == t0.hbm_bytes - mem.optimizer_bytes);
    assert_true(t.hbm_part[TIERS_GRADIENTS] == mem.gradients_bytes);
    assert_true(t.cxl_bytes_per_gpu == mem.optimizer_bytes + 4.0 * 3369340928.0 / 8);
    assert_true(t.cxl_domain_part[TIERS_GRADIENTS] == 8 * 4.0 * 3369340928.0 / 8);
    free(x);
    free(base);
}

static void parameter_and_activation_offload(void **state)
{
    (void)state;
    const char *p = exp_7b("t3.yaml", "  memory: per-node\n  device: asic\n  capacity: 1TiB\n"
                                      "  offload_optimizer: gpu\n  offload_parameters: true\n"
                                      "  offload_activations: true\n");
    expcfg *x = load(p);
    gpumem mem;
    gpumem_estimate(&x->model, &x->train, &mem);
    tiers t;
    tiers_compute(x, &t);
    /* weights: two layers of 101,195,776 parameters (tp 2) x 2 B stay */
    double layer_w = 2.0 * (double)modelcfg_layer_params_tp(&x->model, 2);
    assert_int_equal(modelcfg_layer_params_tp(&x->model, 2), 101195776ull);
    assert_true(t.hbm_part[TIERS_WEIGHTS] == 2 * layer_w);
    /* activations as without recomputation: per layer with sp, (R + S + A)/t =
     * (8sbh + 8sbh + 6sbf + 2as^2b) / 2 = (16 x 16777216 + 6 x 45088768 + 2 x 32 x 4096^2) / 2 = 806354944;
     * two stay, plus the last stage's 4sbh/t + 4sbV/t; 30 go to CXL */
    traincfg none = x->train;
    none.recompute = TRAINCFG_RECOMPUTE_NONE;
    assert_true(gpumem_layer_activation_bytes(&x->model, &none) == 806354944.0);
    assert_true(t.hbm_part[TIERS_ACTIVATIONS] == 2 * 806354944.0 + 33554432.0 + 262144000.0);
    assert_true(t.cxl_bytes_per_gpu ==
                mem.optimizer_bytes + (mem.weights_bytes - 2 * layer_w) + 30 * 806354944.0);
    assert_true(t.hbm_bytes == t.hbm_part[0] + t.hbm_part[1] + t.hbm_part[2] + t.hbm_part[3]);
    free(x);
}

/* LLaMA-2 70B on one DGX H100 (8 GPUs), tp 8, no ZeRO, no recomputation: per GPU 80 layers x
 * 106,971,136 + embedding 32,768,000 + head 32,776,192 = 8,623,235,072 parameters.
 *   HBM without offload: 16 B x P = 128.5 GiB of model states + 48.2 GiB of activations = 176.7 GiB;
 *   optimizer offloaded: 2 + 2 B x P = 32.1 GiB + 48.2 = 80.3 GiB, still over 74.5 GiB (80 GB);
 *   and parameters: 2 layers x 106,971,136 x 2 B = 0.4 GiB + gradients 16.1 + 48.2 = 64.7 GiB: fits.
 * CXL per node: 8 x (12 B x P + 2 B x (P - 2 layers)) = 896.3 GiB: over one 16 GiB asic, within 1 TiB. */
static const char *exp_70b(const char *name, const char *cxl)
{
    char text[1024];
    snprintf(text, sizeof text, "name: t70\nmodel: llama2-70b\ngpu: h100-sxm\n"
                                "cluster: { extends: dgx-h100, nodes: 1 }\n"
                                "training: { global_batch: 8, tp: 8, attention: unfused }\n%s",
             cxl);
    return tmpdir_write(name, text);
}

static void llama70b_fits_with_offload(void **state)
{
    (void)state;
    cxl_err e, e2;
    tiers t;
    /* no cxl section: the same message as gpumem_check */
    expcfg *x = load(exp_70b("n.yaml", ""));
    gpumem mem;
    gpumem_estimate(&x->model, &x->train, &mem);
    /* the vocabulary 32000 padded to 32768 (128 x tp 8, Megatron's make_vocab_size_divisible_by) */
    assert_int_equal(mem.params, 8624807936ull);
    tiers_compute(x, &t);
    assert_int_equal(tiers_check(x, &t, &e), CXL_ECONFIG);
    assert_int_equal(gpumem_check(&mem, &x->gpu, &x->train.ref, &e2), CXL_ECONFIG);
    assert_string_equal(e.msg, e2.msg);
    assert_non_null(strstr(e.msg, "out of GPU memory: pipeline stage 0 needs 176.7 GiB per GPU"));
    assert_int_equal(e.line, 1); /* the experiment itself */
    free(x);

    x = load(exp_70b("o.yaml", "cxl: { memory: per-node, device: asic, capacity: 1TiB, offload_optimizer: gpu }\n"));
    tiers_compute(x, &t);
    assert_int_equal(tiers_check(x, &t, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "out of GPU memory after offloading to CXL: pipeline stage 0 needs 80.3 GiB"));
    assert_non_null(strstr(e.msg, "optimizer states 0.0, activations 48.2 GiB; 96.4 GiB per GPU offloaded"));
    assert_non_null(strstr(e.msg, "the largest part left is the activations (try cxl.offload_activations"));
    assert_int_equal(e.line, 1);
    assert_int_equal(e.col, 1);
    free(x);

    x = load(exp_70b("op.yaml", "cxl: { memory: per-node, device: asic, capacity: 1TiB, offload_optimizer: gpu,"
                                " offload_parameters: true }\n"));
    tiers_compute(x, &t);
    ok_or_fail(tiers_check(x, &t, &e), &e, "70b with optimizer + parameters offloaded");
    assert_true(t.hbm_bytes < t.hbm_capacity);
    assert_true(t.hbm_part[TIERS_WEIGHTS] == 2 * 2 * 106971136.0);
    assert_true(t.cxl_bytes_per_domain == 8 * (12.0 * 8624807936.0 + 2.0 * (8624807936.0 - 2 * 106971136.0)));
    free(x);

    /* the same on the asic's own 16 GiB: the CXL tier is short */
    x = load(exp_70b("op16.yaml", "cxl: { memory: per-node, device: asic, offload_optimizer: gpu,"
                                  " offload_parameters: true }\n"));
    tiers_compute(x, &t);
    assert_int_equal(tiers_check(x, &t, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "out of CXL memory: a per-node domain (1 node x 8 GPUs) needs 896.4 GiB for "
                                  "optimizer states 771.1, weights 125.3 GiB but its 1 device holds 16.0 GiB"));
    assert_non_null(strstr(e.msg, "short by 880.4 GiB"));
    assert_int_equal(e.line, 6);
    assert_int_equal(e.col, 16);
    free(x);
}

static void pool_over_capacity(void **state)
{
    (void)state;
    /* 16 GPUs x (12 + 4) B x 3,369,340,928 / 8 = 100.4 GiB in one pool of 2 x 16 GiB */
    const char *p = exp_7b("t5.yaml", "  memory: pool\n  device: pool-2x2\n  offload_optimizer: cpu\n");
    expcfg *x = load(p);
    tiers t;
    cxl_err e;
    tiers_compute(x, &t);
    assert_true(t.cxl_bytes_per_domain == 16 * 16.0 * 3369340928.0 / 8);
    assert_int_equal(tiers_check(x, &t, &e), CXL_ECONFIG);
    assert_non_null(strstr(e.msg, "out of CXL memory: a pool domain (2 nodes x 8 GPUs) needs 100.4 GiB for "
                                  "optimizer states 75.3, fp32 gradients 25.1 GiB but its 2 devices hold 32.0 GiB "
                                  "(2 x 16.0 GiB, device 'pool-2x2'); short by 68.4 GiB"));
    assert_string_equal(e.file, p);
    assert_int_equal(e.line, 4);
    assert_int_equal(e.col, 11);
    free(x);
}

/* Pipeline stages differ: a domain sums its GPUs by stage (Megatron rank order, pp slowest). */
static void domains_follow_stages(void **state)
{
    (void)state;
    /* 4 nodes, tp 8, pp 4: node n holds stage n, so the worst domain is the worst stage x 8 */
    const char *p = tmpdir_write("pp.yaml", "name: t\nmodel: llama2-7b\ngpu: h100-sxm\n"
                                            "cluster: { extends: dgx-h100, nodes: 4 }\n"
                                            "training: { global_batch: 16, tp: 8, pp: 4 }\n"
                                            "cxl: { memory: per-node, device: asic, offload_optimizer: gpu }\n");
    expcfg *x = load(p);
    tiers t;
    tiers_compute(x, &t);
    double worst = 0;
    for (uint64_t s = 0; s < 4; s++) {
        gpumem g;
        gpumem_stage(&x->model, &x->train, s, &g);
        if (g.optimizer_bytes > worst)
            worst = g.optimizer_bytes;
    }
    assert_true(t.cxl_bytes_per_gpu == worst);
    assert_true(t.cxl_bytes_per_domain == 8 * worst);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(per_node_defaults),
        cmocka_unit_test(pool_loads),
        cmocka_unit_test(absent_and_files),
        cmocka_unit_test(err_per_node_pool_device),
        cmocka_unit_test(err_pool_without_switch),
        cmocka_unit_test(err_nodes_not_multiple),
        cmocka_unit_test(err_switch_path_without_pool),
        cmocka_unit_test(err_offload_without_memory),
        cmocka_unit_test(err_parameters_without_optimizer),
        cmocka_unit_test(err_backend),
        cmocka_unit_test(err_device),
        cmocka_unit_test(err_keys_and_values),
        cmocka_unit_test(optimizer_offload_moves_exactly),
        cmocka_unit_test(parameter_and_activation_offload),
        cmocka_unit_test(llama70b_fits_with_offload),
        cmocka_unit_test(pool_over_capacity),
        cmocka_unit_test(domains_follow_stages),
    };
    return cmocka_run_group_tests_name("cxlcfg", tests, tmpdir_setup, tmpdir_teardown);
}
