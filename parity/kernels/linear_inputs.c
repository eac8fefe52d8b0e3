/* Test helper for test_kernels_linear (linear_inputs.h). */
#include "linear_inputs.h"

#include "core/half.h"
#include "core/quant_blocks.h"
#include "kernels/linear.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void q35_model_projections(q35_proj out[Q35_N_PROJ], const q35_shape *m)
{
    const int64_t H = m->n_embd, hk = m->ssm_hk, hv = m->ssm_hv, dk = m->ssm_dk, dv = m->ssm_dv;
    const int64_t heads = m->n_head, kv = m->n_head_kv, hd = m->head_dim, ffn = m->n_ff;
    const q35_proj p[Q35_N_PROJ] = {
        {"attn_qkv", 2 * hk * dk + hv * dv, H}, {"attn_gate", hv * dv, H},     {"ssm_alpha/beta", hv, H},
        {"ssm_out", H, hv * dv},                {"attn_q", 2 * heads * hd, H}, {"attn_k/v", kv * hd, H},
        {"attn_output", H, heads * hd},         {"ffn_gate/up", ffn, H},      {"ffn_down", H, ffn},
        {"lm_head", m->n_vocab, H},
    };
    memcpy(out, p, sizeof p);
}

/* An f16 scale of magnitude in [lo, 2 lo), sign as asked. */
static uint16_t scale_bits(q35_rng *r, float lo, bool negative_too)
{
    const float v = lo * (float)(1.0 + q35_rng_uniform(r));
    return q35_f32_to_f16(negative_too && (q35_rng_next(r) & 1) ? -v : v);
}

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8);
}

