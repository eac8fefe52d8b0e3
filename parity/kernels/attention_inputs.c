#include "attention_inputs.h"

#include "core/half.h"
#include "core/parallel.h"
#include "model/shapes.h"
#include "parity/lib/gpu.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

att_layout att_model_layout(int i)
{
    static const char *const shapes[Q35_ATT_MODELS] = {"0.8b", "9b", "27b"};
    const q35_shape *m = i >= 0 && i < Q35_ATT_MODELS ? q35_shape_find(shapes[i]) : NULL;
    att_layout l = {"?", 0, 0};
    if (!m)
        return l;
    for (int c = 0; m->name[c] && c + 1 < (int)sizeof l.name; c++)
        l.name[c] = (char)toupper((unsigned char)m->name[c]), l.name[c + 1] = '\0';
    l.heads = m->n_head, l.kv_heads = m->n_head_kv;
    return l;
}

#define Q_SD 1.0 /* q ~ unit RMS per element, like RMSNorm + RoPE output: scores of sd ~1 */

struct ref_ctx {
    const att_inputs *in;
    double *out;
    const double *q, *k, *v;
};

static void ref_rows(void *p, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const struct ref_ctx *c = p;
    const att_inputs *in = c->in;
    const q35_attn_dims d = {in->s.heads, in->s.kv_heads, in->s.head_dim, in->s.kv_stride, 1.0 / sqrt(in->s.head_dim)};
    const int64_t w = att_width(in);
    for (int64_t t = begin; t < end; t++)
        if (q35_ref_attention(c->out + t * w, c->q + t * in->s.q_stride, c->k, c->v, in->pos0 + t + 1, d) != 0) {
            printf("FAIL  out of memory in the attention reference\n");
            exit(1);
        }
}

static float *checked(float *p)
{
    if (!p) {
        printf("FAIL  out of host memory for the attention inputs\n");
        exit(1);
    }
    return p;
}

/* The float64 reference of every row over caches k, v (q from in). */
static double *reference(const att_inputs *in, const float *k, const float *v)
{
    const int64_t nq = in->T * in->s.q_stride, nk = in->n_ctx * in->s.kv_stride;
    double *out = malloc((size_t)(in->T * att_width(in) > 0 ? in->T * att_width(in) : 1) * sizeof *out);
    struct ref_ctx c = {in, out, q35_host_f64(in->q, nq), q35_host_f64(k, nk), q35_host_f64(v, nk)};
    if (!c.q || !c.k || !c.v || !out) {
        printf("FAIL  out of host memory for the attention reference\n");
        exit(1);
    }
    q35_parallel_for(in->T, 1, ref_rows, &c);
    free((void *)c.q), free((void *)c.k), free((void *)c.v);
    return out;
}

void att_make(att_inputs *in, const att_layout *l, int head_dim, int64_t pos0, int64_t T, q35_rng *r)
{
    memset(in, 0, sizeof *in);
    in->s.heads = l->heads;
    in->s.kv_heads = l->kv_heads;
    in->s.head_dim = head_dim;
    in->s.q_stride = (int64_t)l->heads * head_dim + 8;
    in->s.o_stride = (int64_t)l->heads * head_dim + 4;
    in->s.kv_stride = (int64_t)l->kv_heads * head_dim;
    in->s.scale = (float)(1.0 / sqrt(head_dim));
    in->pos0 = pos0;
    in->T = T;
    in->n_ctx = pos0 + T;
    in->max_seq = in->n_ctx + 3;
    const int64_t nq = T * in->s.q_stride, nkv = in->max_seq * in->s.kv_stride;
    in->q = checked(q35_host_normal(nq, 0.0, Q_SD, r));
    in->k = checked(q35_host_normal(nkv, 0.0, 1.0, r));
    in->v = checked(q35_host_normal(nkv, 0.0, 1.0, r));
    for (int64_t t = 0; t < T; t++) /* the padding of each q row */
        q35_poison_f32(in->q + t * in->s.q_stride + att_width(in), in->s.q_stride - att_width(in));
    q35_poison_f32(in->k + in->n_ctx * in->s.kv_stride, (in->max_seq - in->n_ctx) * in->s.kv_stride);
    q35_poison_f32(in->v + in->n_ctx * in->s.kv_stride, (in->max_seq - in->n_ctx) * in->s.kv_stride);
    in->dq = q35_gpu_from_host(in->q, nq);
    in->dk = q35_gpu_from_host(in->k, nkv);
    in->dv = q35_gpu_from_host(in->v, nkv);

    in->ref = reference(in, in->k, in->v);

    /* the f16 caches, their widening, and the reference over them */
    uint16_t *k16 = malloc((size_t)nkv * sizeof *k16), *v16 = malloc((size_t)nkv * sizeof *v16);
    float *kw = checked(malloc((size_t)nkv * sizeof *kw)), *vw = checked(malloc((size_t)nkv * sizeof *vw));
    if (!k16 || !v16) {
        printf("FAIL  out of host memory for the f16 caches\n");
        exit(1);
    }
    for (int64_t i = 0; i < nkv; i++) {
        k16[i] = q35_f32_to_f16(in->k[i]), v16[i] = q35_f32_to_f16(in->v[i]);
        kw[i] = q35_f16_to_f32(k16[i]), vw[i] = q35_f16_to_f32(v16[i]);
    }
    in->dk16 = q35_gpu_bytes((size_t)nkv * sizeof *k16), in->dv16 = q35_gpu_bytes((size_t)nkv * sizeof *v16);
    q35_gpu_upload(in->dk16, k16, (size_t)nkv * sizeof *k16);
    q35_gpu_upload(in->dv16, v16, (size_t)nkv * sizeof *v16);
    in->dkw = q35_gpu_from_host(kw, nkv), in->dvw = q35_gpu_from_host(vw, nkv);
    in->ref16 = reference(in, kw, vw);
    free(k16), free(v16), free(kw), free(vw);
}

void att_free(att_inputs *in)
{
    free(in->q), free(in->k), free(in->v), free(in->ref), free(in->ref16);
    q35_gpu_free(in->dq), q35_gpu_free(in->dk), q35_gpu_free(in->dv);
    q35_gpu_free(in->dk16), q35_gpu_free(in->dv16), q35_gpu_free(in->dkw), q35_gpu_free(in->dvw);
    memset(in, 0, sizeof *in);
}

int64_t att_width(const att_inputs *in)
{
    return (int64_t)in->s.heads * in->s.head_dim;
}

float *att_output(const att_inputs *in)
{
    return q35_gpu_floats(in->T * in->s.o_stride);
}

float *att_download(const att_inputs *in, const float *d_out, int64_t *stray)
{
    float *full = q35_gpu_to_host(d_out, in->T * in->s.o_stride);
    const int64_t w = att_width(in);
    float *packed = checked(malloc((size_t)(in->T * w > 0 ? in->T * w : 1) * sizeof *packed));
    *stray = 0;
    for (int64_t t = 0; t < in->T; t++) {
        memcpy(packed + t * w, full + t * in->s.o_stride, (size_t)w * sizeof *packed);
        *stray += q35_gpu_written(full + t * in->s.o_stride + w, in->s.o_stride - w);
    }
    free(full);
    return packed;
}

double *att_widen(const float *x, int64_t n)
{
    double *d = q35_host_f64(x, n);
    if (!d) {
        printf("FAIL  out of host memory\n");
        exit(1);
    }
    return d;
}
