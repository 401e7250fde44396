/* cxl_params.h - everything the cycle-level CXL.mem model is told, in model cycles and integers.
 *
 * The host converts a device description (physical units) into this struct once (host/config/devcfg.c);
 * the model never sees a nanosecond. One model cycle is one DRAM command-clock cycle (tCK) of the
 * device's DRAM; every other unit runs on that clock, with rates kept exact by integer accumulators
 * (see docs/cxl-model.md, "Clock domains"). Sizes are bounded by the CXL_MAX_* constants so the model
 * has fixed-size state (HLS: no malloc).
 */
#ifndef CXL_PARAMS_H
#define CXL_PARAMS_H

#include <stdint.h>

#define CXL_LINE_BYTES 64u
#define CXL_MAX_REQ 16u        /* requester ports */
#define CXL_MAX_TAGS 256u      /* outstanding requests per requester (CXL tags are 16-bit; HW bound) */
#define CXL_DESCQ 16u          /* descriptors queued per requester */
#define CXL_MAX_HOSTS 4u       /* host ports (root ports / switch upstream ports) */
#define CXL_MAX_DEVS 4u        /* devices behind a switch */
#define CXL_MAX_CH 4u          /* DRAM controller channels per device (a DDR5 DIMM channel is 2) */
#define CXL_MAX_BANKS 64u      /* ranks x bank groups x banks per channel */
#define CXL_MAX_RANKS 4u
#define CXL_MAX_DRAMQ 64u      /* DRAM read / write queue entries per channel */
#define CXL_MAX_INGRESS 128u   /* device ingress queue entries per class */
#define CXL_MAX_RSPQ 128u      /* device response queue entries */
#define CXL_MAX_FIFO 256u      /* fixed-latency pipe entries */
#define CXL_MAX_FLIGHT 64u     /* flits in flight per link direction */
#define CXL_MAX_DELAY 4096u    /* largest credit_return_cycles accepted */
#define CXL_HIST_LINEAR 16384u /* latency histogram: one bin per cycle below this */
#define CXL_HIST_LOG 16u       /* then power-of-two bins */
#define CXL_MAX_TIMING 16383u  /* largest DRAM timing but tREFI, in cycles: the RTL's timing counters are
                                  16 bits and the longest count adds four timings (hw/rtl/dram_timing.v) */

enum cxl_dram_std { CXL_DDR4 = 0, CXL_DDR5 = 1 };
enum cxl_row_policy { CXL_ROW_OPEN = 0, CXL_ROW_CLOSED = 1 };
enum cxl_sched { CXL_SCHED_FRFCFS = 0, CXL_SCHED_FCFS = 1 };
enum cxl_refresh { CXL_REF_OFF = 0, CXL_REF_ALL_BANK = 1, CXL_REF_SAME_BANK = 2 };
enum cxl_arb { CXL_ARB_RR = 0, CXL_ARB_AGE = 1 };
/* Address-mapping fields; the mapping lists them from least to most significant above the 64 B offset. */
enum cxl_map_field { CXL_MAP_CH = 0, CXL_MAP_RANK, CXL_MAP_BG, CXL_MAP_BANK, CXL_MAP_ROW, CXL_MAP_COL, CXL_MAP_NFIELDS };

typedef struct cxl_dram_params {
    uint32_t std;                  /* enum cxl_dram_std */
    uint32_t channels, ranks, bankgroups, banks; /* banks = per bank group */
    uint32_t rows, columns;        /* columns = 64 B bursts per row */
    uint8_t map[CXL_MAP_NFIELDS];  /* field order, least significant first */
    uint32_t bits[CXL_MAP_NFIELDS];/* log2 of each field's size (derived) */
    /* Timing, in DRAM clock cycles. tBL = clocks of one 64 B burst on the data bus. */
    uint32_t tRCD, tCL, tRP, tRAS, tRC, tCWL, tWR, tRTP, tBL;
    uint32_t tCCD_S, tCCD_L, tCCD_S_WR, tCCD_L_WR, tRRD_S, tRRD_L, tFAW, tWTR_S, tWTR_L, tRTW;
    uint32_t tREFI, tRFC;          /* all-bank refresh interval and REFab duration */
    uint32_t tRFCsb;               /* DDR5 same-bank refresh (REFsb) duration */
    uint32_t refresh;              /* enum cxl_refresh */
    uint32_t read_queue, write_queue, wdrain_high, wdrain_low;
    uint32_t row_policy, scheduler;
    uint32_t bank_hash;            /* 1: XOR-fold the row into the bank-group and bank bits */
} cxl_dram_params;

typedef struct cxl_link_params {
    uint32_t flit_bytes;           /* 68 (256 reserved for 256 B flit mode) */
    uint64_t flit_cost, flit_inc;  /* a flit takes flit_cost / flit_inc cycles on the wire (link.h) */
    uint32_t ser_cycles;           /* ceil(flit_cost / flit_inc): serialization of one flit */
    uint32_t phy_cycles;           /* PHY + retimer + link-layer latency, one direction */
    uint32_t credit_return_cycles; /* from the receiver freeing a buffer to the sender seeing the credit */
    /* Credit pools the receiver advertises, per class (spec: ReqCrd, DataCrd, RspCrd). */
    uint32_t m2s_req_credits, m2s_data_credits; /* device ingress: M2S Req, M2S RwD */
    uint32_t s2m_data_credits, s2m_rsp_credits; /* host: S2M DRS, S2M NDR */
} cxl_link_params;

typedef struct cxl_ctrl_params {
    uint32_t req_latency_cycles;   /* CXL.mem processing from ingress to DRAM queue */
    uint32_t rsp_latency_cycles;   /* from DRAM completion to the S2M transmit queue */
    uint32_t ingress_depth;        /* per class (Req, RwD); the credits advertised are at most this */
    uint32_t response_depth;
    uint32_t devload_optimal, devload_moderate, devload_severe; /* ingress occupancy thresholds, entries */
} cxl_ctrl_params;

typedef struct cxl_switch_params {
    uint32_t present;
    uint32_t hop_cycles;           /* one traversal, either direction */
    uint32_t port_queue;           /* credits per class at each switch ingress; egress queue entries */
    uint32_t arbitration;          /* enum cxl_arb */
    uint32_t interleave_shift;     /* devices interleaved on address bits [shift, shift + dev_bits) */
    uint32_t dev_bits;             /* log2(devices) */
    uint32_t ld_shift;             /* partitioned pool: LD-ID placed at this device address bit; 0 = shared */
} cxl_switch_params;

typedef struct cxl_params {
    uint32_t clk_khz;              /* model clock = DRAM command clock */
    uint32_t link_present;         /* 0: local-DDR reference path (no link, no device controller) */
    uint32_t hosts, devices, requesters;
    uint32_t tags;                 /* per requester */
    uint32_t req_host[CXL_MAX_REQ];/* host port of each requester (LD-ID when pooled) */
    uint32_t host_req_cycles;      /* requester to root port (or to the local memory controller) */
    uint32_t host_rsp_cycles;      /* root port (or local controller) back to the requester */
    cxl_link_params link;
    cxl_switch_params sw;
    cxl_ctrl_params ctrl;
    cxl_dram_params dram;
} cxl_params;

#endif
