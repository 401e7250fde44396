/* tmpdir_fixture.h - a temporary folder per cmocka group for the fixture files a suite writes:
 * tmpdir_setup / tmpdir_teardown as group setup and teardown, tmpdir_write to create a file in it.
 * Header-only (every test_*.c is its own executable). */
#ifndef CXLSIM_TMPDIR_FIXTURE_H
#define CXLSIM_TMPDIR_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

static char g_tmpdir[64];

static int tmpdir_setup(void **state)
{
    (void)state;
    snprintf(g_tmpdir, sizeof g_tmpdir, "/tmp/cxlsim-test-XXXXXX");
    return mkdtemp(g_tmpdir) ? 0 : -1;
}

static int tmpdir_teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Write text to g_tmpdir/name; returns the path (valid until the next call). */
static const char *tmpdir_write(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", g_tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#endif
