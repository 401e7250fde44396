/* report_probe.h - the result of `cxlsim probe` (probe_result, probe.h) as the text summary, the JSON
 * members after the provenance, and the loaded-latency curves as CSV (README "Commands", "JSON
 * output"). A value nothing measured (NaN) is "n/a" in the text, null in JSON, an empty CSV field. */
#ifndef CXLSIM_REPORT_PROBE_H
#define CXLSIM_REPORT_PROBE_H

#include <stddef.h>
#include <stdio.h>

#include "config/devcfg.h"
#include "out/json.h"
#include "devtools/probe.h"

void report_probe_text(FILE *so, const devcfg *dev, const devcfg *ref, const probe_opts *o, const probe_result *r,
                       double wall);
/* The JSON members from "backend" to "wall_seconds". */
void report_probe_json(json_w *w, const devcfg *dev, const devcfg *ref, const probe_opts *o, const probe_result *r,
                       double wall);
/* The curves as CSV in a new buffer (*csv, the caller frees; NULL when out of memory). */
size_t report_probe_csv(const probe_opts *o, const probe_result *r, char **csv);

#endif
