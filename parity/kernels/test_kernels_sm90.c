/* GPU probes of the sm_90a pieces under the flash_sm90 kernel
 * (parity/kernels/sm90_probe.h, kernels/sm90.cuh), bottom up, so a failure
 * names the broken layer:
 *   1. wgmma SS m64n64k16, K-major both, one k16 step (K = 16);
 *   2. the S = Q K^T tile over 256 dims (16 steps, the descriptors advancing
 *      inside and across the 64-wide swizzled boxes);
 *   3. wgmma RS m64n256k16, O = P V with V MN-major, both orders of the
 *      descriptor's leading / stride byte offsets: the one the kernel builds
 *      with (LBO 8 KiB between dim boxes, SBO 1 KiB between 8-position atoms,
 *      kernels/attention_flash_sm90.cu's Q35_SM90_V_LBO / _SBO) must match,
 *      and the line says which of the two does;
 *   4. a TMA box round trip (tensor map -> mbarrier -> shared memory -> global),
 *      bitwise against the source at the swizzled offsets (q35_sw128), inside
 *      the tensor and across its last row (the rows past it read as zeros);
 *   5. 2 and 3 again with B / V brought by TMA, as the kernel's K and V;
 *   6. the chunked delta rule's wgmma pieces (the experiment tb4w,
 *      kernels/delta_chunk_sm90.cuh): wgmma SS m64n32k16 with A
 *      K-major and MN-major (its state update reads K so), on its two-word
 *      descriptors, and its transposed f16 stores of an m64n32 accumulator
 *      (stmatrix.trans), bitwise the host's rounding.
 * Inputs are f16 values (random normals rounded to f16), so every product is
 * exact in f32 and the only error is the f32 accumulation of K <= 256 terms:
 * about sqrt(K) * 2^-24 relative, 1e-6; the bound 1e-4 (rel L-inf against
 * float64) leaves the tensor core's summation order room and still catches any
 * element that is misplaced (an O(1) error). Outputs are NaN first (the
 * accumulators too: the first step's scale-d 0 must overwrite them). On a
 * mismatch: the first bad elements, and where in the reference the value
 * found actually sits. Skipped (77) without an sm_90 device or a build with
 * sm_90a code. */
#include "sm90_probe.h"

#include "core/half.h"
#include "kernels/attention_flash_sm90.h"
#include "parity/lib/gpu.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT 1e-4

static q35_rng g_rng;

/* n random f16 values (normals), their float64 values into *wide. */
static uint16_t *random_f16(int64_t n, double **wide)
{
    float *x = q35_host_normal(n, 0.0, 1.0, &g_rng);
    uint16_t *h = malloc((size_t)n * sizeof *h);
    *wide = malloc((size_t)n * sizeof **wide);
    if (!x || !h || !*wide) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < n; i++) {
        h[i] = q35_f32_to_f16(x[i]);
        (*wide)[i] = q35_f16_to_f32(h[i]);
    }
    free(x);
    return h;
}

static uint16_t *to_device(const uint16_t *h, int64_t n)
{
    uint16_t *d = q35_gpu_bytes((size_t)n * sizeof *d);
    q35_gpu_upload(d, h, (size_t)n * sizeof *d);
    return d;
}

/* got [rows][cols] against ref: the case, and on failure the first bad
 * elements with where their value sits in ref. */
static bool check(q35_suite *s, const char *what, const float *got, const double *ref, int rows, int cols,
                  bool print)
{
    const int64_t n = (int64_t)rows * cols;
    const q35_cmp c = q35_compare_f32_f64(got, ref, n);
    const bool ok = print ? q35_case_unit(s, what, &c, LIMIT, NULL) : c.nonfinite == 0 && c.rel_linf <= LIMIT;
    if (!print)
        printf("      %s: rel L-inf %.3g, %lld non-finite\n", what, c.rel_linf, (long long)c.nonfinite);
    if (ok)
        return true;
    double peak = 0.0;
    for (int64_t i = 0; i < n; i++)
        peak = fmax(peak, fabs(ref[i]));
    int shown = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!(fabs(got[i] - ref[i]) <= LIMIT * peak)) {
            bad++;
            if (shown++ < 6) {
                int64_t at = -1;
                for (int64_t j = 0; j < n && at < 0; j++)
                    if (fabs(got[i] - ref[j]) <= LIMIT * peak)
                        at = j;
                printf("      %s: [%lld][%lld] got %.6g, want %.6g", what, (long long)(i / cols),
                       (long long)(i % cols), got[i], ref[i]);
                if (at >= 0)
                    printf(" (the value of [%lld][%lld])\n", (long long)(at / cols), (long long)(at % cols));
                else
                    printf(" (no element of the reference)\n");
            }
        }
    }
    printf("      %s: %lld of %lld elements wrong\n", what, (long long)bad, (long long)n);
    return false;
}

