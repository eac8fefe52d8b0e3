/* The pieces the flash attention kernel (kernels/attention_flash.cu) is built
 * from, past the PTX of kernels/mma.cuh: the swizzled f16 row layout of its
 * 256-wide tiles, and the K/V feed: units of 16 cache
 * rows of 256 f32 values reach shared memory as f16 in one of two stagings,
 *   q35_flash_regs    LDG into registers, convert, store: DEPTH units in
 *                     flight, 8 floats a 32-byte chunk, 512 / THREADS chunks
 *                     (rounded up) a thread;
 *   q35_flash_ring    cp.async (16 bytes, .cg: L2 only) of the raw f32 rows into
 *                     a ring of DEPTH 16 KiB slots, then each thread converts
 *                     the very chunks it copied (so a wait_group, no barrier,
 *                     makes them visible to it) into the f16 tile;
 * both zero the rows at or past n_ctx (the cache rows there may be anything);
 * q35_flash_feed puts them in order. */
#ifndef Q35_KERNELS_FLASH_FRAG_CUH
#define Q35_KERNELS_FLASH_FRAG_CUH

#include "kernels/mma.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define Q35_FLASH_HD 256                        /* head_dim */
#define Q35_FLASH_ROW_BYTES (Q35_FLASH_HD * 2)  /* one f16 row of a Q, K or V tile */
#define Q35_FLASH_UNIT 16                       /* cache rows per staged unit */
#define Q35_FLASH_UNIT_CHUNKS (Q35_FLASH_UNIT * Q35_FLASH_HD / 8) /* its 32-byte f32 chunks (8 floats) */
#define Q35_FLASH_UNIT_BYTES (Q35_FLASH_UNIT * Q35_FLASH_HD * 4)  /* its f32 bytes: one ring slot */

/* Byte offset of 16-byte chunk c of row `row` in a swizzled [rows][256] f16
 * array (kernels/mma.cuh): a step of whole 8-chunk groups (128 bytes) or of 8
 * rows commutes with it. */
__device__ __forceinline__ uint32_t q35_swz(int row, int c)
{
    return q35_swz_rows<Q35_FLASH_HD / 8>(row, c);
}

/* Staging through registers: DEPTH buffers of a unit's chunks (chunk index
 * threadIdx.x + THREADS * i: row index / 32, 8-float column index % 32). */
template <int THREADS, int DEPTH>
struct q35_flash_regs {
    static constexpr int N = (Q35_FLASH_UNIT_CHUNKS + THREADS - 1) / THREADS;
    float4 lo[DEPTH][N], hi[DEPTH][N];

    /* Loads rows p0..p0+15 of the cache column base (row stride ld) into buffer
     * b; rows at or past n_ctx read as zeros. */
    __device__ __forceinline__ void fetch(int b, const float *base, int64_t ld, int p0, int n_ctx)
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            lo[b][i] = hi[b][i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (idx < Q35_FLASH_UNIT_CHUNKS && p0 + idx / 32 < n_ctx) {
                const float4 *src = (const float4 *)(base + (p0 + idx / 32) * ld + (idx % 32) * 8);
                lo[b][i] = __ldg(src);
                hi[b][i] = __ldg(src + 1);
            }
        }
    }
    __device__ __forceinline__ void commit(void) {}

    /* Rounds buffer b to f16 into rows row0..row0+15 of the swizzled tile at
     * shared address tile. */
    __device__ __forceinline__ void put(int b, uint32_t tile, int row0)
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (idx < Q35_FLASH_UNIT_CHUNKS)
                q35_st_shared_f16x8(tile + q35_swz(row0 + idx / 32, idx % 32), lo[b][i], hi[b][i]);
        }
    }
};

/* Staging through a cp.async ring of DEPTH slots at shared address ring. A
 * slot holds chunk idx's two 16-byte halves at idx * 16 and 8 KiB + idx * 16
 * (a warp's 32 lanes read 512 consecutive bytes: no bank conflicts). Every
 * fetch commits one group, empty or not, so put can wait for "all but the
 * newest DEPTH - 1". */
