/* The GEMV straight from the quantized blocks (kernels/gemv.h).
 *
 * A warp owns NR output rows and R activation rows. The units of a weight row
 * (kernels/dequant.cuh: 16 or 32 elements, a lane's share of bytes) go to the
 * lanes in turn: lane l takes units l, l + 32, l + 64, ... Each lane keeps one
 * accumulator per (activation row, output row) and adds its units' products in
 * that order, element by element (one fused multiply-add each, the weight decoded
 * bit for bit as the CPU dequantizer decodes it); then a fixed butterfly over the
 * 32 lanes. That order depends on k and the type alone, so any (NR, R, U) tiling
 * gives every output the same bits: the per-token form (R = 1, NR = 4, U = 2
 * units in flight per lane and row) and the rows form (R = 8, NR = 2, the weight
 * rows read once per tile of 8 activation rows) agree bitwise.
 *
 * Bytes: the weight as stored, 16-byte loads where a unit is 16-byte aligned
 * (F32, F16, BF16, Q4_K, Q5_K on a 16-byte aligned weight with 16-byte rows),
 * 2-byte loads otherwise; x through the read-only cache, 16-byte loads when
 * aligned. */
#include "kernels/dequant.cuh"
#include "kernels/gemv.h"
#include "kernels/linear_args.cuh"
#include "kernels/reduce.cuh"

#include <cuda_runtime.h>

namespace {

constexpr int kWarps = 4; /* warps per block */
/* Per token: output rows per warp; 2 for the types whose units take the most
 * registers (Q5_K, Q6_K: 4 would spill at 128 registers). */
template <int TYPE>
constexpr int kTokenRows = TYPE == Q35_TYPE_Q5_K || TYPE == Q35_TYPE_Q6_K ? 2 : 4;
constexpr int kTileRows = 8, kTileOutRows = 2;  /* rows form: activation rows per tile, output rows per warp */
constexpr int64_t kMaxGridY = 65535;
/* Blocks per SM the registers must allow: per token 4 (16 warps, <= 128 registers:
 * loads in flight), a tile of rows 2 (<= 255 registers: the rows' activations). */
constexpr int kTokenMinBlocks = 4, kTileMinBlocks = 2;

/* v[j] = p[j] for j < count, else 0: four 16-byte loads when vec and the run is whole. */
__device__ __forceinline__ void load_x16(float (&v)[16], const float *p, bool vec, int count)
{
    if (vec && count == 16) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float4 a = __ldg(reinterpret_cast<const float4 *>(p) + i);
            v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < 16; j++)
        v[j] = j < count ? __ldg(p + j) : 0.0f;
}

/* y[t][o] = sum_i x[t][i] W[o][i] for the R rows t0.. of blockIdx.x and the NR
 * rows o0.. of this warp (rows past T or n are computed on the last row and not
 * written). vec_w: the units 16-byte aligned; vec_x: x's rows 16-byte aligned.
 * One token (R = 1): x's run loaded once, each row's run decoded and used at
 * once. A tile of rows: the NR rows' runs decoded once, used by the R rows. */
