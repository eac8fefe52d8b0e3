/* The ceilings every GPU result is measured against (gpu_bench.h): the
 * device-to-device copy, cuBLAS SGEMM without TF32 and HGEMM (f16 in, f32
 * accumulate and out), on random data. Measured once at start-up (median of 5
 * warm runs, outside Google Benchmark's loop, so a filter never drops them) and
 * registered as ordinary benchmarks too. */
#include "bench/gpu_ceilings.h"
#include "bench/gpu_time.h"
#include "core/half.h"
#include "kernels/blas.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CEILING_REPS 5
#define PATTERN_VALUES (1 << 22) /* 16 MiB of random f32 (8 MiB as f16), repeated over a buffer */

static q35_blas g_blas;

/* Random finite values in [-1, 1): a period of 4M values repeated over the
 * buffer, far longer than any tile, so the GEMMs see random bits. */
static void fill_random(void *d, size_t bytes, int half)
{
    static float *f32;
    static uint16_t *f16;
    if (!f32) {
        f32 = malloc(PATTERN_VALUES * sizeof *f32);
        f16 = malloc(PATTERN_VALUES * sizeof *f16);
        if (!f32 || !f16) {
            fprintf(stderr, "benchmark: out of host memory for the random pattern\n");
            exit(1);
        }
        uint64_t x = 0x9e3779b97f4a7c15u;
        for (size_t i = 0; i < PATTERN_VALUES; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            f32[i] = (float)(x >> 40) * 0x1p-23f - 1.0f;
            f16[i] = q35_f32_to_f16(f32[i]);
        }
    }
    const void *src = half ? (const void *)f16 : (const void *)f32;
    const size_t period = PATTERN_VALUES * (half ? sizeof *f16 : sizeof *f32);
    for (size_t at = 0; at < bytes; at += period) {
        const size_t len = bytes - at < period ? bytes - at : period;
        q35_bench_check(cudaMemcpy((char *)d + at, src, len, cudaMemcpyHostToDevice), "cudaMemcpy (random fill)");
    }
}

static void *alloc_random(size_t bytes, int half)
{
    void *p = NULL;
    q35_bench_check(cudaMalloc(&p, bytes), "cudaMalloc (ceiling buffer)");
    fill_random(p, bytes, half);
    return p;
}

struct copy_ctx {
    void *src, *dst;
    size_t bytes;
};

static int copy_launch(void *p, q35_error *err)
{
    struct copy_ctx *c = p;
    return Q35_CUDA_CHECK(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, 0), err);
}

/* C[n][n] = A B, column-major, all n x n: FP32 pedantic, or f16 A, B. */
struct gemm_ctx {
    void *a, *b;
    float *c;
    int n;
    int half;
};

static int gemm_launch(void *p, q35_error *err)
{
    const struct gemm_ctx *g = p;
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType_t in = g->half ? CUDA_R_16F : CUDA_R_32F;
    const cublasComputeType_t compute = g->half ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_PEDANTIC;
    return Q35_CUBLAS_CHECK(cublasGemmEx((cublasHandle_t)g_blas, CUBLAS_OP_N, CUBLAS_OP_N, g->n, g->n, g->n, &one,
                                         g->a, in, g->n, g->b, in, g->n, &zero, g->c, CUDA_R_32F, g->n, compute,
                                         CUBLAS_GEMM_DEFAULT),
                            err);
}

static void blas_once(void)
{
    q35_error err = {{0}};
    if (!g_blas && q35_blas_create(&g_blas, NULL, &err)) {
        fprintf(stderr, "benchmark: %s\n", err.msg);
        exit(1);
    }
}

static void gemm_alloc(struct gemm_ctx *g, int n, int half)
{
    blas_once();
    const size_t in = (size_t)n * (size_t)n * (half ? 2 : 4);
    *g = (struct gemm_ctx){.a = alloc_random(in, half), .b = alloc_random(in, half), .n = n, .half = half};
    g->c = alloc_random((size_t)n * (size_t)n * 4, 0);
}

