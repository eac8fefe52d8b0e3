/* The pieces of the sm_90 flash kernel (kernels/attention_flash_sm90.cu, whose
 * comment describes the kernel): its sizes and shared-memory map, its
 * scalars, and the device steps every schedule is built from: Q staged, the
 * scores S = Q K^T, the product O += P V, the online softmax (whole, or in
 * its two steps), the producer, a consumer group's state, the causal mask,
 * the store (f32 o, or the gated f16 form). Included by that file only. */
#ifndef Q35_KERNELS_ATTENTION_FLASH_SM90_CUH
#define Q35_KERNELS_ATTENTION_FLASH_SM90_CUH

#include "kernels/attention_flash_sm90.h"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh"
#include "kernels/tma.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#ifndef Q35_SM90
#define Q35_SM90 0
#endif

/* V's MN-major descriptor offsets (see kernels/sm90.cuh): LBO between 64-dim
 * boxes, SBO between 8-position atoms, as the PTX ISA reads them;
 * test_kernels_sm90's probe says which order the hardware takes. */
#ifndef Q35_SM90_V_LBO
#define Q35_SM90_V_LBO 8192u
#endif
#ifndef Q35_SM90_V_SBO
#define Q35_SM90_V_SBO 1024u
#endif

#define HD 256
#define BLOCK_M 128                    /* M-rows a block */
#define BLOCK_N 64                     /* positions a KV tile */
#define STAGES 2                       /* the K/V ring */
#define THREADS 384                    /* producer + 2 consumer warp groups */
#define BOX_BYTES (64 * 64 * 2)        /* one 64 x 64 f16 TMA box */
#define TILE_BYTES (4 * BOX_BYTES)     /* 64 rows x 256 dims */
#define OFF_Q 0
#define OFF_K (2 * TILE_BYTES)
#define OFF_V (OFF_K + STAGES * TILE_BYTES)
#define OFF_BAR (OFF_V + STAGES * TILE_BYTES)
#define OFF_P (OFF_BAR + 1024)         /* fa3turn: each group's P, one box */
#define SMEM_BYTES (OFF_P + 2 * BOX_BYTES + 1024)
#define LOG2E 1.4426950408889634f

/* The kernel's scalars. */
struct sm90_args {
    float *o;
    const float *q;
    int64_t q_stride, o_stride;
    int pos0, T;     /* the chunk's first position, its rows */
    int hpk, R;      /* query heads a KV head, query rows a block */
    int kv_heads, qtiles;
    float scale_log2; /* scale * log2 e */
    /* the gated instantiations' (q35_attention_prefill_flash_sm90_gated_f16):
     * y16 at o's offsets = o * sigmoid(gate at o's offsets), rounded to f16, o
     * not written; NULL for the f32 ones */
    const float *gate;
    uint16_t *y16;
};

/* The consumers' schedules: the variants. */
enum { SCHED_SERIAL, SCHED_PINGPONG, SCHED_FA3TURN, SCHED_OVERLAP };

/* How many query rows of hpk heads a block holds (0: hpk not taken). */
static int sm90_rows(int hpk)
{
    return hpk == 1 || hpk == 2 || hpk == 3 || hpk == 4 || hpk == 6 || hpk == 8 ? BLOCK_M / hpk : 0;
}

#ifdef Q35_SM90A_CODE

/* The consumer's M-rows of Q (64 from m0) into sQ, f16, four swizzled 64 x 64
 * boxes; rows outside the block's are zeros. */
