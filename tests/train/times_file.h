/* times_file.h - a measured-times file (optimes.h) of a test's kernels: g's ops at times[] (ps), written at
 * path (a mkstemp template) and loaded. For the train tests; include after cmocka.h, opgraph.h, optimes.h. */
#ifndef CXLSIM_TEST_TIMES_FILE_H
#define CXLSIM_TEST_TIMES_FILE_H

static optimes *times_file_of(const opgraph *g, const int64_t *times, char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(optimes_write_list(f, g->ops, g->nops, "test", "test", times), 0);
    fclose(f);
    optimes *ot;
    cxl_err e;
    assert_int_equal(optimes_load(path, &ot, 1, &e), 0);
    return ot;
}

#endif
