/* report_json.c - JSON objects shared by the reports (report_json.h). */
#include "cli/report_json.h"

void report_json_lat(json_w *w, const char *key, const double v[4])
{
    json_obj_begin(w, key);
    json_num(w, "mean", v[0]);
    json_num(w, "p50", v[1]);
    json_num(w, "p99", v[2]);
    json_num(w, "max", v[3]);
    json_obj_end(w);
}

void report_json_devload(json_w *w, const double v[4])
{
    static const char *const dl[4] = { "light", "optimal", "moderate", "severe" };
    json_obj_begin(w, "devload");
    for (int k = 0; k < 4; k++)
        json_num(w, dl[k], v[k]);
    json_obj_end(w);
}
