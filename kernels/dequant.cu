/* Dequantization of a weight on the device (kernels/dequant.h). The rows of a
 * weight are contiguous and whole blocks, so the weight is one stream of units
 * (kernels/dequant.cuh): a warp decodes 32 consecutive units (512 or 1024
 * consecutive elements) into shared memory, then writes that span out with
 * 16-byte stores, coalesced. Bytes: the weight as stored read once, the output
 * written once; one warp per span, no grid loop. */
#include "kernels/dequant_units.cuh"
#include "kernels/dequant.h"
#include "kernels/linear_args.cuh"

#include <cuda_runtime.h>

namespace {

constexpr int kWarps = 8; /* warps (spans) per block */

/* Two floats rounded to f16 (to nearest even), a the low half. */
__device__ __forceinline__ uint32_t half_pair(float a, float b)
{
    return (uint32_t)__half_as_ushort(__float2half_rn(a)) | ((uint32_t)__half_as_ushort(__float2half_rn(b)) << 16);
}

/* Where element p of a span sits in its warp's stage: p's 4-float group within
 * its 32-float row (one pass over the 32 banks) XOR-swizzled by the row, so the
 * 16-byte stores of 8 lanes (a phase) hit 32 different banks for every unit
 * layout (16-element units, 32-element ones, the K-quants' interleaved runs):
 * 4 phases a store, not 8-16 (bank conflicts that held dequant_f16 below the
 * copy bandwidth). The 16-byte reads of the write-out stay conflict-free. */
__device__ __forceinline__ int stage_at(int p)
{
    const int r = p >> 5;
    return p ^ (((r ^ ((r >> 1) & 3)) & 7) << 2);
}

/* y[e] = element e of the stream w of `total` elements (f32, or f16 when HALF).
 * vec_w: w 16-byte aligned; vec_y: y 16-byte aligned. */
template <int TYPE, bool HALF>
__global__ void __launch_bounds__(kWarps * 32)
    dequant_kernel(void *y, const uint8_t *w, int64_t total, bool vec_w, bool vec_y)
{
    using U = q35_unit<TYPE>;
    constexpr int span = 32 * U::elems;
    __shared__ __align__(16) float stage[kWarps][span];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t e0 = ((int64_t)blockIdx.x * kWarps + warp) * span;
    if (e0 >= total)
        return; /* the whole warp */
    float *st = stage[warp];
    const int64_t u = e0 / U::elems + lane;
    if (u * U::elems < total) {
        typename U::raw r;
        const int64_t left = total - u * U::elems;
        U::load(r, w, u, vec_w, left < U::elems ? (int)left : U::elems);
#pragma unroll
        for (int run = 0; run < U::runs; run++) {
            float v[16];
            q35_unit_decode<U>(r, u, run, v);
            const int at = (int)(U::run_elem(u, run) - e0);
#pragma unroll
            for (int i = 0; i < 4; i++)
                *reinterpret_cast<float4 *>(st + stage_at(at + 4 * i)) =
                    make_float4(v[4 * i], v[4 * i + 1], v[4 * i + 2], v[4 * i + 3]);
        }
    }
    __syncwarp();
    const int n = total - e0 < span ? (int)(total - e0) : span;
    if (HALF) {
        uint16_t *yh = static_cast<uint16_t *>(y) + e0;
        int i = 0;
        if (vec_y) {
            for (int c = lane; c < n / 8; c += 32) {
                const float4 a = *reinterpret_cast<const float4 *>(st + stage_at(8 * c));
                const float4 b = *reinterpret_cast<const float4 *>(st + stage_at(8 * c + 4));
                reinterpret_cast<uint4 *>(yh)[c] =
                    make_uint4(half_pair(a.x, a.y), half_pair(a.z, a.w), half_pair(b.x, b.y), half_pair(b.z, b.w));
            }
            i = n / 8 * 8;
        }
        for (i += lane; i < n; i += 32)
            yh[i] = __half_as_ushort(__float2half_rn(st[stage_at(i)]));
    } else {
        float *yf = static_cast<float *>(y) + e0;
        int i = 0;
        if (vec_y) {
            for (int c = lane; c < n / 4; c += 32)
                reinterpret_cast<float4 *>(yf)[c] = *reinterpret_cast<const float4 *>(st + stage_at(4 * c));
            i = n / 4 * 4;
        }
        for (i += lane; i < n; i += 32)
            yf[i] = st[stage_at(i)];
    }
}

template <bool HALF>
int dequant(const char *who, void *y, const void *w, q35_type type, int64_t rows, int64_t cols, q35_stream stream,
            q35_error *err)
{
    if (q35_check_weight(who, type, rows, 0, cols > 0 ? INT64_MAX / 4 / cols : 0, cols, err))
        return -1;
    const int64_t total = rows * cols;
    if (total == 0)
        return 0;
    return q35_type_dispatch(type, [&](auto tc) {
        constexpr int TYPE = decltype(tc)::value;
        using U = q35_unit<TYPE>;
        const int64_t spans = (total + 32 * U::elems - 1) / (32 * U::elems);
        const int64_t blocks = (spans + kWarps - 1) / kWarps;
        if (blocks > INT32_MAX)
            return q35_fail(err, "%s: %lld elements (want fewer than %lld)", who, (long long)total,
                            (long long)INT32_MAX * kWarps * 32 * U::elems);
        const bool vec_w = U::wide && (uintptr_t)w % 16 == 0, vec_y = (uintptr_t)y % 16 == 0;
        dequant_kernel<TYPE, HALF><<<(unsigned)blocks, kWarps * 32, 0, stream>>>(y, static_cast<const uint8_t *>(w),
                                                                                total, vec_w, vec_y);
        return Q35_LAUNCH_CHECK(who, err);
    });
}

} // namespace

int q35_dequant_f32(float *y, const void *w, q35_type type, int64_t rows, int64_t cols, q35_stream stream,
                    q35_error *err)
{
    return dequant<false>("dequant_f32", y, w, type, rows, cols, stream, err);
}

int q35_dequant_f16(uint16_t *y, const void *w, q35_type type, int64_t rows, int64_t cols, q35_stream stream,
                    q35_error *err)
{
    return dequant<true>("dequant_f16", y, w, type, rows, cols, stream, err);
}
