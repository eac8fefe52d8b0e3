#include "kernels/cuda.h"

#include <cuda_runtime.h>

int q35_cuda_check(int status, const char *what, const char *file, int line, q35_error *err)
{
    if (status == cudaSuccess)
        return 0;
    const cudaError_t e = (cudaError_t)status;
    return q35_fail(err, "CUDA %s (%s) in %s at %s:%d", cudaGetErrorName(e), cudaGetErrorString(e), what, file, line);
}

int q35_launch_check(const char *kernel, const char *file, int line, q35_error *err)
{
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return 0;
    return q35_fail(err, "CUDA %s (%s) launching %s at %s:%d", cudaGetErrorName(e), cudaGetErrorString(e), kernel, file,
                    line);
}
