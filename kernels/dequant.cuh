/* One element of a quantized row, decoded on the device with the CPU
 * dequantizer's arithmetic bit for bit (model/quant_*.c, ggml's): every product
 * and difference is an explicitly rounded intrinsic, so nvcc cannot contract a
 * multiply-subtract into a fused multiply-add that the CPU does not do. */
#ifndef Q35_KERNELS_DEQUANT_CUH
#define Q35_KERNELS_DEQUANT_CUH

#include "model/quant.h"
#include "model/quant_blocks.h"

#include <cuda_fp16.h>
#include <stdint.h>

__device__ __forceinline__ float q35_dev_f16(uint16_t h)
{
    return __half2float(__ushort_as_half(h));
}

__device__ __forceinline__ uint16_t q35_dev_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8)); /* blocks are only 2-byte aligned */
}

/* Element i of a row of `type` starting at row (i < the row's length). */
__device__ __forceinline__ float q35_dequant_at(int type, const uint8_t *row, int64_t i)
{
    switch (type) {
    case Q35_TYPE_F32:
        return reinterpret_cast<const float *>(row)[i];
    case Q35_TYPE_F16:
        return q35_dev_f16(reinterpret_cast<const uint16_t *>(row)[i]);
    case Q35_TYPE_BF16:
        return __uint_as_float((uint32_t)reinterpret_cast<const uint16_t *>(row)[i] << 16);
    case Q35_TYPE_Q8_0: {
        const q35_block_q8_0 *b = reinterpret_cast<const q35_block_q8_0 *>(row) + i / 32;
        return __fmul_rn((float)b->qs[i % 32], q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q4_0: {
        const q35_block_q4_0 *b = reinterpret_cast<const q35_block_q4_0 *>(row) + i / 32;
        const int j = (int)(i % 32);
        const int q = (j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4)) - 8;
        return __fmul_rn((float)q, q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q5_0: {
        const q35_block_q5_0 *b = reinterpret_cast<const q35_block_q5_0 *>(row) + i / 32;
        const int j = (int)(i % 32);
        const uint32_t qh = b->qh[0] | (b->qh[1] << 8) | (b->qh[2] << 16) | ((uint32_t)b->qh[3] << 24);
        const int lo = j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4);
        const int q = (lo | (int)(((qh >> j) & 1u) << 4)) - 16;
        return __fmul_rn((float)q, q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q4_K:
    case Q35_TYPE_Q5_K: {
        const int64_t blk = i / 256;
        const int e = (int)(i % 256), s = e / 32, g = e / 64, l = e % 32, high = s % 2;
        const uint8_t *bp = row + blk * (type == Q35_TYPE_Q4_K ? 144 : 176);
        const float d = q35_dev_f16(q35_dev_u16(bp)), dmin = q35_dev_f16(q35_dev_u16(bp + 2));
        const uint8_t *scales = bp + 4;
        uint8_t sc, m;
        q35_k_scale_min(s, scales, &sc, &m);
        int q;
        if (type == Q35_TYPE_Q4_K) {
            q = (bp[16 + 32 * g + l] >> (4 * high)) & 0xF;
        } else {
            const uint8_t *qh = bp + 16, *qs = bp + 48;
            q = ((qs[32 * g + l] >> (4 * high)) & 0xF) + (((qh[l] >> (2 * g + high)) & 1) ? 16 : 0);
        }
        const float d1 = __fmul_rn(d, (float)sc), m1 = __fmul_rn(dmin, (float)m);
        return __fsub_rn(__fmul_rn(d1, (float)q), m1);
    }
    case Q35_TYPE_Q6_K: {
        const q35_block_q6_K *b = reinterpret_cast<const q35_block_q6_K *>(row) + i / 256;
        const int e = (int)(i % 256), h = e / 128, o = e % 128, quarter = o / 32, l = o % 32;
        const uint8_t qlb = b->ql[h * 64 + (quarter & 1) * 32 + l];
        const int lo = quarter < 2 ? (qlb & 0xF) : (qlb >> 4);
        const int hi = (b->qh[h * 32 + l] >> (2 * quarter)) & 3;
        const int q = (int)(int8_t)(lo | (hi << 4)) - 32;
        const int sc = b->scales[h * 8 + l / 16 + 2 * quarter];
        return __fmul_rn(__fmul_rn(q35_dev_f16(b->d), (float)sc), (float)q);
    }
    default:
        return __int_as_float(0x7fc00000); /* launchers refuse other types */
    }
}

#endif /* Q35_KERNELS_DEQUANT_CUH */
