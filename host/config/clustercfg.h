/* clustercfg.h - the cluster a job runs on, as written in configs/clusters/: nodes of GPUs joined by
 * NVLink/NVSwitch, NICs per node and their speed, the network topology, latencies. Bandwidths are bytes
 * per second per direction (a 400 Gb/s NIC is 50GB/s); times are integer picoseconds. An NVLink domain may
 * span several nodes (nvlink_domain: GB200 NVL72's 18 trays of 4 GPUs); the NICs stay per node.
 * clustercfg_load() takes a preset name or a file; experiments reference clusters through compose.h. */
#ifndef CXLSIM_CLUSTERCFG_H
#define CXLSIM_CLUSTERCFG_H

#include <stdint.h>

#include "config/compose.h"
#include "util/err.h"

enum clustercfg_intra { CLUSTERCFG_NVSWITCH = 0, CLUSTERCFG_NVLINK_RING = 1 };
enum clustercfg_topo { CLUSTERCFG_FAT_TREE = 0, CLUSTERCFG_RAIL_OPTIMIZED = 1 };
enum clustercfg_cpu { CLUSTERCFG_CPU_INTEL = 0, CLUSTERCFG_CPU_AMD = 1 };

enum { CLUSTERCFG_F_NAME, CLUSTERCFG_F_DESCRIPTION, CLUSTERCFG_F_NODES, CLUSTERCFG_F_GPUS_PER_NODE,
       CLUSTERCFG_F_INTRA, CLUSTERCFG_F_NICS, CLUSTERCFG_F_NIC_BW, CLUSTERCFG_F_TOPOLOGY,
       CLUSTERCFG_F_OVERSUB, CLUSTERCFG_F_NVLINK_LAT, CLUSTERCFG_F_NIC_LAT, CLUSTERCFG_F_SWITCH_LAT,
       CLUSTERCFG_F_NVLINK_EFF, CLUSTERCFG_F_NIC_EFF, CLUSTERCFG_F_NCCL_CHANNELS, CLUSTERCFG_F_CPU_VENDOR,
       CLUSTERCFG_F_NVLINK_DOMAIN, CLUSTERCFG_F_HOST_LINK_BW, CLUSTERCFG_F_HOST_MEMORY, CLUSTERCFG_F_HOST_TIME_SCALE,
       CLUSTERCFG_F_HOST_PYTHON_SCALE,
       CLUSTERCFG_NFIELDS };

typedef struct clustercfg {
    char name[64];
    char description[256];
    char source[512];
    uint64_t nodes, gpus_per_node;
    int intra_node;                 /* enum clustercfg_intra */
    uint64_t nics_per_node;
    uint64_t nic_bw_bps;            /* per NIC, per direction */
    int topology;                   /* enum clustercfg_topo */
    double oversubscription;        /* >= 1: leaf down-links / up-links (1 = full bisection) */
    uint64_t nvlink_latency_ps, nic_latency_ps, switch_latency_ps;
    double nvlink_efficiency;       /* fraction of the NVLink per-direction bandwidth collectives reach */
    double nic_efficiency;          /* fraction of the NIC line rate collectives reach */
    uint64_t nccl_channels;         /* NCCL channels (rings) per collective: message sizes and steps */
    int cpu_vendor;                 /* enum clustercfg_cpu: NCCL's tuning model has per-vendor figures */
    uint64_t nvlink_domain;         /* GPUs on one NVLink fabric (GB200 NVL72: 72); 0 = gpus_per_node */
    /* one GPU's copies to and from the CPU's memory, per direction, while every GPU of the node copies
     * (NVLink-C2C on GB200, PCIe on x86 nodes); 0 = not given (training.cpu_offload_layers needs it) */
    uint64_t host_link_bw_bps;
    uint64_t host_memory_bytes;     /* the CPUs' memory per node; 0 = not given (not checked) */
    /* the framework's host time (training.host_gemm, host_gemm_mxfp8, host_module) on these nodes' CPUs over
     * that on a DGX's x86 host (Xeon Platinum 8480C), where it was measured; 1 = the same */
    double host_time_scale;
    /* Megatron-Core's own Python (training.host_moe_router, host_moe_expert, host_moe_dispatch: interpreter
     * and PyTorch dispatch, the CUDA calls in it priced apart) on these nodes' CPUs over a DGX's x86 host;
     * 0 = host_time_scale (the same factor for all host time) */
    double host_python_scale;
    cfgloc loc[CLUSTERCFG_NFIELDS];
    cfgloc ref;
} clustercfg;

extern const compose_kind clustercfg_kind;

int clustercfg_load(const char *name_or_path, clustercfg *out, cxl_err *err);
/* nodes x gpus_per_node */
uint64_t clustercfg_gpus(const clustercfg *c);
/* The GPUs that share one NVLink fabric, as placement sees them: nvlink_domain (gpus_per_node when not
 * given), or all the cluster's GPUs when the job is smaller than one domain (a job of 8 GPUs on an NVL72
 * rack sits in that rack). Consecutive ranks fill a domain before the next, as they fill a node. Groups
 * whose ranks lie in one domain talk over NVLink, the rest over the NICs (train_setup.c setup_groups). */
uint64_t clustercfg_domain(const clustercfg *c);
/* 0, or CXL_ECONFIG at the nvlink_domain key when it is not a multiple of gpus_per_node, or when the
 * cluster's GPUs are more than one domain and not a whole number of domains; the message names the valid
 * values nearest the one given. */
int clustercfg_check_domain(const clustercfg *c, cxl_err *err);

/* The factor of Megatron-Core's Python on the host (training.host_moe_*): host_python_scale, or where it is 0
 * host_time_scale */
double clustercfg_python_scale(const clustercfg *c);

#endif
