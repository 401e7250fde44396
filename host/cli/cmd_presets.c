/* cmd_presets.c - the commands that show configurations: `cxlsim presets` (the built-in presets, one
 * preset's YAML, or what a run resolves it to) and `cxlsim check DEVICE` (a device as the model will
 * use it, in cycles). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "cli/cli_run.h"
#include "cli/commands.h"
#include "config/presets.h"

/* ---- presets ---- */

enum { O_RESOLVED = 1 };

static const char *const preset_kinds[] = { "devices", "models", "gpus", "clusters", "experiments", NULL };

static int is_kind(const char *k)
{
    for (const char *const *p = preset_kinds; *p; p++)
        if (!strcmp(*p, k))
            return 1;
    return 0;
}

/* `presets show --resolved KIND NAME`: the preset loaded as a run would load it, printed back. */
static int show_resolved(const char *kind, const char *name)
{
    cxl_err e;
    cxl_err_clear(&e);
    int rc = 0;
    if (!strcmp(kind, "devices")) {
        devcfg c;
        if (!(rc = devcfg_load(name, &c, &e)))
            devcfg_dump(stdout, &c);
    } else if (!strcmp(kind, "experiments")) {
        expcfg *x = malloc(sizeof *x);
        if (!x)
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        else if (!(rc = expcfg_load(name, x, &e)) && expcfg_dump(stdout, x))
            rc = cxl_errf(&e, CXL_ENOMEM, "out of memory");
        free(x);
    } else if (!strcmp(kind, "models")) {
        modelcfg m;
        if (!(rc = modelcfg_load(name, &m, &e)))
            compose_dump(stdout, &modelcfg_kind, &m, 0);
    } else if (!strcmp(kind, "gpus")) {
        gpucfg g;
        if (!(rc = gpucfg_load(name, &g, &e)))
            compose_dump(stdout, &gpucfg_kind, &g, 0);
    } else {
        clustercfg c;
        if (!(rc = clustercfg_load(name, &c, &e)))
            compose_dump(stdout, &clustercfg_kind, &c, 0);
    }
    return rc ? cli_fail(&e) : 0;
}

/* `presets show [--resolved] [KIND] NAME`: pos are the operands after "show". */
static int presets_show(const char *const *pos, int npos, int resolved)
{
    const char *kind = "devices", *name;
    if (npos == 2 && is_kind(pos[0])) {
        kind = pos[0];
        name = pos[1];
    } else if (npos == 1) {
        name = pos[0];
    } else {
        return cli_usage("presets", "presets show: expected [--resolved] [KIND] NAME");
    }
    if (!presets_text(kind, name)) {
        cxl_err e;
        cxl_err_clear(&e);
        char list[1024];
        compose_preset_list(kind, name, list, sizeof list);
        cxl_errf(&e, CXL_ECONFIG, "unknown preset '%s' among the %s; %s", name, kind, list);
        return cli_fail(&e);
    }
    if (resolved)
        return show_resolved(kind, name);
    fputs(presets_text(kind, name), stdout);
    return 0;
}

/* `presets [KIND]`: the names, the devices with their descriptions. */
static int presets_list(const char *kind)
{
    if (strcmp(kind, "devices")) {
        for (const char *const *n = presets_names(kind); *n; n++)
            printf("%s\n", *n);
        return 0;
    }
    for (const char *const *n = devcfg_preset_names(); *n; n++) {
        devcfg c;
        cxl_err e;
        cxl_err_clear(&e);
        if (devcfg_load(*n, &c, &e))
            return cli_fail(&e);
        printf("%-12s %s\n", *n, c.description);
    }
    return 0;
}

typedef struct presets_args {
    const char *pos[4];
    int npos, resolved;
} presets_args;

static int presets_opt(void *ctx, int id, const char *val)
{
    presets_args *a = ctx;
    if (id == O_RESOLVED)
        a->resolved = 1;
    else if (a->npos++ < 4)
        a->pos[a->npos - 1] = val;
    return 0;
}

static int presets_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    presets_args a = { { NULL }, 0, 0 };
    int urc = cli_parse(self, argc, argv, cl, presets_opt, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (a.npos >= 1 && !strcmp(a.pos[0], "show"))
        return presets_show(a.pos + 1, a.npos - 1, a.resolved);
    if (a.resolved)
        return cli_usage("presets", "presets: --resolved is an option of presets show only");
    if (a.npos > 1 || (a.npos == 1 && !is_kind(a.pos[0])))
        return cli_usage("presets", "presets: unknown kind '%s'; valid: devices, models, gpus, clusters, experiments",
                         a.pos[0]);
    return presets_list(a.npos ? a.pos[0] : "devices");
}

