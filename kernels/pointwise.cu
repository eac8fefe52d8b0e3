/* The pointwise units (kernels/pointwise.h): one element per thread, grid-stride;
 * the output f32, or f16 (the _f16 forms of SwiGLU and the sigmoid gate: the
 * f32 value rounded to nearest even at the store), or FP8 (SwiGLU's _fp8); the
 * inputs f32, or f16 / bf16 for SwiGLU (_f16_f16, _bf16_fp8: each value
 * widened exactly to f32 first, then the f32 arithmetic); SwiGLU's and the
 * gate's _q8 forms write the f32 value and its 8-bit form (a warp a block). */
#include "kernels/norm_kernels.cuh"
#include "kernels/pointwise.h"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

enum { OP_SWIGLU, OP_SIGMOID_GATE, OP_RESIDUAL };

template <int OP>
__device__ __forceinline__ float pointwise_op(float x, float a, float b)
{
    if (OP == OP_SWIGLU)
        return q35_swiglu(a, b);
    if (OP == OP_SIGMOID_GATE)
        return q35_sigmoid_gate(x, a);
    return x + a;
}

__device__ __forceinline__ float4 swiglu_of(float4 a, float4 b)
{
    return make_float4(pointwise_op<OP_SWIGLU>(0.0f, a.x, b.x), pointwise_op<OP_SWIGLU>(0.0f, a.y, b.y),
                       pointwise_op<OP_SWIGLU>(0.0f, a.z, b.z), pointwise_op<OP_SWIGLU>(0.0f, a.w, b.w));
}

/* Four values rounded to f16 (nearest even, as __float2half_rn each), as the
 * bits of an 8-byte store: values 0, 1 in word x, 2, 3 in y (little-endian). */
__device__ __forceinline__ uint2 q35_half4_bits(float4 v)
{
    const __half2 lo = __floats2half2_rn(v.x, v.y), hi = __floats2half2_rn(v.z, v.w);
    return make_uint2(*(const uint32_t *)&lo, *(const uint32_t *)&hi);
}

/* Element i (quad i) of an f32 or f16 output, written. */
__device__ __forceinline__ void q35_pw_put(float *y, int64_t i, float v)
{
    y[i] = v;
}
__device__ __forceinline__ void q35_pw_put(__half *y, int64_t i, float v)
{
    y[i] = __float2half_rn(v);
}
__device__ __forceinline__ void q35_pw_put4(float *y, int64_t i, float4 v)
{
    ((float4 *)y)[i] = v;
}
__device__ __forceinline__ void q35_pw_put4(__half *y, int64_t i, float4 v)
{
    ((uint2 *)y)[i] = q35_half4_bits(v);
}

/* Element k of an f32 or f16 input, as f32 (an f16 widened exactly). */
__device__ __forceinline__ float q35_pw_get(const float *a, int64_t k)
{
    return a[k];
}
__device__ __forceinline__ float q35_pw_get(const __half *a, int64_t k)
{
    return __half2float(a[k]);
}

/* Eight f16 (bits of a 16-byte load: values 2i, 2i + 1 from word i, little-endian) widened exactly. */
__device__ __forceinline__ void f16x8(uint4 w, float4 &lo, float4 &hi)
{
    const uint32_t v[4] = {w.x, w.y, w.z, w.w};
    float f[8];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        f[2 * j] = __half2float(__ushort_as_half((unsigned short)(v[j] & 0xffffu)));
        f[2 * j + 1] = __half2float(__ushort_as_half((unsigned short)(v[j] >> 16)));
    }
    lo = make_float4(f[0], f[1], f[2], f[3]);
    hi = make_float4(f[4], f[5], f[6], f[7]);
}

/* Where output element (or quad) i reads its inputs a and b: rows of w at
 * in_stride (in_stride == w: contiguous, i itself, no division). */
__device__ __forceinline__ int64_t q35_pw_in(int64_t i, int64_t w, int64_t in_stride)
{
    return in_stride == w ? i : i + (i / w) * (in_stride - w);
}

