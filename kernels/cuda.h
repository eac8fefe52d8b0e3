/* What every CUDA unit's C header shares: the stream type (a cudaStream_t,
 * declared without CUDA's headers so C code can include the unit headers), and
 * the status check every CUDA call and launch goes through. */
#ifndef Q35_KERNELS_CUDA_H
#define Q35_KERNELS_CUDA_H

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct CUstream_st *q35_stream; /* a cudaStream_t; NULL is the legacy default stream */

/* 0 when status (a cudaError_t) is cudaSuccess; else -1 with "CUDA <name> (<text>)
 * in <what> at <file>:<line>" in err. */
int q35_cuda_check(int status, const char *what, const char *file, int line, q35_error *err);

/* The status of the last launch (cudaGetLastError), named after the kernel. */
int q35_launch_check(const char *kernel, const char *file, int line, q35_error *err);

#define Q35_CUDA_CHECK(call, err) q35_cuda_check((int)(call), #call, __FILE__, __LINE__, (err))
#define Q35_LAUNCH_CHECK(kernel, err) q35_launch_check((kernel), __FILE__, __LINE__, (err))

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_CUDA_H */
