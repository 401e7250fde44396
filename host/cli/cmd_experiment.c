/* cmd_experiment.c - the commands that read an experiment without running it: `cxlsim memory` (memory
 * per GPU and per tier, report_memory.h) and `cxlsim ops` (the distinct kernels, optimes.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "train/compute.h"
#include "train/opgraph.h"
#include "train/optimes.h"
#include "cli/report_memory.h"

enum { O_JSON = 1, O_OUT, O_TIMES };

/* The options of memory and ops: [EXPERIMENT], one output, a flag. */
typedef struct exp_args {
    const char *cmd, *exp, *out;
    int have_exp, times;
} exp_args;

static int exp_opt(void *ctx, int id, const char *val)
{
    exp_args *a = ctx;
    if (id == CLI_ARG)
        return cli_one_operand(a->cmd, "EXPERIMENT", val, &a->exp, &a->have_exp);
    if (id == O_TIMES)
        a->times = 1;
    else
        a->out = val;
    return 0;
}

/* The frame of memory and ops: parse, check the output, load the experiment, run body on it, free it.
 * body returns 0 or an error in e. */
static int exp_command(const cli_command *self, int argc, char **argv, cli_ctx *cl,
                       int (*body)(const exp_args *a, const expcfg *x, const cli_ctx *cl, cxl_err *e))
{
    exp_args a = { .cmd = self->name, .exp = EXPCFG_DEFAULT };
    int urc = cli_parse(self, argc, argv, cl, exp_opt, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    cxl_err e;
    cxl_err_clear(&e);
    expcfg *x = NULL;
    if (cli_check_outputs(&a.out, 1, &a.exp, 1, &e) || cli_load_experiment(a.exp, cl->ov, &x, &e))
        return cli_fail(&e);
    int rc = cli_check_experiment_outputs(&a.out, 1, x, &e);
    if (!rc)
        rc = body(&a, x, cl, &e);
    free(x);
    return rc ? cli_fail(&e) : 0;
}

/* ---- memory ---- */

static int memory_body(const exp_args *a, const expcfg *x, const cli_ctx *cl, cxl_err *e)
{
    gpumem m;
    gpumem_estimate(&x->model, &x->train, &m);
    tiers tr;
    int rc = tiers_compute(x, &tr);
    report_memory_text(cli_summary_stream(&a->out, 1), x, &m, rc ? NULL : &tr);
    if (!rc)
        rc = tiers_check(x, &tr, e);
    if (rc || !a->out)
        return rc;
    size_t clen = 0;
    char *cfg = cli_resolved_experiment(x, &clen);
    json_w w;
    json_init(&w);
    json_obj_begin(&w, NULL);
    cli_json_provenance(&w, cl, cfg ? cfg : "", clen);
    report_memory_json(&w, x, &m, &tr);
    json_obj_end(&w);
    rc = w.oom || !cfg ? cxl_errf(e, CXL_ENOMEM, "out of memory writing JSON") : outfile_write(a->out, w.buf, w.len, e);
    json_free(&w);
    free(cfg);
    return rc;
}

static int memory_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    return exp_command(self, argc, argv, cl, memory_body);
}

static const cli_opt memory_opts[] = {
    { O_JSON, "json", 0, "FILE", "write the figures as JSON" },
    CLI_OPT_SET,
    CLI_OPT_END,
};

const cli_command cmd_memory = {
    "memory", "[EXPERIMENT]",
    "per-GPU memory of a training experiment and whether it fits",
    memory_opts,
    "EXPERIMENT is a YAML file or a preset name (default llama2-7b-2x8-h100). Weights, gradients,\n"
    "optimizer states and activations of the largest pipeline stage, and with a cxl: section what\n"
    "stays in HBM and what goes to CXL memory.\n",
    memory_main,
};

/* ---- ops ---- */

/* The list of kernels, with the optimizer kernels of the first and the last stage, as text. */
static int ops_list(const expcfg *x, int with_times, opgraph *g, char **buf, size_t *len, cxl_err *e)
{
    int rc = opgraph_build(&x->model, &x->train, g, e);
    if (!rc) {
        gpumem m0, m1;
        gpumem_stage(&x->model, &x->train, 0, &m0);
        gpumem_stage(&x->model, &x->train, x->train.pp - 1, &m1);
        uint64_t dp = x->train.zero >= 1 ? traincfg_dpcp(&x->train) : 1;
        if ((rc = opgraph_optimizer_op(g, &x->train, (m0.params + dp - 1) / dp, e)) >= 0)
            rc = opgraph_optimizer_op(g, &x->train, (m1.params + dp - 1) / dp, e);
        rc = rc < 0 ? rc : 0;
    }
    if (rc)
        return rc;
    int64_t times[OPGRAPH_MAX_OPS];
    for (uint32_t i = 0; i < g->nops; i++)
        times[i] = compute_op_ps(&x->gpu, &g->ops[i]);
    FILE *f = open_memstream(buf, len);
    char src[256];
    snprintf(src, sizeof src, "cxlsim ops %s%s", x->name, with_times ? " --times (modelled, not measured)" : "");
    if (!f)
        return cxl_errf(e, CXL_ENOMEM, "out of memory");
    rc = optimes_write_list(f, g->ops, g->nops, x->gpu.name, src, with_times ? times : NULL);
    if (rc)
        cxl_errf(e, rc, "could not write the kernel list");
    fclose(f);
    return rc;
}

static int ops_body(const exp_args *a, const expcfg *x, const cli_ctx *cl, cxl_err *e)
{
    (void)cl;
    opgraph *g = malloc(sizeof *g);
    char *buf = NULL;
    size_t len = 0;
    int rc = g ? ops_list(x, a->times, g, &buf, &len, e) : cxl_errf(e, CXL_ENOMEM, "out of memory");
    if (!rc) {
        if (a->out)
            rc = outfile_write(a->out, buf, len, e);
        else
            fwrite(buf, 1, len, stdout);
    }
    free(buf);
    free(g);
    return rc;
}

static int ops_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    return exp_command(self, argc, argv, cl, ops_body);
}

static const cli_opt ops_opts[] = {
    { O_OUT, "out", 0, "FILE", "write the list there instead of standard output" },
    { O_TIMES, "times", 0, NULL, "include the modelled time of each kernel" },
    CLI_OPT_SET,
    CLI_OPT_END,
};

const cli_command cmd_ops = {
    "ops", "[EXPERIMENT]",
    "list the distinct kernels of an experiment, the input of scripts/profile_ops.py",
    ops_opts,
    "EXPERIMENT is a YAML file or a preset name (default llama2-7b-2x8-h100).\n",
    ops_main,
};
