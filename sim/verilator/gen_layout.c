/* gen_layout.c - prints hw/rtl/cxl_layout.vh: where each field of the C structs that cross the kernel
 * boundary (cxl_params, cxl_desc, cxl_completion, cxl_stats of hw/hls/cxl_types.h, cxl_kernel_result of
 * hw/hls/cxl_kernel.h) lies, as Verilog
 * `defines, so the RTL reads and writes the exact bytes the host (and the csim backend) uses.
 *
 *   gen_layout              print the header to stdout
 *   gen_layout --write FILE write it to FILE (CMake target cxl_layout_vh: hw/rtl/cxl_layout.vh)
 *   gen_layout --check FILE exit 0 if FILE equals the output, else 1 with a message saying how to
 *                           regenerate (ctest rtl_layout: a struct change that is not regenerated fails)
 *
 * Index conventions (little endian throughout, as the host lays the structs out in memory):
 *   cxl_params: 32-bit word indices (the kernel's `prm` bus: word i = prm[32*i +: 32]); a 64-bit field
 *     gives its low word; an array gives its element 0. dram.map is uint8_t: also its byte offset.
 *   cxl_desc, cxl_completion, cxl_kernel_result: byte offsets (desc[8*`CXL_D_BASE +: 64]) and field widths in bits.
 *   cxl_stats: 64-bit word indices (st_addr); sub-structs give their first word and per-field offsets.
 *     The histogram bins are uint32_t: linear[i] is the (i % 2 ? high : low) half of word
 *     hist + i / 2, log[k] likewise from hist + CXL_S_HIST_LOG_OFF.
 * A field added to one of the structs needs its line below (and the RTL that uses it). */
#include <assert.h>
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cxl_kernel.h"
#include "cxl_types.h"

/* The stats readout is 64-bit words; the u32 histogram arrays must pack into whole, aligned words. */
static_assert(offsetof(cxl_hist, linear) % 8 == 0, "hist linear[] not 8-byte aligned");
static_assert(sizeof(((cxl_hist *)0)->linear) % 8 == 0, "hist linear[] not whole 64-bit words");
static_assert(offsetof(cxl_hist, log) % 8 == 0, "hist log[] not 8-byte aligned");
static_assert(sizeof(((cxl_hist *)0)->log) % 8 == 0, "hist log[] not whole 64-bit words");
static_assert(sizeof(cxl_hist) % 8 == 0 && sizeof(cxl_link_stats) % 8 == 0 && sizeof(cxl_dev_stats) % 8 == 0,
              "stats sub-structs not whole 64-bit words");
static_assert(offsetof(cxl_stats, read_lat) % 8 == 0 && offsetof(cxl_stats, link) % 8 == 0 &&
                  offsetof(cxl_stats, dev) % 8 == 0,
              "stats sub-structs not 8-byte aligned");
static_assert(sizeof(cxl_stats) % 8 == 0, "cxl_stats not whole 64-bit words");
static_assert(sizeof(cxl_params) % 4 == 0, "cxl_params not whole 32-bit words");
static_assert(sizeof(cxl_desc) == 64, "cxl_desc is the kernel's 512-bit submit bus");
static_assert(sizeof(cxl_completion) == 32, "cxl_completion is the kernel's 256-bit completion bus");
static_assert(sizeof(cxl_kernel_result) % 8 == 0, "cxl_kernel_result is written as 64-bit beats");

typedef struct gen {
    char *buf;
    size_t len, cap;
    int bad;
} gen;

static void out(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void out(gen *g, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            g->bad = 1;
            return;
        }
        if ((size_t)n < g->cap - g->len) {
            g->len += (size_t)n;
            return;
        }
        size_t cap = g->cap * 2 + (size_t)n + 1;
        char *b = realloc(g->buf, cap);
        if (!b) {
            g->bad = 1;
            return;
        }
        g->buf = b;
        g->cap = cap;
    }
}

/* "dram.tRCD" -> "DRAM_TRCD" */
static void macro_name(char *dst, size_t cap, const char *prefix, const char *path)
{
    size_t n = (size_t)snprintf(dst, cap, "%s", prefix);
    for (const char *s = path; *s && n + 1 < cap; s++)
        dst[n++] = *s == '.' ? '_' : (char)toupper((unsigned char)*s);
    dst[n] = '\0';
}

