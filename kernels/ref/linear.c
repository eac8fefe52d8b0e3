/* float64 reference of kernels/linear.h. */
#include "core/half.h"
#include "core/parallel.h"
#include "kernels/gemv_q8.h"
#include "kernels/linear.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct linear_job {
    double *y;
    const double *x;
    q35_type type;
    const unsigned char *w;
    size_t row_bytes;
    int64_t n_out, n_in, rows;
    float *scratch; /* [threads][n_in] */
    const double *sdiff; /* Q8_1 activations (ggml): [rows][n_in / 32] stored block sum - sum of the block's x */
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

/* ggml multiplies an offset block's offset m by the activation block's stored sum
 * s = f16(d * sum q), not by the sum of its values d * q: the difference, summed
 * over the row's blocks; 0 where the activations are not Q8_1 (ggml_act.c). */
static double offset_term(const struct linear_job *j, int64_t o, int64_t t)
{
    if (!j->sdiff)
        return 0.0;
    const int64_t nb = j->n_in / 32;
    const size_t bb = (size_t)q35_type_get(j->type)->block_bytes;
    const unsigned char *row = j->w + (size_t)o * j->row_bytes;
    double sum = 0.0;
    for (int64_t b = 0; b < nb; b++) {
        uint16_t m; /* Q4_1 and Q5_1 blocks: f16 d, then f16 m */
        memcpy(&m, row + (size_t)b * bb + 2, sizeof m);
        sum += (double)q35_f16_to_f32(m) * j->sdiff[t * nb + b];
    }
    return sum;
}

static void linear_range(void *ctx, int64_t begin, int64_t end, int thread)
{
    const struct linear_job *j = ctx;
    float *wrow = j->scratch + (int64_t)thread * j->n_in;
    for (int64_t o = begin; o < end; o++) {
        q35_dequantize(j->type, j->w + (size_t)o * j->row_bytes, wrow, j->n_in);
        for (int64_t t = 0; t < j->rows; t++)
            j->y[t * j->n_out + o] = dot(j->x + t * j->n_in, wrow, j->n_in) + offset_term(j, o, t);
    }
}

int q35_ref_linear(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                   int64_t rows)
{
    return q35_ref_linear_act(y, x, type, w, n_out, n_in, rows, Q35_ACT_EXACT);
}

int q35_ref_linear_act(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                       int64_t rows, q35_act_quant act)
{
    struct linear_job j = {
        .y = y, .x = x, .type = type, .w = w, .row_bytes = q35_row_bytes(type, n_in),
        .n_out = n_out, .n_in = n_in, .rows = rows,
    };
    double *xq = NULL, *sdiff = NULL;
    const bool q8_1 = act == Q35_ACT_GGML && q35_ggml_act_type(type) == Q35_TYPE_Q8_1;
    if (act == Q35_ACT_GGML) {
        xq = malloc((size_t)rows * (size_t)n_in * sizeof *xq);
        sdiff = q8_1 ? malloc((size_t)rows * (size_t)(n_in / 32) * sizeof *sdiff) : NULL;
        float *tmp = malloc((size_t)n_in * sizeof *tmp);
        if (!xq || !tmp || (q8_1 && !sdiff)) {
            free(xq), free(sdiff), free(tmp);
            return -1;
        }
        for (int64_t t = 0; t < rows; t++) {
            double *xt = xq + t * n_in, *st = q8_1 ? sdiff + t * (n_in / 32) : NULL;
            q35_ggml_act_row(type, x + t * n_in, xt, st, tmp, n_in);
            for (int64_t b = 0; st && b < n_in / 32; b++)
                for (int i = 0; i < 32; i++)
                    st[b] -= xt[b * 32 + i];
        }
        free(tmp);
        j.x = xq;
        j.sdiff = sdiff;
    }
    if (act == Q35_ACT_Q8 && q35_gemv_q8_takes(type) && n_in % 32 == 0) {
        xq = malloc((size_t)rows * (size_t)n_in * sizeof *xq);
        float *xf = malloc((size_t)n_in * sizeof *xf), *d = malloc((size_t)(n_in / 32) * 2 * sizeof *d);
        int8_t *q = malloc((size_t)n_in);
        if (!xq || !xf || !d || !q) {
            free(xq), free(xf), free(d), free(q);
            return -1;
        }
        for (int64_t t = 0; t < rows; t++) {
            for (int64_t i = 0; i < n_in; i++)
                xf[i] = (float)x[t * n_in + i];
            q35_ref_gemv_q8_quantize(q, d, d + n_in / 32, xf, n_in);
            for (int64_t i = 0; i < n_in; i++)
                xq[t * n_in + i] = (double)d[i / 32] * (double)q[i];
        }
        free(xf), free(d), free(q);
        j.x = xq;
    }
    j.scratch = malloc((size_t)q35_threads() * (size_t)n_in * sizeof(float));
    if (!j.scratch) {
        free(xq), free(sdiff);
        return -1;
    }
    /* a grain of output rows big enough to amortise thread start, small enough to balance */
    const int64_t work_per_row = n_in * (rows + 4);
    int64_t grain = work_per_row > 0 ? (1 << 20) / work_per_row : n_out;
    if (grain < 1)
        grain = 1;
    q35_parallel_for(n_out, grain, linear_range, &j);
    free(j.scratch), free(xq), free(sdiff);
    return 0;
}