/* ref [M][N] = A B in float64: A (i, k) at a[i * ai + k * ak], B (k, j) at
 * b[k * bk + j * bj] (malloc'd). */
static double *ref_product(const double *a, int64_t ai, int64_t ak, const double *b, int64_t bk, int64_t bj, int M,
                           int N, int K)
{
    double *ref = malloc((size_t)M * (size_t)N * sizeof *ref);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0;
            for (int k = 0; k < K; k++)
                acc += a[i * ai + k * ak] * b[k * bk + j * bj];
            ref[i * N + j] = acc;
        }
    return ref;
}

/* 1, 2: D [64][64] = A B^T over K. */
static void check_ss(q35_suite *s, int K, int tma)
{
    double *a64, *b64;
    uint16_t *a = random_f16(64 * K, &a64), *b = random_f16(64 * K, &b64);
    double *ref = ref_product(a64, K, 1, b64, 1, K, 64, 64, K);
    uint16_t *da = to_device(a, 64 * K), *db = to_device(b, 64 * K);
    float *dd = q35_gpu_floats(64 * 64);
    q35_error err = {{0}};
    q35_gpu_ok(q35_probe_wgmma_ss(dd, da, db, K, tma, &err), &err);
    float *d = q35_gpu_to_host(dd, 64 * 64);
    char what[120];
    snprintf(what, sizeof what, "wgmma SS m64n64k16 K-major, K %3d (%2d steps), B by %s", K, K / 16,
             tma ? "TMA" : "the threads");
    check(s, what, d, ref, 64, 64, true);
    free(d), free(a), free(b), free(a64), free(b64), free(ref);
    q35_gpu_free(da), q35_gpu_free(db), q35_gpu_free(dd);
}

/* 3: O [64][256] = P [64][64] V [64][256], both descriptor orders. */
static void check_rs(q35_suite *s, int tma)
{
    double *p64, *v64;
    uint16_t *p = random_f16(64 * 64, &p64), *v = random_f16(64 * 256, &v64);
    double *ref = ref_product(p64, 64, 1, v64, 256, 1, 64, 256, 64);
    uint16_t *dp = to_device(p, 64 * 64), *dv = to_device(v, 64 * 256);
    bool ok[2];
    for (int swap = 0; swap < 2; swap++) {
        float *dout = q35_gpu_floats(64 * 256);
        q35_error err = {{0}};
        q35_gpu_ok(q35_probe_wgmma_rs(dout, dp, dv, swap, tma, &err), &err);
        float *o = q35_gpu_to_host(dout, 64 * 256);
        char what[120];
        snprintf(what, sizeof what, "wgmma RS m64n256k16 V MN-major by %s, LBO %s, SBO %s%s",
                 tma ? "TMA" : "the threads", swap ? "1 KiB" : "8 KiB", swap ? "8 KiB" : "1 KiB",
                 swap ? " (the other order)" : " (the kernel's)");
        ok[swap] = check(s, what, o, ref, 64, 256, false);
        printf("      %s: %s\n", what, ok[swap] ? "matches" : "does not match");
        free(o);
        q35_gpu_free(dout);
    }
    q35_case(s, ok[0], "wgmma RS V MN-major by %s: the kernel's order (LBO 8 KiB, SBO 1 KiB) %s; the other %s%s",
             tma ? "TMA" : "the threads", ok[0] ? "matches" : "does NOT match", ok[1] ? "matches" : "does not",
             !ok[0] && ok[1] ? " -> build with -DQ35_SM90_V_LBO=1024u -DQ35_SM90_V_SBO=8192u" : "");
    free(p), free(v), free(p64), free(v64), free(ref);
    q35_gpu_free(dp), q35_gpu_free(dv);
}

/* 6: D [64][32] = A B on tb4w's descriptors (A K-major or MN-major), and D
 * stored transposed in f16 by its stmatrix.trans stores, bitwise the host's
 * rounding of the D the device returned; A MN-major in both orders of the
 * descriptor's LBO / SBO (tb4w's must match; the line says which does).
 * Returns whether D matched. */
