/* devcfg.h - the device description: a CXL memory path in physical units, as written in YAML.
 *
 * devcfg_load() reads a device file (or a built-in preset by name), applies `extends`, binds every key
 * and checks it; devcfg_to_params() converts to the model's cycles (hw/hls/cxl_params.h). The YAML
 * schema is documented in docs/config.md; each field's one-line help is in devcfg.c's tables.
 */
#ifndef CXLSIM_DEVCFG_H
#define CXLSIM_DEVCFG_H

#include <stdint.h>
#include <stdio.h>

#include "../hw/hls/cxl_params.h"
#include "util/err.h"
#include "config/override.h"

enum devcfg_path { DEVCFG_PATH_CXL = 0, DEVCFG_PATH_LOCAL = 1 };

typedef struct devcfg {
    char name[64];
    char description[256];
    char source[512];            /* where it was loaded from: a path or "<preset NAME>" */
    int path;                    /* enum devcfg_path */
    struct {
        uint64_t requesters, tags;
        uint64_t core_latency_ps;    /* requester to the uncore agent (root port or memory controller), one way */
        uint64_t port_latency_ps;    /* CXL root port incl. protocol conversion, one way */
    } host;
    struct {
        uint64_t rate_mts, width, flit_bytes;
        uint64_t phy_latency_ps, credit_return_ps;
        uint64_t req_credits, data_credits, drs_credits, ndr_credits;
    } link;
    struct {
        int present;
        uint64_t hop_latency_ps, port_queue, hosts, devices, interleave_bytes;
        int arbitration, pooling;     /* pooling: 0 shared, 1 partitioned (one LD per host) */
    } sw;
    struct {
        uint64_t request_latency_ps, response_latency_ps, ingress_depth, response_depth;
        double devload_optimal, devload_moderate, devload_severe; /* fractions of ingress capacity */
    } ctrl;
    struct {
        int standard;                /* enum cxl_dram_std */
        uint64_t speed_mts;          /* data rate: DDR5-4800 -> 4800 */
        uint64_t channels, ranks, bankgroups, banks_per_group, rows, row_bytes;
        char mapping[128];
        int scheduler, row_policy, refresh, bank_hash;
        uint64_t read_queue, write_queue, drain_high, drain_low;
        uint64_t die_gbit;           /* DDR5 die density, selects tRFC1 */
        /* timing in clock cycles; 0 = preset value */
        uint64_t t[24];
    } dram;
} devcfg;

/* Load a device description from a file path or a preset name ("asic", "fpga", ...). */
int devcfg_load(const char *path_or_preset, devcfg *out, cxl_err *err);
/* The same with `--set` overrides (override.h; NULL for none) applied to the device's document. */
int devcfg_load_with(const char *path_or_preset, const override_list *ov, devcfg *out, cxl_err *err);
/* The same from YAML text (display_name for error locations; `extends` of a file resolves from the
 * current folder). */
int devcfg_load_text(const char *display_name, const char *text, const override_list *ov, devcfg *out,
                     cxl_err *err);
/* Built-in preset names, NULL-terminated. */
const char *const *devcfg_preset_names(void);
/* The YAML text of a preset, or NULL. */
const char *devcfg_preset_text(const char *name);
/* Convert to model parameters; fails (CXL_ELIMIT) when the model's fixed bounds are exceeded. */
int devcfg_to_params(const devcfg *c, cxl_params *p, cxl_err *err);
/* Print the device as YAML with every value in effect (cfgdump.h): `presets show --resolved`. */
void devcfg_dump(FILE *out, const devcfg *c);
/* Cycles <-> nanoseconds at the model clock. */
double devcfg_cycles_to_ns(const cxl_params *p, uint64_t cycles);

#endif
