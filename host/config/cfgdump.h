/* cfgdump.h - write a bound configuration back as YAML: every field of a cfg_field table (cfg.h) with
 * the value the program will use, after `extends`, overrides and defaults.
 *
 * Values print exactly and in a form the loader reads back to the same value: times in the largest of
 * ps, ns, us, ms, s that divides them, rates in GT/s or MT/s, frequencies in GHz, MHz or kHz, sizes in
 * the binary (KiB..TiB) or decimal (KB..TB) unit that divides them to the smaller number, bandwidths
 * in decimal units per second, reals with the fewest digits that read back to the same double, strings quoted.
 * Fields of type CFG_T_CUSTOM go to the caller's hook, which may print nothing.
 *
 * The text is canonical (fixed key order, fixed number format), so its hash names a configuration:
 * cfgdump_fnv1a64() is the 64-bit FNV-1a hash (offset basis 14695981039346656037, prime 1099511628211).
 */
#ifndef CXLSIM_CFGDUMP_H
#define CXLSIM_CFGDUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/cfg.h"

/* Print a CFG_T_CUSTOM field f whose storage is at dst (base + f->offset), indented by indent spaces. */
typedef void (*cfgdump_custom_fn)(FILE *out, const cfg_field *f, const void *dst, int indent, void *ctx);

/* Print every field of the table at base; nested maps indent by two more spaces. */
void cfgdump_fields(FILE *out, const cfg_field *fields, const void *base, int indent, cfgdump_custom_fn custom,
                    void *ctx);
/* One scalar of the given type (not MAP or CUSTOM) at dst, as cfgdump_fields prints it, into buf. */
void cfgdump_value(const cfg_field *f, const void *dst, char *buf, size_t sz);
/* A string as a double-quoted YAML scalar into buf (cut to fit). */
void cfgdump_quote(const char *s, char *buf, size_t sz);

/* One field whose value differs from its default: key with the caller's prefix ("training.tp"), both as
 * cfgdump_value prints them. */
typedef void (*cfgdump_diff_fn)(void *ctx, const char *key, const char *value, const char *dflt);
/* Call fn, in table order, for each scalar field whose value at obj prints differently from the same
 * field at dflt (an object of the same table holding the defaults); nested maps recurse with "key."
 * added to prefix; CUSTOM fields and required fields (no default) are left out. */
void cfgdump_diff(const cfg_field *fields, const void *obj, const void *dflt, const char *prefix, cfgdump_diff_fn fn,
                  void *ctx);

uint64_t cfgdump_fnv1a64(const void *data, size_t len);

#endif
