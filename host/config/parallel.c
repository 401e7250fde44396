/* parallel.c - checks of the parallel layout (issue 3, section 7). */
#include "config/parallel.h"

#include "config/pplayout.h"

#include <stdio.h>
#include <string.h>

typedef unsigned long long ull;

static const cfgloc *tloc(const traincfg *t, int f) { return t->loc[f].file[0] ? &t->loc[f] : &t->ref; }

/* "1, 2, 4, 8" : the tensor-parallel sizes up to limit that divide every value of v[0..n). */
static void common_divisors(const uint64_t *v, int n, uint64_t limit, char *buf, size_t sz)
{
    size_t len = 0;
    buf[0] = '\0';
    for (uint64_t d = 1; d <= limit && len + 24 < sz; d++) {
        int ok = 1;
        for (int i = 0; i < n; i++)
            ok &= v[i] % d == 0;
        if (ok)
            len += (size_t)snprintf(buf + len, sz - len, "%s%llu", len ? ", " : "", (ull)d);
    }
}

/* " x cp 2" in messages about the GPU count, "" without context parallelism (the messages of cp 1 stay). */
typedef struct cp_text {
    char s[32];
} cp_text;
static cp_text cp_factor(const traincfg *t)
{
    cp_text c = { "" };
    if (t->cp > 1)
        snprintf(c.s, sizeof c.s, " x cp %llu", (ull)t->cp);
    return c;
}

uint64_t parallel_microbatches(const traincfg *t) { return t->global_batch / (t->micro_batch * t->dp); }

uint64_t parallel_layers_per_stage(const modelcfg *m, const traincfg *t) { return m->layers / t->pp; }

static int check_tp(const modelcfg *m, const clustercfg *c, const traincfg *t, cxl_err *err)
{
    char valid[256];
    const uint64_t div[3] = { m->heads, m->kv_heads, m->ffn };
    common_divisors(div, 3, m->kv_heads < clustercfg_gpus(c) ? m->kv_heads : clustercfg_gpus(c), valid, sizeof valid);
    const cfgloc *at = tloc(t, TRAINCFG_F_TP);
    if (m->heads % t->tp)
        return cfgloc_errf(err, at, "training.tp: %llu does not divide the %llu attention heads of model '%s'; "
                           "valid tp: %s", (ull)t->tp, (ull)m->heads, m->name, valid);
    if (m->kv_heads % t->tp)
        return cfgloc_errf(err, at, "training.tp: %llu does not divide the %llu KV heads of model '%s' "
                           "(grouped-query attention); valid tp: %s", (ull)t->tp, (ull)m->kv_heads, m->name, valid);
    if (m->ffn % t->tp)
        return cfgloc_errf(err, at, "training.tp: %llu does not divide the FFN size %llu of model '%s'; valid tp: %s",
                           (ull)t->tp, (ull)m->ffn, m->name, valid);
    if (t->sp && m->seq_len % t->tp)
        return cfgloc_errf(err, at, "training.tp: %llu does not divide the sequence length %llu of model '%s', "
                           "which sequence parallelism splits", (ull)t->tp, (ull)m->seq_len, m->name);
    /* the tensor-parallel collectives run in every layer: the group stays on one NVLink fabric (tp ranks
     * are the fastest in the rank order, so tp dividing the domain keeps every group inside one) */
    uint64_t dom = clustercfg_domain(c);
    if (t->tp > dom || dom % t->tp) {
        const uint64_t d4[4] = { m->heads, m->kv_heads, m->ffn, dom };
        common_divisors(d4, 4, dom, valid, sizeof valid);
        return cfgloc_errf(err, at, "training.tp: %llu leaves the NVLink domain of %llu GPUs (cluster '%s' "
                           "nvlink_domain, default gpus_per_node): the tensor-parallel group must lie in one domain; "
                           "valid tp: %s", (ull)t->tp, (ull)dom, c->name, valid);
    }
    return 0;
}

int parallel_uneven_split(const traincfg *t)
{
    return t->first_stage_layers || t->last_stage_layers || t->embedding_in_split || t->loss_in_split ||
           t->pp_layout[0];
}

/* With first/last stage layers: the layers of each of the other stages (the even share of the rest). */
static uint64_t middle_stage_layers(const modelcfg *m, const traincfg *t)
{
    uint64_t set = (t->first_stage_layers ? 1 : 0) + (t->last_stage_layers ? 1 : 0), mid = t->pp - set;
    return mid ? (m->layers - t->first_stage_layers - t->last_stage_layers) / mid : 0;
}

uint64_t parallel_chunk_layers(const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk, uint64_t *first)
{
    uint64_t p = t->pp, v = t->virtual_stages ? t->virtual_stages : 1, L = m->layers, vs = chunk * p + rank, n, f;
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV && chunk == 1)
        vs = 2 * p - 1 - rank; /* the V: chunk 1 of rank r is virtual stage 2p - 1 - r (schedule.h) */
    if (t->pp_layout[0]) {
        /* the layout's own counts (parallel_check has accepted it): the layers of the virtual stages before
         * this one, then this one's transformer layers and MTP modules */
        pplayout lay;
        size_t bad;
        char why[8];
        f = 0, n = 0;
        if (!pplayout_parse(t->pp_layout, &lay, &bad, why, sizeof why) && vs < lay.stages) {
            for (uint64_t i = 0; i < vs; i++)
                f += lay.layers[i];
            n = (uint64_t)lay.layers[vs] + lay.mtp[vs];
        }
        if (first)
            *first = f;
        return n;
    }
    if (t->first_stage_layers || t->last_stage_layers) {
        uint64_t M = middle_stage_layers(m, t), F = t->first_stage_layers ? t->first_stage_layers : M;
        uint64_t La = t->last_stage_layers ? t->last_stage_layers : M;
        n = (rank == 0 ? F : rank == p - 1 ? La : M) / v;
        /* chunks 0..chunk-1 of every rank hold L / v layers; then ranks 0..rank-1 of this chunk */
        f = chunk * (L / v) + (rank ? (F + (rank - 1) * M) / v : 0);
    } else {
        uint64_t e = t->embedding_in_split ? 1 : 0, l = t->loss_in_split ? 1 : 0, per = (L + e + l) / (p * v);
        n = per - (vs == 0 ? e : 0) - (vs == p * v - 1 ? l : 0);
        f = vs * per - (vs ? e : 0);
    }
    /* without a layout the MTP modules run on the last virtual stage, after its layers (Megatron-Core builds
     * them on the last pipeline stage) */
    if (vs == p * v - 1)
        n += m->mtp_layers;
    if (first)
        *first = f;
    return n;
}

