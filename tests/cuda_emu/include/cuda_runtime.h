/* A CPU stand-in for the parts of the CUDA runtime that cuda/ uses, for the emulator test
 * (tests/cuda_emu/README.md). Device memory is host memory, streams are the caller's thread,
 * and a fresh allocation is filled with 0xff bytes (NaN as floats) so unwritten reads show. */
#ifndef SEER_EMU_CUDA_RUNTIME_H
#define SEER_EMU_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define EMU_INLINE inline
#else
#define EMU_INLINE static inline
#endif

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2, cudaErrorNotReady = 600 };
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice };
#define cudaStreamNonBlocking 1u

#ifdef __cplusplus
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
#endif

typedef struct cudaDeviceProp {
    char name[256];
    int major, minor;
    size_t totalGlobalMem;
} cudaDeviceProp;
typedef enum cudaMemcpyKind cudaMemcpyKind;

EMU_INLINE const char *cudaGetErrorString(cudaError_t e) {
    (void)e;
    return "emulated CUDA error"; }
EMU_INLINE cudaError_t cudaGetLastError(void) { return cudaSuccess; }
/* SEER_EMU_NO_GPU=1 makes the emulator report no device (the "no GPU" paths) */
EMU_INLINE cudaError_t cudaGetDeviceCount(int *n) {
    const char *off = getenv("SEER_EMU_NO_GPU");
    *n = off && *off == '1' ? 0 : 1;
    return cudaSuccess;
}
EMU_INLINE cudaError_t cudaSetDevice(int d) {
    (void)d;
    return cudaSuccess; }
EMU_INLINE cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
    (void)d;
    strcpy(p->name, "CPU emulator of tests/cuda_emu");
    p->major = 9, p->minor = 0, p->totalGlobalMem = (size_t)1 << 34;
    return cudaSuccess;
}
EMU_INLINE cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned f) {
    (void)f;
    *s = (void *)1; return cudaSuccess; }
EMU_INLINE cudaError_t cudaStreamCreate(cudaStream_t *s) { *s = (void *)1; return cudaSuccess; }
EMU_INLINE cudaError_t cudaStreamDestroy(cudaStream_t s) {
    (void)s;
    return cudaSuccess; }
EMU_INLINE cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    (void)s;
    return cudaSuccess; }
EMU_INLINE cudaError_t cudaStreamQuery(cudaStream_t s) {
    (void)s;
    return cudaSuccess; }
EMU_INLINE cudaError_t cudaMalloc(void **p, size_t n) {
    *p = malloc(n ? n : 1);
    if (*p) memset(*p, 0xff, n);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
#ifdef __cplusplus
template <class T> inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
#endif
EMU_INLINE cudaError_t cudaFree(void *p) { free(p); return cudaSuccess; }
EMU_INLINE cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
#ifdef __cplusplus
template <class T> inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMalloc((void **)p, n); }
#endif
EMU_INLINE cudaError_t cudaFreeHost(void *p) { free(p); return cudaSuccess; }
EMU_INLINE cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    (void)k;
    if (n) memmove(d, s, n);
    return cudaSuccess;
}
EMU_INLINE cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) {
    (void)st;
    return cudaMemcpy(d, s, n, k);
}
EMU_INLINE cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t st) {
    (void)st;
    memset(p, v, n);
    return cudaSuccess;
}

#endif