static void def(gen *g, const char *name, size_t value, const char *what)
{
    out(g, "`define %-32s %zu%s%s\n", name, value, what ? "  // " : "", what ? what : "");
}

/* cxl_params: word index; 64-bit fields must be 8-byte aligned (low word first). */
static void prm(gen *g, const char *path, size_t off, size_t elem, const char *what)
{
    char name[96];
    macro_name(name, sizeof name, "CXL_P_", path);
    if (off % (elem < 4 ? 1 : elem) != 0 || (elem >= 4 && off % 4 != 0)) {
        fprintf(stderr, "gen_layout: cxl_params.%s misaligned (offset %zu)\n", path, off);
        g->bad = 1;
    }
    def(g, name, off / 4, what);
}
#define PRM(path, what) prm(g, #path, offsetof(cxl_params, path), sizeof(((cxl_params *)0)->path), what)
#define PRMA(path, what) prm(g, #path, offsetof(cxl_params, path), sizeof(((cxl_params *)0)->path[0]), what)

static void bytefield(gen *g, const char *prefix, const char *path, size_t off, size_t size)
{
    char name[96], wname[100];
    macro_name(name, sizeof name, prefix, path);
    snprintf(wname, sizeof wname, "%s_W", name);
    def(g, name, off, NULL);
    def(g, wname, size * 8, NULL);
}
#define DESC(f) bytefield(g, "CXL_D_", #f, offsetof(cxl_desc, f), sizeof(((cxl_desc *)0)->f))
#define COMP(f) bytefield(g, "CXL_C_", #f, offsetof(cxl_completion, f), sizeof(((cxl_completion *)0)->f))
#define RES(f) bytefield(g, "CXL_R_", #f, offsetof(cxl_kernel_result, f), sizeof(((cxl_kernel_result *)0)->f))

static void stword(gen *g, const char *name, size_t off, const char *what)
{
    if (off % 8 != 0) {
        fprintf(stderr, "gen_layout: %s not 8-byte aligned (offset %zu)\n", name, off);
        g->bad = 1;
    }
    def(g, name, off / 8, what);
}

