#include "requester.h"

#include "stats.h"

void requester_init(cxl_requester *r, uint32_t tags)
{
    if (tags > CXL_MAX_TAGS)
        tags = CXL_MAX_TAGS;
    r->head = r->count = r->issue_pos = 0;
    r->nfree = tags;
    r->tags = tags;
    /* Tags are handed out lowest first: the free list is a stack with tag 0 on top. */
tag_init:
    for (uint32_t i = 0; i < tags; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 256 /* CXL_MAX_TAGS */
#pragma HLS PIPELINE II = 1
        r->free_tags[i] = (uint16_t)(tags - 1 - i);
    }
}

static uint64_t xorshift64(uint64_t x)
{
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

int requester_submit(cxl_requester *r, const cxl_desc *d)
{
    if (r->count >= CXL_DESCQ)
        return -1;
    cxl_dslot *s = &r->q[(r->head + r->count) % CXL_DESCQ];
    s->d = *d;
    if (s->d.footprint == 0)
        s->d.footprint = d->bytes;
    if (s->d.rd_weight == 0 && s->d.wr_weight == 0)
        s->d.rd_weight = 1;
    s->lines = d->bytes / CXL_LINE_BYTES;
    s->issued = s->done = 0;
    s->start = 0;
    s->next_issue = d->not_before;
    s->mix_acc = 0;
    s->outstanding = 0;
    s->next_addr_off = 0;
    /* splitmix-style scramble of (seed, id) so that neighbouring ids give unrelated streams; never 0 */
    uint64_t z = ((uint64_t)d->seed << 32) ^ d->id ^ 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    s->rng = z ? z : 1;
    r->count++;
    return 0;
}

static uint64_t next_addr(cxl_dslot *s)
{
    const cxl_desc *d = &s->d;
    uint64_t off;
    if (d->pattern == CXL_PAT_RANDOM) {
        uint64_t lines = d->footprint / CXL_LINE_BYTES;
        s->rng = xorshift64(s->rng);
        off = (((s->rng >> 32) * lines) >> 32) * CXL_LINE_BYTES;
    } else {
        uint64_t step = d->pattern == CXL_PAT_STRIDE ? d->stride : CXL_LINE_BYTES;
        off = s->next_addr_off;
        s->next_addr_off += step;
        if (s->next_addr_off >= d->footprint)
            s->next_addr_off -= d->footprint;
    }
    return d->base + off;
}

/* Kept out of line on the host so that the test for a free tag in requester_issue, which fails on most
 * calls under load, runs without this function's prologue (no effect on synthesis). */
#if defined(__GNUC__) && !defined(__SYNTHESIS__)
#define REQ_OUT_OF_LINE __attribute__((noinline))
#else
#define REQ_OUT_OF_LINE
#endif

/* requester_issue with a free tag. */
static REQ_OUT_OF_LINE int issue_tagged(cxl_requester *r, uint32_t idx, uint32_t host, uint64_t now,
                                        cxl_msg *out)
{
    /* Skip fully issued descriptors at the issue position. */
req_skip:
    while (r->issue_pos < r->count) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_DESCQ */
        cxl_dslot *s = &r->q[(r->head + r->issue_pos) % CXL_DESCQ];
        if (s->issued < s->lines)
            break;
        r->issue_pos++;
    }
    if (r->issue_pos >= r->count)
        return 0;
    uint32_t slot = (r->head + r->issue_pos) % CXL_DESCQ;
    cxl_dslot *s = &r->q[slot];
    if (now < s->next_issue || s->outstanding >= s->d.max_outstanding)
        return 0;
    uint16_t tag = r->free_tags[--r->nfree];
    uint32_t w = s->d.wr_weight, tot = (uint32_t)s->d.rd_weight + w;
    s->mix_acc += w;
    int is_write = 0;
    if (s->mix_acc >= tot) {
        s->mix_acc -= tot;
        is_write = 1;
    }
    if (s->issued == 0)
        s->start = now;
    s->issued++;
    s->outstanding++;
    s->next_issue = now + (s->d.gap_cycles ? s->d.gap_cycles : 1);
    r->tag_issue[tag] = now;
    r->tag_slot[tag] = (uint8_t)slot;
    r->tag_write[tag] = (uint8_t)is_write;
    out->addr = next_addr(s);
    out->tag = tag;
    out->req = (uint8_t)idx;
    out->cls = is_write ? CXL_M2S_RWD : CXL_M2S_REQ;
    out->host = (uint8_t)host;
    out->dev = 0;
    out->devload = 0;
    out->pad = 0;
    return 1;
}

int requester_issue(cxl_requester *r, uint32_t idx, uint32_t host, uint64_t now, cxl_msg *out)
{
    /* the common case under load (every tag outstanding) returns before anything else is touched */
    if (r->nfree == 0)
        return 0;
    return issue_tagged(r, idx, host, now, out);
}

int requester_complete(cxl_requester *r, uint16_t tag, uint64_t now, cxl_stats *st, cxl_completion *c)
{
    cxl_dslot *s = &r->q[r->tag_slot[tag]];
    uint64_t lat = now - r->tag_issue[tag];
    if (r->tag_write[tag]) {
        hist_add(&st->write_lat, lat);
        st->write_bytes += CXL_LINE_BYTES;
    } else {
        hist_add(&st->read_lat, lat);
        st->read_bytes += CXL_LINE_BYTES;
    }
    r->free_tags[r->nfree++] = tag;
    s->done++;
    s->outstanding--;
    if (s->done < s->lines)
        return 0;
    c->id = s->d.id;
    c->start_cycle = s->start;
    c->end_cycle = now;
    c->requester = s->d.requester;
    c->lines = (uint32_t)s->lines;
    /* Retire finished descriptors from the head, in order, so ring slots stay stable for live tags. */
    s->d.bytes = 0; /* mark finished */
req_retire:
    while (r->count) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 16 /* CXL_DESCQ */
        cxl_dslot *h = &r->q[r->head];
        if (h->done < h->lines)
            break;
        r->head = (r->head + 1) % CXL_DESCQ;
        r->count--;
        if (r->issue_pos)
            r->issue_pos--;
    }
    return 1;
}
