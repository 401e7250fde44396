/* lib_verilator.c - the verilator backend through libcxlsim alone: a C program linked against the library
 * and nothing else (a C linker, no host modules, no C++ runtime: the build links it so, and
 * tests/install_check.sh builds it with `pkg-config --libs cxlsim` only).
 *
 *   lib_verilator present [PRESET...]  the library loads the verilator module, and the same random
 *       descriptors, advances and polls on csim and verilator give the same completions in the same order,
 *       the same cycle, idleness and free descriptor slots after every call, and byte-identical
 *       statistics (the rule of tests/cxl/test_verilator.c); presets default to asic, cz120 and
 *       local-ddr5, the ones the smallest kernel build (card-1x1) runs
 *   lib_verilator absent   opening "verilator" is CXLSIM_EBACKEND, "not built into this library", and the
 *       message names the module file it looked for (a build without Verilator, or CXLSIM_BACKEND_DIR
 *       pointing elsewhere)
 *
 * Prints one line per preset; exit 0 when every check holds, 1 at the first that does not, 2 on usage.
 * Cost: about 100,000 model cycles per preset, about a second each on the verilated RTL. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxlsim/cxlsim.h"

#define STEPS 120
#define MAXQ 512 /* descriptors one step may submit */

typedef struct pair {
    cxlsim_backend *c, *v; /* csim, verilator */
    cxlsim_device_info info;
    const char *preset;
    int step;
} pair;

static int fail(const pair *x, const char *what)
{
    fprintf(stderr, "lib_verilator: %s step %d: %s\n", x->preset, x->step, what);
    return 1;
}

/* xorshift64* (Vigna, "An experimental exploration of Marsaglia's xorshift generators", 2016) */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* A valid random descriptor of requester r (the rules of cxlsim_desc) */
static cxlsim_desc random_desc(uint64_t *s, uint64_t id, uint32_t r, uint32_t tags, uint64_t now)
{
    cxlsim_desc d;
    cxlsim_desc_init(&d);
    d.id = id;
    d.requester = r;
    d.base = (rnd(s) % (1u << 20)) * 64;
    d.bytes = 64 * (1 + rnd(s) % 48);
    d.footprint = rnd(s) % 2 ? 64 * (1 + rnd(s) % 1024) : 0;
    d.pattern = (uint32_t)(rnd(s) % 3);
    if (d.pattern == CXLSIM_STRIDE) {
        d.stride = (uint32_t)(64 * (1 + rnd(s) % 8));
        if (d.stride >= (d.footprint ? d.footprint : d.bytes))
            d.footprint = 4ull * d.stride;
    }
    d.seed = (uint32_t)rnd(s);
    d.gap_cycles = rnd(s) % 4 ? 0 : (uint32_t)(rnd(s) % 40);
    d.not_before = rnd(s) % 5 ? 0 : now + rnd(s) % 800;
    d.max_outstanding = rnd(s) % 3 ? (uint32_t)(1 + rnd(s) % tags) : 0;
    d.read_weight = (uint32_t)(rnd(s) % 4);
    d.write_weight = (uint32_t)(rnd(s) % 3);
    if (!d.read_weight && !d.write_weight)
        d.read_weight = 1;
    return d;
}

/* what the host sees without a poll */
static int same_view(const pair *x)
{
    char m[160];
    uint64_t a = cxlsim_backend_now(x->c), b = cxlsim_backend_now(x->v);
    if (a != b) {
        snprintf(m, sizeof m, "now csim %llu verilator %llu", (unsigned long long)a, (unsigned long long)b);
        return fail(x, m);
    }
    if (cxlsim_backend_idle(x->c) != cxlsim_backend_idle(x->v))
        return fail(x, "idle differs");
    for (uint32_t r = 0; r < x->info.requesters; r++)
        if (cxlsim_backend_space(x->c, r) != cxlsim_backend_space(x->v, r)) {
            snprintf(m, sizeof m, "requester %u space csim %u verilator %u", r, cxlsim_backend_space(x->c, r),
                     cxlsim_backend_space(x->v, r));
            return fail(x, m);
        }
    return 0;
}

static int same_stats(const pair *x)
{
    cxlsim_stats a, b;
    cxlsim_stats_init(&a);
    cxlsim_stats_init(&b);
    cxlsim_error e;
    cxlsim_error_init(&e);
    if (cxlsim_backend_stats(x->c, &a, &e) || cxlsim_backend_stats(x->v, &b, &e))
        return fail(x, e.message);
    if (memcmp(&a, &b, sizeof a)) {
        char m[200];
        snprintf(m, sizeof m, "statistics differ: csim %llu reads %llu writes %.6f GB/s, verilator %llu reads %llu "
                 "writes %.6f GB/s", (unsigned long long)a.reads, (unsigned long long)a.writes, a.read_gbps,
                 (unsigned long long)b.reads, (unsigned long long)b.writes, b.read_gbps);
        return fail(x, m);
    }
    return 0;
}

/* poll up to max from both: the same completions, entry by entry; their number into *n */
static int poll_both(const pair *x, size_t max, size_t *n)
{
    cxlsim_completion a[64], b[64];
    for (size_t i = 0; i < 64; i++) {
        cxlsim_completion_init(&a[i]);
        cxlsim_completion_init(&b[i]);
    }
    max = max > 64 ? 64 : max;
    size_t na = cxlsim_backend_poll(x->c, a, max), nb = cxlsim_backend_poll(x->v, b, max);
    if (na != nb)
        return fail(x, "a poll returned a different number of completions");
    for (size_t i = 0; i < na; i++)
        if (memcmp(&a[i], &b[i], sizeof a[i])) {
            char m[240];
            snprintf(m, sizeof m, "completion %zu: csim id %llu [%llu, %llu], verilator id %llu [%llu, %llu]", i,
                     (unsigned long long)a[i].id, (unsigned long long)a[i].start_cycle,
                     (unsigned long long)a[i].end_cycle, (unsigned long long)b[i].id,
                     (unsigned long long)b[i].start_cycle, (unsigned long long)b[i].end_cycle);
            return fail(x, m);
        }
    *n = na;
    return 0;
}

