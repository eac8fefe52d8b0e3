/* float64 references of kernels/attention.h: the full-matrix softmax and the
 * online softmax, two formulations that must agree. */
#include "kernels/attention.h"

#include <math.h>
#include <stdlib.h>

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

int q35_ref_attention(double *o, const double *q, const double *k_cache, const double *v_cache, int64_t n_ctx,
                      q35_attn_dims d)
{
    double *p = malloc((size_t)(n_ctx > 0 ? n_ctx : 1) * sizeof *p);
    if (!p)
        return -1;
    const int group = d.heads / d.kv_heads;
    for (int h = 0; h < d.heads; h++) {
        const int kvh = h / group;
        const double *qh = q + (int64_t)h * d.head_dim;
        double m = -INFINITY;
        for (int64_t t = 0; t < n_ctx; t++) {
            p[t] = dot(qh, k_cache + t * d.kv_stride + (int64_t)kvh * d.head_dim, d.head_dim) * d.scale;
            m = p[t] > m ? p[t] : m;
        }
        double sum = 0.0;
        for (int64_t t = 0; t < n_ctx; t++) {
            p[t] = exp(p[t] - m);
            sum += p[t];
        }
        double *oh = o + (int64_t)h * d.head_dim;
        for (int i = 0; i < d.head_dim; i++)
            oh[i] = 0.0;
        for (int64_t t = 0; t < n_ctx; t++) {
            const double *vt = v_cache + t * d.kv_stride + (int64_t)kvh * d.head_dim;
            const double w = p[t] / sum;
            for (int i = 0; i < d.head_dim; i++)
                oh[i] += w * vt[i];
        }
    }
    free(p);
    return 0;
}

void q35_ref_attention_online(double *o, const double *q, const double *k_cache, const double *v_cache,
                              int64_t n_ctx, int block, q35_attn_dims d)
{
    const int group = d.heads / d.kv_heads;
    for (int h = 0; h < d.heads; h++) {
        const int kvh = h / group;
        const double *qh = q + (int64_t)h * d.head_dim;
        double *oh = o + (int64_t)h * d.head_dim;
        for (int i = 0; i < d.head_dim; i++)
            oh[i] = 0.0;
        double m = -INFINITY, l = 0.0;
        for (int64_t t0 = 0; t0 < n_ctx; t0 += block) {
            const int64_t t1 = t0 + block < n_ctx ? t0 + block : n_ctx;
            double bm = -INFINITY;
            for (int64_t t = t0; t < t1; t++) {
                const double s = dot(qh, k_cache + t * d.kv_stride + (int64_t)kvh * d.head_dim, d.head_dim) * d.scale;
                bm = s > bm ? s : bm;
            }
            const double m_new = bm > m ? bm : m;
            const double rescale = exp(m - m_new); /* 0 on the first block */
            l *= rescale;
            for (int i = 0; i < d.head_dim; i++)
                oh[i] *= rescale;
            for (int64_t t = t0; t < t1; t++) {
                const double s = dot(qh, k_cache + t * d.kv_stride + (int64_t)kvh * d.head_dim, d.head_dim) * d.scale;
                const double p = exp(s - m_new);
                l += p;
                const double *vt = v_cache + t * d.kv_stride + (int64_t)kvh * d.head_dim;
                for (int i = 0; i < d.head_dim; i++)
                    oh[i] += p * vt[i];
            }
            m = m_new;
        }
        for (int i = 0; i < d.head_dim; i++)
            oh[i] /= l;
    }
}
