/* cxlsim-nccl-replay: replay a CSV of recorded NCCL collectives through the delay plugin (cxlsim_nccl.h).
 *     cxlsim-nccl-replay CLUSTER GPU FILE.csv      (FILE "-": standard input)
 * writes each collective with its delay as CSV on standard output and the total on standard error.
 * Exit codes as cxlsim: 2 usage, 3 a bad line or configuration, 5 a file that cannot be read. */
#include <stdio.h>
#include <string.h>

#include "cxlsim/cxlsim_nccl.h"

int main(int argc, char **argv)
{
    if (argc != 4 || !strcmp(argv[1], "--help")) {
        fprintf(argc == 2 ? stdout : stderr, "usage: cxlsim-nccl-replay CLUSTER GPU FILE.csv\n"
                "Replays recorded NCCL collectives (coll,count,datatype,nranks,nnodes,algo,proto,nchannels) through "
                "cxlsim's collective model and prints each delay in picoseconds.\n");
        return argc == 2 ? 0 : 2;
    }
    cxlsim_error e;
    char msg[2048];
    cxlsim_nccl *p;
    if (cxlsim_nccl_open(argv[1], argv[2], &p, &e)) {
        fprintf(stderr, "cxlsim-nccl-replay: %s\n", cxlsim_error_format(&e, msg, sizeof msg));
        return 3;
    }
    FILE *in = strcmp(argv[3], "-") ? fopen(argv[3], "r") : stdin;
    if (!in) {
        fprintf(stderr, "cxlsim-nccl-replay: %s: cannot open\n", argv[3]);
        cxlsim_nccl_close(p);
        return 5;
    }
    int64_t total;
    int rc = cxlsim_nccl_replay(p, in, argv[3], stdout, &total, &e);
    if (in != stdin)
        fclose(in);
    cxlsim_nccl_close(p);
    if (rc) {
        fprintf(stderr, "cxlsim-nccl-replay: %s\n", cxlsim_error_format(&e, msg, sizeof msg));
        return rc == CXLSIM_EIO ? 5 : 3;
    }
    fprintf(stderr, "total delay: %lld ps (%.6f ms)\n", (long long)total, (double)total * 1e-9);
    return 0;
}