static void gemm_free(struct gemm_ctx *g)
{
    q35_bench_free(g->a), q35_bench_free(g->b), q35_bench_free(g->c);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median seconds of CEILING_REPS timed launches after one warm launch; 0
 * (printed) when a launch fails. */
static double median_seconds(const char *what, int (*launch)(void *, q35_error *), void *ctx)
{
    q35_error err = {{0}};
    double s[CEILING_REPS];
    cudaEvent_t a, b;
    q35_bench_check(cudaEventCreate(&a), "cudaEventCreate");
    q35_bench_check(cudaEventCreate(&b), "cudaEventCreate");
    int rc = launch(ctx, &err) || Q35_CUDA_CHECK(cudaDeviceSynchronize(), &err);
    for (int i = 0; i < CEILING_REPS && rc == 0; i++) {
        q35_bench_check(cudaEventRecord(a, 0), "cudaEventRecord");
        rc = launch(ctx, &err);
        q35_bench_check(cudaEventRecord(b, 0), "cudaEventRecord");
        q35_bench_check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms = 0.0f;
        q35_bench_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        s[i] = ms / 1e3;
    }
    q35_bench_check(cudaEventDestroy(a), "cudaEventDestroy");
    q35_bench_check(cudaEventDestroy(b), "cudaEventDestroy");
    if (rc) {
        fprintf(stderr, "benchmark: ceiling %s not measured: %s\n", what, err.msg);
        return 0.0;
    }
    qsort(s, CEILING_REPS, sizeof *s, cmp_double);
    return s[CEILING_REPS / 2];
}

#define CEILING_COPY_BYTES ((size_t)1 << 30)
#define CEILING_GEMM_N 8192

void q35_bench_measure_ceilings(void)
{
    struct copy_ctx c = {.bytes = CEILING_COPY_BYTES};
    c.src = alloc_random(c.bytes, 0);
    q35_bench_check(cudaMalloc(&c.dst, c.bytes), "cudaMalloc (copy ceiling)");
    const double copy_s = median_seconds("copy", copy_launch, &c);
    q35_bench_free(c.src), q35_bench_free(c.dst);
    if (copy_s > 0)
        q35_bench_set_ceiling(Q35_CEILING_COPY, "bytes", 2.0 * (double)c.bytes / copy_s);

    const double flop = 2.0 * CEILING_GEMM_N * (double)CEILING_GEMM_N * CEILING_GEMM_N;
    const char *names[2] = {Q35_CEILING_SGEMM, Q35_CEILING_HGEMM};
    for (int half = 0; half < 2; half++) {
        struct gemm_ctx g;
        gemm_alloc(&g, CEILING_GEMM_N, half);
        const double s = median_seconds(names[half], gemm_launch, &g);
        gemm_free(&g);
        if (s > 0)
            q35_bench_set_ceiling(names[half], "flop", flop / s);
    }
    fprintf(stderr, "benchmark: ceilings (median of %d): copy %.3g TB/s, sgemm %.3g TFLOP/s, hgemm %.3g TFLOP/s\n",
            CEILING_REPS, q35_bench_ceiling(Q35_CEILING_COPY) / 1e12, q35_bench_ceiling(Q35_CEILING_SGEMM) / 1e12,
            q35_bench_ceiling(Q35_CEILING_HGEMM) / 1e12);
}

void q35_bench_copy(q35_bench_state *st, void *unused)
{
    (void)unused;
    struct copy_ctx c = {.bytes = (size_t)q35_bench_arg(st, 0) << 20};
    c.src = alloc_random(c.bytes, 0);
    q35_bench_check(cudaMalloc(&c.dst, c.bytes), "cudaMalloc (copy)");
    q35_bench_time(st, copy_launch, &c);
    q35_bench_rate(st, "bytes", 2.0 * (double)c.bytes); /* read + write */
    q35_bench_pct_of(st, Q35_CEILING_COPY, 2.0 * (double)c.bytes);
    q35_bench_free(c.src), q35_bench_free(c.dst);
}

static void bench_gemm(q35_bench_state *st, void *half)
{
    struct gemm_ctx g;
    const int n = (int)q35_bench_arg(st, 0);
    gemm_alloc(&g, n, half != NULL);
    q35_bench_time(st, gemm_launch, &g);
    const double flop = 2.0 * n * (double)n * n;
    q35_bench_rate(st, "FLOP", flop);
    q35_bench_pct_of(st, half ? Q35_CEILING_HGEMM : Q35_CEILING_SGEMM, flop);
    q35_bench_rate(st, "bytes", (double)n * n * (half ? 2.0 + 2.0 + 4.0 : 12.0)); /* A, B read; C written */
    gemm_free(&g);
}

void q35_bench_register_ceilings(void)
{
    static const int64_t mib[] = {1024}, n[] = {4096, 8192};
    static int half = 1;
    q35_bench_register("ceiling/copy", q35_bench_copy, NULL, (q35_bench_axis[]){{"MiB", mib, 1}}, 1);
    q35_bench_register("ceiling/sgemm", bench_gemm, NULL, (q35_bench_axis[]){{"n", n, 2}}, 1);
    q35_bench_register("ceiling/hgemm", bench_gemm, &half, (q35_bench_axis[]){{"n", n, 2}}, 1);
}