/* pipeline_model_parallel_layout against the model and the pipeline (Megatron-Core's
 * PipelineParallelLayerLayout.validate_layer_layout), each error naming its rule. */
static int check_layout(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    const cfgloc *at = tloc(t, TRAINCFG_F_PP_LAYOUT);
    pplayout lay;
    size_t bad;
    char why[192];
    if (pplayout_parse(t->pp_layout, &lay, &bad, why, sizeof why)) {
        cfgloc here = *at;
        if (here.col)
            here.col += (int)bad; /* the offending character, when the value is written unquoted */
        return cfgloc_errf(err, &here, "training.pipeline_model_parallel_layout: \"%s\" at character %llu: %s",
                           t->pp_layout, (ull)bad + 1, why);
    }
    uint64_t p = t->pp, v = t->virtual_stages;
    if (t->first_stage_layers || t->last_stage_layers || t->embedding_in_split || t->loss_in_split)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: a layout and "
                           "decoder_first/last_pipeline_num_layers or account_for_embedding/loss_in_pipeline_split "
                           "exclude each other (Megatron-Core); give one or the other");
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: dualpipev takes an even split of the "
                           "layers; remove the layout or use another pipeline_schedule");
    if (lay.stages != p * v)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'one entry per virtual stage': "
                           "%llu stages (separated by '|') for pp %llu x virtual_stages %llu = %llu; valid: %llu "
                           "stages%s", (ull)lay.stages, (ull)p, (ull)v, (ull)(p * v), (ull)(p * v),
                           lay.stages % p ? "" : " (or set virtual_stages to the stages / pp)");
    if (lay.embeds != 1 || !lay.embed_first)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'E first, once': the layout "
                           "must begin with the embedding E and name it once (it names it %llu times)",
                           (ull)lay.embeds);
    if (lay.losses != 1 || !lay.loss_last)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'L last, once': the layout "
                           "must end with the loss L and name it once (it names it %llu times)", (ull)lay.losses);
    if (lay.decoders != m->layers)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'one t per layer': %llu "
                           "transformer layers (t) for the %llu layers of model '%s'", (ull)lay.decoders,
                           (ull)m->layers, m->name);
    if (lay.mtps != m->mtp_layers)
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'one m per MTP module': %llu "
                           "MTP modules (m) for the %llu of model '%s' (model.mtp_layers)", (ull)lay.mtps,
                           (ull)m->mtp_layers, m->name);
    if (lay.mtps && (!lay.mtp_after_layers || lay.mtp_vs != lay.loss_vs || lay.mtp[lay.mtp_vs] != lay.mtps))
        return cfgloc_errf(err, at, "training.pipeline_model_parallel_layout: rule 'm after the layers, with L': "
                           "the MTP modules follow every transformer layer and stand in the loss's virtual stage "
                           "(Megatron-Core puts them after the layers in one stage; the engine runs them with the "
                           "loss), e.g. ...tmL");
    return 0;
}

/* The uneven split's rules (Megatron-Core's TransformerConfig checks), each naming the valid values. */
static int check_uneven(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    uint64_t p = t->pp, v = t->virtual_stages, L = m->layers, F = t->first_stage_layers, La = t->last_stage_layers;
    if (F || La) {
        int at = F ? TRAINCFG_F_FIRST_LAYERS : TRAINCFG_F_LAST_LAYERS;
        if (t->embedding_in_split || t->loss_in_split)
            return cfgloc_errf(err, tloc(t, at), "training.%s: the first/last stage's layers and "
                               "account_for_embedding/loss_in_pipeline_split exclude each other (Megatron-Core); "
                               "give one or the other", F ? "decoder_first_pipeline_num_layers" :
                               "decoder_last_pipeline_num_layers");
        if (p < 2 || (F && La && p == 2 && F + La != L) || F + La > L)
            return cfgloc_errf(err, tloc(t, at), "training.%s: pp %llu stages and the first/last stages' %llu + %llu "
                               "layers do not fit the %llu layers of model '%s'; with pp 2 the two must add up to "
                               "%llu, and pp must be at least 2", F ? "decoder_first_pipeline_num_layers" :
                               "decoder_last_pipeline_num_layers", (ull)p, (ull)F, (ull)La, (ull)L, m->name, (ull)L);
        uint64_t set = (F ? 1 : 0) + (La ? 1 : 0), mid = p - set, rest = L - F - La;
        if (mid && rest % mid)
            return cfgloc_errf(err, tloc(t, at), "training.%s: the other %llu stages cannot share the remaining %llu "
                               "layers evenly; the first and last stages must leave a multiple of %llu",
                               F ? "decoder_first_pipeline_num_layers" : "decoder_last_pipeline_num_layers",
                               (ull)mid, (ull)rest, (ull)mid);
        uint64_t M = mid ? rest / mid : 0;
        if ((F && F % v) || (La && La % v) || M % v)
            return cfgloc_errf(err, tloc(t, TRAINCFG_F_VIRTUAL_STAGES), "training.virtual_stages: %llu does not "
                               "divide every stage's layers (first %llu, middle %llu, last %llu); each stage's "
                               "layers are split evenly over its model chunks", (ull)v, (ull)(F ? F : M), (ull)M,
                               (ull)(La ? La : M));
        return 0;
    }
    uint64_t e = t->embedding_in_split ? 1 : 0, l = t->loss_in_split ? 1 : 0;
    if ((L + e + l) % (p * v))
        return cfgloc_errf(err, tloc(t, e ? TRAINCFG_F_EMBED_SPLIT : TRAINCFG_F_LOSS_SPLIT),
                           "training.%s: %llu layers + %llu (embedding, loss) = %llu do not divide into pp %llu x "
                           "virtual_stages %llu = %llu model chunks", e ? "account_for_embedding_in_pipeline_split" :
                           "account_for_loss_in_pipeline_split", (ull)L, (ull)(e + l), (ull)(L + e + l), (ull)p,
                           (ull)v, (ull)(p * v));
    return 0;
}

/* bf16 first/last layers: an FP8 run's option (Megatron's --first-last-layers-bf16), within the model */
static int check_bf16_layers(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    uint64_t a = t->bf16_layers_start, z = t->bf16_layers_end;
    int at = a ? TRAINCFG_F_BF16_START : TRAINCFG_F_BF16_END;
    if ((a || z) && t->precision != GPUCFG_FP8)
        return cfgloc_errf(err, tloc(t, at), "training.%s: bf16 layers are an option of FP8 training, but "
                           "precision is not fp8; remove the key or set precision: fp8",
                           a ? "num_layers_at_start_in_bf16" : "num_layers_at_end_in_bf16");
    if (a + z > m->layers)
        return cfgloc_errf(err, tloc(t, at), "training.%s: %llu + %llu bf16 layers exceed the %llu layers of "
                           "model '%s'; valid: a sum of at most %llu", a ? "num_layers_at_start_in_bf16" :
                           "num_layers_at_end_in_bf16", (ull)a, (ull)z, (ull)m->layers, m->name, (ull)m->layers);
    return 0;
}

