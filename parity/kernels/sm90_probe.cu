/* The sm_90a probes (parity/kernels/sm90_probe.h). */
#include "parity/kernels/sm90_probe.h"
#include "kernels/cuda.h"
#include "kernels/delta_chunk_sm90.cuh"
#include "kernels/sm90.cuh"
#include "kernels/tma.h"

#include <cuda_runtime.h>

#define BOX 8192 /* one 64 x 64 f16 box */

#ifdef Q35_SM90A_CODE
/* rows x cols f16 (row-major, ld) into 64-wide swizzled boxes [64][64] at s,
 * box b holding columns 64b ..; columns past cols are zeros. */
__device__ static void probe_stage(uint32_t s, const uint16_t *src, int cols, int ld)
{
    const int boxes = (cols + 63) / 64;
    for (int i = threadIdx.x; i < 64 * boxes * 64; i += blockDim.x) {
        const int r = i / (boxes * 64), c = i % (boxes * 64);
        const uint16_t v = c < cols ? src[r * ld + c] : 0;
        asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(s + (c / 64) * BOX + q35_sw128(r, c % 64)), "h"(v) : "memory");
    }
    q35_fence_proxy_async();
    __syncthreads();
}

/* The same [64][64 * boxes] operand brought by TMA (box b at column 64b), as
 * the kernel brings its K and V tiles; bar: an mbarrier's shared address. */
__device__ static void probe_stage_tma(uint32_t s, const q35_tma_map *map, int boxes, uint32_t bar)
{
    if (threadIdx.x == 0) {
        q35_mbar_init(bar, 1);
        q35_mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        q35_mbar_arrive_expect_tx(bar, boxes * BOX);
        for (int b = 0; b < boxes; b++)
            q35_tma_load_2d(s + b * BOX, map, bar, 64 * b, 0);
    }
    q35_mbar_wait(bar, 0);
}

/* An m64nN accumulator out to d [64][N]. */
template <int N>
__device__ static void probe_store(float *d, const float (&acc)[N / 2])
{
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q4 = threadIdx.x % 4;
#pragma unroll
    for (int i = 0; i < N / 8; i++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++)
#pragma unroll
            for (int e = 0; e < 2; e++)
                d[(16 * warp + g + 8 * ri) * N + 8 * i + 2 * q4 + e] = acc[4 * i + 2 * ri + e];
}
#endif

__global__ void q35_probe_ss_kernel(float *d, const uint16_t *a, const uint16_t *b, int K,
                                    const __grid_constant__ q35_tma_map bmap, int tma)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t sa = (q35_sm90_smem(smem) + 1023) & ~1023u, sb = sa + 4 * BOX;
    probe_stage(sa, a, K, K);
    if (tma)
        probe_stage_tma(sb, &bmap, K / 64, sb + 4 * BOX);
    else
        probe_stage(sb, b, K, K);
    float acc[32];
    for (int i = 0; i < 32; i++)
        acc[i] = __int_as_float(0x7fffffff); /* poison: scale_d 0 must overwrite it */
    q35_wgmma_fence();
    for (int kk = 0; kk < K / 16; kk++) {
        const uint32_t step = (kk / 4) * BOX + (kk % 4) * 32;
        q35_wgmma_ss_m64n64k16(acc, q35_gmma_desc(sa + step, 16, 1024), q35_gmma_desc(sb + step, 16, 1024), kk > 0);
    }
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(acc);
    probe_store<64>(d, acc);
#else
    (void)d, (void)a, (void)b, (void)K, (void)bmap, (void)tma;
    __trap();
#endif
}

