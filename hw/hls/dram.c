#include "dram.h"

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

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

/* The channel field of dram_map(addr) without the rest: bank hashing never changes it, and it is the
 * line address shifted past the fields mapped below it (a field listed twice counts where it is listed
 * last, as in dram_map). */
uint32_t dram_channel_of(const cxl_dram_params *p, uint64_t addr)
{
    uint32_t b = p->bits[CXL_MAP_CH];
    if (b == 0)
        return 0; /* one channel: the field is empty */
    uint32_t at = 0, sh = 0;
chan_fields:
    for (uint32_t i = 0; i < CXL_MAP_NFIELDS; i++) {
        uint32_t f = p->map[i];
        if (f == CXL_MAP_CH)
            at = sh;
        sh += p->bits[f];
    }
    if (at >= 64)
        return 0;
    return (uint32_t)((addr / CXL_LINE_BYTES >> at) & ((1ull << b) - 1));
}

uint32_t dram_space(const cxl_dram *d, const cxl_dram_params *p, uint32_t ch, int is_write)
{
    return is_write ? p->write_queue - d->ch[ch].nw : p->read_queue - d->ch[ch].nr;
}

uint32_t dram_occupancy(const cxl_dram *d, const cxl_dram_params *p)
{
    uint32_t n = 0;
    for (uint32_t c = 0; c < p->channels; c++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
        n += d->ch[c].nr + d->ch[c].nw;
    }
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
    for (uint32_t i = 0; i < ch->nr; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_DRAMQ */
#pragma HLS PIPELINE II = 1
        if (ch->rq[i].bidx == b && (int32_t)ch->rq[i].row == row)
            hr++;
    }
recount_w:
    for (uint32_t i = 0; i < ch->nw; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_DRAMQ */
#pragma HLS PIPELINE II = 1
        if (ch->wq[i].bidx == b && (int32_t)ch->wq[i].row == row)
            hw++;
    }
    ch->hits_r[b] = hr;
    ch->hits_w[b] = hw;
}

