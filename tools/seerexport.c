/* seerexport: a trained checkpoint -> the compact .seer predictor (and safetensors + JSON).
 *   seerexport CHECKPOINT|RUN_DIR -o model.seer [--dtype fp32|fp16|int8]
 *              [--safetensors model.safetensors]
 * See --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export/export.h"
#include "infer/seer_format.h"

static void usage(FILE *f) {
    fputs("usage: seerexport CHECKPOINT|RUN_DIR -o MODEL.seer [--dtype fp32|fp16|int8]\n"
          "                  [--safetensors MODEL.safetensors]\n\n"
          "Writes what inference needs from a seertrain checkpoint (a run folder means its\n"
          "best.ckpt): the weights, the normalisation statistics, the feature schema and op table,\n"
          "the metric names and units, the architecture and the training provenance (dataset,\n"
          "device, date, validation figures). libseer, seerpredict and the Python binding load it.\n\n"
          "  -o PATH             the .seer file (written through a temporary file)\n"
          "  --dtype T           weight storage: fp32 (default), fp16 (IEEE half) or int8\n"
          "                      (per output channel, with fp32 scales; biases stay fp32)\n"
          "  --safetensors PATH  also (or only, without -o) write the fp32 weights as safetensors\n"
          "                      with a JSON sidecar (schema, normalisation, architecture) beside it\n",
          f);
}

int main(int argc, char **argv) {
    const char *ckpt = NULL, *out = NULL, *st = NULL;
    int dtype = EXPORT_FP32;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if ((!strcmp(a, "-o") || !strcmp(a, "--dtype") || !strcmp(a, "--safetensors")) && i + 1 >= argc) {
            fprintf(stderr, "seerexport: error: %s needs a value (see --help)\n", a);
            return 2;
        }
        if (!strcmp(a, "-o")) out = argv[++i];
        else if (!strcmp(a, "--safetensors")) st = argv[++i];
        else if (!strcmp(a, "--dtype")) {
            if ((dtype = export_dtype_parse(argv[++i])) < 0) {
                fprintf(stderr, "seerexport: error: --dtype %s: use fp32, fp16 or int8\n", argv[i]);
                return 2;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "seerexport: error: unknown option %s (see --help)\n", a);
            return 2;
        } else if (!ckpt) ckpt = a;
        else {
            fprintf(stderr, "seerexport: error: one checkpoint only (got %s and %s)\n", ckpt, a);
            return 2;
        }
    }
    if (!ckpt || (!out && !st)) {
        usage(stderr);
        return 2;
    }
    char path[1100];
    struct stat sb;
    if (stat(ckpt, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(path, sizeof path, "%s/best.ckpt", ckpt);
        ckpt = path;
    }
    seer_err err;
    export_info info;
    if (out) {
        if (export_seer(ckpt, out, dtype, &info, &err)) {
            fprintf(stderr, "seerexport: error: %s\n", err.msg);
            return 1;
        }
        printf("wrote %s: %.1f KiB, %lld parameters, %s weights (from %s)\n", out,
               (double)info.bytes / 1024.0, (long long)info.params, export_dtype_name(dtype), ckpt);
    }
    if (st) {
        if (export_safetensors(ckpt, st, &info, &err)) {
            fprintf(stderr, "seerexport: error: %s\n", err.msg);
            return 1;
        }
        printf("wrote %s: %.1f KiB, %lld parameters, fp32; sidecar %s\n", st,
               (double)info.bytes / 1024.0, (long long)info.params, info.sidecar);
    }
    return 0;
}
