#include "dram.h"

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* Cycles between refresh commands of one rank (0: refresh off). */
static uint64_t ref_interval(const cxl_dram_params *p)
{
    if (p->refresh == CXL_REF_OFF || p->tREFI == 0)
        return 0;
    return p->refresh == CXL_REF_SAME_BANK ? p->tREFI / p->banks : p->tREFI;
}

void dram_init(cxl_dram *d, const cxl_dram_params *p)
{
dram_init_ch:
    for (uint32_t c = 0; c < CXL_MAX_CH; c++) {
        cxl_dram_chan *ch = &d->ch[c];
        dram_timing_init(&ch->t, p);
        ch->nr = ch->nw = 0;
        for (uint32_t b = 0; b < CXL_MAX_BANKS; b++)
            ch->hits_r[b] = ch->hits_w[b] = 0;
        ch->write_mode = 0;
        /* Refresh is staggered over the channel's ranks and the device's channels (DRAMsim3's
         * rank-level staggered policy): unit k of n first refreshes at tREFI * (k + 1) / n. */
        for (uint32_t r = 0; r < CXL_MAX_RANKS; r++) {
            uint64_t n = (uint64_t)p->channels * p->ranks, k = (uint64_t)c * p->ranks + r;
            uint64_t iv = ref_interval(p);
            ch->ref_due[r] = iv ? iv * (k + 1) / (n ? n : 1) : UINT64_MAX;
            ch->ref_bank[r] = 0;
        }
        ch->wake = 0;
        ch->wake_on_room = 0;
        ch->rd_head = ch->rd_count = 0;
        ch->trace_n = 0;
    }
}

uint32_t dram_channel_of(const cxl_dram_params *p, uint64_t addr)
{
    cxl_dram_addr a;
    dram_map(p, addr, &a);
    return a.ch;
}

uint32_t dram_space(const cxl_dram *d, const cxl_dram_params *p, uint32_t ch, int is_write)
{
    return is_write ? p->write_queue - d->ch[ch].nw : p->read_queue - d->ch[ch].nr;
}

uint32_t dram_occupancy(const cxl_dram *d, const cxl_dram_params *p)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < p->channels; c++)
        n += d->ch[c].nr + d->ch[c].nw;
    return n;
}

void dram_enqueue(cxl_dram *d, const cxl_dram_params *p, const cxl_msg *m, uint64_t now)
{
    (void)now;
    cxl_dram_addr a;
    dram_map(p, m->addr, &a);
    cxl_dram_chan *ch = &d->ch[a.ch];
    int w = m->cls == CXL_M2S_RWD;
    cxl_dram_entry *e = w ? &ch->wq[ch->nw++] : &ch->rq[ch->nr++];
    e->msg = *m;
    e->rank = a.rank;
    e->bg = a.bg;
    e->bank = a.bank;
    e->row = a.row;
    e->bidx = dram_bank_idx(p, a.rank, a.bg, a.bank);
    if (ch->t.bank[e->bidx].open_row == (int32_t)a.row) {
        if (w)
            ch->hits_w[e->bidx]++;
        else
            ch->hits_r[e->bidx]++;
    }
    ch->wake = 0;
}

/* Issue a command to the timing state and record it in the channel's command trace. */
static void chan_issue(cxl_dram_chan *ch, const cxl_dram_params *p, uint32_t cmd, uint32_t rank, uint32_t bg,
                       uint32_t bank, uint32_t row, int auto_pre, uint64_t now)
{
    dram_issue(&ch->t, p, cmd, rank, bg, bank, row, auto_pre, now);
    cxl_dram_trace_rec *r = &ch->trace[ch->trace_n % CXL_DRAM_TRACE];
    r->cycle = now;
    r->row = row;
    r->cmd = (uint8_t)cmd;
    r->rank = (uint8_t)rank;
    r->bg = (uint8_t)bg;
    r->bank = (uint8_t)bank;
    r->auto_pre = (uint8_t)(auto_pre != 0);
    ch->trace_n++;
}

/* Recount the entries of both queues that hit bank b's open row (after an ACT). */
static void recount_hits(cxl_dram_chan *ch, uint32_t b)
{
    int32_t row = ch->t.bank[b].open_row;
    uint16_t hr = 0, hw = 0;
recount_r:
    for (uint32_t i = 0; i < ch->nr; i++)
        if (ch->rq[i].bidx == b && (int32_t)ch->rq[i].row == row)
            hr++;
recount_w:
    for (uint32_t i = 0; i < ch->nw; i++)
        if (ch->wq[i].bidx == b && (int32_t)ch->wq[i].row == row)
            hw++;
    ch->hits_r[b] = hr;
    ch->hits_w[b] = hw;
}