__device__ __forceinline__ void sm90_stage_q(uint32_t sQ, const sm90_args &a, int m0, int r0, int rows, int kvh,
                                             int tid)
{
    for (int idx = tid; idx < 64 * (HD / 8); idx += 128) {
        const int ml = idx / (HD / 8), ch = idx % (HD / 8), m = m0 + ml, r = m / a.hpk, h = m % a.hpk;
        float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f), y = x;
        if (m < a.R * a.hpk && r < rows) {
            const float4 *src =
                (const float4 *)(a.q + (int64_t)(r0 + r) * a.q_stride + (int64_t)(kvh * a.hpk + h) * HD + ch * 8);
            x = __ldg(src);
            y = __ldg(src + 1);
        }
        const uint32_t dst = sQ + (ch / 8) * BOX_BYTES + q35_sw128(ml, (ch % 8) * 8);
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(q35_pack_f16x2(x.x, x.y)),
                     "r"(q35_pack_f16x2(x.z, x.w)), "r"(q35_pack_f16x2(y.x, y.y)), "r"(q35_pack_f16x2(y.z, y.w))
                     : "memory");
    }
}

/* S [64][64] = Q K^T over the 256 dims: 16 k16 steps, issued (no commit);
 * sm90_scores: waited for; pass: the named barrier to arrive on once they
 * are issued (the pingpong schedule's turn handed on), or -1. */
__device__ __forceinline__ void sm90_scores_issue(float (&s)[32], uint32_t sQ, uint32_t sK)
{
    q35_wgmma_ss_m64n64k16_first(s, q35_gmma_desc(sQ, 16, 1024), q35_gmma_desc(sK, 16, 1024));
#pragma unroll
    for (int kk = 1; kk < HD / 16; kk++) {
        const uint32_t step = (kk / 4) * BOX_BYTES + (kk % 4) * 32;
        q35_wgmma_ss_m64n64k16(s, q35_gmma_desc(sQ + step, 16, 1024), q35_gmma_desc(sK + step, 16, 1024), 1);
    }
}

__device__ __forceinline__ void sm90_scores(float (&s)[32], uint32_t sQ, uint32_t sK, int pass)
{
    q35_wgmma_fence();
    sm90_scores_issue(s, sQ, sK);
    q35_wgmma_commit();
    if (pass >= 0)
        q35_named_arrive(pass, 256);
    q35_wgmma_wait<0>();
    q35_reg_fence(s);
}

/* O [64][256] += P V over the tile's 64 positions: 4 k16 steps of 16
 * positions (two 8-position atoms, 2 KiB), waited for (the A fragments
 * fenced too: the compiler may not reuse them while the wgmma reads them);
 * pass as for sm90_scores. */
__device__ __forceinline__ void sm90_pv(float (&o)[128], uint32_t (&p)[4][4], uint32_t sV, int pass)
{
    q35_wgmma_fence();
    q35_reg_fence(o);
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; kk++)
        q35_wgmma_rs_m64n256k16<1>(o, p[kk], q35_gmma_desc(sV + kk * 2048, Q35_SM90_V_LBO, Q35_SM90_V_SBO), 1);
    q35_wgmma_commit();
    if (pass >= 0)
        q35_named_arrive(pass, 256);
    q35_wgmma_wait<0>();
    q35_reg_fence(o);
    q35_reg_fence(p);
}

/* The online softmax of one tile, in two steps (the overlap schedule runs the
 * first while O += P V of the tile before is in flight):
 *   sm90_exp_scores   s (raw scores, masked) -> 2^(s * scale - m) in place, m
 *                     and l updated, alpha = 2^(m_old - m_new) for O;
 *   sm90_rescale_pack O rescaled by alpha, P packed to f16 straight into the
 *                     A fragments p of the next product;
 * sm90_softmax: both. */
__device__ __forceinline__ void sm90_exp_scores(float (&s)[32], float (&m)[2], float (&l)[2], float (&alpha)[2],
                                                float scale_log2)
{
#pragma unroll
    for (int ri = 0; ri < 2; ri++) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < 8; i++)
            mx = fmaxf(mx, fmaxf(s[4 * i + 2 * ri], s[4 * i + 2 * ri + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m[ri], mx * scale_log2);
        const float base = m_new == -INFINITY ? 0.0f : m_new; /* a row with nothing visible yet */
        alpha[ri] = q35_ex2(m[ri] - base);
        m[ri] = m_new;
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < 8; i++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float v = q35_ex2(fmaf(s[4 * i + 2 * ri + e], scale_log2, -base));
                s[4 * i + 2 * ri + e] = v;
                sum += v;
            }
        l[ri] = l[ri] * alpha[ri] + sum;
    }
}

