/* The 8-bit-activation GEMV's product kernels (kernels/gemv_q8.h), shared by
 * its production variant (kernels/gemv_q8.cu) and its experiments
 * (kernels/experiments/gemv_q8.cu).
 *
 * A warp owns NR output rows of a launch's parts (kernels/gemv_parts.cuh); the
 * row's units (64 elements of a K-quant: a group of its super-block, two
 * activation blocks; 32 of Q8_0: one block) go to the lanes in turn (lane l:
 * units l, l + 32, ...). A lane loads its unit's activation blocks once
 * (16-byte loads) and every row's unit bytes, then per row and sub-block the
 * integer sum of level x activation with dp4a (4 products an instruction,
 * exact in int32), and one f32 multiply-add of it by (the sub-block's scale)
 * x d, and for Q4_K/Q5_K one of the block's s by the sub-block's min. The
 * lanes' sums then a fixed butterfly. Per unit's element that is a quarter of
 * a dp4a and a share of a mask and a shift: the bytes of the weight bound it,
 * not the issue rate (kernels/gemv.cu's f32 form spends three instructions an
 * element). */
#ifndef Q35_KERNELS_GEMV_Q8_CUH
#define Q35_KERNELS_GEMV_Q8_CUH

#include "kernels/cluster_launch.cuh"
#include "kernels/dequant.cuh"
#include "kernels/dequant_units.cuh"
#include "kernels/gemv_parts.cuh"
#include "kernels/gemv_q8.h"
#include "kernels/gemv_ring.cuh"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh"

#include <cuda_runtime.h>
#include <type_traits>

namespace q35_gemv_kernels {
/* A variant's kernels, by type (q8_type_at: Q4_K, Q5_K, Q6_K, Q8_0), plain and
 * launched early; NR rows a group; resident[t]: the plain kernel takes the
 * resident grid (gemv_q8_kernel_persist), not a warp a group (an early form
 * that is the plain kernel too); ring[t] (or
 * null): the kernel, plain and early, where the weight and its rows are
 * 16-byte aligned (gemv_q8_kernel_ring: the resident grid). One type in
 * every translation unit (an experiment's table hands it to the launcher). */
using q8_kernel_fn = void (*)(gemv_parts, int64_t, int64_t, const int8_t *, const float *, const float *);
struct q35_gemv_q8_impl {
    int nr;
    q8_kernel_fn plain[4], early[4];
    bool resident[4];
    q8_kernel_fn ring[4];
};
} // namespace q35_gemv_kernels

namespace {

constexpr int kQ8Warps = 4; /* warps per block */

/* ---- the units ---- */

/* The activations a lane holds for a unit: NB blocks of 8 words, their d and s. */
template <int NB>
struct xblocks {
    int w[NB][8];
    float d[NB], s[NB];
};

template <int NB>
__device__ __forceinline__ void load_x(xblocks<NB> &xb, const int8_t *q, const float *d, const float *s,
                                       const int64_t (&blk)[NB])
{
#pragma unroll
    for (int i = 0; i < NB; i++) {
        const int4 *p = reinterpret_cast<const int4 *>(q + 32 * blk[i]);
        const int4 a = __ldg(p), b = __ldg(p + 1);
        xb.w[i][0] = a.x, xb.w[i][1] = a.y, xb.w[i][2] = a.z, xb.w[i][3] = a.w;
        xb.w[i][4] = b.x, xb.w[i][5] = b.y, xb.w[i][6] = b.z, xb.w[i][7] = b.w;
        xb.d[i] = __ldg(d + blk[i]), xb.s[i] = __ldg(s + blk[i]);
    }
}

/* sum over i < N of dp4a(a[i], b[i]): exact in int32. */
template <int N>
__device__ __forceinline__ int dot_words(const uint32_t *a, const int *b)
{
    int acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++)
        acc = __dp4a((int)a[i], b[i], acc);
    return acc;
}

template <int TYPE>
struct q8_unit;

/* Q4_K, Q5_K: unit u = group g = u % 4 of super-block u / 4 (64 elements:
 * sub-blocks 2g, low nibbles of qs[32g ..], and 2g + 1, high nibbles; Q5_K's
 * fifth bit is bit 2g (2g + 1) of qh[l]); activation blocks 2u, 2u + 1. */
