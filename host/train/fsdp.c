/* fsdp.c - Megatron-FSDP's units, all-gather prefetch window and reduce-scatter queue (fsdp.h). */
#include "train/fsdp.h"

#include "config/parallel.h"

void fsdp_pass_init(fsdp_pass *p, const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk, int backward)
{
    uint64_t v = t->virtual_stages ? t->virtual_stages : 1;
    int first_vs = rank == 0 && chunk == 0, last_vs = rank == t->pp - 1 && chunk == v - 1;
    p->m = m;
    p->t = t;
    p->layers = parallel_chunk_layers(m, t, rank, chunk, &p->first);
    p->backward = backward;
    p->pre = backward ? last_vs : first_vs;
    p->post = backward ? first_vs : last_vs;
    p->n = (uint32_t)p->layers + (uint32_t)p->pre + (uint32_t)p->post;
    p->double_buffer = t->fsdp_double_buffer;
}

fsdp_unit fsdp_unit_at(const fsdp_pass *p, uint32_t pos)
{
    const traincfg *t = p->t;
    int fp32 = t->precision == GPUCFG_FP32 || t->precision == GPUCFG_TF32;
    uint64_t wb = fp32 ? 4 : 2, params;
    int emb = 0, head = 0;
    if (p->pre && pos == 0)
        emb = !p->backward, head = p->backward;
    else if (p->post && pos == p->n - 1)
        emb = p->backward, head = !p->backward;
    if (emb || head) {
        params = emb ? modelcfg_embedding_params_tp(p->m, t->tp) : modelcfg_head_params_tp(p->m, t->tp, t->pp);
        return (fsdp_unit){ emb ? FSDP_EMBEDDING : FSDP_HEAD, params, params * wb };
    }
    uint64_t k = pos - (uint32_t)p->pre, l = p->first + (p->backward ? p->layers - 1 - k : k);
    params = modelcfg_layer_params_tp(p->m, t->tp);
    /* fp8_param_gather: the layer's weights are FP8 tensors and the all-gather moves them (1 B; the norms'
     * few 16-bit parameters counted alike); layers run in bf16 keep 16-bit weights */
    int fp8 = t->precision == GPUCFG_FP8 && t->fp8_param_gather && !traincfg_layer_bf16(t, l, p->m->layers);
    return (fsdp_unit){ FSDP_LAYER, params, params * (fp8 ? 1 : wb) };
}

int fsdp_unit_fp8(const fsdp_unit *u)
{
    return u->kind == FSDP_LAYER && u->gather_bytes == u->params;
}

uint64_t fsdp_comm_unit(const modelcfg *m, const traincfg *t, uint64_t rank, uint64_t chunk)
{
    uint64_t layers = parallel_chunk_layers(m, t, rank, chunk, NULL);
    if (!layers)
        return FSDP_COMM_UNIT_MIN;
    /* the mean FSDP unit: Megatron-Core's units are the transformer layers (dense ones here: fsdp with MoE is
     * refused), so total // units is one layer's parameters */
    uint64_t s = modelcfg_layer_params_tp(m, t->tp) * 2;
    return s > FSDP_COMM_UNIT_MIN ? s : FSDP_COMM_UNIT_MIN;
}

uint32_t fsdp_window_end(const fsdp_pass *p, uint32_t pos, uint64_t budget)
{
    uint64_t sum = 0;
    uint32_t last = p->n ? p->n - 1 : 0;
    if (p->double_buffer && pos + 1 < last)
        last = pos + 1;
    for (uint32_t j = pos; j < last; j++) {
        sum += fsdp_unit_at(p, j).params;
        if (sum >= budget)
            return j;
    }
    return last;
}

uint64_t fsdp_peak_gathered_bytes(const fsdp_pass *p, uint64_t budget)
{
    /* two pointers: the window [pos, end] only moves right */
    uint64_t peak = 0, params = 0, bytes = 0;
    uint32_t end = 0;   /* units [pos, end) are summed */
    for (uint32_t pos = 0; pos < p->n; pos++) {
        if (end <= pos) {
            end = pos;
            params = bytes = 0;
        }
        while (end < p->n && (end == pos || params < budget) && !(p->double_buffer && end > pos + 1)) {
            fsdp_unit u = fsdp_unit_at(p, end++);
            params += u.params;
            bytes += u.gather_bytes;
        }
        if (bytes > peak)
            peak = bytes;
        fsdp_unit u = fsdp_unit_at(p, pos);
        params -= u.params;
        bytes -= u.gather_bytes;
    }
    return peak;
}

uint64_t fsdp_peak_grad_elems(const fsdp_pass *p, uint64_t capacity)
{
    uint64_t queued = 0, peak = 0;
    uint32_t oldest = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        while (queued > capacity || (p->double_buffer && i - oldest > 1))
            queued -= fsdp_unit_at(p, oldest++).params;
        queued += fsdp_unit_at(p, i).params;
        if (queued > peak)
            peak = queued;
    }
    return peak;
}
