/* nccl_delay.c - the NCCL delay plugin as an emulator calls it: the delay of an all-reduce of 256 Mi floats
 * over 16 ranks on 2 DGX H100 nodes, with NCCL's own choice of algorithm and protocol. */
#include <stdio.h>

#include <cxlsim/cxlsim_nccl.h>

int main(void)
{
    cxlsim_error e;
    cxlsim_error_init(&e);
    cxlsim_nccl *p;
    char msg[2048];
    if (cxlsim_nccl_open("dgx-h100", "h100-sxm", &p, &e)) {
        fprintf(stderr, "nccl_delay: %s\n", cxlsim_error_format(&e, msg, sizeof msg));
        return 1;
    }
    int64_t ps;
    cxlsim_collective_result r;
    cxlsim_collective_result_init(&r);
    /* ncclFuncAllReduce = 4, ncclFloat32 = 7, 16 ranks on 2 nodes, algorithm and protocol -1 (NCCL's pick) */
    if (cxlsim_nccl_delay(p, 4, 256u << 20, 7, 16, 2, -1, -1, 0, &ps, &r, &e)) {
        fprintf(stderr, "nccl_delay: %s\n", cxlsim_error_format(&e, msg, sizeof msg));
        cxlsim_nccl_close(p);
        return 1;
    }
    printf("all-reduce 1 GiB, 16 ranks on 2 nodes: %.3f ms (algorithm %u, protocol %u), API %d\n", (double)ps * 1e-9,
           r.algo, r.proto, cxlsim_api_version());
    cxlsim_nccl_close(p);
    return 0;
}
