/* cli_parse.c - the option tables read twice: by getopt_long to parse a command line, and to print a
 * command's help (cli.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <string.h>

/* getopt_long's val of the table's option i (above every char, so short forms stay themselves) */
#define CLI_LONG_VAL(i) (256 + (i))

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cxlsim: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd)
        fprintf(stderr, "\n(run 'cxlsim help %s' for usage)\n", cmd);
    else
        fprintf(stderr, "\n(run 'cxlsim help' for usage)\n");
    return 2;
}

int cli_fail(const cxl_err *e)
{
    char buf[2048];
    cxl_err_format(e, buf, sizeof buf);
    fprintf(stderr, "cxlsim: %s\n", buf);
    return cxl_exit_code(e->code);
}

const cli_command *cli_find(const cli_ctx *cl, const char *name)
{
    for (size_t i = 0; i < cl->ncommands; i++)
        if (!strcmp(cl->commands[i]->name, name))
            return cl->commands[i];
    return NULL;
}

static const cli_opt *find_opt(const cli_command *c, const char *name)
{
    for (const cli_opt *o = c->opts; o->name; o++)
        if (!strcmp(o->name, name))
            return o;
    return NULL;
}

/* `--set` on a command without it: name the commands that take it. */
static int set_not_here(const cli_command *c, const cli_ctx *cl)
{
    char list[256] = "";
    size_t n = 0, k = 0;
    for (size_t i = 0; i < cl->ncommands; i++)
        n += find_opt(cl->commands[i], "set") != NULL;
    for (size_t i = 0; i < cl->ncommands; i++) {
        if (!find_opt(cl->commands[i], "set"))
            continue;
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ",
                 cl->commands[i]->name);
        k++;
    }
    return cli_usage(c->name, "%s: --set is an option of %s only", c->name, list);
}

/* The argument that held the long option just returned (its value separate or not). */
static const char *long_element(int argc, char **argv, int optind_now, const char *val)
{
    int at = val && optind_now >= 2 && val == argv[optind_now - 1] ? optind_now - 2 : optind_now - 1;
    return at >= 1 && at < argc ? argv[at] : "";
}

/* 1 when element ("--name" or "--name=VALUE") spells name in full */
static int spelled_out(const char *element, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(element, "--", 2) && !strncmp(element + 2, name, n) &&
           (element[2 + n] == '\0' || element[2 + n] == '=');
}

/* The error of a '?' or ':' from getopt_long. */
static int parse_error(const cli_command *c, const cli_ctx *cl, int ch, int argc, char **argv)
{
    const char *element = optind >= 1 && optind - 1 < argc ? argv[optind - 1] : "";
    int known_long = optopt >= CLI_LONG_VAL(0);
    const char *name = known_long ? c->opts[optopt - CLI_LONG_VAL(0)].name : NULL;
    if (ch == ':') {
        if (name && !strcmp(name, "set"))
            return cli_usage(c->name, "%s: --set needs KEY=VALUE (e.g. --set training.tp=8)", c->name);
        if (name)
            return cli_usage(c->name, "%s: --%s needs a value", c->name, name);
        return cli_usage(c->name, "%s: -%c needs a value", c->name, optopt);
    }
    if (name)
        return cli_usage(c->name, "%s: --%s takes no value ('%s')", c->name, name, element);
    if (optopt)
        return cli_usage(c->name, "%s: unknown option '-%c'", c->name, optopt);
    if (spelled_out(element, "set"))
        return set_not_here(c, cl);
    return cli_usage(c->name, "%s: unknown option '%s'", c->name, element);
}

