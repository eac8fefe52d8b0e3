/* The shared cuBLAS handle (kernels/blas.h). */
#include "kernels/blas.h"

#include <cublas_v2.h>

int q35_cublas_check(int status, const char *what, const char *file, int line, q35_error *err)
{
    if (status == CUBLAS_STATUS_SUCCESS)
        return 0;
    const cublasStatus_t s = (cublasStatus_t)status;
    return q35_fail(err, "cuBLAS %s (%s) in %s at %s:%d", cublasGetStatusName(s), cublasGetStatusString(s), what, file,
                    line);
}

int q35_blas_create(q35_blas *out, q35_stream stream, q35_error *err)
{
    cublasHandle_t h = nullptr;
    *out = nullptr;
    if (Q35_CUBLAS_CHECK(cublasCreate(&h), err))
        return -1;
    if (Q35_CUBLAS_CHECK(cublasSetStream(h, (cudaStream_t)stream), err) ||
        Q35_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), err)) {
        cublasDestroy(h);
        return -1;
    }
    *out = h;
    return 0;
}

int q35_blas_set_stream(q35_blas blas, q35_stream stream, q35_error *err)
{
    return Q35_CUBLAS_CHECK(cublasSetStream(blas, (cudaStream_t)stream), err);
}

void q35_blas_destroy(q35_blas blas)
{
    if (blas)
        cublasDestroy(blas);
}
