/* The f16 path's projection GEMM through cuBLASLt, its algorithm chosen per
 * shape by timing cuBLASLt's candidates (issue 21):
 *
 *     Y[t][o] = sum_i X16[t][i] * W16[o][i]            (add: Y[t][o] + the sum)
 *
 * X16 [T][k] and W16 [n][k] f16 (row-major), f32 accumulation and output, Y
 * [T][ldy] with columns 0..n-1 written and the others untouched: the product of
 * q35_gemm_f16_rounded and q35_gemm_f16_rounded_add (kernels/gemm.h), with
 * their shape checks and refusals, through cublasLtMatmul with the fastest of
 * cuBLASLt's candidates instead of cublasGemmEx's default algorithm
 * (bench_linear: ceiling/hgemm_lt against ceiling/hgemm). Its f16-out form
 * (q35_hgemm_rounded_f16, below) rounds that f32 result once to f16.
 *
 * Bound: the f16 path's (gemm.h; parity/kernels/test_kernels_linear.c checks
 * both against float64 at the same limits). Not bitwise cublasGemmEx: another
 * algorithm may split K differently, so the order of the f32 additions, and so
 * the last bits, differ; and since the choice is by timing, two processes (or
 * two contexts) may pick different algorithms for one shape and differ in
 * their bits. Within one context a shape's algorithm is fixed once chosen:
 * calls of one shape on the same inputs give the same bits.
 *
 * A shape is (n, k, T, ldy, what y holds: f32, f32 added to, or f16) and the
 * alignment of the three pointers (up to 256 bytes each: cuBLASLt's kernels
 * need their operands aligned, so an algorithm chosen for aligned pointers may
 * not run on others): an f32 and an f16 call of one size are two shapes, each
 * with its own algorithm. At a shape's first call the context asks cuBLASLt's
 * heuristic for up to Q35_HGEMM_CANDIDATES algorithms (a workspace of
 * Q35_LT_WORKSPACE_BYTES at most); with tuning on it times each (1 warm-up and
 * 3 timed calls between CUDA events on the context's stream, then waits for
 * them: ~8 x 4 GEMMs of the shape and a host synchronisation, once per shape)
 * and keeps the fastest; with tuning off, the heuristic's first. A new row
 * count is a new shape (a prefill's shorter last chunk tunes its own). Timing
 * calls with add write a copy of y (memory of y's size held while tuning),
 * never y: y sees one call. While the stream is being captured into a CUDA
 * graph (cudaStreamIsCapturing) nothing is timed: the shape takes the
 * heuristic's first, and is tuned at its first call outside a capture (its
 * algorithm may change then, once). The last Q35_HGEMM_CACHE shapes are kept, a
 * new one replacing the oldest. */
#ifndef Q35_KERNELS_GEMM_LT_H
#define Q35_KERNELS_GEMM_LT_H

#include "kernels/blas.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_HGEMM_CANDIDATES 8 /* the heuristic's algorithms a shape's tuning times */
#define Q35_HGEMM_TUNE_BURST 1  /* q35_hgemm_create's tune: 1 warm-up and 3 timed calls a candidate */
#define Q35_HGEMM_TUNE_STEADY 2 /* the candidates timed in turns after a heat, none resting (below) */
#define Q35_HGEMM_CACHE 64     /* shapes whose descriptors and algorithm are kept */

/* A cuBLASLt handle, its workspace (Q35_LT_WORKSPACE_BYTES), two CUDA events
 * and the cache of shapes; bound to a stream, used from one thread at a time. */
typedef struct q35_hgemm q35_hgemm;

/* On the current device, work on `stream`; tune Q35_HGEMM_TUNE_BURST (1)
 * times the candidates of each new shape, Q35_HGEMM_TUNE_STEADY (2) times them
 * as the prefill runs them, 0 keeps the heuristic's first. 0, or -1 naming
 * what failed (a tune outside 0..2 among it).
 *
 * Steady tuning. A burst of four calls a candidate, with the host waiting
 * between candidates, times each at the clocks of a device at rest; the
 * prefill runs its GEMMs back to back at the power limit (a lower clock than
 * the kernel benchmarks': bench/results/), where the ranking of candidates that
 * draw different power for the same FLOP may differ. So here each candidate is
 * first timed as in a burst (which sizes its calls to ~1 ms), then the first
 * candidate runs ~20 ms to bring the device to its power limit, then five
 * rounds take every candidate in turn for ~1 ms each, no wait between them; a
 * candidate's time is its median round's. ~60 ms of GPU time a shape more
 * than a burst. Opt-in (the model's switch tune-steady): it picked no faster
 * algorithms (the prefill in turns with the burst, bench/results/index.tsv,
 * family prefill). */
