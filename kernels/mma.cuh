/* The tensor-core and copy pieces the mma.sync kernels share (the flash
 * attention, the chunked delta rule), as inline PTX: ldmatrix, mma.sync
 * m16n8k16 (f16 inputs, f32 accumulators), shared-memory stores and loads by
 * address, cp.async, named barriers; and the XOR swizzle of f16 rows.
 *
 * Fragments of mma.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"),
 * with g = lane / 4 and q = lane % 4: the accumulators d[0], d[1] are row g,
 * columns 2q, 2q + 1; d[2], d[3] row g + 8, the same columns. ldmatrix .x4
 * loads four 8x8 b16 matrices, lane l giving the address of row l % 8 of
 * matrix l / 8; .trans transposes each. */
#ifndef Q35_KERNELS_MMA_CUH
#define Q35_KERNELS_MMA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

__device__ __forceinline__ void q35_ldsm_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void q35_ldsm_x4_trans(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* d += a b, m16n8k16, f16 inputs, f32 accumulators. */
__device__ __forceinline__ void q35_mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t q35_pack_half2(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const uint32_t *)&h;
}

__device__ __forceinline__ void q35_st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d));
}

__device__ __forceinline__ void q35_st_shared_b32(uint32_t addr, uint32_t a)
{
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(a));
}

__device__ __forceinline__ void q35_st_shared_f32(uint32_t addr, float a)
{
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(a));
}

__device__ __forceinline__ float q35_ld_shared_f32(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
    return v;
}

__device__ __forceinline__ uint32_t q35_ld_shared_b32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}

__device__ __forceinline__ float4 q35_ld_shared_f4(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr));
    return v;
}

__device__ __forceinline__ uint4 q35_ld_shared_u4(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

/* Stores 8 floats (a, b) rounded to f16 as one 16-byte chunk. */
__device__ __forceinline__ void q35_st_shared_f16x8(uint32_t addr, float4 a, float4 b)
{
    q35_st_shared_v4(addr, q35_pack_half2(a.x, a.y), q35_pack_half2(a.z, a.w), q35_pack_half2(b.x, b.y),
                     q35_pack_half2(b.z, b.w));
}

/* 16 bytes global -> shared, L2 only; the bytes past src_bytes (0 or 16) are zeros. */
__device__ __forceinline__ void q35_cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void q35_cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/* Waits until at most N of this thread's committed groups are pending. */
template <int N>
__device__ __forceinline__ void q35_cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

/* A barrier of `threads` threads (whole warps) on hardware barrier id (1..15;
 * 0 is __syncthreads'). */
__device__ __forceinline__ void q35_bar_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* This thread's arrival at barrier id without waiting (the producer side of a
 * q35_bar_sync over `threads`: its shared-memory writes before it are seen by
 * the threads that sync there). */
__device__ __forceinline__ void q35_bar_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}


/* Byte offset of 16-byte chunk c of row `row` in a swizzled f16 array of NC
 * chunks (8 NC halves) a row, NC in {4, 8, 16, 32}: the chunk index is XORed with
 * the row's place among the 8 rows an ldmatrix phase reads (rows that share a
 * 128-byte line count once), so those rows, and the 8 chunks of a 16-byte store
 * phase, fall in 8 different bank groups. */
template <int NC>
__device__ __forceinline__ uint32_t q35_swz_rows(int row, int c)
{
    static_assert(NC == 4 || NC == 8 || NC == 16 || NC == 32, "4, 8, 16 or 32 chunks a row");
    constexpr int SHARE = NC >= 8 ? 1 : 8 / NC; /* rows of one 128-byte line */
    constexpr int MASK = NC >= 8 ? 7 : NC - 1;
    return (uint32_t)(row * NC * 16 + ((c ^ ((row / SHARE) & MASK)) << 4));
}

/* A dense row-major tile of ROWS x NC 16-byte chunks at src into the
 * q35_swz_rows<NC> tile at dst, by THREADS threads (tid), cp.async: thread
 * tid takes chunk tid + THREADS i. A pass covers THREADS / NC rows, a
 * multiple of the swizzle's 8-row period, so a thread's chunk column and XOR
 * stay the same from pass to pass and its offsets are its first one plus
 * THREADS x 16 bytes a pass: computed once, not per chunk (the loop's trip
 * count a constant, so it unrolls whole). BOUND: rows `rows` .. ROWS - 1 are
 * zero-filled instead of read (src's rows past it need not exist). */
template <int NC, int ROWS, int THREADS, bool BOUND = false>
__device__ __forceinline__ void q35_cp_tile_swz(uint32_t dst, const void *src, int tid, int rows = ROWS)
{
    static_assert(THREADS % NC == 0 && (THREADS / NC) % 8 == 0 && (ROWS * NC) % THREADS == 0,
                  "whole passes of whole 8-row swizzle periods");
    const uint32_t d0 = dst + q35_swz_rows<NC>(tid / NC, tid % NC);
    const char *s0 = reinterpret_cast<const char *>(src) + tid * 16;
#pragma unroll
    for (int i = 0; i < ROWS * NC / THREADS; i++) {
        const bool in = !BOUND || tid / NC + i * (THREADS / NC) < rows;
        q35_cp_async16(d0 + i * THREADS * 16, in ? s0 + i * THREADS * 16 : src, in ? 16 : 0);
    }
}

/* Byte offset of element (row, col) of the same array. */
template <int NC>
__device__ __forceinline__ uint32_t q35_swz_at(int row, int col)
{
    return q35_swz_rows<NC>(row, col / 8) + (uint32_t)(col % 8) * 2;
}

#endif /* Q35_KERNELS_MMA_CUH */
