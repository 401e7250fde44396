/* main.c - cxlsim's entry point: the table of commands and the dispatch to one of them. Each command is
 * a cli_command (cli.h) in its own file, with its option table, its help and its handler; adding one is
 * a row in `commands` below (commands.h). Only host/cli/ prints to the user or chooses exit codes (see
 * err.h and README "Exit codes"). */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "commit.h"
#include "out/outfile.h"

#ifndef CXLSIM_VERSION
#define CXLSIM_VERSION "0.1.0"
#endif
/* The layout of the JSON outputs (README "Provenance"): raised when a member is renamed or removed or
 * changes meaning; adding members keeps it. */
#define CXLSIM_SCHEMA_VERSION 1

#if defined(__clang__) || !defined(__GNUC__)
#define CXLSIM_COMPILER __VERSION__
#else
#define CXLSIM_COMPILER "GCC " __VERSION__
#endif

/* in the order `cxlsim help` lists them */
static const cli_command *const commands[] = {
    &cmd_probe, &cmd_memory, &cmd_train,    &cmd_ops,     &cmd_presets, &cmd_check,
    &cmd_compare, &cmd_sweep, &cmd_search, &cmd_backends, &cmd_version, &cmd_help,
};

static int run_command(int argc, char **argv)
{
    override_list ov = { 0 };
    cli_ctx cl = { argc, argv, &ov, CXLSIM_VERSION, CXLSIM_COMMIT, CXLSIM_COMPILER, CXLSIM_SCHEMA_VERSION,
                   commands, sizeof commands / sizeof commands[0] };
    if (argc < 2) {
        cli_help_all(stderr, &cl);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h"))
        name = "help";
    else if (!strcmp(name, "--version"))
        name = "version";
    const cli_command *c = cli_find(&cl, name);
    if (!c)
        return cli_usage(NULL, "unknown command '%s'", argv[1]);
    int rc = c->run(c, argc - 1, argv + 1, &cl);
    override_free(&ov);
    return rc;
}

int main(int argc, char **argv)
{
    outfile_install_signal_handlers();
    int rc = run_command(argc, argv);
    cxl_err e;
    cxl_err_clear(&e);
    if (outfile_close_stdout(&e)) {
        int frc = cli_fail(&e);
        if (!rc)
            rc = frc;
    }
    return rc;
}
