/* The DeltaNet gates of kernels/gates.h per head, shared by the gates unit and
 * the fused DeltaNet prologue (kernels/delta_prep.cuh): the same code, so the
 * same bits. beta is q35_sigmoid(b) (kernels/reduce.cuh). */
#ifndef Q35_KERNELS_GATES_CUH
#define Q35_KERNELS_GATES_CUH

#include "kernels/reduce.cuh"

/* g = softplus(alpha + dt) * a, softplus(x) = x above 20, else log1p(e^x). */
__device__ __forceinline__ float q35_gate_decay(float alpha, float dt, float a)
{
    const float x = alpha + dt;
    const float softplus = x > 20.0f ? x : log1pf(expf(x));
    return softplus * a;
}

#endif /* Q35_KERNELS_GATES_CUH */