/* recompute_method and recompute_num_layers: options of full recomputation (Megatron's arguments.py requires
 * recompute_method and recompute_num_layers with --recompute-granularity full, and neither without it) */
static int check_recompute_layers(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    int has_method = t->recompute_method != TRAINCFG_RECOMPUTE_UNIFORM, has_n = t->recompute_num_layers != 0;
    if ((has_method || has_n) && t->recompute != TRAINCFG_RECOMPUTE_FULL)
        return cfgloc_errf(err, tloc(t, has_method ? TRAINCFG_F_RECOMPUTE_METHOD : TRAINCFG_F_RECOMPUTE_NUM_LAYERS),
                           "training.%s: an option of full recomputation, but recompute is %s; set recompute: full "
                           "or remove the key", has_method ? "recompute_method" : "recompute_num_layers",
                           traincfg_recompute_names[t->recompute]);
    if (t->recompute_method == TRAINCFG_RECOMPUTE_BLOCK && !t->recompute_num_layers)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_RECOMPUTE_METHOD),
                           "training.recompute_method: block recomputes the first recompute_num_layers layers of "
                           "each model chunk, but recompute_num_layers is not given; set it (1 to %llu)",
                           (ull)m->layers);
    if (t->recompute_num_layers > m->layers)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_RECOMPUTE_NUM_LAYERS),
                           "training.recompute_num_layers: %llu exceeds the %llu layers of model '%s'; valid: 1 to %llu",
                           (ull)t->recompute_num_layers, (ull)m->layers, m->name, (ull)m->layers);
    return 0;
}

/* tp_comm_overlap: Megatron turns Transformer Engine's userbuffers off without sequence parallelism (Megatron-
 * Bridge src/megatron/bridge/training/comm_overlap.py: "Disabling tensor parallel communication overlap due to
 * sequence_parallel=False") and needs tp > 1; the engine models it on dense, non-MLA layers only */
static int check_tp_comm_overlap(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    if (!t->tp_comm_overlap)
        return 0;
    const cfgloc *at = tloc(t, TRAINCFG_F_TP_COMM_OVERLAP);
    if (t->tp < 2 || !t->sp)
        return cfgloc_errf(err, at, "training.tp_comm_overlap: Transformer Engine's userbuffers overlap the "
                           "tensor-parallel collectives of sequence parallelism, but tp is %llu%s; use tp 2 or more "
                           "with sp: true, or tp_comm_overlap: false", (ull)t->tp, t->sp ? "" : " and sp is off");
    if (!t->tp_grad_overlap)
        return cfgloc_errf(err, at, "training.tp_comm_overlap: its bulk overlaps are the backward's collectives "
                           "beside the GEMMs, but tp_grad_comm_overlap is false; set it true, or tp_comm_overlap: false");
    if (modelcfg_is_moe(m) || modelcfg_is_mla(m))
        return cfgloc_errf(err, at, "training.tp_comm_overlap: modelled for dense layers with standard attention, "
                           "but model '%s' has %s; use tp_comm_overlap: false", m->name,
                           modelcfg_is_moe(m) ? "experts" : "multi-head latent attention");
    return 0;
}

/* training.pipeline_schedule against pp and virtual_stages (schedule.h states each schedule's needs). */
static int check_schedule(const traincfg *t, cxl_err *err)
{
    const cfgloc *at = tloc(t, TRAINCFG_F_PIPELINE_SCHEDULE);
    uint64_t v = t->virtual_stages;
    switch (t->pipeline_schedule) {
    case TRAINCFG_SCHEDULE_1F1B:
        if (v > 1)
            return cfgloc_errf(err, at, "training.pipeline_schedule: 1f1b runs one model chunk per rank, but "
                               "virtual_stages is %llu; use interleaved, or virtual_stages 1", (ull)v);
        return 0;
    case TRAINCFG_SCHEDULE_INTERLEAVED:
        if (v < 2 || t->pp < 2)
            return cfgloc_errf(err, at, "training.pipeline_schedule: interleaved needs pp >= 2 and virtual_stages "
                               ">= 2 (model chunks per rank); pp is %llu, virtual_stages %llu", (ull)t->pp, (ull)v);
        return 0;
    case TRAINCFG_SCHEDULE_ZB_H1:
        if (t->pp < 2)
            return cfgloc_errf(err, at, "training.pipeline_schedule: zb-h1 needs a pipeline, but pp is 1; valid: "
                               "pp >= 2, or pipeline_schedule auto");
        if (v > 1)
            return cfgloc_errf(err, at, "training.pipeline_schedule: zb-h1 runs one model chunk per rank, but "
                               "virtual_stages is %llu; use virtual_stages 1", (ull)v);
        return 0;
    case TRAINCFG_SCHEDULE_DUALPIPEV:
        if (t->pp < 2 || v != 2)
            return cfgloc_errf(err, at, "training.pipeline_schedule: dualpipev places two model chunks per rank in "
                               "a V: it needs pp >= 2 and virtual_stages 2; pp is %llu, virtual_stages %llu",
                               (ull)t->pp, (ull)v);
        if (parallel_uneven_split(t))
            return cfgloc_errf(err, at, "training.pipeline_schedule: dualpipev takes an even split of the layers; "
                               "remove decoder_first/last_pipeline_num_layers and "
                               "account_for_embedding/loss_in_pipeline_split");
        return 0;
    default:
        return 0;
    }
}