static void remove_entry(cxl_dram_entry *q, uint32_t *n, uint32_t i)
{
remove_shift:
    for (uint32_t k = i + 1; k < *n; k++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_DRAMQ */
#pragma HLS PIPELINE II = 1
        q[k - 1] = q[k];
    }
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
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_BANKS */
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

/* What the scan in schedule() needs of the channel, the mode's queue and its timing. */
typedef struct scan_args {
    const cxl_dram_entry *q;
    const cxl_dram_timing *tm;
    const uint64_t *col_bg, *col_rank; /* RD or WR readiness of the bank groups and ranks */
    const uint16_t *hits;
    uint32_t nbg;
    uint64_t col_off;  /* ORed into column times: UINT64_MAX while no response-queue entry is free */
    uint64_t hold_off; /* ORed into a PRE's time while its open row has hits queued (0 under FCFS) */
} scan_args;

/* The time from which entry i's next command may issue; UINT64_MAX: it is no candidate now: a hit while
 * no response entry is free, a PRE held back for hits (FR-FCFS: the open row still has hits queued, they
 * go first; not under FCFS: it never looks past the oldest entry, so holding its PRE back for younger
 * hits would stall the channel for good), a row command once an older one is chosen (row_chosen). All
 * three command times are computed and the entry's one selected by masks: whether its bank is open, and
 * on its row, is what a random stream makes unpredictable. This is dram_ready() (dram_timing.c) written
 * out for the entry's bank, bank group and rank. */
static inline uint64_t entry_time(const scan_args *a, uint32_t i, int row_chosen)
{
    const cxl_dram_entry *e = &a->q[i];
    uint32_t bi = e->bidx, r = e->rank, gi = r * a->nbg + e->bg;
    const cxl_bank *b = &a->tm->bank[bi];
    int32_t open = b->open_row;
    uint64_t t_col = max64(b->next_col, max64(a->col_bg[gi], a->col_rank[r])) | a->col_off;
    uint64_t t_act = max64(b->next_act, max64(a->tm->bg_act[gi], a->tm->rank_act[r]));
    uint64_t t_pre = b->next_pre | (((uint64_t)0 - (uint64_t)(a->hits[bi] != 0)) & a->hold_off);
    uint64_t closed = (uint64_t)0 - (uint64_t)(open < 0);            /* all ones: bank precharged */
    uint64_t t_row = ((t_act & closed) | (t_pre & ~closed)) | ((uint64_t)0 - (uint64_t)row_chosen);
    uint64_t hit = (uint64_t)0 - (uint64_t)(open == (int32_t)e->row); /* all ones: a row hit */
    return (t_col & hit) | (t_row & ~hit);
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
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
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

    /* FR-FCFS in one pass over the queue, in age order. It finds the oldest row hit whose column command
     * may issue now (which issues at once: hits go first), and otherwise the oldest entry whose row
     * command (ACT to a closed bank, PRE to a bank open on another row with no hits queued) may issue
     * now. Nothing changes state before the decision, so this is exactly "first the hits, then the row
     * commands"; when nothing issues, *next is the minimum over the same candidates as two passes would
     * see. Readiness is dram_ready() (dram_timing.c) written out for the entry's bank, bank group and rank. */
    const cxl_dram_timing *tm = &ch->t;
    uint64_t nx = *next;
    uint32_t row_i = n; /* the oldest entry with a ready row command; n: none yet */
    uint32_t hit_i = n; /* the oldest ready hit */
    scan_args a;
    a.q = q;
    a.tm = tm;
    a.col_bg = w ? tm->bg_wr : tm->bg_rd;
    a.col_rank = w ? tm->rank_wr : tm->rank_rd;
    a.hits = hits;
    a.nbg = p->bankgroups;
    a.col_off = col_ok ? 0 : UINT64_MAX;
    a.hold_off = p->scheduler == CXL_SCHED_FCFS ? 0 : UINT64_MAX;
    if (refmask) {
        /* a refresh is pending: the entries of its banks are no candidates (the rare case: scan them
         * with the time of every blocked entry forced to UINT64_MAX) */
    sched_blocked:
        for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_DRAMQ */
#pragma HLS PIPELINE II = 1
            uint32_t r = q[i].rank;
            int blocked = (refmask >> r & 1) && (!sb || q[i].bank == ch->ref_bank[r]);
            uint64_t t = blocked ? UINT64_MAX : entry_time(&a, i, row_i != n);
            if (t <= now) {
                if ((int32_t)q[i].row == tm->bank[q[i].bidx].open_row) {
                    hit_i = i;
                    break;
                }
                row_i = i;
                continue;
            }
            nx = min64(nx, t);
        }
    } else {
    sched_scan:
        for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_DRAMQ */
#pragma HLS PIPELINE II = 1
            uint64_t t = entry_time(&a, i, row_i != n);
            if (t <= now) {
                if ((int32_t)q[i].row == tm->bank[q[i].bidx].open_row) {
                    hit_i = i; /* the first ready hit issues */
                    break;
                }
                row_i = i; /* keep looking for a ready hit */
                continue;
            }
            nx = min64(nx, t);
        }
    }
    if (hit_i < n) {
        const cxl_dram_entry *e = &q[hit_i];
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
        uint32_t bi = e->bidx;
        hits[bi]--;
        if (closed) {
            ch->hits_r[bi] = ch->hits_w[bi] = 0;
        }
        remove_entry(q, w ? &ch->nw : &ch->nr, hit_i);
        return 1;
    }
    if (row_i == n) {
        *next = nx;
        return 0;
    }
    {
        const cxl_dram_entry *e = &q[row_i];
        if (tm->bank[e->bidx].open_row < 0) {
            chan_issue(ch, p, DRAM_ACT, e->rank, e->bg, e->bank, e->row, 0, now);
            st->acts++;
            recount_hits(ch, e->bidx);
        } else {
            chan_issue(ch, p, DRAM_PRE, e->rank, e->bg, e->bank, 0, 0, now);
            st->pres++;
            st->row_conflicts++;
            ch->hits_r[e->bidx] = ch->hits_w[e->bidx] = 0;
        }
    }
    return 1;
}