__global__ void q35_probe_rs_kernel(float *o, const uint16_t *p, const uint16_t *v, int swap,
                                    const __grid_constant__ q35_tma_map vmap, int tma)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t sv = (q35_sm90_smem(smem) + 1023) & ~1023u;
    if (tma)
        probe_stage_tma(sv, &vmap, 4, sv + 4 * BOX);
    else
        probe_stage(sv, v, 256, 256);
    const int warp = threadIdx.x / 32, g = threadIdx.x % 32 / 4, q4 = threadIdx.x % 4;
    uint32_t frag[4][4];
    for (int kk = 0; kk < 4; kk++)
        for (int j = 0; j < 4; j++) { /* a0: (g, 2q4), a1: (g + 8, 2q4), a2: (g, 2q4 + 8), a3: (g + 8, 2q4 + 8) */
            const int r = 16 * warp + g + 8 * (j % 2), c = 16 * kk + 2 * q4 + 8 * (j / 2);
            frag[kk][j] = (uint32_t)p[r * 64 + c] | (uint32_t)p[r * 64 + c + 1] << 16;
        }
    float acc[128];
    for (int i = 0; i < 128; i++)
        acc[i] = __int_as_float(0x7fffffff);
    const uint32_t lbo = swap ? 1024 : 8192, sbo = swap ? 8192 : 1024;
    q35_wgmma_fence();
    for (int kk = 0; kk < 4; kk++)
        q35_wgmma_rs_m64n256k16<1>(acc, frag[kk], q35_gmma_desc(sv + kk * 2048, lbo, sbo), kk > 0);
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(acc);
    q35_reg_fence(frag);
    probe_store<256>(o, acc);
#else
    (void)o, (void)p, (void)v, (void)swap, (void)vmap, (void)tma;
    __trap();
#endif
}

__global__ void q35_probe_tma_kernel(uint16_t *image, const __grid_constant__ q35_tma_map map, int x, int y)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t s = (q35_sm90_smem(smem) + 1023) & ~1023u, bar = s + BOX;
    if (threadIdx.x == 0) {
        q35_mbar_init(bar, 1);
        q35_mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        q35_mbar_arrive_expect_tx(bar, BOX);
        q35_tma_load_2d(s, &map, bar, x, y);
    }
    q35_mbar_wait(bar, 0);
    for (int i = threadIdx.x; i < BOX / 2; i += blockDim.x) {
        uint16_t v;
        asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(s + 2 * i) : "memory");
        image[i] = v;
    }
#else
    (void)image, (void)map, (void)x, (void)y;
    __trap();
#endif
}

__global__ void q35_probe_n32_kernel(float *d, uint16_t *dt, const uint16_t *a, const uint16_t *bt, int tnsp_a,
                                     int swap)
{
#ifdef Q35_SM90A_CODE
    using namespace q35_delta_chunk_kernels;
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t sa = (q35_sm90_smem(smem) + 1023) & ~1023u, sb = sa + BOX, st = sb + BOX;
    /* A [64 m][64 k] as [m][k] (K-major) or as A^T [k][m] (MN-major); B^T [32 n][64 k] (K-major) */
    for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) {
        const int r = i / 64, c = i % 64;
        asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(sa + q35_sw128(r, c)), "h"(tnsp_a ? a[c * 64 + r] : a[i])
                     : "memory");
        if (r < 32)
            asm volatile("st.shared.u16 [%0], %1;\n" ::"r"(sb + q35_sw128(r, c)), "h"(bt[i]) : "memory");
    }
    q35_fence_proxy_async();
    __syncthreads();
    float acc[16];
    for (int i = 0; i < 16; i++)
        acc[i] = __int_as_float(0x7fffffff); /* poison: scale_d 0 must overwrite it */
    const uint32_t mn_lbo = swap ? Q35_TBW_MN_SBO : Q35_TBW_MN_LBO, mn_sbo = swap ? Q35_TBW_MN_LBO : Q35_TBW_MN_SBO;
    const uint32_t lo_a = w_desc_lo(sa, tnsp_a ? mn_lbo : 16), lo_b = w_desc_lo(sb, 16);
    q35_wgmma_fence();
    for (int ks = 0; ks < 4; ks++) { /* tb4w's steps: 32 bytes K-major, 16 rows (2 KiB) MN-major */
        const uint64_t db = w_desc(lo_b + ((32 * ks) >> 4), 1024);
        if (tnsp_a)
            q35_wgmma_ss_m64n32k16<1, 0>(acc, w_desc(lo_a + ((2048 * ks) >> 4), mn_sbo), db, ks > 0);
        else
            q35_wgmma_ss_m64n32k16<0, 0>(acc, w_desc(lo_a + ((32 * ks) >> 4), 1024), db, ks > 0);
    }
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(acc);
    probe_store<32>(d, acc);
    /* the accumulator rounded to f16 and stored transposed as tb4w stores X, D and S (w_store_t) */
    w_store_t(st, acc, (int)threadIdx.x / 32, (int)threadIdx.x % 32);
    __syncthreads();
    for (int i = threadIdx.x; i < 32 * 64; i += blockDim.x) {
        uint16_t v;
        asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(v) : "r"(st + 2 * i) : "memory");
        dt[i] = v;
    }