static int check_pp(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    int rc = check_bf16_layers(m, t, err);
    if (!rc)
        rc = check_recompute_layers(m, t, err);
    if (!rc)
        rc = check_tp_comm_overlap(m, t, err);
    if (!rc)
        rc = check_schedule(t, err);
    if (rc)
        return rc;
    uint64_t v = t->virtual_stages;
    if (v > 1 && t->pp == 1)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_VIRTUAL_STAGES),
                           "training.virtual_stages: %llu, but interleaving needs a pipeline (pp is 1); use 1",
                           (ull)v);
    if (t->pp_layout[0])
        return check_layout(m, t, err);
    if (parallel_uneven_split(t))
        return check_uneven(m, t, err);
    if (m->layers % t->pp)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_PP),
                           "training.pp: %llu pipeline stages do not divide the %llu layers of model '%s' (an "
                           "uneven split: decoder_first/last_pipeline_num_layers or "
                           "account_for_embedding/loss_in_pipeline_split)",
                           (ull)t->pp, (ull)m->layers, m->name);
    if (m->layers % (t->pp * v))
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_VIRTUAL_STAGES),
                           "training.virtual_stages: pp %llu x virtual_stages %llu = %llu model chunks do not "
                           "divide the %llu layers of model '%s' (%llu layers per stage)",
                           (ull)t->pp, (ull)v, (ull)(t->pp * v), (ull)m->layers, m->name,
                           (ull)(m->layers / t->pp));
    return 0;
}

/* What the model's shape asks of tp, pp and sp. */
static int check_shape(const modelcfg *m, const clustercfg *c, const traincfg *t, cxl_err *err)
{
    if (t->sp && t->tp == 1)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_SP),
                           "training.sp: sequence parallelism splits along tensor-parallel ranks, but tp is 1; "
                           "set tp > 1 or sp: false");
    int rc = check_tp(m, c, t, err);
    return rc ? rc : check_pp(m, t, err);
}

int parallel_derive_dp(const modelcfg *m, const clustercfg *c, traincfg *t, cxl_err *err)
{
    if (t->loc[TRAINCFG_F_DP].file[0])
        return 0;
    uint64_t gpus = clustercfg_gpus(c), tpp = t->tp * t->pp * (t->cp ? t->cp : 1);
    if (tpp && gpus % tpp == 0) {
        t->dp = gpus / tpp;
        return 0;
    }
    int rc = check_shape(m, c, t, err);     /* the layout's own errors say more */
    if (rc)
        return rc;
    return cfgloc_errf(err, tloc(t, t->cp > 1 ? TRAINCFG_F_CP : TRAINCFG_F_PP),
                       "training: dp is not given, and tp %llu x pp %llu%s = %llu does not divide the %llu GPUs "
                       "of cluster '%s' (nodes %llu x gpus_per_node %llu) to derive it", (ull)t->tp, (ull)t->pp,
                       cp_factor(t).s, (ull)tpp, (ull)gpus, c->name, (ull)c->nodes, (ull)c->gpus_per_node);
}

uint64_t parallel_etp(const traincfg *t) { return t->etp ? t->etp : t->tp; }

/* "1, 2, 4" : the expert-parallel sizes up to the stage's GPUs that satisfy every rule of check_moe. */
static void valid_eps(const modelcfg *m, const clustercfg *c, const traincfg *t, uint64_t etp, char *buf, size_t sz)
{
    size_t len = 0;
    uint64_t stage = t->tp * t->dp, gpn = clustercfg_domain(c);
    buf[0] = '\0';
    for (uint64_t ep = 1; ep <= stage && ep <= m->experts && len + 24 < sz; ep++) {
        uint64_t g = ep * etp;
        if (m->experts % ep == 0 && stage % g == 0 && (gpn % g == 0 || g % gpn == 0))
            len += (size_t)snprintf(buf + len, sz - len, "%s%llu", len ? ", " : "", (ull)ep);
    }
    if (!len)
        snprintf(buf, sz, "none with etp %llu", (ull)etp);
}

/* Mixture of experts: the expert grid of Megatron-Core (RankGenerator order tp-cp-ep-dp-pp, the expert
 * layers' tensor-parallel size etp in place of tp: etp fastest, then ep, then the expert-data-parallel
 * ranks) reuses each pipeline stage's tp x dp ranks, so ep x etp divides them; each rank holds whole
 * experts; the expert-tensor-parallel group stays in one NVLink domain (clustercfg_domain), and the EP x
 * ETP group either fits in one domain or is made of whole domains, so that every GPU sees the same mix of NVLink
 * and network peers in the all-to-all. Megatron-LM requires sequence parallelism with MoE and tp > 1
 * (megatron/training/arguments.py: "When using MoE and tensor parallelism, sequence parallelism must be
 * used"), which is also what lets each tp rank route only its own 1/tp of the tokens. */
static int check_moe(const modelcfg *m, const clustercfg *c, const traincfg *t, cxl_err *err)
{
    char valid[256];
    if (!modelcfg_is_moe(m)) {
        if (t->ep > 1)
            return cfgloc_errf(err, tloc(t, TRAINCFG_F_EP), "training.ep: %llu, but model '%s' has no experts "
                               "(experts is 0); expert parallelism needs a mixture of experts: use ep 1",
                               (ull)t->ep, m->name);
        return 0;
    }
    uint64_t etp = parallel_etp(t), gpn = clustercfg_domain(c), g = t->ep * etp, stage = t->tp * t->dp;
    if (t->tp > 1 && !t->sp)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_SP), "training.sp: model '%s' is a mixture of experts with tp "
                           "%llu; Megatron-LM requires sequence parallelism with MoE and tensor parallelism: set "
                           "sp: true, or tp 1", m->name, (ull)t->tp);
    if (etp > gpn || gpn % etp || m->expert_ffn % etp) {
        uint64_t d[2] = { m->expert_ffn, gpn };
        common_divisors(d, 2, gpn, valid, sizeof valid);
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_ETP), "training.etp: %llu %s; the expert-tensor-parallel group "
                           "must divide the expert FFN size %llu and stay in one NVLink domain (%llu GPUs: "
                           "nvlink_domain, default gpus_per_node); valid etp: %s", (ull)etp,
                           m->expert_ffn % etp ? "does not divide the expert FFN" : "leaves the NVLink domain",
                           (ull)m->expert_ffn, (ull)gpn, valid);
    }
    valid_eps(m, c, t, etp, valid, sizeof valid);
    if (m->experts % t->ep)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_EP), "training.ep: %llu does not divide the %llu experts of "
                           "model '%s' (each rank holds experts / ep whole experts); valid ep: %s", (ull)t->ep,
                           (ull)m->experts, m->name, valid);
    if (stage % g)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_EP), "training.ep: ep %llu x etp %llu = %llu does not divide "
                           "tp %llu x dp %llu = %llu, the GPUs of a pipeline stage that the expert layers regroup "
                           "(Megatron-Core's expert rank grid); valid ep: %s", (ull)t->ep, (ull)etp, (ull)g,
                           (ull)t->tp, (ull)t->dp, (ull)stage, valid);
    if (gpn % g && g % gpn)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_EP), "training.ep: the EP x ETP group of %llu x %llu = %llu GPUs "
                           "leaves the NVLink domain of %llu GPUs (cluster nvlink_domain, default gpus_per_node) "
                           "part-way: it must fit in one domain or span whole domains; valid ep: %s", (ull)t->ep,
                           (ull)etp, (ull)g, (ull)gpn, valid);
    return 0;
}

