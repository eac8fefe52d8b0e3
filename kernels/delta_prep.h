/* The DeltaNet layer's prologue in one pass (SPEC §2.1-2.3): from the merged
 * projection output MIX [T][in_stride], columns [qkv (conv_dim) | z | alpha (hv) | b (hv)],
 * what the delta rule reads:
 *
 *     y      = conv1d + SiLU of the qkv columns, the window carried   (kernels/conv1d.h)
 *     out    = y, each of its 2*hk q/k heads of dk L2-normalised     (kernels/l2norm.h)
 *     g, beta = the gates of alpha, b                                (kernels/gates.h)
 *
 * the same bits as q35_conv1d_silu_rows, then q35_l2norm_rows over the q and k
 * heads, then q35_gates_rows (the same device code: kernels/conv1d.cuh,
 * norm_kernels.cuh, gates.cuh), so the model runs it on every rows path,
 * deterministic mode included (the switch prep=off keeps the three launches,
 * the A/B; model/README.md).
 *
 * Design (kernels/delta_prep.cuh): a warp per (group of dk channels, tile of
 * 8 rows), lane l the group's quad l (channels 4l .. 4l+3, as l2norm_rows
 * sums a head of dk <= 128). The warp loads its tile's 8 rows and the K-1
 * before it (the window's slots for the first tile) into registers with
 * 16-byte loads, all issued before any is used; then, a row at a time, each
 * lane's 4 channels' conv + SiLU from registers, the warp's sum of squares
 * where the group is a q or k head, one 16-byte store. No shared memory and no
 * barrier. A block is 4 warps: 32 consecutive rows of one group; the last
 * group index of the grid computes the gates of those rows. The warp of the
 * first tile moves the window on once it holds the old one (no other warp reads
 * it).
 *
 * Bytes moved a call (C = conv_dim): 4 (T C in + T C out) + 4 (K - 1) C
 * ceil(T / 8) of halo rows (read again by the next tile's warp, mostly from
 * L2) + 16 T hv (alpha, b in; g, beta out) + 4 (2K - 1) C (taps, the window in
 * and out). The unfused chain moves 4 (2 T C) for the conv, 4 (4 T hk dk) more
 * for the norm's read and write of the q/k heads, 16 T hv for the gates, in
 * three launches (four: the conv's window is a launch of its own).
 *
 * Faster than the chain and latency-bound under ncu (its registers a thread
 * cap the warps an SM); tiles of 16 rows a warp were slower (fewer warps an
 * SM), as were the first design (a block per 32-row tile staged in shared
 * memory by 8 warps) and runs of four tiles a warp, the next tile loading
 * under the current one's arithmetic (the experiment
 * kernels/experiments/delta_prep.h). The figures: bench/results/index.tsv,
 * family kernels (benchmarks delta_prep, delta_prep_chain, delta_prep_run),
 * and the runs' log, bench/results/log/. */
#ifndef Q35_KERNELS_DELTA_PREP_H
#define Q35_KERNELS_DELTA_PREP_H

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

/* The heads q35_delta_prep_rows takes (its launcher checks the same limits,
 * naming the one a call breaks): K in 2..Q35_DELTA_PREP_MAX_K (conv1d.h's),
 * dk a multiple of 4 in 4..Q35_DELTA_PREP_MAX_DK (a quad a lane of a warp),
 * hk and hv in 1..Q35_DELTA_PREP_MAX_HEADS, conv_dim a multiple of 4 in
 * 2*hk*dk..Q35_DELTA_PREP_MAX_CONV_DIM. */
#define Q35_DELTA_PREP_MAX_K 8
#define Q35_DELTA_PREP_MAX_DK 128
#define Q35_DELTA_PREP_MAX_HEADS (1 << 20)
#define Q35_DELTA_PREP_MAX_CONV_DIM (1 << 30)

/* 1 when q35_delta_prep_rows takes heads d (the limits above; its strides,
 * pointers and T aside); else 0 (a caller then runs the three units). */
static inline int q35_delta_prep_fits(q35_delta_prep_dims d)
{
    return d.K >= 2 && d.K <= Q35_DELTA_PREP_MAX_K && d.dk >= 4 && d.dk <= Q35_DELTA_PREP_MAX_DK && d.dk % 4 == 0 &&
           d.hk >= 1 && d.hk <= Q35_DELTA_PREP_MAX_HEADS && d.hv >= 1 && d.hv <= Q35_DELTA_PREP_MAX_HEADS &&
           d.conv_dim % 4 == 0 && d.conv_dim >= 2 * d.hk * d.dk && d.conv_dim <= Q35_DELTA_PREP_MAX_CONV_DIM;
}

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

/* Tokens a chunk of q35_delta_prep_rows_qk16's f16 rows: the chunked delta
 * rule's (Q35_DELTA_CHUNK, kernels/delta_chunk.h; it asserts the two equal). */
#define Q35_DELTA_PREP_QK16_ROWS 64

/* CUDA: q35_delta_prep_rows with the 2*hk q/k heads, L2-normalised, written
 * to q16 and k16 as f16 (round to nearest: bitwise the f16 rounding of what
 * q35_delta_prep_rows writes to out) in chunk layout: token t of head h (q
 * heads to q16, k heads to k16) at ((t / 64 * hk + h) * 64 + t % 64) * dk, the
 * layout of the chunked delta rule's workspace Q and K (q35_delta_chunk_qk16
 * reads them there), rows past T of the last chunk not written; out's first
 * 2*hk*dk columns (q, k) are not written, its others (v) are
 * q35_delta_prep_rows's, as are g, beta and win. So the chunked rule's
 * parallel pass reads half the bytes and rounds nothing, and the q/k columns
 * of out are never written nor read. Refuses what q35_delta_prep_rows refuses,
 * and q16 or k16 NULL or not 8-byte aligned. */
int q35_delta_prep_rows_qk16(float *out, int64_t out_stride, uint16_t *q16, uint16_t *k16, float *g, float *beta,
                             float *win, const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col,
                             const float *conv_w, const float *dt, const float *a, q35_delta_prep_dims d, int64_t T,
                             float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_DELTA_PREP_H */