#else
    (void)d, (void)dt, (void)a, (void)bt, (void)tnsp_a, (void)swap;
    __trap();
#endif
}

/* The launch of a probe kernel with `smem` bytes of dynamic shared memory. */
template <class K, class... A>
static int probe_launch(K kernel, const char *name, int smem, q35_error *err, A... args)
{
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), err))
        return -1;
    kernel<<<1, 128, smem>>>(args...);
    if (Q35_LAUNCH_CHECK(name, err))
        return -1;
    return Q35_CUDA_CHECK(cudaDeviceSynchronize(), err);
}

/* A tensor map of a [64][cols] f16 operand, boxes of 64 x 64, 128-byte swizzle. */
static int probe_map(q35_tma_map *map, const uint16_t *src, int cols, q35_error *err)
{
    const uint64_t dims[2] = {(uint64_t)cols, 64}, strides[1] = {(uint64_t)cols * 2};
    const uint32_t box[2] = {64, 64};
    return q35_tma_map_f16(map, src, 2, dims, strides, box, 1, "probe", err);
}

int q35_probe_wgmma_ss(float *d, const uint16_t *a, const uint16_t *b, int K, int tma, q35_error *err)
{
    if (K < 16 || K > 256 || K % (tma ? 64 : 16))
        return q35_fail(err, "probe_wgmma_ss: K %d (16 .. 256, a multiple of %d)", K, tma ? 64 : 16);
    q35_tma_map map = {{0}};
    if (tma && probe_map(&map, b, K, err))
        return -1;
    return probe_launch(q35_probe_ss_kernel, "q35_probe_ss_kernel", 8 * BOX + 64 + 1024, err, d, a, b, K, map, tma);
}

int q35_probe_wgmma_rs(float *o, const uint16_t *p, const uint16_t *v, int swap, int tma, q35_error *err)
{
    q35_tma_map map = {{0}};
    if (tma && probe_map(&map, v, 256, err))
        return -1;
    return probe_launch(q35_probe_rs_kernel, "q35_probe_rs_kernel", 4 * BOX + 64 + 1024, err, o, p, v, swap, map,
                        tma);
}

int q35_probe_wgmma_n32(float *d, uint16_t *dt, const uint16_t *a, const uint16_t *bt, int tnsp_a, int swap,
                        q35_error *err)
{
    return probe_launch(q35_probe_n32_kernel, "q35_probe_n32_kernel", 3 * BOX + 1024, err, d, dt, a, bt, tnsp_a,
                        swap);
}

int q35_probe_tma(uint16_t *image, const uint16_t *src, int64_t rows, int64_t ld, int x, int y, q35_error *err)
{
    q35_tma_map map;
    const uint64_t dims[2] = {(uint64_t)ld, (uint64_t)rows}, strides[1] = {(uint64_t)ld * 2};
    const uint32_t box[2] = {64, 64};
    if (q35_tma_map_f16(&map, src, 2, dims, strides, box, 1, "probe_tma", err))
        return -1;
    return probe_launch(q35_probe_tma_kernel, "q35_probe_tma_kernel", BOX + 64 + 1024, err, image, map, x, y);
}

int q35_probe_sw128(int row, int col)
{
    return (int)q35_sw128(row, col);
}