/* Context parallelism (Megatron-Core): the sequence is cut into 2 x cp chunks, rank i taking chunks i and
 * 2cp - 1 - i so that every rank gets the same share of the causal attention (get_batch_on_this_cp_rank),
 * and sequence parallelism cuts each rank's part again by tp: seq_len must divide by 2 x cp (x tp with sp).
 * The exchange runs inside Transformer Engine's fused attention, so cp needs the flash kernels; MoE layers
 * with cp are not modelled yet. */
static int check_cp(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    uint64_t cp = t->cp ? t->cp : 1, q = 2 * (t->sp ? t->tp : 1);
    if (cp == 1)
        return 0;
    const cfgloc *at = tloc(t, TRAINCFG_F_CP);
    if (m->seq_len % (q * cp)) {
        char valid[256];
        size_t len = 0;
        for (uint64_t d = 1; d <= 1024 && q * d <= m->seq_len && len + 24 < sizeof valid; d *= 2)
            if (m->seq_len % (q * d) == 0)
                len += (size_t)snprintf(valid + len, sizeof valid - len, "%s%llu", len ? ", " : "", (ull)d);
        return cfgloc_errf(err, at, "training.cp: %llu does not divide the sequence length %llu of model '%s' into "
                           "2 x cp%s chunks (%llu); valid cp: %s", (ull)cp, (ull)m->seq_len, m->name,
                           t->sp ? " x tp" : "", (ull)(q * cp), len ? valid : "1");
    }
    if (!traincfg_flash(t))
        return cfgloc_errf(err, tloc(t, t->attention == TRAINCFG_ATTENTION_FLASH ? TRAINCFG_F_PRECISION
                                                                                  : TRAINCFG_F_ATTENTION),
                           "training.cp: context parallelism runs inside the fused attention kernels, but the "
                           "attention here is unfused (attention: %s, precision: %s); use attention: flash with "
                           "bf16, fp16 or fp8, or cp 1", traincfg_attention_names[t->attention],
                           gpucfg_dtype_names[t->precision]);
    if (modelcfg_is_moe(m))
        return cfgloc_errf(err, at, "training.cp: context parallelism with mixture-of-experts layers (model '%s') is "
                           "not modelled yet; use cp 1", m->name);
    return 0;
}

/* Megatron-Core's activation offloading (TransformerConfig.__post_init__, megatron/core/transformer/
 * transformer_config.py): cpu_offloading_num_layers below num_layers, "no support for Pipeline parallelism
 * with CPU offloading", and "CPU offloading does not work when activation recomputation is enabled". */
static int check_cpu_offload(const modelcfg *m, const clustercfg *c, const traincfg *t, cxl_err *err)
{
    uint64_t n = t->cpu_offload_layers;
    if (!n)
        return 0;
    const cfgloc *at = tloc(t, TRAINCFG_F_CPU_OFFLOAD);
    if (n >= m->layers)
        return cfgloc_errf(err, at, "training.cpu_offload_layers: %llu, but Megatron-Core offloads fewer layers "
                           "than the model's %llu (cpu_offloading_num_layers < num_layers); use 1 to %llu",
                           (ull)n, (ull)m->layers, (ull)(m->layers - 1));
    if (t->pp > 1)
        return cfgloc_errf(err, at, "training.cpu_offload_layers: Megatron-Core has no activation offloading with "
                           "pipeline parallelism (pp is %llu); use pp 1, or cpu_offload_layers 0", (ull)t->pp);
    if (t->recompute != TRAINCFG_RECOMPUTE_NONE)
        return cfgloc_errf(err, at, "training.cpu_offload_layers: Megatron-Core offloads activations only without "
                           "recomputation (recompute is %s); use recompute none, or cpu_offload_layers 0",
                           traincfg_recompute_names[t->recompute]);
    if (!c->host_link_bw_bps)
        return cfgloc_errf(err, at, "training.cpu_offload_layers: cluster '%s' gives no host_link_bandwidth (each "
                           "GPU's copies to the CPU's memory, e.g. 225GB/s on gb200-nvl72's NVLink-C2C); set "
                           "cluster.host_link_bandwidth", c->name);
    return 0;
}

/* training.grad_reduce: each framework's keys only with its own reduction (traincfg.h), so that a key
 * that would change nothing is not silently ignored; DeepSpeed's ZeRO with Megatron-FSDP is no setup. */
static int check_grad_reduce(const traincfg *t, cxl_err *err)
{
    int ds = t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED;
    static const struct { int field, deepspeed; const char *key; } keys[] = {
        { TRAINCFG_F_OVERLAP, 0, "overlap_grad_reduce" },
        { TRAINCFG_F_OVERLAP_COMM, 1, "overlap_comm" }, { TRAINCFG_F_REDUCE_BUCKET, 1, "reduce_bucket_size" },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (t->loc[keys[i].field].file[0] && keys[i].deepspeed != ds)
            return cfgloc_errf(err, tloc(t, keys[i].field),
                               "training.%s: %s's option, but grad_reduce is %s; use %s with grad_reduce %s, or "
                               "set grad_reduce: %s", keys[i].key, ds ? "Megatron" : "DeepSpeed",
                               ds ? "deepspeed" : "megatron", ds ? "overlap_comm and reduce_bucket_size" :
                               "overlap_grad_reduce", ds ? "deepspeed" : "megatron",
                               ds ? "megatron" : "deepspeed");
    if (ds && t->data_parallel == TRAINCFG_DP_FSDP)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_GRAD_REDUCE),
                           "training.grad_reduce: deepspeed with data_parallel fsdp: Megatron-FSDP reduces its own "
                           "gradients; use grad_reduce megatron, or data_parallel ddp with zero 3 for DeepSpeed's "
                           "ZeRO-3");
    return 0;
}

/* Megatron-FSDP (data_parallel: fsdp) with data_parallel_sharding_strategy optim_grads_params: it is ZeRO-3
 * (megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py, class MegatronFSDP), and it always
 * overlaps the gradient reduce-scatter with the backward pass (the constructor sets overlap_grad_reduce for
 * the gradient-sharding strategies and asserts it). Pipeline parallelism is accepted: Megatron-LM's
 * argument checks for --use-megatron-fsdp refuse none (megatron/training/arguments.py, validate_args). */