int q35_hgemm_create(q35_hgemm **out, q35_stream stream, int tune, q35_error *err);
void q35_hgemm_destroy(q35_hgemm *h); /* NULL is fine */
/* The tune h was made with (0, Q35_HGEMM_TUNE_BURST or Q35_HGEMM_TUNE_STEADY). */
int q35_hgemm_tune(const q35_hgemm *h);

/* CUDA: y [T][ldy] = x16 [T][k] w16^T (w16 [n][k]), or with add y += it
 * (cuBLASLt's beta = 1, in place), as above. n, k >= 1, 0 <= T, n <= ldy, each
 * at most INT32_MAX (T = 0 does nothing); the refusals of gemm.h's f16 GEMM
 * (named "hgemm", "hgemm_add"), and a shape cuBLASLt has no algorithm for,
 * naming it. */
int q35_hgemm_rounded(q35_hgemm *h, float *y, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16,
                      int64_t n, int64_t k, int add, q35_error *err);

/* CUDA: the same product with f16 out (cuBLASLt's D type 16F): y16 [T][ldy]
 * IEEE half bits, columns 0..n-1 written, the others untouched; the f32
 * accumulation rounded once to nearest even in the epilogue, for a product
 * only an op that widens it again reads (the f16 path's [gate | up], read by
 * q35_swiglu_rows_f16_f16, kernels/pointwise.h): half the bytes written and
 * read of the f32 form. The limits and refusals of q35_hgemm_rounded (named
 * "hgemm_f16"); any ldy >= n cuBLASLt has an algorithm for (its fastest
 * kernels want rows of whole 16 bytes: ldy a multiple of 8, y16 16-byte
 * aligned; the alignment is in the shape), else refused, naming the shape.
 *
 * Bound: the rounding adds at most 2^-11 of a value (|y16 - y| <= 2^-11 |y|
 * for |y| in f16's normal range, 2^-14 .. 65504; an absolute 2^-25 below;
 * beyond 65504 an infinity) to the f16 path's bound (gemm.h: rel Linf 2e-3
 * against float64 of the unrounded operands, 1e-4 against the f16-rounded
 * ones), so in rel Linf (max |error| / max |reference|) 2e-3 + 2^-11 ~ 2.5e-3
 * and 1e-4 + 2^-11 ~ 5.9e-4; over values spread across binades its rms is
 * 2^-11 / sqrt(3 E[m^2]) ~ 1.9e-4 of a value (m the mantissa, log-uniform on
 * [1, 2): E[m^2] = 3 / (2 ln 2)), the size of one operand's f16 rounding: in
 * quadrature with the two operands' (sqrt(2) x 1.9e-4 ~ 2.7e-4) the rel L2
 * against float64 of the unrounded operands goes from ~2.7e-4 to ~3.3e-4.
 *
 * Split-K: cuBLASLt's heuristic is asked only for algorithms whose split of
 * K, if any, keeps the partial sums in f32 (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
 * cublasLt.h's INPLACE scheme adds the parts in the output's type, OUTPUT_TYPE
 * stores them in it: each a rounding of a partial sum to f16), so the rounding
 * is the one above. That every kernel it offers (sm_90's nvjet ones among
 * them) keeps to this is not documented: parity/kernels/test_kernels_linear.c
 * measures it, each value against float64 of the f16 operands within 2^-11 of
 * itself plus the f32 accumulation's 1e-4 of the largest. Not bitwise the f32 form rounded: the
 * f16 shape's algorithm (another kernel, another split of K) is chosen on its
 * own, so a value whose f32 sums differ in their last bits across a rounding
 * boundary differs by one f16 step. Within one context a shape's calls on the
 * same inputs give the same bits, as the f32 form's. */
int q35_hgemm_rounded_f16(q35_hgemm *h, uint16_t *y16, int64_t ldy, const uint16_t *x16, int64_t T,
                          const uint16_t *w16, int64_t n, int64_t k, q35_error *err);

/* How the algorithm of the last shape called was chosen. */
typedef struct q35_hgemm_choice {
    int candidates; /* the heuristic's algorithms for the shape (at most Q35_HGEMM_CANDIDATES) */
    int chosen;     /* the rank of the one kept in the heuristic's order (0: its first) */
    int tuned;      /* 1: chosen by timing; 0: the heuristic's first (tuning off, or under a capture) */
    float first_ms; /* ms a call of the heuristic's first, as timed (-1: not timed) */
    float best_ms;  /* ms a call of the one kept, as timed (-1: not timed) */
} q35_hgemm_choice;

/* 0 with the choice of the shape of the last successful q35_hgemm_rounded or
 * q35_hgemm_rounded_f16 with T >= 1; -1 when there was none. */
int q35_hgemm_last_choice(const q35_hgemm *h, q35_hgemm_choice *out);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMM_LT_H */