template <bool FIFTH>
struct q8_k_unit {
    static constexpr int elems = 64, nb = 2, block_bytes = FIFTH ? 176 : 144, qs_at = FIFTH ? 48 : 16;
    struct raw {
        uint32_t h[4];  /* d | dmin << 16, the 12 scale bytes */
        uint32_t q[8];  /* qs[32g .. 32g + 31] */
        uint32_t qh[8]; /* Q5_K: qh[0 .. 31] */
    };
    static __device__ __forceinline__ void blocks(int64_t u, int64_t (&blk)[2]) { blk[0] = 2 * u, blk[1] = 2 * u + 1; }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u)
    {
        const uint8_t *b = row + block_bytes * (u >> 2);
        q35_ld_words(r.h, b, true);
        q35_ld_words(r.q, b + qs_at + 32 * (u & 3), true);
        if (FIFTH)
            q35_ld_words(r.qh, b + 16, true);
    }
    static __device__ __forceinline__ float dot(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        const int g = (int)(u & 3);
        uint32_t sc, m;
        q35_dev_k_scales(r.h[1], r.h[2], r.h[3], g >= 2, &sc, &m);
        const float d = q35_dev_f16((uint16_t)r.h[0]), dmin = q35_dev_f16((uint16_t)(r.h[0] >> 16));
#pragma unroll
        for (int half = 0; half < 2; half++) { /* sub-block 2g + half */
            const int sb = 2 * g + half;
            uint32_t lv[8];
#pragma unroll
            for (int i = 0; i < 8; i++) {
                lv[i] = (r.q[i] >> (4 * half)) & 0x0F0F0F0Fu;
                if (FIFTH)
                    lv[i] |= ((r.qh[i] >> sb) & 0x01010101u) << 4;
            }
            const int sumi = dot_words<8>(lv, x.w[half]);
            float d1, m1;
            q35_dq_k_sub(d, dmin, q35_byte_level<0>(sc, sb & 3), q35_byte_level<0>(m, sb & 3), &d1, &m1);
            acc = __fmaf_rn(__fmul_rn(d1, x.d[half]), (float)sumi, acc);
            acc = __fmaf_rn(-m1, x.s[half], acc);
        }
        return acc;
    }
};

template <>
struct q8_unit<Q35_TYPE_Q4_K> : q8_k_unit<false> {};
template <>
struct q8_unit<Q35_TYPE_Q5_K> : q8_k_unit<true> {};

/* 32 bytes from p (2-byte aligned) as 8 words, the same words as eight
 * q35_ld_u32_2a: five 8-byte loads from p rounded down to 8 (at most 6 bytes
 * before p, 2 after p + 32: within one 8-byte word of a byte read, so within
 * its allocation) and the words realigned by funnel shifts (0 or 16 bits,
 * from word 0 or 1). 5 load instructions against 16. */
__device__ __forceinline__ void ld32_2a_wide(uint32_t (&o)[8], const uint8_t *p)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const uint2 *q = reinterpret_cast<const uint2 *>(a & ~static_cast<uintptr_t>(7));
    uint32_t w[10];
#pragma unroll
    for (int i = 0; i < 5; i++) {
        const uint2 v = __ldg(q + i);
        w[2 * i] = v.x, w[2 * i + 1] = v.y;
    }
    const bool up = (a & 4) != 0;
    const unsigned sh = (unsigned)(a & 2) * 8;
#pragma unroll
    for (int i = 0; i < 8; i++)
        o[i] = __funnelshift_r(up ? w[i + 1] : w[i], up ? w[i + 2] : w[i + 1], sh);
}

/* Q6_K: unit u = pair qp = u % 2 of half h = (u / 2) % 2 of super-block u / 4
 * (64 elements: quarters qp, the low nibbles of ql[64h + 32qp + l], and qp + 2,
 * their high nibbles; the top two bits at bits 2 quarter of qh[32h + l]; level
 * - 32; scales[8h + 2 quarter + l / 16]); activation blocks 8 (u / 4) + 4h + qp
 * and that + 2. 2-byte aligned blocks of 210: 2-byte loads. */
