/* A GEMV launch's weights side by side (kernels/gemv.h's groups; a lone
 * weight is one part), shared by the GEMV kernels (gemv.cu, gemv_q8.cu). */
#ifndef Q35_KERNELS_GEMV_PARTS_CUH
#define Q35_KERNELS_GEMV_PARTS_CUH

#include "kernels/cuda.h"
#include "kernels/gemv.h"
#include "kernels/linear_args.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

/* A named namespace, not an anonymous one: q35_gemv_q8_impl (gemv_q8.cuh)
 * holds kernels of gemv_parts and goes from one translation unit (an
 * experiment's table) to another (the launcher), so its type must be one. */
namespace q35_gemv_kernels {

/* The weights one launch computes, side by side (q35_gemv_group; a lone
 * weight is one part): every part of the same type and k, read against the
 * same x. Part p's rows are the warps' row groups g[p] .. g[p + 1] - 1 of NR
 * rows, its last group's rows past n[p] computed on its last row and not
 * written. */
constexpr int kMaxParts = Q35_GEMV_GROUP_MAX;
struct gemv_parts {
    const uint8_t *w[kMaxParts];
    float *y[kMaxParts];
    int64_t n[kMaxParts];
    int64_t g[kMaxParts + 1]; /* each part's first group, then the total */
    int count;
    bool add; /* every y += its product (y + p, once), not y = p: the 8-bit GEMV's q35_gemv_q8_add */
};

/* Row group gi of the parts: its first row's bytes, its first output, the
 * index of its last valid row (0 .. NR - 1). Static indices only (the
 * parameter arrays stay in the constant bank). */
struct gemv_group {
    const uint8_t *w;
    float *y;
    int last;
};

template <int NR>
__device__ __forceinline__ gemv_group locate(const gemv_parts &P, int64_t gi, int64_t row_bytes)
{
    const uint8_t *w = P.w[0];
    float *y = P.y[0];
    int64_t n = P.n[0], g0 = 0;
#pragma unroll
    for (int i = 1; i < kMaxParts; i++)
        if (i < P.count && gi >= P.g[i])
            w = P.w[i], y = P.y[i], n = P.n[i], g0 = P.g[i];
    const int64_t r0 = (gi - g0) * NR, left = n - 1 - r0;
    return {w + r0 * row_bytes, y + r0, (int)(left < NR - 1 ? left : NR - 1)};
}

/* The parts' row groups of NR rows (g[], the total last). */
template <int NR>
gemv_parts with_groups(gemv_parts P)
{
    P.g[0] = 0;
    for (int i = 0; i < P.count; i++)
        P.g[i + 1] = P.g[i] + (P.n[i] + NR - 1) / NR;
    return P;
}

/* Whether every part's weight is 16-byte aligned (its rows of whole 16 bytes besides: the caller). */
inline bool parts_aligned16(const gemv_parts &P)
{
    for (int i = 0; i < P.count; i++)
        if ((uintptr_t)P.w[i] % 16 != 0)
            return false;
    return true;
}

/* The rows a launch's parts may hold together: q35_gemv's n limit
 * (kernels/gemv.h: 65535 blocks of 4 warps of 2 rows at least). */
constexpr int64_t kGemvMaxRows = 65535LL * 4 * 2;

/* Each part a weight of `type` with k inputs and 1 .. kGemvMaxRows rows, the
 * parts' rows summed within it; -1 naming the first that is not. */
inline int check_parts(const char *who, const gemv_parts &P, q35_type type, int64_t k, q35_error *err)
{
    int64_t rows = 0;
    for (int i = 0; i < P.count; i++) {
        if (q35_check_weight(who, type, P.n[i], 1, kGemvMaxRows - rows, k, err))
            return -1;
        rows += P.n[i];
    }
    return 0;
}

/* One weight as the parts of a launch. */
inline gemv_parts one_part(float *y, const void *w, int64_t n)
{
    gemv_parts P = {};
    P.w[0] = static_cast<const uint8_t *>(w), P.y[0] = y, P.n[0] = n, P.count = 1;
    return P;
}

/* *blocks: the blocks of `kernel` (blocks of `threads`) the current device
 * holds at once, its SMs times the blocks an SM holds (at least one an SM):
 * a resident grid's size, whose warps take the row groups in turn. */
template <class K>
inline int resident_blocks(K kernel, int threads, int64_t *blocks, q35_error *err)
{
    int dev = 0, sms = 0, per_sm = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err) ||
        Q35_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0), err))
        return -1;
    *blocks = (int64_t)sms * (per_sm > 0 ? per_sm : 1);
    return 0;
}

/* q35_gemv_part[] as a launch's parts: 1 .. kMaxParts of them, each of `type`; -1 naming what is wrong. */
inline int parts_of(const char *who, const q35_gemv_part *parts, int count, q35_type type, gemv_parts *P,
                    q35_error *err)
{
    if (count < 1 || count > kMaxParts || !parts)
        return q35_fail(err, "%s: %d parts (want 1 .. %d)", who, count, kMaxParts);
    *P = gemv_parts{};
    for (int i = 0; i < count; i++) {
        if (parts[i].type != type)
            return q35_fail(err, "%s: part %d is %s, the group %s (one type a launch)", who, i,
                            q35_type_name(parts[i].type), q35_type_name(type));
        P->w[i] = static_cast<const uint8_t *>(parts[i].w), P->y[i] = parts[i].y, P->n[i] = parts[i].n;
    }
    P->count = count;
    return 0;
}

} // namespace q35_gemv_kernels

using namespace q35_gemv_kernels;

#endif /* Q35_KERNELS_GEMV_PARTS_CUH */
