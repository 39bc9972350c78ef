/* PCGrad: the Gram-form implementation against a literal float64 transcription of the paper's
 * loop (project g_i off each conflicting original g_j in a random order, then sum) on random,
 * exactly conflicting, parallel, orthogonal and zero gradients for T = 1, 2, 6: equal to 1e-10
 * relative. Then the two-task toy of the PCGrad paper (Yu et al. 2020, appendix), trained with
 * Seer's Adam from (-8.5, 5): summing the gradients stalls in the valley, PCGrad reaches the
 * joint minimum (asserted on the final losses). */
#include <string.h>

#include "optim/optim.h"
#include "backend/pcgrad.h"
#include "testutil.h"

/* The paper's loop, literally, in float64. rng draws the same shuffles as pcgrad_coefficients. */
static void literal(const float *G, int T, int64_t P, seer_rng *rng, double *out) {
    double *g = seer_malloc(sizeof(double) * (size_t)P);
    memset(out, 0, sizeof(double) * (size_t)P);
    for (int i = 0; i < T; i++) {
        for (int64_t p = 0; p < P; p++) g[p] = G[(int64_t)i * P + p];
        int64_t order[PCGRAD_MAX_TASKS];
        for (int k = 0; k < T; k++) order[k] = k;
        rng_shuffle_i64(rng, order, T);
        for (int n = 0; n < T; n++) {
            const float *gj = G + order[n] * P;
            double dot = 0, nn = 0;
            for (int64_t p = 0; p < P; p++) dot += g[p] * (double)gj[p], nn += (double)gj[p] * gj[p];
            if (dot < 0 && nn > 0)
                for (int64_t p = 0; p < P; p++) g[p] -= dot / nn * (double)gj[p];
        }
        for (int64_t p = 0; p < P; p++) out[p] += g[p];
    }
    free(g);
}

static void compare(const char *what, const float *G, int T, int64_t P, uint64_t seed) {
    seer_rng r1, r2;
    rng_seed(&r1, seed);
    r2 = r1;
    double *want = seer_malloc(sizeof(double) * (size_t)P), *got64 = seer_malloc(sizeof(double) * (size_t)P);
    double *gd = seer_malloc(sizeof(double) * (size_t)(T * P)), K[PCGRAD_MAX_TASKS * PCGRAD_MAX_TASKS];
    float *got = seer_malloc(sizeof(float) * (size_t)P);
    literal(G, T, P, &r1, want);
    pcgrad_combine(G, P, T, P, &r2, gd, K, got, got64);
    double mx = 0, err = 0;
    for (int64_t p = 0; p < P; p++) mx = fmax(mx, fabs(want[p])), err = fmax(err, fabs(got64[p] - want[p]));
    CHECK(err <= 1e-10 * mx || (mx == 0 && err == 0), "%s (T=%d): max error %.3g, max value %.3g", what, T, err, mx);
    CHECK(!memcmp(&r1, &r2, sizeof r1), "%s: the generators drew differently", what);
    printf("  %-22s T=%d P=%lld: max |gram - literal| / max |literal| = %.2e\n", what, T,
           (long long)P, mx > 0 ? err / mx : err);
    free(want), free(got64), free(gd), free(got);
}

/* ---- the toy ---- */
static void toy_losses(const double *th, double *L) {
    double t1 = th[0], t2 = th[1];
    double c1 = fmax(tanh(0.5 * t2), 0), c2 = fmax(tanh(-0.5 * t2), 0);
    double f1 = log(fmax(fabs(0.5 * (-t1 - 7) - tanh(-t2)), 5e-6)) + 6;
    double f2 = log(fmax(fabs(0.5 * (-t1 + 3) - tanh(-t2) + 2), 5e-6)) + 6;
    double g1 = ((-t1 + 7) * (-t1 + 7) + 0.1 * (-t2 - 8) * (-t2 - 8)) / 10 - 20;
    double g2 = ((-t1 - 7) * (-t1 - 7) + 0.1 * (-t2 - 8) * (-t2 - 8)) / 10 - 20;
    L[0] = c1 * f1 + c2 * g1;
    L[1] = c1 * f2 + c2 * g2;
}