template <>
struct q8_unit<Q35_TYPE_Q6_K> {
    static constexpr int elems = 64, nb = 2;
    struct raw {
        uint32_t ql[8], qh[8];
        uint32_t sc; /* scales[8h + 2qp .. + 1] (low half) and [8h + 2qp + 4 .. + 5] (high half) */
        uint32_t d;
    };
    static __device__ __forceinline__ void blocks(int64_t u, int64_t (&blk)[2])
    {
        const int64_t b0 = 8 * (u >> 2) + 4 * ((u >> 1) & 1) + (u & 1);
        blk[0] = b0, blk[1] = b0 + 2;
    }
    /* WIDE: ql and qh through ld32_2a_wide (the same words; q8_unit6w) */
    template <bool WIDE = false>
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u)
    {
        const int h = (int)((u >> 1) & 1), qp = (int)(u & 1);
        const uint8_t *b = row + 210 * (u >> 2);
        if (WIDE) {
            ld32_2a_wide(r.ql, b + 64 * h + 32 * qp);
            ld32_2a_wide(r.qh, b + 128 + 32 * h);
        } else {
#pragma unroll
            for (int i = 0; i < 8; i++) {
                r.ql[i] = q35_ld_u32_2a(b + 64 * h + 32 * qp + 4 * i);
                r.qh[i] = q35_ld_u32_2a(b + 128 + 32 * h + 4 * i);
            }
        }
        const unsigned short *sc = reinterpret_cast<const unsigned short *>(b + 192 + 8 * h + 2 * qp);
        r.sc = (uint32_t)__ldg(sc) | ((uint32_t)__ldg(sc + 2) << 16);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b + 208));
    }
    /* The same words from a stage in shared memory (kernels/gemv_ring.cuh)
     * whose unit ul (u % 32) is this one: 8 super-blocks of 210 bytes. */
    static constexpr int stage_bytes = 8 * 210;
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *stage, int ul, int64_t u)
    {
        const int h = (int)((u >> 1) & 1), qp = (int)(u & 1);
        const uint8_t *b = stage + 210 * (ul >> 2);
        q35_ld_words_shared(r.ql, b + 64 * h + 32 * qp); /* reads to b + 131 */
        q35_ld_words_shared(r.qh, b + 128 + 32 * h);     /* to b + 195: within the block */
        const unsigned short *sc = reinterpret_cast<const unsigned short *>(b + 192 + 8 * h + 2 * qp);
        r.sc = (uint32_t)sc[0] | ((uint32_t)sc[2] << 16);
        r.d = *reinterpret_cast<const unsigned short *>(b + 208);
    }
    /* load_shared's words through shared-space loads (ld.shared: a stage's
     * address, not a generic pointer the compiler reads with generic loads) */
    static __device__ __forceinline__ void load_shared_s(raw &r, smem_addr stage, int ul, int64_t u)
    {
        const int h = (int)((u >> 1) & 1), qp = (int)(u & 1);
        const smem_addr b = stage + 210 * (ul >> 2);
        ld_words_smem(r.ql, b + 64 * h + 32 * qp);
        ld_words_smem(r.qh, b + 128 + 32 * h);
        r.sc = ld_u16_smem(b + 192 + 8 * h + 2 * qp) | (ld_u16_smem(b + 196 + 8 * h + 2 * qp) << 16);
        r.d = ld_u16_smem(b + 208);
    }
    /* OFFSET_SUMS: a scale's 16 levels summed as sum_j l_j x_j - 32 sum_j x_j
     * (q8_unit6s), not as sum_j (l_j - 32) x_j with the byte subtraction a
     * word: the same int32, exact either way. */
    template <bool OFFSET_SUMS, bool ONE_SHIFT = false>
    static __device__ __forceinline__ float dot_levels(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        const int qp = (int)(u & 1);
        const float d = q35_dev_f16((uint16_t)r.d);
#pragma unroll
        for (int half = 0; half < 2; half++) { /* quarter qp + 2 half: nibble `half` */
            const int quarter = qp + 2 * half;
            uint32_t lv[8]; /* the levels less 32, or (OFFSET_SUMS) the levels, 0 .. 63 */
#pragma unroll
            for (int i = 0; i < 8; i++) {
                /* a byte's bits 2 quarter, + 1 of qh to its bits 4, 5: ONE_SHIFT one shift
                 * (left 4 - 2 qp, or right 2 qp) and the mask; else right, mask, left */
                uint32_t l;
                if (ONE_SHIFT)
                    l = ((r.ql[i] >> (4 * half)) & 0x0F0F0F0Fu) |
                        ((half == 0 ? r.qh[i] << (4 - 2 * qp) : r.qh[i] >> (2 * qp)) & 0x30303030u);
                else
                    l = ((r.ql[i] >> (4 * half)) & 0x0F0F0F0Fu) | (((r.qh[i] >> (2 * quarter)) & 0x03030303u) << 4);
                lv[i] = OFFSET_SUMS ? l : __vsub4(l, 0x20202020u);
            }
            const int s0 = (int)(int8_t)(r.sc >> (16 * half)), s1 = (int)(int8_t)(r.sc >> (16 * half + 8));
            int isum;
            if (OFFSET_SUMS) {
                const uint32_t ones[4] = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
                isum = s0 * (dot_words<4>(lv, x.w[half]) - 32 * dot_words<4>(ones, x.w[half])) +
                       s1 * (dot_words<4>(lv + 4, x.w[half] + 4) - 32 * dot_words<4>(ones, x.w[half] + 4));
            } else {
                isum = s0 * dot_words<4>(lv, x.w[half]) + s1 * dot_words<4>(lv + 4, x.w[half] + 4);
            }
            acc = __fmaf_rn(__fmul_rn(d, x.d[half]), (float)isum, acc);
        }
        return acc;
    }
    static __device__ __forceinline__ float dot(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        return dot_levels<false>(r, u, x, acc);
    }
};

