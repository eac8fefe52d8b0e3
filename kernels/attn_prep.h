/* The attention layer's prologue on the f16 KV cache path, in one op (SPEC §2
 * attention.1's split, then 2-4): over T rows at positions pos .. pos + T - 1
 * of the projections' output full [T][ld], laid out
 *
 *     [ q_full (heads x [q(hd) | gate(hd)]) | k (kv_heads x hd) | v (kv_heads x hd) ]
 *
 * row t gives
 *
 *     gate[t][h]              = q_full[h][hd .. 2hd)
 *     q[t][h]                 = rope_neox(rmsnorm(q_full[h][0 .. hd), q_norm), pos + t)
 *     k_cache[pos + t][h]     = f16(rope_neox(rmsnorm(k[h], k_norm), pos + t))
 *     v_cache[pos + t][h]     = f16(v[h])
 *
 * (rmsnorm per head of hd: kernels/rmsnorm.h; rope_neox on the first n_rot
 * dims: kernels/rope.h; f16: round to nearest even, kernels/kv_append.h). Bitwise
 * the unfused chain q35_split_qgate_rows, q35_rmsnorm_rows (q, then k),
 * q35_rope_neox_rows (q, then k), q35_kv_append_rows_f16: the same sums in the
 * same order (a warp a head, as the per-head norm runs), the same angles and
 * rotations (kernels/rope.cuh), the same rounding.
 *
 * The CUDA form is one launch: a block per row, four warps (up to 16 rows, a
 * block per row and four of its heads: a decode step's row over 6 blocks on
 * the 9B); the block's first n_rot/2 threads make the row's angles, then each
 * warp takes whole heads in turn (heads q heads, then kv_heads k heads, then
 * kv_heads v heads: 24 for the 9B, 6 a warp past 16 rows): a q head's [q | gate] read once (the gate stored straight
 * back), normed in registers, staged in shared memory for RoPE's partner
 * values, stored; a k head the same into its cache row as f16; a v head
 * rounded into its cache row. Bytes a row: read 4 * (2 heads + 2 kv_heads) hd,
 * write 4 * 2 heads hd (q, gate) + 2 * 2 kv_heads hd (the cache rows), plus the
 * norm weights (4 * 2 hd, cached): for the 9B (16 / 4 heads of 256) 40 KiB
 * read, 36 KiB written, against the chain's six launches, which pass over q
 * four times and over k three times. */
#ifndef Q35_KERNELS_ATTN_PREP_H
#define Q35_KERNELS_ATTN_PREP_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference of one row: full [2 heads hd + 2 kv_heads hd] as above ->
 * q, gate [heads * hd], k, v [kv_heads * hd] (k normed and rotated; neither
 * rounded: the reference of the f16 cache rows is their exact value). */
void q35_ref_attn_prep(double *q, double *gate, double *k, double *v, const double *full, const double *q_norm,
                       const double *k_norm, int heads, int kv_heads, int hd, int n_rot, int64_t pos, double rope_base,
                       double eps);

/* The largest head dimension the CUDA form takes: a warp a head, as the
 * per-head RMSNorm runs (kernels/norm_kernels.cuh), and even. */
#define Q35_ATTN_PREP_MAX_HD 510

/* CUDA: full [T][ld] f32 rows laid out [q_full | k | v]: columns [0, 2*heads*hd)
 * per head [q | gate] (attn_q's output as the model has it), [2*heads*hd,
 * 2*heads*hd + kv_heads*hd) k, the next kv_heads*hd v. Writes q [T][heads*hd]
 * f32 (rms-normed per head with q_norm [hd], then RoPE neox), gate
 * [T][heads*hd] f32, and at cache rows pos..pos+T-1 of k_cache / v_cache
 * ([max_seq][cache_stride] IEEE half bits): k normed with k_norm [hd] and
 * rotated, rounded to f16; v rounded to f16. Every other cache value is left
 * as it is. Device pointers, any alignment of their elements.
 *
 * Refuses (-1, the value and its limit in err): heads or kv_heads < 1; hd odd
 * or outside 2..Q35_ATTN_PREP_MAX_HD; n_rot odd or outside 0..hd; T outside
 * 0..INT32_MAX; pos < 0; pos + T > max_seq; ld < 2*heads*hd + 2*kv_heads*hd;
 * cache_stride < kv_heads*hd; rope_base <= 1; a pointer not aligned to its
 * element; outputs that overlap each other or full. T = 0 does nothing. */
int q35_attn_prep_rows_f16(float *q, float *gate, uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride,
                           int64_t max_seq, const float *full, int64_t ld, const float *q_norm, const float *k_norm,
                           int heads, int kv_heads, int hd, int n_rot, int64_t pos, int64_t T, double rope_base,
                           float eps, q35_stream stream, q35_error *err);

/* CUDA, the same at a position the device holds: rows at *pos_at .. *pos_at +
 * T - 1 (an int64 in device memory, read when the kernel runs: a launch
 * captured once in a CUDA graph serves every decode step). Bitwise the form
 * above at that position. The same refusals but the position's, which the
 * caller keeps within max_seq - T (it cannot be checked when the launch is
 * made); the overlap check takes the caches' every row. */
int q35_attn_prep_rows_f16_at(float *q, float *gate, uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride,
                              int64_t max_seq, const float *full, int64_t ld, const float *q_norm,
                              const float *k_norm, int heads, int kv_heads, int hd, int n_rot, const int64_t *pos_at,
                              int64_t T, double rope_base, float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTN_PREP_H */