__device__ __forceinline__ void sm90_rescale_pack(float (&o)[128], uint32_t (&p)[4][4], const float (&s)[32],
                                                  const float (&alpha)[2])
{
#pragma unroll
    for (int ri = 0; ri < 2; ri++)
#pragma unroll
        for (int i = 0; i < 32; i++) {
            o[4 * i + 2 * ri] *= alpha[ri];
            o[4 * i + 2 * ri + 1] *= alpha[ri];
        }
    /* the accumulator's n8 tiles 2kk, 2kk + 1 are k16 step kk's A fragment */
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            p[kk][j] = q35_pack_f16x2(s[8 * kk + 2 * j], s[8 * kk + 2 * j + 1]);
}

__device__ __forceinline__ void sm90_softmax(float (&s)[32], uint32_t (&p)[4][4], float (&o)[128], float (&m)[2],
                                             float (&l)[2], float scale_log2)
{
    float alpha[2];
    sm90_exp_scores(s, m, l, alpha, scale_log2);
    sm90_rescale_pack(o, p, s, alpha);
}

/* The producer's thread: every tile of the block through the ring, K of tile
 * j once the consumers released K of j - 2 (empty_k), V once they released V
 * of j - 2 (empty_v; the same barrier where they release both at once). The
 * ring's count starts at g0 (a persistent block's tiles run on through one
 * ring: tile j is its (g0 + j)-th). */
__device__ __forceinline__ void sm90_produce(const q35_tma_map *kmap, const q35_tma_map *vmap, uint32_t base,
                                             int tiles, int kvh, uint32_t empty_k, uint32_t empty_v, int g0 = 0)
{
    const uint32_t full_k = base + OFF_BAR, full_v = full_k + 16;
    for (int j = 0; j < tiles; j++) {
        const int g = g0 + j, st = g % STAGES;
        if (g >= STAGES)
            q35_mbar_wait(empty_k + 8 * st, (g / STAGES - 1) & 1);
        q35_mbar_arrive_expect_tx(full_k + 8 * st, TILE_BYTES);
        for (int b = 0; b < 4; b++)
            q35_tma_load_2d(base + OFF_K + st * TILE_BYTES + b * BOX_BYTES, kmap, full_k + 8 * st, kvh * HD + 64 * b,
                            j * BLOCK_N);
        if (g >= STAGES && empty_v != empty_k)
            q35_mbar_wait(empty_v + 8 * st, (g / STAGES - 1) & 1);
        q35_mbar_arrive_expect_tx(full_v + 8 * st, TILE_BYTES);
        for (int b = 0; b < 4; b++)
            q35_tma_load_2d(base + OFF_V + st * TILE_BYTES + b * BOX_BYTES, vmap, full_v + 8 * st, kvh * HD + 64 * b,
                            j * BLOCK_N);
    }
}

/* A consumer warp group's rows and state: its thread's place, its rows'
 * positions, the tiles it sees, O, m, l. */
struct sm90_consumer {
    int c, tid, warp, g, q4;
    int first;  /* the position of the group's first row */
    int pos[2]; /* the positions of this thread's two rows */
    int mine;   /* the tiles the group sees */
    uint32_t sQ;
    float o[128], m[2], l[2];
};

