/* fuzz_input.c - libFuzzer targets for every kind of input cxlsim reads, one per build, chosen with
 * -DFUZZ_TARGET=N (run.sh builds them all):
 *   1 experiment   an experiment file (model, GPU, cluster, training, cxl: sections; presets resolved)
 *   2 model        a model description
 *   3 cluster      a cluster description
 *   4 optimes      a file of measured operation times
 *   5 trace        a descriptor trace (CSV) for the asic preset
 *   6 override     lines of `--set` KEY=VALUE applied to the default experiment (override.h)
 * Arbitrary bytes must load or fail with an error record, never crash, leak, hang or trip a sanitizer.
 * YAML inputs go through a file, so that relative `extends` resolve as a user's file does; the device
 * loader's target is fuzz_devcfg.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/clustercfg.h"
#include "config/devcfg.h"
#include "config/expcfg.h"
#include "config/modelcfg.h"
#include "train/optimes.h"
#include "config/override.h"
#include "cxl/trace.h"

#ifndef FUZZ_TARGET
#error "build with -DFUZZ_TARGET=1..6 (tests/fuzz/run.sh)"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load_file(const char *path)
{
    cxl_err e;
    cxl_err_clear(&e);
#if FUZZ_TARGET == 1
    static expcfg x; /* large: not on the stack */
    (void)expcfg_load(path, &x, &e);
#elif FUZZ_TARGET == 2
    modelcfg m;
    (void)modelcfg_load(path, &m, &e);
#elif FUZZ_TARGET == 3
    clustercfg c;
    (void)clustercfg_load(path, &c, &e);
#elif FUZZ_TARGET == 4
    optimes *t = NULL;
    if (optimes_load(path, &t, 1, &e) == 0)
        optimes_free(t);
#else
    (void)path;
#endif
}

#if FUZZ_TARGET == 6
/* Each line of data is one --set argument (at most 64 lines); the default experiment loads with them. */
static void load_overrides(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return;
    memcpy(text, data, size);
    text[size] = '\0';
    override_list ov = { 0 };
    cxl_err e;
    cxl_err_clear(&e);
    int n = 0;
    for (char *line = text, *end; line && n < 64; line = end ? end + 1 : NULL, n++) {
        end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (override_parse(&ov, line, &e))
            break;
    }
    static expcfg x;
    (void)expcfg_load_with(EXPCFG_DEFAULT, &ov, 0, &x, &e);
    override_free(&ov);
    free(text);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#if FUZZ_TARGET == 6
    load_overrides(data, size);
#elif FUZZ_TARGET == 5
    static cxl_params p;
    static int ready;
    if (!ready) {
        devcfg c;
        cxl_err e;
        if (devcfg_load("asic", &c, &e) || devcfg_to_params(&c, &p, &e))
            abort();
        ready = 1;
    }
    trace t;
    cxl_err e;
    cxl_err_clear(&e);
    if (trace_parse((const char *)data, size, "<fuzz>", &p, &t, &e) == 0)
        trace_free(&t);
#else
    char path[] = "/tmp/cxlsim-fuzz-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    FILE *f = fdopen(fd, "w");
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
        load_file(path);
    } else {
        close(fd);
    }
    unlink(path);
#endif
    return 0;
}
