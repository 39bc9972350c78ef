/* infer: plain-C BLAS subset (see mini_blas.h).
 *
 * The forward product C = A B^T (A (m, k) activations, B (n, k) a weight in nn.Linear layout) is
 * a grid of dot products of contiguous rows. It is computed in 2 x 4 tiles of C with eight-lane
 * vector accumulators (GCC/Clang vector extensions, so it builds for any target; with
 * -march=x86-64-v3 and -ffp-contract=fast, set for this file only, each lane step is one FMA),
 * and the lanes are summed at the end of each dot product. */
#include "mini_blas.h"

#include <string.h>

typedef float v8 __attribute__((vector_size(32), aligned(4))); // aligned(4): unaligned loads

static inline float hsum(v8 v) {
    float s[8];
    memcpy(s, &v, sizeof s);
    return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

/* Dot products of rows a[0..R) with rows b[0..C), R <= 2, C <= 4, length k. */
static inline void tile(int R, int C, int k, const float *a, int lda, const float *b, int ldb,
                        float out[2][4]) {
    v8 acc[2][4];
    memset(acc, 0, sizeof acc);
    int k8 = k & ~7;
    for (int p = 0; p < k8; p += 8) {
        v8 bv[4];
        for (int j = 0; j < C; j++) bv[j] = *(const v8 *)(b + (long)j * ldb + p);
        for (int i = 0; i < R; i++) {
            v8 av = *(const v8 *)(a + (long)i * lda + p);
            for (int j = 0; j < C; j++) acc[i][j] += av * bv[j];
        }
    }
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
            float s = hsum(acc[i][j]);
            for (int p = k8; p < k; p++) s += a[(long)i * lda + p] * b[(long)j * ldb + p];
            out[i][j] = s;
        }
}

static void gemm_nt(int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                    int ldb, float beta, float *c, int ldc) {
    for (int i = 0; i < m; i += 2) {
        int R = m - i < 2 ? m - i : 2;
        for (int j = 0; j < n; j += 4) {
            int C = n - j < 4 ? n - j : 4;
            float t[2][4];
            // full tiles get constant sizes, so the loops unroll into registers
            if (R == 2 && C == 4) tile(2, 4, k, a + (long)i * lda, lda, b + (long)j * ldb, ldb, t);
            else tile(R, C, k, a + (long)i * lda, lda, b + (long)j * ldb, ldb, t);
            for (int r = 0; r < R; r++)
                for (int q = 0; q < C; q++) {
                    float *cp = c + (long)(i + r) * ldc + j + q;
                    *cp = alpha * t[r][q] + (beta == 0.0f ? 0.0f : beta * *cp);
                }
        }
    }
}

void seer_mb_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
                   int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                   float beta, float *c, int ldc) {
    (void)order;
    if (ta == CblasNoTrans && tb == CblasTrans) {
        gemm_nt(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float s = 0.0f;
            for (int p = 0; p < k; p++) {
                float x = ta == CblasNoTrans ? a[(long)i * lda + p] : a[(long)p * lda + i];
                float y = tb == CblasNoTrans ? b[(long)p * ldb + j] : b[(long)j * ldb + p];
                s += x * y;
            }
            float *cp = c + (long)i * ldc + j;
            *cp = alpha * s + (beta == 0.0f ? 0.0f : beta * *cp);
        }
}

void seer_mb_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, int m, int n, float alpha,
                   const float *a, int lda, const float *x, int incx, float beta, float *y,
                   int incy) {
    (void)order;
    int rows = ta == CblasNoTrans ? m : n, cols = ta == CblasNoTrans ? n : m;
    for (int i = 0; i < rows; i++) {
        float s = 0.0f;
        for (int p = 0; p < cols; p++)
            s += (ta == CblasNoTrans ? a[(long)i * lda + p] : a[(long)p * lda + i]) * x[(long)p * incx];
        float *yp = y + (long)i * incy;
        *yp = alpha * s + (beta == 0.0f ? 0.0f : beta * *yp);
    }
}