/* Scalar: any n, any alignment. x is the value the op scales or adds to (the
 * gate's o, the residual's x; y itself in the in-place f32 forms), contiguous
 * like y, unread by SwiGLU, which reads b instead; a and b (f32, or f16
 * widened) in rows of w at in_stride. */
template <int OP, class Y, class X>
__global__ void q35_pointwise_kernel(Y *y, const float *x, const X *a, const X *b, int64_t n, int64_t w,
                                     int64_t in_stride)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = q35_pw_in(i, w, in_stride);
        q35_pw_put(y, i, pointwise_op<OP>(OP == OP_SWIGLU ? 0.0f : x[i], q35_pw_get(a, k),
                                          OP == OP_SWIGLU ? q35_pw_get(b, k) : 0.0f));
    }
}

/* Four values a thread through 16-byte loads and stores (n4 quads, every pointer
 * 16-byte aligned): the same per-element arithmetic, so the same bits, with four
 * times the bytes in flight a thread (one element a thread left these units
 * short of the copy bandwidth). The inputs in rows of w4 quads at in_stride4. */
template <int OP, class Y>
__global__ void q35_pointwise4_kernel(Y *y, const float4 *x, const float4 *a, const float4 *b, int64_t n4, int64_t w4,
                                      int64_t in_stride4)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n4; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = q35_pw_in(i, w4, in_stride4);
        const float4 av = a[k], bv = OP == OP_SWIGLU ? b[k] : make_float4(0, 0, 0, 0);
        const float4 xv = OP == OP_SWIGLU ? make_float4(0, 0, 0, 0) : x[i];
        q35_pw_put4(y, i,
                    make_float4(pointwise_op<OP>(xv.x, av.x, bv.x), pointwise_op<OP>(xv.y, av.y, bv.y),
                                pointwise_op<OP>(xv.z, av.z, bv.z), pointwise_op<OP>(xv.w, av.w, bv.w)));
    }
}

/* SwiGLU from f16 g and u to f16 y, eight values a thread through 16-byte
 * loads (each half widened exactly) and one 16-byte store (n8 groups of eight,
 * every pointer 16-byte aligned): the per-element arithmetic of the kernels
 * above, so the same bits, with the f32 quads' bytes in flight a thread. The
 * inputs in rows of w8 groups at in_stride8. */
__global__ void q35_swiglu8_f16_kernel(uint4 *y, const uint4 *g, const uint4 *u, int64_t n8, int64_t w8,
                                       int64_t in_stride8)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n8; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = q35_pw_in(i, w8, in_stride8);
        float4 g0, g1, u0, u1;
        f16x8(g[k], g0, g1);
        f16x8(u[k], u0, u1);
        const uint2 lo = q35_half4_bits(swiglu_of(g0, u0)), hi = q35_half4_bits(swiglu_of(g1, u1));
        y[i] = make_uint4(lo.x, lo.y, hi.x, hi.y);
    }
}

