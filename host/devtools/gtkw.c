/* gtkw.c - a GTKWave save file for a waveform of the RTL kernel (see gtkw.h). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "devtools/gtkw.h"

#include <stdio.h>
#include <stdlib.h>

/* GTKWave trace flags (its analyzer.h): display radix and the group markers */
#define GTKW_HEX 0x22u     /* right-justified hexadecimal */
#define GTKW_DEC 0x24u     /* right-justified decimal */
#define GTKW_BIN 0x28u     /* right-justified binary (one bit) */
#define GTKW_BLANK 0x200u  /* the group's comment line */
#define GTKW_OPEN 0x800000u
#define GTKW_CLOSED 0xc00000u
#define GTKW_END 0x1000000u

typedef struct sig {
    const char *name;
    unsigned width; /* 1: a bit, shown in binary; else [width-1:0] in decimal (or hex for a message) */
    unsigned flags;
} sig;

static const sig kernel_sigs[] = {
    { "ap_clk", 1, GTKW_BIN },           { "ap_rst_n", 1, GTKW_BIN },
    { "s_axi_control_AWVALID", 1, GTKW_BIN }, { "s_axi_control_WVALID", 1, GTKW_BIN },
    { "s_axi_control_ARVALID", 1, GTKW_BIN }, { "interrupt", 1, GTKW_BIN },
};
static const sig model_sigs[] = {
    { "now_q", 64, GTKW_DEC }, { "stepping", 1, GTKW_BIN }, { "main_clk", 1, GTKW_BIN }, { "rsp_clk", 1, GTKW_BIN },
};
static const sig req_sigs[] = {
    { "sub_valid", 1, GTKW_BIN },  { "sub_ready", 1, GTKW_BIN }, { "iss_valid", 1, GTKW_BIN },
    { "iss_msg", 120, GTKW_HEX },  { "rsp_valid", 1, GTKW_BIN }, { "rsp_tag", 8, GTKW_DEC },
    { "comp_valid", 1, GTKW_BIN }, { "comp_id", 64, GTKW_DEC },  { "space", 5, GTKW_DEC },
};
static const sig link_sigs[] = {
    { "tx_flit", 1, GTKW_BIN },  { "tx_data_flit", 1, GTKW_BIN }, { "tx_used", 3, GTKW_DEC },
    { "tx_msgs", 32, GTKW_DEC }, { "tx_stall", 4, GTKW_BIN },     { "rx_n", 4, GTKW_DEC },
    { "cr_avail", 128, GTKW_HEX }, { "fl_count", 7, GTKW_DEC },   { "idle", 1, GTKW_BIN },
};
static const sig switch_sigs[] = {
    { "stall_n", 4, GTKW_DEC }, { "stall_count", 64, GTKW_DEC },
};
static const sig dev_sigs[] = {
    { "ing_req_space", 32, GTKW_DEC }, { "ing_rwd_space", 32, GTKW_DEC }, { "cr_ret_req", 1, GTKW_BIN },
    { "cr_ret_rwd", 1, GTKW_BIN },     { "idle", 1, GTKW_BIN },           { "refresh_due", 1, GTKW_BIN },
};
static const sig chan_sigs[] = {
    { "iss_valid", 1, GTKW_BIN }, { "iss_cmd", 3, GTKW_DEC }, { "iss_rank", 2, GTKW_DEC },
    { "iss_bg", 6, GTKW_DEC },    { "iss_bank", 6, GTKW_DEC }, { "iss_row", 32, GTKW_DEC },
    { "nr", 7, GTKW_DEC },        { "nw", 7, GTKW_DEC },       { "rd_n", 6, GTKW_DEC },
    { "write_mode", 1, GTKW_BIN }, { "refresh_due", 1, GTKW_BIN },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* one group: the unit's label, its scope and its signals; `open` leaves it expanded */
static void group(FILE *f, const char *label, const char *scope, const sig *s, size_t n, int open)
{
    fprintf(f, "@%x\n-%s\n", (open ? GTKW_OPEN : GTKW_CLOSED) | GTKW_BLANK, label);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "@%x\n%s.%s", s[i].flags, scope, s[i].name);
        if (s[i].width > 1)
            fprintf(f, "[%u:0]", s[i].width - 1);
        fputc('\n', f);
    }
    fprintf(f, "@%x\n-%s\n", GTKW_END | GTKW_BLANK, label);
}

int gtkw_text(const char *dumpfile, const cxl_params *p, char **text, size_t *len, cxl_err *err)
{
    *text = NULL;
    *len = 0;
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f)
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the GTKWave save file");
    const char *top = "TOP.cxl_kernel", *m = "TOP.cxl_kernel.u_model";
    char label[64], scope[160];
    fprintf(f, "[*] GTKWave save file written by cxlsim compare --trace-fst: one group per unit (gtkw.h)\n");
    fprintf(f, "[dumpfile] \"%s\"\n[timestart] 0\n", dumpfile);
    group(f, "kernel", top, kernel_sigs, N(kernel_sigs), 1);
    group(f, "model", m, model_sigs, N(model_sigs), 1);
    for (uint32_t r = 0; r < p->requesters && r < CXL_MAX_REQ; r++) {
        snprintf(label, sizeof label, "requester %u", r);
        snprintf(scope, sizeof scope, "%s.rq[%u].u_req", m, r);
        group(f, label, scope, req_sigs, N(req_sigs), r == 0);
    }
    /* host ports: a direct link is port 0's; a switch adds the links to each device */
    uint32_t hosts = p->link_present ? p->hosts : 0;
    for (uint32_t h = 0; h < hosts && h < CXL_MAX_HOSTS; h++)
        for (int d = 0; d < 2; d++) {
            snprintf(label, sizeof label, "host %u link %s", h, d ? "S2M" : "M2S");
            snprintf(scope, sizeof scope, "%s.up[%u].%s", m, h, d ? "u_s2m" : "u_m2s");
            group(f, label, scope, link_sigs, N(link_sigs), h == 0);
        }
    if (p->sw.present) {
        snprintf(scope, sizeof scope, "%s.g_sw.u_sw", m);
        group(f, "switch", scope, switch_sigs, N(switch_sigs), 1);
        for (uint32_t d = 0; d < p->devices && d < CXL_MAX_DEVS; d++)
            for (int s = 0; s < 2; s++) {
                snprintf(label, sizeof label, "device %u link %s", d, s ? "S2M" : "M2S");
                snprintf(scope, sizeof scope, "%s.dn[%u].%s", m, d, s ? "u_s2m" : "u_m2s");
                group(f, label, scope, link_sigs, N(link_sigs), d == 0);
            }
    }
    for (uint32_t d = 0; d < p->devices && d < CXL_MAX_DEVS; d++) {
        snprintf(label, sizeof label, "device %u controller", d);
        snprintf(scope, sizeof scope, "%s.dv[%u].u_dev", m, d);
        group(f, label, scope, dev_sigs, N(dev_sigs), d == 0);
        for (uint32_t c = 0; c < p->dram.channels && c < CXL_MAX_CH; c++) {
            snprintf(label, sizeof label, "device %u DRAM channel %u", d, c);
            snprintf(scope, sizeof scope, "%s.dv[%u].u_dev.u_dram.g_ch[%u].ch.u_ch", m, d, c);
            group(f, label, scope, chan_sigs, N(chan_sigs), d == 0 && c == 0);
        }
    }
    if (fclose(f) || !buf) {
        free(buf);
        return cxl_errf(err, CXL_ENOMEM, "out of memory for the GTKWave save file");
    }
    *text = buf;
    *len = n;
    return 0;
}