uint8_t *q35_test_weight(q35_type type, int64_t n, int64_t k, q35_rng *r)
{
    const size_t row_bytes = q35_row_bytes(type, k), bytes = row_bytes * (size_t)n;
    uint8_t *w = malloc(bytes ? bytes : 1);
    if (!w) {
        printf("FAIL  out of memory for a weight of %zu bytes\n", bytes);
        exit(1);
    }
    const q35_type_info *ti = q35_type_get(type);
    if (ti->block_elems == 1) { /* plain: N(0, 0.05) */
        for (size_t i = 0; i < bytes / (size_t)ti->block_bytes; i++) {
            const float v = 0.05f * q35_rng_normal_fast(r);
            if (type == Q35_TYPE_F32)
                memcpy(w + 4 * i, &v, 4);
            else
                put_u16(w + 2 * i, type == Q35_TYPE_F16 ? q35_f32_to_f16(v) : q35_f32_to_bf16(v));
        }
        return w;
    }
    for (size_t i = 0; i < bytes; i += 8) { /* every level and sub-block scale */
        const uint64_t v = q35_rng_next(r);
        memcpy(w + i, &v, bytes - i < 8 ? bytes - i : 8);
    }
    /* scales: |x| up to about 0.1 (Q4_K: 63 * 15 * d + 63 * dmin) */
    for (size_t b = 0; b < bytes / (size_t)ti->block_bytes; b++) {
        uint8_t *p = w + b * (size_t)ti->block_bytes;
        switch (type) {
        case Q35_TYPE_Q4_K:
        case Q35_TYPE_Q5_K:
            put_u16(p, scale_bits(r, 5e-5f, false));
            put_u16(p + 2, scale_bits(r, 5e-4f, false));
            break;
        case Q35_TYPE_Q6_K:
            put_u16(p + 208, scale_bits(r, 2.5e-5f, true));
            break;
        case Q35_TYPE_Q4_1: /* 15 d + m, 31 d + m */
        case Q35_TYPE_Q5_1:
            put_u16(p, scale_bits(r, type == Q35_TYPE_Q4_1 ? 3e-3f : 1.5e-3f, false));
            put_u16(p + 2, scale_bits(r, 2.5e-2f, true));
            break;
        case Q35_TYPE_Q2_K: /* 15 * 3 * d - 15 * dmin */
            put_u16(p + 80, scale_bits(r, 1e-3f, false));
            put_u16(p + 82, scale_bits(r, 3e-3f, false));
            break;
        case Q35_TYPE_Q3_K: /* 32 * 4 * d */
            put_u16(p + 108, scale_bits(r, 4e-4f, true));
            break;
        case Q35_TYPE_IQ4_NL: /* 127 d */
        case Q35_TYPE_IQ4_XS: /* 32 * 127 d */
            put_u16(p, scale_bits(r, type == Q35_TYPE_IQ4_NL ? 4e-4f : 1.2e-5f, true));
            break;
        case Q35_TYPE_IQ2_XXS: /* 15.5 / 4 * 43 d */
        case Q35_TYPE_IQ2_XS:
        case Q35_TYPE_IQ2_S:
            put_u16(p, scale_bits(r, 6e-4f, true));
            break;
        case Q35_TYPE_IQ3_XXS: /* 15.5 / 2 * 62 d, 31 * 15 d */
        case Q35_TYPE_IQ3_S:
            put_u16(p, scale_bits(r, 2e-4f, true));
            break;
        case Q35_TYPE_IQ1_S: /* 15 * 1.125 d */
            put_u16(p, scale_bits(r, 6e-3f, true));
            break;
        case Q35_TYPE_IQ1_M: /* the same, d in the top nibbles of the 4 scale words */
            q35_iq1_m_set_d(p + 48, scale_bits(r, 6e-3f, true));
            break;
        default: /* Q8_0, Q4_0, Q5_0: d leads */
            put_u16(p, scale_bits(r, type == Q35_TYPE_Q8_0 ? 4e-4f : 3e-3f, true));
            break;
        }
    }
    return w;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t *q35_test_columns(int64_t n, int64_t most, int64_t *m, q35_rng *r)
{
    *m = n <= most ? n : most;
    int64_t *c = malloc((size_t)*m * sizeof *c);
    if (n <= most) {
        for (int64_t i = 0; i < n; i++)
            c[i] = i;
        return c;
    }
    uint8_t *taken = calloc((size_t)n, 1);
    c[0] = 0, c[1] = n - 1;
    taken[0] = taken[n - 1] = 1;
    for (int64_t i = 2; i < most;) {
        const int64_t o = (int64_t)(q35_rng_next(r) % (uint64_t)n);
        if (!taken[o])
            taken[o] = 1, c[i++] = o;
    }
    free(taken);
    qsort(c, (size_t)most, sizeof *c, cmp_i64);
    return c;
}

void q35_test_ref_columns(double *ref, const float *x, int64_t T, const uint8_t *w, q35_type type, int64_t k,
                          const int64_t *cols, int64_t m, bool f16)
{
    const size_t row_bytes = q35_row_bytes(type, k);
    const q35_type wtype = f16 ? Q35_TYPE_F16 : type;
    const size_t sub_row = q35_row_bytes(wtype, k);
    uint8_t *sub = malloc(sub_row * (size_t)m);
    float *row = malloc((size_t)k * sizeof *row);
    for (int64_t j = 0; j < m; j++) {
        const uint8_t *src = w + (size_t)cols[j] * row_bytes;
        if (!f16) {
            memcpy(sub + (size_t)j * sub_row, src, row_bytes);
            continue;
        }
        q35_dequantize(type, src, row, k);
        for (int64_t i = 0; i < k; i++)
            put_u16(sub + (size_t)j * sub_row + 2 * i, q35_f32_to_f16(row[i]));
    }
    double *xd = malloc((size_t)(T * k) * sizeof *xd);
    for (int64_t i = 0; i < T * k; i++)
        xd[i] = f16 ? (double)q35_f16_to_f32(q35_f32_to_f16(x[i])) : (double)x[i];
    if (q35_ref_linear(ref, xd, wtype, sub, m, k, T)) {
        printf("FAIL  out of memory in q35_ref_linear\n");
        exit(1);
    }
    free(sub), free(row), free(xd);
}