static unsigned grid_for(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 65536 ? blocks : 65536);
}

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* y = OP(x, a, b) over width * rows values, y and x contiguous [rows][width]
 * (x is y for the in-place f32 forms, b only SwiGLU's), a and b in rows at
 * in_stride (>= width). 16-byte accesses where every row is whole ones on
 * 16-byte boundaries (or the rows are contiguous and n is whole ones): quads
 * of f32 inputs, eights of f16 (SwiGLU's _f16_f16, f16 out); else scalar: the
 * same bits. An f16 y must not alias an input (its halves would land on
 * values not yet read). */
template <int OP, class Y, class X>
static int launch(const char *name, Y *y, const float *x, const X *a, const X *b, int64_t in_stride, int64_t width,
                  int64_t rows, q35_stream stream, q35_error *err)
{
    if (width < 1 || rows < 0)
        return q35_fail(err, "%s: width %lld, rows %lld", name, (long long)width, (long long)rows);
    if (in_stride < width)
        return q35_fail(err, "%s: input row stride %lld shorter than its width %lld", name, (long long)in_stride,
                        (long long)width);
    if (sizeof(Y) != sizeof(float) && ((const void *)y == (const void *)x || (const void *)y == (const void *)a ||
                                       (const void *)y == (const void *)b))
        return q35_fail(err, "%s: y16 must not alias an input", name);
    const int64_t n = width * rows;
    if (n == 0)
        return 0;
    const int64_t w = in_stride == width ? n : width, s = in_stride == width ? n : in_stride; /* contiguous: one row */
    const int64_t v = 16 / sizeof(X); /* values a 16-byte load */
    const bool vec = w % v == 0 && s % v == 0 && aligned16(y) && aligned16(a) &&
                     (OP == OP_SWIGLU ? aligned16(b) : aligned16(x));
    if constexpr (sizeof(X) == 2) {
        static_assert(OP == OP_SWIGLU && sizeof(Y) == 2, "f16 inputs: SwiGLU with f16 out only");
        if (vec)
            q35_swiglu8_f16_kernel<<<grid_for(n / 8), 256, 0, stream>>>((uint4 *)y, (const uint4 *)a,
                                                                        (const uint4 *)b, n / 8, w / 8, s / 8);
        else
            q35_pointwise_kernel<OP, Y, X><<<grid_for(n), 256, 0, stream>>>(y, x, a, b, n, w, s);
    } else if (vec) {
        q35_pointwise4_kernel<OP, Y><<<grid_for(n / 4), 256, 0, stream>>>(y, (const float4 *)x, (const float4 *)a,
                                                                           (const float4 *)b, n / 4, w / 4, s / 4);
    } else {
        q35_pointwise_kernel<OP, Y, X><<<grid_for(n), 256, 0, stream>>>(y, x, a, b, n, w, s);
    }
    return Q35_LAUNCH_CHECK(name, err);
}

/* the sigmoid gate's and the residual's b: none (typed, for launch's X) */
static const float *const k_no_b = nullptr;

int q35_swiglu_rows(float *y, const float *g, const float *u, int64_t in_stride, int64_t width, int64_t rows,
                    q35_stream stream, q35_error *err)
{
    return launch<OP_SWIGLU>("swiglu_rows", y, nullptr, g, u, in_stride, width, rows, stream, err);
}

int q35_swiglu_rows_f16(uint16_t *y16, const float *g, const float *u, int64_t in_stride, int64_t width,
                        int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_SWIGLU>("swiglu_rows_f16", (__half *)y16, nullptr, g, u, in_stride, width, rows, stream, err);
}

int q35_swiglu_rows_f16_f16(uint16_t *y16, const uint16_t *g16, const uint16_t *u16, int64_t in_stride, int64_t width,
                            int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_SWIGLU>("swiglu_rows_f16_f16", (__half *)y16, nullptr, (const __half *)g16, (const __half *)u16,
                             in_stride, width, rows, stream, err);
}

/* SwiGLU with FP8 out: a block a row of width, its values (pointwise_op's:
 * the f32 form's arithmetic) staged in shared memory with the threads' amax,
 * then quantized (kernels/fp8_row.cuh). Quads through 16-byte loads where the
 * row's g and u are 16-byte aligned (q35_norm_quad: the tail's values past
 * width read as 0 and dropped). The inputs f32, or bf16 (the _bf16_fp8 form:
 * each widened exactly to f32 first, 16-byte loads of eight where aligned), so
 * the same f32 arithmetic on the same values: the same bits. */
constexpr int kSwigluFp8Threads = 512;

/* Four bf16 (bits of an 8-byte load: values 2i, 2i + 1 from word i, little-endian) widened exactly. */
__device__ __forceinline__ float4 bf16x4(uint2 b)
{
    return make_float4(__uint_as_float(b.x << 16), __uint_as_float(b.x & 0xffff0000u), __uint_as_float(b.y << 16),
                       __uint_as_float(b.y & 0xffff0000u));
}

__device__ __forceinline__ float4 swiglu_quad(const float *v, int q, int n, bool vec)
{
    return q35_norm_quad(v, q, n, vec);
}

__device__ __forceinline__ float4 swiglu_quad(const __nv_bfloat16 *v, int q, int n, bool vec)
{
    const int i = 4 * q;
    if (vec && i + 4 <= n)
        return bf16x4(*(const uint2 *)(v + i));
    return make_float4(__bfloat162float(v[i]), i + 1 < n ? __bfloat162float(v[i + 1]) : 0.0f,
                       i + 2 < n ? __bfloat162float(v[i + 2]) : 0.0f, i + 3 < n ? __bfloat162float(v[i + 3]) : 0.0f);
}

/* bf16 bits of a 16-byte load: values 2i, 2i + 1 from word i (little-endian) */
__device__ __forceinline__ void bf16x8(uint4 w, float4 &lo, float4 &hi)
{
    lo = bf16x4(make_uint2(w.x, w.y));
    hi = bf16x4(make_uint2(w.z, w.w));
}

template <class X>
__global__ void __launch_bounds__(kSwigluFp8Threads)
    q35_swiglu_fp8_kernel(uint8_t *q, float *scale, const X *g, const X *u, int64_t in_stride, int width)
{
    float *ys = q35_fp8_staged_row();
    const int64_t r = blockIdx.x;
    const X *gr = g + r * in_stride, *ur = u + r * in_stride;
    q35_fp8_stage put{ys, width, 0.0f};
    if (sizeof(X) == 2 && ((uintptr_t)gr % 16) == 0 && ((uintptr_t)ur % 16) == 0) {
        /* bf16 on 16-byte boundaries: eight values a load (as many bytes in flight as the f32 quads) */
        for (int j = threadIdx.x; j < width / 8; j += kSwigluFp8Threads) {
            float4 g0, g1, u0, u1;
            bf16x8(((const uint4 *)gr)[j], g0, g1);
            bf16x8(((const uint4 *)ur)[j], u0, u1);
            put(2 * j, swiglu_of(g0, u0));
            put(2 * j + 1, swiglu_of(g1, u1));
        }
        for (int j = width / 8 * 2 + threadIdx.x; j < (width + 3) / 4; j += kSwigluFp8Threads) /* the tail */
            put(j, swiglu_of(swiglu_quad(gr, j, width, false), swiglu_quad(ur, j, width, false)));
    } else {
        const uintptr_t quad = 4 * sizeof(X); /* a quad's load: 16 bytes (f32), 8 (bf16) */
        const bool vec = ((uintptr_t)gr % quad) == 0 && ((uintptr_t)ur % quad) == 0;
        for (int j = threadIdx.x; j < (width + 3) / 4; j += kSwigluFp8Threads)
            put(j, swiglu_of(swiglu_quad(gr, j, width, vec), swiglu_quad(ur, j, width, vec)));
    }
    q35_fp8_row_out<kSwigluFp8Threads>(q + r * width, scale + r, ys, width, put.amax);
}

template <class X>
static int swiglu_fp8(const char *who, uint8_t *q, float *scale, const X *g, const X *u, int64_t in_stride,
                      int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    if (width < 1 || rows < 0 || rows > INT32_MAX)
        return q35_fail(err, "%s: width %lld, rows %lld (want width >= 1, rows 0..%d)", who, (long long)width,
                        (long long)rows, INT32_MAX);
    if (in_stride < width)
        return q35_fail(err, "%s: input row stride %lld shorter than its width %lld", who, (long long)in_stride,
                        (long long)width);
    size_t bytes = 0;
    if (q35_fp8_stage_ready(who, q35_swiglu_fp8_kernel<X>, width, &bytes, err))
        return -1;
    if (rows == 0)
        return 0;
    q35_swiglu_fp8_kernel<X><<<(unsigned)rows, kSwigluFp8Threads, bytes, stream>>>(q, scale, g, u, in_stride,
                                                                                   (int)width);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_swiglu_rows_fp8(uint8_t *q, float *scale, const float *g, const float *u, int64_t in_stride, int64_t width,
                        int64_t rows, q35_stream stream, q35_error *err)
{
    return swiglu_fp8("swiglu_rows_fp8", q, scale, g, u, in_stride, width, rows, stream, err);
}

int q35_swiglu_rows_bf16_fp8(uint8_t *q, float *scale, const uint16_t *g16, const uint16_t *u16, int64_t in_stride,
                             int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    return swiglu_fp8("swiglu_rows_bf16_fp8", q, scale, (const __nv_bfloat16 *)g16, (const __nv_bfloat16 *)u16,
                      in_stride, width, rows, stream, err);
}

int q35_sigmoid_gate_rows(float *o, const float *gate, int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_SIGMOID_GATE>("sigmoid_gate_rows", o, o, gate, k_no_b, width, width, rows, stream, err);
}

int q35_sigmoid_gate_rows_f16(uint16_t *y16, const float *o, const float *gate, int64_t width, int64_t rows,
                              q35_stream stream, q35_error *err)
{
    return launch<OP_SIGMOID_GATE>("sigmoid_gate_rows_f16", (__half *)y16, o, gate, k_no_b, width, width, rows,
                                   stream, err);
}

int q35_residual_add_rows(float *x, const float *p, int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_RESIDUAL>("residual_add_rows", x, x, p, k_no_b, width, width, rows, stream, err);
}

/* The 8-bit-out forms (a decode step's SwiGLU and output gate, before their
 * 8-bit GEMV): a warp a block of 32, lane l its value l, computed by
 * pointwise_op as the f32 forms compute it, stored to y, then quantized
 * (kernels/q8_block.cuh, q35_gemv_q8_quantize's bits). */
template <int OP>
__global__ void __launch_bounds__(256)
    q35_pointwise_q8_kernel(float *y, int8_t *q, float *d, float *s, const float *a, const float *b, int64_t blocks)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    const int64_t blk = (int64_t)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (blk >= blocks)
        return; /* the whole warp */
    const int64_t i = 32 * blk + lane;
    const float v = OP == OP_SWIGLU ? pointwise_op<OP>(0.0f, a[i], b[i]) : pointwise_op<OP>(y[i], a[i], 0.0f);
    y[i] = v;
    q35_q8_block(q, d, s, blk, v, lane);
}

template <int OP>
static int launch_q8(const char *name, float *y, void *xq, const float *a, const float *b, int64_t width,
                     q35_stream stream, q35_error *err)
{
    if (width < 32 || width % 32 != 0 || width > INT32_MAX)
        return q35_fail(err, "%s: width %lld (want a multiple of 32, the 8-bit blocks, up to %d)", name,
                        (long long)width, INT32_MAX);
    if ((uintptr_t)xq % 16 != 0)
        return q35_fail(err, "%s: the quantized x at %p (want 16-byte aligned)", name, xq);
    char *base = static_cast<char *>(xq);
    const int64_t blocks = width / 32;
    q35_pointwise_q8_kernel<OP><<<(unsigned)((blocks + 7) / 8), 256, 0, stream>>>(
        y, (int8_t *)base, (float *)(base + q35_gemv_q8_d_at(width)), (float *)(base + q35_gemv_q8_s_at(width)), a, b,
        blocks);
    return Q35_LAUNCH_CHECK(name, err);
}

int q35_swiglu_q8(float *y, void *xq, const float *g, const float *u, int64_t width, q35_stream stream, q35_error *err)
{
    return launch_q8<OP_SWIGLU>("swiglu_q8", y, xq, g, u, width, stream, err);
}

int q35_sigmoid_gate_q8(float *o, void *xq, const float *gate, int64_t width, q35_stream stream, q35_error *err)
{
    return launch_q8<OP_SIGMOID_GATE>("sigmoid_gate_q8", o, xq, gate, nullptr, width, stream, err);
}

__global__ void q35_split_qgate_kernel(float *q, float *gate, const float *full, int hd, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t head = i / hd, e = i % hd; /* head counts over rows * heads */
        q[i] = full[2 * head * hd + e];
        gate[i] = full[2 * head * hd + hd + e];
    }
}

int q35_split_qgate_rows(float *q, float *gate, const float *full, int heads, int hd, int64_t rows, q35_stream stream,
                         q35_error *err)
{
    if (heads < 1 || hd < 1 || rows < 0)
        return q35_fail(err, "split_qgate_rows: heads %d, hd %d, rows %lld", heads, hd, (long long)rows);
    const int64_t n = (int64_t)heads * hd * rows;
    if (n == 0)
        return 0;
    q35_split_qgate_kernel<<<grid_for(n), 256, 0, stream>>>(q, gate, full, hd, n);
    return Q35_LAUNCH_CHECK("split_qgate_rows", err);
}
