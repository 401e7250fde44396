/* cli.h - the frame of the command line: each command is a table row (cli_command) with its option
 * table (cli_opt); one parser (getopt_long) and one help generator read the same tables, so an option
 * exists, parses and is documented in one place. The commands, their reports and the dispatcher live
 * beside this file (host/cli/); only they print to the user or choose exit codes (err.h, README "Exit
 * codes"). The helpers every command shares (output pre-flight, provenance, progress) are cli_run.h.
 *
 * Parsing (cli_parse): `--opt VALUE`, `--opt=VALUE`, short options where the table names one (`-j N`,
 * `-jN`), operands anywhere, and `--` ending the options (what follows is an operand even when it starts
 * with '-'). Long names must be written in full (no GNU abbreviations: adding an option must not change
 * what an old command line means). `-h` and `--help` on every command print its help from the table.
 * Errors name the command and the option and return the usage exit status 2.
 */
#ifndef CXLSIM_CLI_H
#define CXLSIM_CLI_H

#include <stddef.h>
#include <stdio.h>

#include "util/err.h"
#include "config/override.h"

/* the id the option callback receives for an operand (a non-option argument) */
#define CLI_ARG (-1)
/* cli_parse's result when it printed the command's help: the command returns 0 */
#define CLI_HELP_SHOWN (-1)
/* options per command at most (the frame's -h/--help not counted) */
#define CLI_MAX_OPTS 40

typedef struct cli_opt {
    int id;              /* what the command's callback receives: 1-899 (900 up: the shared ones) */
    const char *name;    /* the long name without its dashes ("json" for --json) */
    char short_name;     /* a one-letter form ('j' for -j), or 0 */
    const char *arg;     /* the value's name in the help ("FILE"), or NULL for a flag */
    const char *help;    /* one line */
} cli_opt;

/* `--set KEY=VALUE`: handled by the frame (into cli_ctx.ov) in every command whose table holds it */
enum { CLI_ID_SET = 1000 };
#define CLI_OPT_SET                                                                                        \
    { CLI_ID_SET, "set", 0, "KEY=VALUE",                                                                   \
      "a value for a dotted key of the configuration, in its units (repeatable; docs/sweeps.md)" }
#define CLI_OPT_END { 0, NULL, 0, NULL, NULL }

typedef struct cli_ctx cli_ctx;

typedef struct cli_command {
    const char *name;      /* "probe" */
    const char *operands;  /* synopsis of the operands, "[DEVICE]", or "" */
    const char *summary;   /* one line for `cxlsim help` */
    const cli_opt *opts;   /* ended by CLI_OPT_END */
    const char *notes;     /* further lines of `cxlsim help NAME` (each ending in '\n'), or NULL */
    /* argv[0] is the command's name; returns the exit status */
    int (*run)(const struct cli_command *self, int argc, char **argv, cli_ctx *cl);
} cli_command;

/* What every command may read about the whole invocation. */
struct cli_ctx {
    int argc;                        /* the whole command line, program name first (JSON provenance) */
    char **argv;
    override_list *ov;               /* the --set overrides, filled by cli_parse */
    const char *version, *commit, *compiler; /* of this build */
    int schema_version;              /* of the JSON outputs (README "Provenance") */
    const cli_command *const *commands; /* the command table, for help and messages */
    size_t ncommands;
};

/* Called for each option in command-line order (id from the table) with its value (NULL for a flag),
 * and for each operand (id CLI_ARG). Returns 0, or an exit status that stops the parse. */
typedef int (*cli_opt_fn)(void *ctx, int id, const char *val);

/* Parse argv[1..argc-1] of command c. Returns 0, CLI_HELP_SHOWN (help printed on standard output), or
 * an exit status (a usage error, printed; or the callback's). */
int cli_parse(const cli_command *c, int argc, char **argv, cli_ctx *cl, cli_opt_fn fn, void *ctx);

/* The usage of one command, generated from its table. */
void cli_help_command(FILE *f, const cli_command *c);
/* The list of commands, one line each, and what they share. */
void cli_help_all(FILE *f, const cli_ctx *cl);
/* The command of the table named name, or NULL. */
const cli_command *cli_find(const cli_ctx *cl, const char *name);

/* A usage error of command cmd (NULL: of the command line as a whole): prints "cxlsim: MESSAGE" and
 * where the usage is, returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An error record: prints "cxlsim: MESSAGE", returns its exit status (cxl_exit_code). */
int cli_fail(const cxl_err *e);

#endif