static void generate(gen *g)
{
    out(g, "// cxl_layout.vh - GENERATED by sim/verilator/gen_layout.c from hw/hls/cxl_types.h,\n"
           "// cxl_params.h and cxl_kernel.h; do not edit. Regenerate after changing those structs:\n"
           "//     cmake --build build --target cxl_layout_vh\n"
           "// (ctest rtl_layout fails while this file differs from the generator's output.)\n"
           "//\n"
           "// All little endian, as the host lays the C structs out in memory.\n"
           "//   CXL_P_<FIELD PATH>   cxl_params: 32-bit word index on the prm bus (prm[32*i +: 32]); a 64-bit\n"
           "//                        field gives its low word, an array its element 0 (element j: + j).\n"
           "//                        CXL_P_DRAM_MAP_BYTE: byte offset of dram.map[0] (uint8_t, field j at\n"
           "//                        prm[8*(`CXL_P_DRAM_MAP_BYTE + j) +: 8]). CXL_PRM_WORDS: words in all.\n"
           "//   CXL_D_<FIELD>        cxl_desc: byte offset (desc[8*`CXL_D_BASE +: `CXL_D_BASE_W]);\n"
           "//   CXL_D_<FIELD>_W      its width in bits; CXL_DESC_BYTES = 64.\n"
           "//   CXL_C_<FIELD>, _W    cxl_completion likewise; CXL_COMP_BYTES = 32.\n"
           "//   CXL_R_<FIELD>, _W    cxl_kernel_result (hw/hls/cxl_kernel.h) likewise, CXL_RESULT_BYTES;\n"
           "//                        CXL_R_SPACE: byte of space[0] (uint8_t each, requester r at + r).\n"
           "//   CXL_S_*              cxl_stats as 64-bit words (the st_addr readout):\n"
           "//     CXL_S_CYCLES, CXL_S_READ_BYTES, CXL_S_WRITE_BYTES, CXL_S_SWITCH_STALL: the word;\n"
           "//     CXL_S_READ_LAT, CXL_S_WRITE_LAT: first word of the cxl_hist; inside a hist, from its first\n"
           "//       word: CXL_S_HIST_LINEAR_OFF (0), CXL_S_HIST_LOG_OFF, CXL_S_HIST_COUNT_OFF,\n"
           "//       CXL_S_HIST_SUM_OFF, CXL_S_HIST_MAX_OFF; CXL_S_HIST_WORDS per hist. The uint32_t bins\n"
           "//       pack two per word: bin i is the low (i even) or high (i odd) half of word OFF + i/2;\n"
           "//     CXL_S_LINK: first word of link[0]; CXL_S_LINKS links of CXL_S_LINK_WORDS words each, and\n"
           "//       inside one: CXL_S_LINK_FLITS_OFF, _DATA_FLITS_OFF, _SLOTS_USED_OFF ([2] each),\n"
           "//       CXL_S_LINK_MSGS_OFF, CXL_S_LINK_CREDIT_STALL_OFF ([CXL_NCLASS] each);\n"
           "//     CXL_S_DEV: first word of dev[0]; CXL_S_DEVS devices of CXL_S_DEV_WORDS words each, and\n"
           "//       inside one: CXL_S_DEV_READS_OFF, _WRITES_OFF, _ACTS_OFF, _PRES_OFF, _REFS_OFF,\n"
           "//       _ROW_CONFLICTS_OFF, _INGRESS_OCC_SUM_OFF, _INGRESS_OCC_MAX_OFF, _DRAMQ_OCC_SUM_OFF,\n"
           "//       CXL_S_DEV_DEVLOAD_OFF ([4]);\n"
           "//     CXL_STATS_WORDS: words in all.\n"
           "`ifndef CXL_LAYOUT_VH\n"
           "`define CXL_LAYOUT_VH\n\n");

    out(g, "// ---- cxl_params: 32-bit word indices ----\n");
    def(g, "CXL_PRM_WORDS", sizeof(cxl_params) / 4, NULL);
    PRM(clk_khz, NULL);
    PRM(link_present, NULL);
    PRM(hosts, NULL);
    PRM(devices, NULL);
    PRM(requesters, NULL);
    PRM(tags, NULL);
    PRMA(req_host, "[CXL_MAX_REQ]");
    PRM(host_req_cycles, NULL);
    PRM(host_rsp_cycles, NULL);
    PRM(link.flit_bytes, NULL);
    PRM(link.flit_cost, "64-bit, low word");
    PRM(link.flit_inc, "64-bit, low word");
    PRM(link.ser_cycles, NULL);
    PRM(link.phy_cycles, NULL);
    PRM(link.credit_return_cycles, NULL);
    PRM(link.m2s_req_credits, NULL);
    PRM(link.m2s_data_credits, NULL);
    PRM(link.s2m_data_credits, NULL);
    PRM(link.s2m_rsp_credits, NULL);
    PRM(sw.present, NULL);
    PRM(sw.hop_cycles, NULL);
    PRM(sw.port_queue, NULL);
    PRM(sw.arbitration, NULL);
    PRM(sw.interleave_shift, NULL);
    PRM(sw.dev_bits, NULL);
    PRM(sw.ld_shift, NULL);
    PRM(ctrl.req_latency_cycles, NULL);
    PRM(ctrl.rsp_latency_cycles, NULL);
    PRM(ctrl.ingress_depth, NULL);
    PRM(ctrl.response_depth, NULL);
    PRM(ctrl.devload_optimal, NULL);
    PRM(ctrl.devload_moderate, NULL);
    PRM(ctrl.devload_severe, NULL);
    PRM(dram.std, NULL);
    PRM(dram.channels, NULL);
    PRM(dram.ranks, NULL);
    PRM(dram.bankgroups, NULL);
    PRM(dram.banks, NULL);
    PRM(dram.rows, NULL);
    PRM(dram.columns, NULL);
    PRMA(dram.map, "uint8_t [CXL_MAP_NFIELDS]: word of map[0]");
    def(g, "CXL_P_DRAM_MAP_BYTE", offsetof(cxl_params, dram.map), "byte offset of map[0]");
    PRMA(dram.bits, "[CXL_MAP_NFIELDS]");
    PRM(dram.tRCD, NULL);
    PRM(dram.tCL, NULL);
    PRM(dram.tRP, NULL);
    PRM(dram.tRAS, NULL);
    PRM(dram.tRC, NULL);
    PRM(dram.tCWL, NULL);
    PRM(dram.tWR, NULL);
    PRM(dram.tRTP, NULL);
    PRM(dram.tBL, NULL);
    PRM(dram.tCCD_S, NULL);
    PRM(dram.tCCD_L, NULL);
    PRM(dram.tCCD_S_WR, NULL);
    PRM(dram.tCCD_L_WR, NULL);
    PRM(dram.tRRD_S, NULL);
    PRM(dram.tRRD_L, NULL);
    PRM(dram.tFAW, NULL);
    PRM(dram.tWTR_S, NULL);
    PRM(dram.tWTR_L, NULL);
    PRM(dram.tRTW, NULL);
    PRM(dram.tREFI, NULL);
    PRM(dram.tRFC, NULL);
    PRM(dram.tRFCsb, NULL);
    PRM(dram.refresh, NULL);
    PRM(dram.read_queue, NULL);
    PRM(dram.write_queue, NULL);
    PRM(dram.wdrain_high, NULL);
    PRM(dram.wdrain_low, NULL);
    PRM(dram.row_policy, NULL);
    PRM(dram.scheduler, NULL);
    PRM(dram.bank_hash, NULL);

    out(g, "\n// ---- cxl_desc: byte offsets, widths in bits ----\n");
    def(g, "CXL_DESC_BYTES", sizeof(cxl_desc), NULL);
    DESC(id);
    DESC(base);
    DESC(bytes);
    DESC(footprint);
    DESC(not_before);
    DESC(stride);
    DESC(seed);
    DESC(gap_cycles);
    DESC(requester);
    DESC(max_outstanding);
    DESC(pattern);
    DESC(rd_weight);
    DESC(wr_weight);
    DESC(pad);

    out(g, "\n// ---- cxl_completion: byte offsets, widths in bits ----\n");
    def(g, "CXL_COMP_BYTES", sizeof(cxl_completion), NULL);
    COMP(id);
    COMP(start_cycle);
    COMP(end_cycle);
    COMP(requester);
    COMP(lines);

    out(g, "\n// ---- cxl_kernel_result: byte offsets, widths in bits ----\n");
    def(g, "CXL_RESULT_BYTES", sizeof(cxl_kernel_result), NULL);
    RES(n_comps);
    RES(status);
    RES(model_error);
    RES(idle);
    RES(now);
    bytefield(g, "CXL_R_", "space", offsetof(cxl_kernel_result, space), sizeof(((cxl_kernel_result *)0)->space[0]));

    out(g, "\n// ---- cxl_stats: 64-bit word indices ----\n");
    def(g, "CXL_STATS_WORDS", sizeof(cxl_stats) / 8, NULL);
    stword(g, "CXL_S_CYCLES", offsetof(cxl_stats, cycles), NULL);
    stword(g, "CXL_S_READ_BYTES", offsetof(cxl_stats, read_bytes), NULL);
    stword(g, "CXL_S_WRITE_BYTES", offsetof(cxl_stats, write_bytes), NULL);
    stword(g, "CXL_S_READ_LAT", offsetof(cxl_stats, read_lat), "cxl_hist");
    stword(g, "CXL_S_WRITE_LAT", offsetof(cxl_stats, write_lat), "cxl_hist");
    stword(g, "CXL_S_HIST_LINEAR_OFF", offsetof(cxl_hist, linear), "uint32_t [CXL_HIST_LINEAR], 2 per word");
    stword(g, "CXL_S_HIST_LOG_OFF", offsetof(cxl_hist, log), "uint32_t [CXL_HIST_LOG], 2 per word");
    stword(g, "CXL_S_HIST_COUNT_OFF", offsetof(cxl_hist, count), NULL);
    stword(g, "CXL_S_HIST_SUM_OFF", offsetof(cxl_hist, sum), NULL);
    stword(g, "CXL_S_HIST_MAX_OFF", offsetof(cxl_hist, max), NULL);
    stword(g, "CXL_S_HIST_WORDS", sizeof(cxl_hist), NULL);
    stword(g, "CXL_S_LINK", offsetof(cxl_stats, link), "link[0]: host links, then switch-to-device links");
    def(g, "CXL_S_LINKS", sizeof(((cxl_stats *)0)->link) / sizeof(cxl_link_stats), "CXL_MAX_HOSTS + CXL_MAX_DEVS");
    stword(g, "CXL_S_LINK_WORDS", sizeof(cxl_link_stats), NULL);
    stword(g, "CXL_S_LINK_FLITS_OFF", offsetof(cxl_link_stats, flits), "[2]: M2S, S2M");
    stword(g, "CXL_S_LINK_DATA_FLITS_OFF", offsetof(cxl_link_stats, data_flits), "[2]");
    stword(g, "CXL_S_LINK_SLOTS_USED_OFF", offsetof(cxl_link_stats, slots_used), "[2]");
    stword(g, "CXL_S_LINK_MSGS_OFF", offsetof(cxl_link_stats, msgs), "[CXL_NCLASS]");
    stword(g, "CXL_S_LINK_CREDIT_STALL_OFF", offsetof(cxl_link_stats, credit_stall), "[CXL_NCLASS]");
    stword(g, "CXL_S_DEV", offsetof(cxl_stats, dev), "dev[0]");
    def(g, "CXL_S_DEVS", sizeof(((cxl_stats *)0)->dev) / sizeof(cxl_dev_stats), "CXL_MAX_DEVS");
    stword(g, "CXL_S_DEV_WORDS", sizeof(cxl_dev_stats), NULL);
    stword(g, "CXL_S_DEV_READS_OFF", offsetof(cxl_dev_stats, reads), NULL);
    stword(g, "CXL_S_DEV_WRITES_OFF", offsetof(cxl_dev_stats, writes), NULL);
    stword(g, "CXL_S_DEV_ACTS_OFF", offsetof(cxl_dev_stats, acts), NULL);
    stword(g, "CXL_S_DEV_PRES_OFF", offsetof(cxl_dev_stats, pres), NULL);
    stword(g, "CXL_S_DEV_REFS_OFF", offsetof(cxl_dev_stats, refs), NULL);
    stword(g, "CXL_S_DEV_ROW_CONFLICTS_OFF", offsetof(cxl_dev_stats, row_conflicts), NULL);
    stword(g, "CXL_S_DEV_INGRESS_OCC_SUM_OFF", offsetof(cxl_dev_stats, ingress_occ_sum), NULL);
    stword(g, "CXL_S_DEV_INGRESS_OCC_MAX_OFF", offsetof(cxl_dev_stats, ingress_occ_max), NULL);
    stword(g, "CXL_S_DEV_DRAMQ_OCC_SUM_OFF", offsetof(cxl_dev_stats, dramq_occ_sum), NULL);
    stword(g, "CXL_S_DEV_DEVLOAD_OFF", offsetof(cxl_dev_stats, devload), "[4]");
    stword(g, "CXL_S_SWITCH_STALL", offsetof(cxl_stats, switch_stall), NULL);
    out(g, "\n`endif\n");
}

