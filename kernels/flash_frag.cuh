/* The pieces the flash attention kernel (kernels/attention_flash.cu) is built
 * from, past the PTX of kernels/mma.cuh: the swizzled f16 row layout of its
 * 256-wide tiles, and the K/V feed: units of 16 cache rows of 256 values (f32,
 * or f16 from an f16 cache: the cache element C, float or __half) reach shared
 * memory as f16 in one of two stagings,
 *   q35_flash_regs    LDG into registers, (f32: convert,) store: DEPTH units in
 *                     flight, a chunk of 8 values (32 bytes f32, 16 f16),
 *                     512 / THREADS chunks (rounded up) a thread;
 *   q35_flash_ring    cp.async (16 bytes, .cg: L2 only) of the raw rows into
 *                     a ring of DEPTH 16 KiB slots (an f16 unit fills half a
 *                     slot), then each thread converts (f32) or moves (f16)
 *                     the very chunks it copied (so a wait_group, no barrier,
 *                     makes them visible to it) into the f16 tile;
 * both zero the rows at or past n_ctx (the cache rows there may be anything);
 * q35_flash_feed puts them in order. An f32 value reaches the tile as
 * __float2half_rn of it: the value an f16 cache (kernels/kv_append.h) holds,
 * so the two caches give the kernel the same tiles, bit for bit. */
#ifndef Q35_KERNELS_FLASH_FRAG_CUH
#define Q35_KERNELS_FLASH_FRAG_CUH

#include "kernels/mma.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define Q35_FLASH_HD 256                        /* head_dim */
#define Q35_FLASH_ROW_BYTES (Q35_FLASH_HD * 2)  /* one f16 row of a Q, K or V tile */
#define Q35_FLASH_UNIT 16                       /* cache rows per staged unit */
#define Q35_FLASH_UNIT_CHUNKS (Q35_FLASH_UNIT * Q35_FLASH_HD / 8) /* its chunks of 8 values */
#define Q35_FLASH_UNIT_BYTES (Q35_FLASH_UNIT * Q35_FLASH_HD * 4)  /* its f32 bytes: one ring slot */

/* Byte offset of 16-byte chunk c of row `row` in a swizzled [rows][256] f16
 * array (kernels/mma.cuh): a step of whole 8-chunk groups (128 bytes) or of 8
 * rows commutes with it. */
__device__ __forceinline__ uint32_t q35_swz(int row, int c)
{
    return q35_swz_rows<Q35_FLASH_HD / 8>(row, c);
}

/* A chunk of 8 cache values in registers: loaded from global memory (or
 * zeros), stored to shared memory as 16 bytes of f16. */
template <class C>
struct q35_flash_chunk;

template <>
struct q35_flash_chunk<float> {
    static constexpr int PIECES = 2; /* 16-byte pieces in global memory */
    float4 lo, hi;
    __device__ __forceinline__ void zero(void) { lo = hi = make_float4(0.0f, 0.0f, 0.0f, 0.0f); }
    __device__ __forceinline__ void load(const float *src)
    {
        lo = __ldg((const float4 *)src);
        hi = __ldg((const float4 *)src + 1);
    }
    /* pieces 0 and 1 from a ring slot (piece p at p * half a slot) */
    __device__ __forceinline__ void load_shared(uint32_t at, uint32_t piece_step)
    {
        lo = q35_ld_shared_f4(at);
        hi = q35_ld_shared_f4(at + piece_step);
    }
    __device__ __forceinline__ void store(uint32_t addr) const { q35_st_shared_f16x8(addr, lo, hi); }
};

template <>
struct q35_flash_chunk<__half> {
    static constexpr int PIECES = 1;
    uint4 h;
    __device__ __forceinline__ void zero(void) { h = make_uint4(0u, 0u, 0u, 0u); }
    __device__ __forceinline__ void load(const __half *src) { h = __ldg((const uint4 *)src); }
    __device__ __forceinline__ void load_shared(uint32_t at, uint32_t) { h = q35_ld_shared_u4(at); }
    __device__ __forceinline__ void store(uint32_t addr) const { q35_st_shared_v4(addr, h.x, h.y, h.z, h.w); }
};

