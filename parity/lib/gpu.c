#include "gpu.h"
#include "device_env.h"

#include "core/half.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        printf("FAIL  CUDA %s (%s) in %s\n", cudaGetErrorName(e), cudaGetErrorString(e), what);
        fflush(stdout);
        exit(1);
    }
}

int q35_gpu_begin(void)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        printf("SKIP  no usable CUDA device (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none present");
        return Q35_TEST_SKIP;
    }
    const q35_device_env env = q35_device_env_get();
    const char *source = NULL;
    q35_error err = {{0}};
    const int dev = q35_device_from_env(&env, &source, &err);
    if (dev < 0) {
        printf("FAIL  %s\n", err.msg);
        exit(1);
    }
    if (dev >= n) {
        printf("FAIL  %s picks device %d, but %d device(s) are present\n", source, dev, n);
        exit(1);
    }
    check(cudaSetDevice(dev), "cudaSetDevice");
    struct cudaDeviceProp p;
    check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
    printf("device %d (%s): %s, sm_%d%d, %d SMs, %.1f GiB\n", dev, source, p.name, p.major, p.minor,
           p.multiProcessorCount, (double)p.totalGlobalMem / (1 << 30));
    return 0;
}

void *q35_gpu_bytes(size_t n)
{
    void *p = NULL;
    check(cudaMalloc(&p, n ? n : 1), "cudaMalloc");
    check(cudaMemset(p, 0xff, n ? n : 1), "cudaMemset (poison)");
    return p;
}

float *q35_gpu_floats(int64_t n)
{
    return q35_gpu_bytes((size_t)n * sizeof(float));
}

void q35_gpu_free(void *p)
{
    check(cudaFree(p), "cudaFree");
}

void q35_gpu_upload(void *dst, const void *src, size_t bytes)
{
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
}

void q35_gpu_download(void *dst, const void *src, size_t bytes)
{
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before a download)");
    check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
}

float *q35_gpu_from_host(const float *src, int64_t n)
{
    float *d = q35_gpu_floats(n);
    q35_gpu_upload(d, src, (size_t)n * sizeof(float));
    return d;
}

void q35_gpu_upload_cols(float *d, int64_t stride, int64_t col, const float *src, int64_t width, int64_t rows)
{
    if (rows > 0)
        check(cudaMemcpy2D(d + col, (size_t)stride * sizeof *d, src, (size_t)width * sizeof *src,
                           (size_t)width * sizeof *src, (size_t)rows, cudaMemcpyHostToDevice),
              "cudaMemcpy2D (upload of a column slice)");
}

void q35_gpu_sync(void)
{
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

void q35_gpu_ok(int rc, const q35_error *err)
{
    if (rc != 0) {
        printf("FAIL  %s\n", err->msg);
        fflush(stdout);
        exit(1);
    }
}

int q35_gpu_suite(q35_suite *s, const char *name, q35_rng *rng)
{
    const int skip = q35_gpu_begin();
    if (skip)
        return skip;
    const uint64_t seed = q35_test_seed();
    q35_rng_seed(rng, seed);
    q35_suite_begin(s, name, seed);
    if (q35_racecheck())
        printf("-- under racecheck (Q35_RACECHECK): the cases that run cuBLAS are left out\n");
    return 0;
}

float *q35_gpu_to_host(const float *d, int64_t n)
{
    float *h = malloc((size_t)(n > 0 ? n : 1) * sizeof *h);
    if (!h) {
        printf("FAIL  out of memory for %lld floats\n", (long long)n);
        exit(1);
    }
    q35_gpu_download(h, d, (size_t)n * sizeof *h);
    return h;
}

void q35_check_f16_out(q35_suite *s, const char *name, const void *d_y16, const float *y, const double *ref,
                       int64_t n, double limit)
{
    const size_t count = (size_t)(n > 0 ? n : 1);
    uint16_t *h = malloc(count * sizeof *h), *want = malloc(count * sizeof *want);
    float *wide = malloc(count * sizeof *wide);
    if (!h || !want || !wide) {
        printf("FAIL  out of host memory for an f16 output\n");
        exit(1);
    }
    q35_gpu_download(h, d_y16, (size_t)n * sizeof *h);
    int64_t first = -1, n_diff = 0;
    for (int64_t i = 0; i < n; i++) {
        want[i] = q35_f32_to_f16(y[i]);
        wide[i] = q35_f16_to_f32(h[i]);
        if (h[i] != want[i] && n_diff++ == 0)
            first = i;
    }
    const bool same = memcmp(h, want, (size_t)n * sizeof *h) == 0;
    const q35_cmp c = q35_compare_f32_f64(wide, ref, n);
    q35_case_unit(s, name, &c, limit, NULL);
    if (same)
        q35_case(s, true, "%s: bitwise the f32 form rounded to f16 (%" PRId64 " halves)", name, n);
    else
        q35_case(s, false, "%s: %" PRId64 " of %" PRId64 " halves differ from the f32 form rounded (first [%" PRId64
                 "]: 0x%04x, want 0x%04x from %.9g)", name, n_diff, n, first, h[first], want[first], (double)y[first]);
    free(h), free(want), free(wide);
}