static double run_toy(int use_pcgrad) {
    float th[2] = {-8.5f, 5.0f}, m[2] = {0}, v[2] = {0}, G[4], g[2];
    double gd[4], K[4], out64[2];
    seer_rng rng;
    rng_seed(&rng, 3);
    for (int step = 1; step <= 30000; step++) {
        for (int k = 0; k < 2; k++) { // central differences in float64 of each task's loss
            double a[2] = {th[0], th[1]}, b[2] = {th[0], th[1]}, La[2], Lb[2];
            a[k] += 1e-6, b[k] -= 1e-6;
            toy_losses(a, La), toy_losses(b, Lb);
            for (int task = 0; task < 2; task++) G[task * 2 + k] = (float)((La[task] - Lb[task]) / 2e-6);
        }
        if (use_pcgrad)
            pcgrad_combine(G, 2, 2, 2, &rng, gd, K, g, out64);
        else
            g[0] = G[0] + G[2], g[1] = G[1] + G[3];
        adam_update(th, g, m, v, 2, OPT_ADAM, 1e-3, 0.9, 0.999, 1e-8, 0.0, step);
    }
    double L[2], d[2] = {th[0], th[1]};
    toy_losses(d, L);
    printf("  toy %-6s: theta (%.3f, %.3f), losses %.3f + %.3f = %.3f\n", use_pcgrad ? "pcgrad" : "sum",
           th[0], th[1], L[0], L[1], L[0] + L[1]);
    return L[0] + L[1];
}

int main(void) {
    seer_rng r;
    rng_seed(&r, 5);
    int64_t P = 1000;
    float *G = seer_malloc(sizeof(float) * 6 * (size_t)P);
    int Ts[3] = {1, 2, 6};
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < Ts[k] * P; i++) G[i] = (float)rng_normal(&r);
        compare("random", G, Ts[k], P, 10 + (uint64_t)k);
        // bias the gradients so that some pairs conflict strongly and some agree
        for (int64_t i = 0; i < Ts[k] * P; i++) G[i] += (i / P) % 2 ? -0.3f : 0.3f;
        compare("random, conflicting", G, Ts[k], P, 20 + (uint64_t)k);
    }
    for (int64_t p = 0; p < P; p++) G[p] = (float)rng_normal(&r), G[P + p] = -G[p];
    compare("exactly conflicting", G, 2, P, 1);
    for (int64_t p = 0; p < P; p++) G[P + p] = 2.0f * G[p];
    compare("parallel", G, 2, P, 2);
    for (int64_t p = 0; p < P; p++) G[p] = p < P / 2 ? 1.0f : 0.0f, G[P + p] = p < P / 2 ? 0.0f : -1.0f;
    compare("orthogonal", G, 2, P, 3);
    for (int64_t p = 0; p < P; p++) G[p] = (float)rng_normal(&r), G[P + p] = 0.0f, G[2 * P + p] = -G[p];
    compare("zero and conflicting", G, 3, P, 4);
    memset(G, 0, sizeof(float) * 6 * (size_t)P);
    compare("all zero", G, 6, P, 5);
    // exactly conflicting pair: each projected gradient becomes zero, so the update is zero
    {
        double K[4] = {4, -4, -4, 4}, c[2];
        seer_rng q;
        rng_seed(&q, 1);
        pcgrad_coefficients(K, 2, &q, c);
        // each projected gradient is g_i + g_j = 0, i.e. coefficients (1, 1) per task: c = (2, 2)
        // and c^T G = 2 (g_1 + g_2) = 0
        CHECK(c[0] == 2.0 && c[1] == 2.0, "conflicting pair: coefficients %g %g, expected 2 2", c[0], c[1]);
    }
    free(G);
    double sum = run_toy(0), pc = run_toy(1);
    CHECK(pc < -25.0, "PCGrad did not converge: final loss %.3f", pc);
    CHECK(sum > pc + 20.0, "summing did not stall: final loss %.3f against PCGrad's %.3f", sum, pc);
    return test_finish("test_pcgrad");
}