static const cli_opt presets_opts[] = {
    { O_RESOLVED, "resolved", 0, NULL,
      "presets show: every value in effect after extends and defaults, instead of the file" },
    CLI_OPT_END,
};

const cli_command cmd_presets = {
    "presets", "[KIND] | show [KIND] NAME",
    "list the built-in presets of a KIND (default devices), or print one as YAML",
    presets_opts,
    "KIND is devices, models, gpus, clusters or experiments. 'presets show' prints a preset's YAML, the\n"
    "same text as configs/KIND/NAME.yaml.\n",
    presets_main,
};

/* ---- check ---- */

/* A device as the model uses it: clock, path, link, controller, DRAM, in cycles. */
static void check_report(const devcfg *c, const cxl_params *p)
{
    printf("%s: %s\n", c->name, c->description);
    printf("  model clock        %.3f MHz (DRAM command clock)\n", p->clk_khz / 1000.0);
    printf("  path               %s\n", p->link_present ? "CXL link" : "local DDR (no link)");
    printf("  requesters x tags  %u x %u\n", p->requesters, p->tags);
    printf("  host path          %u cycles each way\n", p->host_req_cycles);
    if (p->link_present) {
        printf("  flit time          %llu/%llu cycles (serialization %u, PHY %u)\n",
               (unsigned long long)p->link.flit_cost, (unsigned long long)p->link.flit_inc, p->link.ser_cycles,
               p->link.phy_cycles);
        printf("  credits            req %u, data %u, drs %u, ndr %u (return %u cycles)\n", p->link.m2s_req_credits,
               p->link.m2s_data_credits, p->link.s2m_data_credits, p->link.s2m_rsp_credits,
               p->link.credit_return_cycles);
        printf("  controller         %u + %u cycles, ingress %u, response %u\n", p->ctrl.req_latency_cycles,
               p->ctrl.rsp_latency_cycles, p->ctrl.ingress_depth, p->ctrl.response_depth);
    }
    const cxl_dram_params *d = &p->dram;
    printf("  DRAM               %s, %u channels, %u ranks x %u bank groups x %u banks, %u rows x %u lines\n",
           d->std == CXL_DDR5 ? "DDR5" : "DDR4", d->channels, d->ranks, d->bankgroups, d->banks, d->rows,
           d->columns);
    printf("  timing (cycles)    tRCD %u tCL %u tRP %u tRAS %u tRC %u tCWL %u tWR %u tRTP %u tBL %u\n", d->tRCD,
           d->tCL, d->tRP, d->tRAS, d->tRC, d->tCWL, d->tWR, d->tRTP, d->tBL);
    printf("                     tCCD_S/L %u/%u tCCD_L_WR %u tRRD_S/L %u/%u tFAW %u tWTR_S/L %u/%u tRTW %u\n",
           d->tCCD_S, d->tCCD_L, d->tCCD_L_WR, d->tRRD_S, d->tRRD_L, d->tFAW, d->tWTR_S, d->tWTR_L, d->tRTW);
    printf("                     tREFI %u tRFC %u\n", d->tREFI, d->tRFC);
}

static int check_opt(void *ctx, int id, const char *val)
{
    const char **dev = ctx;
    (void)id;
    dev[dev[0] ? 1 : 0] = dev[0] ? "" : val; /* a second operand makes the count wrong */
    return 0;
}

static int check_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    const char *dev[2] = { NULL, NULL };
    int urc = cli_parse(self, argc, argv, cl, check_opt, dev);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (!dev[0] || dev[1])
        return cli_usage("check", "check: expected one DEVICE");
    devcfg c;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    if (devcfg_load_with(dev[0], cl->ov, &c, &e) || devcfg_to_params(&c, &p, &e))
        return cli_fail(&e);
    check_report(&c, &p);
    return 0;
}

static const cli_opt check_opts[] = {
    CLI_OPT_SET,
    CLI_OPT_END,
};

const cli_command cmd_check = {
    "check", "DEVICE",
    "load and validate a device description, print what the model will use",
    check_opts,
    "DEVICE is a YAML file or a preset name (cxlsim presets); docs/config.md.\n",
    check_main,
};
