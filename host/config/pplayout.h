/* pplayout.h - Megatron-Core's pipeline_model_parallel_layout: which layers each virtual pipeline stage holds.
 *
 * The string lists the virtual stages in Megatron's order (stage vs = chunk x pp + rank), separated by '|';
 * in each, E is the embedding, t a transformer layer, m a multi-token prediction module, L the loss (output
 * layer and cross entropy). "x*n" repeats a symbol and "(...)*n" a group (groups may nest); commas are
 * cosmetic. Example, DeepSeek-V3 on pp 4 x virtual_stages 4: "Et*4|(t*4|)*14tmL" (Megatron-Core
 * megatron/core/transformer/pipeline_parallel_layer_layout.py, parse_str_to_list; its docs
 * "Custom Pipeline Model Parallel Layout").
 *
 * pplayout_parse() reads the syntax only; the rules that involve the model and the pipeline (stage count,
 * layer count, where E, m and L may stand) are parallel_check's (parallel.h). Pure; no allocation.
 */
#ifndef CXLSIM_PPLAYOUT_H
#define CXLSIM_PPLAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define PPLAYOUT_MAX_STAGES 1024u

typedef struct pplayout {
    uint32_t stages;                      /* virtual stages in the string */
    uint16_t layers[PPLAYOUT_MAX_STAGES]; /* transformer layers (t) per virtual stage */
    uint16_t mtp[PPLAYOUT_MAX_STAGES];    /* MTP modules (m) per virtual stage */
    uint32_t embeds, losses, mtps;        /* how many E, L and m in all */
    uint64_t decoders;                    /* how many t in all */
    uint32_t embed_vs, loss_vs, mtp_vs;   /* the (last) virtual stage holding E, L, m */
    int embed_first, loss_last;           /* E is the first symbol, L the last */
    int mtp_after_layers;                 /* no t follows the first m */
} pplayout;

/* Parse `s` into *out. Returns 0, or -1 with *bad_at the offset in s of the offending character and `why`
 * (whysz bytes) saying what was expected: an unknown symbol, '*' without a count, a count of 0 or over the
 * limit, unbalanced parentheses, more than PPLAYOUT_MAX_STAGES stages or 2^20 symbols after expansion. */
int pplayout_parse(const char *s, pplayout *out, size_t *bad_at, char *why, size_t whysz);

#endif
