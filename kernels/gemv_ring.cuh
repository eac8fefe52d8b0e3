/* A warp's stream of weight rows through shared memory, shared by the staged
 * GEMVs (kernels/gemv.cu's staged variant, the 8-bit GEMV's Q6_K form in
 * kernels/gemv_q8.cuh).
 *
 * Each warp owns a ring of S stages; a stage is SEG bytes of each of NR
 * weight rows (a row group, kernels/gemv_parts.cuh), copied by the warp's 32
 * lanes with coalesced 16-byte cp.async (no register holds them in flight),
 * S - 1 stages in flight while the warp computes one. A warp runs groups
 * first, first + warps, ... (a grid of at most the resident blocks), its
 * stages in one stream across the groups, so the copies of the next group
 * overlap the last stages of this one. The rows and the weight must be
 * 16-byte aligned (the launcher checks: parts_aligned16, row_bytes % 16) and
 * NR rows fit an int. */
#ifndef Q35_KERNELS_GEMV_RING_CUH
#define Q35_KERNELS_GEMV_RING_CUH

#include "kernels/gemv_parts.cuh"
#include "kernels/reduce.cuh"

#include <cuda_runtime.h>
#include <string.h>

namespace {

/* cp.async (sm_80+): 16 bytes global -> shared without a register; groups
 * committed and waited for by the issuing thread (__syncwarp then shows them to
 * the warp). A host compilation (never run by the project) copies at once. */
#ifdef __CUDA_ARCH__
using smem_addr = uint32_t; /* a shared-space address, computed once */
__device__ __forceinline__ smem_addr to_smem(void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void cp_async16(smem_addr smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem), "l"(gmem) : "memory");
}
#else
using smem_addr = uint8_t *;
__device__ __forceinline__ smem_addr to_smem(void *p)
{
    return static_cast<uint8_t *>(p);
}
__device__ __forceinline__ void cp_async16(smem_addr smem, const void *gmem)
{
    memcpy(smem, gmem, 16);
}
#endif

/* Reads through a shared-space address: a 2-byte word, and N words from a
 * 2-byte aligned address (N + 1 aligned 4-byte loads, realigned by funnel
 * shifts, as q35_ld_words_shared). */
__device__ __forceinline__ uint32_t ld_u16_smem(smem_addr a)
{
#ifdef __CUDA_ARCH__
    unsigned short v;
    asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(a));
    return v;
#else
    unsigned short v;
    memcpy(&v, a, 2);
    return v;
#endif
}
template <int N>
__device__ __forceinline__ void ld_words_smem(uint32_t (&w)[N], smem_addr p)
{
#ifdef __CUDA_ARCH__
    const uint32_t a = p & ~3u, sh = 8 * (p & 3u);
    uint32_t v[N + 1];
#pragma unroll
    for (int i = 0; i <= N; i++)
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v[i]) : "r"(a + 4 * i));
#pragma unroll
    for (int i = 0; i < N; i++)
        w[i] = __funnelshift_r(v[i], v[i + 1], sh);
#else
    memcpy(w, p, 4 * N);
#endif
}

__device__ __forceinline__ void cp_async_commit()
{
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

template <int PENDING> /* all but the newest PENDING groups landed */
__device__ __forceinline__ void cp_async_wait()
{
#ifdef __CUDA_ARCH__
    asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
#endif
}

/* A row group's outputs (grp: located, gemv_parts.cuh) from each lane's NR
 * partial sums: each row's sum over the 32 lanes (the fixed butterfly), lane
 * i writing row i's (y = sum, or y + sum, one f32 add, where P.add), rows past
 * the part's n not written; the partial sums then 0 for the next group. */
template <int NR>
__device__ __forceinline__ void group_store(const gemv_parts &P, const gemv_group &grp, float (&acc)[NR])
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < NR; i++) {
        const float sum = q35_group_sum<32>(acc[i]);
        if (lane == i && i <= grp.last)
            grp.y[i] = P.add ? __fadd_rn(grp.y[i], sum) : sum;
        acc[i] = 0.0f;
    }
}

/* The ring: NR rows, S stages of SEG bytes a row; a stage's row i at
 * stage + i * pitch (+ 16: the word past a 2-byte aligned read there).
 * HOLD: the producer locates a group at its first stage and keeps its rows'
 * start (else it locates the group at every stage); the same copies. */
template <int NR, int S, int SEG, bool HOLD = false>
struct gemv_ring {
    static constexpr int pitch = SEG + 16, bytes = S * NR * pitch;
    static constexpr int pieces = SEG / 16, rounds = (pieces + 31) / 32; /* 16-byte pieces of a row's stage */
    static_assert(SEG % 16 == 0, "stages of whole 16-byte pieces");

    /* This warp's groups first, first + warps, ... through `ring` (its
     * `bytes`, 16-byte aligned), `iters` stages a group: for each stage
     * consume(stage, it) (every lane; the stage's copies landed and seen by
     * the warp), after a group's last finish(g). */
    template <class Consume, class Finish>
    static __device__ __forceinline__ void run(const gemv_parts &P, int64_t row_bytes, uint8_t *ring, int iters,
                                               int64_t first, int64_t warps, Consume consume, Finish finish)
    {
        const int lane = threadIdx.x % 32;
        const int64_t groups = P.g[P.count];
        int64_t pg = first; /* the producer: the next stage to copy, (group, stage of it) */
        int pit = 0;
        const uint8_t *pw = nullptr; /* the producer's group, located at its first stage */
        int last = 0;                /* its rows past the part's n: its last */
        const smem_addr base = to_smem(ring);
        const int rb = (int)row_bytes;
        const auto issue = [&](int slot) {
            if (pg < groups) {
                const int off = pit * SEG, len = rb - off < SEG ? rb - off : SEG;
                if (!HOLD || pit == 0) {
                    const gemv_group pgrp = locate<NR>(P, pg, row_bytes);
                    pw = pgrp.w, last = pgrp.last;
                }
                const uint8_t *src = pw + off;
                const smem_addr dst = base + slot * (NR * pitch);
#pragma unroll
                for (int i = 0; i < NR; i++) { /* row i's pieces lane, lane + 32, ... */
                    const uint8_t *srow = src + (i < last ? i : last) * rb;
#pragma unroll
                    for (int r = 0; r < rounds; r++) {
                        const int b = 16 * (lane + 32 * r);
                        if ((32 * r + 32 <= pieces || lane + 32 * r < pieces) && b < len)
                            cp_async16(dst + i * pitch + b, srow + b);
                    }
                }
                if (++pit == iters)
                    pit = 0, pg += warps;
            }
            cp_async_commit(); /* empty past the last stage: the count of groups stays uniform */
        };
#pragma unroll
        for (int s = 0; s < S - 1; s++)
            issue(s);
        int slot = 0, it = 0;
#pragma unroll 1
        for (int64_t g = first; g < groups;) {
            __syncwarp(); /* every lane done with the slot issue() refills (read last time round) */
            issue(slot == 0 ? S - 1 : slot - 1);
            cp_async_wait<S - 1>(); /* this lane's copies of this slot landed */
            __syncwarp();           /* and every lane's */
            consume(static_cast<const uint8_t *>(ring + slot * (NR * pitch)), it);
            if (++it == iters) {
                finish(g);
                it = 0, g += warps;
            }
            slot = slot == S - 1 ? 0 : slot + 1;
        }
        cp_async_wait<0>();
    }
};

} // namespace

#endif /* Q35_KERNELS_GEMV_RING_CUH */