/* Q staged (and made visible to wgmma), the rows' positions, O, m, l zeroed. */
__device__ __forceinline__ void sm90_consumer_init(sm90_consumer &w, const sm90_args &a, uint32_t base, int c,
                                                   int r0, int rows, int kvh)
{
    w.c = c, w.tid = threadIdx.x - 128 * (1 + c), w.warp = w.tid / 32, w.g = w.tid % 32 / 4, w.q4 = w.tid % 4;
    w.sQ = base + OFF_Q + c * TILE_BYTES;
    sm90_stage_q(w.sQ, a, 64 * c, r0, rows, kvh, w.tid);
    q35_fence_proxy_async();
    q35_named_sync(1 + c, 128);
    w.first = a.pos0 + r0 + min(64 * c / a.hpk, rows - 1);
    const int last = a.pos0 + r0 + min((64 * c + 63) / a.hpk, rows - 1);
#pragma unroll
    for (int ri = 0; ri < 2; ri++)
        w.pos[ri] = a.pos0 + r0 + min((64 * c + 16 * w.warp + w.g + 8 * ri) / a.hpk, rows - 1);
    w.mine = last / BLOCK_N + 1;
#pragma unroll
    for (int i = 0; i < 128; i++)
        w.o[i] = 0.0f;
    w.m[0] = w.m[1] = -INFINITY;
    w.l[0] = w.l[1] = 0.0f;
}

/* Tile j's scores masked where the tile reaches past the group's first row's
 * position (a diagonal tile): position > the row's -> -inf. sm90_mask_apply:
 * the mask itself, for a tile known to be diagonal. */
__device__ __forceinline__ void sm90_mask_apply(float (&s)[32], const sm90_consumer &w, int j)
{
#pragma unroll
    for (int i = 0; i < 8; i++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                if (j * BLOCK_N + 8 * i + 2 * w.q4 + e > w.pos[ri])
                    s[4 * i + 2 * ri + e] = -INFINITY;
}

__device__ __forceinline__ void sm90_mask(float (&s)[32], const sm90_consumer &w, int j)
{
    if (j * BLOCK_N + BLOCK_N - 1 > w.first)
        sm90_mask_apply(s, w, j);
}

/* O / l (l reduced over the quad) to the group's f32 o rows. */
template <bool GATED>
__device__ __forceinline__ void sm90_store(const sm90_consumer &w, const sm90_args &a, int r0, int rows, int kvh)
{
#pragma unroll
    for (int ri = 0; ri < 2; ri++) {
        float sum = w.l[ri];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const float inv = 1.0f / sum;
        const int mrow = 64 * w.c + 16 * w.warp + w.g + 8 * ri, r = mrow / a.hpk, h = mrow % a.hpk;
        if (mrow >= a.R * a.hpk || r >= rows)
            continue;
        const int64_t at = (int64_t)(r0 + r) * a.o_stride + (int64_t)(kvh * a.hpk + h) * HD + 2 * w.q4;
        if (GATED) { /* o * sigmoid(gate) as q35_sigmoid_gate_rows_f16 computes it from the f32 o: the same bits */
            const float *gr = a.gate + at;
            uint16_t *yr = a.y16 + at;
#pragma unroll
            for (int i = 0; i < 32; i++) {
                const float2 gv = *(const float2 *)(gr + 8 * i);
                const float o0 = w.o[4 * i + 2 * ri] * inv, o1 = w.o[4 * i + 2 * ri + 1] * inv;
                *(uint32_t *)(yr + 8 * i) = q35_pack_f16x2(q35_sigmoid_gate(o0, gv.x), q35_sigmoid_gate(o1, gv.y));
            }
            continue;
        }
        float *dst = a.o + at;
#pragma unroll
        for (int i = 0; i < 32; i++)
            *(float2 *)(dst + 8 * i) = make_float2(w.o[4 * i + 2 * ri] * inv, w.o[4 * i + 2 * ri + 1] * inv);
    }
}

#endif /* Q35_SM90A_CODE */

#endif /* Q35_KERNELS_ATTENTION_FLASH_SM90_CUH */
