#include "vdev.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../hw/hls/cxl_kernel_regs.h"

#define VDEV_MEM_BASE 0x10000000ull /* device addresses start here: 0 stays an invalid pointer */
#define VDEV_IDLE_CHUNK 1000000u    /* clocks per vkernel_idle call (bounds the time between max_clocks checks) */

struct vdev {
    vkernel *k;
    axi_mem mem;
    axil_master ctl;
    vk_in in;
    vk_out out;
    char err[1536];
};

static int fail(vdev *d, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(vdev *d, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err, sizeof d->err, fmt, ap);
    va_end(ap);
    return rc;
}

static int kernel_failed(vdev *d, int rc) { return fail(d, rc, "%s", vkernel_error(d->k)); }

/* one clock with both ports answered */
static int step(vdev *d)
{
    axil_drive(&d->ctl, &d->in.ctl);
    axi_mem_drive(&d->mem, &d->in.mem);
    int rc = vkernel_clock(d->k, &d->in, &d->out);
    if (rc)
        return kernel_failed(d, rc);
    axil_update(&d->ctl, &d->in.ctl, &d->out.ctl);
    axi_mem_update(&d->mem, &d->out.mem, &d->in.mem);
    return 0;
}

static int reg_wait(vdev *d, const char *what, uint32_t addr)
{
    while (axil_busy(&d->ctl)) {
        int rc = step(d);
        if (rc)
            return rc;
    }
    if (d->ctl.resp)
        return fail(d, VK_EINTERNAL, "control register %s 0x%02x answered response %u", what, addr, d->ctl.resp);
    return 0;
}

int vdev_reg_write(vdev *d, uint32_t addr, uint32_t value)
{
    axil_write(&d->ctl, addr, value);
    return reg_wait(d, "write", addr);
}

int vdev_reg_write64(vdev *d, uint32_t addr, uint64_t value)
{
    int rc = vdev_reg_write(d, addr, (uint32_t)value);
    return rc ? rc : vdev_reg_write(d, addr + 4, (uint32_t)(value >> 32));
}

int vdev_reg_read(vdev *d, uint32_t addr, uint32_t *value)
{
    axil_read(&d->ctl, addr);
    int rc = reg_wait(d, "read", addr);
    *value = d->ctl.rdata;
    return rc;
}

int vdev_open(const vkernel_opts *o, uint64_t mem_bytes, vdev **out, char *msg, size_t cap)
{
    *out = NULL;
    vdev *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(msg, cap, "out of memory");
        return VK_ENOMEM;
    }
    int rc = vkernel_create(o, &d->k, msg, cap);
    if (rc)
        goto fail_kernel;
    if (axi_mem_init(&d->mem, VDEV_MEM_BASE, mem_bytes)) {
        snprintf(msg, cap, "out of memory for %" PRIu64 " bytes of card memory", mem_bytes);
        rc = VK_ENOMEM;
        goto fail_mem;
    }
    axil_init(&d->ctl);
    /* completion is signalled by the interrupt, so idle clocks run inside the harness until then */
    rc = vdev_reg_write(d, CXLK_GIE, 1);
    if (!rc)
        rc = vdev_reg_write(d, CXLK_IER, 1);
    if (rc) {
        snprintf(msg, cap, "%s", d->err);
        goto fail_regs;
    }
    *out = d;
    return 0;
fail_regs:
    axi_mem_free(&d->mem);
fail_mem:
    vkernel_destroy(d->k);
fail_kernel:
    free(d);
    return rc;
}

void vdev_close(vdev *d)
{
    if (!d)
        return;
    vkernel_destroy(d->k);
    axi_mem_free(&d->mem);
    free(d);
}

uint64_t vdev_alloc(vdev *d, uint64_t bytes) { return axi_mem_alloc(&d->mem, bytes); }
void *vdev_map(vdev *d, uint64_t addr, uint64_t bytes) { return axi_mem_host(&d->mem, addr, bytes); }
uint64_t vdev_clocks(const vdev *d) { return vkernel_clocks(d->k); }
const char *vdev_build(const vdev *d) { return vkernel_build(d->k); }
void vdev_inject(vdev *d, uint32_t fault) { d->mem.fault = fault; }
const char *vdev_error(const vdev *d) { return d->err; }

int vdev_run(vdev *d, uint64_t max_clocks)
{
    uint64_t start = vkernel_clocks(d->k);
    int rc = vdev_reg_write(d, CXLK_CTRL, CXLK_CTRL_START);
    if (rc)
        return rc;
    for (;;) {
        if (max_clocks && vkernel_clocks(d->k) - start > max_clocks)
            return fail(d, VK_EINTERNAL, "the RTL kernel did not finish within %" PRIu64 " clocks (model cycle %" PRIu64 ")",
                        max_clocks, vkernel_model_now(d->k));
        if (axi_mem_quiet(&d->mem)) {
            uint64_t done;
            axil_drive(&d->ctl, &d->in.ctl);
            axi_mem_drive(&d->mem, &d->in.mem);
            uint64_t chunk = VDEV_IDLE_CHUNK, spent = vkernel_clocks(d->k) - start;
            if (max_clocks && max_clocks + 1 - spent < chunk)
                chunk = max_clocks + 1 - spent; /* stop just past the bound */
            rc = vkernel_idle(d->k, &d->in, chunk, &d->out, &done);
            if (rc)
                return kernel_failed(d, rc);
            if (d->out.interrupt)
                break;
        }
        rc = step(d);
        if (rc)
            return rc;
    }
    uint32_t ctrl, isr;
    rc = vdev_reg_read(d, CXLK_CTRL, &ctrl);
    if (!rc)
        rc = vdev_reg_read(d, CXLK_ISR, &isr);
    if (!rc)
        rc = vdev_reg_write(d, CXLK_ISR, isr); /* toggle the set bits back to 0: interrupt low */
    if (rc)
        return rc;
    if (!(ctrl & CXLK_CTRL_DONE))
        return fail(d, VK_EINTERNAL, "the RTL kernel raised its interrupt without ap_done (control 0x%02x)", ctrl);
    if (d->mem.bad)
        return fail(d, VK_EINTERNAL, "the RTL kernel accessed 0x%" PRIx64 ", outside its buffers", d->mem.bad_addr);
    return 0;
}
