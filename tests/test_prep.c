/* tests: the roofline target and the feature clamp ([model] target = roofline, clamp = range;
 * data/prep.h, data/coverage.h).
 *   - costs built exactly from c0 + c1 nodes + c2 FLOPs (no bytes term) are recovered, with the
 *     bytes term at zero; a label that falls with nodes keeps every term non-negative;
 *   - targets and norm_to_native are inverse: the native label comes back from its target;
 *   - norm.target survives pack/unpack, and unpack refuses a negative cost, a column outside the
 *     global features and a wrong length;
 *   - roofline_weights (a fifth term, the weights' bytes) recovers a cost built with it, which the
 *     four terms cannot follow, and its longer norm.target round-trips (the four-term length and
 *     an unknown kind refused);
 *   - roofline_light (the bytes split into the light operators' and the rest's, a sixth term)
 *     recovers a cost built so, which roofline_weights cannot follow; its norm.target round-trips;
 *     light bytes above the total leave the rest at zero; a dataset without log_mem_light is
 *     refused naming it;
 *   - roofline_kept (roofline_weights and the bytes kept for the backward pass) recovers a cost
 *     built on the kept bytes, which roofline_weights cannot follow; its norm.target round-trips;
 *     a dataset without log_mem_kept is refused naming it; roofline_kept_silu the same on
 *     log_mem_kept_silu, roofline_kept_acts on log_mem_kept_acts; roofline_peak (a seventh term,
 *     the mean activation tensor's bytes) recovers a cost built with it, which six terms cannot
 *     follow, round-trips (the six-term length refused), and names log_tensor_bytes_mean when absent;
 *     roofline_dw (an eighth term, the depthwise convolutions' FLOPs) the same, naming log_flops_dw
 *     and the converter's date when absent;
 *   - a dataset without the three global features is refused with a message naming one;
 *   - clamping puts out-of-range values on the training bounds and leaves the rest alone. */
#include "testutil.h"
#include "testgraphs.h"

#include "data/coverage.h"
#include "data/prep.h"

/* The worst |log y - log cost| of label 0 over the dataset's graphs. */
static double worst_log_error(const norm_stats *s, const pg_dataset *ds) {
    double w = 0;
    for (int64_t g = 0; g < ds->G; g++)
        w = fmax(w, fabs(log((double)ds->label_y[g * ds->M]) - norm_log_cost(s, 0, ds->global_x + g * ds->Fg)));
    return w;
}

/* An R-term cost (6: roofline_light, roofline_kept*, 7: roofline_peak, 8: roofline_dw) on d, whose labels were
 * built from truth (label 0): its columns are want_col, its terms are recovered, it explains label 0
 * where the cost of one term fewer (fewer: roofline_weights, roofline_kept_acts) cannot, and its
 * norm.target (R - 1 columns, R terms) round-trips and refuses the shorter length; then, the
 * feature its last term reads renamed in d (column want_col[R - 2]), a fit is refused with one
 * message naming the feature, the target and (date, where not NULL) the date of the converter that
 * added it. Returns the fitted stats in *out (the caller frees them). */