/* Staging through registers: DEPTH buffers of a unit's chunks (chunk index
 * threadIdx.x + THREADS * i: row index / 32, 8-value column index % 32). */
template <int THREADS, int DEPTH, class C>
struct q35_flash_regs {
    static constexpr int N = (Q35_FLASH_UNIT_CHUNKS + THREADS - 1) / THREADS;
    q35_flash_chunk<C> buf[DEPTH][N];

    /* Loads rows p0..p0+15 of the cache column base (row stride ld) into buffer
     * b; rows at or past n_ctx read as zeros. */
    __device__ __forceinline__ void fetch(int b, const C *base, int64_t ld, int p0, int n_ctx)
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            buf[b][i].zero();
            if (idx < Q35_FLASH_UNIT_CHUNKS && p0 + idx / 32 < n_ctx)
                buf[b][i].load(base + (p0 + idx / 32) * ld + (idx % 32) * 8);
        }
    }
    __device__ __forceinline__ void commit(void) {}

    /* Stores buffer b as f16 into rows row0..row0+15 of the swizzled tile at
     * shared address tile. */
    __device__ __forceinline__ void put(int b, uint32_t tile, int row0)
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (idx < Q35_FLASH_UNIT_CHUNKS)
                buf[b][i].store(tile + q35_swz(row0 + idx / 32, idx % 32));
        }
    }
};

/* Staging through a cp.async ring of DEPTH slots at shared address ring. A
 * slot holds chunk idx's 16-byte pieces at idx * 16 and (f32 only) 8 KiB +
 * idx * 16 (a warp's 32 lanes read 512 consecutive bytes: no bank conflicts).
 * Every fetch commits one group, empty or not, so put can wait for "all but
 * the newest DEPTH - 1". */
template <int THREADS, int DEPTH, class C>
struct q35_flash_ring {
    static constexpr int N = (Q35_FLASH_UNIT_CHUNKS + THREADS - 1) / THREADS;
    static constexpr bool EVEN = Q35_FLASH_UNIT_CHUNKS % THREADS == 0; /* every idx below is a chunk */
    static constexpr int PIECES = q35_flash_chunk<C>::PIECES;
    static constexpr uint32_t PIECE_STEP = Q35_FLASH_UNIT_BYTES / 2;
    uint32_t ring;

    __device__ __forceinline__ void fetch(int b, const C *base, int64_t ld, int p0, int n_ctx)
    {
        const uint32_t slot = ring + (uint32_t)b * Q35_FLASH_UNIT_BYTES;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (EVEN || idx < Q35_FLASH_UNIT_CHUNKS) {
                const bool in = p0 + idx / 32 < n_ctx;
                const char *src = (const char *)(in ? base + (p0 + idx / 32) * ld + (idx % 32) * 8 : base);
#pragma unroll
                for (int piece = 0; piece < PIECES; piece++)
                    q35_cp_async16(slot + piece * PIECE_STEP + idx * 16, src + (in ? 16 * piece : 0), in ? 16 : 0);
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
            if (EVEN || idx < Q35_FLASH_UNIT_CHUNKS) {
                q35_flash_chunk<C> ch;
                ch.load_shared(slot + idx * 16, PIECE_STEP);
                ch.store(tile + q35_swz(row0 + idx / 32, idx % 32));
            }
        }
    }
};

/* The K/V feed of a block: units of 16 cache rows in the order K(j) V(j)
 * K(j + SPLIT) V(j + SPLIT) ..., DEPTH of them in flight in the staging's
 * buffers (unit i in buffer i % DEPTH; a tile's 2 N / 16 units are a multiple of
 * DEPTH, so the buffer is known where each put is written). */
template <class Stage, int N, int SPLIT, int DEPTH, class C>
struct q35_flash_feed {
    static constexpr int NU = N / Q35_FLASH_UNIT; /* units of K (or V) per tile */
    static_assert(2 * NU % DEPTH == 0 && DEPTH <= 2 * NU, "a tile's units fill the buffers evenly");
    Stage st;
    const C *kc, *vc; /* the KV head's column of each cache */
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
