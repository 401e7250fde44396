/* gpucfg.c - GPU types: schema table. */
#include "gpucfg.h"

#include <stddef.h>
#include <string.h>

const char *const gpucfg_dtype_names[] = { "bf16", "fp16", "fp8", "tf32", "fp32", NULL };

#define G(f) offsetof(gpucfg, f)
/* Order = GPUCFG_F_* */
static const cfg_field fields[] = {
    { "name", CFG_T_STRING, G(name), 1, 1, 0, NULL, NULL, 64, NULL, "GPU name" },
    { "description", CFG_T_STRING, G(description), 0, 1, 0, NULL, NULL, 256, NULL, "one line" },
    { "bf16_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_BF16]), 1, 0, 1e6, NULL, NULL, 0, NULL,
      "dense bf16 tensor-core peak in TFLOP/s, e.g. 989" },
    { "fp16_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP16]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense fp16 peak in TFLOP/s (0: unsupported)" },
    { "fp8_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP8]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense fp8 peak in TFLOP/s (0: unsupported)" },
    { "tf32_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_TF32]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "dense tf32 tensor-core peak in TFLOP/s (0: unsupported)" },
    { "fp32_tflops", CFG_T_DOUBLE, G(tflops[GPUCFG_FP32]), 0, 0, 1e6, NULL, NULL, 0, NULL,
      "fp32 (non-tensor) peak in TFLOP/s" },
    { "hbm", CFG_T_SIZE, G(hbm_bytes), 1, 1, 1e15, NULL, NULL, 0, NULL, "HBM capacity, e.g. 80GB" },
    { "hbm_bandwidth", CFG_T_BW, G(hbm_bw_bps), 1, 1, 1e15, NULL, NULL, 0, NULL, "HBM bandwidth, e.g. 3.35TB/s" },
    { "nvlink", CFG_T_BW, G(nvlink_bw_bps), 0, 0, 1e15, NULL, NULL, 0, NULL,
      "NVLink bandwidth per GPU, both directions together, e.g. 900GB/s" },
    { NULL, 0, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL }
};

static void defaults(void *obj) { memset(obj, 0, sizeof(gpucfg)); }

const compose_kind gpucfg_kind = {
    "gpu", "gpus", fields, defaults, offsetof(gpucfg, loc), offsetof(gpucfg, ref),
    offsetof(gpucfg, source), sizeof((gpucfg *)0)->source,
};

int gpucfg_load(const char *name_or_path, gpucfg *out, cxl_err *err)
{
    return compose_load(&gpucfg_kind, name_or_path, out, err);
}
