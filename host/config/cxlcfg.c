/* cxlcfg.c - the `cxl:` section of an experiment: schema table, defaults, the device, the checks. */
#define _POSIX_C_SOURCE 200809L
#include "config/cxlcfg.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cxl/backend.h"

typedef unsigned long long ull;

const char *const cxlcfg_memory_names[] = { "none", "per-node", "pool", NULL };
const char *const cxlcfg_opt_names[] = { "none", "cpu", "gpu", NULL };
const char *const cxlcfg_scope_names[] = { "all", "experts", NULL };
static const char *const path_names[] = { "p2p", "switch", NULL };

#define C(f) offsetof(cxlcfg, f)
/* Order = CXLCFG_F_* */
static const cfg_field fields[] = {
    { "memory", CFG_T_ENUM, C(memory), 0, 1, 0, cxlcfg_memory_names, NULL, 0, NULL,
      "none, per-node (expanders on each node's root ports) or pool (devices behind a CXL switch shared by "
      "switch.hosts nodes)" },
    { "device", CFG_T_STRING, C(device_name), 0, 1, 0, NULL, NULL, 256, NULL,
      "a device preset (cxlsim presets devices, e.g. asic, pool-2x2) or a device file" },
    { "backend", CFG_T_STRING, C(backend), 0, 1, 0, NULL, NULL, 16, NULL, "the CXL.mem backend, e.g. csim" },
    { "gpu_path", CFG_T_ENUM, C(gpu_path), 0, 1, 0, path_names, NULL, 0, NULL,
      "p2p (PCIe peer-to-peer through the root complex) or switch (through the pool's CXL switch)" },
    { "gpu_path_bandwidth", CFG_T_BW, C(gpu_path_bw_bps), 0, 1e6, 1e13, NULL, NULL, 0, NULL,
      "per GPU and direction, e.g. 31.5GB/s (PCIe Gen4 x16) or 63GB/s (Gen5 x16)" },
    { "gpu_path_latency", CFG_T_TIME, C(gpu_path_latency_ps), 0, 0, 1e9, NULL, NULL, 0, NULL,
      "one way, GPU to the host port, e.g. 1us" },
    { "capacity", CFG_T_SIZE, C(capacity_bytes), 0, 0, 1ull << 50, NULL, NULL, 0, NULL,
      "per device, e.g. 256GiB; 0 = the DRAM geometry of the device description" },
    { "offload_optimizer", CFG_T_ENUM, C(offload_optimizer), 0, 1, 0, cxlcfg_opt_names, NULL, 0, NULL,
      "none, cpu (ZeRO-Offload: the step on the CPU) or gpu (states streamed through the GPU)" },
    { "offload_activations", CFG_T_BOOL, C(offload_activations), 0, 1, 0, NULL, NULL, 0, NULL,
      "activation checkpoints to CXL instead of recomputation" },
    { "offload_parameters", CFG_T_BOOL, C(offload_parameters), 0, 1, 0, NULL, NULL, 0, NULL,
      "16-bit parameters in CXL, prefetched layer by layer (ZeRO-Infinity); needs offload_optimizer" },
    { "cpu_adam_rate", CFG_T_DOUBLE, C(cpu_adam_rate), 0, 1e6, 1e13, NULL, NULL, 0, NULL,
      "CPU optimizer throughput per node, parameters per second, e.g. 2e9" },
    { "xclbin", CFG_T_STRING, C(xclbin), 0, 1, 0, NULL, NULL, 512, NULL,
      "backend xrt: the FPGA image built by hw/fpga/build.sh, relative to this file's folder" },
    { "card", CFG_T_STRING, C(card), 0, 1, 0, NULL, NULL, 32, NULL,
      "backend xrt: the card's index (0, 1, ...) or PCIe BDF (e.g. 0000:3b:00.1)" },
    { "offload_scope", CFG_T_ENUM, C(offload_scope), 0, 1, 0, cxlcfg_scope_names, NULL, 0, NULL,
      "all (every parameter's optimizer state and weights) or experts (only the routed experts' of an MoE "
      "model; the dense part stays in HBM)" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static void defaults(void *obj)
{
    cxlcfg *c = obj;
    memset(c, 0, sizeof *c);
    c->memory = CXLCFG_NONE;
    snprintf(c->backend, sizeof c->backend, "csim");
    c->gpu_path = CXLCFG_PATH_P2P;
    /* [F] PCIe Gen4 x16 ~31.5 GB/s per direction (A100); set 63GB/s for Gen5 (H100)
     * (docs/references.md "GPUs and clusters"). */
    c->gpu_path_bw_bps = 31500000000ull;
    /* knob: DMA setup + PCIe + root complex, one way; no public figure for the whole path. */
    c->gpu_path_latency_ps = 1000000;
    c->capacity_bytes = 0;              /* derived from the device's DRAM geometry */
    c->offload_optimizer = CXLCFG_OPT_NONE;
    /* knob: parameters per second per node for the CPU optimizer step. Ren et al. (ZeRO-Offload, USENIX
     * ATC'21, arXiv 2101.06840) wrote CPU-Adam (SIMD, tiled, multi-threaded) for this step; DeepSpeed's
     * maintainers quote up to 6x the throughput of torch.optim.Adam on the CPU (microsoft/DeepSpeed#479).
     * No parameters-per-second figure was found to cite; 2e9 is a magnitude for a two-socket server. */
    c->cpu_adam_rate = 2e9;
}

const compose_kind cxlcfg_kind = {
    "cxl", NULL, fields, defaults, offsetof(cxlcfg, loc), offsetof(cxlcfg, ref),
    offsetof(cxlcfg, source), sizeof((cxlcfg *)0)->source, 0, NULL,
};

void cxlcfg_none(cxlcfg *c)
{
    defaults(c);
    snprintf(c->source, sizeof c->source, "(none)");
}

uint64_t cxlcfg_device_capacity(const devcfg *d)
{
    /* Through the model's parameters: they fill the geometry a description leaves at 0 from the speed bin
     * and count a DDR5 DIMM channel as its two subchannels, each with its own row buffer (row_size is
     * per subchannel), so the capacity is the address space the model serves. */
    cxl_params p;
    cxl_err e;
    if (devcfg_to_params(d, &p, &e))
        return 0;
    const cxl_dram_params *r = &p.dram;
    return (uint64_t)r->channels * r->ranks * r->bankgroups * r->banks * r->rows * r->columns * CXL_LINE_BYTES;
}

/* Where field f was written, or the section's reference when it was not. */
static const cfgloc *at(const cxlcfg *c, int f)
{
    return c->loc[f].line ? &c->loc[f] : &c->ref;
}

static int check_backend(const cxlcfg *c, cxl_err *err)
{
    const char *const *names = cxl_backend_names();
    char valid[256] = "";
    size_t len = 0;
    for (size_t i = 0; names[i]; i++) {
        if (!strcmp(names[i], c->backend))
            return 0;
        int w = snprintf(valid + len, sizeof valid - len, "%s%s", i ? ", " : "", names[i]);
        if (w > 0 && (size_t)w < sizeof valid - len)
            len += (size_t)w;
    }
    return cfgloc_errf(err, at(c, CXLCFG_F_BACKEND), "cxl.backend: unknown backend '%s'; valid: %s", c->backend,
                       valid);
}

/* The folder of the file that wrote `device:` (compose.h's rule: relative to the naming file), else
 * exp_dir (the key inherited from text that is not a file, or not written at all). */
static void device_dir(const cxlcfg *c, int field, const char *exp_dir, char *buf, size_t sz)
{
    const char *f = c->loc[field].file;
    const char *slash = strrchr(f, '/');
    if (f[0] && f[0] != '<') {
        snprintf(buf, sz, "%.*s", slash ? (int)(slash - f + 1) : 0, f);
        return;
    }
    size_t n = exp_dir ? strlen(exp_dir) : 0;
    snprintf(buf, sz, "%s%s", n ? exp_dir : "", n && exp_dir[n - 1] != '/' ? "/" : "");
}

static int load_device(cxlcfg *c, const char *exp_dir, cxl_err *err)
{
    const char *name = c->device_name;
    char presets[768];
    compose_preset_list("devices", name, presets, sizeof presets);
    if (!name[0])
        return cfgloc_errf(err, at(c, CXLCFG_F_MEMORY), "cxl.device: memory %s needs a device: a preset or a device "
                           "file; %s", cxlcfg_memory_names[c->memory], presets);
    char dir[512], path[1024];
    device_dir(c, CXLCFG_F_DEVICE, exp_dir, dir, sizeof dir);
    snprintf(path, sizeof path, "%s%s", name[0] == '/' ? "" : dir, name);
    /* A file first (as compose.c does), then a preset. The device's own errors carry its file:line:col. */
    c->device_path[0] = '\0';
    if (access(path, R_OK) == 0) {
        snprintf(c->device_path, sizeof c->device_path, "%s", path);
        return devcfg_load(path, &c->dev, err);
    }
    if (devcfg_preset_text(name) && !strchr(name, '/'))
        return devcfg_load(name, &c->dev, err);
    return cfgloc_errf(err, at(c, CXLCFG_F_DEVICE),
                       "cxl.device: unknown device '%s': no file '%s' and no preset of that name; %s", name,
                       path, presets);
}

int cxlcfg_check_model(const cxlcfg *c, uint64_t experts, const char *model, cxl_err *err)
{
    if (c->offload_scope != CXLCFG_SCOPE_EXPERTS || experts)
        return 0;
    return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_SCOPE), "cxl.offload_scope: experts needs a mixture-of-experts "
                       "model, but model '%s' has no routed experts (experts 0); use offload_scope: all, or an "
                       "MoE model (e.g. deepseek-v3, mixtral-8x7b)", model);
}

