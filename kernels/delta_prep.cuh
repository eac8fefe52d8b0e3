/* The DeltaNet prologue in one pass (kernels/delta_prep.h): its kernel, its
 * checks and its launch, for the units' launchers (kernels/delta_prep.cu) and
 * the experiment that picks how many tiles a warp takes
 * (kernels/experiments/delta_prep.h); the per-element code is the unfused
 * units' own (kernels/conv1d.cuh, norm_kernels.cuh, gates.cuh), so are the
 * bits. */
#ifndef Q35_KERNELS_DELTA_PREP_CUH
#define Q35_KERNELS_DELTA_PREP_CUH

#include "kernels/conv1d.cuh"
#include "kernels/delta_prep.h"
#include "kernels/gates.cuh"
#include "kernels/norm_kernels.cuh"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define PREP_R 8        /* rows a tile: a warp's, or a step of its run */
#define PREP_WARPS 4    /* a block's warps: consecutive tiles of one group */
#define PREP_THREADS (32 * PREP_WARPS)
#define PREP_MAX_DK Q35_DELTA_PREP_MAX_DK /* the header's limits: a quad a lane of a warp */
#define PREP_MAX_HEADS Q35_DELTA_PREP_MAX_HEADS
#define PREP_MAX_CONV_DIM Q35_DELTA_PREP_MAX_CONV_DIM
static_assert(Q35_DELTA_PREP_MAX_K == Q35_CONV_MAX_K, "the header's K limit is conv1d's");

/* Only the first tile reaches back into the window; a head is one quad a lane, as l2norm_rows sums it. */
static_assert(PREP_R >= Q35_CONV_MAX_K - 1, "a tile's halo lies in the tile before it");
static_assert(PREP_MAX_DK == 4 * 32 && PREP_MAX_DK <= Q35_NORM_WARP_MAX_N, "l2norm_rows's warp a head, lane l quad l");

/* Quad c .. c+3 of token s's inputs: its row of mix, or for s < 0 (the first
 * K-1 rows) the window's slot K-1+s of each channel. */
template <int K>
__device__ __forceinline__ float4 q35_prep_input_quad(const float *mix, int64_t in_stride, const float *win, int64_t c,
                                                      int64_t s)
{
    if (s >= 0)
        return *(const float4 *)(mix + s * in_stride + c);
    const float *w = win + c * (K - 1) + (K - 1) + s;
    return make_float4(w[0], w[K - 1], w[2 * (K - 1)], w[3 * (K - 1)]);
}

/* Block (x, tile): x < groups, channels [x dk, x dk + dk) of rows tb ..
 * tb + PREP_WARPS PREP_R RUN - 1, warp w the RUN tiles of PREP_R rows from
 * tb + w PREP_R RUN (a q/k head where x < qk_heads); x = groups (the last),
 * the gates of the block's rows. tb = PREP_WARPS PREP_R RUN (blockIdx.y +
 * gridDim.y blockIdx.z). A warp's tiles in turn, the next tile's rows loaded
 * before the current one is computed (in flight under its arithmetic), a
 * tile's halo the last K-1 rows of the tile before, still in registers; the
 * same arithmetic, so the same bits, whatever RUN. QK16: the q/k heads as f16
 * to q16 (x < qk_heads / 2) or k16 in chunk layout (the header's), not to out. */
