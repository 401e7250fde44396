/* sweepexpr.c - a sweep's filter: recursive descent over the text, evaluated as it is parsed. */
#include "explore/sweepexpr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct px {
    const char *s;          /* the next character */
    const char *start;
    sweepexpr_lookup_fn look;
    void *ctx;
    char *why;
    size_t whysz;
    int depth;
    int failed;
} px;

static double fail(px *p, const char *what)
{
    if (!p->failed)
        snprintf(p->why, p->whysz, "%s at character %d", what, (int)(p->s - p->start) + 1);
    p->failed = 1;
    return 0;
}

static void skip(px *p)
{
    while (isspace((unsigned char)*p->s))
        p->s++;
}

/* Consume op when it comes next (and is not the start of a longer operator given in not_before). */
static int eat(px *p, const char *op, const char *not_before)
{
    skip(p);
    size_t n = strlen(op);
    if (strncmp(p->s, op, n) || (not_before && p->s[n] && strchr(not_before, p->s[n])))
        return 0;
    p->s += n;
    return 1;
}

static double parse_or(px *p);

static double atom(px *p)
{
    skip(p);
    if (eat(p, "(", NULL)) {
        double v = parse_or(p);
        if (!eat(p, ")", NULL))
            return fail(p, "expected ')'");
        return v;
    }
    const char *s = p->s;
    if (isalpha((unsigned char)*s) || *s == '_') {
        size_t n = 0;
        while (isalnum((unsigned char)s[n]) || s[n] == '_' || s[n] == '.')
            n++;
        double v = 0;
        char why[256];
        if (p->look(p->ctx, s, n, &v, why, sizeof why)) {
            if (!p->failed)
                snprintf(p->why, p->whysz, "%s", why);
            p->failed = 1;
            return 0;
        }
        p->s += n;
        return v;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v))
        return fail(p, *s ? "expected a number, an axis name or '('" : "unexpected end");
    p->s = end;
    return v;
}

static double unary(px *p)
{
    if (++p->depth > SWEEPEXPR_MAX_DEPTH)
        return fail(p, "nested too deeply");
    double v = eat(p, "-", NULL) ? -unary(p) : atom(p);
    p->depth--;
    return v;
}

static double prod(px *p)
{
    double v = unary(p);
    while (!p->failed) {
        if (eat(p, "*", NULL))
            v *= unary(p);
        else if (eat(p, "/", NULL) || eat(p, "%", NULL)) {
            int mod = p->s[-1] == '%';
            double d = unary(p);
            if (d == 0)
                return fail(p, "division by zero");
            v = mod ? fmod(v, d) : v / d;
        } else
            break;
    }
    return v;
}

static double sum(px *p)
{
    double v = prod(p);
    while (!p->failed) {
        if (eat(p, "+", NULL))
            v += prod(p);
        else if (eat(p, "-", NULL))
            v -= prod(p);
        else
            break;
    }
    return v;
}

static double cmp(px *p)
{
    double a = sum(p);
    if (eat(p, "<=", NULL))
        return a <= sum(p);
    if (eat(p, ">=", NULL))
        return a >= sum(p);
    if (eat(p, "==", NULL))
        return a == sum(p);
    if (eat(p, "!=", NULL))
        return a != sum(p);
    if (eat(p, "<", NULL))
        return a < sum(p);
    if (eat(p, ">", NULL))
        return a > sum(p);
    return a;
}

static double parse_not(px *p)
{
    if (eat(p, "!", "=")) {
        if (++p->depth > SWEEPEXPR_MAX_DEPTH)
            return fail(p, "nested too deeply");
        double v = parse_not(p) == 0;
        p->depth--;
        return v;
    }
    return cmp(p);
}

static double parse_and(px *p)
{
    double v = parse_not(p);
    while (!p->failed && eat(p, "&&", NULL)) {
        double w = parse_not(p);   /* always parsed: a syntax error is an error on every point */
        v = v != 0 && w != 0;
    }
    return v;
}

static double parse_or(px *p)
{
    if (++p->depth > SWEEPEXPR_MAX_DEPTH)
        return fail(p, "nested too deeply");
    double v = parse_and(p);
    while (!p->failed && eat(p, "||", NULL)) {
        double w = parse_and(p);
        v = v != 0 || w != 0;
    }
    p->depth--;
    return v;
}

int sweepexpr_eval(const char *expr, sweepexpr_lookup_fn look, void *ctx, double *out, char *why, size_t whysz)
{
    px p = { expr, expr, look, ctx, why, whysz, 0, 0 };
    double v = parse_or(&p);
    skip(&p);
    if (!p.failed && *p.s)
        fail(&p, "unexpected text");
    if (p.failed)
        return -1;
    *out = v;
    return 0;
}
