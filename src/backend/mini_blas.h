/* infer: the three BLAS calls of the CPU backend, in plain C, for libseer (which must not depend
 * on a BLAS). Row-major only; names and arguments follow CBLAS so src/backend/cpu_ops.c compiles
 * unchanged against either. Only the product the forward pass uses (C = A B^T, the linear layer)
 * is tuned; the others serve the backward pass, which libseer never runs, and are plain loops. */
#ifndef SEER_MINI_BLAS_H
#define SEER_MINI_BLAS_H

enum CBLAS_ORDER { CblasRowMajor = 101 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112 };

#define cblas_sgemm seer_mb_sgemm
#define cblas_sgemv seer_mb_sgemv

/* C (m, n) = alpha op(A) op(B) + beta C, op(A) (m, k), op(B) (k, n). */
void seer_mb_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m,
                   int n, int k, float alpha, const float *a, int lda, const float *b, int ldb,
                   float beta, float *c, int ldc);
/* The whole linear layer out = in W^T (+ out when accumulate) + b, then ReLU when relu != 0, with
 * bias and ReLU applied as each block of out is stored (one pass over out, not three). */
void seer_mb_linear(float *out, int ldo, const float *in, int ldi, const float *w, int ldw,
                    const float *b, int n, int fin, int fout, int accumulate, int relu);
/* y = alpha op(A) x + beta y, A (m, n). */
void seer_mb_sgemv(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, int m, int n, float alpha,
                   const float *a, int lda, const float *x, int incx, float beta, float *y,
                   int incy);

#endif
