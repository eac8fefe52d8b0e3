/* The projections of the CUDA model's layers (cuda_internal.h): the
 * per-call projection (q35_run_choose picks one of q35_project_*), the fast
 * paths' GEMM inputs and outputs, and a decode step's grouped GEMVs. */
#include "cuda_internal.h"

#include "kernels/fp8.h"
#include "kernels/gemm.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv.h"
#include "kernels/gemv_q8.h"

#include <stdio.h>
#include <string.h>

/* ---- projections: y [T][ldy] = x [T][k] . W^T ---- */

int q35_project_gemv(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    (void)ldy; /* one row */
    return q35_gemv(y, w->w, w->type, w->n, w->k, x, Q35_VARIANT_DEFAULT, r->cm->stream, r->err);
}

int q35_project_gemv_rows(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    return q35_gemv_rows(y, ldy, w->w, w->type, w->n, w->k, x, r->T, r->cm->stream, r->err);
}

int q35_project_gemm_f32(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    return q35_gemm_f32(r->cm->blas, y, ldy, x, r->T, w->w, w->type, w->n, w->k, r->cm->dequant, r->err);
}

/* The fast paths' GEMM input: x rounded to f16 (or quantized to e4m3 with a
 * scale a row) into cm->f16_act, once for the projections in a row that read
 * the same x (qkv, z, a, b; gate, up; q, k, v). */
int q35_round_f16(q35_run *r, const float *x, const q35_dweight *w)
{
    return q35_gemm_f16_round(r->cm->blas, r->cm->f16_act, x, r->T, w->k, r->err);
}

/* the fp8 input's codes [T][k], then its scales [T], in the activation scratch */
uint8_t *q35_fp8_codes(q35_run *r)
{
    return (uint8_t *)r->cm->f16_act;
}

float *q35_fp8_scales(q35_run *r, int64_t k)
{
    return (float *)(q35_fp8_codes(r) + q35_align_bytes((uint64_t)(r->T * k)));
}

static int quantize_fp8(q35_run *r, const float *x, const q35_dweight *w)
{
    return q35_fp8_quantize_rows(q35_fp8_codes(r), q35_fp8_scales(r, w->k), x, r->T, w->k, w->k, r->cm->stream, r->err);
}

int q35_gemm_input(q35_run *r, const float *x, const q35_dweight *w, q35_input_fn make)
{
    if (r->x16_of == x)
        return 0;
    if (x == r->x16_only)
        return q35_fail(r->err, "%s: its input was written only in the GEMM's form, and another op has reused the "
                        "scratch since (the layer's op order is wrong for the fast GEMM path)", w->label);
    r->x16_of = NULL;
    if (make(r, x, w))
        return -1;
    r->x16_of = x;
    return 0;
}

/* After a GEMM into y: y's old input form is stale if y was the x it came from. */
static int gemm_done(q35_run *r, const float *y, int rc)
{
    if (y == r->x16_of)
        r->x16_of = NULL;
    if (y == r->xq_of)
        r->xq_of = NULL;
    return rc;
}

/* Whether the f16 path's GEMMs run through the tuned cuBLASLt context (kernels/gemm_lt.h), not cublasGemmEx */
bool q35_hgemm_tuned(const q35_run *r)
{
    return r->cm->hgemm && !r->cm->paths.gemm_lt_off;
}

/* y = x16 W^T as `out` says, x16 [T][w->k] f16 rows; f32 out through the sm_90a GEMM where `sm90`
 * allows it (the paths' choice for this projection) and w's shape fits it (n even, k a multiple of
 * 64), else through the tuned cuBLASLt context where the model has one, else cublasGemmEx (f32 out
 * only) */