template <int TYPE, int NR, int R>
__global__ void __launch_bounds__(kWarps * 32, R == 1 ? kTokenMinBlocks : kTileMinBlocks)
    gemv_kernel(float *y, int64_t ldy, const uint8_t *w, int64_t row_bytes, int64_t n, int64_t k, const float *x,
                int64_t T, bool vec_w, bool vec_x)
{
    using Unit = q35_unit<TYPE>;
    static_assert(NR * R <= 32, "one lane stores each output");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t o0 = ((int64_t)blockIdx.y * kWarps + warp) * NR, t0 = (int64_t)blockIdx.x * R;
    if (o0 >= n)
        return; /* the whole warp */
    const int64_t units = (k + Unit::elems - 1) / Unit::elems;
    const uint8_t *wrow = w + o0 * row_bytes;
    const float *xrow = x + t0 * k;
    const int last_i = (int)(n - 1 - o0), last_t = (int)(T - 1 - t0); /* the last valid row of each */
    float acc[R][NR];
#pragma unroll
    for (int t = 0; t < R; t++)
#pragma unroll
        for (int i = 0; i < NR; i++)
            acc[t][i] = 0.0f;

    for (int64_t u = lane; u < units; u += 32) {
        const int64_t left = k - u * Unit::elems;
        const int count = left < Unit::elems ? (int)left : Unit::elems; /* below 16 only in a plain row's last unit */
        typename Unit::raw raw[NR];
#pragma unroll
        for (int i = 0; i < NR; i++) /* every row's load first: NR units in flight */
            Unit::load(raw[i], wrow + (i < last_i ? i : last_i) * row_bytes, u, vec_w, count);
#pragma unroll
        for (int run = 0; run < Unit::runs; run++) {
            const int64_t e = Unit::run_elem(u, run);
            if constexpr (R == 1) {
                float xv[16];
                load_x16(xv, xrow + e, vec_x, count);
#pragma unroll
                for (int i = 0; i < NR; i++) {
                    float wv[16];
                    Unit::decode(raw[i], u, run, wv);
#pragma unroll
                    for (int j = 0; j < 16; j++)
                        acc[0][i] = __fmaf_rn(xv[j], wv[j], acc[0][i]);
                }
            } else {
                float wv[NR][16];
#pragma unroll
                for (int i = 0; i < NR; i++)
                    Unit::decode(raw[i], u, run, wv[i]);
#pragma unroll
                for (int t = 0; t < R; t++) {
                    float xv[16];
                    load_x16(xv, xrow + (t < last_t ? t : last_t) * k + e, vec_x, count);
#pragma unroll
                    for (int i = 0; i < NR; i++)
#pragma unroll
                        for (int j = 0; j < 16; j++)
                            acc[t][i] = __fmaf_rn(xv[j], wv[i][j], acc[t][i]);
                }
            }
        }
    }
#pragma unroll
    for (int t = 0; t < R; t++)
#pragma unroll
        for (int i = 0; i < NR; i++) {
            const float s = q35_group_sum<32>(acc[t][i]);
            if (lane == t * NR + i && t <= last_t && i <= last_i)
                y[(t0 + t) * ldy + o0 + i] = s;
        }
}

template <int TYPE, int NR, int R>
int launch(const char *who, float *y, int64_t ldy, const void *w, int64_t n, int64_t k, const float *x, int64_t T,
           q35_stream stream, q35_error *err)
{
    const int64_t row_bytes = (int64_t)q35_row_bytes(TYPE, k);
    const bool vec_w = q35_unit<TYPE>::wide && (uintptr_t)w % 16 == 0 && row_bytes % 16 == 0;
    const bool vec_x = (uintptr_t)x % 16 == 0 && k % 4 == 0;
    const dim3 grid((unsigned)((T + R - 1) / R), (unsigned)((n + NR * kWarps - 1) / (NR * kWarps)));
    gemv_kernel<TYPE, NR, R><<<grid, kWarps * 32, 0, stream>>>(y, ldy, static_cast<const uint8_t *>(w), row_bytes,
                                                                  n, k, x, T, vec_w, vec_x);
    return Q35_LAUNCH_CHECK(who, err);
}

int gemv(const char *who, float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x,
         int64_t T, q35_stream stream, q35_error *err)
{
    /* grid.y counts blocks of output rows (the same limit for both forms); grid.x tiles of rows */
    const int64_t n_max = kMaxGridY * kWarps * 2; /* both forms have 2 output rows a warp at least */
    if (q35_check_weight(who, type, n, 1, n_max, k, err) ||
        q35_check_rows(who, n, T, (int64_t)INT32_MAX * kTileRows, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    return q35_type_dispatch(type, [&](auto tc) {
        constexpr int TYPE = decltype(tc)::value;
        return T == 1 ? launch<TYPE, kTokenRows<TYPE>, 1>(who, y, ldy, w, n, k, x, T, stream, err)
                      : launch<TYPE, kTileOutRows, kTileRows>(who, y, ldy, w, n, k, x, T, stream, err);
    });
}

} // namespace

int q35_gemv(float *y, const void *w, q35_type type, int64_t n, int64_t k, const float *x, q35_stream stream,
             q35_error *err)
{
    return gemv("gemv", y, n, w, type, n, k, x, 1, stream, err);
}

int q35_gemv_rows(float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int64_t T,
                  q35_stream stream, q35_error *err)
{
    return gemv("gemv_rows", y, ldy, w, type, n, k, x, T, stream, err);
}
