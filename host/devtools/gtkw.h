/* gtkw.h - a GTKWave save file for a waveform of the RTL kernel (`cxlsim compare --trace-fst`).
 *
 * The file opens the waveform with the signals that tell what each unit did, one group per unit, in
 * the model's order of a cycle: the kernel (AXI control, interrupt), the model (now, which clocks
 * step), each used requester (submit, issue, response, completion, free descriptor slots), each host
 * port's links (M2S, S2M: flits sent, data flits, slots used, messages, stalls, received, credits), the
 * switch when present, each device controller (ingress space, credit returns, idle, refresh due) and
 * each of its used DRAM channels (the command issued: kind, rank, bank group, bank, row; queue counts,
 * reads in flight, write mode). Groups of units other than the first of a kind start collapsed.
 * Signal names are the RTL's hierarchy as Verilator writes it into the FST (hw/rtl: cxl_kernel.v,
 * cxl_model.v, ...); a rename there shows as a signal GTKWave reports missing, which test cli_compare
 * checks against a real waveform.
 */
#ifndef CXLSIM_GTKW_H
#define CXLSIM_GTKW_H

#include <stddef.h>

#include "../hw/hls/cxl_types.h"
#include "util/err.h"

/* The save file's text for waveform `dumpfile` of a model with parameters p (malloc'd, NUL-terminated;
 * *len without the NUL). CXL_ENOMEM only. */
int gtkw_text(const char *dumpfile, const cxl_params *p, char **text, size_t *len, cxl_err *err);

#endif
