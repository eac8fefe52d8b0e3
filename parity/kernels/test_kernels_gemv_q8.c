/* GPU parity of the 8-bit-activation GEMV (kernels/gemv_q8.h; the fast
 * decode's projections) on Q4_K, Q5_K, Q6_K and Q8_0 weights:
 *   its quantization of x bitwise the CPU form q35_ref_gemv_q8_quantize
 *   (memcmp: q, d, s); the product <= 1e-5 against float64 on the quantized x,
 *   and within sum |W| d / 2 of float64 on x itself, output by output;
 *   nothing written past n; every variant bitwise the default (memcmp); the
 *   add form (q35_gemv_q8_add) bitwise the host's f32 sum of y and the plain
 *   output, every variant;
 *   a group of 4 parts bitwise each part alone, and so launched early right
 *   behind x's quantization into a poisoned buffer (the variants in turn);
 *   its refusals;
 * at the 9B's decode shapes (a small one under Q35_QUICK), odd sizes, more
 * groups than the resident grid holds, Q6_K weights 2 and 6 bytes off 8
 * (the wide loads' realignment), and Q6_K and Q8_0 rows 16-byte aligned
 * through the ring's stages (persist). Where the experiments are built, the
 * q6a order (kernels/experiments/gemv_q8_q6a.h): the order on the host, the
 * product plain and launched early bitwise gemv_q8 on the Q6_K rows, its
 * refusals. Outputs are poisoned first. */
#include "parity/lib/gpu.h"
#include "linear_inputs.h"

#include "core/quant.h"
#include "kernels/gemv.h"
#include "kernels/gemv_q8.h"
#include "kernels/linear.h"
#if Q35_KERNEL_EXPERIMENTS
#include "kernels/experiments/gemv_q8_q6a.h"
#endif

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT_F32 1e-5

static q35_rng g_rng;

/* A weight on the host and the device, `offset` bytes into its buffer. */
typedef struct q8_weight {
    uint8_t *host, *dev;
    size_t offset;
} q8_weight;

static void weight_make(q8_weight *w, q35_type type, int64_t n, int64_t k, size_t offset)
{
    *w = (q8_weight){.offset = offset};
    w->host = q35_test_weight(type, n, k, &g_rng);
    const size_t bytes = q35_row_bytes(type, k) * (size_t)n;
    w->dev = q35_gpu_bytes(bytes + offset);
    q35_gpu_upload(w->dev + offset, w->host, bytes);
}

static void weight_free(q8_weight *w)
{
    free(w->host);
    q35_gpu_free(w->dev);
}

/* The 8-bit-activation GEMV (kernels/gemv_q8.h) of one weight: its
 * quantization bitwise (memcmp) the CPU form; the product against float64 on
 * the quantized x' (rel Linf <= 1e-5) and against float64 on x itself within
 * the bound x' implies, output by output: x'_j = d_b q_j with q_j = round(x_j /
 * d_b), so |x_j - x'_j| <= d_b / 2 and |y_o - W_o x| <= sum_j |W_oj| d_b(j) / 2
 * (a relative error would not do: one output can be a dot product near 0);
 * nothing written past n. Every variant bitwise the default; the add form
 * (q35_gemv_q8_add) bitwise the host's f32 sum of y and the plain output. */
