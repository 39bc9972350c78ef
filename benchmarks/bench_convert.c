/* bench_convert: ONNX file to PerfGraph, end to end (read the file, parse, infer shapes, cost,
 * build features), on one thread. usage: bench_convert MODEL.onnx [REPEATS] [BATCH] */
#include <stdio.h>
#include <stdlib.h>

#include "onnx/onnx_graph.h"
#include "onnx/perfgraph_build.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_convert MODEL.onnx [REPEATS] [BATCH]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 200;
    int64_t batch = argc > 3 ? atoll(argv[3]) : 1;
    double best = 1e9, total = 0;
    int64_t V = 0;
    for (int r = 0; r < reps + 5; r++) {
        double t0 = seer_now();
        ox_graph g;
        seer_err err;
        if (ox_load(argv[1], batch, 0, &g, &err)) seer_die("%s", err.msg);
        pgb_graph p;
        pgb_build(&g, 0, &p);
        V = p.V;
        pgb_free(&p);
        ox_free(&g);
        double el = seer_now() - t0;
        if (r >= 5) total += el, best = el < best ? el : best;
    }
    printf("%s: %lld operators, %.3f ms mean, %.3f ms best over %d conversions (one thread)\n",
           argv[1], (long long)V, 1e3 * total / reps, 1e3 * best, reps);
    return 0;
}