uint32_t dram_tick(cxl_dram *d, const cxl_dram_params *p, uint64_t now, cxl_msg *out, cxl_dev_stats *st,
                   uint32_t *rsp_room)
{
    uint32_t n = 0;
    uint32_t nch = p->channels;
    /* rotate which channel goes first: they share the response-queue entries reads need; the k-th is
     * channel (now + k) mod channels */
    uint32_t c = nch > 1 ? (uint32_t)(now % nch) : 0;
dram_channels:
    for (uint32_t k = 0; k < nch; k++, c = c + 1 == nch ? 0 : c + 1) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
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
            for (uint32_t r = 0; r < p->ranks; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
                due = min64(due, ch->ref_due[r]);
            }
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

/* ---- idle fast-forward (dram.h) ---- */

uint64_t dram_idle_period(const cxl_dram_params *p)
{
    uint64_t iv = ref_interval(p);
    if (!iv)
        return 0;
    uint64_t per = p->refresh == CXL_REF_SAME_BANK ? iv * p->banks : iv;
    uint64_t a = per, b = p->channels ? p->channels : 1; /* per x channels / gcd: a multiple of both */
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return per * ((p->channels ? p->channels : 1) / a);
}

/* More cycles than any command's effect on a readiness time reaches ahead (every constraint summed). */
static uint64_t idle_reach(const cxl_dram_params *p)
{
    return (uint64_t)p->tRCD + p->tCL + p->tRP + p->tRAS + p->tRC + p->tCWL + p->tWR + p->tRTP + p->tBL +
           p->tCCD_S + p->tCCD_L + p->tCCD_S_WR + p->tCCD_L_WR + p->tRRD_S + p->tRRD_L + p->tFAW + p->tWTR_S +
           p->tWTR_L + p->tRTW + p->tRFC + p->tRFCsb + 2;
}

static int is_refresh(uint8_t cmd) { return cmd == DRAM_REF || cmd == DRAM_REFSB; }

/* One channel: the refreshes of the last period, or 0 when it is not settled. */
static uint32_t chan_settled(const cxl_dram_chan *ch, const cxl_dram_params *p, uint64_t now, uint64_t period)
{
    uint64_t reach = idle_reach(p);
    if (ch->nr || ch->nw || ch->rd_count || ch->wake_on_room || now < 2 * period + reach)
        return 0;
    uint32_t nb = p->ranks * p->bankgroups * p->banks;
settle_banks:
    for (uint32_t i = 0; i < nb; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_BANKS */
        if (ch->t.bank[i].open_row >= 0)
            return 0;
    }
settle_ranks:
    for (uint32_t r = 0; r < p->ranks; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
        if (ch->ref_due[r] < now)
            return 0; /* a refresh is overdue: it waits for something */
    }
    /* the trace, newest first: only refreshes for period + reach cycles, and it reaches back that far */
    uint64_t from = now - period - reach;
    uint32_t in_period = 0;
    int reached = 0;
settle_trace:
    for (uint32_t i = 0; i < CXL_DRAM_TRACE; i++) {
        if (i >= ch->trace_n) {
            reached = 1; /* every command since the reset is in the trace */
            break;
        }
        const cxl_dram_trace_rec *rec = &ch->trace[(ch->trace_n - 1 - i) % CXL_DRAM_TRACE];
        if (rec->cycle <= from) {
            reached = 1;
            break;
        }
        if (!is_refresh(rec->cmd))
            return 0;
        in_period += rec->cycle >= now - period;
    }
    uint64_t iv = ref_interval(p);
    if (!reached || in_period != p->ranks * (period / iv))
        return 0;
    return in_period;
}

int dram_idle_settled(const cxl_dram *d, const cxl_dram_params *p, uint64_t now, uint32_t *cmds_per_period)
{
    uint64_t period = dram_idle_period(p);
    if (!period)
        return 0;
settle_channels:
    for (uint32_t c = 0; c < p->channels; c++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
        cmds_per_period[c] = chan_settled(&d->ch[c], p, now, period);
        if (!cmds_per_period[c])
            return 0;
    }
    return 1;
}

/* a time set within the last period moves on by `by`; older ones stay */
static void idle_shift(uint64_t *v, uint64_t recent, uint64_t by)
{
    if (*v >= recent)
        *v += by;
}

void dram_idle_jump(cxl_dram *d, const cxl_dram_params *p, uint64_t now, uint64_t k,
                    const uint32_t *cmds_per_period, cxl_dev_stats *st)
{
    uint64_t period = dram_idle_period(p), by = k * period, recent = now - period;
    uint32_t nb = p->ranks * p->bankgroups * p->banks, ng = p->ranks * p->bankgroups;
jump_channels:
    for (uint32_t c = 0; c < p->channels; c++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_CH */
        cxl_dram_chan *ch = &d->ch[c];
        cxl_dram_timing *t = &ch->t;
        for (uint32_t i = 0; i < nb; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_BANKS */
            idle_shift(&t->bank[i].next_act, recent, by);
            idle_shift(&t->bank[i].next_pre, recent, by);
            idle_shift(&t->bank[i].next_col, recent, by);
        }
        for (uint32_t g = 0; g < ng; g++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 64 /* CXL_MAX_BANKS */
            idle_shift(&t->bg_act[g], recent, by);
            idle_shift(&t->bg_rd[g], recent, by);
            idle_shift(&t->bg_wr[g], recent, by);
        }
        for (uint32_t r = 0; r < p->ranks; r++) {
#pragma HLS LOOP_TRIPCOUNT min = 0 max = 4 /* CXL_MAX_RANKS */
            idle_shift(&t->rank_act[r], recent, by);
            idle_shift(&t->rank_rd[r], recent, by);
            idle_shift(&t->rank_wr[r], recent, by);
            for (uint32_t f = 0; f < 4; f++)
                idle_shift(&t->faw[r][f], recent, by);
            ch->ref_due[r] += by; /* in the future (settled): always moves */
        }
        idle_shift(&ch->wake, recent, by);
        /* k periods of the same refreshes: the statistics, and the trace's last entries (command j repeats
         * command j - n, one period later) */
        uint32_t n = cmds_per_period[c];
        st->refs += k * n;
        cxl_dram_trace_rec last[CXL_DRAM_TRACE];
        uint64_t first = ch->trace_n - n, end = ch->trace_n + k * n;
    jump_keep:
        for (uint32_t i = 0; i < n; i++) {
#pragma HLS LOOP_TRIPCOUNT min = 1 max = 256 /* CXL_DRAM_TRACE */
            last[i] = ch->trace[(first + i) % CXL_DRAM_TRACE];
        }
        uint64_t j0 = end - ch->trace_n > CXL_DRAM_TRACE ? end - CXL_DRAM_TRACE : ch->trace_n;
    jump_trace:
        for (uint64_t j = j0; j < end; j++) {
#pragma HLS LOOP_TRIPCOUNT min = 1 max = 256 /* CXL_DRAM_TRACE */
            uint64_t back = j - first; /* >= n */
            cxl_dram_trace_rec rec = last[back % n];
            rec.cycle += back / n * period;
            ch->trace[j % CXL_DRAM_TRACE] = rec;
        }
        ch->trace_n = end;
    }
}
