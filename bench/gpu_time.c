/* Device memory, fills and CUDA-event timing for the benchmarks and the
 * ceilings (gpu_time.h). */
#include "bench/gpu_time.h"
#include "kernels/cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

void q35_bench_check(int status, const char *what)
{
    const cudaError_t e = (cudaError_t)status;
    if (e != cudaSuccess) {
        fprintf(stderr, "benchmark: CUDA %s (%s) in %s\n", cudaGetErrorName(e), cudaGetErrorString(e), what);
        exit(1);
    }
}

void *q35_bench_alloc(size_t n)
{
    void *p = NULL;
    q35_bench_check(cudaMalloc(&p, n ? n : 4), "cudaMalloc");
    /* a repeating pattern of finite floats in [-1, 1): 0x3e80_0000.. style bytes */
    float *h = malloc(1 << 20);
    for (size_t i = 0; i < (1 << 20) / sizeof(float); i++)
        h[i] = (float)((i * 2654435761u) % 2000u) / 1000.0f - 1.0f;
    for (size_t at = 0; at < n; at += 1 << 20) {
        const size_t len = n - at < (1 << 20) ? n - at : (1 << 20);
        q35_bench_check(cudaMemcpy((char *)p + at, h, len, cudaMemcpyHostToDevice), "cudaMemcpy (fill)");
    }
    free(h);
    return p;
}

void *q35_bench_try_alloc(size_t n, q35_bench_state *st)
{
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        cudaGetLastError();
        char why[160];
        snprintf(why, sizeof why, "%.2f GiB of device memory does not fit", (double)n / (1 << 30));
        q35_bench_skip(st, why);
        while (q35_bench_keep_running(st))
            ;
        return NULL;
    }
    cudaFree(p);
    return q35_bench_alloc(n); /* filled with finite values */
}

void q35_bench_fill(float *p, size_t n, float v)
{
    float *h = malloc((n ? n : 1) * sizeof *h);
    for (size_t i = 0; i < n; i++)
        h[i] = v;
    q35_bench_check(cudaMemcpy(p, h, n * sizeof *h, cudaMemcpyHostToDevice), "cudaMemcpy (fill)");
    free(h);
}

void q35_bench_free(void *p)
{
    q35_bench_check(cudaFree(p), "cudaFree");
}

void q35_bench_time(q35_bench_state *st, int (*launch)(void *ctx, q35_error *err), void *ctx)
{
    q35_error err = {{0}};
    if (launch(ctx, &err) != 0 || Q35_CUDA_CHECK(cudaDeviceSynchronize(), &err) != 0) {
        q35_bench_skip(st, err.msg[0] ? err.msg : "the warm-up launch failed");
        while (q35_bench_keep_running(st))
            ;
        return;
    }
    cudaEvent_t a, b;
    q35_bench_check(cudaEventCreate(&a), "cudaEventCreate");
    q35_bench_check(cudaEventCreate(&b), "cudaEventCreate");
    while (q35_bench_keep_running(st)) {
        q35_bench_check(cudaEventRecord(a, 0), "cudaEventRecord");
        const int rc = launch(ctx, &err);
        q35_bench_check(cudaEventRecord(b, 0), "cudaEventRecord");
        q35_bench_check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0.0f;
        q35_bench_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (rc != 0) {
            q35_bench_skip(st, err.msg);
            break;
        }
        q35_bench_set_iteration_time(st, ms / 1e3);
    }
    q35_bench_check(cudaEventDestroy(a), "cudaEventDestroy");
    q35_bench_check(cudaEventDestroy(b), "cudaEventDestroy");
}