static int advance_both(const pair *x, uint64_t until, int stop)
{
    cxlsim_error e;
    cxlsim_error_init(&e);
    if (cxlsim_backend_advance(x->c, until, stop, &e) || cxlsim_backend_advance(x->v, until, stop, &e))
        return fail(x, e.message);
    return same_view(x);
}

/* The random scenario on one preset: submits that fill some queues and leave others dry, advances with and
 * without stop, polls smaller and larger than what is ready; then a drain to idle. */
static int scenario(pair *x, uint64_t seed, size_t *ndesc, size_t *ncomp)
{
    cxlsim_desc q[MAXQ];
    uint64_t s = seed;
    cxlsim_error e;
    cxlsim_error_init(&e);
    int rc = same_view(x);
    for (x->step = 0; !rc && x->step < STEPS; x->step++) {
        size_t n = 0;
        uint32_t room[64] = { 0 };
        for (uint32_t r = 0; r < x->info.requesters && r < 64; r++)
            room[r] = cxlsim_backend_space(x->c, r);
        for (uint64_t k = rnd(&s) % (2 * x->info.requesters + 1); k > 0 && n < MAXQ; k--) {
            uint32_t r = (uint32_t)(rnd(&s) % x->info.requesters);
            if (r < 64 && room[r]) {
                room[r]--;
                q[n] = random_desc(&s, *ndesc + n + 1, r, x->info.tags, cxlsim_backend_now(x->c));
                n++;
            }
        }
        if (n && (cxlsim_backend_submit(x->c, q, n, &e) || cxlsim_backend_submit(x->v, q, n, &e)))
            return fail(x, e.message);
        *ndesc += n;
        rc = same_view(x);
        if (!rc)
            rc = advance_both(x, cxlsim_backend_now(x->c) + 1 + rnd(&s) % 1500, (int)(rnd(&s) % 2));
        size_t got = 0;
        if (!rc)
            rc = poll_both(x, 1 + rnd(&s) % 64, &got);
        *ncomp += got;
        if (!rc && x->step % 16 == 15)
            rc = same_stats(x);
    }
    for (int guard = 0; !rc && guard < 10000; guard++, x->step++) {
        size_t got = 0;
        rc = poll_both(x, 64, &got);
        *ncomp += got;
        if (rc || (!got && cxlsim_backend_idle(x->c)))
            break;
        rc = advance_both(x, cxlsim_backend_now(x->c) + 2000, 0);
    }
    if (!rc && !cxlsim_backend_idle(x->c))
        return fail(x, "not idle after the drain");
    return rc ? rc : same_stats(x);
}

static int present(const char *preset)
{
    pair x = { .preset = preset };
    cxlsim_device_info_init(&x.info);
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d = NULL;
    int rc = cxlsim_device_load(preset, NULL, 0, &d, &e) || cxlsim_device_info_get(d, &x.info, &e) ||
             cxlsim_backend_open(d, "csim", &x.c, &e) || cxlsim_backend_open(d, "verilator", &x.v, &e);
    size_t ndesc = 0, ncomp = 0;
    if (rc)
        rc = fail(&x, e.message);
    else
        rc = scenario(&x, 0x9e3779b97f4a7c15ull ^ x.info.clk_khz, &ndesc, &ncomp);
    if (!rc && ncomp != ndesc)
        rc = fail(&x, "completions do not match the descriptors submitted");
    if (!rc)
        printf("%s: %zu descriptors, %zu completions, %llu cycles: verilator == csim (completions, statistics)\n",
               preset, ndesc, ncomp, (unsigned long long)cxlsim_backend_now(x.c));
    cxlsim_backend_close(x.c);
    cxlsim_backend_close(x.v);
    cxlsim_device_free(d);
    return rc;
}

static int absent(void)
{
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *d = NULL;
    cxlsim_backend *b = NULL;
    if (cxlsim_device_load("asic", NULL, 0, &d, &e)) {
        fprintf(stderr, "lib_verilator: %s\n", e.message);
        return 1;
    }
    int rc = cxlsim_backend_open(d, "verilator", &b, &e);
    cxlsim_backend_close(b);
    cxlsim_device_free(d);
    if (cxlsim_backend_available("verilator") || rc != CXLSIM_EBACKEND ||
        !strstr(e.message, "not built into this library") || !strstr(e.message, "backend_verilator.so")) {
        fprintf(stderr, "lib_verilator: expected 'not built into this library' naming backend_verilator.so, "
                "got %d: %s\n", rc, e.message);
        return 1;
    }
    printf("verilator absent: %s\n", e.message);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "absent") && argc == 2)
        return absent();
    if (argc < 2 || strcmp(argv[1], "present")) {
        fprintf(stderr, "usage: lib_verilator present [PRESET...] | lib_verilator absent\n");
        return 2;
    }
    if (!cxlsim_backend_available("verilator")) {
        fprintf(stderr, "lib_verilator: the library does not load the verilator backend\n");
        return 1;
    }
    static const char *const presets[] = { "asic", "cz120", "local-ddr5" };
    int rc = 0;
    if (argc > 2)
        for (int i = 2; i < argc && !rc; i++)
            rc = present(argv[i]);
    else
        for (size_t i = 0; i < sizeof presets / sizeof presets[0] && !rc; i++)
            rc = present(presets[i]);
    return rc;
}