int q35_proj_f16_rows(q35_run *r, void *y, int64_t ldy, const uint16_t *x16, const q35_dweight *w,
                         q35_gemm_out out, bool sm90)
{
    q35_error *err = r->err;
    int rc;
    if (out != Q35_OUT_16 && sm90 && w->n % 2 == 0 && w->k % 64 == 0)
        rc = q35_gemm_sm90_f32((float *)y, ldy, x16, w->k, w->w16, w->k, w->n, w->k, r->T, out == Q35_OUT_F32_ADD,
                               r->cm->paths.gemm_sm90_variant, r->cm->stream, err);
    else if (out == Q35_OUT_16)
        rc = q35_hgemm_rounded_f16(r->cm->hgemm, y, ldy, x16, r->T, w->w16, w->n, w->k, err);
    else if (q35_hgemm_tuned(r))
        rc = q35_hgemm_rounded(r->cm->hgemm, y, ldy, x16, r->T, w->w16, w->n, w->k, out == Q35_OUT_F32_ADD, err);
    else
        rc = out == Q35_OUT_F32_ADD ? q35_gemm_f16_rounded_add(r->cm->blas, y, ldy, x16, r->T, w->w16, w->n, w->k, err)
                                : q35_gemm_f16_rounded(r->cm->blas, y, ldy, x16, r->T, w->w16, w->n, w->k, err);
    return gemm_done(r, y, rc);
}

/* y = x W^T as `out` says, x's f16 form (the activation scratch) made first where not current */
int q35_proj_f16(q35_run *r, void *y, int64_t ldy, const float *x, const q35_dweight *w, q35_gemm_out out)
{
    if (!w->w16)
        return q35_fail(r->err, "%s: the f16 GEMM path without its f16 weight", w->label);
    if (out == Q35_OUT_16 && !q35_hgemm_tuned(r))
        return q35_fail(r->err, "%s: f16 out needs the tuned cuBLASLt GEMM (off: GEMM kernel cublas)", w->label);
    if (q35_gemm_input(r, x, w, q35_round_f16))
        return -1;
    return q35_proj_f16_rows(r, y, ldy, r->cm->f16_act, w, out, q35_paths_gemm_sm90_proj(&r->cm->paths));
}

int q35_project_gemm_f16(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    return q35_proj_f16(r, y, ldy, x, w, Q35_OUT_F32);
}

int q35_proj_fp8(q35_run *r, void *y, int64_t ldy, const float *x, const q35_dweight *w, q35_gemm_out out)
{
    if (!w->w8)
        return q35_fail(r->err, "%s: the fp8 GEMM path without its fp8 weight", w->label);
    if (q35_gemm_input(r, x, w, quantize_fp8))
        return -1;
    q35_fp8_gemm *g = r->cm->fp8_gemm;
    const uint8_t *xq = q35_fp8_codes(r);
    const float *sx = q35_fp8_scales(r, w->k);
    const int rc = out == Q35_OUT_16 ? q35_gemm_fp8_bf16(g, y, ldy, xq, sx, r->T, w->w8, w->s8, w->n, w->k, r->err)
                   : out == Q35_OUT_F32_ADD ? q35_gemm_fp8_add(g, y, ldy, xq, sx, r->T, w->w8, w->s8, w->n, w->k, r->err)
                                        : q35_gemm_fp8(g, y, ldy, xq, sx, r->T, w->w8, w->s8, w->n, w->k, r->err);
    return gemm_done(r, y, rc);
}

int q35_project_gemm_fp8(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    return q35_proj_fp8(r, y, ldy, x, w, Q35_OUT_F32);
}

/* A projection's op (NVTX range `label`) begun: r->T rows through w, its 2 T n k FLOP counted */
void q35_proj_begin(q35_run *r, const q35_dweight *w, const char *label)
{
    q35_op_begin(r, Q35_OP_PROJ, label);
    q35_op_flop(r, Q35_OP_PROJ, 2.0 * (double)r->T * (double)w->n * (double)w->k);
}

int q35_proj(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w)
{
    q35_proj_begin(r, w, w->label);
    return q35_op_end(r, r->project(r, y, ldy, x, w));
}

/* Whether a decode step's projections of a k-input run through the
 * 8-bit-activation GEMV (kernels/gemv_q8.h; q35_paths_decode_q8): the
 * activation scratch holds the quantized x (the f16 and fp8 GEMM paths have
 * one; too small, the exact GEMV runs). */
