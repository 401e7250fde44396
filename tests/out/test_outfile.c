/* test_outfile.c - output destinations (outfile.h): new and existing regular files (contents, mode, no
 * temporary file left), read-only files and folders refused, links written through (chains, dangling,
 * loops), FIFOs and devices written in place, several outputs all or none (whole or streamed), outputs
 * that are inputs or each other refused, the pending-file limit, and a signal removing a pending
 * temporary file. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "out/outfile.h"

#include "tmpdir_fixture.h"

static char *path_of(const char *name)
{
    static char buf[4][256];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", g_tmpdir, name);
    return p;
}

static void read_all(const char *path, char *buf, size_t sz)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sz - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (unsigned)(st.st_mode & 07777);
}

/* No NAME.tmpXXXXXX anywhere in the test folder. */
static void assert_no_temps(void)
{
    DIR *d = opendir(g_tmpdir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".tmp"))
            fail_msg("temporary file left: %s", e->d_name);
    closedir(d);
}

static void write_ok(const char *path, const char *text)
{
    cxl_err e;
    cxl_err_clear(&e);
    if (outfile_write(path, text, strlen(text), &e))
        fail_msg("%s: %s", path, e.msg);
}

static void new_and_existing_files(void **state)
{
    (void)state;
    char buf[64];
    mode_t old = umask(022);
    const char *p = path_of("new.json");
    cxl_err e;
    assert_int_equal(outfile_check(p, &e), 0);
    write_ok(p, "one");
    read_all(p, buf, sizeof buf);
    assert_string_equal(buf, "one");
    assert_int_equal(mode_of(p), 0644);
    chmod(p, 0600);
    write_ok(p, "two");
    read_all(p, buf, sizeof buf);
    assert_string_equal(buf, "two");
    assert_int_equal(mode_of(p), 0600);
    umask(old);
    assert_no_temps();
}

static void refused(void **state)
{
    (void)state;
    char buf[64];
    cxl_err e;
    const char *ro = path_of("ro.json");
    write_ok(ro, "keep");
    chmod(ro, 0444);
    assert_int_equal(outfile_check(ro, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "read-only"));
    assert_int_equal(outfile_write(ro, "x", 1, &e), CXL_EIO);
    read_all(ro, buf, sizeof buf);
    assert_string_equal(buf, "keep");
    assert_int_equal(mode_of(ro), 0444);
    assert_int_equal(outfile_check(g_tmpdir, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "folder"));
    assert_int_equal(outfile_check(path_of("none/x.json"), &e), CXL_EIO);
    assert_int_equal(outfile_check("/proc/cxlsim-test.json", &e), CXL_EIO);
    assert_int_equal(outfile_check("", &e), CXL_EIO);
    assert_no_temps();
}

