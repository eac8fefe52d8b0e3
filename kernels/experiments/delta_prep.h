/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels): the fused DeltaNet
 * prologue (kernels/delta_prep.h) with the warp's share of rows chosen by the
 * caller instead of by size, for the A/B of the two and so the suite runs both
 * at every case. run 0: one tile of 8 rows a warp, every input row (halo
 * included) loaded at once, then computed (the kernel of fb0947d .. 9ce79ab);
 * run 1: runs of four tiles a warp, the next tile's rows loading while the
 * current one's arithmetic runs, its halo kept in registers (for K up to 5;
 * past it run 1 is run 0: the run's registers would spill). The same device
 * code and arithmetic (kernels/delta_prep.cuh), so the same bits as
 * q35_delta_prep_rows, which takes run 1 from 2048 rows of 64 groups (the 9B)
 * and run 0 below. Refuses what q35_delta_prep_rows refuses, and run outside
 * 0..1. */
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

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_PREP_H */