static int check_fsdp(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    if (t->data_parallel != TRAINCFG_DP_FSDP && t->fsdp_double_buffer)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_FSDP_DOUBLE_BUFFER),
                           "training.fsdp_double_buffer: Megatron-FSDP's buffers; it needs data_parallel fsdp (the "
                           "data_parallel is ddp)");
    if (t->keep_fp8_transpose && (t->data_parallel != TRAINCFG_DP_FSDP || t->precision != GPUCFG_FP8 ||
                                  !t->fp8_param_gather))
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_KEEP_FP8_TRANSPOSE),
                           "training.keep_fp8_transpose_cache: Megatron-FSDP's cache of FP8 weight transposes; it "
                           "needs data_parallel fsdp, precision fp8 and fp8_param_gather (here %s, %s, %s)",
                           traincfg_data_parallel_names[t->data_parallel], gpucfg_dtype_names[t->precision],
                           t->fp8_param_gather ? "true" : "false");
    if (t->data_parallel != TRAINCFG_DP_FSDP)
        return 0;
    if (t->loc[TRAINCFG_F_ZERO].file[0] && t->zero != 3)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_ZERO),
                           "training.zero: %llu conflicts with data_parallel fsdp: Megatron-FSDP's optim_grads_params "
                           "shards weights, gradients and optimizer states (ZeRO-3); leave zero out or set it to 3, "
                           "or use data_parallel ddp with zero %llu", (ull)t->zero, (ull)t->zero);
    if (t->loc[TRAINCFG_F_OVERLAP].file[0] && !t->overlap_grad_reduce)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_OVERLAP),
                           "training.overlap_grad_reduce: false conflicts with data_parallel fsdp: Megatron-FSDP "
                           "always reduce-scatters each layer's gradients during the backward pass; remove the key "
                           "or use data_parallel ddp");
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_ZB_H1 || t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_PIPELINE_SCHEDULE),
                           "training.pipeline_schedule: %s splits the backward into input- and weight-gradient "
                           "passes, and Megatron-FSDP's per-layer gradient reduce-scatter with that split is not "
                           "modelled yet; use pipeline_schedule auto, 1f1b or interleaved with data_parallel fsdp, "
                           "or data_parallel ddp", traincfg_schedule_names[t->pipeline_schedule]);
    if (modelcfg_is_moe(m))
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_DATA_PARALLEL),
                           "training.data_parallel: fsdp with mixture-of-experts layers (model '%s') is not modelled "
                           "yet (the experts would gather over the expert-data-parallel group); use data_parallel "
                           "ddp", m->name);
    return 0;
}

/* training.overlap_param_gather: Megatron-Core's forward pre-hooks belong to its DDP wrapper with the distributed
 * optimizer (megatron/core/distributed/distributed_data_parallel.py, use_forward_hook = use_distributed_optimizer
 * and overlap_param_gather; Megatron-LM 0d8e071); Megatron-FSDP gathers its units itself (fsdp.h), and ZeRO-3
 * and DeepSpeed's reduction are other frameworks' gathers. align_param_gather acts only with it. */
static int check_param_gather(const traincfg *t, cxl_err *err)
{
    if (t->overlap_param_gather_with_optimizer_step) {
        /* Megatron-LM 0d8e071 arguments.py: the distributed optimizer, interleaved pipeline parallelism;
         * get_megatron_optimizer's [[model_chunks[0]], model_chunks[1:]] */
        const cfgloc *w = tloc(t, TRAINCFG_F_OPG_WITH_OPT_STEP);
        if (t->zero < 1 || t->zero > 2 || t->data_parallel == TRAINCFG_DP_FSDP ||
            t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED)
            return cfgloc_errf(err, w, "training.overlap_param_gather_with_optimizer_step: Megatron-Core's distributed "
                               "optimizer option; use zero 1 or 2 with data_parallel ddp and grad_reduce megatron, or "
                               "remove the key");
        if (t->virtual_stages < 2)
            return cfgloc_errf(err, w, "training.overlap_param_gather_with_optimizer_step: it steps the first model "
                               "chunk's optimizer apart from the others', but virtual_stages is %llu; set "
                               "virtual_stages > 1 (Megatron: interleaved pipeline parallelism only), or remove the key",
                               (ull)t->virtual_stages);
    }
    if (t->align_param_gather && !t->overlap_param_gather)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_ALIGN_PARAM_GATHER),
                           "training.align_param_gather: it places the overlapped parameter all-gathers, but "
                           "overlap_param_gather is false; set overlap_param_gather: true, or remove the key");
    if (!t->overlap_param_gather)
        return 0;
    const cfgloc *at = tloc(t, TRAINCFG_F_OVERLAP_PARAM_GATHER);
    if (t->data_parallel == TRAINCFG_DP_FSDP)
        return cfgloc_errf(err, at, "training.overlap_param_gather: Megatron-Core's DDP option, but data_parallel is "
                           "fsdp (Megatron-FSDP all-gathers each unit before its forward itself); remove the key, or "
                           "use data_parallel ddp with zero 1");
    if (t->zero < 1 || t->zero > 2)
        return cfgloc_errf(err, at, "training.overlap_param_gather: it overlaps the distributed optimizer's "
                           "parameter all-gather, but zero is %llu (%s); use zero 1 or 2 (Megatron's "
                           "use_distributed_optimizer), or remove the key", (ull)t->zero,
                           t->zero ? "ZeRO-3 gathers each layer's parameters itself" : "no distributed optimizer");
    if (t->grad_reduce == TRAINCFG_GRAD_DEEPSPEED)
        return cfgloc_errf(err, at, "training.overlap_param_gather: Megatron's option, but grad_reduce is deepspeed; "
                           "use grad_reduce megatron, or remove the key");
    return 0;
}

/* training.moe_a2a_overlap: Megatron-Core 0d8e071's checks of overlap_moe_expert_parallel_comm
 * (megatron/core/transformer/transformer_config.py, __post_init__: expert parallelism, the alltoall or flex
 * dispatcher (both of training.moe_dispatcher's), no full recomputation nor recompute_method, a bf16 or fp16
 * model (FP8 training keeps a bf16 model), virtual stages when pp > 1, at most one MTP layer; delay_wgrad_compute
 * needs it), and what the engine's combined schedule leaves out (docs/training.md, "All-to-all overlap"). */
