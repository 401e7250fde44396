/* net.c - max-min fair sharing of links among flows, recomputed per connected component. */
#include "train/net.h"

#include "util/grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct nlink {
    double cap;             /* bytes per ps */
    uint32_t *flows;        /* active flows on this link */
    uint32_t nflows, capflows;
    double bytes;           /* carried so far (updated when flows on it are settled) */
    uint32_t mark;          /* component walk stamp */
    /* water-filling scratch */
    double residual;
    uint32_t unfrozen;
} nlink;

typedef struct nflow {
    double remaining, rate;
    int64_t last_ps;
    uint32_t links[NET_MAX_FLOW_LINKS];
    uint32_t nlinks;
    uint32_t owner, version;
    uint32_t mark;
    uint8_t active, frozen, in_changed;
} nflow;

struct net {
    nlink *links;
    uint32_t nlinks, caplinks;
    nflow *flows;
    uint32_t nflows, capflows;
    uint32_t *free_flows;
    uint32_t nfree, capfree;
    uint32_t *changed;
    uint32_t nchanged, capchanged;
    uint32_t stamp;
    /* component scratch */
    uint32_t *comp_links, *comp_flows;
    uint32_t ncl, ncf, capcl, capcf;
    uint64_t started;
};


int net_new(net **out, cxl_err *err)
{
    net *n = calloc(1, sizeof *n);
    if (!n)
        return cxl_errf(err, CXL_ENOMEM, "out of memory (network model)");
    *out = n;
    return 0;
}

void net_free(net *n)
{
    if (!n)
        return;
    for (uint32_t i = 0; i < n->nlinks; i++)
        free(n->links[i].flows);
    free(n->links);
    free(n->flows);
    free(n->free_flows);
    free(n->changed);
    free(n->comp_links);
    free(n->comp_flows);
    free(n);
}

int net_add_link(net *n, double bytes_per_ps, cxl_err *err)
{
    if (!(bytes_per_ps > 0) || !isfinite(bytes_per_ps))
        return cxl_errf(err, CXL_ECONFIG, "link bandwidth must be positive (got %g bytes/ps)", bytes_per_ps);
    if (grow_array((void **)&n->links, &n->caplinks, n->nlinks + 1, sizeof *n->links))
        return cxl_errf(err, CXL_ENOMEM, "out of memory (network links)");
    nlink *l = &n->links[n->nlinks];
    memset(l, 0, sizeof *l);
    l->cap = bytes_per_ps;
    return (int)n->nlinks++;
}

uint32_t net_link_count(const net *n) { return n->nlinks; }

/* Bring a flow's remaining bytes up to now under its current rate. */
static void settle(net *n, nflow *f, int64_t now_ps)
{
    if (now_ps > f->last_ps && f->rate > 0) {
        double moved = f->rate * (double)(now_ps - f->last_ps);
        if (moved > f->remaining)
            moved = f->remaining;
        f->remaining -= moved;
        for (uint32_t i = 0; i < f->nlinks; i++)
            n->links[f->links[i]].bytes += moved;
    }
    f->last_ps = now_ps;
}

static int note_changed(net *n, uint32_t id)
{
    nflow *f = &n->flows[id];
    f->version++;
    if (f->in_changed)
        return 0;
    if (grow_array((void **)&n->changed, &n->capchanged, n->nchanged + 1, sizeof *n->changed))
        return CXL_ENOMEM;
    f->in_changed = 1;
    n->changed[n->nchanged++] = id;
    return 0;
}

