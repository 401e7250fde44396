/* read_1mib.c - an external program on the installed libcxlsim: open the C model of the 'asic' device,
 * time a 1 MiB sequential read, and time an 8 GPU all-reduce of 1 GiB on a DGX H100 node.
 *     cc read_1mib.c $(pkg-config --cflags --libs cxlsim) -o read_1mib */
#include <stdio.h>

#include <cxlsim/cxlsim.h>

static int fail(const cxlsim_error *e)
{
    char buf[2048];
    fprintf(stderr, "read_1mib: %s\n", cxlsim_error_format(e, buf, sizeof buf));
    return 1;
}

int main(void)
{
    if (cxlsim_api_version() / 10000 != CXLSIM_API_VERSION_MAJOR) {
        fprintf(stderr, "read_1mib: libcxlsim API %d, built for %d\n", cxlsim_api_version(), CXLSIM_API_VERSION);
        return 1;
    }
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_device *dev;
    cxlsim_backend *b;
    if (cxlsim_device_load("asic", NULL, 0, &dev, &e) || cxlsim_backend_open(dev, "csim", &b, &e))
        return fail(&e);
    cxlsim_device_info info;
    cxlsim_device_info_init(&info);
    cxlsim_device_info_get(dev, &info, &e);
    cxlsim_desc d;
    cxlsim_desc_init(&d); /* every struct: its size first (the caller's sizeof), the rest 0, the defaults */
    d.id = 1;
    d.bytes = 1 << 20;
    d.read_weight = 1;
    d.pattern = CXLSIM_SEQ;
    if (cxlsim_backend_submit(b, &d, 1, &e))
        return fail(&e);
    cxlsim_completion c;
    cxlsim_completion_init(&c);
    size_t got = 0;
    while (!got) {
        if (cxlsim_backend_advance(b, cxlsim_backend_now(b) + 100000, 1, &e))
            return fail(&e);
        got = cxlsim_backend_poll(b, &c, 1);
    }
    cxlsim_stats s;
    cxlsim_stats_init(&s);
    if (cxlsim_backend_stats(b, &s, &e))
        return fail(&e);
    double ns = (double)(c.end_cycle - c.start_cycle) * 1e6 / info.clk_khz;
    printf("1 MiB read on %s: %.0f ns, %.2f GB/s, mean read latency %.1f ns\n", info.name, ns, 1048576 / ns,
           s.read_latency_ns[0]);
    cxlsim_backend_close(b);
    cxlsim_device_free(dev);

    cxlsim_cluster *cl;
    if (cxlsim_cluster_load("dgx-h100", "h100-sxm", &cl, &e))
        return fail(&e);
    cxlsim_collective q = { .size = sizeof q, .op = CXLSIM_ALLREDUCE, .bytes = 1ull << 30, .ranks = 8,
                            .algo = CXLSIM_ALGO_RING, .proto = CXLSIM_PROTO_SIMPLE };
    cxlsim_collective_result r;
    cxlsim_collective_result_init(&r);
    if (cxlsim_collective_time(cl, &q, &r, &e))
        return fail(&e);
    printf("all-reduce 1 GiB on 8 GPUs: %.3f ms, bus bandwidth %.1f GB/s\n", (double)r.time_ps * 1e-9, r.busbw_gbps);
    cxlsim_cluster_free(cl);
    return 0;
}