static int check_a2a_overlap(const modelcfg *m, const traincfg *t, cxl_err *err)
{
    if (!t->moe_a2a_overlap)
        return 0;
    const cfgloc *at = tloc(t, TRAINCFG_F_MOE_A2A_OVERLAP);
    const char *k = "training.moe_a2a_overlap";
    if (!modelcfg_is_moe(m) || t->ep <= 1)
        return cfgloc_errf(err, at, "%s: Megatron-Core overlaps the expert-parallel all-to-alls only with expert "
                           "parallelism ('overlap_moe_expert_parallel_comm is only supported with expert model "
                           "parallelism'); model '%s' has %llu experts and ep is %llu: set ep > 1 on an MoE model, "
                           "or moe_a2a_overlap: false", k, m->name, (ull)m->experts, (ull)t->ep);
    if (t->pp > 1 && t->virtual_stages <= 1)
        return cfgloc_errf(err, at, "%s: with pp %llu Megatron-Core needs virtual stages ('If enabling EP A2A "
                           "overlap, virtual_pipeline_model_parallel_size must be specified when "
                           "pipeline_model_parallel_size > 1'); set virtual_stages >= 2, pp 1, or moe_a2a_overlap: "
                           "false", k, (ull)t->pp);
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_ZB_H1 || t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV)
        return cfgloc_errf(err, at, "%s: Megatron-Core's combined 1F1B runs in its no-pipelining and interleaved "
                           "schedules only; pipeline_schedule is %s: use auto or interleaved", k,
                           t->pipeline_schedule == TRAINCFG_SCHEDULE_ZB_H1 ? "zb-h1" : "dualpipev");
    if (t->recompute == TRAINCFG_RECOMPUTE_FULL)
        return cfgloc_errf(err, at, "%s: Megatron-Core refuses full recomputation with it ('disable full "
                           "recomputation when enabling overlap_moe_expert_parallel_comm'); valid recompute: none, "
                           "selective", k);
    if (t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32)
        return cfgloc_errf(err, at, "%s: Megatron-Core needs a bf16 or fp16 model ('overlap_moe_expert_parallel_comm "
                           "is only supported with bf16 or fp16 model'); precision is %s: use bf16, fp16 or fp8", k,
                           gpucfg_dtype_names[t->precision]);
    if (m->mtp_layers > 1)
        return cfgloc_errf(err, at, "%s: Megatron-Core takes at most one MTP layer with it ('MTP layernum only "
                           "supports 1'); model '%s' has %llu", k, m->name, (ull)m->mtp_layers);
    if (t->pp > 1 && !t->overlap_p2p_comm)
        return cfgloc_errf(err, at, "%s: with pp %llu the engine runs the combined schedule with asynchronous "
                           "pipeline sends only (Megatron-Bridge sets overlap_p2p_comm for every pp > 1, vp > 1 run: "
                           "comm_overlap.py); set overlap_p2p_comm: true", k, (ull)t->pp);
    if (t->zero >= 3 || t->data_parallel == TRAINCFG_DP_FSDP || t->cpu_offload_layers)
        return cfgloc_errf(err, at, "%s: not modelled with %s; valid: zero 0-2 without cpu_offload_layers", k,
                           t->cpu_offload_layers ? "cpu_offload_layers" : "zero 3 (per-layer parameter gathers)");
    return 0;
}

/* gpu.gemm_sweep against the GPU: a measured GEMM rate at or below its dtype's peak (compute.h reads the sweep
 * as a fraction of it; an mxfp8 point of the fp8 peak, on a GPU whose tensor cores apply MXFP8's scales). */
static int check_sweep(const gpucfg *g, cxl_err *err)
{
    const cfgloc *gl = g->loc[GPUCFG_F_GEMM_SWEEP].file[0] ? &g->loc[GPUCFG_F_GEMM_SWEEP] : &g->ref;
    for (size_t i = 0; i < g->gemm_sweep.n; i++) {
        const gpucfg_sweep_point *p = &g->gemm_sweep.pt[i];
        int pd = gpucfg_sweep_peak_dtype(p->dtype);
        if (p->dtype == GPUCFG_SWEEP_MXFP8 && !g->mxfp8)
            return cfgloc_errf(err, gl, "gpu.gemm_sweep: %llu x %llu x %llu in mxfp8, but gpu '%s' has mxfp8: false "
                               "(its GEMMs never take MXFP8's block scales); valid: mxfp8 points on a GPU with "
                               "mxfp8: true, or none", (ull)p->m, (ull)p->n, (ull)p->k, g->name);
        if (!(p->tflops <= g->tflops[pd]))
            return cfgloc_errf(err, gl, "gpu.gemm_sweep: %llu x %llu x %llu in %s at %g TFLOP/s is above the %s peak "
                               "of gpu '%s' (%s_tflops: %g); valid: a measured rate up to %g",
                               (ull)p->m, (ull)p->n, (ull)p->k, gpucfg_sweep_dtype_names[p->dtype], p->tflops,
                               gpucfg_dtype_names[pd], g->name, gpucfg_dtype_names[pd], g->tflops[pd], g->tflops[pd]);
    }
    return 0;
}