/* Collect the component reachable from the given links, then water-fill it. */
static int recompute(net *n, int64_t now_ps, const uint32_t *seed, uint32_t nseed)
{
    uint32_t stamp = ++n->stamp;
    n->ncl = n->ncf = 0;
    for (uint32_t i = 0; i < nseed; i++) {
        nlink *l = &n->links[seed[i]];
        if (l->mark == stamp)
            continue;
        l->mark = stamp;
        if (grow_array((void **)&n->comp_links, &n->capcl, n->ncl + 1, sizeof(uint32_t)))
            return CXL_ENOMEM;
        n->comp_links[n->ncl++] = seed[i];
    }
    for (uint32_t li = 0; li < n->ncl; li++) {
        nlink *l = &n->links[n->comp_links[li]];
        for (uint32_t j = 0; j < l->nflows; j++) {
            uint32_t fid = l->flows[j];
            nflow *f = &n->flows[fid];
            if (f->mark == stamp)
                continue;
            f->mark = stamp;
            if (grow_array((void **)&n->comp_flows, &n->capcf, n->ncf + 1, sizeof(uint32_t)))
                return CXL_ENOMEM;
            n->comp_flows[n->ncf++] = fid;
            for (uint32_t k = 0; k < f->nlinks; k++) {
                nlink *m = &n->links[f->links[k]];
                if (m->mark == stamp)
                    continue;
                m->mark = stamp;
                if (grow_array((void **)&n->comp_links, &n->capcl, n->ncl + 1, sizeof(uint32_t)))
                    return CXL_ENOMEM;
                n->comp_links[n->ncl++] = f->links[k];
            }
        }
    }
    /* settle every flow at its old rate, then progressive filling */
    for (uint32_t i = 0; i < n->ncf; i++) {
        nflow *f = &n->flows[n->comp_flows[i]];
        settle(n, f, now_ps);
        f->frozen = 0;
    }
    for (uint32_t i = 0; i < n->ncl; i++) {
        nlink *l = &n->links[n->comp_links[i]];
        l->residual = l->cap;
        l->unfrozen = l->nflows;
    }
    uint32_t left = n->ncf;
    while (left > 0) {
        /* the bottleneck: the link offering the smallest fair share; ties to the lowest link id */
        double best = INFINITY;
        uint32_t bl = UINT32_MAX;
        for (uint32_t i = 0; i < n->ncl; i++) {
            nlink *l = &n->links[n->comp_links[i]];
            if (!l->unfrozen)
                continue;
            double share = l->residual / (double)l->unfrozen;
            if (share < best || (share == best && n->comp_links[i] < bl)) {
                best = share;
                bl = n->comp_links[i];
            }
        }
        if (bl == UINT32_MAX)
            break;
        nlink *b = &n->links[bl];
        for (uint32_t j = 0; j < b->nflows; j++) {
            nflow *f = &n->flows[b->flows[j]];
            if (f->frozen)
                continue;
            f->frozen = 1;
            left--;
            double r = best > 0 ? best : 0;
            for (uint32_t k = 0; k < f->nlinks; k++) {
                nlink *m = &n->links[f->links[k]];
                m->residual -= r;
                if (m->residual < 0)
                    m->residual = 0;
                m->unfrozen--;
            }
            if (r != f->rate || f->version == 0) {
                f->rate = r;
                if (note_changed(n, b->flows[j]))
                    return CXL_ENOMEM;
            }
        }
    }
    return 0;
}

int net_flow_start(net *n, int64_t now_ps, double bytes, const uint32_t *links, uint32_t nlinks, uint32_t owner,
                   uint32_t *flow_out, cxl_err *err)
{
    if (nlinks < 1 || nlinks > NET_MAX_FLOW_LINKS)
        return cxl_errf(err, CXL_ECONFIG, "a flow crosses 1 to %d links (got %u)", NET_MAX_FLOW_LINKS, nlinks);
    if (!(bytes > 0) || !isfinite(bytes))
        return cxl_errf(err, CXL_ECONFIG, "a flow moves a positive number of bytes (got %g)", bytes);
    for (uint32_t i = 0; i < nlinks; i++) {
        if (links[i] >= n->nlinks)
            return cxl_errf(err, CXL_ECONFIG, "flow link %u does not exist (%u links)", links[i], n->nlinks);
        for (uint32_t j = 0; j < i; j++)
            if (links[j] == links[i])
                return cxl_errf(err, CXL_ECONFIG, "flow names link %u twice", links[i]);
    }
    uint32_t id;
    if (n->nfree) {
        id = n->free_flows[--n->nfree];
    } else {
        if (grow_array((void **)&n->flows, &n->capflows, n->nflows + 1, sizeof *n->flows))
            return cxl_errf(err, CXL_ENOMEM, "out of memory (flows)");
        id = n->nflows++;
        memset(&n->flows[id], 0, sizeof n->flows[id]);
    }
    nflow *f = &n->flows[id];
    uint32_t ver = f->version;
    memset(f, 0, sizeof *f);
    f->version = ver + 1; /* never reuse a (flow, version) pair */
    f->remaining = bytes;
    f->last_ps = now_ps;
    f->nlinks = nlinks;
    f->owner = owner;
    f->active = 1;
    f->rate = -1; /* forces a change note */
    memcpy(f->links, links, nlinks * sizeof *links);
    for (uint32_t i = 0; i < nlinks; i++) {
        nlink *l = &n->links[links[i]];
        if (grow_array((void **)&l->flows, &l->capflows, l->nflows + 1, sizeof *l->flows))
            return cxl_errf(err, CXL_ENOMEM, "out of memory (flows)");
        l->flows[l->nflows++] = id;
    }
    n->started++;
    if (recompute(n, now_ps, links, nlinks))
        return cxl_errf(err, CXL_ENOMEM, "out of memory (flows)");
    *flow_out = id;
    return 0;
}

