/* json.h - a small streaming JSON writer with deterministic number formatting, writing into a growable
 * buffer (the caller decides where the bytes go; see outfile.h). Doubles print with %.10g; non-finite
 * values print as null. Nesting is tracked so commas and indentation come out right. */
#ifndef CXLSIM_JSON_H
#define CXLSIM_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct json_w {
    char *buf;
    size_t len, cap;
    int depth;
    int first[32];   /* first member at each depth */
    int oom;
} json_w;

void json_init(json_w *w);
void json_free(json_w *w);
void json_obj_begin(json_w *w, const char *key);  /* key NULL inside arrays / at top */
void json_obj_end(json_w *w);
void json_arr_begin(json_w *w, const char *key);
void json_arr_end(json_w *w);
void json_str(json_w *w, const char *key, const char *v);
void json_num(json_w *w, const char *key, double v);
void json_u64(json_w *w, const char *key, uint64_t v);

#endif