/* Q6_K with its levels summed as dot_levels<true> does (persist's ring form). */
struct q8_unit6s : q8_unit<Q35_TYPE_Q6_K> {
    static __device__ __forceinline__ float dot(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        return dot_levels<true>(r, u, x, acc);
    }
};

/* q8_unit6s with the one-shift levels and shared-space loads (the experiment
 * persist_y's ring form). */
struct q8_unit6y : q8_unit<Q35_TYPE_Q6_K> {
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *stage, int ul, int64_t u)
    {
        load_shared_s(r, to_smem(const_cast<uint8_t *>(stage)), ul, u);
    }
    static __device__ __forceinline__ float dot(const raw &r, int64_t u, const xblocks<2> &x, float acc)
    {
        return dot_levels<true, true>(r, u, x, acc);
    }
};

/* Q6_K with ql and qh read by ld32_2a_wide (persist's Q6_K form, kernels/gemv_q8.h). */
struct q8_unit6w : q8_unit<Q35_TYPE_Q6_K> {
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u)
    {
        q8_unit<Q35_TYPE_Q6_K>::load<true>(r, row, u);
    }
};

/* Q8_0: unit u = block u (34 bytes: d, then 32 int8; 2-byte aligned), activation block u. */
template <>
struct q8_unit<Q35_TYPE_Q8_0> {
    static constexpr int elems = 32, nb = 1;
    struct raw {
        uint32_t q[8];
        uint32_t d;
    };
    static __device__ __forceinline__ void blocks(int64_t u, int64_t (&blk)[1]) { blk[0] = u; }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u)
    {
        const uint8_t *b = row + 34 * u;
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
#pragma unroll
        for (int i = 0; i < 8; i++)
            r.q[i] = q35_ld_u32_2a(b + 2 + 4 * i);
    }
    /* The same words from a stage (kernels/gemv_ring.cuh): 32 blocks, this one ul. */
    static constexpr int stage_bytes = 32 * 34;
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *stage, int ul, int64_t)
    {
        const uint8_t *b = stage + 34 * ul;
        r.d = *reinterpret_cast<const unsigned short *>(b);
        q35_ld_words_shared(r.q, b + 2); /* reads to b + 37: within the next block or the pitch's 16 */
    }
    static __device__ __forceinline__ float dot(const raw &r, int64_t, const xblocks<1> &x, float acc)
    {
        const int sumi = dot_words<8>(r.q, x.w[0]);
        return __fmaf_rn(__fmul_rn(q35_dev_f16((uint16_t)r.d), x.d[0]), (float)sumi, acc);
    }
};

/* ---- the product ---- */

/* One warp's group gi (NR rows; gemv_parts.cuh): each row's sum over its
 * units in ascending order (a lane units lane, lane + 32, ...), then the same
 * butterfly, whatever NR and UNR (UNR iterations of a lane's units loaded
 * before any is computed), so every variant gives the same bits. */
