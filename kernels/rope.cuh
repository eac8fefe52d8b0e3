/* The RoPE arithmetic the CUDA units share (kernels/rope.h's formula): a row's
 * angles from its position, and the rotation of a pair. The rope kernel and the
 * fused attention prologue (kernels/attn_prep.cu) both go through these, so a
 * rotated value has the same bits in either. */
#ifndef Q35_KERNELS_ROPE_CUH
#define Q35_KERNELS_ROPE_CUH

#include <stdint.h>

#define Q35_ROPE_MAX_DIM 512

/* Angle i (< n_rot / 2) of position pos, as floats: theta / pi in float64,
 * reduced exactly to [-1, 1] half-turns, then sincospi (which then needs no
 * argument reduction: sincos of a large theta would, in local memory); each
 * rounded to float once. */
__device__ __forceinline__ void q35_rope_angle(int64_t pos, int i, int n_rot, double base, float *c, float *s)
{
    const double inv_freq = exp2(-2.0 * i / n_rot * log2(base));
    const double turns = (double)pos * (inv_freq * 0.31830988618379067154);
    const double r = turns - 2.0 * rint(0.5 * turns);
    double sd, cd;
    sincospi(r, &sd, &cd);
    *c = (float)cd;
    *s = (float)sd;
}

/* The pair (a, b) = (x[i], x[i + n_rot/2]) rotated by the angle of cos c, sin s:
 * lo = a c - b s, hi = a s + b c, each one fused multiply-add over the other
 * product rounded (the contraction nvcc made of the plain expressions, written
 * out so that no unit's bits hang on how the compiler contracts). */
__device__ __forceinline__ float q35_rope_lo(float a, float b, float c, float s)
{
    return fmaf(a, c, -__fmul_rn(b, s));
}

__device__ __forceinline__ float q35_rope_hi(float a, float b, float c, float s)
{
    return fmaf(a, s, __fmul_rn(b, c));
}

#endif /* Q35_KERNELS_ROPE_CUH */
