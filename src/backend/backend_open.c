/* backend: choosing the backend (see backend_open.h). */
#include "backend_open.h"

#include <stdio.h>
#include <string.h>

#ifdef SEER_HAVE_CUDA
#include "cuda_backend.h"
#endif

int backend_open(int device, int precision, int local_rank, const char *where, backend_choice *out,
                 seer_err *err) {
    memset(out, 0, sizeof *out);
    out->be = backend_cpu(), out->gpu = -1;
    if (device == DEVICE_CPU) return 0;
#ifdef SEER_HAVE_CUDA
    int n = cuda_device_count();
    if (n == 0) {
        if (device == DEVICE_CUDA)
            return seer_fail(err, "%s: [backend] device = cuda, but this machine has no CUDA device "
                                  "(or no NVIDIA driver); use device = cpu or auto", where);
        return 0;
    }
    out->gpu = local_rank % n;
    static const int prec_cuda[] = {[PRECISION_FP32] = PREC_FP32, [PRECISION_TF32] = PREC_TF32,
                                    [PRECISION_BF16] = PREC_BF16};
    if (cuda_backend_init(out->gpu, prec_cuda[precision], err)) return -1;
    out->be = backend_cuda();
    static const char *const prec[] = {"fp32", "tf32", "bf16"};
    snprintf(out->name, sizeof out->name, "%s, %s", cuda_device_name(), prec[precision]);
    return 0;
#else
    (void)precision, (void)local_rank;
    if (device == DEVICE_CUDA)
        return seer_fail(err, "%s: [backend] device = cuda, but this build has no CUDA backend "
                              "(nvcc was not found when it was built); use device = cpu or auto",
                         where);
    return 0;
#endif
}

size_t backend_device_bytes(const seer_backend *be) {
#ifdef SEER_HAVE_CUDA
    if (be->device) return cuda_backend_allocated();
#endif
    (void)be;
    return 0;
}