static void remove_entry(cxl_dram_entry *q, uint32_t *n, uint32_t i)
{
remove_shift:
    for (uint32_t k = i + 1; k < *n; k++)
        q[k - 1] = q[k];
    (*n)--;
}

/* Refresh of rank r is due: precharge or refresh. Returns 1 if a command issued. */
static int refresh_step(cxl_dram_chan *ch, const cxl_dram_params *p, uint32_t r, uint64_t now,
                        cxl_dev_stats *st, uint64_t *next)
{
    uint32_t nb = p->bankgroups * p->banks;
    int sb = p->refresh == CXL_REF_SAME_BANK;
    uint64_t all_ready = 0;
    int open = 0;
ref_banks:
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t bg = i / p->banks, bk = i % p->banks;
        if (sb && bk != ch->ref_bank[r])
            continue;
        cxl_bank *b = &ch->t.bank[r * nb + i];
        if (b->open_row >= 0) {
            open = 1;
            if (b->next_pre <= now) {
                ch->hits_r[r * nb + i] = ch->hits_w[r * nb + i] = 0;
                chan_issue(ch, p, DRAM_PRE, r, bg, bk, 0, 0, now);
                st->pres++;
                return 1;
            }
            *next = min64(*next, b->next_pre);
        } else if (b->next_act > all_ready) {
            all_ready = b->next_act;
        }
    }
    if (open)
        return 0;
    if (!sb && ch->t.rank_act[r] > all_ready)
        all_ready = ch->t.rank_act[r];
    if (all_ready <= now) {
        chan_issue(ch, p, sb ? DRAM_REFSB : DRAM_REF, r, 0, sb ? ch->ref_bank[r] : 0, 0, 0, now);
        ch->ref_due[r] += ref_interval(p);
        if (sb)
            ch->ref_bank[r] = (ch->ref_bank[r] + 1) % p->banks;
        st->refs++;
        return 1;
    }
    *next = min64(*next, all_ready);
    return 0;
}

/* One scheduling decision for a channel. Returns 1 if a command issued; otherwise *next is a lower
 * bound on the cycle at which one could (as long as no request arrives). */
