/* The cuBLAS context the projection GEMM (kernels/gemm.h) and the f32 attention
 * (kernels/attention_f32.h) share: one handle bound to one stream, and the status
 * check every cuBLAS call goes through. Plain C: the handle is opaque here. */
#ifndef Q35_KERNELS_BLAS_H
#define Q35_KERNELS_BLAS_H

#include "kernels/cuda.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cublasContext *q35_blas; /* a cublasHandle_t */

/* The workspace each cuBLASLt context holds (kernels/fp8.h's FP8 GEMM,
 * kernels/gemm_lt.h's f16 GEMM): 32 MiB, cuBLASLt's recommendation for Hopper.
 * The capacity plan (model/capacity.h) counts one where the model makes one. */
#define Q35_LT_WORKSPACE_BYTES ((size_t)32 << 20)

/* Creates a handle whose work goes to `stream`, in CUBLAS_DEFAULT_MATH (no TF32
 * unless a call asks for it; the f32 paths ask for CUBLAS_COMPUTE_32F_PEDANTIC
 * per call). 0, or -1 with cuBLAS's status name in err. */
int q35_blas_create(q35_blas *out, q35_stream stream, q35_error *err);

/* Moves the handle's work to another stream. */
int q35_blas_set_stream(q35_blas blas, q35_stream stream, q35_error *err);

void q35_blas_destroy(q35_blas blas); /* NULL is fine */

/* 0 when status (a cublasStatus_t) is CUBLAS_STATUS_SUCCESS; else -1 with
 * "cuBLAS <name> (<text>) in <what> at <file>:<line>" in err. */
int q35_cublas_check(int status, const char *what, const char *file, int line, q35_error *err);

#define Q35_CUBLAS_CHECK(call, err) q35_cublas_check((int)(call), #call, __FILE__, __LINE__, (err))

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_BLAS_H */
