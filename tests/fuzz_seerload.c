/* fuzz_seerload: libFuzzer target for libseer's loader (clang -fsanitize=fuzzer,address,undefined).
 * Any input must load or be refused with a message; a model that loads must predict a small graph
 * of its own feature widths, with operator ids of its own table, and check it against its training
 * range (operator types and watched pairs among it), naming every item, without a memory error.
 * Seed corpus: tests/data/fuzz_seer/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "seer/seer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    seer_model *m = NULL;
    char err[256];
    if (seer_load_memory(data, size, "fuzz", &m, err, sizeof err) != SEER_OK) {
        if (!err[0]) abort(); // refused without a message
        return 0;
    }
    int Fn = seer_n_features(m, SEER_NODE), Fe = seer_n_features(m, SEER_EDGE), Fg = seer_n_features(m, SEER_GLOBAL);
    if (Fn <= 64 && Fe <= 64 && Fg <= 64) {
        float xn[3 * 64], xe[3 * 64], xg[64];
        for (int i = 0; i < 3 * 64; i++) xn[i] = xe[i] = (float)(i % 7) * 0.25f;
        for (int i = 0; i < 64; i++) xg[i] = 0.5f;
        int32_t ei[6] = {0, 1, 1, 2, 2, 2}, n_ops = seer_n_op_types(m);
        int32_t ops[3] = {0, n_ops > 1 ? 1 : 0, n_ops > 0 ? n_ops - 1 : 0};
        seer_graph g = {3, 3, Fn, Fe, Fg, xn, n_ops > 0 ? ops : NULL, ei, xe, xg};
        double y[SEER_MAX_METRICS];
        if (seer_predict(m, &g, y, err, sizeof err) != SEER_OK) {
            if (!err[0]) abort();
        } else {
            seer_range_item it[16];
            int n;
            if (seer_check_range(m, &g, y, it, 16, &n, err, sizeof err) != SEER_OK) {
                if (!err[0]) abort();
            } else {
                for (int i = 0; i < n && i < 16; i++) {
                    const char *name = seer_range_item_name(m, &it[i]);
                    if (name && strlen(name) > 4096) abort();
                }
            }
        }
    }
    seer_free(m);
    return 0;
}