static int schedule(cxl_dram_chan *ch, const cxl_dram_params *p, uint64_t now, cxl_dev_stats *st,
                    uint64_t *next, uint32_t *rsp_room)
{
    uint32_t refmask = 0;
    int sb = p->refresh == CXL_REF_SAME_BANK;
sched_ref:
    for (uint32_t r = 0; r < p->ranks; r++) {
        if (ch->ref_due[r] <= now) {
            refmask |= 1u << r;
            if (refresh_step(ch, p, r, now, st, next))
                return 1;
        } else {
            *next = min64(*next, ch->ref_due[r]);
        }
    }

    if (!ch->write_mode) {
        if (ch->nw >= p->wdrain_high || (ch->nr == 0 && ch->nw > 0))
            ch->write_mode = 1;
    } else {
        if (ch->nw == 0 || (ch->nw <= p->wdrain_low && ch->nr > 0))
            ch->write_mode = 0;
    }
    int w = (int)ch->write_mode;
    cxl_dram_entry *q = w ? ch->wq : ch->rq;
    uint32_t n = w ? ch->nw : ch->nr;
    uint16_t *hits = w ? ch->hits_w : ch->hits_r;
    uint32_t colcmd = w ? DRAM_WR : DRAM_RD;
    int closed = p->row_policy == CXL_ROW_CLOSED;
    if (p->scheduler == CXL_SCHED_FCFS && n > 1)
        n = 1;
    /* Reads need a response-queue entry for their data; without one no RD can issue (the wait ends
     * when the link takes a response, which is outside this unit: no wake-up bound is given). */
    int col_ok = w || *rsp_room > 0;

    /* First ready: the oldest row hit whose column command may issue now. */
sched_hits:
    for (uint32_t i = 0; i < n; i++) {
        cxl_dram_entry *e = &q[i];
        if ((refmask >> e->rank & 1) && (!sb || e->bank == ch->ref_bank[e->rank]))
            continue;
        cxl_bank *b = &ch->t.bank[e->bidx];
        if (b->open_row != (int32_t)e->row || !col_ok)
            continue;
        uint64_t t = dram_ready(&ch->t, p, colcmd, e->rank, e->bg, e->bank);
        if (t > now) {
            *next = min64(*next, t);
            continue;
        }
        chan_issue(ch, p, colcmd, e->rank, e->bg, e->bank, e->row, closed, now);
        if (w) {
            st->writes++;
        } else {
            st->reads++;
            (*rsp_room)--;
            uint32_t k = (ch->rd_head + ch->rd_count) % CXL_RD_INFLIGHT;
            ch->rd_msg[k] = e->msg;
            ch->rd_done[k] = now + p->tCL + p->tBL;
            ch->rd_count++;
        }
        hits[e->bidx]--;
        if (closed) {
            ch->hits_r[e->bidx] = ch->hits_w[e->bidx] = 0;
        }
        remove_entry(q, w ? &ch->nw : &ch->nr, i);
        return 1;
    }
    /* First come: the oldest entry whose row command may issue now. */
sched_rows:
    for (uint32_t i = 0; i < n; i++) {
        cxl_dram_entry *e = &q[i];
        if ((refmask >> e->rank & 1) && (!sb || e->bank == ch->ref_bank[e->rank]))
            continue;
        cxl_bank *b = &ch->t.bank[e->bidx];
        if (b->open_row == (int32_t)e->row)
            continue;
        if (b->open_row < 0) {
            uint64_t t = dram_ready(&ch->t, p, DRAM_ACT, e->rank, e->bg, e->bank);
            if (t > now) {
                *next = min64(*next, t);
                continue;
            }
            chan_issue(ch, p, DRAM_ACT, e->rank, e->bg, e->bank, e->row, 0, now);
            st->acts++;
            recount_hits(ch, e->bidx);
            return 1;
        }
        /* FR-FCFS: the open row still has hits queued, they go first. Not under FCFS: it never looks past
         * the oldest entry, so holding its PRE back for younger hits would stall the channel for good. */
        if (hits[e->bidx] && p->scheduler != CXL_SCHED_FCFS)
            continue;
        uint64_t t = dram_ready(&ch->t, p, DRAM_PRE, e->rank, e->bg, e->bank);
        if (t > now) {
            *next = min64(*next, t);
            continue;
        }
        chan_issue(ch, p, DRAM_PRE, e->rank, e->bg, e->bank, 0, 0, now);
        st->pres++;
        st->row_conflicts++;
        ch->hits_r[e->bidx] = ch->hits_w[e->bidx] = 0;
        return 1;
    }
    return 0;
}

uint32_t dram_tick(cxl_dram *d, const cxl_dram_params *p, uint64_t now, cxl_msg *out, cxl_dev_stats *st,
                   uint32_t *rsp_room)
{
    uint32_t n = 0;
dram_channels:
    for (uint32_t k = 0; k < p->channels; k++) {
        /* rotate which channel goes first: they share the response-queue entries reads need */
        uint32_t c = (uint32_t)((now + k) % p->channels);
        cxl_dram_chan *ch = &d->ch[c];
        if (ch->rd_count && ch->rd_done[ch->rd_head] <= now) {
            out[n++] = ch->rd_msg[ch->rd_head];
            ch->rd_head = (ch->rd_head + 1) % CXL_RD_INFLIGHT;
            ch->rd_count--;
        }
        if (now < ch->wake && !(ch->wake_on_room && *rsp_room))
            continue;
        if (ch->nr == 0 && ch->nw == 0) {
            /* idle: only refresh can happen; its deadline bounds the wait */
            uint64_t due = UINT64_MAX;
            for (uint32_t r = 0; r < p->ranks; r++)
                due = min64(due, ch->ref_due[r]);
            if (due > now) {
                ch->wake = due;
                continue;
            }
        }
        uint64_t next = UINT64_MAX;
        uint32_t room_before = *rsp_room;
        ch->wake_on_room = 0;
        if (schedule(ch, p, now, st, &next, rsp_room)) {
            ch->wake = now + 1;
        } else {
            /* a read hit held back only by a full response queue must retry once room appears */
            ch->wake_on_room = room_before == 0;
            /* Nothing issued. Every readiness time only moves when a command issues or a request is
             * enqueued (which resets wake), so no command can issue before `next`. */
            ch->wake = next > now ? next : now + 1;
        }
    }
    return n;
}
