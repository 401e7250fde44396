/* cmd_info.c - the commands about cxlsim itself: `backends`, `version`, `help [COMMAND]`. */
#include <string.h>

#include "cxl/backend.h"
#include "cli/commands.h"

static const cli_opt no_opts[] = { CLI_OPT_END };

/* a command without operands: any operand is a usage error */
static int no_operand(void *ctx, int id, const char *val)
{
    const char *cmd = ctx;
    (void)id;
    return cli_usage(cmd, "%s: unexpected argument '%s'", cmd, val);
}

static int backends_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    int urc = cli_parse(self, argc, argv, cl, no_operand, (void *)self->name);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    for (const char *const *n = cxl_backend_names(); *n; n++) {
        const char *builds = cxl_backend_rtl_builds(*n);
        printf("%-10s %s%s%s%s\n", *n, cxl_backend_status(*n), *builds ? " (kernel builds: " : "", builds,
               *builds ? ")" : "");
    }
    return 0;
}

const cli_command cmd_backends = {
    "backends", "", "list the backends and whether each is built in", no_opts, NULL, backends_main,
};

static int version_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    int urc = cli_parse(self, argc, argv, cl, no_operand, (void *)self->name);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    printf("cxlsim %s\n", cl->version);
    printf("  commit          %s\n", cl->commit);
    printf("  compiler        %s\n", cl->compiler);
    printf("  backends        ");
    int n = 0;
    for (const char *const *b = cxl_backend_names(); *b; b++)
        if (cxl_backend_available(*b))
            printf("%s%s", n++ ? ", " : "", *b);
    printf("\n  JSON schema     %d\n", cl->schema_version);
    return 0;
}

const cli_command cmd_version = {
    "version", "", "print the version, commit, compiler and backends of this build", no_opts, NULL, version_main,
};

typedef struct help_args {
    const char *topic;
    int n;
} help_args;

static int help_operand(void *ctx, int id, const char *val)
{
    help_args *a = ctx;
    (void)id;
    if (a->n++)
        return cli_usage("help", "help: only one COMMAND may be given ('%s')", val);
    a->topic = val;
    return 0;
}

static int help_main(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    help_args a = { NULL, 0 };
    int urc = cli_parse(self, argc, argv, cl, help_operand, &a);
    if (urc)
        return urc == CLI_HELP_SHOWN ? 0 : urc;
    if (!a.topic) {
        cli_help_all(stdout, cl);
        return 0;
    }
    const cli_command *c = cli_find(cl, a.topic);
    if (!c)
        return cli_usage(NULL, "help: unknown command '%s'", a.topic);
    cli_help_command(stdout, c);
    return 0;
}

const cli_command cmd_help = {
    "help", "[COMMAND]", "this list, or the options of one command", no_opts, NULL, help_main,
};
