/* infer: plain-C BLAS subset (see mini_blas.h).
 *
 * The forward product C = A B^T (A (m, k) activations, B (n, k) a weight in nn.Linear layout) is
 * the tuned one (gemm_nt below), written with GCC/Clang vector extensions so it builds for any
 * target; with -march=x86-64-v3 and -ffp-contract=fast (set for this file only) each lane step
 * is one FMA. */
#include "mini_blas.h"

#include <string.h>

typedef float v8 __attribute__((vector_size(32), aligned(4))); // aligned(4): unaligned loads
typedef int v8i __attribute__((vector_size(32), aligned(4)));

/* C = alpha A B^T + beta C with B (n, k) in nn.Linear layout. B is packed, 16 output columns
 * and at most KC of k at a time, into a small k-major panel on the stack (16 KiB), so the inner
 * loop is an outer product: two 8-lane loads of the panel and one broadcast of A per row give
 * twelve FMAs for a 6 x 16 block of C held in registers. Each C element sums over k in order, in
 * KC-long partial sums. */
#define MR 6
#define NR 16
#define KC 256

static inline void block(int R, int C, int kc, const float *a, int lda, const float *bp,
                         float *c, int ldc, float alpha, float beta, const float *bias, int relu) {
    v8 acc[MR][2];
    memset(acc, 0, sizeof acc);
    for (int p = 0; p < kc; p++) {
        v8 b0 = *(const v8 *)(bp + p * NR), b1 = *(const v8 *)(bp + p * NR + 8);
        for (int r = 0; r < R; r++) {
            float av = a[(long)r * lda + p];
            acc[r][0] += b0 * av;
            acc[r][1] += b1 * av;
        }
    }
    if (C == NR && alpha == 1.0f) { // the common case, in vectors
        v8 b0 = {0}, b1 = {0}, zero = {0};
        if (bias) b0 = *(const v8 *)bias, b1 = *(const v8 *)(bias + 8);
        for (int r = 0; r < R; r++) {
            v8 *cr0 = (v8 *)(c + (long)r * ldc), *cr1 = (v8 *)(c + (long)r * ldc + 8);
            v8 t0 = acc[r][0], t1 = acc[r][1];
            if (beta != 0.0f) t0 += *cr0 * beta, t1 += *cr1 * beta;
            t0 += b0, t1 += b1;
            if (relu) { // keep the lanes where t > 0 (a compare mask), zero the rest
                t0 = (v8)((v8i)t0 & (t0 > zero));
                t1 = (v8)((v8i)t1 & (t1 > zero));
            }
            *cr0 = t0, *cr1 = t1;
        }
        return;
    }
    for (int r = 0; r < R; r++) {
        float t[NR];
        memcpy(t, acc[r], sizeof t);
        float *cr = c + (long)r * ldc;
        if (beta != 0.0f)
            for (int q = 0; q < C; q++) t[q] = alpha * t[q] + beta * cr[q];
        else if (alpha != 1.0f)
            for (int q = 0; q < C; q++) t[q] *= alpha;
        if (bias)
            for (int q = 0; q < C; q++) t[q] += bias[q];
        if (relu)
            for (int q = 0; q < C; q++) t[q] = t[q] > 0.0f ? t[q] : 0.0f;
        memcpy(cr, t, sizeof(float) * (size_t)C);
    }
}

/* Also the fused linear layer: bias (n) is added and a ReLU applied after the last k chunk. */
static void gemm_nt(int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                    int ldb, float beta, float *c, int ldc, const float *bias, int relu) {
    float bp[KC * NR] __attribute__((aligned(32)));
    for (int j = 0; j < n; j += NR) {
        int C = n - j < NR ? n - j : NR;
        for (int k0 = 0; k0 < k || k0 == 0; k0 += KC) {
            int kc = k - k0 < KC ? k - k0 : KC;
            for (int q = 0; q < NR; q++) {
                const float *br = b + (long)(j + q) * ldb + k0;
                if (q < C)
                    for (int p = 0; p < kc; p++) bp[p * NR + q] = br[p];
                else
                    for (int p = 0; p < kc; p++) bp[p * NR + q] = 0.0f;
            }
            float bt = k0 ? 1.0f : beta; // later k chunks add to the first one's result
            int last = k0 + KC >= k;
            const float *bj = bias && last ? bias + j : NULL;
            for (int i = 0; i < m; i += MR) {
                int R = m - i < MR ? m - i : MR;
                const float *ai = a + (long)i * lda + k0;
                float *ci = c + (long)i * ldc + j;
                // full row blocks get a constant R, so the row loop unrolls into registers
                if (R == MR) block(MR, C, kc, ai, lda, bp, ci, ldc, alpha, bt, bj, relu && last);
                else block(R, C, kc, ai, lda, bp, ci, ldc, alpha, bt, bj, relu && last);
            }
            if (k == 0) break;
        }
    }
}

void seer_mb_linear(float *out, int ldo, const float *in, int ldi, const float *w, int ldw,
                    const float *b, int n, int fin, int fout, int accumulate, int relu) {
    if (fout == 1) {
        // a score layer (one output): a dot product per row, not a 16-wide panel
        for (int i = 0; i < n; i++) {
            const float *x = in + (long)i * ldi;
            v8 acc = {0};
            int k8 = fin & ~7;
            for (int p = 0; p < k8; p += 8) acc += *(const v8 *)(x + p) * *(const v8 *)(w + p);
            float t[8];
            memcpy(t, &acc, sizeof t);
            float s = ((t[0] + t[4]) + (t[1] + t[5])) + ((t[2] + t[6]) + (t[3] + t[7]));
            for (int p = k8; p < fin; p++) s += x[p] * w[p];
            float *o = out + (long)i * ldo;
            s += (accumulate ? *o : 0.0f) + (b ? b[0] : 0.0f);
            *o = relu && s < 0.0f ? 0.0f : s;
        }
        return;
    }
    gemm_nt(n, fout, fin, 1.0f, in, ldi, w, ldw, accumulate ? 1.0f : 0.0f, out, ldo, b, relu);
}

void seer_mb_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
                   int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                   float beta, float *c, int ldc) {
    (void)order;
    if (ta == CblasNoTrans && tb == CblasTrans) {
        gemm_nt(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL, 0);
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
