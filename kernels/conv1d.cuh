/* The causal conv1d + SiLU of kernels/conv1d.h per channel, shared by the
 * conv1d units and the fused DeltaNet prologue (kernels/delta_prep.cuh): the
 * same code, so the same bits. */
#ifndef Q35_KERNELS_CONV1D_CUH
#define Q35_KERNELS_CONV1D_CUH

#include "kernels/reduce.cuh"

#include <stdint.h>

#define Q35_CONV_MAX_K 8

/* One output: x the channel's K inputs oldest first (the window's K-1, then the
 * token's own), w its K taps; the taps accumulated in order by fused
 * multiply-adds from 0, then SiLU (FAST: q35_silu_fast, the experiment
 * kernels/experiments/delta_prep.h's; the units take q35_silu). */
template <int K, bool FAST = false>
__device__ __forceinline__ float q35_conv1d_silu_out(const float *x, const float *w)
{
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < K; j++)
        acc = fmaf(x[j], w[j], acc);
    return FAST ? q35_silu_fast(acc) : q35_silu(acc);
}

/* Moves one channel's window wc [K-1] on by T tokens, uc its column of the
 * inputs (rows at in_stride). Ascending j: slot j takes slot j + T (not yet
 * overwritten) or a row of u. Every read of the old window must be done. */
__device__ __forceinline__ void q35_conv1d_window_advance(float *wc, const float *uc, int64_t in_stride, int K,
                                                          int64_t T)
{
    for (int j = 0; j < K - 1; j++) {
        const int64_t s = T - (K - 1) + j; /* token of the new window's slot j */
        wc[j] = s < 0 ? wc[j + T] : uc[s * in_stride];
    }
}

#endif /* Q35_KERNELS_CONV1D_CUH */
