#include "gpu.h"
#include "device_env.h"

#include "core/fp8.h"
#include "core/half.h"
#include "kernels/fp8.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
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

int64_t *q35_gpu_pos(int64_t pos)
{
    int64_t *d = q35_gpu_bytes(sizeof pos);
    q35_gpu_upload(d, &pos, sizeof pos);
    return d;
}

float *q35_gpu_floats(int64_t n)
{
    return q35_gpu_bytes((size_t)n * sizeof(float));
}

int64_t q35_gpu_written(const float *h, int64_t n)
{
    int64_t written = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &h[i], 4);
        written += u != 0xffffffffu; /* q35_gpu_bytes' poison */
    }
    return written;
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

void *q35_host_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("FAIL  out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* e4m3 code c as a signed count of steps from zero (both zeros 0). */
static int fp8_steps(uint8_t c)
{
    return (c & 0x80u) ? -(int)(c & 0x7fu) : (int)(c & 0x7fu);
}

/* The codes and scales of one quantization of rows x cols against another's,
 * bitwise: one case line. */
static void fp8_case_bitwise(q35_suite *s, const char *name, const char *against, const uint8_t *q, const float *sc,
                             const uint8_t *want, const float *want_sc, int64_t rows, int64_t cols)
{
    int64_t first = -1, n_diff = 0;
    for (int64_t i = 0; i < rows * cols; i++)
        if (q[i] != want[i] && n_diff++ == 0)
            first = i;
    const q35_bitcmp bs = q35_bitwise_f32(sc, want_sc, rows);
    char diff[200];
    if (n_diff == 0 && bs.equal)
        q35_case(s, true, "%s: codes and scales bitwise %s", name, against);
    else if (n_diff == 0)
        q35_case(s, false, "%s: codes bitwise %s, scales %s", name, against, q35_bitcmp_str(&bs, diff, sizeof diff));
    else
        q35_case(s, false, "%s: %" PRId64 " of %" PRId64 " codes differ from %s (first row %" PRId64 " col %" PRId64
                 ": 0x%02x, want 0x%02x), scales %s", name, n_diff, rows * cols, against, first / cols, first % cols,
                 q[first], want[first], q35_bitcmp_str(&bs, diff, sizeof diff));
}

void q35_check_fp8_out(q35_suite *s, const char *name, const uint8_t *d_q, const float *d_scale, const float *d_y,
                       const double *ref, int64_t rows, int64_t cols, double limit)
{
    const int64_t n = rows * cols;
    uint8_t *q = q35_host_alloc((size_t)n), *want = q35_host_alloc((size_t)n), *near = q35_host_alloc((size_t)n);
    float *sc = q35_host_alloc((size_t)rows * sizeof *sc), *want_sc = q35_host_alloc((size_t)rows * sizeof *sc);
    float *near_sc = q35_host_alloc((size_t)rows * sizeof *sc), *rf = q35_host_alloc((size_t)n * sizeof *rf);
    q35_gpu_download(q, d_q, (size_t)n);
    q35_gpu_download(sc, d_scale, (size_t)rows * sizeof *sc);
    uint8_t *d_want = q35_gpu_bytes((size_t)n);
    float *d_want_sc = q35_gpu_floats(rows);
    q35_error err = {{0}};
    q35_gpu_ok(q35_fp8_quantize_rows(d_want, d_want_sc, d_y, rows, cols, cols, NULL, &err), &err);
    q35_gpu_download(want, d_want, (size_t)n);
    q35_gpu_download(want_sc, d_want_sc, (size_t)rows * sizeof *sc);
    fp8_case_bitwise(s, name, "the f32 form + q35_fp8_quantize_rows (GPU)", q, sc, want, want_sc, rows, cols);
    float *y = q35_gpu_to_host(d_y, n);
    q35_ref_fp8_quantize_rows(want, want_sc, y, rows, cols, cols);
    fp8_case_bitwise(s, name, "q35_ref_fp8_quantize_rows of the f32 form (CPU)", q, sc, want, want_sc, rows, cols);
    for (int64_t i = 0; i < n; i++)
        rf[i] = (float)ref[i];
    q35_ref_fp8_quantize_rows(near, near_sc, rf, rows, cols, cols);
    int64_t nan = 0, far = 0, first = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        nan += (q[i] & 0x7fu) == Q35_E4M3_NAN;
        const int d = fp8_steps(q[i]) - fp8_steps(near[i]);
        if ((d > 1 || d < -1) && far++ == 0)
            first = i;
    }
    for (int64_t r = 0; r < rows; r++) {
        const double e = isfinite(sc[r]) ? fabs((double)sc[r] - near_sc[r]) / fabs((double)near_sc[r]) : INFINITY;
        worst = e > worst ? e : worst;
    }
    if (first < 0)
        q35_case(s, nan == 0 && worst <= limit,
                 "%s: vs the float64 reference quantized: %" PRId64 " NaN codes, every code within one step, scales "
                 "rel %.2e (<= %.0e)", name, nan, worst, limit);
    else
        q35_case(s, false, "%s: vs the float64 reference quantized: %" PRId64 " codes past one step (first row %" PRId64
                 " col %" PRId64 ": 0x%02x, want 0x%02x from %.9g), %" PRId64 " NaN codes, scales rel %.2e", name, far,
                 first / cols, first % cols, q[first], near[first], ref[first], nan, worst);
    free(q), free(want), free(near), free(sc), free(want_sc), free(near_sc), free(rf), free(y);
    q35_gpu_free(d_want), q35_gpu_free(d_want_sc);
}