int cxlcfg_finish(cxlcfg *c, uint64_t nodes, const char *exp_dir, cxl_err *err)
{
    int rc = check_backend(c, err);
    if (rc)
        return rc;
    if (c->xclbin[0]) {
        char dir[512];
        device_dir(c, CXLCFG_F_XCLBIN, exp_dir, dir, sizeof dir);
        snprintf(c->xclbin_path, sizeof c->xclbin_path, "%s%s", c->xclbin[0] == '/' ? "" : dir, c->xclbin);
    }
    const char *mem = cxlcfg_memory_names[c->memory];
    if (c->memory == CXLCFG_NONE) {
        c->pool_nodes = 0;
        c->devices = 0;
        if (c->offload_optimizer != CXLCFG_OPT_NONE)
            return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_OPT), "cxl.offload_optimizer: %s needs CXL memory, but "
                               "memory is none; set memory: per-node or pool, or offload_optimizer: none",
                               cxlcfg_opt_names[c->offload_optimizer]);
        if (c->offload_parameters)
            return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_PARAMS), "cxl.offload_parameters: needs CXL memory, but "
                               "memory is none; set memory: per-node or pool");
        if (c->offload_activations)
            return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_ACT), "cxl.offload_activations: needs CXL memory, but "
                               "memory is none; set memory: per-node or pool");
    }
    if (c->gpu_path == CXLCFG_PATH_SWITCH && c->memory != CXLCFG_POOL)
        return cfgloc_errf(err, at(c, CXLCFG_F_GPU_PATH), "cxl.gpu_path: switch reaches the device through the "
                           "pool's CXL switch and needs memory: pool (memory is %s); use gpu_path: p2p", mem);
    if (c->offload_parameters && c->offload_optimizer == CXLCFG_OPT_NONE)
        return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_PARAMS), "cxl.offload_parameters: needs offload_optimizer "
                           "cpu or gpu (ZeRO-Infinity offloads parameters together with the optimizer states); "
                           "offload_optimizer is none");
    if (c->offload_scope == CXLCFG_SCOPE_EXPERTS && c->offload_optimizer == CXLCFG_OPT_NONE && !c->offload_parameters)
        return cfgloc_errf(err, at(c, CXLCFG_F_OFFLOAD_SCOPE), "cxl.offload_scope: experts selects the routed "
                           "experts' part of offload_optimizer and offload_parameters, but neither is set; set "
                           "offload_optimizer: cpu or gpu, or offload_scope: all");
    if (c->memory == CXLCFG_NONE)
        return 0;

    rc = load_device(c, exp_dir, err);
    if (rc)
        return rc;
    const devcfg *d = &c->dev;
    if (d->path == DEVCFG_PATH_LOCAL)
        return cfgloc_errf(err, at(c, CXLCFG_F_DEVICE), "cxl.device: '%s' is a local-DDR path (path: local), not "
                           "CXL memory: it has no CXL link; use a CXL device (e.g. asic, cz120, pool-2x2)", d->name);
    const cfgloc *mloc = at(c, CXLCFG_F_MEMORY);
    if (c->memory == CXLCFG_PER_NODE && d->sw.present && d->sw.hosts > 1)
        return cfgloc_errf(err, mloc, "cxl.memory: per-node needs a device with one host; '%s' is a switch shared "
                           "by %llu hosts (switch.hosts); use memory: pool, or a device with one host (asic, "
                           "asic-switch)", d->name, (ull)d->sw.hosts);
    if (c->memory == CXLCFG_POOL) {
        if (!d->sw.present)
            return cfgloc_errf(err, mloc, "cxl.memory: pool needs a device behind a CXL switch; '%s' has none "
                               "(try pool-2x2)", d->name);
        if (d->sw.hosts > CXL_MAX_HOSTS)
            return cfgloc_errf(err, mloc, "cxl.memory: the pool of '%s' has %llu hosts; the model supports at most "
                               "%u", d->name, (ull)d->sw.hosts, CXL_MAX_HOSTS);
        if (nodes % d->sw.hosts) {
            uint64_t h = d->sw.hosts, lo = nodes / h * h, hi = lo + h;
            if (!lo)
                lo = hi, hi += h;
            return cfgloc_errf(err, mloc, "cxl.memory: cluster.nodes %llu is not a multiple of the pool's %llu hosts "
                               "(device '%s', switch.hosts); use a multiple (e.g. %llu or %llu nodes) or another "
                               "device", (ull)nodes, (ull)h, d->name, (ull)lo, (ull)hi);
        }
    }
    c->pool_nodes = c->memory == CXLCFG_POOL ? (uint32_t)d->sw.hosts : 1;
    c->devices = d->sw.present ? (uint32_t)d->sw.devices : 1;
    if (!c->capacity_bytes) {
        c->capacity_bytes = cxlcfg_device_capacity(d);
        if (!c->capacity_bytes)
            return cfgloc_errf(err, at(c, CXLCFG_F_CAPACITY), "cxl.capacity: the DRAM geometry of device '%s' is "
                               "outside the model's bounds, so no capacity follows from it; give capacity "
                               "(e.g. 256GiB)", d->name);
    }
    return 0;
}
