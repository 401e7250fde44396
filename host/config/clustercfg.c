/* clustercfg.c - clusters: schema table. */
#include "config/clustercfg.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const intra_names[] = { "nvswitch", "nvlink-ring", NULL };
static const char *const cpu_names[] = { "intel", "amd", NULL };
static const char *const topo_names[] = { "fat-tree", "rail-optimized", NULL };

#define C(f) offsetof(clustercfg, f)
/* Order = CLUSTERCFG_F_* */
static const cfg_field fields[] = {
    { "name", CFG_T_STRING, C(name), 1, 1, 0, NULL, NULL, 64, NULL, "cluster name" },
    { "description", CFG_T_STRING, C(description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "nodes", CFG_T_U64, C(nodes), 1, 1, 1 << 20, NULL, NULL, 0, NULL, "nodes, e.g. 2" },
    { "gpus_per_node", CFG_T_U64, C(gpus_per_node), 1, 1, 64, NULL, NULL, 0, NULL, "GPUs per node, e.g. 8" },
    { "intra_node", CFG_T_ENUM, C(intra_node), 0, 1, 0, intra_names, NULL, 0, NULL,
      "nvswitch (all-to-all) or nvlink-ring" },
    { "nics_per_node", CFG_T_U64, C(nics_per_node), 1, 1, 64, NULL, NULL, 0, NULL,
      "network adapters for compute traffic per node, e.g. 8" },
    { "nic_bandwidth", CFG_T_BW, C(nic_bw_bps), 1, 1, 1e13, NULL, NULL, 0, NULL,
      "per NIC and direction, e.g. 400Gb/s" },
    { "topology", CFG_T_ENUM, C(topology), 0, 1, 0, topo_names, NULL, 0, NULL, "fat-tree or rail-optimized" },
    { "oversubscription", CFG_T_DOUBLE, C(oversubscription), 0, 1, 64, NULL, NULL, 0, NULL,
      "leaf switch down-link to up-link bandwidth ratio, 1 = full bisection" },
    { "nvlink_latency", CFG_T_TIME, C(nvlink_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "per message inside a node, e.g. 1us" },
    { "nic_latency", CFG_T_TIME, C(nic_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "NIC and host overhead per message, one way, e.g. 2us" },
    { "switch_latency", CFG_T_TIME, C(switch_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "one network switch hop, e.g. 200ns" },
    { "nvlink_efficiency", CFG_T_DOUBLE, C(nvlink_efficiency), 0, 0.01, 1, NULL, NULL, 0, NULL,
      "fraction of the GPU's NVLink bandwidth per direction that NCCL collectives reach, e.g. 0.77" },
    { "nic_efficiency", CFG_T_DOUBLE, C(nic_efficiency), 0, 0.01, 1, NULL, NULL, 0, NULL,
      "fraction of the NIC line rate that NCCL collectives reach, e.g. 0.9" },
    { "nccl_channels", CFG_T_U64, C(nccl_channels), 0, 1, 32, NULL, NULL, 0, NULL,
      "NCCL channels per collective (1-32, NCCL 2.19's MAXCHANNELS): ring message sizes and step counts" },
    { "cpu_vendor", CFG_T_ENUM, C(cpu_vendor), 0, 1, 0, cpu_names, NULL, 0, NULL,
      "the nodes' CPU vendor, intel or amd (NCCL's tuning model: LL bandwidth cap and network overhead)" },
    { "nvlink_domain", CFG_T_U64, C(nvlink_domain), 0, 1, 1 << 20, NULL, NULL, 0, NULL,
      "GPUs on one NVLink fabric, a multiple of gpus_per_node (GB200 NVL72: 72); default gpus_per_node" },
    { "host_link_bandwidth", CFG_T_BW, C(host_link_bw_bps), 0, 1e6, 1e13, NULL, NULL, 0, NULL,
      "one GPU's bandwidth to the CPU's memory per direction while all GPUs of a node copy (NVLink-C2C, PCIe), "
      "e.g. 225GB/s; for training.cpu_offload_layers" },
    { "host_memory", CFG_T_SIZE, C(host_memory_bytes), 0, 1, 1e16, NULL, NULL, 0, NULL,
      "the CPUs' memory per node, e.g. 960GB; checked against training.cpu_offload_layers' activations" },
    { "host_time_scale", CFG_T_DOUBLE, C(host_time_scale), 0, 0.01, 100, NULL, NULL, 0, NULL,
      "the framework's host time (training.host_gemm, host_gemm_mxfp8, host_module) on these nodes' CPUs over a "
      "DGX's x86 host, e.g. 2.75 for Grace; default 1" },
    { "host_python_scale", CFG_T_DOUBLE, C(host_python_scale), 0, 0, 100, NULL, NULL, 0, NULL,
      "Megatron-Core's own Python on the host (training.host_moe_router, host_moe_expert, host_moe_dispatch) on "
      "these nodes' CPUs over a DGX's x86 host, e.g. 1.09; 0 (default): host_time_scale" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static void defaults(void *obj)
{
    clustercfg *c = obj;
    memset(c, 0, sizeof *c);
    c->intra_node = CLUSTERCFG_NVSWITCH;
    c->topology = CLUSTERCFG_FAT_TREE;
    c->oversubscription = 1;
    c->nvlink_efficiency = 1;
    c->nic_efficiency = 1;
    c->host_time_scale = 1;
    c->nccl_channels = 8;          /* knob: NCCL picks per topology; NCCL_MIN_NCHANNELS / MAX set it */
}

const compose_kind clustercfg_kind = {
    "cluster", "clusters", fields, defaults, offsetof(clustercfg, loc), offsetof(clustercfg, ref),
    offsetof(clustercfg, source), sizeof((clustercfg *)0)->source, CLUSTERCFG_F_NVLINK_DOMAIN, NULL,
};

int clustercfg_load(const char *name_or_path, clustercfg *out, cxl_err *err)
{
    return compose_load(&clustercfg_kind, name_or_path, out, err);
}

uint64_t clustercfg_gpus(const clustercfg *c) { return c->nodes * c->gpus_per_node; }

uint64_t clustercfg_domain(const clustercfg *c)
{
    uint64_t d = c->nvlink_domain ? c->nvlink_domain : c->gpus_per_node, gpus = clustercfg_gpus(c);
    return d > gpus ? gpus : d;
}

int clustercfg_check_domain(const clustercfg *c, cxl_err *err)
{
    uint64_t d = c->nvlink_domain, gpn = c->gpus_per_node, gpus = clustercfg_gpus(c);
    if (!d || !gpn || (d % gpn == 0 && (gpus <= d || gpus % d == 0)))
        return 0;
    /* the valid domains nearest d: multiples of gpus_per_node that hold the whole job or divide it;
     * O(max(d, gpus) / gpn), at most 2^20 steps (the keys' ranges) */
    uint64_t lo = 0, hi = 0;
    for (uint64_t v = gpn; !hi && v <= (d > gpus ? d : gpus) + gpn; v += gpn)
        if (gpus <= v || gpus % v == 0) {
            if (v <= d)
                lo = v;
            else
                hi = v;
        }
    char valid[96];
    if (lo && hi)
        snprintf(valid, sizeof valid, "%llu or %llu", (unsigned long long)lo, (unsigned long long)hi);
    else
        snprintf(valid, sizeof valid, "%llu", (unsigned long long)(lo ? lo : hi));
    const cfgloc *at = c->loc[CLUSTERCFG_F_NVLINK_DOMAIN].file[0] ? &c->loc[CLUSTERCFG_F_NVLINK_DOMAIN] : &c->ref;
    if (d % gpn)
        return cfgloc_errf(err, at, "cluster.nvlink_domain: %llu GPUs is not a whole number of nodes of %llu GPUs "
                           "(gpus_per_node); an NVLink domain is made of whole nodes; nearest valid: %s",
                           (unsigned long long)d, (unsigned long long)gpn, valid);
    return cfgloc_errf(err, at, "cluster.nvlink_domain: %llu GPUs does not divide the cluster's nodes %llu x "
                       "gpus_per_node %llu = %llu GPUs into whole NVLink domains (a job larger than one domain "
                       "uses whole domains, e.g. 64 of an NVL72 rack's 72 GPUs); nearest valid: %s",
                       (unsigned long long)d, (unsigned long long)c->nodes, (unsigned long long)gpn,
                       (unsigned long long)gpus, valid);
}

double clustercfg_python_scale(const clustercfg *c)
{
    return c->host_python_scale > 0 ? c->host_python_scale : c->host_time_scale;
}