template <int TYPE, int NR, int UNR, bool W6 = false>
__device__ __forceinline__ void gemv_q8_group(const gemv_parts &P, int64_t gi, int64_t row_bytes, int64_t k,
                                              const int8_t *xq, const float *xd, const float *xs)
{
    static_assert(!W6 || TYPE == Q35_TYPE_Q6_K, "the wide loads are Q6_K's");
    using Unit = typename std::conditional<W6, q8_unit6w, q8_unit<TYPE>>::type;
    constexpr int NB = Unit::nb;
    const int lane = threadIdx.x % 32;
    const gemv_group grp = locate<NR>(P, gi, row_bytes);
    const int64_t units = k / Unit::elems;
    float acc[NR];
#pragma unroll
    for (int i = 0; i < NR; i++)
        acc[i] = 0.0f;
#pragma unroll 1
    for (int64_t u0 = lane; u0 < units; u0 += 32 * UNR) {
        typename Unit::raw raw[UNR][NR];
#pragma unroll
        for (int j = 0; j < UNR; j++) { /* every row's bytes of every iteration first */
            const int64_t u = u0 + 32 * j < units ? u0 + 32 * j : u0;
#pragma unroll
            for (int i = 0; i < NR; i++)
                Unit::load(raw[j][i], grp.w + (i < grp.last ? i : grp.last) * row_bytes, u);
        }
#pragma unroll
        for (int j = 0; j < UNR; j++) {
            const int64_t u = u0 + 32 * j;
            if (j > 0 && u >= units)
                break;
            int64_t blk[NB];
            Unit::blocks(u, blk);
            xblocks<NB> x;
            load_x<NB>(x, xq, xd, xs, blk);
#pragma unroll
            for (int i = 0; i < NR; i++)
                acc[i] = Unit::dot(raw[j][i], u, x, acc[i]);
        }
    }
    group_store<NR>(P, grp, acc);
}

/* A warp a group (gi = its index in the grid). EARLY: launched early
 * (programmatic dependent launch, sm_90): the warp's rows prefetched into L2
 * while the grid before it finishes (they are no output of it), then
 * griddepcontrol.wait before x is read or y written. Either way the grid lets
 * an early one after it start at once. */
template <int TYPE, int NR, bool EARLY, int UNR, bool W6 = false>
__global__ void __launch_bounds__(kQ8Warps * 32)
    gemv_q8_kernel(gemv_parts P, int64_t row_bytes, int64_t k, const int8_t *xq, const float *xd, const float *xs)
{
    q35_grid_launch_dependents();
    if (!EARLY) /* launched early by a graph's programmatic edge (decode-overlap), or plainly: a no-op then */
        q35_grid_dependency_wait();
    const int64_t gi = (int64_t)blockIdx.x * kQ8Warps + threadIdx.x / 32;
    const bool active = gi < P.g[P.count];
    if (EARLY) {
        if (active) {
            const gemv_group g = locate<NR>(P, gi, row_bytes);
            for (int i = 0; i <= g.last; i++)
                for (int64_t at = 128 * (int64_t)(threadIdx.x % 32); at < row_bytes; at += 32 * 128)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(g.w + i * row_bytes + at));
        }
        q35_grid_dependency_wait();
    }
    if (active) /* the whole warp */
        gemv_q8_group<TYPE, NR, UNR, W6>(P, gi, row_bytes, k, xq, xd, xs);
}

/* The resident grid (as many blocks as fit the SMs at once): each warp takes
 * groups gi, gi + the grid's warps, ... It waits for the grid before it
 * first (where launched early; else a no-op) and prefetches nothing, so one
 * kernel serves as the plain and the early form. At least 4 blocks an SM (without a
 * floor the loop's state spills on Q5_K). Not Q6_K: in this loop it spills at
 * any floor, and takes 255 registers without one (kPersists). */
template <int TYPE>
constexpr bool kPersists = TYPE != Q35_TYPE_Q6_K;

template <int TYPE, int NR, int UNR = 1>
__global__ void __launch_bounds__(kQ8Warps * 32, 4)
    gemv_q8_kernel_persist(gemv_parts P, int64_t row_bytes, int64_t k, const int8_t *xq, const float *xd,
                           const float *xs)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    const int64_t groups = P.g[P.count], stride = (int64_t)gridDim.x * kQ8Warps;
#pragma unroll 1
    for (int64_t gi = (int64_t)blockIdx.x * kQ8Warps + threadIdx.x / 32; gi < groups; gi += stride)
        gemv_q8_group<TYPE, NR, UNR>(P, gi, row_bytes, k, xq, xd, xs);
}