static void check_terms(pg_dataset *d, int target, int R, int fewer, const double *truth, const int *want_col,
                        const char *feature, const char *date, norm_stats *out) {
    static const int cols[2] = {0, 1};
    int8_t *all = calloc((size_t)d->G, 1);
    norm_stats F, u = {.M = 2, .Fg = d->Fg}, bad;
    seer_err err;
    const char *name = norm_target_name(target);
    CHECK(norm_roof_terms(target) == R && norm_roof_terms(fewer) == R - 1, "%s: %d terms", name, norm_roof_terms(target));
    CHECK(norm_fit(out, d, all, cols, 2, target, "test", NULL, &err) == 0, "fit %s: %s", name, err.msg);
    CHECK(norm_fit(&F, d, all, cols, 2, fewer, "test", NULL, &err) == 0, "fit %d (%s): %s", R - 1, name, err.msg);
    for (int k = 0; k < R - 1; k++)
        CHECK(out->roof_col[k] == want_col[k], "%s column %d: %d, want %d", name, k, out->roof_col[k], want_col[k]);
    for (int k = 0; k < R; k++)
        CHECK(fabs(out->roof[k] - truth[k]) <= (truth[k] > 0 ? 2e-3 * truth[k] : 1e-6),
              "%s term %d: %g, built with %g", name, k, out->roof[k], truth[k]);
    double offR = worst_log_error(out, d), off1 = worst_log_error(&F, d);
    CHECK(offR < 1e-4 && off1 > 0.05, "%s's last term explains nothing: worst log error %g (%d terms) vs %g (%d)",
          name, offR, R, off1, R - 1);
    double v[NORM_TARGET_MAX(2)];
    int64_t n = norm_target_pack(out, v);
    CHECK(n == 2 + (R - 1) + 2 * R && n <= NORM_TARGET_MAX(2), "%s packed %lld values", name, (long long)n);
    CHECK(norm_target_unpack(&u, v, n, "test", &err) == 0, "unpack %s: %s", name, err.msg);
    CHECK(u.target == target && u.roof_col[R - 2] == want_col[R - 2] && !memcmp(u.roof, out->roof, sizeof(double) * 2 * R) &&
              fabs(norm_log_cost(&u, 0, d->global_x + d->Fg) - norm_log_cost(out, 0, d->global_x + d->Fg)) < 1e-15 &&
              fabs(norm_log_cost(&u, 1, d->global_x + d->Fg) - norm_log_cost(out, 1, d->global_x + d->Fg)) < 1e-15,
          "%s round trip differs", name);
    CHECK(norm_target_unpack(&u, v, 2 + (R - 2) + 2 * (R - 1), "test", &err) != 0 && strstr(err.msg, "needs"),
          "a %s array of the %d-term length was accepted (%s)", name, R - 1, err.msg);
    // a dataset from a converter without the feature: one line naming it
    free(d->global_features[want_col[R - 2]]), d->global_features[want_col[R - 2]] = seer_strdup("other");
    CHECK(norm_fit(&bad, d, all, cols, 2, target, "test", NULL, &err) != 0 && strstr(err.msg, feature) &&
              strstr(err.msg, name) && (!date || strstr(err.msg, date)),
          "a dataset without %s was accepted (%s)", feature, err.msg);
    norm_free(&F), free(all);
}