bool q35_token_q8(const q35_run *r, int64_t k)
{
    const q35_cuda_model *cm = r->cm;
    return r->per_token && q35_paths_decode_q8(&cm->paths) && cm->f16_act && k % 32 == 0 &&
           (uint64_t)q35_gemv_q8_x_bytes(k) <= cm->ws.f16_act;
}

int q35_token_gemv_q8(const q35_run *r, const q35_gemv_part *parts, int count, q35_type type, int64_t k,
                      const void *xq)
{
    return q35_paths_decode_pdl(&r->cm->paths)
               ? q35_gemv_q8_group_early(parts, count, type, k, xq, r->cm->paths.gemv_q8_variant, r->cm->stream, r->err)
               : q35_gemv_q8_group(parts, count, type, k, xq, r->cm->paths.gemv_q8_variant, r->cm->stream, r->err);
}

/* The projections of one input x (every w[i] of its k inputs): w[i] into
 * y[i] (row stride ldy[i]), in order. A decode step runs those of one type
 * as one grouped GEMV (one op named by its parts, "proj attn_q+attn_k+attn_v":
 * each output bitwise its projection alone), so a layer's [qkv | z | alpha |
 * beta], [q | k | v] or [gate | up] of one type is one launch; with the switch
 * decode-q8 (q35_token_q8) x is quantized once first and the types the
 * 8-bit-activation GEMV takes go through it. Otherwise one projection each. */
int q35_proj_many(q35_run *r, float *const *y, const int64_t *ldy, const float *x, const q35_dweight *const *w,
                  int n)
{
    if (!r->per_token || n > Q35_GEMV_GROUP_MAX) {
        for (int i = 0; i < n; i++)
            if (q35_proj(r, y[i], ldy[i], x, w[i]))
                return -1;
        return 0;
    }
    const int64_t k = w[0]->k;
    const bool q8 = q35_token_q8(r, k);
    void *xq = r->cm->f16_act;
    bool quantized = false;
    bool done[Q35_GEMV_GROUP_MAX] = {false};
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        q35_gemv_part parts[Q35_GEMV_GROUP_MAX];
        char label[4 * sizeof w[0]->label];
        int c = 0, used = 0;
        for (int j = i; j < n; j++)
            if (!done[j] && w[j]->type == w[i]->type) {
                parts[c++] = (q35_gemv_part){.y = y[j], .w = w[j]->w, .type = w[j]->type, .n = w[j]->n};
                done[j] = true;
                /* "proj attn_qkv+ssm_alpha+...": the parts' labels, "proj " once */
                used += snprintf(label + used, sizeof label - (size_t)used, "%s%s", c > 1 ? "+" : "",
                                 c > 1 && strncmp(w[j]->label, "proj ", 5) == 0 ? w[j]->label + 5 : w[j]->label);
                if (used >= (int)sizeof label)
                    used = (int)sizeof label - 1;
            }
        const bool by_q8 = q8 && q35_gemv_q8_takes(w[i]->type);
        if (by_q8 && !quantized && r->xq_of == x) /* the norm that wrote x wrote its 8-bit form too */
            quantized = true;
        if (by_q8 && !quantized) {
            q35_op_begin(r, Q35_OP_PROJ, "proj quantize x");
            if (q35_op_end(r, q35_gemv_q8_quantize(xq, x, k, r->cm->stream, r->err)))
                return -1;
            quantized = true;
        }
        q35_op_begin(r, Q35_OP_PROJ, label);
        for (int j = 0; j < c; j++)
            q35_op_flop(r, Q35_OP_PROJ, 2.0 * (double)parts[j].n * (double)k);
        if (q35_op_end(r, by_q8 ? q35_token_gemv_q8(r, parts, c, w[i]->type, k, xq)
                                : q35_gemv_group(parts, c, w[i]->type, k, x, Q35_VARIANT_DEFAULT, r->cm->stream,
                                                 r->err)))
            return -1;
    }
    r->xq_of = NULL; /* its one reader done */
    return 0;
}

