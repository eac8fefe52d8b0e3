/* The 8-bit-activation GEMV on Q6_K rows in q6a order
 * (kernels/experiments/gemv_q8_q6a.h): gemv_q8's persist kernel
 * (kernels/gemv_q8.cuh: the resident grid, 2 rows a warp's group) with Q6_K's
 * unit read from the q6a order, and the host's reordering. */
#include "kernels/experiments/gemv_q8_q6a.h"

#include "kernels/gemv_q8.cuh"
#include "kernels/linear_args.cuh"

#include <cuda_runtime.h>
#include <string.h>

namespace {

constexpr int kQ6A = 1006;                       /* q8_unit's key for the q6a order (no q35_type) */
constexpr int kRun = 8, kRunBytes = kRun * 210; /* a run: 8 super-blocks, 1680 bytes */
constexpr int kBlockBytes = 208;                /* a block without d: ql 128, qh 64, scales 16 */

/* Q6_K's unit (q8_unit<Q35_TYPE_Q6_K>: the same elements, activation blocks
 * and sums) read from the q6a order: super-block u / 4 is block j = (u / 4) % 8
 * of its run, at 208 j, its d at 1664 + 2 j; ql and qh 16-byte loads, the
 * scales one 8-byte load. */
template <>
struct q8_unit<kQ6A> : q8_unit<Q35_TYPE_Q6_K> {
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u)
    {
        const int64_t sb = u >> 2;
        const int h = (int)((u >> 1) & 1), qp = (int)(u & 1), j = (int)(sb % kRun);
        const uint8_t *run = row + kRunBytes * (sb / kRun), *b = run + kBlockBytes * j;
        q35_ld_words(r.ql, b + 64 * h + 32 * qp, true);
        q35_ld_words(r.qh, b + 128 + 32 * h, true);
        const uint2 sc = __ldg(reinterpret_cast<const uint2 *>(b + 192 + 8 * h)); /* scales[8h .. 8h + 7] */
        r.sc = __byte_perm(sc.x, sc.y, qp ? 0x7632 : 0x5410); /* [8h + 2qp, + 1] low, [8h + 2qp + 4, + 5] high */
        r.d = __ldg(reinterpret_cast<const unsigned short *>(run + kRun * kBlockBytes) + j);
    }
    static __device__ __forceinline__ float dot(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        return dot_levels<true>(r, u, x, acc);
    }
};

} // namespace

int q35_q6a_order(void *dst, const void *src, int64_t n, int64_t k, q35_error *err)
{
    if (k < 2048 || k % 2048 != 0 || n < 1)
        return q35_fail(err, "q6a_order: %lld rows of k = %lld (want k a positive multiple of 2048, rows >= 1)",
                        (long long)n, (long long)k);
    const int64_t runs = n * (k / 256 / kRun);
    uint8_t *o = static_cast<uint8_t *>(dst);
    const uint8_t *s = static_cast<const uint8_t *>(src);
    for (int64_t r = 0; r < runs; r++, o += kRunBytes, s += kRunBytes)
        for (int j = 0; j < kRun; j++) {
            memcpy(o + kBlockBytes * j, s + 210 * j, kBlockBytes);
            memcpy(o + kRun * kBlockBytes + 2 * j, s + 210 * j + kBlockBytes, 2);
        }
    return 0;
}

int q35_gemv_q8_q6a(float *y, const void *w, int64_t n, int64_t k, const void *xq, bool early, q35_stream stream,
                    q35_error *err)
{
    const char *who = "gemv_q8_q6a";
    if (k < 2048 || k % 2048 != 0)
        return q35_fail(err, "%s: k = %lld (want a positive multiple of 2048: whole runs of 8 super-blocks)", who,
                        (long long)k);
    gemv_parts P = one_part(y, w, n);
    if (check_parts(who, P, Q35_TYPE_Q6_K, k, err))
        return -1;
    if ((uintptr_t)w % 16 != 0 || (uintptr_t)xq % 16 != 0)
        return q35_fail(err, "%s: the weight at %p, the quantized x at %p (want both 16-byte aligned)", who, w, xq);
    bool here = false;
    if (early && q8_early_here(&here, err))
        return -1;
    return q8_launch(who, gemv_q8_kernel_persist<kQ6A, 2>, with_groups<2>(P), (int64_t)q35_row_bytes(Q35_TYPE_Q6_K, k),
                     k, xq, true, early && here, stream, err);
}
