/* devcfg.c - device descriptions: schema tables, built-in timing bins, checks, conversion to cycles. */
#define _POSIX_C_SOURCE 200809L
#include "config/devcfg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "config/cfgdump.h"
#include "config/compose.h"
#include "config/presets.h"

static const char *const path_names[] = { "cxl", "local", NULL };
static const char *const std_names[] = { "DDR4", "DDR5", NULL };
static const char *const sched_names[] = { "frfcfs", "fcfs", NULL };
static const char *const policy_names[] = { "open", "closed", NULL };
static const char *const arb_names[] = { "round-robin", "oldest-first", NULL };
static const char *const hash_names[] = { "none", "xor", NULL };
static const char *const refresh_names[] = { "off", "all-bank", "same-bank", NULL };
static const char *const pooling_names[] = { "shared", "partitioned", NULL };

/* Timing parameter names, in devcfg.dram.t[] order. */
enum { T_RCD, T_CL, T_RP, T_RAS, T_RC, T_CWL, T_WR, T_RTP, T_BL, T_CCD_S, T_CCD_L, T_CCD_S_WR, T_CCD_L_WR,
       T_RRD_S, T_RRD_L, T_FAW, T_WTR_S, T_WTR_L, T_RTW, T_REFI, T_RFC, T_RFCSB, T_N };
static const char *const tnames[T_N] = { "tRCD", "tCL", "tRP", "tRAS", "tRC", "tCWL", "tWR", "tRTP", "tBL",
                                         "tCCD_S", "tCCD_L", "tCCD_S_WR", "tCCD_L_WR", "tRRD_S", "tRRD_L",
                                         "tFAW", "tWTR_S", "tWTR_L", "tRTW", "tREFI", "tRFC", "tRFCsb" };

/* JEDEC speed bins we carry (cycles). Sources: docs/references.md "CXL.mem model" --
 * DDR5-4800: JEDEC 4800AN as used by Ramulator 2 (tREFI 3.9 us, tRFC1 by die density below);
 * DDR4-3200: DRAMsim3 preset DDR4_8Gb_x8_3200 (tCWL 16, tRTP 12 from the same file).
 * tRTW = tCL + tBL + 2 - tCWL (read-to-write bus turnaround, Ramulator 2's rule). */
typedef struct speed_bin {
    int standard;
    uint64_t mts;
    uint32_t t[T_N];
    uint32_t bankgroups, banks, rows, row_bytes, subchannels;
} speed_bin;

static const speed_bin bins[] = {
    { CXL_DDR5, 4800,
      { 34, 34, 34, 77, 111, 32, 72, 18, 8, 8, 12, 8, 48, 8, 12, 48, 6, 24, 34 + 8 + 2 - 32, 9360, 0, 0 },
      8, 4, 65536, 4096, 2 },
    { CXL_DDR4, 3200,
      { 22, 22, 22, 52, 74, 16, 24, 12, 4, 4, 8, 4, 8, 4, 8, 34, 4, 12, 22 + 4 + 2 - 16, 12480, 560, 0 },
      4, 4, 65536, 8192, 1 },
};

static const speed_bin *find_bin(int standard, uint64_t mts)
{
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++)
        if (bins[i].standard == standard && bins[i].mts == mts)
            return &bins[i];
    return NULL;
}

#define F(T, f) offsetof(devcfg, f)