static bool check_n32_once(q35_suite *s, int tnsp_a, int swap, bool must)
{
    double *a64, *b64;
    uint16_t *a = random_f16(64 * 64, &a64), *bt = random_f16(32 * 64, &b64); /* A [m][k], B^T [n][k] */
    double *ref = ref_product(a64, 64, 1, b64, 1, 64, 64, 32, 64);
    uint16_t *da = to_device(a, 64 * 64), *db = to_device(bt, 32 * 64), *ddt = q35_gpu_bytes(32 * 64 * 2);
    float *dd = q35_gpu_floats(64 * 32);
    q35_error err = {{0}};
    q35_gpu_ok(q35_probe_wgmma_n32(dd, ddt, da, db, tnsp_a, swap, &err), &err);
    float *d = q35_gpu_to_host(dd, 64 * 32);
    char what[120];
    snprintf(what, sizeof what, "wgmma SS m64n32k16, A %s, B K-major (tb4w's products)",
             !tnsp_a ? "K-major" : swap ? "MN-major, LBO 1 KiB, SBO 8 KiB (the other order)"
                                        : "MN-major, LBO 8 KiB, SBO 1 KiB (tb4w's)");
    const bool ok = check(s, what, d, ref, 64, 32, must);
    if (must) {
        uint16_t img[32 * 64];
        q35_gpu_download(img, ddt, sizeof img);
        int64_t bad = 0;
        for (int n = 0; n < 32; n++)
            for (int m = 0; m < 64; m++)
                bad += img[q35_probe_sw128(n, m) / 2] != q35_f32_to_f16(d[m * 32 + n]);
        q35_case(s, bad == 0, "stmatrix.trans of the m64n32 accumulator (tb4w's w_store_t): D^T [32][64] in f16, "
                 "%lld of 2048 wrong", (long long)bad);
    }
    free(d), free(a), free(bt), free(a64), free(b64), free(ref);
    q35_gpu_free(da), q35_gpu_free(db), q35_gpu_free(ddt), q35_gpu_free(dd);
    return ok;
}

static void check_n32(q35_suite *s)
{
    check_n32_once(s, 0, 0, true);
    const bool ok = check_n32_once(s, 1, 0, false), other = check_n32_once(s, 1, 1, false);
    q35_case(s, ok, "wgmma SS m64n32k16 A MN-major: tb4w's order (LBO 8 KiB, SBO 1 KiB) %s; the other %s%s",
             ok ? "matches" : "does NOT match", other ? "matches" : "does not",
             !ok && other ? " -> build with -DQ35_TBW_MN_LBO=1024u -DQ35_TBW_MN_SBO=8192u" : "");
}

/* 4: a TMA box at (x, y) of a [rows][ld] tensor, bitwise. */
static void check_tma(q35_suite *s, int64_t rows, int64_t ld, int x, int y)
{
    double *w;
    uint16_t *src = random_f16(rows * ld, &w);
    uint16_t *dsrc = to_device(src, rows * ld), *dimg = q35_gpu_bytes(4096 * 2);
    q35_error err = {{0}};
    q35_gpu_ok(q35_probe_tma(dimg, dsrc, rows, ld, x, y, &err), &err);
    uint16_t img[4096];
    q35_gpu_download(img, dimg, sizeof img);
    int64_t bad = 0, first = -1;
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 64; c++) {
            const uint16_t want = y + r < rows && x + c < ld ? src[(y + r) * ld + x + c] : 0;
            if (img[q35_probe_sw128(r, c) / 2] != want && bad++ == 0)
                first = r * 64 + c;
        }
    q35_case(s, bad == 0, "TMA box 64x64 at (%d, %d) of [%lld][%lld], 128-byte swizzle: %s%lld wrong%s", x, y,
             (long long)rows, (long long)ld, bad ? "" : "bitwise, ", (long long)bad,
             bad ? " (first at the element printed below)" : "");
    if (bad) {
        const int r = (int)(first / 64), c = (int)(first % 64);
        printf("      first wrong element (%d, %d): image holds 0x%04x, want 0x%04x\n", r, c,
               img[q35_probe_sw128(r, c) / 2],
               y + r < rows && x + c < ld ? (unsigned)src[(y + r) * ld + x + c] : 0u);
    }
    free(src), free(w);
    q35_gpu_free(dsrc), q35_gpu_free(dimg);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "sm_90a probes: wgmma SS / RS, TMA", &g_rng);
    if (skip)
        return skip;
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        printf("FAIL  cannot read the device's compute capability\n");
        return 1;
    }
    if (major != 9 || minor != 0 || !q35_attention_flash_sm90_built()) {
        printf("SKIP  the probes need an sm_90 device (this is %d.%d) and a build with sm_90a code (%s)\n", major,
               minor, q35_attention_flash_sm90_built() ? "built" : "not built: Q35_SM90 off");
        return Q35_TEST_SKIP;
    }
    check_ss(&s, 16, 0);
    check_ss(&s, 64, 0);
    check_ss(&s, 256, 0);
    check_rs(&s, 0);
    check_tma(&s, 100, 264, 64, 0);
    check_tma(&s, 100, 264, 128, 64); /* rows 100 .. 127 past the tensor: zeros */
    check_ss(&s, 256, 1);            /* the kernel's S: K by TMA */
    check_rs(&s, 1);                 /* the kernel's O += P V: V by TMA */
    check_n32(&s);                   /* 6: the chunked delta rule's tb4w: its products, K read MN-major, its stores */
    return q35_suite_end(&s);
}