int main(void) {
    pg_dataset ds;
    tg_build(&ds, 40, 2, 1, 4, 2, 7); // 45 graphs, 4 global features, 2 labels
    static const char *const gnames[4] = {"log_mem_total", "log_nodes", "other", "log_flops_total"};
    for (int k = 0; k < 4; k++) free(ds.global_features[k]), ds.global_features[k] = seer_strdup(gnames[k]);
    int64_t G = ds.G;
    double c_true[4] = {0.2, 0.01, 3e-8, 0}; // label 0: constant, nodes, FLOPs; no bytes term
    for (int64_t g = 0; g < G; g++) {
        double nodes = 1 + (double)g, flops = 1e6 * (double)(g % 7 + 1) * (double)(g + 3);
        double bytes = 1e5 * (double)((g * 13) % 11 + 1);
        float *x = ds.global_x + g * ds.Fg;
        x[0] = (float)log1p(bytes), x[1] = (float)log1p(nodes), x[3] = (float)log1p(flops);
        // what float32 log1p storage leaves of the three quantities, so the fit can be exact
        nodes = expm1((double)x[1]), flops = expm1((double)x[3]), bytes = expm1((double)x[0]);
        ds.label_y[g * 2] = (float)(c_true[0] + c_true[1] * nodes + c_true[2] * flops);
        ds.label_y[g * 2 + 1] = (float)(5.0 - 0.04 * nodes + 1e-8 * flops); // falls with nodes
    }
    int8_t *which = calloc((size_t)G, 1); // every graph trains
    int cols[2] = {0, 1};
    norm_stats s;
    seer_err err;
    CHECK(norm_fit(&s, &ds, which, cols, 2, TARGET_ROOFLINE, "test", NULL, &err) == 0, "fit: %s", err.msg);
    CHECK(s.roof_col[0] == 1 && s.roof_col[1] == 3 && s.roof_col[2] == 0, "columns %d %d %d",
          s.roof_col[0], s.roof_col[1], s.roof_col[2]);
    for (int k = 0; k < 3; k++)
        CHECK(fabs(s.roof[k] - c_true[k]) <= 1e-3 * c_true[k], "label 0 term %d: %g, built with %g",
              k, s.roof[k], c_true[k]);
    CHECK(s.roof[3] * 1e6 < 1e-3 * 0.2, "label 0 bytes term %g, built with none", s.roof[3]);
    for (int k = 0; k < 4; k++)
        CHECK(s.roof[4 + k] >= 0 && isfinite(s.roof[4 + k]),
              "label 1 term %d = %g is negative", k, s.roof[4 + k]);
    // an exact cost leaves nothing for the network: every log ratio is about 0
    CHECK(fabs(s.label_mu[0]) < 1e-4, "label 0: mean log ratio %g", s.label_mu[0]);

    float *t = malloc(sizeof(float) * (size_t)(2 * G));
    double *lc = malloc(sizeof(double) * (size_t)(2 * G));
    norm_targets(&s, &ds, cols, t, lc);
    double worst = 0;
    for (int64_t g = 0; g < G; g++)
        for (int m = 0; m < 2; m++) {
            double y = ds.label_y[g * 2 + m];
            CHECK(fabs(lc[g * 2 + m] - norm_log_cost(&s, m, ds.global_x + g * ds.Fg)) < 1e-12,
                  "graph %lld: log cost differs", (long long)g);
            worst = fmax(worst, fabs(norm_to_native(&s, m, t[g * 2 + m], lc[g * 2 + m]) - y) / y);
        }
    CHECK(worst < 1e-5, "target -> native: worst relative error %g", worst);

    // norm.target round trip, and what unpack refuses
    double v[NORM_TARGET_HEAD + 2 * 4];
    s.clamp = 1;
    int64_t n = norm_target_pack(&s, v);
    CHECK(n == NORM_TARGET_HEAD + 2 * 4, "packed %lld values", (long long)n);
    norm_stats u = {.M = 2, .Fg = 4};
    CHECK(norm_target_unpack(&u, v, n, "test", &err) == 0, "unpack: %s", err.msg);
    CHECK(u.target == TARGET_ROOFLINE && u.clamp == 1 && u.roof_col[1] == 3 &&
              !memcmp(u.roof, s.roof, sizeof(double) * 2 * 4), "round trip differs");
    v[NORM_TARGET_HEAD + 2] = -1e-9;
    CHECK(norm_target_unpack(&u, v, n, "test", &err) != 0 && strstr(err.msg, "non-negative"),
          "a negative cost term was accepted (%s)", err.msg);
    v[NORM_TARGET_HEAD + 2] = 0, v[3] = 4;
    CHECK(norm_target_unpack(&u, v, n, "test", &err) != 0 && strstr(err.msg, "column"),
          "a column outside the features was accepted (%s)", err.msg);
    v[3] = 3;
    CHECK(norm_target_unpack(&u, v, n - 1, "test", &err) != 0, "a short norm.target was accepted");
    CHECK(norm_target_unpack(&u, v, n, "test", &err) == 0, "the repaired array: %s", err.msg);

    // roofline_weights: a fifth term, the weights' bytes (column "other" renamed), recovered
    // exactly where the four-term cost cannot follow it; its norm.target has 4 columns, 5 terms
    free(ds.global_features[2]), ds.global_features[2] = seer_strdup("log_weight_total");
    double w_true[5] = {0.2, 0.01, 3e-8, 0, 2e-6};
    for (int64_t g = 0; g < G; g++) {
        float *x = ds.global_x + g * ds.Fg;
        x[2] = (float)log1p(1e5 * (double)((g * 7) % 13 + 1) * (double)(g % 3 + 1));
        double nodes = expm1((double)x[1]), flops = expm1((double)x[3]), wb = expm1((double)x[2]);
        ds.label_y[g * 2] = (float)(w_true[0] + w_true[1] * nodes + w_true[2] * flops + w_true[4] * wb);
    }
    norm_stats w, f4;
    CHECK(norm_fit(&w, &ds, which, cols, 2, TARGET_ROOFLINE_W, "test", NULL, &err) == 0, "fit 5: %s", err.msg);
    CHECK(norm_fit(&f4, &ds, which, cols, 2, TARGET_ROOFLINE, "test", NULL, &err) == 0, "fit 4: %s", err.msg);
    CHECK(w.roof_col[3] == 2, "weight column %d", w.roof_col[3]);
    for (int k = 0; k < 5; k++)
        CHECK(k == 3 ? w.roof[k] * 1e6 < 1e-3 * 0.2 : fabs(w.roof[k] - w_true[k]) <= 1e-3 * w_true[k],
              "roofline_weights, label 0 term %d: %g, built with %g", k, w.roof[k], w_true[k]);
    double off5 = worst_log_error(&w, &ds), off4 = worst_log_error(&f4, &ds);
    CHECK(off5 < 1e-4 && off4 > 0.05, "the weights term explains nothing: worst log error %g (five "
          "terms) vs %g (four)", off5, off4);
    double vw[NORM_TARGET_MAX(2)];
    int64_t nw = norm_target_pack(&w, vw);
    CHECK(nw == 2 + 4 + 2 * 5 && nw <= NORM_TARGET_MAX(2), "roofline_weights packed %lld values", (long long)nw);
    norm_stats uw = {.M = 2, .Fg = 4};
    CHECK(norm_target_unpack(&uw, vw, nw, "test", &err) == 0, "unpack 5: %s", err.msg);
    CHECK(uw.target == TARGET_ROOFLINE_W && uw.roof_col[3] == 2 && !memcmp(uw.roof, w.roof, sizeof(double) * 10) &&
              fabs(norm_log_cost(&uw, 0, ds.global_x) - norm_log_cost(&w, 0, ds.global_x)) < 1e-15,
          "roofline_weights round trip differs");
    CHECK(norm_target_unpack(&uw, vw, n, "test", &err) != 0 && strstr(err.msg, "needs"),
          "a roofline_weights array of the four-term length was accepted (%s)", err.msg);
    vw[0] = TARGET_LAST + 1;
    CHECK(norm_target_unpack(&uw, vw, nw, "test", &err) != 0 && strstr(err.msg, "kind"),
          "target kind %d was accepted (%s)", TARGET_LAST + 1, err.msg);

    norm_free(&w), norm_free(&f4);

    // roofline_light: the bytes split into the light operators' and the rest's, each priced; a
    // cost built so (the light bytes nearly free, the rest dear) is recovered, which one price per
    // byte (roofline_weights) cannot follow; its norm.target has 5 columns and 6 terms
    {
        pg_dataset dl;
        tg_build(&dl, 40, 2, 1, 5, 2, 9);
        static const char *const ln[5] = {"log_weight_total", "log_mem_light", "log_nodes", "log_mem_total",
                                          "log_flops_total"};
        for (int k = 0; k < 5; k++) free(dl.global_features[k]), dl.global_features[k] = seer_strdup(ln[k]);
        double l_true[6] = {0.1, 0.01, 2e-8, 4e-6, 1e-6, 2e-7}; // 1, nodes, FLOPs, rest, weights, light
        for (int64_t g = 0; g < dl.G; g++) {
            float *x = dl.global_x + g * dl.Fg;
            double rest = 1e5 * (double)((g * 13) % 11 + 1), light = 3e5 * (double)((g * 5) % 7 + 1);
            x[0] = (float)log1p(1e5 * (double)((g * 7) % 13 + 1)), x[1] = (float)log1p(light);
            x[2] = (float)log1p(1.0 + (double)g), x[3] = (float)log1p(rest + light);
            x[4] = (float)log1p(1e6 * (double)(g % 7 + 1) * (double)(g + 3));
            double wb = expm1((double)x[0]), lb = expm1((double)x[1]), nodes = expm1((double)x[2]);
            double rb = expm1((double)x[3]) - lb, flops = expm1((double)x[4]);
            dl.label_y[g * 2] = (float)(l_true[0] + l_true[1] * nodes + l_true[2] * flops + l_true[3] * rb +
                                        l_true[4] * wb + l_true[5] * lb);
            dl.label_y[g * 2 + 1] = (float)(1.0 + 1e-8 * flops);
        }
        norm_stats L;
        static const int l_col[5] = {2, 4, 3, 0, 1};
        // light bytes above all bytes (float rounding, or a file edited by hand): the rest is 0, not negative
        float xg[5];
        memcpy(xg, dl.global_x, sizeof xg);
        xg[1] = xg[3] + 1;
        check_terms(&dl, TARGET_ROOFLINE_L, 6, TARGET_ROOFLINE_W, l_true, l_col, "log_mem_light", "2026-12-03", &L);
        CHECK(isfinite(norm_log_cost(&L, 0, xg)) && norm_log_cost(&L, 0, xg) > log(l_true[0]) - 1e-9,
              "light bytes above the total give log cost %g", norm_log_cost(&L, 0, xg));
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_L), "roofline_light"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_L));
        norm_free(&L), pg_free(&dl);
    }

    // roofline_kept: roofline_weights's five terms and the bytes kept for the backward pass; a
    // cost built on the kept bytes alone (no price on all the bytes, the memory of a training
    // step) is recovered, which five terms cannot follow; 5 columns, 6 terms, log_mem_kept last
    {
        pg_dataset dk;
        tg_build(&dk, 40, 2, 1, 6, 2, 11);
        static const char *const kn[6] = {"log_mem_kept", "log_weight_total", "log_mem_light", "log_nodes",
                                          "log_mem_total", "log_flops_total"};
        for (int k = 0; k < 6; k++) free(dk.global_features[k]), dk.global_features[k] = seer_strdup(kn[k]);
        double k_true[6] = {1, 0, 1e-9, 0, 3e-6, 1.2e-5}; // 1, nodes, FLOPs, bytes, weights, kept
        for (int64_t g = 0; g < dk.G; g++) {
            float *x = dk.global_x + g * dk.Fg;
            double all = 1e6 * (double)((g * 13) % 11 + 1), kept = all * (0.05 + 0.15 * (double)((g * 5) % 7));
            x[0] = (float)log1p(kept), x[1] = (float)log1p(1e5 * (double)((g * 7) % 13 + 1));
            x[2] = (float)log1p(0.3 * all), x[3] = (float)log1p(1.0 + (double)g), x[4] = (float)log1p(all);
            x[5] = (float)log1p(1e6 * (double)(g % 7 + 1) * (double)(g + 3));
            double v[6] = {1, expm1((double)x[3]), expm1((double)x[5]), expm1((double)x[4]), expm1((double)x[1]),
                           expm1((double)x[0])};
            double y = 0;
            for (int k = 0; k < 6; k++) y += k_true[k] * v[k];
            dk.label_y[g * 2] = (float)y, dk.label_y[g * 2 + 1] = (float)(1.0 + 1e-8 * v[2]);
        }
        norm_stats K;
        static const int k_col[5] = {3, 5, 4, 1, 0};
        check_terms(&dk, TARGET_ROOFLINE_K, 6, TARGET_ROOFLINE_W, k_true, k_col, "log_mem_kept", "2026-12-04", &K);
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_K), "roofline_kept"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_K));
        // roofline_kept_silu: the same cost on the SiLU-aware count, wherever the file puts it
        norm_stats KS;
        free(dk.global_features[0]), dk.global_features[0] = seer_strdup("log_mem_kept_silu");
        check_terms(&dk, TARGET_ROOFLINE_KS, 6, TARGET_ROOFLINE_W, k_true, k_col, "log_mem_kept_silu", "2026-12-04", &KS);
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_KS), "roofline_kept_silu"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_KS));
        norm_free(&KS);
        // roofline_kept_acts: the same on the count without the weights computed at run time
        norm_stats KA;
        free(dk.global_features[0]), dk.global_features[0] = seer_strdup("log_mem_kept_acts");
        check_terms(&dk, TARGET_ROOFLINE_KA, 6, TARGET_ROOFLINE_W, k_true, k_col, "log_mem_kept_acts", "2026-12-04", &KA);
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_KA), "roofline_kept_acts"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_KA));
        norm_free(&KA);
        norm_free(&K), pg_free(&dk);
    }

    // roofline_peak: roofline_kept_acts's six terms and the mean activation tensor's bytes; a
    // cost built with a price on it (the backward pass's working set) is recovered, which six terms
    // cannot follow; 6 columns, 7 terms, log_tensor_bytes_mean last
    {
        pg_dataset dp;
        tg_build(&dp, 40, 2, 1, 7, 2, 13);
        static const char *const pn[7] = {"log_tensor_bytes_mean", "log_mem_kept_acts", "log_weight_total",
                                          "log_nodes", "log_mem_total", "log_flops_total", "log_mem_light"};
        for (int k = 0; k < 7; k++) free(dp.global_features[k]), dp.global_features[k] = seer_strdup(pn[k]);
        double p_true[7] = {1, 0, 1e-9, 0, 3e-6, 1.1e-5, 9e-5}; // 1, nodes, FLOPs, bytes, weights, kept, mean tensor
        for (int64_t g = 0; g < dp.G; g++) {
            float *x = dp.global_x + g * dp.Fg;
            double all = 1e6 * (double)((g * 13) % 11 + 1), kept = all * (0.05 + 0.15 * (double)((g * 5) % 7));
            x[0] = (float)log1p(all / (double)((g * 3) % 17 + 4)), x[1] = (float)log1p(kept);
            x[2] = (float)log1p(1e5 * (double)((g * 7) % 13 + 1)), x[3] = (float)log1p(1.0 + (double)g);
            x[4] = (float)log1p(all), x[5] = (float)log1p(1e6 * (double)(g % 7 + 1) * (double)(g + 3));
            x[6] = (float)log1p(0.3 * all);
            double v[7] = {1, expm1((double)x[3]), expm1((double)x[5]), expm1((double)x[4]), expm1((double)x[2]),
                           expm1((double)x[1]), expm1((double)x[0])};
            double y = 0;
            for (int k = 0; k < 7; k++) y += p_true[k] * v[k];
            dp.label_y[g * 2] = (float)y, dp.label_y[g * 2 + 1] = (float)(1.0 + 1e-8 * v[2]);
        }
        static const int p_col[6] = {3, 5, 4, 2, 1, 0};
        norm_stats P;
        // (a file without the mean tensor's bytes is not one seerconvert writes: no date to name)
        check_terms(&dp, TARGET_ROOFLINE_P, 7, TARGET_ROOFLINE_KA, p_true, p_col, "log_tensor_bytes_mean", NULL, &P);
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_P), "roofline_peak"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_P));
        CHECK(!strcmp(norm_target_name(TARGET_LAST + 1), "unknown"), "kind %d has a name: %s",
              TARGET_LAST + 1, norm_target_name(TARGET_LAST + 1));
        norm_free(&P), pg_free(&dp);
    }

    // roofline_dw: roofline_peak's seven terms and the depthwise convolutions' FLOPs; a cost built
    // with a price on them (a CPU's slow depthwise backward pass) is recovered, which seven terms
    // cannot follow; 7 columns, 8 terms, log_flops_dw last
    {
        pg_dataset dd;
        tg_build(&dd, 40, 2, 1, 8, 2, 17);
        static const char *const dn[8] = {"log_tensor_bytes_mean", "log_mem_kept_acts", "log_weight_total",
                                          "log_nodes", "log_mem_total", "log_flops_total", "log_mem_light",
                                          "log_flops_dw"};
        for (int k = 0; k < 8; k++) free(dd.global_features[k]), dd.global_features[k] = seer_strdup(dn[k]);
        double d_true[8] = {1, 0, 1e-9, 0, 3e-6, 1.1e-5, 9e-5, 2e-7}; // ..., mean tensor, depthwise FLOPs
        for (int64_t g = 0; g < dd.G; g++) {
            float *x = dd.global_x + g * dd.Fg;
            double all = 1e6 * (double)((g * 13) % 11 + 1), kept = all * (0.05 + 0.15 * (double)((g * 5) % 7));
            double flops = 1e6 * (double)(g % 7 + 1) * (double)(g + 3);
            x[0] = (float)log1p(all / (double)((g * 3) % 17 + 4)), x[1] = (float)log1p(kept);
            x[2] = (float)log1p(1e5 * (double)((g * 7) % 13 + 1)), x[3] = (float)log1p(1.0 + (double)g);
            x[4] = (float)log1p(all), x[5] = (float)log1p(flops), x[6] = (float)log1p(0.3 * all);
            x[7] = (float)log1p(flops * 0.02 * (double)((g * 11) % 9)); // none in some graphs
            double v[8] = {1, expm1((double)x[3]), expm1((double)x[5]), expm1((double)x[4]), expm1((double)x[2]),
                           expm1((double)x[1]), expm1((double)x[0]), expm1((double)x[7])};
            double y = 0;
            for (int k = 0; k < 8; k++) y += d_true[k] * v[k];
            dd.label_y[g * 2] = (float)y, dd.label_y[g * 2 + 1] = (float)(1.0 + 1e-8 * v[2]);
        }
        static const int d_col[7] = {3, 5, 4, 2, 1, 0, 7};
        norm_stats D;
        check_terms(&dd, TARGET_ROOFLINE_DW, 8, TARGET_ROOFLINE_P, d_true, d_col, "log_flops_dw", "2026-12-05", &D);
        CHECK(!strcmp(norm_target_name(TARGET_ROOFLINE_DW), "roofline_dw"), "target name %s",
              norm_target_name(TARGET_ROOFLINE_DW));
        norm_free(&D), pg_free(&dd);
    }


    // target = log: no cost, the same as before the option

    norm_stats l;
    CHECK(norm_fit(&l, &ds, which, cols, 2, TARGET_LOG, "test", NULL, &err) == 0, "log fit: %s", err.msg);
    CHECK(norm_log_cost(&l, 0, ds.global_x) == 0 && l.roof == NULL, "target = log has a cost");
    norm_free(&l);

    // the clamp: coverage of the first 20 graphs, applied to all
    for (int64_t g = 0; g < G; g++) which[g] = g < 20 ? SPLIT_TRAIN : SPLIT_TEST;
    coverage cov;
    coverage_fit(&cov, &ds, which, cols, 2, NULL);
    float *gx = malloc(sizeof(float) * (size_t)(G * ds.Fg));
    memcpy(gx, ds.global_x, sizeof(float) * (size_t)(G * ds.Fg));
    coverage_clamp(&cov, 2, gx, G);
    int clamped = 0;
    for (int64_t i = 0; i < G * ds.Fg; i++) {
        int j = (int)(i % ds.Fg);
        double x = ds.global_x[i], lo = cov.lo[2][j], hi = cov.hi[2][j];
        double want = x < lo ? lo : x > hi ? hi : x;
        clamped += want != x;
        CHECK(gx[i] == (float)want, "global %lld: clamped to %g, want %g", (long long)i, gx[i], want);
    }
    CHECK(clamped > 0, "no value was outside the range of the first 20 graphs: the test tests nothing");
    coverage_free(&cov);

    // a dataset without the roofline's features
    free(ds.global_features[1]), ds.global_features[1] = seer_strdup("nodes");
    for (int64_t g = 0; g < G; g++) which[g] = SPLIT_TRAIN;
    norm_free(&s);
    CHECK(norm_fit(&s, &ds, which, cols, 2, TARGET_ROOFLINE, "test", NULL, &err) != 0 &&
              strstr(err.msg, "log_nodes"), "a dataset without log_nodes was accepted (%s)", err.msg);
    free(t), free(lc), free(gx), free(which);
    pg_free(&ds);
    return test_finish("test_prep");
}