int parallel_check(const modelcfg *m, const gpucfg *g, const clustercfg *c, const traincfg *t, cxl_err *err)
{
    int rc = clustercfg_check_domain(c, err);
    /* the SMs a collective holds must leave some to the overlapped compute kernels (compute.h) */
    if (!rc && g->collective_sms && g->sms && g->collective_sms >= g->sms) {
        const cfgloc *gl = g->loc[GPUCFG_F_COLL_SMS].file[0] ? &g->loc[GPUCFG_F_COLL_SMS] : &g->ref;
        return cfgloc_errf(err, gl, "gpu.collective_sms: %llu is not below the %llu SMs of gpu '%s'; valid: 0 (not "
                           "modelled) to %llu", (ull)g->collective_sms, (ull)g->sms, g->name, (ull)(g->sms - 1));
    }
    if (!rc)
        rc = check_sweep(g, err);
    if (!rc)
        rc = check_shape(m, c, t, err);
    if (!rc)
        rc = check_cp(m, t, err);
    if (rc)
        return rc;
    uint64_t gpus = clustercfg_gpus(c), need = t->tp * t->pp * t->dp * (t->cp ? t->cp : 1);
    if (gpus != need) {
        const cfgloc *cl = c->loc[CLUSTERCFG_F_NODES].file[0] ? &c->loc[CLUSTERCFG_F_NODES] : &c->ref;
        char at[sizeof cl->file + 32];  /* file:line:column, or `--set cluster.nodes` alone (override.h) */
        if (cl->line > 0)
            snprintf(at, sizeof at, "%.190s:%d:%d", cl->file, cl->line, cl->col);
        else
            snprintf(at, sizeof at, "%.190s", cl->file);
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_DP),
                           "training: tp %llu x pp %llu%s x dp %llu = %llu GPUs, but cluster '%s' has nodes %llu x "
                           "gpus_per_node %llu = %llu GPUs (nodes set at %s)",
                           (ull)t->tp, (ull)t->pp, cp_factor(t).s, (ull)t->dp, (ull)need, c->name, (ull)c->nodes,
                           (ull)c->gpus_per_node, (ull)gpus, at);
    }
    uint64_t mbdp = t->micro_batch * t->dp;
    if (t->global_batch % mbdp)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_GLOBAL_BATCH),
                           "training.global_batch: %llu is not a multiple of micro_batch %llu x dp %llu = %llu",
                           (ull)t->global_batch, (ull)t->micro_batch, (ull)t->dp, (ull)mbdp);
    uint64_t n = parallel_microbatches(t);
    /* The engine keeps per stage a schedule of 2 x virtual_stages x micro-batches steps and their arrival
     * times: bound their number, so memory stays bounded (230 MB resident for LLaMA-2 7B at the bound;
     * global_batch 2^30 with micro_batch 1 held 7.3 GB after 120 s). Time grows with the micro-batches
     * too (about 5.5 M events/s; the bound is about 20 minutes for LLaMA-2 7B). */
    if (n > PARALLEL_MAX_SLOTS / (t->virtual_stages * t->pp)) {
        uint64_t most = PARALLEL_MAX_SLOTS / (t->virtual_stages * t->pp) * mbdp;
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_GLOBAL_BATCH),
                           "training.global_batch: %llu gives %llu micro-batches per iteration; micro-batches x "
                           "virtual_stages %llu x pp %llu may be at most %u (the schedule the engine holds): use a "
                           "global_batch of at most %llu, or a larger micro_batch",
                           (ull)t->global_batch, (ull)n, (ull)t->virtual_stages, (ull)t->pp, PARALLEL_MAX_SLOTS,
                           (ull)most);
    }
    if (t->pipeline_schedule == TRAINCFG_SCHEDULE_DUALPIPEV && n < 2 * t->pp)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_PIPELINE_SCHEDULE),
                           "training.pipeline_schedule: dualpipev needs at least 2 x pp = %llu micro-batches per "
                           "iteration (DualPipeV.step asserts it); global_batch %llu / (micro_batch %llu x dp %llu) "
                           "gives %llu: use a global_batch of at least %llu",
                           (ull)(2 * t->pp), (ull)t->global_batch, (ull)t->micro_batch, (ull)t->dp, (ull)n,
                           (ull)(2 * t->pp * mbdp));
    if (t->virtual_stages > 1 && n % t->pp && t->pipeline_schedule != TRAINCFG_SCHEDULE_DUALPIPEV)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_VIRTUAL_STAGES),
                           "training.virtual_stages: the interleaved schedule needs the %llu micro-batches per "
                           "iteration (global_batch %llu / (micro_batch %llu x dp %llu)) to be a multiple of pp %llu",
                           (ull)n, (ull)t->global_batch, (ull)t->micro_batch, (ull)t->dp, (ull)t->pp);
    int rc_fsdp = check_grad_reduce(t, err);
    if (!rc_fsdp)
        rc_fsdp = check_fsdp(m, t, err);
    if (rc_fsdp)
        return rc_fsdp;
    int rc_off = check_cpu_offload(m, c, t, err);
    if (rc_off)
        return rc_off;
    if (t->zero >= 2 && t->pp > 1 && t->data_parallel != TRAINCFG_DP_FSDP)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_ZERO),
                           "training.zero: stage %llu shards gradients%s over dp, which pipeline parallelism (pp %llu) "
                           "cannot combine with its micro-batch gradient accumulation (DeepSpeed rejects it too); "
                           "use zero 0 or 1, or pp 1", (ull)t->zero, t->zero == 3 ? " and weights" : "", (ull)t->pp);
    static const char *const ub_names[4] = { "ub_qkv_dgrad_sms", "ub_qkv_wgrad_sms", "ub_fc1_dgrad_sms",
                                             "ub_fc1_wgrad_sms" };
    for (int i = 0; t->tp_comm_overlap && g->sms && i < 4; i++)
        if (t->ub_sms[i] >= g->sms)
            return cfgloc_errf(err, tloc(t, TRAINCFG_F_UB_SMS0 + i), "training.%s: %llu SMs, but GPU '%s' has %llu; "
                               "valid: 0 to %llu", ub_names[i], (ull)t->ub_sms[i], g->name, (ull)g->sms,
                               (ull)(g->sms - 1));
    if (g->tflops[t->precision] <= 0)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_PRECISION),
                           "training.precision: GPU '%s' has no %s peak (%s_tflops is 0)", g->name,
                           gpucfg_dtype_names[t->precision], gpucfg_dtype_names[t->precision]);
    /* MXFP8 (OCP Microscaling Formats v1.0, Sec. 5.3: MXFP8 = 32 E4M3 elements sharing one E8M0 scale) needs
     * tensor cores that apply the block scales in the GEMM: Blackwell's (NVIDIA Blackwell architecture
     * technical brief; Transformer Engine refuses MXFP8BlockScaling below compute capability 10.0,
     * transformer_engine/pytorch/fp8.py check_mxfp8_support) */
    if (t->fp8_recipe == TRAINCFG_FP8_MXFP8 && t->precision != GPUCFG_FP8)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_FP8_RECIPE),
                           "training.fp8_recipe: mxfp8 is a recipe of FP8 training, but precision is %s; set "
                           "precision: fp8, or fp8_recipe: tensorwise (or remove the key)",
                           gpucfg_dtype_names[t->precision]);
    if (t->fp8_recipe == TRAINCFG_FP8_MXFP8 && !g->mxfp8)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_FP8_RECIPE),
                           "training.fp8_recipe: GPU '%s' has no MXFP8 tensor cores (gpu mxfp8: false; MXFP8 block "
                           "scaling needs Blackwell, e.g. the b200 or gb200 presets); valid here: fp8_recipe: "
                           "tensorwise", g->name);
    if (t->main_grads != GPUCFG_BF16 && t->main_grads != GPUCFG_FP32)
        return cfgloc_errf(err, tloc(t, TRAINCFG_F_MAIN_GRADS),
                           "training.main_grads: '%s'; gradients are stored in bf16 or fp32",
                           gpucfg_dtype_names[t->main_grads]);
    rc = check_moe(m, c, t, err);
    if (!rc)
        rc = check_param_gather(t, err);
    return rc ? rc : check_a2a_overlap(m, t, err);
}
