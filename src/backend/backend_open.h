/* backend: choosing the backend a run trains on ([backend] device and precision). The only
 * place outside cuda/ that knows whether the build has CUDA. */
#ifndef SEER_BACKEND_OPEN_H
#define SEER_BACKEND_OPEN_H

#include "backend/backend.h"

enum { DEVICE_AUTO = 0, DEVICE_CPU = 1, DEVICE_CUDA = 2 };
/* The dense products on a GPU: plain fp32, TF32 tensor cores (fp32 accumulation), or bf16
 * tensor cores (fp32 accumulation); the same numbers as cuda_backend.h's PREC_*. */
enum { PRECISION_FP32 = 0, PRECISION_TF32 = 1, PRECISION_BF16 = 2 };

typedef struct {
    const seer_backend *be;
    int gpu;        // the GPU's index on this node (-1 on the CPU)
    char name[200]; // the GPU and precision ("" on the CPU)
} backend_choice;

/* device: DEVICE_*; auto takes a GPU when the build has CUDA and the machine a GPU. A rank takes
 * GPU (local_rank mod the GPU count). where names the config line for messages. */
int backend_open(int device, int precision, int local_rank, const char *where, backend_choice *out,
                 seer_err *err);

/* Bytes the device backend holds now (0 on the CPU). */
size_t backend_device_bytes(const seer_backend *be);

#endif