template <int THREADS, int DEPTH>
struct q35_flash_ring {
    static constexpr int N = (Q35_FLASH_UNIT_CHUNKS + THREADS - 1) / THREADS;
    static constexpr bool EVEN = Q35_FLASH_UNIT_CHUNKS % THREADS == 0; /* every idx below is a chunk */
    uint32_t ring;

    __device__ __forceinline__ void fetch(int b, const float *base, int64_t ld, int p0, int n_ctx)
    {
        const uint32_t slot = ring + (uint32_t)b * Q35_FLASH_UNIT_BYTES;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (EVEN || idx < Q35_FLASH_UNIT_CHUNKS) {
                const bool in = p0 + idx / 32 < n_ctx;
                const float *src = in ? base + (p0 + idx / 32) * ld + (idx % 32) * 8 : base;
                q35_cp_async16(slot + idx * 16, src, in ? 16 : 0);
                q35_cp_async16(slot + Q35_FLASH_UNIT_BYTES / 2 + idx * 16, src + (in ? 4 : 0), in ? 16 : 0);
            }
        }
    }
    __device__ __forceinline__ void commit(void) { q35_cp_async_commit(); }

    __device__ __forceinline__ void put(int b, uint32_t tile, int row0)
    {
        const uint32_t slot = ring + (uint32_t)b * Q35_FLASH_UNIT_BYTES;
        q35_cp_async_wait<DEPTH - 1>();
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (EVEN || idx < Q35_FLASH_UNIT_CHUNKS)
                q35_st_shared_f16x8(tile + q35_swz(row0 + idx / 32, idx % 32), q35_ld_shared_f4(slot + idx * 16),
                                    q35_ld_shared_f4(slot + Q35_FLASH_UNIT_BYTES / 2 + idx * 16));
        }
    }
};

/* The K/V feed of a block: units of 16 cache rows in the order K(j) V(j)
 * K(j + SPLIT) V(j + SPLIT) ..., DEPTH of them in flight in the staging's
 * buffers (unit i in buffer i % DEPTH; a tile's 2 N / 16 units are a multiple of
 * DEPTH, so the buffer is known where each put is written). */
template <class Stage, int N, int SPLIT, int DEPTH>
struct q35_flash_feed {
    static constexpr int NU = N / Q35_FLASH_UNIT; /* units of K (or V) per tile */
    static_assert(2 * NU % DEPTH == 0 && DEPTH <= 2 * NU, "a tile's units fill the buffers evenly");
    Stage st;
    const float *kc, *vc; /* the KV head's column of each cache */
    int64_t ld;
    int n_ctx, n_tiles;
    uint32_t sK, sV;

    /* Loads unit u of K (kind 0) or V (1) of tile j into buffer b when j is one
     * of the block's tiles; commits a group (ring) either way. */
    __device__ __forceinline__ void fetch(int b, int kind, int j, int u)
    {
        if (j < n_tiles)
            st.fetch(b, kind ? vc : kc, ld, j * N + Q35_FLASH_UNIT * u, n_ctx);
        st.commit();
    }
    /* The first DEPTH units from tile j on. */
    __device__ __forceinline__ void start(int j)
    {
#pragma unroll
        for (int i = 0; i < DEPTH; i++)
            fetch(i, i / NU, j, i % NU);
    }
    /* Unit u of K or V of tile j into its shared tile as f16 (when j is one of
     * the block's tiles), then the unit DEPTH places further on into the buffer
     * it leaves. */
    __device__ __forceinline__ void advance(int kind, int u, int j)
    {
        const int i = NU * kind + u, b = i % DEPTH, ahead = i + DEPTH;
        if (j < n_tiles)
            st.put(b, kind ? sV : sK, Q35_FLASH_UNIT * u);
        fetch(b, ahead / NU % 2, j + ahead / (2 * NU) * SPLIT, ahead % NU);
    }
};

#endif /* Q35_KERNELS_FLASH_FRAG_CUH */
