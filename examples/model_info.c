/* model_info: the smallest libseer program. Loads a .seer model, prints its metrics, schema sizes
 * and provenance, and predicts one made-up three-operator chain (all features zero) to show the
 * call. Build against an installed Seer:
 *   cc model_info.c $(pkg-config --cflags --libs seer) -o model_info      (or --static) */
#include <stdio.h>
#include <stdlib.h>

#include <seer/seer.h>

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: model_info MODEL.seer\n");
        return 2;
    }
    seer_model *m;
    char err[512];
    if (seer_load(argv[1], &m, err, sizeof err) != SEER_OK) {
        fprintf(stderr, "model_info: %s\n", err);
        return 1;
    }
    printf("libseer %s: %s model, %s weights, %lld parameters, trained on %s\n", seer_version(),
           seer_info(m, "model"), seer_info(m, "dtype"), (long long)seer_n_params(m),
           seer_info(m, "dataset") ? seer_info(m, "dataset") : "?");
    int Fn = seer_n_features(m, SEER_NODE), Fe = seer_n_features(m, SEER_EDGE);
    int Fg = seer_n_features(m, SEER_GLOBAL);
    printf("features: %d node, %d edge, %d global; %d metrics\n", Fn, Fe, Fg, seer_n_metrics(m));
    float *xn = calloc(3 * (size_t)Fn, sizeof(float)), *xe = calloc(2 * (size_t)Fe, sizeof(float));
    float *xg = calloc((size_t)Fg, sizeof(float));
    int32_t edges[4] = {0, 1, 1, 2};
    seer_graph g = {.n_nodes = 3, .n_edges = 2, .n_node_features = Fn, .n_edge_features = Fe,
                    .n_global_features = Fg, .node_x = xn, .edge_index = edges, .edge_x = xe,
                    .global_x = xg};
    double y[SEER_MAX_METRICS];
    if (seer_predict(m, &g, y, err, sizeof err) != SEER_OK) {
        fprintf(stderr, "model_info: %s\n", err);
        return 1;
    }
    for (int i = 0; i < seer_n_metrics(m); i++)
        printf("  %-24s %12.4f %s\n", seer_metric_name(m, i), y[i], seer_metric_unit(m, i));
    free(xn), free(xe), free(xg);
    seer_free(m);
    return 0;
}