static void check_q8(q35_suite *s, const char *what, q35_type type, int64_t n, int64_t k, size_t offset)
{
    q35_error err = {{0}};
    q8_weight w;
    weight_make(&w, type, n, k, offset);
    float *x = q35_host_normal(k, 0.0, 1.0, &g_rng), *dx = q35_gpu_from_host(x, k);
    const size_t xb = q35_gemv_q8_x_bytes(k);
    uint8_t *dq = q35_gpu_bytes(xb), *hq = malloc(xb), *rq = calloc(1, xb);
    q35_gpu_ok(q35_gemv_q8_quantize(dq, dx, k, NULL, &err), &err);
    float *dy = q35_gpu_floats(n + 8);
    q35_gpu_ok(q35_gemv_q8(dy, w.dev + w.offset, type, n, k, dq, Q35_VARIANT_DEFAULT, NULL, &err), &err);
    q35_gpu_download(hq, dq, xb);
    q35_ref_gemv_q8_quantize((int8_t *)rq, (float *)(rq + q35_gemv_q8_d_at(k)), (float *)(rq + q35_gemv_q8_s_at(k)), x,
                             k);
    const bool q_same = memcmp(hq, rq, (size_t)k) == 0 &&
                        memcmp(hq + q35_gemv_q8_d_at(k), rq + q35_gemv_q8_d_at(k), (size_t)(k / 32) * 4) == 0 &&
                        memcmp(hq + q35_gemv_q8_s_at(k), rq + q35_gemv_q8_s_at(k), (size_t)(k / 32) * 4) == 0;
    q35_case(s, q_same, "gemv_q8 quantize  %-4s %-14s k %5" PRId64 ": q, d, s %s the CPU form (memcmp)",
             q35_type_name(type), what, k, q_same ? "bitwise" : "DIFFER from");
    double *xp = malloc((size_t)k * sizeof *xp), *xe = q35_host_f64(x, k);
    const float *rd = (const float *)(rq + q35_gemv_q8_d_at(k));
    for (int64_t j = 0; j < k; j++)
        xp[j] = (double)rd[j / 32] * (double)((int8_t *)rq)[j];
    double *ref = malloc((size_t)n * sizeof *ref), *ref_x = malloc((size_t)n * sizeof *ref_x);
    if (q35_ref_linear(ref, xp, type, w.host, n, k, 1) || q35_ref_linear(ref_x, xe, type, w.host, n, k, 1)) {
        printf("FAIL  out of memory\n");
        exit(1);
    }
    float *y = q35_gpu_to_host(dy, n + 8);
    const int64_t past = q35_gpu_written(y + n, 8);
    char name[200];
    snprintf(name, sizeof name, "gemv_q8 %-4s %-14s %6" PRId64 " x %5" PRId64 " vs float64 on x'", q35_type_name(type),
             what, n, k);
    const q35_cmp c = q35_compare_f32_f64(y, ref, n), ce = q35_compare_f32_f64(y, ref_x, n);
    q35_case_unit(s, name, &c, LIMIT_F32, NULL);
    /* worst output's |y - W x| over its bound: the bound plus the f32 products' LIMIT_F32 of sum |W||x| */
    float *row = malloc((size_t)k * sizeof *row);
    const size_t rb = q35_row_bytes(type, k);
    double worst = 0.0, used = 0.0;
    for (int64_t o = 0; o < n; o++) {
        q35_dequantize(type, w.host + (size_t)o * rb, row, k);
        double bound = 0.0, mag = 0.0;
        for (int64_t j = 0; j < k; j++)
            bound += fabs((double)row[j]) * (double)rd[j / 32] * 0.5, mag += fabs((double)row[j] * xe[j]);
        const double e = fabs((double)y[o] - ref_x[o]), r = e / (bound + LIMIT_F32 * mag);
        if (isnan(r) || r > worst)
            worst = isnan(worst) ? worst : r, used = bound > 0 ? e / bound : 0.0;
    }
    q35_case(s, ce.nonfinite == 0 && worst <= 1.0 && past == 0,
             "gemv_q8 %-4s %-14s vs float64 on x itself: worst output at %.2f of sum |W| d/2 (<= 1), rel L2 %.2e; "
             "%" PRId64 " written past n",
             q35_type_name(type), what, used, ce.rel_l2, past);
    /* every variant: the same arithmetic in the same order, so the default's bits, and nothing past n */
    for (int v = 0; v < q35_gemv_q8_variant_count(); v++) {
        if (v == q35_gemv_q8_variant_default())
            continue;
        float *dv = q35_gpu_floats(n + 8);
        q35_gpu_ok(q35_gemv_q8(dv, w.dev + w.offset, type, n, k, dq, v, NULL, &err), &err);
        float *yv = q35_gpu_to_host(dv, n + 8);
        const bool same = memcmp(yv, y, (size_t)(n + 8) * 4) == 0;
        q35_case(s, same, "gemv_q8 %-4s %-14s variant %-9s %s the default's (memcmp, with the 8 past n)",
                 q35_type_name(type), what, q35_gemv_q8_variant_name(v), same ? "bitwise" : "DIFFERS from");
        free(yv);
        q35_gpu_free(dv);
    }
    /* the add form (a decode step's output projection into the residual), every variant: y0 + the product,
       bitwise the host's f32 sum of y0 and the plain form's output, nothing past n */
    float *y0 = q35_host_normal(n, 0.0, 1.0, &g_rng), *want = malloc((size_t)(n + 8) * 4);
    for (int64_t o = 0; o < n; o++)
        want[o] = y0[o] + y[o];
    memcpy(want + n, y + n, 8 * 4);
    for (int v = 0; v < q35_gemv_q8_variant_count(); v++) {
        float *da = q35_gpu_floats(n + 8);
        q35_gpu_upload(da, y0, (size_t)n * 4);
        q35_gpu_ok(q35_gemv_q8_add(da, w.dev + w.offset, type, n, k, dq, v, NULL, &err), &err);
        float *ya = q35_gpu_to_host(da, n + 8);
        const bool same = memcmp(ya, want, (size_t)(n + 8) * 4) == 0;
        q35_case(s, same, "gemv_q8 %-4s %-14s add, variant %-9s: y + the product %s the host's sum (memcmp, with "
                 "the 8 past n)", q35_type_name(type), what, q35_gemv_q8_variant_name(v), same ? "bitwise" : "DIFFERS from");
        free(ya);
        q35_gpu_free(da);
    }
    free(y0), free(want);
    free(row), free(x), free(hq), free(rq), free(xp), free(xe), free(ref), free(ref_x), free(y);
    q35_gpu_free(dx), q35_gpu_free(dq), q35_gpu_free(dy);
    weight_free(&w);
}