int cli_parse(const cli_command *c, int argc, char **argv, cli_ctx *cl, cli_opt_fn fn, void *ctx)
{
    struct option lo[CLI_MAX_OPTS + 2];
    /* '-': operands come back in order (id 1), whatever POSIXLY_CORRECT says; ':': a missing value is ':' */
    char shorts[2 * CLI_MAX_OPTS + 8] = "-:h";
    size_t n = 0, ns = strlen(shorts);
    for (const cli_opt *o = c->opts; o->name && n < CLI_MAX_OPTS; o++, n++) {
        lo[n] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, CLI_LONG_VAL((int)n) };
        if (o->short_name) {
            shorts[ns++] = o->short_name;
            if (o->arg)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    if (c->opts[n].name) { /* a table longer than CLI_MAX_OPTS: a bug, not a user's error */
        fprintf(stderr, "cxlsim: internal error: %s has more than %d options\n", c->name, CLI_MAX_OPTS);
        return 1;
    }
    lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
    lo[n] = (struct option){ NULL, 0, NULL, 0 };
    optind = 0; /* glibc: start afresh */
    opterr = 0;
    for (;;) {
        int li = -1, rc = 0;
        int ch = getopt_long(argc, argv, shorts, lo, &li);
        if (ch == -1)
            break;
        if (ch == '?' || ch == ':')
            return parse_error(c, cl, ch, argc, argv);
        if (ch == 1) {
            rc = fn(ctx, CLI_ARG, optarg);
        } else if (li >= 0 && !spelled_out(long_element(argc, argv, optind, optarg), lo[li].name)) {
            return cli_usage(c->name, "%s: unknown option '%s'", c->name, long_element(argc, argv, optind, optarg));
        } else if (ch == 'h') {
            cli_help_command(stdout, c);
            return CLI_HELP_SHOWN;
        } else {
            const cli_opt *o = NULL;
            if (ch >= CLI_LONG_VAL(0))
                o = &c->opts[ch - CLI_LONG_VAL(0)];
            for (const cli_opt *s = c->opts; !o && s->name; s++)
                if (s->short_name == ch)
                    o = s;
            if (o->id == CLI_ID_SET) {
                cxl_err e;
                cxl_err_clear(&e);
                if (override_parse(cl->ov, optarg, &e))
                    return e.code == CXL_EUSAGE ? cli_usage(c->name, "%s", e.msg) : cli_fail(&e);
            } else {
                rc = fn(ctx, o->id, o->arg ? optarg : NULL);
            }
        }
        if (rc)
            return rc;
    }
    for (int i = optind; i < argc; i++) { /* after "--" */
        int rc = fn(ctx, CLI_ARG, argv[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- help ---- */

/* width of the option column: "  -j, --jobs N" and its padding */
enum { HELP_COL = 26 };

static void help_line(FILE *f, const char *left, const char *text)
{
    if (strlen(left) + 2 <= HELP_COL)
        fprintf(f, "  %-*s%s\n", HELP_COL - 2, left, text);
    else
        fprintf(f, "  %s\n  %-*s%s\n", left, HELP_COL - 2, "", text);
}

void cli_help_command(FILE *f, const cli_command *c)
{
    fprintf(f, "usage: cxlsim %s%s%s%s\n\n%s\n", c->name, c->opts[0].name ? " [OPTIONS]" : " [-h]",
            c->operands[0] ? " " : "", c->operands, c->summary);
    if (c->notes)
        fprintf(f, "\n%s", c->notes);
    fprintf(f, "\noptions:\n");
    for (const cli_opt *o = c->opts; o->name; o++) {
        char left[96], shortform[8] = "";
        if (o->short_name)
            snprintf(shortform, sizeof shortform, "-%c, ", o->short_name);
        snprintf(left, sizeof left, "%s--%s%s%s", shortform, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        help_line(f, left, o->help);
    }
    help_line(f, "-h, --help", "this help");
}

void cli_help_all(FILE *f, const cli_ctx *cl)
{
    fprintf(f, "usage: cxlsim COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < cl->ncommands; i++) {
        const cli_command *c = cl->commands[i];
        char left[96];
        snprintf(left, sizeof left, "%s%s%s", c->name, c->operands[0] ? " " : "", c->operands);
        help_line(f, left, c->summary);
    }
    fprintf(f, "\n'cxlsim help COMMAND' (or 'cxlsim COMMAND --help') lists a command's options.\n"
               "--set KEY=VALUE (repeatable, on the commands that list it): a value for a dotted key of the\n"
               "experiment (training.tp=8, cluster.nodes=128) or the device (link.width=8), in the files'\n"
               "units; training.dp, when not given, is the GPUs / (tp x pp x cp).\n"
               "DEVICE is a YAML file or a preset name, EXPERIMENT likewise. FILE '-' is standard output (the\n"
               "summary then goes to standard error). Exit codes: 0 ok, 1 internal error, 2 usage,\n"
               "3 configuration, 4 backend unavailable, 5 file I/O, 6 out of memory, 7 request beyond the\n"
               "model's limits, 8 compare: backends differ, 9 FPGA card or kernel run failed (xrt).\n");
}
