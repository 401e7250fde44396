/* test_cli.c - the command-line frame (host/cli/cli.h): getopt_long over a command's option table.
 * `--opt VALUE` and `--opt=VALUE`, short forms (`-j 4`, `-j4`), operands anywhere and after `--` (even
 * when they start with '-'), options called in command-line order; unknown options, abbreviations,
 * missing values and values given to flags refused with exit status 2; -h/--help; --set into the
 * override list, and refused on a command without it; the help generated from the table. The errors
 * and the help print as they would (on standard error and output). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"

enum { O_JSON = 1, O_QUICK, O_JOBS };

static const cli_opt opts[] = {
    { O_JSON, "json", 0, "FILE", "write JSON" },
    { O_QUICK, "quick", 0, NULL, "be quick" },
    { O_JOBS, "jobs", 'j', "N", "workers" },
    CLI_OPT_SET,
    CLI_OPT_END,
};
static const cli_opt no_opts[] = { CLI_OPT_END };

static int run_stub(const cli_command *self, int argc, char **argv, cli_ctx *cl)
{
    (void)self, (void)argc, (void)argv, (void)cl;
    return 0;
}

static const cli_command cmd_t = { "tcmd", "[THING]", "a test command", opts, NULL, run_stub };
static const cli_command cmd_plain = { "plain", "", "no options", no_opts, NULL, run_stub };
static const cli_command *const table[] = { &cmd_t, &cmd_plain };

/* what the callback saw, as "id=value;" in order */
typedef struct seen {
    char log[512];
} seen;

static int record(void *ctx, int id, const char *val)
{
    seen *s = ctx;
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof s->log - n, "%d=%s;", id, val ? val : "(flag)");
    return 0;
}

/* Parse the NULL-terminated words with the command's name in front; the log in s. */
static int parse(const cli_command *c, const char *const *words, seen *s, override_list *ov)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)c->name;
    for (; *words; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    cli_ctx cl = { argc, argv, ov, "0", "x", "cc", 1, table, 2 };
    memset(s, 0, sizeof *s);
    return cli_parse(c, argc, argv, &cl, record, s);
}

#define PARSE(c, s, ov, ...) parse((c), (const char *const[]){ __VA_ARGS__, NULL }, (s), (ov))

static void values_both_ways(void **state)
{
    (void)state;
    seen s;
    override_list ov = { 0 };
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--json", "a.json", "--json=b.json", "--quick"), 0);
    assert_string_equal(s.log, "1=a.json;1=b.json;2=(flag);");
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--json=", "-j4", "-j", "5", "--jobs=6"), 0);
    assert_string_equal(s.log, "1=;3=4;3=5;3=6;");
    /* a value that looks like an option is still the value */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--json", "--quick"), 0);
    assert_string_equal(s.log, "1=--quick;");
    override_free(&ov);
}

static void operands_in_order_and_after_double_dash(void **state)
{
    (void)state;
    seen s;
    override_list ov = { 0 };
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "x", "--quick", "y", "--", "--json", "-z", "-"), 0);
    assert_string_equal(s.log, "-1=x;2=(flag);-1=y;-1=--json;-1=-z;-1=-;");
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "-"), 0);
    assert_string_equal(s.log, "-1=-;");
    override_free(&ov);
}

static void usage_errors(void **state)
{
    (void)state;
    seen s;
    override_list ov = { 0 };
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--nope"), 2);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "-x"), 2);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--json"), 2);     /* missing value */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "-j"), 2);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--quick=1"), 2);  /* a flag takes no value */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--js", "a"), 2);  /* no abbreviations */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--qui"), 2);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--hel"), 2);
    /* the options before the error were taken, nothing after it */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--quick", "--nope", "--json", "a"), 2);
    assert_string_equal(s.log, "2=(flag);");
    override_free(&ov);
}

static void help_flags(void **state)
{
    (void)state;
    seen s;
    override_list ov = { 0 };
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--help"), CLI_HELP_SHOWN);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "x", "-h", "--nope"), CLI_HELP_SHOWN);
    assert_int_equal(PARSE(&cmd_plain, &s, &ov, "-h"), CLI_HELP_SHOWN);
    override_free(&ov);
}

static void set_overrides(void **state)
{
    (void)state;
    seen s;
    override_list ov = { 0 };
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--set", "training.tp=8", "--set=link.width=16"), 0);
    assert_int_equal(ov.n, 2);
    assert_string_equal(ov.items[0].key, "training.tp");
    assert_string_equal(ov.items[1].key, "link.width");
    assert_string_equal(ov.items[1].value, "16");
    assert_string_equal(s.log, ""); /* the frame's, not the command's */
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--set"), 2);
    assert_int_equal(PARSE(&cmd_t, &s, &ov, "--set", "noequals"), 2);
    assert_int_equal(PARSE(&cmd_plain, &s, &ov, "--set", "a=b"), 2);
    override_free(&ov);
}

static void help_from_the_table(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    cli_help_command(m, &cmd_t);
    fclose(m);
    assert_non_null(strstr(text, "usage: cxlsim tcmd [OPTIONS] [THING]\n"));
    assert_non_null(strstr(text, "  --json FILE             write JSON\n"));
    assert_non_null(strstr(text, "  --quick                 be quick\n"));
    assert_non_null(strstr(text, "  -j, --jobs N            workers\n"));
    assert_non_null(strstr(text, "  --set KEY=VALUE "));
    assert_non_null(strstr(text, "  -h, --help              this help\n"));
    free(text);
    text = NULL;
    m = open_memstream(&text, &len);
    cli_ctx cl = { 0, NULL, NULL, "0", "x", "cc", 1, table, 2 };
    cli_help_all(m, &cl);
    fclose(m);
    assert_non_null(strstr(text, "  tcmd [THING]            a test command\n"));
    assert_non_null(strstr(text, "  plain                   no options\n"));
    assert_ptr_equal(cli_find(&cl, "plain"), &cmd_plain);
    assert_null(cli_find(&cl, "nope"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values_both_ways),
        cmocka_unit_test(operands_in_order_and_after_double_dash),
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(help_flags),
        cmocka_unit_test(set_overrides),
        cmocka_unit_test(help_from_the_table),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
