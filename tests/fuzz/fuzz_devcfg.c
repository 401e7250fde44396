/* fuzz_devcfg.c - libFuzzer target: arbitrary bytes as a device description (with extends resolved
 * through the built-in presets) must load or fail with an error, never crash, leak or hang; whatever
 * loads must convert to model parameters or fail cleanly. Build: tests/fuzz/run.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/cfg.h"
#include "config/devcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    cfg_doc *doc = NULL;
    cxl_err e;
    cxl_err_clear(&e);
    if (cfg_load_text("<fuzz>", text, NULL, NULL, &doc, &e) == 0)
        cfg_free(doc);
    /* through the device schema: write to a file so relative extends resolve like a user's file */
    char path[] = "/tmp/cxlsim-fuzz-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        if (f) {
            fwrite(text, 1, size, f);
            fclose(f);
            devcfg c;
            cxl_params p;
            if (devcfg_load(path, &c, &e) == 0)
                (void)devcfg_to_params(&c, &p, &e);
        }
        unlink(path);
    }
    free(text);
    return 0;
}