static int check(const gen *g, const char *path)
{
    FILE *f = fopen(path, "rb");
    char *have = NULL;
    size_t n = 0;
    int same = 0;
    if (f) {
        have = malloc(g->len + 2);
        if (have) {
            n = fread(have, 1, g->len + 1, f);
            same = n == g->len && memcmp(have, g->buf, g->len) == 0;
        }
        fclose(f);
    }
    free(have);
    if (same)
        return 0;
    fprintf(stderr,
            "%s is %s the layout of hw/hls/cxl_types.h, cxl_params.h and cxl_kernel.h.\n"
            "Regenerate it (and adapt the RTL that uses the changed fields):\n"
            "    cmake --build build --target cxl_layout_vh\n",
            path, f ? "out of date with" : "missing: it holds");
    return 1;
}

int main(int argc, char **argv)
{
    gen g = {0};
    int rc = 0;
    if (!(argc == 1 || (argc == 3 && (strcmp(argv[1], "--check") == 0 || strcmp(argv[1], "--write") == 0)))) {
        fprintf(stderr, "usage: gen_layout [--check FILE | --write FILE]\n");
        return 2;
    }
    generate(&g);
    if (g.bad || !g.buf) {
        fprintf(stderr, "gen_layout: failed\n");
        rc = 1;
    } else if (argc == 3 && strcmp(argv[1], "--check") == 0) {
        rc = check(&g, argv[2]);
    } else if (argc == 3) {
        FILE *f = fopen(argv[2], "wb");
        int bad = !f || fwrite(g.buf, 1, g.len, f) != g.len;
        if ((f && fclose(f) != 0) || bad) {
            fprintf(stderr, "gen_layout: cannot write %s\n", argv[2]);
            rc = 1;
        }
    } else if (fwrite(g.buf, 1, g.len, stdout) != g.len || fflush(stdout) != 0) {
        fprintf(stderr, "gen_layout: cannot write\n");
        rc = 1;
    }
    free(g.buf);
    return rc;
}
