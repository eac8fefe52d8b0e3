/* float64 reference of kernels/linear.h. */
#include "core/parallel.h"
#include "kernels/linear.h"

#include <stdlib.h>

struct linear_job {
    double *y;
    const double *x;
    q35_type type;
    const unsigned char *w;
    size_t row_bytes;
    int64_t n_out, n_in, rows;
    float *scratch; /* [threads][n_in] */
};

/* sum_i x[i] * w[i] in float64, in a fixed order: four interleaved partial sums
 * (i mod 4) combined pairwise, then the tail. Deterministic, whatever the caller. */
static double dot(const double *x, const float *w, int64_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i + 0] * (double)w[i + 0];
        s1 += x[i + 1] * (double)w[i + 1];
        s2 += x[i + 2] * (double)w[i + 2];
        s3 += x[i + 3] * (double)w[i + 3];
    }
    double s = (s0 + s1) + (s2 + s3);
    for (; i < n; i++)
        s += x[i] * (double)w[i];
    return s;
}

static void linear_range(void *ctx, int64_t begin, int64_t end, int thread)
{
    const struct linear_job *j = ctx;
    float *wrow = j->scratch + (int64_t)thread * j->n_in;
    for (int64_t o = begin; o < end; o++) {
        q35_dequantize(j->type, j->w + (size_t)o * j->row_bytes, wrow, j->n_in);
        for (int64_t t = 0; t < j->rows; t++)
            j->y[t * j->n_out + o] = dot(j->x + t * j->n_in, wrow, j->n_in);
    }
}

int q35_ref_linear(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                   int64_t rows)
{
    struct linear_job j = {
        .y = y, .x = x, .type = type, .w = w, .row_bytes = q35_row_bytes(type, n_in),
        .n_out = n_out, .n_in = n_in, .rows = rows,
    };
    j.scratch = malloc((size_t)q35_threads() * (size_t)n_in * sizeof(float));
    if (!j.scratch)
        return -1;
    /* a grain of output rows big enough to amortise thread start, small enough to balance */
    const int64_t work_per_row = n_in * (rows + 4);
    int64_t grain = work_per_row > 0 ? (1 << 20) / work_per_row : n_out;
    if (grain < 1)
        grain = 1;
    q35_parallel_for(n_out, grain, linear_range, &j);
    free(j.scratch);
    return 0;
}