static const cfg_field host_fields[] = {
    { "requesters", CFG_T_U64, offsetof(devcfg, host.requesters), 0, 1, CXL_MAX_REQ, NULL, NULL, 0, NULL,
      "requester ports issuing 64 B requests (1-16)" },
    { "tags", CFG_T_U64, offsetof(devcfg, host.tags), 0, 1, CXL_MAX_TAGS, NULL, NULL, 0, NULL,
      "outstanding requests per requester (1-256)" },
    { "core_latency", CFG_T_TIME, offsetof(devcfg, host.core_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "requester to the uncore agent (root port or memory controller), one way, e.g. 45ns" },
    { "port_latency", CFG_T_TIME, offsetof(devcfg, host.port_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "CXL root port including protocol conversion, one way, e.g. 62ns" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static const cfg_field credit_fields[] = {
    { "req", CFG_T_U64, offsetof(devcfg, link.req_credits), 0, 1, 255, NULL, NULL, 0, NULL, "M2S Req credits (ReqCrd)" },
    { "data", CFG_T_U64, offsetof(devcfg, link.data_credits), 0, 1, 255, NULL, NULL, 0, NULL, "M2S RwD credits (DataCrd)" },
    { "drs", CFG_T_U64, offsetof(devcfg, link.drs_credits), 0, 1, 255, NULL, NULL, 0, NULL, "S2M DRS credits (DataCrd)" },
    { "ndr", CFG_T_U64, offsetof(devcfg, link.ndr_credits), 0, 1, 255, NULL, NULL, 0, NULL, "S2M NDR credits (RspCrd)" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static const cfg_field link_fields[] = {
    { "rate", CFG_T_RATE, offsetof(devcfg, link.rate_mts), 0, 2500, 64000, NULL, NULL, 0, NULL,
      "lane rate, e.g. 32GT/s (Gen5)" },
    { "width", CFG_T_U64, offsetof(devcfg, link.width), 0, 1, 16, NULL, NULL, 0, NULL, "lanes: 1, 2, 4, 8 or 16" },
    { "flit", CFG_T_SIZE, offsetof(devcfg, link.flit_bytes), 0, 68, 256, NULL, NULL, 0, NULL,
      "flit mode: 68B (256B flits are not modelled yet)" },
    { "phy_latency", CFG_T_TIME, offsetof(devcfg, link.phy_latency_ps), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "PHY + retimer latency, one direction, e.g. 0ns" },
    { "credit_return", CFG_T_TIME, offsetof(devcfg, link.credit_return_ps), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "buffer freed to credit visible at the sender, e.g. 10ns" },
    { "credits", CFG_T_MAP, 0, 0, 1, 0, NULL, credit_fields, 0, NULL, "credit pools: req, data, drs, ndr" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static const cfg_field switch_fields[] = {
    { "hop_latency", CFG_T_TIME, offsetof(devcfg, sw.hop_latency_ps), 0, 0, 1e7, NULL, NULL, 0, NULL,
      "one traversal of the switch, e.g. 90ns" },
    { "port_queue", CFG_T_U64, offsetof(devcfg, sw.port_queue), 0, 1, CXL_MAX_FIFO / 2, NULL, NULL, 0, NULL,
      "credits per class at each switch ingress port, and egress queue entries (1-128)" },
    { "arbitration", CFG_T_ENUM, offsetof(devcfg, sw.arbitration), 0, 1, 0, arb_names, NULL, 0, NULL,
      "round-robin or oldest-first" },
    { "hosts", CFG_T_U64, offsetof(devcfg, sw.hosts), 0, 1, CXL_MAX_HOSTS, NULL, NULL, 0, NULL,
      "host ports (upstream), each with its own link; requester r belongs to host r mod hosts (1-4)" },
    { "devices", CFG_T_U64, offsetof(devcfg, sw.devices), 0, 1, CXL_MAX_DEVS, NULL, NULL, 0, NULL,
      "identical devices behind the switch, each with its own link: 1, 2 or 4" },
    { "interleave", CFG_T_SIZE, offsetof(devcfg, sw.interleave_bytes), 0, 64, 1ull << 40, NULL, NULL, 0, NULL,
      "address interleave granularity across devices (power of two, e.g. 4KiB)" },
    { "pooling", CFG_T_ENUM, offsetof(devcfg, sw.pooling), 0, 1, 0, pooling_names, NULL, 0, NULL,
      "shared (all hosts address the same memory) or partitioned (one logical device, LD-ID, per host)" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static const cfg_field devload_fields[] = {
    { "optimal", CFG_T_DOUBLE, offsetof(devcfg, ctrl.devload_optimal), 0, 0, 1, NULL, NULL, 0, NULL,
      "ingress occupancy (fraction) from which DevLoad reports optimal" },
    { "moderate", CFG_T_DOUBLE, offsetof(devcfg, ctrl.devload_moderate), 0, 0, 1, NULL, NULL, 0, NULL,
      "... moderate overload" },
    { "severe", CFG_T_DOUBLE, offsetof(devcfg, ctrl.devload_severe), 0, 0, 1, NULL, NULL, 0, NULL,
      "... severe overload" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static const cfg_field ctrl_fields[] = {
    { "request_latency", CFG_T_TIME, offsetof(devcfg, ctrl.request_latency_ps), 0, 0, 1e7, NULL, NULL, 0, NULL,
      "CXL.mem processing, ingress to DRAM queue, e.g. 15ns" },
    { "response_latency", CFG_T_TIME, offsetof(devcfg, ctrl.response_latency_ps), 0, 0, 1e7, NULL, NULL, 0, NULL,
      "CXL.mem processing, DRAM to S2M queue, e.g. 15ns" },
    { "ingress_depth", CFG_T_U64, offsetof(devcfg, ctrl.ingress_depth), 0, 1, CXL_MAX_INGRESS, NULL, NULL, 0, NULL,
      "entries per request class (Req, RwD)" },
    { "response_depth", CFG_T_U64, offsetof(devcfg, ctrl.response_depth), 0, 1, CXL_MAX_RSPQ, NULL, NULL, 0, NULL,
      "response queue entries" },
    { "devload", CFG_T_MAP, 0, 0, 1, 0, NULL, devload_fields, 0, NULL, "DevLoad thresholds" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static int bind_timing(const cfg_node *n, void *dst, cxl_err *err);

static const cfg_field dram_fields[] = {
    { "standard", CFG_T_ENUM, offsetof(devcfg, dram.standard), 0, 1, 0, std_names, NULL, 0, NULL, "DDR4 or DDR5" },
    { "speed", CFG_T_RATE, offsetof(devcfg, dram.speed_mts), 0, 1, 20000, NULL, NULL, 0, NULL,
      "data rate of the speed bin, e.g. 4800MT/s" },
    { "channels", CFG_T_U64, offsetof(devcfg, dram.channels), 0, 1, CXL_MAX_CH, NULL, NULL, 0, NULL,
      "DIMM channels (a DDR5 channel is two independent 32-bit subchannels)" },
    { "ranks", CFG_T_U64, offsetof(devcfg, dram.ranks), 0, 1, CXL_MAX_RANKS, NULL, NULL, 0, NULL, "ranks per channel" },
    { "bankgroups", CFG_T_U64, offsetof(devcfg, dram.bankgroups), 0, 1, 16, NULL, NULL, 0, NULL, "bank groups per rank" },
    { "banks_per_group", CFG_T_U64, offsetof(devcfg, dram.banks_per_group), 0, 1, 16, NULL, NULL, 0, NULL, "banks per bank group" },
    { "rows", CFG_T_U64, offsetof(devcfg, dram.rows), 0, 1, 1u << 20, NULL, NULL, 0, NULL, "rows per bank" },
    { "row_size", CFG_T_SIZE, offsetof(devcfg, dram.row_bytes), 0, 64, 65536, NULL, NULL, 0, NULL,
      "row buffer per (sub)channel, e.g. 4KiB" },
    { "die_density", CFG_T_U64, offsetof(devcfg, dram.die_gbit), 0, 8, 32, NULL, NULL, 0, NULL,
      "DDR5 die density in Gb (8, 16, 32): selects tRFC1" },
    { "address_mapping", CFG_T_STRING, offsetof(devcfg, dram.mapping), 0, 1, 0, NULL, NULL, 128, NULL,
      "fields from most to least significant, e.g. row-rank-bank-column-bankgroup-channel" },
    { "bank_hash", CFG_T_ENUM, offsetof(devcfg, dram.bank_hash), 0, 1, 0, hash_names, NULL, 0, NULL,
      "none, or xor: fold the row into the bank bits (permutation-based interleaving)" },
    { "scheduler", CFG_T_ENUM, offsetof(devcfg, dram.scheduler), 0, 1, 0, sched_names, NULL, 0, NULL, "frfcfs or fcfs" },
    { "row_policy", CFG_T_ENUM, offsetof(devcfg, dram.row_policy), 0, 1, 0, policy_names, NULL, 0, NULL, "open or closed" },
    { "refresh", CFG_T_ENUM, offsetof(devcfg, dram.refresh), 0, 1, 0, refresh_names, NULL, 0, NULL,
      "off, all-bank (REFab every tREFI) or same-bank (DDR5 REFsb)" },
    { "read_queue", CFG_T_U64, offsetof(devcfg, dram.read_queue), 0, 1, CXL_MAX_DRAMQ, NULL, NULL, 0, NULL,
      "read queue entries per channel" },
    { "write_queue", CFG_T_U64, offsetof(devcfg, dram.write_queue), 0, 1, CXL_MAX_DRAMQ, NULL, NULL, 0, NULL,
      "write queue entries per channel" },
    { "write_drain_high", CFG_T_U64, offsetof(devcfg, dram.drain_high), 0, 1, CXL_MAX_DRAMQ, NULL, NULL, 0, NULL,
      "write queue level that starts a write drain" },
    { "write_drain_low", CFG_T_U64, offsetof(devcfg, dram.drain_low), 0, 0, CXL_MAX_DRAMQ, NULL, NULL, 0, NULL,
      "write queue level that ends a write drain while reads wait" },
    { "timing", CFG_T_CUSTOM, offsetof(devcfg, dram.t), 0, 1, 0, NULL, NULL, 0, bind_timing,
      "overrides in clock cycles: tRCD, tCL, tRP, tRAS, ..." },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static int bind_switch(const cfg_node *n, void *dst, cxl_err *err);
static int to_params(const devcfg *c, cxl_params *p, cxl_err *err, const char **blame);

static const cfg_field top_fields[] = {
    { "name", CFG_T_STRING, offsetof(devcfg, name), 1, 1, 0, NULL, NULL, 64, NULL, "preset or device name" },
    { "description", CFG_T_STRING, offsetof(devcfg, description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "path", CFG_T_ENUM, offsetof(devcfg, path), 0, 1, 0, path_names, NULL, 0, NULL,
      "cxl (through a CXL link) or local (the local-DDR reference path)" },
    { "host", CFG_T_MAP, 0, 0, 1, 0, NULL, host_fields, 0, NULL, "host side" },
    { "link", CFG_T_MAP, 0, 0, 1, 0, NULL, link_fields, 0, NULL, "the CXL link" },
    { "switch", CFG_T_CUSTOM, 0, 0, 1, 0, NULL, NULL, 0, bind_switch, "optional CXL switch" },
    { "controller", CFG_T_MAP, 0, 0, 1, 0, NULL, ctrl_fields, 0, NULL, "device controller" },
    { "dram", CFG_T_MAP, 0, 0, 1, 0, NULL, dram_fields, 0, NULL, "the device's DRAM" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static int bind_switch(const cfg_node *n, void *dst, cxl_err *err)
{
    devcfg *c = dst;
    const char *s = cfg_scalar(n);
    if (s && (!strcmp(s, "none") || !strcmp(s, "false"))) {
        c->sw.present = 0;
        return 0;
    }
    if (cfg_kind(n) != CFG_MAP)
        return cfg_errf(err, n, "switch: expected a mapping (hop_latency, port_queue, arbitration) or 'none'");
    int rc = cfg_bind(n, NULL, "switch", switch_fields, c, NULL, err);
    if (rc)
        return rc;
    c->sw.present = 1;
    return 0;
}

static int bind_timing(const cfg_node *n, void *dst, cxl_err *err)
{
    uint64_t *t = dst;
    if (cfg_kind(n) != CFG_MAP)
        return cfg_errf(err, n, "dram.timing: expected a mapping of timing names to clock cycles");
    for (size_t i = 0; i < cfg_map_size(n); i++) {
        const char *k = cfg_map_key(n, i);
        size_t j;
        for (j = 0; j < T_N; j++)
            if (!strcmp(k, tnames[j]))
                break;
        if (j == T_N) {
            char valid[512] = "";
            for (size_t q = 0; q < T_N; q++) {
                strncat(valid, tnames[q], sizeof valid - strlen(valid) - 1);
                if (q + 1 < T_N)
                    strncat(valid, ", ", sizeof valid - strlen(valid) - 1);
            }
            return cfg_errf(err, cfg_map_key_node(n, i), "dram.timing: unknown timing '%s'; valid: %s", k, valid);
        }
        const cfg_node *v = cfg_map_value(n, i);
        const char *s = cfg_scalar(v);
        char why[256];
        uint64_t x;
        if (!s)
            return cfg_errf(err, v, "dram.timing.%s: expected a number of clock cycles", k);
        if (cfg_parse_u64(s, &x, why, sizeof why))
            return cfg_errf(err, v, "dram.timing.%s: '%s' %s (clock cycles, e.g. 34)", k, s, why);
        /* tREFI only sets refresh deadlines; every other timing is a down-counter of the hardware model
         * (CXL_MAX_TIMING, cxl_params.h) */
        uint64_t most = j == T_REFI ? 1000000 : CXL_MAX_TIMING;
        if (x == 0 || x > most)
            return cfg_errf(err, v, "dram.timing.%s: %llu out of range (1 to %llu cycles)", k,
                            (unsigned long long)x, (unsigned long long)most);
        t[j] = x;
    }
    return 0;
}

/* ---- presets ---- */

const char *const *devcfg_preset_names(void) { return presets_device_names(); }
const char *devcfg_preset_text(const char *name) { return presets_device_text(name); }

static int resolve(void *ctx, const char *name, const char **text, const char **display)
{
    (void)ctx;
    const char *t = presets_device_text(name);
    if (!t)
        return -1;
    *text = t;
    *display = presets_device_display(name);
    return 0;
}

static void defaults(devcfg *c)
{
    memset(c, 0, sizeof *c);
    /* A value absent from the file and its parents stays at these neutral defaults; every shipped
     * preset sets every value with its source. */
    c->path = DEVCFG_PATH_CXL;
    c->host.requesters = 16;
    c->host.tags = 64;
    c->link.rate_mts = 32000;
    c->link.width = 8;
    c->link.flit_bytes = 68;
    c->link.req_credits = c->link.data_credits = 48;
    c->link.drs_credits = c->link.ndr_credits = 64;
    c->ctrl.ingress_depth = c->ctrl.response_depth = 48;
    c->ctrl.devload_optimal = 0.25;
    c->ctrl.devload_moderate = 0.5;
    c->ctrl.devload_severe = 0.75;
    c->dram.standard = CXL_DDR5;
    c->dram.speed_mts = 4800;
    c->dram.channels = 1;
    c->dram.ranks = 1;
    c->dram.die_gbit = 16;
    snprintf(c->dram.mapping, sizeof c->dram.mapping, "row-rank-bank-column-bankgroup-channel");
    c->dram.refresh = CXL_REF_ALL_BANK;
    c->dram.bank_hash = 1;
    c->dram.read_queue = c->dram.write_queue = 32;
    c->dram.drain_high = 24;
    c->dram.drain_low = 8;
    c->sw.port_queue = 64;
    c->sw.hosts = 1;
    c->sw.devices = 1;
    c->sw.interleave_bytes = 4096;
}

static int is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

static int check(const devcfg *c, const cfg_node *root, cxl_err *err)
{
    const cfg_node *d = cfg_map_get(root, "dram");
    const cfg_node *at = d ? d : root;
    const speed_bin *b = find_bin(c->dram.standard, c->dram.speed_mts);
    if (!b) {
        /* Blame the key written in the user's own file (the root's): `standard: DDR4` over a DDR5 preset
         * is the user's change, not the preset's speed. */
        const cfg_node *sp = cfg_map_get(d, "speed"), *sd = cfg_map_get(d, "standard");
        const char *rf, *f;
        cfg_mark(root, &rf, NULL, NULL);
        /* (a `--set` override is the latest change: 2, over the user's file: 1, over a parent: 0) */
        int std_rank = sd ? (cfg_mark(sd, &f, NULL, NULL), override_is_mark(f) ? 2 : !strcmp(f, rf)) : 0;
        int speed_rank = sp ? (cfg_mark(sp, &f, NULL, NULL), override_is_mark(f) ? 2 : !strcmp(f, rf)) : 0;
        if (std_rank > speed_rank)
            return cfg_errf(err, sd, "dram.standard: %s has no built-in timing bin at %llu MT/s (dram.speed, "
                            "inherited); built in: DDR5 4800MT/s, DDR4 3200MT/s: set dram.speed too",
                            std_names[c->dram.standard], (unsigned long long)c->dram.speed_mts);
        return cfg_errf(err, sp ? sp : at,
                        "dram.speed: no built-in %s timing bin at %llu MT/s; built in: DDR5 4800MT/s, DDR4 3200MT/s",
                        std_names[c->dram.standard], (unsigned long long)c->dram.speed_mts);
    }
    if (!is_pow2(c->link.width) || c->link.width > 16)
        return cfg_errf(err, cfg_map_get(cfg_map_get(root, "link"), "width") ? cfg_map_get(cfg_map_get(root, "link"), "width") : root,
                        "link.width: %llu is not a CXL link width; valid: 1, 2, 4, 8, 16", (unsigned long long)c->link.width);
    if (c->link.flit_bytes != 68) {
        const cfg_node *f = cfg_map_get(cfg_map_get(root, "link"), "flit");
        return cfg_errf(err, f ? f : root, "link.flit: %llu B flits are not modelled yet; valid: 68B",
                        (unsigned long long)c->link.flit_bytes);
    }
    const char *pow2_names[] = { "bankgroups", "banks_per_group", "rows", "row_size", "ranks", "channels" };
    const uint64_t pow2_vals[] = { c->dram.bankgroups, c->dram.banks_per_group, c->dram.rows, c->dram.row_bytes,
                                   c->dram.ranks, c->dram.channels };
    for (size_t i = 0; i < 6; i++)
        if (pow2_vals[i] && !is_pow2(pow2_vals[i])) {
            const cfg_node *n = cfg_map_get(d, pow2_names[i]);
            return cfg_errf(err, n ? n : at, "dram.%s: %llu must be a power of two", pow2_names[i],
                            (unsigned long long)pow2_vals[i]);
        }
    if (c->dram.refresh == CXL_REF_SAME_BANK && c->dram.standard != CXL_DDR5) {
        const cfg_node *n = cfg_map_get(d, "refresh");
        return cfg_errf(err, n ? n : at, "dram.refresh: same-bank refresh is a DDR5 command; %s supports: off, all-bank",
                        std_names[c->dram.standard]);
    }
    if (c->dram.refresh == CXL_REF_SAME_BANK && c->dram.die_gbit > 16 && !c->dram.t[T_RFCSB]) {
        const cfg_node *n = cfg_map_get(d, "refresh");
        return cfg_errf(err, n ? n : at,
                        "dram.refresh: no public tRFCsb for %llu Gb dies; give dram.timing.tRFCsb (cycles) or use all-bank",
                        (unsigned long long)c->dram.die_gbit);
    }
    if (c->dram.drain_low >= c->dram.drain_high || c->dram.drain_high > c->dram.write_queue) {
        const cfg_node *n = cfg_map_get(d, "write_drain_high");
        return cfg_errf(err, n ? n : at, "dram: need write_drain_low (%llu) < write_drain_high (%llu) <= write_queue (%llu)",
                        (unsigned long long)c->dram.drain_low, (unsigned long long)c->dram.drain_high,
                        (unsigned long long)c->dram.write_queue);
    }
    if (!(c->ctrl.devload_optimal <= c->ctrl.devload_moderate && c->ctrl.devload_moderate <= c->ctrl.devload_severe)) {
        const cfg_node *n = cfg_map_get(cfg_map_get(root, "controller"), "devload");
        return cfg_errf(err, n ? n : root, "controller.devload: need optimal <= moderate <= severe");
    }
    if (c->sw.present) {
        const cfg_node *sn = cfg_map_get(root, "switch");
        if (c->path == DEVCFG_PATH_LOCAL)
            return cfg_errf(err, sn ? sn : root, "switch: the local-DDR path has no CXL link; remove the switch or use path: cxl");
        if (!is_pow2(c->sw.devices)) {
            const cfg_node *n = cfg_map_get(sn, "devices");
            return cfg_errf(err, n ? n : sn, "switch.devices: %llu; valid: 1, 2, 4 (interleaving needs a power of two)",
                            (unsigned long long)c->sw.devices);
        }
        if (!is_pow2(c->sw.interleave_bytes)) {
            const cfg_node *n = cfg_map_get(sn, "interleave");
            return cfg_errf(err, n ? n : sn, "switch.interleave: %llu B must be a power of two of at least 64B",
                            (unsigned long long)c->sw.interleave_bytes);
        }
        if (c->sw.hosts > c->host.requesters) {
            const cfg_node *n = cfg_map_get(sn, "hosts");
            return cfg_errf(err, n ? n : sn, "switch.hosts: %llu host ports but only %llu requesters (host.requesters)",
                            (unsigned long long)c->sw.hosts, (unsigned long long)c->host.requesters);
        }
    }
    return 0;
}

/* Parse "row-rank-bank-column-bankgroup-channel" (most significant first) into LSB-first field ids. */
static int parse_mapping(const char *s, uint8_t map[CXL_MAP_NFIELDS], char *why, size_t whysz)
{
    static const char *const names[CXL_MAP_NFIELDS] = { "channel", "rank", "bankgroup", "bank", "row", "column" };
    uint8_t msb[CXL_MAP_NFIELDS];
    int seen[CXL_MAP_NFIELDS] = { 0 };
    size_t n = 0;
    const char *p = s;
    while (*p) {
        const char *e = strchr(p, '-');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        size_t f;
        for (f = 0; f < CXL_MAP_NFIELDS; f++)
            if (strlen(names[f]) == len && !strncmp(p, names[f], len))
                break;
        if (f == CXL_MAP_NFIELDS || n >= CXL_MAP_NFIELDS) {
            snprintf(why, whysz, "unknown or extra field '%.*s'; fields: row, rank, bank, column, bankgroup, channel", (int)len, p);
            return -1;
        }
        if (seen[f]++) {
            snprintf(why, whysz, "field '%s' appears twice", names[f]);
            return -1;
        }
        msb[n++] = (uint8_t)f;
        p = e ? e + 1 : p + len;
    }
    if (n != CXL_MAP_NFIELDS) {
        snprintf(why, whysz, "must name all six fields: row, rank, bank, column, bankgroup, channel");
        return -1;
    }
    for (size_t i = 0; i < CXL_MAP_NFIELDS; i++)
        map[i] = msb[CXL_MAP_NFIELDS - 1 - i];
    return 0;
}

/* The node at a dotted key path ("dram.timing.tREFI") under root, or NULL. */
static const cfg_node *node_at(const cfg_node *root, const char *path)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", path);
    const cfg_node *n = root;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && n; k = strtok_r(NULL, ".", &save))
        n = cfg_map_get(n, k);
    return n;
}

/* Give err (filled by to_params) the location of the first key of `blame` (space-separated paths) that
 * the description sets, else of the section of the first key, else of the root. */
static void locate(cxl_err *err, const cfg_node *root, const char *blame)
{
    const cfg_node *at = NULL;
    char buf[160], sec[64] = "";
    snprintf(buf, sizeof buf, "%s", blame);
    for (char *save = NULL, *k = strtok_r(buf, " ", &save); k && !at; k = strtok_r(NULL, " ", &save)) {
        if (!sec[0])
            snprintf(sec, sizeof sec, "%.*s", (int)strcspn(k, "."), k);
        at = node_at(root, k);
    }
    if (!at)
        at = sec[0] && cfg_map_get(root, sec) ? cfg_map_get(root, sec) : root;
    if (err && err->line == 0) {
        const char *file;
        int line, col;
        cfg_mark(at, &file, &line, &col);
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        cxl_errf_at(err, err->code, file, line, col, "%s", msg);
    }
}

static int bind_doc(cfg_doc *doc, const override_list *ov, devcfg *out, cxl_err *err);

int devcfg_load(const char *path_or_preset, devcfg *out, cxl_err *err)
{
    return devcfg_load_with(path_or_preset, NULL, out, err);
}

int devcfg_load_with(const char *path_or_preset, const override_list *ov, devcfg *out, cxl_err *err)
{
    cfg_doc *doc = NULL;
    int rc;
    const char *text = presets_device_text(path_or_preset);
    if (text && !strchr(path_or_preset, '/') && !strstr(path_or_preset, ".yaml"))
        rc = cfg_load_text(presets_device_display(path_or_preset), text, resolve, NULL, &doc, err);
    else if (!strchr(path_or_preset, '/') && !strstr(path_or_preset, ".yaml") && access(path_or_preset, F_OK))
        return compose_unknown("devices", "device", path_or_preset, err);
    else
        rc = cfg_load_file(path_or_preset, resolve, NULL, &doc, err);
    if (rc)
        return rc;
    return bind_doc(doc, ov, out, err);
}

int devcfg_load_text(const char *display_name, const char *text, const override_list *ov, devcfg *out,
                     cxl_err *err)
{
    cfg_doc *doc = NULL;
    int rc = cfg_load_text(display_name ? display_name : "<text>", text, resolve, NULL, &doc, err);
    if (rc)
        return rc;
    return bind_doc(doc, ov, out, err);
}

/* Apply the overrides to a loaded device document, bind and check it into *out; frees doc. */
static int bind_doc(cfg_doc *doc, const override_list *ov, devcfg *out, cxl_err *err)
{
    int rc;
    if ((rc = override_apply(doc, ov, err)) != 0) {
        cfg_free(doc);
        return rc;
    }
    devcfg c;
    defaults(&c);
    const cfg_node *root = cfg_root(doc);
    /* Timing overrides first default to the bin (0 = use the bin). */
    rc = cfg_bind(root, NULL, "", top_fields, &c, NULL, err);
    if (!rc)
        rc = check(&c, root, err);
    if (!rc) {
        char why[256];
        const cfg_node *d = cfg_map_get(root, "dram");
        const cfg_node *mn = cfg_map_get(d, "address_mapping");
        uint8_t map[CXL_MAP_NFIELDS];
        if (parse_mapping(c.dram.mapping, map, why, sizeof why))
            rc = cfg_errf(err, mn ? mn : root, "dram.address_mapping: '%s': %s", c.dram.mapping, why);
    }
    if (!rc) {
        /* What the conversion refuses (the model's bounds, timing relations) is refused here too, at the
         * key that caused it, so that `check` refuses what `probe` cannot run. */
        cxl_params p;
        const char *blame = "";
        rc = to_params(&c, &p, err, &blame);
        if (rc)
            locate(err, root, blame);
    }
    if (!rc) {
        const char *f;
        int l, col;
        cfg_mark(root, &f, &l, &col);
        snprintf(c.source, sizeof c.source, "%s", f);
        *out = c;
    }
    cfg_free(doc);
    return rc;
}

static uint32_t ps_to_cycles(uint64_t ps, uint64_t clk_khz)
{
    /* ceil(ps * f): a latency never gets shorter by conversion */
    uint64_t num = ps * clk_khz;
    return (uint32_t)((num + 999999999ull) / 1000000000ull);
}

static uint32_t log2u(uint64_t x)
{
    uint32_t b = 0;
    while ((1ull << b) < x)
        b++;
    return b;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Relations between timings that every JEDEC speed bin satisfies and without which the model cannot
 * make progress (a run would hang, or refresh would silently stop), in clock cycles:
 *   refresh all-bank:  tRFC + tRC <= tREFI   a REFab blocks the rank for tRFC every tREFI (JESD79-5
 *                                            refresh); what is left must hold one ACT-to-ACT cycle
 *   refresh same-bank: tREFI >= banks        one REFsb per tREFI / banks_per_group (whole cycles)
 *                      tRFCsb + tRC <= tREFI each bank is blocked for tRFCsb once per tREFI
 *   tRAS >= tRCD, tRC >= tRAS + tRP          a row is open at least until its column command may issue,
 *                                            and ACT-to-ACT covers open plus precharge (JESD79-5 tables)
 * The JEDEC bins leave a wide margin (DDR5-4800: tREFI 9360, tRFC 708, tRC 111). */
static int timing_relations(const devcfg *c, const cxl_dram_params *d, cxl_err *err, const char **blame)
{
    typedef unsigned long long ull;
    if (d->tRAS < d->tRCD)
        return *blame = "dram.timing.tRAS dram.timing.tRCD", cxl_errf(err, CXL_ECONFIG,
               "dram.timing: need tRAS (%u) >= tRCD (%u) cycles (JEDEC: a row stays open until it can be read)",
               d->tRAS, d->tRCD);
    if ((uint64_t)d->tRC < (uint64_t)d->tRAS + d->tRP)
        return *blame = "dram.timing.tRC dram.timing.tRAS dram.timing.tRP", cxl_errf(err, CXL_ECONFIG,
               "dram.timing: need tRC (%u) >= tRAS + tRP (%u + %u) cycles (JEDEC: ACT to ACT of one bank)",
               d->tRC, d->tRAS, d->tRP);
    if (c->dram.refresh == CXL_REF_ALL_BANK && (uint64_t)d->tRFC + d->tRC > d->tREFI)
        return *blame = "dram.timing.tRFC dram.timing.tREFI dram.refresh", cxl_errf(err, CXL_ECONFIG,
               "dram.timing: all-bank refresh needs tRFC + tRC <= tREFI (%u + %u > %u cycles): each REFab blocks "
               "the rank for tRFC every tREFI and must leave room for one row cycle; raise tREFI, lower tRFC, or "
               "set refresh: off", d->tRFC, d->tRC, d->tREFI);
    if (c->dram.refresh == CXL_REF_SAME_BANK && d->tREFI < d->banks)
        return *blame = "dram.timing.tREFI dram.banks_per_group dram.refresh", cxl_errf(err, CXL_ECONFIG,
               "dram.timing: same-bank refresh needs tREFI >= banks_per_group (%u < %u): one REFsb is issued "
               "every tREFI / banks_per_group cycles", d->tREFI, d->banks);
    if (c->dram.refresh == CXL_REF_SAME_BANK && (uint64_t)d->tRFCsb + d->tRC > d->tREFI)
        return *blame = "dram.timing.tRFCsb dram.timing.tREFI dram.refresh", cxl_errf(err, CXL_ECONFIG,
               "dram.timing: same-bank refresh needs tRFCsb + tRC <= tREFI (%llu > %u cycles): each bank is "
               "blocked for tRFCsb once every tREFI", (ull)d->tRFCsb + d->tRC, d->tREFI);
    return 0;
}

/* The DRAM half of the conversion (to_params): geometry, address mapping, timings in clock cycles. */
static int dram_to_params(const devcfg *c, const speed_bin *b, cxl_params *p, cxl_err *err, const char **blame)
{
    cxl_dram_params *d = &p->dram;
    p->clk_khz = (uint32_t)(c->dram.speed_mts * 1000 / 2); /* DDR: two transfers per clock */
    d->std = (uint32_t)c->dram.standard;
    d->channels = (uint32_t)(c->dram.channels * b->subchannels);
    if (d->channels > CXL_MAX_CH)
        return *blame = "dram.channels",
               cxl_errf(err, CXL_ELIMIT, "%s: %u DRAM channels (subchannels counted) exceed the model's %u", c->name,
                        d->channels, CXL_MAX_CH);
    d->ranks = (uint32_t)c->dram.ranks;
    d->bankgroups = (uint32_t)(c->dram.bankgroups ? c->dram.bankgroups : b->bankgroups);
    d->banks = (uint32_t)(c->dram.banks_per_group ? c->dram.banks_per_group : b->banks);
    d->rows = (uint32_t)(c->dram.rows ? c->dram.rows : b->rows);
    d->columns = (uint32_t)((c->dram.row_bytes ? c->dram.row_bytes : b->row_bytes) / CXL_LINE_BYTES);
    if (d->ranks * d->bankgroups * d->banks > CXL_MAX_BANKS)
        return *blame = "dram.banks_per_group dram.bankgroups dram.ranks",
               cxl_errf(err, CXL_ELIMIT, "%s: %u banks per channel exceed the model's %u", c->name,
                        d->ranks * d->bankgroups * d->banks, CXL_MAX_BANKS);
    uint8_t map[CXL_MAP_NFIELDS];
    char why[256];
    if (parse_mapping(c->dram.mapping, map, why, sizeof why))
        return *blame = "dram.address_mapping", cxl_errf(err, CXL_ECONFIG, "dram.address_mapping: %s", why);
    memcpy(d->map, map, sizeof map);
    d->bits[CXL_MAP_CH] = log2u(d->channels);
    d->bits[CXL_MAP_RANK] = log2u(d->ranks);
    d->bits[CXL_MAP_BG] = log2u(d->bankgroups);
    d->bits[CXL_MAP_BANK] = log2u(d->banks);
    d->bits[CXL_MAP_ROW] = log2u(d->rows);
    d->bits[CXL_MAP_COL] = log2u(d->columns);
    uint32_t t[T_N];
    for (int i = 0; i < T_N; i++)
        t[i] = c->dram.t[i] ? (uint32_t)c->dram.t[i] : b->t[i];
    if (c->dram.standard == CXL_DDR5 && !c->dram.t[T_RFC]) {
        /* tRFC1 (REFab): 195 / 295 / 410 ns for 8 / 16 / 32 Gb dies (JESD79-5; facts file) */
        uint64_t ns = c->dram.die_gbit <= 8 ? 195 : c->dram.die_gbit <= 16 ? 295 : 410;
        t[T_RFC] = ps_to_cycles(ns * 1000, p->clk_khz);
    }
    if (c->dram.standard == CXL_DDR5 && !c->dram.t[T_RFCSB] && c->dram.die_gbit <= 16) {
        /* tRFCsb (REFsb): 115 / 130 ns for 8 / 16 Gb dies (JESD79-5 Table 282) */
        t[T_RFCSB] = ps_to_cycles((c->dram.die_gbit <= 8 ? 115 : 130) * 1000ull, p->clk_khz);
    }
    d->tRCD = t[T_RCD]; d->tCL = t[T_CL]; d->tRP = t[T_RP]; d->tRAS = t[T_RAS]; d->tRC = t[T_RC];
    d->tCWL = t[T_CWL]; d->tWR = t[T_WR]; d->tRTP = t[T_RTP]; d->tBL = t[T_BL];
    d->tCCD_S = t[T_CCD_S]; d->tCCD_L = t[T_CCD_L]; d->tCCD_S_WR = t[T_CCD_S_WR]; d->tCCD_L_WR = t[T_CCD_L_WR];
    d->tRRD_S = t[T_RRD_S]; d->tRRD_L = t[T_RRD_L]; d->tFAW = t[T_FAW];
    d->tWTR_S = t[T_WTR_S]; d->tWTR_L = t[T_WTR_L]; d->tRTW = t[T_RTW];
    d->tREFI = t[T_REFI];
    d->tRFC = t[T_RFC];
    d->tRFCsb = t[T_RFCSB];
    d->refresh = (uint32_t)c->dram.refresh;
    d->read_queue = (uint32_t)c->dram.read_queue;
    d->write_queue = (uint32_t)c->dram.write_queue;
    d->wdrain_high = (uint32_t)c->dram.drain_high;
    d->wdrain_low = (uint32_t)c->dram.drain_low;
    d->row_policy = (uint32_t)c->dram.row_policy;
    d->scheduler = (uint32_t)c->dram.scheduler;
    d->bank_hash = (uint32_t)c->dram.bank_hash;
    return timing_relations(c, d, err, blame);
}

/* The CXL link and the device controller of the conversion (to_params), for the cxl path. */
static int link_to_params(const devcfg *c, cxl_params *p, cxl_err *err, const char **blame)
{
    cxl_link_params *l = &p->link;
    l->flit_bytes = (uint32_t)c->link.flit_bytes;
    /* 68 B flits at rate R MT/s on W lanes with 128b/130b encoding (Gen3-5 PHY):
     * flit time = 68*8*130 / (128 * W * R*1e6) s; in model cycles at clk kHz:
     * cost/inc with cost = 68*8*130*clk_khz, inc = 128*W*R*1000. Reduced by their gcd. */
    uint64_t cost = (uint64_t)l->flit_bytes * 8 * 130 * p->clk_khz;
    uint64_t inc = 128ull * c->link.width * c->link.rate_mts * 1000ull;
    uint64_t g = gcd64(cost, inc);
    l->flit_cost = cost / g;
    l->flit_inc = inc / g;
    l->ser_cycles = (uint32_t)((l->flit_cost + l->flit_inc - 1) / l->flit_inc);
    l->phy_cycles = ps_to_cycles(c->link.phy_latency_ps, p->clk_khz);
    l->credit_return_cycles = ps_to_cycles(c->link.credit_return_ps, p->clk_khz);
    l->m2s_req_credits = (uint32_t)c->ctrl.ingress_depth;
    l->m2s_data_credits = (uint32_t)c->ctrl.ingress_depth;
    if (c->link.req_credits < c->ctrl.ingress_depth)
        l->m2s_req_credits = (uint32_t)c->link.req_credits;
    if (c->link.data_credits < c->ctrl.ingress_depth)
        l->m2s_data_credits = (uint32_t)c->link.data_credits;
    l->s2m_data_credits = (uint32_t)c->link.drs_credits;
    l->s2m_rsp_credits = (uint32_t)c->link.ndr_credits;
    uint64_t inflight = (uint64_t)(l->ser_cycles + l->phy_cycles) * l->flit_inc / l->flit_cost + 2;
    if (inflight > CXL_MAX_FLIGHT) {
        uint64_t most = (uint64_t)(CXL_MAX_FLIGHT - 2) * l->flit_cost / l->flit_inc;
        most = most > l->ser_cycles ? most - l->ser_cycles : 0;
        return *blame = "link.phy_latency link.rate link.width",
               cxl_errf(err, CXL_ELIMIT, "%s: link.phy_latency too long: %llu flits in flight exceed the "
                        "model's %u; at this link rate and width phy_latency may be at most %.3f ns",
                        c->name, (unsigned long long)inflight, CXL_MAX_FLIGHT, devcfg_cycles_to_ns(p, most));
    }
    if (l->credit_return_cycles >= CXL_MAX_DELAY)
        return *blame = "link.credit_return",
               cxl_errf(err, CXL_ELIMIT, "%s: link.credit_return exceeds %u cycles", c->name, CXL_MAX_DELAY);
    p->ctrl.req_latency_cycles = ps_to_cycles(c->ctrl.request_latency_ps, p->clk_khz);
    p->ctrl.rsp_latency_cycles = ps_to_cycles(c->ctrl.response_latency_ps, p->clk_khz);
    p->ctrl.ingress_depth = (uint32_t)c->ctrl.ingress_depth;
    p->ctrl.response_depth = (uint32_t)c->ctrl.response_depth;
    return 0;
}

/* The conversion; on an error *blame names the keys that caused it, most likely first, space-separated
 * ("link.phy_latency"), so that devcfg_load can give the error the location of the first one written. */
static int to_params(const devcfg *c, cxl_params *p, cxl_err *err, const char **blame)
{
    memset(p, 0, sizeof *p);
    const speed_bin *b = find_bin(c->dram.standard, c->dram.speed_mts);
    if (!b)
        return *blame = "dram.speed dram.standard", cxl_errf(err, CXL_ECONFIG, "%s: no timing bin", c->name);
    int rc = dram_to_params(c, b, p, err, blame);
    if (rc)
        return rc;

    p->link_present = c->path == DEVCFG_PATH_CXL;
    p->hosts = c->sw.present ? (uint32_t)c->sw.hosts : 1;
    p->devices = c->sw.present ? (uint32_t)c->sw.devices : 1;
    p->requesters = (uint32_t)c->host.requesters;
    for (uint32_t r = 0; r < p->requesters; r++)
        p->req_host[r] = r % p->hosts;
    if (c->sw.present) {
        cxl_switch_params *s = &p->sw;
        s->present = 1;
        s->hop_cycles = ps_to_cycles(c->sw.hop_latency_ps, p->clk_khz);
        s->port_queue = (uint32_t)c->sw.port_queue;
        s->arbitration = (uint32_t)c->sw.arbitration;
        s->interleave_shift = log2u(c->sw.interleave_bytes);
        s->dev_bits = log2u(p->devices);
        if (c->sw.pooling == 1) {
            /* one partition per host: the LD-ID goes above the partition's own address bits */
            const uint32_t *bits = p->dram.bits;
            uint32_t cap_bits = 6 + bits[CXL_MAP_CH] + bits[CXL_MAP_RANK] + bits[CXL_MAP_BG] + bits[CXL_MAP_BANK] +
                                bits[CXL_MAP_ROW] + bits[CXL_MAP_COL];
            s->ld_shift = cap_bits - log2u(p->hosts);
        }
    }
    p->tags = (uint32_t)c->host.tags;
    uint64_t host_ps = c->host.core_latency_ps + (p->link_present ? c->host.port_latency_ps : 0);
    p->host_req_cycles = ps_to_cycles(host_ps, p->clk_khz);
    p->host_rsp_cycles = p->host_req_cycles;

    if (p->link_present) {
        rc = link_to_params(c, p, err, blame);
        if (rc)
            return rc;
    } else {
        /* Local path: the host's memory controller queues requests directly. */
        p->ctrl.req_latency_cycles = 0;
        p->ctrl.rsp_latency_cycles = 0;
        p->ctrl.ingress_depth = (uint32_t)c->ctrl.ingress_depth;
        p->ctrl.response_depth = (uint32_t)c->ctrl.response_depth;
    }
    uint32_t in = 2 * p->ctrl.ingress_depth;
    p->ctrl.devload_optimal = (uint32_t)ceil(c->ctrl.devload_optimal * in);
    p->ctrl.devload_moderate = (uint32_t)ceil(c->ctrl.devload_moderate * in);
    p->ctrl.devload_severe = (uint32_t)ceil(c->ctrl.devload_severe * in);
    /* A host path takes at least one model cycle: a request or response never arrives in the cycle it
     * left (the RTL model relies on it, hw/rtl/cxl_model.v). */
    if (p->host_req_cycles == 0)
        return *blame = "host.core_latency host.port_latency host",
               cxl_errf(err, CXL_ECONFIG, "%s: host.core_latency%s must be at least one model cycle (%.3f ns)",
                        c->name, p->link_present ? " + host.port_latency" : "", devcfg_cycles_to_ns(p, 1));
    if (p->host_req_cycles + 8 > CXL_MAX_FIFO * 4)
        return *blame = "host.core_latency host.port_latency",
               cxl_errf(err, CXL_ELIMIT, "%s: host latency too long for the model's pipes", c->name);
    return 0;
}

int devcfg_to_params(const devcfg *c, cxl_params *p, cxl_err *err)
{
    const char *blame = "";
    return to_params(c, p, err, &blame);
}

double devcfg_cycles_to_ns(const cxl_params *p, uint64_t cycles)
{
    return (double)cycles * 1e6 / (double)p->clk_khz;
}

/* cfgdump hook for the two custom fields: the switch (its table, or none) and the timing in effect (the
 * override, else the speed bin's value; tRFC and tRFCsb of DDR5 follow die_density when not set). */
static void dump_custom(FILE *out, const cfg_field *f, const void *dst, int indent, void *ctx)
{
    const devcfg *c = ctx;
    (void)dst;
    if (!strcmp(f->key, "switch")) {
        if (!c->sw.present) {
            fprintf(out, "%*sswitch: none\n", indent, "");
            return;
        }
        fprintf(out, "%*sswitch:\n", indent, "");
        cfgdump_fields(out, switch_fields, c, indent + 2, NULL, NULL);
        return;
    }
    const speed_bin *b = find_bin(c->dram.standard, c->dram.speed_mts);
    fprintf(out, "%*stiming:\n", indent, "");
    for (int i = 0; i < T_N; i++) {
        uint64_t v = c->dram.t[i] ? c->dram.t[i] : b ? b->t[i] : 0;
        if (v)
            fprintf(out, "%*s%s: %llu\n", indent + 2, "", tnames[i], (unsigned long long)v);
    }
}

void devcfg_dump(FILE *out, const devcfg *c)
{
    cfgdump_fields(out, top_fields, c, 0, dump_custom, (void *)c);
}
