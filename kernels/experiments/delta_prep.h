/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels): the fused DeltaNet
 * prologue (kernels/delta_prep.h) with the warp's share of rows chosen, and
 * (the second form, below) with the fast SiLU. run 0:
 * one tile of 8 rows a warp, every input row (halo included) loaded at once,
 * then computed: q35_delta_prep_rows's. run 1: runs of four tiles a warp, the
 * next tile's rows loading while the current one's arithmetic runs, its halo
 * kept in registers (for K up to 5; past it run 1 is run 0: the run's
 * registers would spill). The same device code and arithmetic
 * (kernels/delta_prep.cuh), so the same bits; the suite checks both runs
 * bitwise q35_delta_prep_rows at every case. Refuses what q35_delta_prep_rows
 * refuses, and run outside 0..1.
 *
 * Run 1 is slower (bench delta_prep_run; bench/results/index.tsv, family
 * kernels): its loads overlapping arithmetic within a warp do not pay for
 * what they cost. It takes more registers a thread, so an SM holds fewer
 * warps; the loads of a run are four dependent waits of 8 rows where run 0
 * has one of 11, and the 3 halo rows it saves were read from L2 anyway. So
 * the model keeps run 0. */
#ifndef Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H
#define Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H

#include "kernels/delta_prep.h"

#ifdef __cplusplus
extern "C" {
#endif

int q35_delta_prep_rows_run(int run, float *out, int64_t out_stride, float *g, float *beta, float *win,
                            const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                            const float *dt, const float *a, q35_delta_prep_dims d, int64_t T, float eps,
                            q35_stream stream, q35_error *err);

/* The experiment's second form: q35_delta_prep_rows (one tile a warp, out in
 * f32) with its conv's SiLU in the fast form of q35_swiglu (q35_silu_fast,
 * kernels/reduce.cuh: __expf and __fdividef), so not the chain's bits: within
 * relative (4.5 + 1.173 |x|) 2^-23 of its SiLU (x the conv's output; 6e-6 at
 * |x| = 40), inside the conv and L2 suites' 1e-5 against float64, which the
 * suite asserts; g, beta and the window bitwise q35_delta_prep_rows's (no SiLU
 * in them). Why: most of the instructions the units' kernel issues for a
 * warp's tile of 8 rows x 128 channels are the SiLU's expf range reduction
 * and IEEE division (docs/STATUS.md, the chunked delta rule's prologue
 * paragraph). Faster, by less than the instructions saved (their count was
 * not the whole bound) and by less than the prefill's noise (bench
 * delta_prep_fast_silu; bench/results/index.tsv, family kernels); not taken
 * into the model, where it would need the chain's conv1d in the same form to
 * keep the two bitwise. Refuses what q35_delta_prep_rows refuses. */
int q35_delta_prep_rows_fast_silu(float *out, int64_t out_stride, float *g, float *beta, float *win, const float *mix,
                                  int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                                  const float *dt, const float *a, q35_delta_prep_dims d, int64_t T, float eps,
                                  q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H */
