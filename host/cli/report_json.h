/* report_json.h - JSON objects that more than one report writes (json.h). */
#ifndef CXLSIM_REPORT_JSON_H
#define CXLSIM_REPORT_JSON_H

#include "out/json.h"

/* key: {"mean": v[0], "p50": v[1], "p99": v[2], "max": v[3]} */
void report_json_lat(json_w *w, const char *key, const double v[4]);
/* "devload": {"light": v[0], "optimal": v[1], "moderate": v[2], "severe": v[3]}, the share of responses
 * at each CXL DevLoad level */
void report_json_devload(json_w *w, const double v[4]);

#endif