static void links_written_through(void **state)
{
    (void)state;
    char buf[64], target[256];
    cxl_err e;
    snprintf(target, sizeof target, "%s", path_of("target.json"));
    write_ok(target, "old");
    assert_int_equal(symlink("target.json", path_of("l1")), 0);
    assert_int_equal(symlink(path_of("l1"), path_of("l2")), 0);
    write_ok(path_of("l2"), "new");
    struct stat st;
    assert_int_equal(lstat(path_of("l1"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(path_of("l2"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    read_all(target, buf, sizeof buf);
    assert_string_equal(buf, "new");
    /* a dangling link creates its target */
    assert_int_equal(symlink("made.json", path_of("dangling")), 0);
    write_ok(path_of("dangling"), "made");
    read_all(path_of("made.json"), buf, sizeof buf);
    assert_string_equal(buf, "made");
    /* a loop is an error, not a hang */
    assert_int_equal(symlink("loop", path_of("loop")), 0);
    assert_int_equal(outfile_write(path_of("loop"), "x", 1, &e), CXL_EIO);
    assert_no_temps();
}

static void fifo_and_devices(void **state)
{
    (void)state;
    cxl_err e;
    const char *fifo = path_of("fifo");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    write_ok(fifo, "through");
    char buf[64] = { 0 };
    assert_int_equal(read(rd, buf, sizeof buf - 1), 7);
    assert_string_equal(buf, "through");
    close(rd);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    if (!stat("/dev/full", &st) && S_ISCHR(st.st_mode)) {
        assert_int_equal(outfile_check("/dev/full", &e), 0);
        assert_int_equal(outfile_write("/dev/full", "x", 1, &e), CXL_EIO);
    }
    if (!stat("/dev/null", &st) && S_ISCHR(st.st_mode))
        write_ok("/dev/null", "gone");
    assert_true(outfile_is_stdout("-"));
    assert_true(outfile_is_stdout("/dev/stdout"));
    assert_true(outfile_is_stdout("/dev/fd/1"));
    assert_false(outfile_is_stdout("/dev/stderr"));
    assert_false(outfile_is_stdout(path_of("x")));
    assert_false(outfile_is_stdout(NULL));
    assert_no_temps();
}

static void all_or_none(void **state)
{
    (void)state;
    cxl_err e;
    char buf[64];
    const char *keep = path_of("keep.json");
    write_ok(keep, "old");
    const char *paths[3] = { keep, NULL, g_tmpdir }; /* the folder fails after the first is written */
    const char *data[3] = { "new", NULL, "x" };
    size_t lens[3] = { 3, 0, 1 };
    assert_int_equal(outfile_write_all(paths, data, lens, 3, &e), CXL_EIO);
    read_all(keep, buf, sizeof buf);
    assert_string_equal(buf, "old");
    paths[2] = path_of("second.json");
    assert_int_equal(outfile_write_all(paths, data, lens, 3, &e), 0);
    read_all(keep, buf, sizeof buf);
    assert_string_equal(buf, "new");
    read_all(paths[2], buf, sizeof buf);
    assert_string_equal(buf, "x");
    /* abort keeps the old file */
    outfile *f;
    assert_int_equal(outfile_open(keep, &f, &e), 0);
    assert_int_equal(outfile_put(f, "zzz", 3, &e), 0);
    outfile_abort(f);
    outfile_abort(NULL);
    read_all(keep, buf, sizeof buf);
    assert_string_equal(buf, "new");
    assert_no_temps();
}

/* Streamed outputs (the trace, written in pieces during a run) opened before the run and finished
 * together: a failed run (rc) leaves neither, the old file untouched; a good one commits both. */
static void streams_finished_together(void **state)
{
    (void)state;
    cxl_err e;
    char buf[64];
    const char *keep = path_of("stream-keep.json"), *fresh = path_of("stream-new.json");
    write_ok(keep, "old");
    for (int good = 0; good < 2; good++) {
        outfile *f[3] = { NULL, NULL, NULL };
        assert_int_equal(outfile_open(keep, &f[0], &e), 0);
        assert_int_equal(outfile_open(fresh, &f[2], &e), 0);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(outfile_put(f[0], "ab", 2, &e), 0);
            assert_int_equal(outfile_put(f[2], "c", 1, &e), 0);
        }
        assert_int_equal(outfile_finish_all(f, 3, good ? 0 : CXL_EIO, &e), good ? 0 : CXL_EIO);
        assert_null(f[0]);
        assert_null(f[2]);
        read_all(keep, buf, sizeof buf);
        assert_string_equal(buf, good ? "ababab" : "old");
        assert_int_equal(access(fresh, F_OK) == 0, good);
        assert_no_temps();
    }
    read_all(fresh, buf, sizeof buf);
    assert_string_equal(buf, "ccc");
}

static void inputs_and_duplicates(void **state)
{
    (void)state;
    cxl_err e;
    char in[256], link[256];
    snprintf(in, sizeof in, "%s", tmpdir_write("in.yaml", "name: x\n"));
    snprintf(link, sizeof link, "%s", path_of("in-link.yaml"));
    assert_int_equal(symlink("in.yaml", link), 0);
    const char *ins[2] = { "asic", in };
    const char *o1[2] = { in, NULL };
    assert_int_equal(outfile_check_inputs(o1, 2, ins, 2, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "is the input"));
    const char *o2[1] = { link };
    assert_int_equal(outfile_check_inputs(o2, 1, ins, 2, &e), CXL_EIO);
    const char *o3[2] = { path_of("a.json"), path_of("a.json") };
    assert_int_equal(outfile_check_inputs(o3, 2, ins, 2, &e), CXL_EIO);
    assert_non_null(strstr(e.msg, "same file"));
    const char *o4[2] = { "-", "/dev/stdout" };
    assert_int_equal(outfile_check_inputs(o4, 2, ins, 2, &e), CXL_EIO);
    const char *o5[3] = { path_of("a.json"), "-", path_of("b.json") };
    assert_int_equal(outfile_check_inputs(o5, 3, ins, 2, &e), 0);
}

static void pending_limit(void **state)
{
    (void)state;
    cxl_err e;
    outfile *f[OUTFILE_MAX_PENDING + 1];
    char name[32];
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++) {
        snprintf(name, sizeof name, "p%d.json", i);
        assert_int_equal(outfile_open(path_of(name), &f[i], &e), 0);
    }
    assert_int_equal(outfile_open(path_of("one-too-many.json"), &f[OUTFILE_MAX_PENDING], &e), CXL_EINTERNAL);
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++)
        outfile_abort(f[i]);
    assert_no_temps();
}

/* A child with a pending temporary file dies of SIGTERM; the handler has removed the file. */
static void signal_removes_temporary(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        outfile_install_signal_handlers();
        outfile *f;
        cxl_err e;
        if (outfile_open(path_of("sig.json"), &f, &e) || outfile_put(f, "partial", 7, &e))
            _exit(2);
        raise(SIGTERM);
        _exit(3); /* not reached: the handler re-raises with the default action */
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    struct stat st;
    assert_int_not_equal(stat(path_of("sig.json"), &st), 0);
    assert_no_temps();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_and_existing_files),
        cmocka_unit_test(refused),
        cmocka_unit_test(links_written_through),
        cmocka_unit_test(fifo_and_devices),
        cmocka_unit_test(all_or_none),
        cmocka_unit_test(streams_finished_together),
        cmocka_unit_test(inputs_and_duplicates),
        cmocka_unit_test(pending_limit),
        cmocka_unit_test(signal_removes_temporary),
    };
    return cmocka_run_group_tests_name("outfile", tests, tmpdir_setup, tmpdir_teardown);
}
