/* sweepexpr.h - the filter of a sweep (sweep.h): an arithmetic condition over the values of a point's
 * axes, e.g.  training.tp * training.pp <= 64 && training.micro_batch != 4
 *
 *     or   := and ('||' and)*          and  := not ('&&' not)*        not := '!' not | cmp
 *     cmp  := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)?                sum := prod (('+'|'-') prod)*
 *     prod := unary (('*'|'/'|'%') unary)*   unary := '-' unary | atom
 *     atom := NUMBER | NAME | '(' or ')'     NAME: a letter or '_', then letters, digits, '_' and '.'
 *
 * Values are doubles; a comparison or a logical operator gives 1 or 0, and a point is kept when the
 * whole is not 0. A NAME is looked up through the caller (an axis's value: `true`/`false` count as 1 and
 * 0). Evaluation is O(length of the text), recursion bounded by SWEEPEXPR_MAX_DEPTH. Errors (syntax, an
 * unknown name, a value that is not a number, division by zero) return -1 with the reason in why.
 */
#ifndef CXLSIM_SWEEPEXPR_H
#define CXLSIM_SWEEPEXPR_H

#include <stddef.h>

enum { SWEEPEXPR_MAX_DEPTH = 64 };

/* Look a name (name[0..len)) up: 0 with *out set, or -1 with the reason in why. */
typedef int (*sweepexpr_lookup_fn)(void *ctx, const char *name, size_t len, double *out, char *why, size_t whysz);

int sweepexpr_eval(const char *expr, sweepexpr_lookup_fn look, void *ctx, double *out, char *why, size_t whysz);

#endif