/* Every bit of n bytes at d set (NaN), in the legacy stream's order. */
static void poison_async(void *d, size_t n)
{
    const cudaError_t e = cudaMemsetAsync(d, 0xff, n, NULL);
    if (e != cudaSuccess) {
        printf("FAIL  cudaMemsetAsync of %zu bytes: %s\n", n, cudaGetErrorString(e));
        exit(1);
    }
}

/* The 8-bit-activation GEMV's group: the 9B's [qkv | alpha | beta | gate] in
 * one launch, each part bitwise its q35_gemv_q8 alone, and so launched early
 * (q35_gemv_q8_group_early) right behind x's quantization; and its refusals. */
static void check_q8_group(q35_suite *s)
{
    q35_error err = {{0}};
    const int64_t k = q35_quick() ? 512 : 4096, n[4] = {2 * k, 32, 32, k};
    float *x = q35_host_normal(k, 0.0, 1.0, &g_rng), *dx = q35_gpu_from_host(x, k);
    void *dq = q35_gpu_bytes(q35_gemv_q8_x_bytes(k));
    q35_gpu_ok(q35_gemv_q8_quantize(dq, dx, k, NULL, &err), &err);
    q8_weight w[4];
    float *alone[4], *grouped[4];
    q35_gemv_part parts[4];
    for (int i = 0; i < 4; i++) {
        weight_make(&w[i], Q35_TYPE_Q4_K, n[i], k, 0);
        alone[i] = q35_gpu_floats(n[i]), grouped[i] = q35_gpu_floats(n[i]);
        q35_gpu_ok(q35_gemv_q8(alone[i], w[i].dev, Q35_TYPE_Q4_K, n[i], k, dq, Q35_VARIANT_DEFAULT, NULL, &err), &err);
        parts[i] = (q35_gemv_part){.y = grouped[i], .w = w[i].dev, .type = Q35_TYPE_Q4_K, .n = n[i]};
    }
    q35_gpu_ok(q35_gemv_q8_group(parts, 4, Q35_TYPE_Q4_K, k, dq, Q35_VARIANT_DEFAULT, NULL, &err), &err);
    int64_t differ = 0;
    for (int i = 0; i < 4; i++) {
        float *a = q35_gpu_to_host(alone[i], n[i]), *g = q35_gpu_to_host(grouped[i], n[i]);
        differ += memcmp(a, g, (size_t)n[i] * 4) != 0;
        free(a), free(g);
    }
    q35_case(s, differ == 0, "gemv_q8_group q4_K 9B mix, 4 parts: %" PRId64 " parts differ from gemv_q8 alone (memcmp)",
             differ);
    /* launched early, right behind the quantization of x into a buffer poisoned just before (in the stream):
       a block that read x before the wait would read the poison or half of x; REPS times, every output bitwise */
    enum { REPS = 16 };
    int64_t early_differ = 0;
    for (int rep = 0; rep < REPS; rep++) {
        for (int i = 0; i < 4; i++)
            poison_async(grouped[i], (size_t)n[i] * 4);
        poison_async(dq, q35_gemv_q8_x_bytes(k));
        q35_gpu_ok(q35_gemv_q8_quantize(dq, dx, k, NULL, &err), &err);
        const int v = rep % (q35_gemv_q8_variant_count() + 1) - 1; /* each variant in turn, and the default */
        q35_gpu_ok(q35_gemv_q8_group_early(parts, 4, Q35_TYPE_Q4_K, k, dq, v < 0 ? Q35_VARIANT_DEFAULT : v, NULL, &err),
                   &err);
        for (int i = 0; i < 4; i++) {
            float *a = q35_gpu_to_host(alone[i], n[i]), *g = q35_gpu_to_host(grouped[i], n[i]);
            early_differ += memcmp(a, g, (size_t)n[i] * 4) != 0;
            free(a), free(g);
        }
    }
    q35_case(s, early_differ == 0,
             "gemv_q8_group_early right behind x's quantization into a poisoned buffer, %d times (the variants in turn): %" PRId64
             " parts differ from gemv_q8 alone (memcmp)", REPS, early_differ);
    for (int i = 0; i < 4; i++) {
        q35_gpu_free(alone[i]), q35_gpu_free(grouped[i]);
        weight_free(&w[i]);
    }
    float *d = q35_gpu_floats(4096);
    memset(&err, 0, sizeof err);
    int rc = q35_gemv_q8((float *)d, d, Q35_TYPE_Q4_0, 8, 256, dq, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_q8: type q4_0"), "gemv_q8 refuses q4_0: %s", err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_q8((float *)d, (char *)d + 2, Q35_TYPE_Q4_K, 8, 256, dq, Q35_VARIANT_DEFAULT, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "must be 16-byte aligned"), "gemv_q8 refuses a q4_K weight off 16 bytes: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_q8((float *)d, d, Q35_TYPE_Q4_K, 8, 256, dq, q35_gemv_q8_variant_count(), NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "gemv_q8: variant"), "gemv_q8 refuses a variant past its registry: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_gemv_q8_quantize(dq, d, 100, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "k = 100 (want a multiple of 32"), "gemv_q8_quantize refuses k = 100: %s",
             err.msg);
    free(x);
    q35_gpu_free(dx), q35_gpu_free(dq), q35_gpu_free(d);
}

#if Q35_KERNEL_EXPERIMENTS
/* The experiment q6a: the order on the host (a run's block j, less its d, at
 * 208 j, its d at 1664 + 2 j), and its product, plain and launched early, bitwise
 * q35_gemv_q8 on the Q6_K rows (memcmp), nothing written past n. */
static void check_q6a(q35_suite *s, const char *what, int64_t n, int64_t k)
{
    q35_error err = {{0}};
    uint8_t *host = q35_test_weight(Q35_TYPE_Q6_K, n, k, &g_rng);
    const size_t bytes = q35_row_bytes(Q35_TYPE_Q6_K, k) * (size_t)n;
    uint8_t *ordered = malloc(bytes);
    memset(ordered, 0xA5, bytes);
    const int rc = q35_q6a_order(ordered, host, n, k, &err);
    int64_t wrong = 0;
    for (size_t r = 0; rc == 0 && r < bytes / 1680; r++)
        for (int j = 0; j < 8; j++)
            wrong += memcmp(ordered + 1680 * r + 208 * j, host + 1680 * r + 210 * j, 208) != 0 ||
                     memcmp(ordered + 1680 * r + 1664 + 2 * j, host + 1680 * r + 210 * j + 208, 2) != 0;
    q35_case(s, rc == 0 && wrong == 0, "q6a_order %-12s %6" PRId64 " x %5" PRId64 ": %" PRId64 " blocks misplaced %s",
             what, n, k, wrong, err.msg);
    uint8_t *dw = q35_gpu_bytes(bytes), *da = q35_gpu_bytes(bytes);
    q35_gpu_upload(dw, host, bytes);
    q35_gpu_upload(da, ordered, bytes);
    float *x = q35_host_normal(k, 0.0, 1.0, &g_rng), *dx = q35_gpu_from_host(x, k);
    uint8_t *dq = q35_gpu_bytes(q35_gemv_q8_x_bytes(k));
    q35_gpu_ok(q35_gemv_q8_quantize(dq, dx, k, NULL, &err), &err);
    float *dref = q35_gpu_floats(n);
    q35_gpu_ok(q35_gemv_q8(dref, dw, Q35_TYPE_Q6_K, n, k, dq, Q35_VARIANT_DEFAULT, NULL, &err), &err);
    float *ref = q35_gpu_to_host(dref, n);
    for (int early = 0; early < 2; early++) {
        float *dy = q35_gpu_floats(n + 8);
        q35_gpu_ok(q35_gemv_q8_q6a(dy, da, n, k, dq, early, NULL, &err), &err);
        float *y = q35_gpu_to_host(dy, n + 8);
        const bool same = memcmp(y, ref, (size_t)n * 4) == 0;
        const int64_t past = q35_gpu_written(y + n, 8);
        q35_case(s, same && past == 0,
                 "gemv_q8_q6a %-12s %6" PRId64 " x %5" PRId64 "%s: %s gemv_q8 on the q6_K rows (memcmp); %" PRId64
                 " written past n",
                 what, n, k, early ? ", launched early" : "", same ? "bitwise" : "DIFFERS from", past);
        free(y);
        q35_gpu_free(dy);
    }
    memset(&err, 0, sizeof err);
    int r2 = q35_gemv_q8_q6a(dref, da, n, 1024, dq, false, NULL, &err);
    q35_case(s, r2 == -1 && strstr(err.msg, "k = 1024 (want a positive multiple of 2048"),
             "gemv_q8_q6a refuses k = 1024: %s", err.msg);
    memset(&err, 0, sizeof err);
    r2 = q35_gemv_q8_q6a(dref, da + 2, n, k, dq, false, NULL, &err);
    q35_case(s, r2 == -1 && strstr(err.msg, "16-byte aligned"), "gemv_q8_q6a refuses a weight off 16 bytes: %s",
             err.msg);
    memset(&err, 0, sizeof err);
    r2 = q35_q6a_order(ordered, host, n, 1000, &err);
    q35_case(s, r2 == -1 && strstr(err.msg, "k = 1000"), "q6a_order refuses k = 1000: %s", err.msg);
    free(host), free(ordered), free(x), free(ref);
    q35_gpu_free(dw), q35_gpu_free(da), q35_gpu_free(dx), q35_gpu_free(dq), q35_gpu_free(dref);
}
#endif

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU 8-bit-activation GEMV: quantization, product, variants, add, group", &g_rng);
    if (skip)
        return skip;
    const bool quick = q35_quick();
    const int64_t H = quick ? 512 : 4096, F = quick ? 1536 : 12288;
    check_q8(&s, "9B attn_qkv", Q35_TYPE_Q4_K, 2 * H, H, 0);
    check_q8(&s, "9B ffn_down", Q35_TYPE_Q6_K, H, F, 0);
    check_q8(&s, "9B ffn_up", Q35_TYPE_Q5_K, F, H, 0);
    check_q8(&s, "0.8B q8_0", Q35_TYPE_Q8_0, 1024, H, 0);
    check_q8(&s, "odd", Q35_TYPE_Q4_K, 5, 256, 0);
    check_q8(&s, "odd", Q35_TYPE_Q6_K, 3, 512, 0);
    check_q8(&s, "odd", Q35_TYPE_Q8_0, 37, 96, 0);
    check_q8(&s, "odd", Q35_TYPE_Q5_K, 1, 768, 0);
    /* Q6_K's 210-byte blocks 2 and 6 bytes off 8 (the wide loads read from below the weight, within its buffer) */
    check_q8(&s, "q6_K off 2", Q35_TYPE_Q6_K, 33, 1024, 2);
    check_q8(&s, "q6_K off 6", Q35_TYPE_Q6_K, 7, 768, 6);
    check_q8(&s, "q8_0 off 2", Q35_TYPE_Q8_0, 9, 96, 2);
    /* more groups than the resident grid holds (persist's warps take several each; odd: the last alone) */
    check_q8(&s, "many groups", Q35_TYPE_Q4_K, 40000, 256, 0);
    check_q8(&s, "many groups", Q35_TYPE_Q8_0, 30001, 64, 0);
    check_q8(&s, "many groups", Q35_TYPE_Q6_K, 20001, 256, 0);
    /* Q6_K and Q8_0 rows 16-byte aligned (k a multiple of 2048 and 256): persist's ring, two a group
       and one, more groups than its resident grid (its warps' rings run on from one group into the next) */
    check_q8(&s, "ring", Q35_TYPE_Q6_K, 6001, 4096, 0);
    check_q8(&s, "ring", Q35_TYPE_Q8_0, 6001, 256, 0);
    check_q8_group(&s);
#if Q35_KERNEL_EXPERIMENTS
    check_q6a(&s, "9B ffn_down", H, quick ? 2048 : F);
    check_q6a(&s, "ring", 6001, 4096); /* more groups than the resident grid; the last alone */
#endif
    return q35_suite_end(&s);
}
