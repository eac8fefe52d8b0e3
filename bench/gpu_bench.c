#include "bench/gpu_bench.h"
#include "kernels/cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static void fatal(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "benchmark: CUDA %s (%s) in %s\n", cudaGetErrorName(e), cudaGetErrorString(e), what);
        exit(1);
    }
}

int q35_bench_gpu_init(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "benchmark: no usable CUDA device\n");
        return -1;
    }
    const char *env = getenv("Q35_DEVICE");
    const int dev = env ? atoi(env) : 0;
    fatal(cudaSetDevice(dev), "cudaSetDevice");
    struct cudaDeviceProp p;
    fatal(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0, clock_khz = 0, mem_khz = 0;
    fatal(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    fatal(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    fatal(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev), "cudaDeviceGetAttribute (clock)");
    fatal(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev), "cudaDeviceGetAttribute (memory clock)");
    char buf[128];
    q35_bench_context("device", p.name);
    snprintf(buf, sizeof buf, "sm_%d%d", p.major, p.minor);
    q35_bench_context("device_arch", buf);
    snprintf(buf, sizeof buf, "%d", p.multiProcessorCount);
    q35_bench_context("device_sms", buf);
    snprintf(buf, sizeof buf, "%d", clock_khz / 1000);
    q35_bench_context("device_clock_mhz", buf);
    snprintf(buf, sizeof buf, "%d", mem_khz / 1000);
    q35_bench_context("device_memory_clock_mhz", buf);
    snprintf(buf, sizeof buf, "%.1f", (double)p.totalGlobalMem / (1 << 30));
    q35_bench_context("device_memory_gib", buf);
    snprintf(buf, sizeof buf, "%d.%d", driver / 1000, (driver % 1000) / 10);
    q35_bench_context("cuda_driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", runtime / 1000, (runtime % 1000) / 10);
    q35_bench_context("cuda_runtime", buf);
    return 0;
}


void *q35_bench_alloc(size_t n)
{
    void *p = NULL;
    fatal(cudaMalloc(&p, n ? n : 4), "cudaMalloc");
    /* a repeating pattern of finite floats in [-1, 1): 0x3e80_0000.. style bytes */
    float *h = malloc(1 << 20);
    for (size_t i = 0; i < (1 << 20) / sizeof(float); i++)
        h[i] = (float)((i * 2654435761u) % 2000u) / 1000.0f - 1.0f;
    for (size_t at = 0; at < n; at += 1 << 20) {
        const size_t len = n - at < (1 << 20) ? n - at : (1 << 20);
        fatal(cudaMemcpy((char *)p + at, h, len, cudaMemcpyHostToDevice), "cudaMemcpy (fill)");
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
    fatal(cudaMemcpy(p, h, n * sizeof *h, cudaMemcpyHostToDevice), "cudaMemcpy (fill)");
    free(h);
}

void q35_bench_free(void *p)
{
    fatal(cudaFree(p), "cudaFree");
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
    fatal(cudaEventCreate(&a), "cudaEventCreate");
    fatal(cudaEventCreate(&b), "cudaEventCreate");
    while (q35_bench_keep_running(st)) {
        fatal(cudaEventRecord(a, 0), "cudaEventRecord");
        const int rc = launch(ctx, &err);
        fatal(cudaEventRecord(b, 0), "cudaEventRecord");
        fatal(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0.0f;
        fatal(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (rc != 0) {
            q35_bench_skip(st, err.msg);
            break;
        }
        q35_bench_set_iteration_time(st, ms / 1e3);
    }
    fatal(cudaEventDestroy(a), "cudaEventDestroy");
    fatal(cudaEventDestroy(b), "cudaEventDestroy");
}