/* Q6_K and Q8_0 through the ring (kernels/gemv_ring.cuh): a stage is one
 * pass of the warp's lanes, 32 units a row (Q6_K 8 super-blocks of 210 bytes,
 * Q8_0 32 blocks of 34), copied with coalesced 16-byte loads, where a lane's
 * own 2-byte aligned unit takes narrow loads spread over the warp's bytes
 * (Q6_K 35 a unit); a lane reads its unit's words from the stage (the unit's
 * load_shared: the words load reads) and computes as gemv_q8_group does, units
 * in the same order, so the same bits. The resident grid; it waits for the
 * grid before it first, so one kernel serves as the plain and the early form.
 * The weight and its rows 16-byte aligned, NR rows within an int (the launcher
 * checks). MODE, bits: 1 (persist's form) a pass's x loaded a pass ahead
 * (it depends on the pass alone, not on the group), so its L2 round trip
 * overlaps the wait for the stage, not the compute; Q6_K's levels summed as
 * q8_unit6s does; the ring's producer holding a group's rows (HOLD); without
 * it (the experiment persist_r0) x loaded in its pass, the levels less 32 a
 * byte, the group located at every stage. 2 (the experiment persist_y):
 * Q6_K's q8_unit6y. The same bits in every form. */
constexpr int kQ8RingStages = 3;

template <int TYPE, int NR, int MODE>
__global__ void __launch_bounds__(kQ8Warps * 32, 4)
    gemv_q8_kernel_ring(gemv_parts P, int64_t row_bytes, int64_t k, const int8_t *xq, const float *xd, const float *xs)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    constexpr bool FAST = (MODE & 1) != 0, Q6 = TYPE == Q35_TYPE_Q6_K;
    using Unit = typename std::conditional<Q6 && (MODE & 2), q8_unit6y,
                                           typename std::conditional<Q6 && FAST, q8_unit6s, q8_unit<TYPE>>::type>::type;
    constexpr int NB = Unit::nb;
    using Ring = gemv_ring<NR, kQ8RingStages, Unit::stage_bytes, FAST>;
    __shared__ __align__(16) uint8_t stage[kQ8Warps][Ring::bytes];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t units = k / Unit::elems;
    const int iters = (int)((units + 31) / 32);
    float acc[NR];
#pragma unroll
    for (int i = 0; i < NR; i++)
        acc[i] = 0.0f;
    const auto load_pass = [&](int it, xblocks<NB> &x) { /* x of pass it, where its unit is in the row */
        const int64_t u = 32 * (int64_t)it + lane;
        if (u < units) {
            int64_t blk[NB];
            Unit::blocks(u, blk);
            load_x<NB>(x, xq, xd, xs, blk);
        }
    };
    xblocks<NB> xnext; /* FAST: the next pass's x */
    if (FAST)
        load_pass(0, xnext);
    Ring::run(
        P, row_bytes, stage[warp], iters, (int64_t)blockIdx.x * kQ8Warps + warp, (int64_t)gridDim.x * kQ8Warps,
        [&](const uint8_t *st, int it) {
            const int64_t u = 32 * (int64_t)it + lane;
            xblocks<NB> x;
            if (FAST) {
                x = xnext;
                load_pass(it + 1 == iters ? 0 : it + 1, xnext);
            }
            if (u < units) {
                if (!FAST) {
                    int64_t blk[NB];
                    Unit::blocks(u, blk);
                    load_x<NB>(x, xq, xd, xs, blk);
                }
#pragma unroll
                for (int i = 0; i < NR; i++) {
                    typename Unit::raw r;
                    Unit::load_shared(r, st + i * Ring::pitch, lane, u);
                    acc[i] = Unit::dot(r, u, x, acc[i]);
                }
            }
        },
        [&](int64_t g) { group_store<NR>(P, locate<NR>(P, g, row_bytes), acc); });
}

/* (q35_gemv_q8_impl: above, outside this namespace) */

inline int q8_type_at(q35_type t)
{
    return t == Q35_TYPE_Q4_K ? 0 : t == Q35_TYPE_Q5_K ? 1 : t == Q35_TYPE_Q6_K ? 2 : 3;
}

