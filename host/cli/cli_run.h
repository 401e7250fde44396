/* cli_run.h - what the commands share between parsing and reporting: the xrt options, output
 * pre-flight (README "Output files"), where the summary goes, the provenance members of every JSON
 * output (README "Provenance"), the resolved configuration text they hash, the progress line, and the
 * commit of a command's outputs, all or none (outfile.h). */
#ifndef CXLSIM_CLI_RUN_H
#define CXLSIM_CLI_RUN_H

#include <stdio.h>

#include "cxl/backend.h"
#include "cli/cli.h"
#include "out/ctrace.h"
#include "config/devcfg.h"
#include "config/expcfg.h"
#include "out/json.h"
#include "out/outfile.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* The xrt backend's options, in the tables of the commands that open a backend. */
enum { CLI_ID_XCLBIN = 900, CLI_ID_CARD, CLI_ID_XRT_TIMEOUT };
#define CLI_OPTS_XRT                                                                                       \
    { CLI_ID_XCLBIN, "xclbin", 0, "FILE", "xrt: the FPGA binary (docs/xrt.md)" },                            \
    { CLI_ID_CARD, "card", 0, "N|BDF", "xrt: the card, an index or a PCIe address (default 0)" },            \
    { CLI_ID_XRT_TIMEOUT, "xrt-timeout", 0, "MS", "xrt: the limit of one kernel run (default 10000)" }
/* Takes an xrt option's value into bo. 0, or the usage exit status (the value printed). */
int cli_xrt_option(const char *cmd, int id, const char *val, cxl_backend_opts *bo);

/* The one operand of a command (EXPERIMENT, DEVICE, SPEC): stored in *slot the first time, a usage
 * error after. */
int cli_one_operand(const char *cmd, const char *what, const char *val, const char **slot, int *have);
/* A whole number from lo to hi (no sign), or -1. */
long long cli_whole(const char *s, long long lo, long long hi);
/* Whether name is a backend of cxl_backend_names() (built in or not). */
int cli_backend_known(const char *name);

double cli_now_s(void);

/* The progress line of a long run: on standard error when it is a terminal, redrawn in place at most
 * five times a second after the first second, with an ETA from the rate so far. */
typedef struct cli_progress {
    double t0, last;
    int shown;
    const char *fmt; /* of the percentage */
} cli_progress;
void cli_progress_cb(void *ctx, double frac);
void cli_progress_clear(const cli_progress *p);

/* Pre-flight for a command's outputs (n paths, NULL when not asked for): each can be written, none is
 * an input (nin paths) or another output. */
int cli_check_outputs(const char *const *out, size_t n, const char *const *in, size_t nin, cxl_err *e);
/* After loading: no output is a configuration file read on the command's behalf (a parent reached
 * through `extends`, a component or device file). */
int cli_check_experiment_outputs(const char *const *out, size_t n, const expcfg *x, cxl_err *e);
int cli_check_device_outputs(const char *const *out, size_t n, const char *device, cxl_err *e);
/* The same for a file of a kind without presets (an op-times file) and its `extends` chain. */
int cli_check_file_outputs(const char *const *out, size_t n, const char *path, cxl_err *e);
/* Where the human summary goes: standard error when an output is standard output. */
FILE *cli_summary_stream(const char *const *out, size_t n);

/* The resolved configuration text of an experiment, or of devices (b may be NULL; joined as YAML
 * documents), as --dump-config and `presets show --resolved` print it. NULL when out of memory; the
 * caller frees. */
char *cli_resolved_experiment(const expcfg *x, size_t *len);
char *cli_resolved_devices(const devcfg *a, const devcfg *b, size_t *len);
/* The members every JSON output starts with; cfg is the resolved configuration, hashed. */
void cli_json_provenance(json_w *w, const cli_ctx *cl, const char *cfg, size_t cfg_len);
/* The same members as the Chrome trace's "otherData" (ctrace.h). */
int cli_trace_provenance(ctrace *ct, const cli_ctx *cl, const char *cfg, size_t cfg_len, cxl_err *e);

/* The end of a command with a JSON output (outs[0]) and one other (outs[1]): both written, all or
 * none, when rc is 0; the JSON writer and cfg freed either way. of: the outputs opened before the run
 * (NULL, or entries NULL, for none: those of outs are opened here); other, when not NULL, is the other
 * output's data. */
int cli_write_outputs(int rc, const char *const outs[2], outfile *of[2], json_w *w, char *cfg, const char *other,
                      size_t other_len, cxl_err *e);

/* Load an experiment with the command line's overrides into a new expcfg (the caller frees). */
int cli_load_experiment(const char *exp, const override_list *ov, expcfg **out, cxl_err *e);

#endif
