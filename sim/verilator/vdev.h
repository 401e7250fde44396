/* vdev.h - a simulated card: the verilated RTL kernel (vkernel.h), the host memory it reaches through
 * its AXI master (axi_mem.h) and the host's AXI4-Lite access to its control registers (axi_lite.h),
 * clocked together. The host uses it as it would use an FPGA through XRT: allocate buffers, fill them,
 * write the argument registers, start, wait for ap_done, read the buffers back.
 *
 * Errors: functions return 0 or a negative VK_E* code (vkernel.h), and vdev_error() says what happened
 * (an RTL assertion with its model cycle and unit, a bus error, a kernel that never finishes).
 * Cost: one kernel clock is two evals of the verilated design; clocks in which neither port is busy run
 * inside the harness without returning to C.
 */
#ifndef CXLSIM_VDEV_H
#define CXLSIM_VDEV_H

#include <stddef.h>
#include <stdint.h>

#include "vkernel.h"

typedef struct vdev vdev;

/* A card with `mem_bytes` of memory; o: the kernel's options (FST waveform file, the configuration's sizes,
 * which choose the kernel build: vkernel.h), NULL for none. msg gets the reason on failure (cap bytes). */
int vdev_open(const vkernel_opts *o, uint64_t mem_bytes, vdev **out, char *msg, size_t cap);
void vdev_close(vdev *d);
/* A buffer in card memory: its device address (4 KiB aligned), 0 when memory is exhausted. */
uint64_t vdev_alloc(vdev *d, uint64_t bytes);
/* The host's view of a buffer (NULL outside the memory). */
void *vdev_map(vdev *d, uint64_t addr, uint64_t bytes);
int vdev_reg_write(vdev *d, uint32_t addr, uint32_t value);
int vdev_reg_read(vdev *d, uint32_t addr, uint32_t *value);
int vdev_reg_write64(vdev *d, uint32_t addr, uint64_t value);
/* Set ap_start and wait until the kernel reports ap_done (by its interrupt; ap_done is then read and the
 * interrupt status cleared). max_clocks bounds the wait (0: no bound). */
int vdev_run(vdev *d, uint64_t max_clocks);
uint64_t vdev_clocks(const vdev *d);
/* The kernel build the card runs (its hw/rtl/builds.txt name: vkernel_build). */
const char *vdev_build(const vdev *d);
/* Make the card's memory break the AXI protocol (AXI_FAULT_* of axi_mem.h, 0: none); for tests. */
void vdev_inject(vdev *d, uint32_t fault);
const char *vdev_error(const vdev *d);

#endif
