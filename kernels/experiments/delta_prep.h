/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels, not the model's path):
 * measured slower than the chain it would replace (below), kept for the record
 * and as the start of a faster version.
 *
 * The DeltaNet layer's prologue in one pass (SPEC §2.1-2.3): from the merged
 * projection output MIX [T][in_stride], columns [qkv (conv_dim) | z | alpha (hv) | b (hv)],
 * what the delta rule reads:
 *
 *     y      = conv1d + SiLU of the qkv columns, the window carried   (kernels/conv1d.h)
 *     out    = y, each of its 2*hk q/k heads of dk L2-normalised     (kernels/l2norm.h)
 *     g, beta = the gates of alpha, b                                (kernels/gates.h)
 *
 * the same bits as q35_conv1d_silu_rows, then q35_l2norm_rows over the q and k
 * heads, then q35_gates_rows (the same device code: kernels/conv1d.cuh,
 * norm_kernels.cuh, gates.cuh).
 *
 * Design (kernels/experiments/delta_prep.cu): a block per (tile of 32 rows, group of dk
 * channels), 8 warps; the block stages its group's inputs of the tile and the
 * K-1 rows before it (the window, for the first tile) in shared memory, read
 * once from MIX with 16-byte loads; a warp then takes a row at a time, lane l
 * the group's quad l: its 4 channels' conv + SiLU from K staged rows, a warp sum
 * of squares where the group is a q or k head (l2norm_rows's own order for a
 * head of dk <= 128: a warp a head, lane l quad l), one 16-byte store each. One
 * more block a tile computes the gates of its rows. The first tile's blocks
 * move the window on once they have staged it (no other block reads it).
 *
 * Bytes moved a call (C = conv_dim): 4 (T C in + T C out) + 4 (K - 1) C
 * (ceil(T/32) - 1) of halo rows (read again by the next tile, mostly from L2)
 * + 16 T hv (alpha, b in; g, beta out) + 4 (2K - 1) C (taps, the window in and
 * out). The unfused chain moves 4 (2 T C) for the conv, 4 (4 T hk dk) more for
 * the norm's read and write of the q/k heads, 16 T hv for the gates.
 *
 * Measured (bench/results/README.md, the H200 at fb0947d): bitwise the chain,
 * but slower than it: 81.1 us against 67.9 at 2048 rows of the 9B (26.7 / 25.8
 * at 512), 40 % of the copy ceiling; the model keeps the chain until this unit
 * wins (a larger row tile, more loads in flight are the next things to try). */
#ifndef Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H
#define Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_delta_prep_dims {
    int64_t conv_dim;  /* channels: [q (hk*dk) | k (hk*dk) | v (hv*dv)] */
    int K;             /* conv kernel width (4) */
    int64_t hk, dk, hv; /* q/k heads, their width, value heads (the gates) */
} q35_delta_prep_dims;

/* float64 reference (kernels/ref/delta_prep.c, in q35_ref): one token, composing q35_ref_conv1d_silu, q35_ref_l2norm
 * (each q/k head) and q35_ref_gates. out [conv_dim], g, beta [hv], win
 * [conv_dim][K-1] (advanced), mix one row (its alpha at alpha_col, b at b_col),
 * conv_w [conv_dim][K], dt, a [hv]. */
void q35_ref_delta_prep(double *out, double *g, double *beta, double *win, const double *mix, int64_t alpha_col,
                        int64_t b_col, const double *conv_w, const double *dt, const double *a, q35_delta_prep_dims d,
                        double eps);

/* CUDA: conv1d + SiLU over the conv_dim channels of mix's rows (the window win
 * [conv_dim][K-1] carried in and updated exactly as q35_conv1d_silu_rows does),
 * then the L2 norm of each of the 2*hk q/k heads of dk, written to out
 * [T][out_stride]; and the gates of q35_gates_rows from alpha = mix + alpha_col
 * and b = mix + b_col (rows at in_stride): g, beta [T][hv]. Device pointers; out,
 * g, beta, win distinct from each other and from mix.
 *
 * Refuses (-1, the value and its limit in err): K outside 2..8; dk not a
 * multiple of 4 in 4..128; hk, hv < 1; conv_dim not a multiple of 4 or below
 * 2*hk*dk; strides not multiples of 4 or below conv_dim; mix or out not 16-byte
 * aligned; alpha_col or b_col outside 0..in_stride - hv; T < 0. */
int q35_delta_prep_rows(float *out, int64_t out_stride, float *g, float *beta, float *win, const float *mix,
                        int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w, const float *dt,
                        const float *a, q35_delta_prep_dims d, int64_t T, float eps, q35_stream stream,
                        q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H */