template <int K, bool QK16, int RUN, bool FAST>
__global__ void __launch_bounds__(PREP_THREADS)
    q35_delta_prep_kernel(float *out, int64_t out_stride, __half *q16, __half *k16, float *g, float *beta, float *win,
                          const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                          const float *dt, const float *a, int64_t conv_dim, int dk, int qk_heads, int hv, int64_t T,
                          float eps)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    constexpr int ROWS = PREP_WARPS * PREP_R * RUN; /* a block's */
    const int64_t tb = (blockIdx.y + (int64_t)gridDim.y * blockIdx.z) * ROWS;
    if (tb >= T)
        return;
    if (blockIdx.x == gridDim.x - 1) {
        const int rows = (int)min((int64_t)ROWS, T - tb);
        for (int e = threadIdx.x; e < rows * hv; e += PREP_THREADS) {
            const int r = e / hv, j = e - r * hv;
            const int64_t t = tb + r;
            const float *m = mix + t * in_stride;
            g[t * hv + j] = q35_gate_decay(m[alpha_col + j], dt[j], a[j]);
            beta[t * hv + j] = q35_sigmoid(m[b_col + j]);
        }
        return;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t t0 = tb + (int64_t)warp * PREP_R * RUN;
    if (t0 >= T)
        return; /* whole warps only: the head's sum below takes every lane */
    const int64_t c0 = (int64_t)blockIdx.x * dk;
    const int nq = (int)min((int64_t)dk, conv_dim - c0) / 4; /* the group's quads: dk / 4 but in the last */
    const bool mine = lane < nq, head = (int)blockIdx.x < qk_heads;
    const int64_t c = c0 + 4 * (mine ? lane : 0); /* the lane's first channel */

    /* the inputs of the first tile's rows, oldest first: tokens t0 - (K-1) .. t0 + PREP_R - 1, each channel apart */
    constexpr int NX = PREP_R + K - 1;
    float xx[NX], xy[NX], xz[NX], xw[NX];
#pragma unroll
    for (int i = 0; i < NX; i++) {
        const int64_t s = t0 - (K - 1) + i;
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (mine && s < T)
            v = q35_prep_input_quad<K>(mix, in_stride, win, c, s);
        xx[i] = v.x, xy[i] = v.y, xz[i] = v.z, xw[i] = v.w;
    }
    float wx[K], wy[K], wz[K], ww[K]; /* the taps of the lane's channels c .. c + 3 */
    const float *wl = conv_w + c * K;
#pragma unroll
    for (int j = 0; j < K; j++) {
        wx[j] = mine ? wl[j] : 0.0f;
        wy[j] = mine ? wl[K + j] : 0.0f;
        wz[j] = mine ? wl[2 * K + j] : 0.0f;
        ww[j] = mine ? wl[3 * K + j] : 0.0f;
    }
    if (t0 == 0 && mine) /* the old window is in registers, and no other warp reads it: move it on */
        for (int q = 0; q < 4; q++)
            q35_conv1d_window_advance(win + (c + q) * (K - 1), mix + c + q, in_stride, K, T);

#pragma unroll
    for (int it = 0; it < RUN; it++) {
        const int64_t tt = t0 + (int64_t)it * PREP_R; /* this tile's first row */
        if (tt >= T)
            break; /* the same for every lane of the warp */
        float4 nx[RUN > 1 ? PREP_R : 1]; /* the next tile's rows, loading while this one computes */
        if (it + 1 < RUN) {
#pragma unroll
            for (int i = 0; i < PREP_R; i++) {
                const int64_t s = tt + PREP_R + i;
                nx[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                if (mine && s < T)
                    nx[i] = *(const float4 *)(mix + s * in_stride + c);
            }
        }
#pragma unroll
        for (int r = 0; r < PREP_R; r++) {
            if (tt + r >= T)
                break; /* the same for every lane of the warp */
            float4 y = make_float4(0.0f, 0.0f, 0.0f, 0.0f); /* past the group: zeros, as l2norm_rows pads a head */
            if (mine)
                y = make_float4(q35_conv1d_silu_out<K, FAST>(xx + r, wx), q35_conv1d_silu_out<K, FAST>(xy + r, wy),
                                q35_conv1d_silu_out<K, FAST>(xz + r, wz), q35_conv1d_silu_out<K, FAST>(xw + r, ww));
            if (head) {
                const float inv = q35_l2_head_inv_warp(y, eps);
                y = make_float4(q35_norm_out<Q35_NORM_L2>(y.x, inv, 0.0f, 0.0f),
                                q35_norm_out<Q35_NORM_L2>(y.y, inv, 0.0f, 0.0f),
                                q35_norm_out<Q35_NORM_L2>(y.z, inv, 0.0f, 0.0f),
                                q35_norm_out<Q35_NORM_L2>(y.w, inv, 0.0f, 0.0f));
            }
            if (QK16 && head) {
                if (mine) { /* round to nearest, as the chunked rule's parallel pass rounds the f32 row */
                    const int64_t t = tt + r, rows = Q35_DELTA_PREP_QK16_ROWS;
                    const int hk = qk_heads / 2, x = (int)blockIdx.x, h = x < hk ? x : x - hk;
                    __half *dst = (x < hk ? q16 : k16) + ((t / rows * hk + h) * rows + t % rows) * dk + 4 * lane;
                    const __half2 lo = __floats2half2_rn(y.x, y.y), hi = __floats2half2_rn(y.z, y.w);
                    *(uint2 *)dst = make_uint2(*(const uint32_t *)&lo, *(const uint32_t *)&hi);
                }
            } else if (mine) {
                *(float4 *)(out + (tt + r) * out_stride + c) = y;
            }
        }
        if (it + 1 < RUN) { /* the next tile's inputs: this tile's last K-1 rows (its halo), then its own */
#pragma unroll
            for (int i = 0; i < K - 1; i++)
                xx[i] = xx[PREP_R + i], xy[i] = xy[PREP_R + i], xz[i] = xz[PREP_R + i], xw[i] = xw[PREP_R + i];
#pragma unroll
            for (int i = 0; i < PREP_R; i++)
                xx[K - 1 + i] = nx[i].x, xy[K - 1 + i] = nx[i].y, xz[K - 1 + i] = nx[i].z, xw[K - 1 + i] = nx[i].w;
        }
    }
}

typedef void (*q35_prep_kernel_fn)(float *, int64_t, __half *, __half *, float *, float *, float *, const float *,
                                   int64_t, int64_t, int64_t, const float *, const float *, const float *, int64_t, int,
                                   int, int, int64_t, float);

/* Tiles a warp: 1 (the units', run 0), PREP_RUN (the experiment's run 1, slower:
 * kernels/experiments/delta_prep.h) for K up to PREP_RUN_MAX_K, past which its registers spill. */
#define PREP_RUN 4
#define PREP_RUN_MAX_K 5
#define PREP_KRUN(K, RUN) ((K) <= PREP_RUN_MAX_K ? (RUN) : 1)

/* The kernel of each K, 2 .. Q35_CONV_MAX_K, at RUN tiles a warp, FAST its conv's SiLU in the fast form
 * (q35_silu_fast): [qk16][K], qk16 0 out in f32, 1 the q/k heads in f16 (QK16). Instantiated where a launcher
 * takes them (prep_launch<RUN, FAST>): the units' TU holds RUN 1, FAST false only. */
#define PREP_KERNELS(qk16, RUN, FAST)                                                                                  \
    {                                                                                                                  \
        nullptr, nullptr, q35_delta_prep_kernel<2, qk16, PREP_KRUN(2, RUN), FAST>,                                     \
            q35_delta_prep_kernel<3, qk16, PREP_KRUN(3, RUN), FAST>,                                                   \
            q35_delta_prep_kernel<4, qk16, PREP_KRUN(4, RUN), FAST>,                                                   \
            q35_delta_prep_kernel<5, qk16, PREP_KRUN(5, RUN), FAST>,                                                   \
            q35_delta_prep_kernel<6, qk16, PREP_KRUN(6, RUN), FAST>,                                                   \
            q35_delta_prep_kernel<7, qk16, PREP_KRUN(7, RUN), FAST>,                                                   \
            q35_delta_prep_kernel<8, qk16, PREP_KRUN(8, RUN), FAST>,                                                   \
    }
template <int RUN, bool FAST> struct q35_prep_table {
    static constexpr q35_prep_kernel_fn k[2][Q35_CONV_MAX_K + 1] = {PREP_KERNELS(false, RUN, FAST),
                                                                    PREP_KERNELS(true, RUN, FAST)};
};

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* 0 when the sizes, strides, columns and pointers fit; else -1 naming the first that does not. */
static int prep_check(int64_t out_stride, const float *out, const float *mix, int64_t in_stride, int64_t alpha_col,
                      int64_t b_col, q35_delta_prep_dims d, int64_t T, q35_error *err)
{
    if (d.K < 2 || d.K > Q35_CONV_MAX_K)
        return q35_fail(err, "delta_prep_rows: K = %d (want 2..%d)", d.K, Q35_CONV_MAX_K);
    if (d.dk < 4 || d.dk > PREP_MAX_DK || d.dk % 4)
        return q35_fail(err, "delta_prep_rows: dk = %lld (want a multiple of 4 in 4..%d)", (long long)d.dk,
                        PREP_MAX_DK);
    if (d.hk < 1 || d.hk > PREP_MAX_HEADS || d.hv < 1 || d.hv > PREP_MAX_HEADS)
        return q35_fail(err, "delta_prep_rows: hk = %lld, hv = %lld (want each in 1..%d)", (long long)d.hk,
                        (long long)d.hv, PREP_MAX_HEADS);
    if (d.conv_dim % 4 || d.conv_dim < 2 * d.hk * d.dk || d.conv_dim > PREP_MAX_CONV_DIM)
        return q35_fail(err, "delta_prep_rows: conv_dim = %lld (want a multiple of 4 in 2*hk*dk = %lld..%d)",
                        (long long)d.conv_dim, (long long)(2 * d.hk * d.dk), PREP_MAX_CONV_DIM);
    if (in_stride % 4 || in_stride < d.conv_dim || out_stride % 4 || out_stride < d.conv_dim)
        return q35_fail(err, "delta_prep_rows: strides in %lld, out %lld (want multiples of 4, >= conv_dim = %lld)",
                        (long long)in_stride, (long long)out_stride, (long long)d.conv_dim);
    if (!aligned16(mix) || !aligned16(out))
        return q35_fail(err, "delta_prep_rows: mix %p and out %p must be 16-byte aligned", (const void *)mix,
                        (const void *)out);
    if (alpha_col < 0 || alpha_col > in_stride - d.hv || b_col < 0 || b_col > in_stride - d.hv)
        return q35_fail(err, "delta_prep_rows: alpha_col = %lld, b_col = %lld (want each in 0..in_stride - hv = %lld)",
                        (long long)alpha_col, (long long)b_col, (long long)(in_stride - d.hv));
    if (T < 0)
        return q35_fail(err, "delta_prep_rows: T = %lld (want >= 0)", (long long)T);
    return 0;
}

/* Both forms' launch at RUN tiles a warp (1: the units'; PREP_RUN: the experiment's) and FAST (false: the units';
 * true: the experiment's fast SiLU): qk16 and k16 NULL (out whole, f32) or both set. */
template <int RUN, bool FAST = false>
static int prep_launch(float *out, int64_t out_stride, uint16_t *q16, uint16_t *k16, float *g, float *beta, float *win,
                       const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                       const float *dt, const float *a, q35_delta_prep_dims d, int64_t T, float eps,
                       q35_stream stream, q35_error *err)
{
    if (prep_check(out_stride, out, mix, in_stride, alpha_col, b_col, d, T, err))
        return -1;
    if (T == 0)
        return 0;
    const int64_t groups = (d.conv_dim + d.dk - 1) / d.dk;
    const int64_t block_rows = (int64_t)PREP_WARPS * PREP_R * PREP_KRUN(d.K, RUN);
    const int64_t tiles = (T + block_rows - 1) / block_rows;
    const unsigned ty = tiles > 65535 ? 65535 : (unsigned)tiles, tz = (unsigned)((tiles + ty - 1) / ty);
    const dim3 grid((unsigned)groups + 1, ty, tz);
    q35_prep_table<RUN, FAST>::k[q16 != nullptr][d.K]<<<grid, PREP_THREADS, 0, stream>>>(
        out, out_stride, reinterpret_cast<__half *>(q16), reinterpret_cast<__half *>(k16), g, beta, win, mix,
        in_stride, alpha_col, b_col, conv_w, dt, a, d.conv_dim, (int)d.dk, (int)(2 * d.hk), (int)d.hv, T, eps);
    return Q35_LAUNCH_CHECK(q16 ? "delta_prep_rows_qk16" : "delta_prep_rows", err);
}

#endif /* Q35_KERNELS_DELTA_PREP_CUH */
