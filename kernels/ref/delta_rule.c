/* float64 references of kernels/delta_rule.h: the recurrence, and the chunked
 * WY / UT-transform form that must agree with it. */
#include "kernels/delta_rule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void q35_ref_delta_rule_step(double *o, double *S, const double *q, const double *k, const double *v, const double *g,
                             const double *beta, q35_delta_dims d)
{
    const double scale = 1.0 / sqrt((double)d.dk);
    for (int j = 0; j < d.hv; j++) {
        const int kh = j % d.hk;
        const double *qj = q + (int64_t)kh * d.dk, *kj = k + (int64_t)kh * d.dk;
        const double decay = exp(g[j]);
        double *Sj = S + (int64_t)j * d.dv * d.dk;
        for (int c = 0; c < d.dv; c++) {
            double *row = Sj + (int64_t)c * d.dk;
            double sk = 0.0;
            for (int i = 0; i < d.dk; i++) {
                row[i] *= decay;
                sk += row[i] * kj[i];
            }
            const double delta = (v[(int64_t)j * d.dv + c] - sk) * beta[j];
            double sq = 0.0;
            for (int i = 0; i < d.dk; i++) {
                row[i] += delta * kj[i];
                sq += row[i] * qj[i];
            }
            o[(int64_t)j * d.dv + c] = sq * scale;
        }
    }
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* One chunk of C tokens of one value head j. */
static void chunk_head(double *o, double *Sj, const double *q, const double *k, const double *v, int64_t stride,
                       const double *g, const double *beta, int64_t C, int j, q35_delta_dims d, double *work)
{
    const int kh = j % d.hk;
    const double scale = 1.0 / sqrt((double)d.dk);
    double *G = work;              /* [C] cumulative log decay */
    double *A = G + C;             /* [C][C] strictly lower */
    double *Tm = A + C * C;        /* [C][C] (I + A)^-1, unit lower */
    double *R = Tm + C * C;        /* [C][dv] right-hand sides */
    double *D = R + C * d.dv;      /* [C][dv] the deltas */
#define KT(t) (k + (t) * stride + (int64_t)kh * d.dk)
#define QT(t) (q + (t) * stride + (int64_t)kh * d.dk)
    double acc = 0.0;
    for (int64_t t = 0; t < C; t++) {
        acc += g[t * d.hv + j];
        G[t] = acc;
    }
    for (int64_t t = 0; t < C; t++)
        for (int64_t s = 0; s < C; s++)
            A[t * C + s] = s < t ? beta[t * d.hv + j] * exp(G[t] - G[s]) * dot(KT(t), KT(s), d.dk) : 0.0;
    /* the UT transform: T = (I + A)^-1 by forward substitution, column by column */
    for (int64_t col = 0; col < C; col++) {
        for (int64_t t = 0; t < C; t++) {
            double x = t == col ? 1.0 : 0.0;
            for (int64_t s = col; s < t; s++)
                x -= A[t * C + s] * Tm[s * C + col];
            Tm[t * C + col] = t < col ? 0.0 : x;
        }
    }
    for (int64_t t = 0; t < C; t++) {
        const double b = beta[t * d.hv + j], e = exp(G[t]);
        for (int c = 0; c < d.dv; c++)
            R[t * d.dv + c] = b * (v[t * stride + (int64_t)j * d.dv + c] - e * dot(Sj + (int64_t)c * d.dk, KT(t), d.dk));
    }
    for (int64_t t = 0; t < C; t++)
        for (int c = 0; c < d.dv; c++) {
            double x = 0.0;
            for (int64_t s = 0; s <= t; s++)
                x += Tm[t * C + s] * R[s * d.dv + c];
            D[t * d.dv + c] = x;
        }
    for (int64_t t = 0; t < C; t++) {
        const double e = exp(G[t]);
        for (int c = 0; c < d.dv; c++) {
            double x = e * dot(Sj + (int64_t)c * d.dk, QT(t), d.dk);
            for (int64_t s = 0; s <= t; s++)
                x += exp(G[t] - G[s]) * dot(KT(s), QT(t), d.dk) * D[s * d.dv + c];
            o[t * (int64_t)d.hv * d.dv + (int64_t)j * d.dv + c] = x * scale;
        }
    }
    const double eC = exp(G[C - 1]);
    for (int c = 0; c < d.dv; c++) {
        double *row = Sj + (int64_t)c * d.dk;
        for (int i = 0; i < d.dk; i++) {
            double x = eC * row[i];
            for (int64_t s = 0; s < C; s++)
                x += exp(G[C - 1] - G[s]) * D[s * d.dv + c] * KT(s)[i];
            row[i] = x;
        }
    }
#undef KT
#undef QT
}

int q35_ref_delta_rule_chunked(double *o, double *S, const double *q, const double *k, const double *v,
                               int64_t stride, const double *g, const double *beta, int64_t T, int chunk,
                               q35_delta_dims d)
{
    const int64_t C = chunk;
    double *work = malloc((size_t)(C + 2 * C * C + 2 * C * d.dv) * sizeof *work);
    if (!work)
        return -1;
    for (int64_t t0 = 0; t0 < T; t0 += C) {
        const int64_t n = T - t0 < C ? T - t0 : C;
        for (int j = 0; j < d.hv; j++)
            chunk_head(o + t0 * (int64_t)d.hv * d.dv, S + (int64_t)j * d.dv * d.dk, q + t0 * stride, k + t0 * stride,
                       v + t0 * stride, stride, g + t0 * d.hv, beta + t0 * d.hv, n, j, d, work);
    }
    free(work);
    return 0;
}