/* A warp a group: NR rows, UNR iterations in flight. */
template <int NR, int UNR>
q35_gemv_q8_impl q8_warp_impl()
{
    return {NR,
            {gemv_q8_kernel<Q35_TYPE_Q4_K, NR, false, UNR>, gemv_q8_kernel<Q35_TYPE_Q5_K, NR, false, UNR>,
             gemv_q8_kernel<Q35_TYPE_Q6_K, NR, false, UNR>, gemv_q8_kernel<Q35_TYPE_Q8_0, NR, false, UNR>},
            {gemv_q8_kernel<Q35_TYPE_Q4_K, NR, true, UNR>, gemv_q8_kernel<Q35_TYPE_Q5_K, NR, true, UNR>,
             gemv_q8_kernel<Q35_TYPE_Q6_K, NR, true, UNR>, gemv_q8_kernel<Q35_TYPE_Q8_0, NR, true, UNR>},
            {false, false, false, false},
            {nullptr, nullptr, nullptr, nullptr}};
}

/* persist (kernels/gemv_q8.h): the resident grid, 2 rows a group; its Q6_K
 * form (kPersists) rows2's with the wide loads (q8_unit6w); Q6_K and Q8_0
 * through the ring where their rows are 16-byte aligned. Launched early, the
 * same kernels (each waits for the grid before it first and prefetches
 * nothing). */
inline q35_gemv_q8_impl q8_persist_impl()
{
    q35_gemv_q8_impl p = q8_warp_impl<2, 1>();
    p.plain[0] = gemv_q8_kernel_persist<Q35_TYPE_Q4_K, 2>;
    p.plain[1] = gemv_q8_kernel_persist<Q35_TYPE_Q5_K, 2>;
    p.plain[2] = gemv_q8_kernel<Q35_TYPE_Q6_K, 2, false, 1, true>;
    p.plain[3] = gemv_q8_kernel_persist<Q35_TYPE_Q8_0, 2>;
    static_assert(!kPersists<Q35_TYPE_Q6_K>, "Q6_K's persist form is rows2's");
    for (int t = 0; t < 4; t++) {
        p.resident[t] = t != 2;
        p.early[t] = p.plain[t];
    }
    p.ring[2] = gemv_q8_kernel_ring<Q35_TYPE_Q6_K, 2, 1>;
    p.ring[3] = gemv_q8_kernel_ring<Q35_TYPE_Q8_0, 2, 1>;
    return p;
}

/* *early: whether the current device launches grids early (compute capability
 * 9.0+); elsewhere the early forms launch plainly (the same bits). -1 when the
 * device cannot be read. */
inline int q8_early_here(bool *early, q35_error *err)
{
    int dev = 0, major = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), err))
        return -1;
    *early = major >= 9;
    return 0;
}

/* Launches fn (a product kernel) over P's row groups (with_groups applied),
 * x quantized at xq for k inputs: a block kQ8Warps groups, at most the
 * resident grid where `resident`; early: launched early (programmatic
 * dependent launch). -1 naming what failed. */
inline int q8_launch(const char *who, q8_kernel_fn fn, const gemv_parts &P, int64_t row_bytes, int64_t k,
                     const void *xq, bool resident, bool early, q35_stream stream, q35_error *err)
{
    unsigned blocks = (unsigned)((P.g[P.count] + kQ8Warps - 1) / kQ8Warps);
    if (resident) {
        int64_t held = 0;
        if (resident_blocks(fn, kQ8Warps * 32, &held, err))
            return -1;
        blocks = (int64_t)blocks < held ? blocks : (unsigned)held;
    }
    const int8_t *q = static_cast<const int8_t *>(xq);
    const float *d = reinterpret_cast<const float *>(static_cast<const char *>(xq) + q35_gemv_q8_d_at(k));
    const float *s = reinterpret_cast<const float *>(static_cast<const char *>(xq) + q35_gemv_q8_s_at(k));
    q35_cluster_launch l(dim3(blocks), dim3(kQ8Warps * 32), 0, (cudaStream_t)stream, 1);
    if (early)
        l.early();
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, fn, P, row_bytes, k, q, d, s), err))
        return -1;
    return Q35_LAUNCH_CHECK(who, err);
}

} // namespace

/* The experiment variants (kernels/experiments/gemv_q8.cu), where the program
 * links them (kernels/variant.h). */
extern "C" const q35_variant_table q35_gemv_q8_experiments;

#endif /* Q35_KERNELS_GEMV_Q8_CUH */
