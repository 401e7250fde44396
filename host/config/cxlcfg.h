/* cxlcfg.h - CXL memory in the cluster and what training offloads to it: the `cxl:` section of an
 * experiment (issue 4).
 *
 *     cxl:
 *       memory: per-node            # per-node: expanders on each node's CPU root ports (one CXL domain
 *                                   #   per node, the device's `switch.hosts` must be 1);
 *                                   # pool: devices behind a CXL switch shared by `switch.hosts` nodes
 *                                   #   (a multi-logical device, one LD-ID per node)
 *       device: asic                # device preset or file (configs/devices/, docs/config.md)
 *       backend: csim               # csim | analytical | verilator | xrt
 *       gpu_path: p2p               # p2p: PCIe peer-to-peer through the root complex; switch: the GPU
 *                                   #   reaches the device through the CXL switch (pool only)
 *       gpu_path_bandwidth: 32GB/s  # per GPU and direction (the GPU's PCIe link)
 *       gpu_path_latency: 1us       # one way, GPU to the host port (DMA setup, PCIe, root complex)
 *       capacity: 0                 # per device; 0 = the DRAM geometry of the device description
 *       offload_optimizer: none     # none | cpu | gpu: optimizer states and fp32 master weights in CXL;
 *                                   #   the step on the CPU (ZeRO-Offload) or streamed through the GPU
 *       offload_activations: false  # activation checkpoints to CXL instead of recomputation
 *       offload_parameters: false   # 16-bit parameters in CXL, prefetched layer by layer (ZeRO-Infinity)
 *       offload_scope: all          # all | experts: what offload_optimizer and offload_parameters move:
 *                                   #   every parameter's state, or only the routed experts' (an MoE model;
 *                                   #   the dense part stays in HBM). Activations are not split by it.
 *       cpu_adam_rate: 2e9          # CPU optimizer throughput per node, parameters per second
 *       xclbin: cxl_kernel.xclbin   # backend xrt: the FPGA image (hw/fpga/build.sh), relative to this file
 *       card: 0                     # backend xrt: card index or PCIe BDF, e.g. 0000:3b:00.1 (default 0)
 *
 * Absent section: memory none (no CXL; nothing offloaded). Loaded by expcfg through compose.h (inline
 * mapping, file, or { extends: FILE, ... }); the device is loaded with devcfg_load, relative paths from
 * the experiment's folder. Checks at load, each a CXL_ECONFIG at the key with the numbers involved:
 * per-node with a device whose switch has more than one host; pool without a switch or with more hosts
 * than the model supports; nodes not a multiple of the pool's hosts; gpu_path switch without a pool;
 * an offload with memory none; offload_parameters without offload_optimizer; a backend name not known
 * (cxl_backend_names); offload_scope experts without offload_optimizer or offload_parameters, or (by
 * cxlcfg_check_model) on a model without routed experts. Whether the backend is built is checked when it
 * is opened (exit 4).
 */
#ifndef CXLSIM_CXLCFG_H
#define CXLSIM_CXLCFG_H

#include <stdint.h>

#include "config/compose.h"
#include "config/devcfg.h"
#include "util/err.h"

enum cxlcfg_memory { CXLCFG_NONE = 0, CXLCFG_PER_NODE = 1, CXLCFG_POOL = 2 };
enum cxlcfg_path { CXLCFG_PATH_P2P = 0, CXLCFG_PATH_SWITCH = 1 };
enum cxlcfg_opt { CXLCFG_OPT_NONE = 0, CXLCFG_OPT_CPU = 1, CXLCFG_OPT_GPU = 2 };
enum cxlcfg_scope { CXLCFG_SCOPE_ALL = 0, CXLCFG_SCOPE_EXPERTS = 1 };

enum { CXLCFG_F_MEMORY, CXLCFG_F_DEVICE, CXLCFG_F_BACKEND, CXLCFG_F_GPU_PATH, CXLCFG_F_GPU_PATH_BW,
       CXLCFG_F_GPU_PATH_LAT, CXLCFG_F_CAPACITY, CXLCFG_F_OFFLOAD_OPT, CXLCFG_F_OFFLOAD_ACT,
       CXLCFG_F_OFFLOAD_PARAMS, CXLCFG_F_CPU_ADAM, CXLCFG_F_XCLBIN, CXLCFG_F_CARD, CXLCFG_F_OFFLOAD_SCOPE,
       CXLCFG_NFIELDS };

typedef struct cxlcfg {
    char source[512];
    int memory;                 /* enum cxlcfg_memory */
    char device_name[256];      /* as written */
    devcfg dev;                 /* loaded (memory != none) */
    char device_path[1024];     /* the device file it was loaded from ("" for a preset) */
    char backend[16];
    int gpu_path;               /* enum cxlcfg_path */
    uint64_t gpu_path_bw_bps;   /* bytes per second per GPU and direction */
    uint64_t gpu_path_latency_ps;
    uint64_t capacity_bytes;    /* per device, after defaulting from the DRAM geometry */
    int offload_optimizer;      /* enum cxlcfg_opt */
    int offload_activations, offload_parameters;
    int offload_scope;          /* enum cxlcfg_scope */
    double cpu_adam_rate;       /* parameters per second per node */
    char xclbin[512];           /* xrt backend: the FPGA image as written ("" none) */
    char xclbin_path[1024];     /* ... resolved from the folder of the file that names it */
    char card[32];              /* xrt backend: card index or PCIe BDF ("" = card 0) */
    uint32_t pool_nodes;        /* nodes sharing one domain: 1 per-node, dev.sw.hosts for a pool */
    uint32_t devices;           /* devices in one domain (dev.sw.devices, or 1) */
    cfgloc loc[CXLCFG_NFIELDS];
    cfgloc ref;
} cxlcfg;

extern const compose_kind cxlcfg_kind;
extern const char *const cxlcfg_memory_names[]; /* "none", "per-node", "pool" */
extern const char *const cxlcfg_opt_names[];    /* "none", "cpu", "gpu" */
extern const char *const cxlcfg_scope_names[];  /* "all", "experts" */

/* Defaults for an experiment without a `cxl:` section (memory none). */
void cxlcfg_none(cxlcfg *c);
/* After binding: load the device, derive capacity / pool_nodes / devices, run the checks above against
 * the cluster's node count. `exp_dir` resolves a relative device path. */
int cxlcfg_finish(cxlcfg *c, uint64_t nodes, const char *exp_dir, cxl_err *err);
/* After cxlcfg_finish, with the model loaded: offload_scope experts needs routed experts (`experts` is the
 * model's count, `model` its name for the message). CXL_ECONFIG at cxl.offload_scope, else 0. */
int cxlcfg_check_model(const cxlcfg *c, uint64_t experts, const char *model, cxl_err *err);
/* Capacity of one device from the DRAM geometry of a device description, in bytes. */
uint64_t cxlcfg_device_capacity(const devcfg *d);

#endif