int64_t net_flow_eta(const net *n, uint32_t flow)
{
    const nflow *f = &n->flows[flow];
    if (f->remaining <= 0)
        return f->last_ps;
    if (!(f->rate > 0))
        return INT64_MAX;
    double dt = ceil(f->remaining / f->rate);
    if (dt > 9.0e18)
        return INT64_MAX;
    return f->last_ps + (int64_t)dt;
}

uint32_t net_flow_version(const net *n, uint32_t flow) { return n->flows[flow].version; }

int net_flow_finish(net *n, int64_t now_ps, uint32_t flow, uint32_t version, uint32_t *owner_out)
{
    if (flow >= n->nflows)
        return 0;
    nflow *f = &n->flows[flow];
    if (!f->active || f->version != version)
        return 0;
    settle(n, f, now_ps);
    /* the remainder (rounding of the last picosecond) is carried too */
    for (uint32_t i = 0; i < f->nlinks; i++)
        n->links[f->links[i]].bytes += f->remaining;
    f->remaining = 0;
    f->active = 0;
    for (uint32_t i = 0; i < f->nlinks; i++) {
        nlink *l = &n->links[f->links[i]];
        for (uint32_t j = 0; j < l->nflows; j++)
            if (l->flows[j] == flow) {
                l->flows[j] = l->flows[--l->nflows];
                break;
            }
    }
    *owner_out = f->owner;
    if (grow_array((void **)&n->free_flows, &n->capfree, n->nfree + 1, sizeof *n->free_flows) == 0)
        n->free_flows[n->nfree++] = flow;
    uint32_t seed[NET_MAX_FLOW_LINKS];
    memcpy(seed, f->links, f->nlinks * sizeof *seed);
    (void)recompute(n, now_ps, seed, f->nlinks); /* ENOMEM here leaves rates as they were: still valid */
    return 1;
}

uint32_t net_take_changed(net *n, uint32_t *out, uint32_t max)
{
    uint32_t k = 0;
    while (k < max && n->nchanged) {
        uint32_t id = n->changed[--n->nchanged];
        n->flows[id].in_changed = 0;
        if (!n->flows[id].active)
            continue;
        out[k++] = id;
    }
    return k;
}

double net_link_bytes(const net *n, uint32_t link) { return n->links[link].bytes; }
uint32_t net_link_active(const net *n, uint32_t link) { return n->links[link].nflows; }

double net_link_utilisation(const net *n, uint32_t link)
{
    const nlink *L = &n->links[link];
    double sum = 0;
    for (uint32_t i = 0; i < L->nflows; i++)
        if (n->flows[L->flows[i]].rate > 0)
            sum += n->flows[L->flows[i]].rate;
    double u = sum / L->cap;
    return u > 1 ? 1 : u;
}

uint32_t net_flow_links(const net *n, uint32_t flow, uint32_t *out)
{
    const nflow *f = &n->flows[flow];
    for (uint32_t i = 0; i < f->nlinks; i++)
        out[i] = f->links[i];
    return f->nlinks;
}
uint64_t net_flows_started(const net *n) { return n->started; }

uint64_t net_bytes(const net *n)
{
    uint64_t b = sizeof *n + (uint64_t)n->caplinks * sizeof(nlink) + (uint64_t)n->capflows * sizeof(nflow) +
                 ((uint64_t)n->capfree + n->capchanged + n->capcl + n->capcf) * sizeof(uint32_t);
    for (uint32_t i = 0; i < n->nlinks; i++)
        b += (uint64_t)n->links[i].capflows * sizeof(uint32_t);
    return b;
}
