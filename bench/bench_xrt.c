/* bench_xrt.c - the xrt backend's host-side cost per batch and per descriptor (issue 6, section 5), measured
 * through XRT's no-op shim: the card's own time is zero there, so what is left is the host's part of each
 * kernel run (writing descriptors into the mapped buffer, syncing it, setting the 12 arguments, starting,
 * waiting, syncing the result record back, taking completions). Design target: at most 100 ns of host time
 * per descriptor, so that a card running the model at 250 MHz is not held back by the host.
 *
 * usage: eval "$(scripts/xrt-env.sh --noop)"; build/bench_xrt [--batches N]
 * Each batch is `size` descriptors submitted, one advance that asks for no model cycle (the shim runs
 * none), and the wait for it; sizes 0 (the bare run), 16 and 256 (CXL_MAX_REQ x CXL_DESCQ, the most one
 * advance takes). On a card the DMA of each buffer over PCIe comes on top (the shim's buffers are host
 * memory), and so does the kernel's run time. Exit 0, or 1 with a message (no shim, no backend). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cxl/backend.h"
#include "config/devcfg.h"
#include "xclbin_write.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* batches of `size` descriptors; returns wall seconds, or a negative value on an error (printed) */
static double run(cxl_backend *b, const cxl_params *p, unsigned size, unsigned batches)
{
    static cxl_desc d[CXL_MAX_REQ * CXL_DESCQ];
    for (unsigned i = 0; i < size; i++) {
        memset(&d[i], 0, sizeof d[i]);
        d[i].id = i;
        d[i].requester = (uint16_t)(i % p->requesters);
        d[i].base = (uint64_t)i << 12;
        d[i].bytes = 4096;
        d[i].pattern = CXL_PAT_SEQ;
        d[i].rd_weight = 1;
        d[i].max_outstanding = 1;
    }
    cxl_err e;
    cxl_err_clear(&e);
    cxl_completion c[64];
    double t0 = now_s();
    for (unsigned k = 0; k < batches; k++) {
        /* the shim leaves every requester's free-slot count at 0, so the batch goes straight to the
         * backend's submit (what cxl_backend_submit does after its checks) */
        int rc = size ? b->ops->submit(b, d, size, &e) : 0;
        if (!rc)
            rc = cxl_backend_advance(b, 0, 0, &e);
        if (rc) {
            fprintf(stderr, "bench_xrt: %s\n", e.msg);
            return -1;
        }
        (void)cxl_backend_now(b); /* waits for the run and takes its result record */
        while (cxl_backend_poll(b, c, 64)) {
        }
    }
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    unsigned batches = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--batches") && i + 1 < argc)
            batches = (unsigned)strtoul(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: bench_xrt [--batches N]  (after: eval \"$(scripts/xrt-env.sh --noop)\")\n");
            return 1;
        }
    }
    if (!batches)
        batches = 1;
    const char *mode = getenv("XCL_EMULATION_MODE");
    if (!mode || strcmp(mode, "noop")) {
        fprintf(stderr, "bench_xrt: measures through XRT's no-op shim: run eval \"$(scripts/xrt-env.sh --noop)\" "
                        "first\n");
        return 1;
    }
    char path[] = "/tmp/cxlsim-bench-xrt-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("bench_xrt: temporary xclbin");
        return 1;
    }
    close(fd);
    char msg[256];
    if (cxl_xclbin_write(path, NULL, msg, sizeof msg)) {
        fprintf(stderr, "bench_xrt: %s\n", msg);
        return 1;
    }
    devcfg dev;
    cxl_params p;
    cxl_err e;
    cxl_err_clear(&e);
    cxl_backend *b = NULL;
    cxl_backend_opts o = { .xclbin = path };
    if (devcfg_load("asic", &dev, &e) || devcfg_to_params(&dev, &p, &e) ||
        cxl_backend_open_opts("xrt", &p, &o, &b, &e)) {
        fprintf(stderr, "bench_xrt: %s\n", e.msg);
        unlink(path);
        return 1;
    }
    printf("xrt backend, host side through XRT's no-op shim (%u batches each; asic preset)\n", batches);
    printf("%10s %14s %16s\n", "batch", "us per batch", "ns per desc");
    static const unsigned sizes[] = { 0, 16, CXL_MAX_REQ * CXL_DESCQ };
    int rc = 0;
    run(b, &p, 16, batches / 10 + 1); /* warm-up */
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double w = run(b, &p, sizes[i], batches);
        if (w < 0) {
            rc = 1;
            break;
        }
        double per_batch = w / batches;
        if (sizes[i])
            printf("%10u %14.2f %16.1f\n", sizes[i], per_batch * 1e6, per_batch * 1e9 / sizes[i]);
        else
            printf("%10u %14.2f %16s\n", sizes[i], per_batch * 1e6, "-");
    }
    cxl_backend_close(b);
    unlink(path);
    return rc;
}
