/* A stand-in for the NCCL calls of src/dist/nccl_comm.c, for the emulator (device memory is host
 * memory there): the all-reduce goes through dist's MPI all-reduce, so GPU ranks' wiring (MPI
 * bootstrap, the trainer's NCCL branch, the timeout loop) runs on CPU ranks under mpirun. */
#ifndef SEER_EMU_NCCL_H
#define SEER_EMU_NCCL_H

#include <stddef.h>

#include "cuda_runtime.h"

typedef struct { char internal[128]; } ncclUniqueId;
typedef struct ncclComm *ncclComm_t;
typedef enum { ncclSuccess = 0, ncclSystemError = 2, ncclInProgress = 7 } ncclResult_t;
typedef enum { ncclFloat = 7 } ncclDataType_t;
typedef enum { ncclSum = 0 } ncclRedOp_t;
typedef struct { int blocking; } ncclConfig_t;
#define NCCL_CONFIG_INITIALIZER {1}

#ifdef __cplusplus
extern "C" {
#endif
ncclResult_t ncclGetVersion(int *v);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config);
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char *ncclGetErrorString(ncclResult_t r);
#ifdef __cplusplus
}
#endif

#endif
