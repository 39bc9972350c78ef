/* route_onnx: a device's main predictor and its specialist (seerexport --specialist) on ONNX
 * files, as seerpredict --device answers: libseeronnx's seer_onnx_route picks the model, which
 * then predicts the graph in its own op table (seer_onnx_model_graph). Build against an installed
 * Seer:
 *   cc route_onnx.c $(pkg-config --cflags --libs seer-onnx) -o route_onnx
 *   ./route_onnx share/seer/predictors/cpu_xeon26.seer share/seer/predictors/cpu_xeon26_rep.seer net.onnx */
#include <stdio.h>
#include <stdlib.h>

#include <seer/seer_onnx.h>

static int fail(const char *what, const char *err) {
    fprintf(stderr, "route_onnx: %s: %s\n", what, err);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: route_onnx MAIN.seer SPECIALIST.seer NET.onnx...\n");
        return 2;
    }
    seer_model *m[2];
    char err[1024];
    for (int k = 0; k < 2; k++)
        if (seer_load(argv[1 + k], &m[k], err, sizeof err) != SEER_OK) return fail(argv[1 + k], err);
    for (int i = 3; i < argc; i++) {
        seer_onnx_graph *og;
        if (seer_onnx_load(argv[i], 1, 0, &og, err, sizeof err) != SEER_OK) return fail(argv[i], err);
        seer_range_item why[16];
        int answer, n;
        if (seer_onnx_route(og, m[0], m[1], &answer, why, 16, &n, err, sizeof err) != SEER_OK)
            return fail(argv[i], err);
        printf("%s: answered by %s", argv[i], answer ? "the specialist" : "the main predictor");
        for (int j = 0; j < n && j < 16; j++) // what the main one never trained on
            printf("%s%s", j ? ", " : " because of ", seer_range_item_name(m[0], &why[j]));
        putchar('\n');
        seer_graph g;
        int32_t *ops;
        double y[SEER_MAX_METRICS];
        if (seer_onnx_model_graph(og, m[answer], &g, &ops, err, sizeof err) != SEER_OK ||
            seer_predict(m[answer], &g, y, err, sizeof err) != SEER_OK)
            return fail(argv[i], err);
        for (int k = 0; k < seer_n_metrics(m[answer]); k++)
            printf("  %-28s %12.4f %s\n", seer_metric_name(m[answer], k), y[k], seer_metric_unit(m[answer], k));
        free(ops);
        seer_onnx_free(og);
    }
    seer_free(m[0]), seer_free(m[1]);
    return 0;
}
