/* The layer compositions of the CUDA model, written once for T rows (SPEC §2,
 * in the op order of the float64 reference, model/ref_model.c). A decode step
 * is the same composition with T = 1 through the per-token launchers; the
 * projection and the attention are chosen per call (q35_run_choose):
 *
 *   decode          q35_gemv (grouped)        q35_attention_decode_at (_f16 over an f16 cache)
 *   deterministic   q35_gemv_rows             q35_attention_decode_rows
 *   prefill         q35_gemm_f32 / _f16       q35_attention_prefill_f32 / _flash_f16 (_flash over an f32 cache)
 *
 * (cuda_project.c: a decode step's projections of one input and type as one
 * grouped GEMV, or with the switch decode-q8 the 8-bit-activation GEMV.)
 *
 * The KV cache holds f32 or f16 (the state's kv_f16, cuda_forward.c): over f32
 * a prefill's V projection writes its cache rows and K is normed and rotated in
 * them; over f16, and in a decode step, both are made in the chunk's buffers
 * (V in ATTN_O, free until the attention writes it) and appended
 * (q35_kv_append_rows_f16 rounded, inside qk_norm_rope's range). A decode
 * step's launches take its position from the device (cm->dpos, the kernels'
 * _at forms), so they are the same at every step (the decode graph,
 * cuda_graph.c), and it runs the fused prologues (delta_prep, attn_prep over
 * an f16 cache) at one row.
 *
 * Every op sits between q35_op_begin and q35_op_end: an NVTX range named after
 * it, and CUDA events when the call is timed.
 *
 * The residual adds are deferred into the RMSNorm that reads their sum: a
 * sublayer leaves x += PROJ pending and the next residual norm runs
 * q35_add_rmsnorm_rows (x += PROJ, then the norm of x: bitwise the add then
 * the norm, the same adds and reduction order, one pass over x fewer); the
 * last layer's FFN does its own add ("residual") so the tail reads the whole
 * x. Bitwise, so on every path: the results are those of the add-then-norm
 * order, only the launches and the NVTX ops differ. On the f16 and fp8 GEMM
 * paths the output projections add into x in their GEMM instead (beta = 1:
 * one rounding fewer, not bitwise), and nothing is left pending.
 *
 * A pruned chunk (r->prune, q35_paths_prune) runs its last layer over every
 * row up to and including the mixing op (attention, or the delta rule: all
 * that reaches the state), then keeps the rows whose logits the call wants
 * (keep_rows) and runs the rest over those alone, or stops there where it
 * wants none. */
#include "cuda_internal.h"

#include "kernels/attention_decode.h"
#include "kernels/attention_decode_split.h"
#include "kernels/attention_f32.h"
#include "kernels/attention_flash.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/attn_prep.h"
#include "kernels/conv1d.h"
#include "kernels/delta_prep.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_rule.h"
#include "kernels/gated_rmsnorm.h"
#include "kernels/gates.h"
#include "kernels/fp8.h"
#include "kernels/gemm.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv.h"
#include "kernels/gemv_q8.h"
#include "kernels/kv_append.h"
#include "kernels/l2norm.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#define BUF(r, name) ((r)->cm->buf[Q35_BUF_##name])

/* ---- attention: o [T][heads*hd] for q [T][heads*hd] at positions pos.. ---- */

/* The splits of a decode step's split attention (switch decode-split) over this
 * state's cache, or 0 for the exact kernel: not asked for, an f32 cache, a
 * state of fewer than Q35_DECODE_SPLIT_MIN_SEQ positions, or a chunked delta
 * rule's workspace (which a decode step does not use, and lends the partials)
 * too small for them. Fixed by the state's capacity, so a decode graph
 * captured once keeps its launches. */
static int decode_splits(const q35_run *r)
{
    const q35_cuda_model *cm = r->cm;
    if (!r->st->kv_f16 || !q35_paths_decode_split(&cm->paths) || !cm->delta_ws || r->st->max_seq < Q35_DECODE_SPLIT_MIN_SEQ)
        return 0;
    const int splits = q35_attention_decode_split_count(cm->attn, r->st->max_seq, cm->info.sms);
    return q35_attention_decode_split_work_bytes(cm->attn, splits) <= cm->ws.delta ? splits : 0;
}

static int attend_decode(q35_run *r, float *o, const float *q, const void *kc, const void *vc)
{
    const int splits = decode_splits(r);
    if (splits) /* at the device's position in a step (a graph's launches the same at every step) */
        return r->per_token ? q35_attention_decode_split_f16_at(o, q, kc, vc, r->cm->dpos, r->cm->attn, splits,
                                                                r->cm->delta_ws, r->cm->stream, r->err)
                            : q35_attention_decode_split_f16(o, q, kc, vc, r->pos + 1, r->cm->attn, splits,
                                                             r->cm->delta_ws, r->cm->stream, r->err);
    if (r->per_token) /* the step's position on the device (its launches the same at every step) */
        return r->st->kv_f16 ? q35_attention_decode_f16_at(o, q, kc, vc, r->cm->dpos, r->cm->attn, r->cm->stream, r->err)
                             : q35_attention_decode_at(o, q, kc, vc, r->cm->dpos, r->cm->attn, r->cm->stream, r->err);
    if (r->st->kv_f16)
        return q35_attention_decode_f16(o, q, kc, vc, r->pos + 1, r->cm->attn, r->cm->stream, r->err);
    return q35_attention_decode(o, q, kc, vc, r->pos + 1, r->cm->attn, r->cm->stream, r->err);
}

/* f32 caches only (cuda_forward.c refuses an f16 one on these two paths) */
static int attend_decode_rows(q35_run *r, float *o, const float *q, const void *kc, const void *vc)
{
    return q35_attention_decode_rows(o, q, kc, vc, r->pos, r->T, r->cm->attn, Q35_VARIANT_DEFAULT, r->cm->stream,
                                     r->err);
}

static int attend_f32(q35_run *r, float *o, const float *q, const void *kc, const void *vc)
{
    return q35_attention_prefill_f32(r->cm->blas, o, q, kc, vc, r->pos, r->T, r->cm->scores, r->pass_rows,
                                     r->cm->attn, r->err);
}

static int attend_flash(q35_run *r, float *o, const float *q, const void *kc, const void *vc)
{
    const q35_flash_options opt = {.variant = r->cm->paths.flash_variant, .split = 0};
    if (r->st->kv_f16 && r->cm->paths.flash_sm90)
        return q35_attention_prefill_flash_sm90(o, q, kc, vc, r->pos, r->T, r->cm->attn,
                                                r->cm->paths.flash_sm90_variant, r->cm->stream, r->err);
    if (r->st->kv_f16)
        return q35_attention_prefill_flash_f16(o, q, kc, vc, r->pos, r->T, r->cm->attn, &opt, r->cm->stream, r->err);
    return q35_attention_prefill_flash(o, q, kc, vc, r->pos, r->T, r->cm->attn, &opt, r->cm->stream, r->err);
}

/* Whether this chunk's attention takes the output gate in its epilogue: the f16
 * GEMM path's flash over an f16 cache through the sm_90a kernel (its gated f16
 * form, bitwise the kernel then q35_sigmoid_gate_rows_f16) where
 * the switch gate=on (paths.flash_gate, opt-in until measured); else the
 * out_gate op apart */
static bool gate_in_flash(const q35_run *r)
{
    return !r->per_token && q35_paths_flash_gate(&r->cm->paths) && r->st->kv_f16;
}

void q35_run_choose(q35_run *r)
{
    const q35_cuda_paths *p = &r->cm->paths;
    if (r->per_token) {
        r->project = q35_project_gemv;
        r->attend = attend_decode;
    } else if (p->deterministic) {
        r->project = q35_project_gemv_rows;
        r->attend = attend_decode_rows;
    } else {
        r->project = p->gemm == Q35_GEMM_F16   ? q35_project_gemm_f16
                     : p->gemm == Q35_GEMM_FP8 ? q35_project_gemm_fp8
                                               : q35_project_gemm_f32;
        r->attend = p->attention == Q35_ATTN_FLASH ? attend_flash : attend_f32;
        r->f16_inputs = p->gemm == Q35_GEMM_F16;
        r->fp8_inputs = p->gemm == Q35_GEMM_FP8;
        r->merge = (p->gemm == Q35_GEMM_F16 || p->gemm == Q35_GEMM_FP8) && !p->split_proj;
    }
}

/* After an op that wrote x's GEMM input (only: f16, or e4m3 codes and scales) into the activation scratch:
 * the projections from x take it. */
static int input_written(q35_run *r, const float *x, int rc)
{
    if (rc == 0)
        r->x16_of = r->x16_only = x;
    return rc;
}

/* Whether a decode step's op may write the 8-bit form of its k outputs too,
 * where a switch asks: the projections after it take the 8-bit GEMV
 * (q35_token_q8) and the row fits the norms' shared memory. fuse_q8: the
 * norms (switch decode-fuse); act_q8: every op before an 8-bit GEMV, the
 * output projections adding into the residual (switch decode-act-q8). */
static bool q8_out(const q35_run *r, bool asked, int64_t k)
{
    return asked && q35_token_q8(r, k) && k <= Q35_FP8_ROW_MAX;
}

static bool fuse_q8(const q35_run *r, int64_t k)
{
    return q8_out(r, q35_paths_decode_fuse(&r->cm->paths), k);
}

static bool act_q8(const q35_run *r, int64_t k)
{
    return q8_out(r, q35_paths_decode_act_q8(&r->cm->paths), k);
}

/* After an op with its 8-bit form: cm->f16_act holds x's (q35_proj_many reads it). */
static int q8_written(q35_run *r, const float *x, int rc)
{
    if (rc == 0)
        r->xq_of = x;
    return rc;
}

/* ---- the ops, per token or over rows ---- */

/* The attention op begun: `rows` query rows at positions pos.. (q35_attention_flop counted) */
static void attn_begin(q35_run *r, int64_t pos, int64_t rows)
{
    q35_op_begin(r, Q35_OP_ATTN, "attention");
    q35_op_flop(r, Q35_OP_ATTN, q35_attention_flop(r->cm->hp.n_head, r->cm->hp.head_dim, pos, rows));
}

/* `per_row` vectors of n per token (1 for the residual stream, the heads for q/k). */
static int rmsnorm(q35_run *r, float *y, const float *x, const float *w, int64_t n, int64_t per_row)
{
    const q35_cuda_model *cm = r->cm;
    if (r->per_token && per_row == 1)
        return q35_rmsnorm(y, x, w, n, cm->hp.eps, cm->stream, r->err);
    return q35_rmsnorm_rows(y, x, w, n, r->T * per_row, cm->hp.eps, cm->stream, r->err);
}

/* NORMED = rmsnorm(x) * w, the pending residual added to x first (names[1]'s op) or none pending (names[0]'s) */
static int residual_norm(q35_run *r, const float *w, const char *const names[2])
{
    const q35_cuda_model *cm = r->cm;
    const int64_t H = cm->hp.n_embd;
    const bool add = r->residual_pending;
    r->residual_pending = false;
    q35_op_begin(r, Q35_OP_NORM, names[add]);
    if (r->f16_inputs) /* NORMED as the projections' f16 input only */
        return input_written(
            r, BUF(r, NORMED),
            q35_op_end(r, add ? q35_add_rmsnorm_rows_f16(cm->f16_act, BUF(r, X), BUF(r, PROJ), w, H, r->T, cm->hp.eps,
                                                         cm->stream, r->err)
                              : q35_rmsnorm_rows_f16(cm->f16_act, BUF(r, X), w, H, r->T, cm->hp.eps, cm->stream,
                                                     r->err)));
    if (r->fp8_inputs) /* NORMED as the projections' e4m3 input only */
        return input_written(
            r, BUF(r, NORMED),
            q35_op_end(r, add ? q35_add_rmsnorm_rows_fp8(q35_fp8_codes(r), q35_fp8_scales(r, H), BUF(r, X), BUF(r, PROJ), w, H,
                                                         r->T, cm->hp.eps, cm->stream, r->err)
                              : q35_rmsnorm_rows_fp8(q35_fp8_codes(r), q35_fp8_scales(r, H), BUF(r, X), w, H, r->T, cm->hp.eps,
                                                     cm->stream, r->err)));
    if (!add && act_q8(r, H)) /* a decode step, the residual added by the GEMV before: NORMED and its 8-bit form
                                 over many blocks */
        return q8_written(r, BUF(r, NORMED), q35_op_end(r, q35_rmsnorm_q8(BUF(r, NORMED), cm->f16_act, BUF(r, X), w,
                                                                          H, cm->hp.eps, cm->stream, r->err)));
    if (fuse_q8(r, H)) /* a decode step: NORMED and its 8-bit form for the projections after it */
        return q8_written(r, BUF(r, NORMED),
                          q35_op_end(r, add ? q35_add_rmsnorm_q8(BUF(r, NORMED), cm->f16_act, BUF(r, X), BUF(r, PROJ),
                                                                 w, H, cm->hp.eps, cm->stream, r->err)
                                            : q35_rmsnorm_q8(BUF(r, NORMED), cm->f16_act, BUF(r, X), w, H, cm->hp.eps,
                                                             cm->stream, r->err)));
    if (!add)
        return q35_op_end(r, rmsnorm(r, BUF(r, NORMED), BUF(r, X), w, H, 1));
    return q35_op_end(r, q35_add_rmsnorm_rows(BUF(r, NORMED), BUF(r, X), BUF(r, PROJ), w, H, r->T, cm->hp.eps,
                                              cm->stream, r->err));
}

static const char *const k_attn_norm[2] = {"rmsnorm attn_norm", "add_rmsnorm attn_norm"};
static const char *const k_post_norm[2] = {"rmsnorm post_attention_norm", "add_rmsnorm post_attention_norm"};

/* x += PROJ: left pending for the next residual norm, done here after the last layer's FFN */
static int residual_add(q35_run *r, bool last)
{
    if (!last) {
        r->residual_pending = true;
        return 0;
    }
    q35_op_begin(r, Q35_OP_RESIDUAL, "residual");
    return q35_op_end(r, q35_residual_add_rows(BUF(r, X), BUF(r, PROJ), r->cm->hp.n_embd, r->T, r->cm->stream,
                                               r->err));
}

/* A sublayer's output projection and its residual: x += in W^T. On the f16
 * and fp8 GEMM paths (f16_inputs, fp8_inputs) the GEMM adds into x itself,
 * nothing left pending; so does a decode step's 8-bit GEMV where the op before
 * wrote in's 8-bit form (decode-act-q8: q35_gemv_q8_add, x + p as the
 * residual add gives it); elsewhere into PROJ, the add deferred (residual_add). */
static int out_proj(q35_run *r, const float *in, const q35_dweight *w, bool last)
{
    const int64_t H = r->cm->hp.n_embd;
    if (r->xq_of == in && act_q8(r, w->k) && q35_gemv_q8_takes(w->type)) {
        r->xq_of = NULL; /* its one reader */
        q35_proj_begin(r, w, w->label);
        return q35_op_end(r, q35_gemv_q8_add(BUF(r, X), w->w, w->type, w->n, w->k, r->cm->f16_act,
                                             r->cm->paths.gemv_q8_variant, r->cm->stream, r->err));
    }
    if (r->f16_inputs || r->fp8_inputs) {
        q35_proj_begin(r, w, w->label);
        return q35_op_end(r, r->f16_inputs ? q35_proj_f16(r, BUF(r, X), H, in, w, Q35_OUT_F32_ADD)
                                           : q35_proj_fp8(r, BUF(r, X), H, in, w, Q35_OUT_F32_ADD));
    }
    return q35_proj_many(r, (float *const[]){BUF(r, PROJ)}, &H, in, (const q35_dweight *const[]){w}, 1) ||
           residual_add(r, last);
}

/* Whether the FFN's merged [gate | up] is written in 16 bits (ffn_gu16): on
 * the fp8 path as bf16 unless the switch fp8-gu-bf16=off, on the f16 path through the
 * tuned GEMM as f16 where the switch f16-gu=on asks (opt-in: its rounding takes the
 * f16 + scan path past the sweep's bound, cuda_options.h); rows of 2 ff halves
 * whole 16 bytes. */
static bool gu16(const q35_run *r)
{
    const q35_cuda_paths *p = &r->cm->paths;
    return r->merge && (2 * r->cm->hp.n_ff) % 8 == 0 &&
           (r->fp8_inputs ? !p->fp8_gu_f32 : r->f16_inputs && p->f16_gu && q35_hgemm_tuned(r));
}

/* The fast paths' FFN with [gate | up] merged and written in 16 bits (gu16):
 * the GEMM writes GU as bf16 (fp8 path) or f16 (f16 path), half the bytes of
 * f32 written and read, and SwiGLU widens them back, writing ffn_down's input
 * (e4m3 codes and scales, or f16). bf16's rounding is 1/20 of what e4m3's
 * inputs cost (kernels/fp8.h), f16's about one operand's f16 rounding
 * (kernels/gemm_lt.h); the fp8 tier and the model suites measure them. */
static int ffn_gu16(q35_run *r, const q35_dlayer *l)
{
    const int64_t ff = r->cm->hp.n_ff;
    uint16_t *gu = (uint16_t *)(void *)BUF(r, GU);
    q35_proj_begin(r, &l->gu, l->gu.label);
    if (q35_op_end(r, r->fp8_inputs ? q35_proj_fp8(r, gu, 2 * ff, BUF(r, NORMED), &l->gu, Q35_OUT_16)
                                    : q35_proj_f16(r, gu, 2 * ff, BUF(r, NORMED), &l->gu, Q35_OUT_16)))
        return -1;
    q35_op_begin(r, Q35_OP_SWIGLU, "swiglu");
    const int rc = r->fp8_inputs ? q35_swiglu_rows_bf16_fp8(q35_fp8_codes(r), q35_fp8_scales(r, ff), gu, gu + ff, 2 * ff, ff,
                                                            r->T, r->cm->stream, r->err)
                                 : q35_swiglu_rows_f16_f16(r->cm->f16_act, gu, gu + ff, 2 * ff, ff, r->T,
                                                           r->cm->stream, r->err);
    if (input_written(r, BUF(r, FFN_ACT), q35_op_end(r, rc)))
        return -1;
    return out_proj(r, BUF(r, FFN_ACT), &l->ffn_down, l->index == r->cm->hp.n_layer - 1);
}

/* The f16 path's FFN through the sm_90a [gate | up] GEMM with SwiGLU in its
 * epilogue (q35_paths_gemm_swiglu): ffn_down's f16 input written by the GEMM
 * into GU's memory ([T][ff] f16 in a buffer of [T][2 ff] f32), which ffn_down
 * reads there (on the sm_90a GEMM too where every projection, or ffn_down
 * alone, is asked to run on it); the activation scratch keeps NORMED's f16
 * form. One op, timed as a projection (its label ffn_gate_up+swiglu): no
 * swiglu op. */
static int ffn_swiglu_sm90(q35_run *r, const q35_dlayer *l)
{
    static const char label[] = "ffn_gate_up+swiglu";
    const int64_t ff = r->cm->hp.n_ff;
    const q35_dweight *gu = &l->gu;
    uint16_t *y16 = (uint16_t *)(void *)BUF(r, GU);
    if (!gu->w16 || !l->ffn_down.w16)
        return q35_fail(r->err, "%s: the f16 GEMM path without its f16 weight", gu->w16 ? l->ffn_down.label : gu->label);
    if (q35_gemm_input(r, BUF(r, NORMED), gu, q35_round_f16))
        return -1;
    q35_proj_begin(r, gu, label);
    if (q35_op_end(r, q35_gemm_swiglu_sm90_f16(y16, ff, r->cm->f16_act, gu->k, gu->w16, gu->k, ff, gu->k, r->T,
                                               r->cm->paths.gemm_sm90_variant, r->cm->stream, r->err)))
        return q35_fail_context(r->err, "layer %d", l->index);
    const q35_cuda_paths *p = &r->cm->paths;
    q35_proj_begin(r, &l->ffn_down, l->ffn_down.label);
    return q35_op_end(r, q35_proj_f16_rows(r, BUF(r, X), r->cm->hp.n_embd, y16, &l->ffn_down, Q35_OUT_F32_ADD,
                                       q35_paths_gemm_sm90_proj(p)));
}

/* post_attention_norm -> SwiGLU FFN -> the second residual; both layer kinds. */
static int ffn(q35_run *r, const q35_dlayer *l)
{
    const int64_t ff = r->cm->hp.n_ff;
    float *g = BUF(r, GU), *u = g + ff; /* [gate | up] side by side */
    if (residual_norm(r, l->post_norm, k_post_norm))
        return -1;
    if (r->merge && r->f16_inputs && q35_paths_gemm_swiglu(&r->cm->paths))
        return ffn_swiglu_sm90(r, l);
    if (gu16(r))
        return ffn_gu16(r, l);
    if (r->merge ? q35_proj(r, g, 2 * ff, BUF(r, NORMED), &l->gu)
                 : q35_proj_many(r, (float *const[]){g, u}, (const int64_t[]){2 * ff, 2 * ff}, BUF(r, NORMED),
                             (const q35_dweight *const[]){&l->ffn_gate, &l->ffn_up}, 2))
        return -1;
    q35_op_begin(r, Q35_OP_SWIGLU, "swiglu");
    const int rc =
        act_q8(r, ff)   ? q8_written(r, BUF(r, FFN_ACT),
                                   q35_op_end(r, q35_swiglu_q8(BUF(r, FFN_ACT), r->cm->f16_act, g, u, ff, r->cm->stream,
                                                               r->err)))
        : r->f16_inputs ? input_written(r, BUF(r, FFN_ACT),
                                      q35_op_end(r, q35_swiglu_rows_f16(r->cm->f16_act, g, u, 2 * ff, ff, r->T,
                                                                        r->cm->stream, r->err)))
        : r->fp8_inputs ? input_written(r, BUF(r, FFN_ACT),
                                      q35_op_end(r, q35_swiglu_rows_fp8(q35_fp8_codes(r), q35_fp8_scales(r, ff), g, u, 2 * ff,
                                                                        ff, r->T, r->cm->stream, r->err)))
                        : q35_op_end(r, q35_swiglu_rows(BUF(r, FFN_ACT), g, u, 2 * ff, ff, r->T, r->cm->stream, r->err));
    if (rc)
        return -1;
    return out_proj(r, BUF(r, FFN_ACT), &l->ffn_down, l->index == r->cm->hp.n_layer - 1);
}

static int conv1d(q35_run *r, const q35_dlayer *l, float *win)
{
    const q35_hparams *hp = &r->cm->hp;
    const int64_t cd = hp->conv_dim;
    const q35_mix_cols mc = q35_mix_cols_of(hp);
    const float *in = BUF(r, MIX) + mc.qkv;
    q35_op_begin(r, Q35_OP_CONV, "conv1d");
    if (r->per_token)
        return q35_op_end(r, q35_conv1d_silu(BUF(r, CONV_OUT), win, in, l->conv_w, cd, hp->conv_kernel, r->cm->stream,
                                             r->err));
    return q35_op_end(r, q35_conv1d_silu_rows(BUF(r, CONV_OUT), cd, win, in, mc.width, l->conv_w, cd, hp->conv_kernel,
                                              r->T, r->cm->stream, r->err));
}

/* the q heads, then the k heads, of every conv output row */
static int l2norm_qk(q35_run *r)
{
    const q35_hparams *hp = &r->cm->hp;
    q35_op_begin(r, Q35_OP_L2NORM, "l2norm");
    if (r->per_token)
        return q35_op_end(r, q35_l2norm(BUF(r, CONV_OUT), hp->ssm_dk, 2 * hp->ssm_hk, hp->eps, r->cm->stream, r->err));
    return q35_op_end(r, q35_l2norm_rows(BUF(r, CONV_OUT), hp->ssm_dk, 2 * hp->ssm_hk, r->T, hp->conv_dim, hp->eps,
                                         r->cm->stream, r->err));
}

static int gates(q35_run *r, const q35_dlayer *l)
{
    const int64_t hv = r->cm->hp.ssm_hv;
    const q35_mix_cols mc = q35_mix_cols_of(&r->cm->hp);
    const float *alpha = BUF(r, MIX) + mc.alpha, *b = BUF(r, MIX) + mc.beta;
    q35_op_begin(r, Q35_OP_GATES, "gates");
    if (r->per_token)
        return q35_op_end(r, q35_gates(BUF(r, G), BUF(r, BETA), alpha, b, l->dt, l->a, hv, r->cm->stream, r->err));
    return q35_op_end(r, q35_gates_rows(BUF(r, G), BUF(r, BETA), alpha, b, mc.width, l->dt, l->a, hv, r->T,
                                        r->cm->stream, r->err));
}

/* Whether this chunk's q and k go from the fused prologue to the chunked
 * rule's workspace as f16 (a rows path where q35_cuda_model_delta_qk16): the
 * same bits as through CONV_OUT's f32 q and k */
static bool delta_qk16(const q35_run *r)
{
    return !r->per_token && q35_cuda_model_delta_qk16(r->cm);
}

/* conv1d, the q/k L2 norm and the gates: one fused launch (a decode step's
 * too; kernels/delta_prep.h, the same bits as the three) where it takes the
 * heads, unless the switch prep=off asked for the three; with delta_qk16 its q
 * and k to the chunked rule's workspace as f16 */
static int deltanet_prep(q35_run *r, const q35_dlayer *l, float *win)
{
    const q35_hparams *hp = &r->cm->hp;
    const q35_mix_cols mc = q35_mix_cols_of(hp);
    const q35_delta_prep_dims d = q35_model_delta_prep_dims(hp);
    if (r->cm->paths.delta_prep_chain || !q35_delta_prep_fits(d))
        return conv1d(r, l, win) || l2norm_qk(r) || gates(r, l);
    q35_op_begin(r, Q35_OP_CONV, "delta_prep");
    if (delta_qk16(r)) {
        const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(r->T, q35_model_delta_dims(hp));
        char *ws = r->cm->delta_ws;
        if (!ws || L.total > (size_t)r->cm->ws.delta)
            return q35_op_end(r, q35_fail(r->err, "delta_prep_rows_qk16: the delta workspace holds %lld bytes, %lld "
                                                  "rows need %zu",
                                          (long long)r->cm->ws.delta, (long long)r->T, L.total));
        return q35_op_end(r, q35_delta_prep_rows_qk16(BUF(r, CONV_OUT), hp->conv_dim, (uint16_t *)(ws + L.q),
                                                      (uint16_t *)(ws + L.k), BUF(r, G), BUF(r, BETA), win,
                                                      BUF(r, MIX) + mc.qkv, mc.width, mc.alpha - mc.qkv,
                                                      mc.beta - mc.qkv, l->conv_w, l->dt, l->a, d, r->T, hp->eps,
                                                      r->cm->stream, r->err));
    }
    return q35_op_end(r, q35_delta_prep_rows(BUF(r, CONV_OUT), hp->conv_dim, BUF(r, G), BUF(r, BETA), win,
                                             BUF(r, MIX) + mc.qkv, mc.width, mc.alpha - mc.qkv, mc.beta - mc.qkv,
                                             l->conv_w, l->dt, l->a, d, r->T, hp->eps, r->cm->stream, r->err));
}

static int delta_rule(q35_run *r, float *S)
{
    const q35_hparams *hp = &r->cm->hp;
    const q35_delta_dims d = q35_model_delta_dims(hp);
    const int64_t kd = (int64_t)hp->ssm_hk * hp->ssm_dk;
    const float *q = BUF(r, CONV_OUT), *k = q + kd, *v = q + 2 * kd;
    const int64_t ldo = (int64_t)hp->ssm_hv * hp->ssm_dv;
    const q35_cuda_paths *p = &r->cm->paths;
    if (!r->per_token && p->delta == Q35_DELTA_CHUNKED) {
        q35_op_begin(r, Q35_OP_DELTA, "delta_chunk");
        if (delta_qk16(r)) /* q and k in the workspace already (deltanet_prep) */
            return q35_op_end(r, q35_delta_chunk_qk16(BUF(r, O), ldo, S, v, hp->conv_dim, BUF(r, G), BUF(r, BETA),
                                                      r->T, d, r->cm->delta_ws, (size_t)r->cm->ws.delta,
                                                      p->delta_chunk_variant, r->cm->stream, r->err));
        return q35_op_end(r, q35_delta_chunk(BUF(r, O), ldo, S, q, k, v, hp->conv_dim, BUF(r, G), BUF(r, BETA), r->T,
                                             d, r->cm->delta_ws, (size_t)r->cm->ws.delta, p->delta_chunk_variant,
                                             r->cm->stream, r->err));
    }
    /* a decode step is the scan of one token, in the prefill's variant: the two
     * stay bitwise one another whatever variant runs */
    q35_op_begin(r, Q35_OP_DELTA, "delta_rule");
    return q35_op_end(r, q35_delta_rule_scan(BUF(r, O), ldo, S, q, k, v, hp->conv_dim, BUF(r, G), BUF(r, BETA), r->T, d,
                                             p->delta_rule_variant, r->cm->stream, r->err));
}

/* o <- rmsnorm(o per head, ssm_norm) * silu(z), in place */
static int gated_norm(q35_run *r, const q35_dlayer *l)
{
    const q35_hparams *hp = &r->cm->hp;
    const q35_mix_cols mc = q35_mix_cols_of(hp);
    const float *z = BUF(r, MIX) + mc.z;
    q35_op_begin(r, Q35_OP_GATED_NORM, "gated_norm");
    const int64_t width = hp->ssm_dv * hp->ssm_hv;
    if (fuse_q8(r, width) || act_q8(r, width)) /* a decode step: O and its 8-bit form for ssm_out */
        return q8_written(r, BUF(r, O),
                          q35_op_end(r, q35_gated_rmsnorm_q8(BUF(r, O), r->cm->f16_act, BUF(r, O), z, l->ssm_norm,
                                                             hp->ssm_dv, hp->ssm_hv, hp->eps, r->cm->stream, r->err)));
    if (r->per_token)
        return q35_op_end(r, q35_gated_rmsnorm(BUF(r, O), BUF(r, O), z, l->ssm_norm, hp->ssm_dv, hp->ssm_hv, hp->eps,
                                               r->cm->stream, r->err));
    if (r->f16_inputs) /* O as ssm_out's f16 input only */
        return input_written(r, BUF(r, O),
                           q35_op_end(r, q35_gated_rmsnorm_rows_f16(r->cm->f16_act, BUF(r, O), z, mc.width,
                                                                    l->ssm_norm, hp->ssm_dv, hp->ssm_hv, r->T, hp->eps,
                                                                    r->cm->stream, r->err)));
    /* the fp8 path keeps the f32 form and the GEMM's quantization: the experiment
     * kernels/experiments/gated_rmsnorm_fp8.h (a block a token) is slower than the two */
    return q35_op_end(r, q35_gated_rmsnorm_rows(BUF(r, O), BUF(r, O), z, mc.width, l->ssm_norm, hp->ssm_dv, hp->ssm_hv,
                                                r->T, hp->eps, r->cm->stream, r->err));
}

/* ---- the last layer's kept rows (r->prune) ---- */

/* One buffer's rows for keep_rows: floats [T][ld], the first `width` of each row moved. */
typedef struct kept_buf {
    float *p;
    int64_t ld, width;
} kept_buf;

/* Whether this layer is a pruned chunk's last: past its mixing op it runs over the kept rows only. */
static bool pruned_here(const q35_run *r, const q35_dlayer *l)
{
    return r->prune && l->index == r->cm->hp.n_layer - 1;
}

/* The kept rows (chunk rows keep_at[i] - pos, ascending) of every buffer the
 * rest of the layer reads, moved to rows 0 .. n_keep - 1 in order (row i
 * from row keep_at[i] - pos >= i: no row is written before it has moved),
 * then the layer goes on over those rows (r->T = n_keep; cuda_forward.c
 * restores the chunk's count after the layer). */
static int keep_rows(q35_run *r, const kept_buf *b, int n)
{
    q35_op_begin(r, Q35_OP_KEEP_ROWS, "keep_rows");
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < r->n_keep; i++) {
        const int64_t from = r->keep_at[i] - r->pos;
        for (int k = 0; rc == 0 && from != i && k < n; k++)
            rc = Q35_CUDA_CHECK(cudaMemcpyAsync(b[k].p + i * b[k].ld, b[k].p + from * b[k].ld,
                                                (size_t)b[k].width * sizeof(float), cudaMemcpyDeviceToDevice,
                                                (cudaStream_t)r->cm->stream),
                                r->err);
    }
    if (rc == 0)
        r->T = r->n_keep;
    return q35_op_end(r, rc);
}

int q35_layer_deltanet(q35_run *r, const q35_dlayer *l)
{
    const q35_hparams *hp = &r->cm->hp;
    const q35_cuda_state *st = r->st;
    const q35_mix_cols mc = q35_mix_cols_of(hp);
    float *win = st->conv + (int64_t)l->slot * st->conv_len, *S = st->ssm + (int64_t)l->slot * st->ssm_len;
    float *mix = BUF(r, MIX), *x = BUF(r, NORMED);
    /* [qkv | z | alpha | beta] into their slices of MIX: one merged GEMM on the
     * fast paths, else four, all before conv1d (none reads another's output,
     * so the order changes no result; with f16 inputs NORMED is only its f16
     * rounding, which any op but a projection gives up) */
    const int64_t w4[4] = {mc.width, mc.width, mc.width, mc.width};
    if (residual_norm(r, l->attn_norm, k_attn_norm) ||
        (r->merge ? q35_proj(r, mix, mc.width, x, &l->mix)
                  : q35_proj_many(r, (float *const[]){mix + mc.qkv, mix + mc.alpha, mix + mc.beta, mix + mc.z}, w4, x,
                              (const q35_dweight *const[]){&l->qkv, &l->alpha, &l->beta, &l->z}, 4)) ||
        deltanet_prep(r, l, win) || delta_rule(r, S))
        return -1;
    if (pruned_here(r, l)) { /* the state is whole: o, z (MIX's slice) and x of the kept rows go on */
        if (r->n_keep == 0)
            return 0;
        const int64_t vd = (int64_t)hp->ssm_hv * hp->ssm_dv;
        const kept_buf b[3] = {{BUF(r, O), vd, vd}, {mix + mc.z, mc.width, vd}, {BUF(r, X), hp->n_embd, hp->n_embd}};
        if (keep_rows(r, b, 3))
            return -1;
    }
    if (gated_norm(r, l) || out_proj(r, BUF(r, O), &l->ssm_out, false))
        return -1;
    return ffn(r, l);
}

/* K and V rows from their buffers into the caches: an f16 cache's rounded at pos.., a decode step's
 * at the position on the device (f32 or f16); a prefill's f32 rows are in the cache already */
static int append_rows(q35_run *r, const float *k_rows, const float *v_rows, void *kc, void *vc)
{
    const q35_cuda_state *st = r->st;
    const int64_t kvd = st->kv_dim;
    if (r->per_token)
        return st->kv_f16 ? q35_kv_append_rows_f16_at(kc, vc, kvd, st->max_seq, k_rows, v_rows, kvd, kvd, r->cm->dpos,
                                                      1, r->cm->stream, r->err)
                          : q35_kv_append_rows_at(kc, vc, kvd, st->max_seq, k_rows, v_rows, kvd, kvd, r->cm->dpos, 1,
                                                  r->cm->stream, r->err);
    return st->kv_f16 ? q35_kv_append_rows_f16(kc, vc, kvd, st->max_seq, k_rows, v_rows, kvd, kvd, r->pos, r->T,
                                               r->cm->stream, r->err)
                      : 0;
}

static int rope(q35_run *r, float *x, int64_t row_stride, int heads)
{
    const q35_hparams *hp = &r->cm->hp;
    if (r->per_token) /* the step's position on the device */
        return q35_rope_neox_rows_at(x, row_stride, heads, hp->head_dim, hp->n_rot, r->cm->dpos, 1, hp->rope_base,
                                     r->cm->stream, r->err);
    return q35_rope_neox_rows(x, row_stride, heads, hp->head_dim, hp->n_rot, r->pos, r->T, hp->rope_base,
                              r->cm->stream, r->err);
}

/* split [q | gate]; q <- RoPE(rmsnorm(q per head)); k_rows <- RoPE(rmsnorm(k per head)) (the f32 cache's
 * rows, or BUF K); an f16 cache then takes k_rows and v_rows rounded (at cache rows pos..), and a
 * decode step's f32 cache takes them as they are (at the position on the device) */
static int qk_norm_rope(q35_run *r, const q35_dlayer *l, float *k_rows, const float *v_rows, void *kc, void *vc)
{
    const q35_hparams *hp = &r->cm->hp;
    const int64_t hd = hp->head_dim, qd = hp->n_head * hd, kvd = hp->n_head_kv * hd;
    q35_op_begin(r, Q35_OP_QK_NORM_ROPE, "qk_norm_rope");
    const int rc = q35_split_qgate_rows(BUF(r, Q), BUF(r, GATE), BUF(r, Q_FULL), hp->n_head, (int)hd, r->T,
                                        r->cm->stream, r->err) ||
                   rmsnorm(r, BUF(r, Q), BUF(r, Q), l->q_norm, hd, hp->n_head) ||
                   rmsnorm(r, k_rows, BUF(r, K), l->k_norm, hd, hp->n_head_kv) ||
                   rope(r, BUF(r, Q), qd, hp->n_head) || rope(r, k_rows, kvd, hp->n_head_kv) ||
                   append_rows(r, k_rows, v_rows, kc, vc);
    return q35_op_end(r, rc ? -1 : 0);
}

/* Over an f16 cache, [q_full | k | v] into Q_FULL's row, then one kernel
 * (kernels/attn_prep.h) for the split, the q/k norms, RoPE and the append:
 * bitwise qk_norm_rope's chain, one launch instead of six. The fast paths'
 * prefill projects through the merged weight (qkv_a) at the chunk's
 * positions; a decode step through attn_q, attn_k, attn_v (one grouped GEMV
 * where they share a type) at the position on the device. */
static int attention_in_fused(q35_run *r, const q35_dlayer *l, uint16_t *kc, uint16_t *vc)
{
    const q35_hparams *hp = &r->cm->hp;
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = r->st->kv_dim, ld = 2 * qd + 2 * kvd;
    float *full = BUF(r, Q_FULL);
    if (residual_norm(r, l->attn_norm, k_attn_norm) ||
        (r->per_token ? q35_proj_many(r, (float *const[]){full, full + 2 * qd, full + 2 * qd + kvd},
                                      (const int64_t[]){ld, ld, ld}, BUF(r, NORMED),
                                      (const q35_dweight *const[]){&l->q, &l->k, &l->v}, 3)
                      : q35_proj(r, full, ld, BUF(r, NORMED), &l->qkv_a)))
        return -1;
    q35_op_begin(r, Q35_OP_QK_NORM_ROPE, "qk_norm_rope");
    return q35_op_end(
        r, r->per_token
               ? q35_attn_prep_rows_f16_at(BUF(r, Q), BUF(r, GATE), kc, vc, kvd, r->st->max_seq, full, ld, l->q_norm,
                                           l->k_norm, hp->n_head, hp->n_head_kv, hp->head_dim, hp->n_rot, r->cm->dpos,
                                           1, hp->rope_base, hp->eps, r->cm->stream, r->err)
               : q35_attn_prep_rows_f16(BUF(r, Q), BUF(r, GATE), kc, vc, kvd, r->st->max_seq, full, ld, l->q_norm,
                                        l->k_norm, hp->n_head, hp->n_head_kv, hp->head_dim, hp->n_rot, r->pos, r->T,
                                        hp->rope_base, hp->eps, r->cm->stream, r->err));
}

/* The attention of the kept rows alone into ATTN_O's rows 0 .. n_keep - 1:
 * row i (chunk row keep_at[i] - pos) attends to the positions up to its own,
 * as a decode step at that position does (attend_decode: the per-token
 * path's kernel, over this state's cache element). */
static int attend_kept(q35_run *r, int64_t qd, const void *kc, const void *vc)
{
    q35_op_begin(r, Q35_OP_ATTN, "attention");
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < r->n_keep; i++) { /* each row's FLOP its own decode step's */
        q35_op_flop(r, Q35_OP_ATTN, q35_attention_flop(r->cm->hp.n_head, r->cm->hp.head_dim, r->keep_at[i], 1));
        q35_run one = *r;
        one.pos = r->keep_at[i];
        one.T = 1;
        rc = attend_decode(&one, BUF(r, ATTN_O) + i * qd, BUF(r, Q) + (r->keep_at[i] - r->pos) * qd, kc, vc);
    }
    return q35_op_end(r, rc);
}

int q35_layer_attention(q35_run *r, const q35_dlayer *l)
{
    const q35_hparams *hp = &r->cm->hp;
    const q35_cuda_state *st = r->st;
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = st->kv_dim;
    const size_t vb = st->kv_f16 ? 2 : 4, layer = (size_t)l->slot * (size_t)st->max_seq * (size_t)kvd * vb;
    char *kc = (char *)st->k_cache + layer, *vc = (char *)st->v_cache + layer;
    /* a prefill's f32 cache: V straight into its cache rows, K normed and rotated in them; an f16 cache, or
     * a decode step (whose launches take no position's address): both in buffers, then appended */
    const bool buffered = st->kv_f16 || r->per_token;
    float *k_rows = buffered ? BUF(r, K) : (float *)kc + r->pos * kvd;
    float *v_rows = buffered ? BUF(r, ATTN_O) : (float *)vc + r->pos * kvd;
    const bool fused_in = st->kv_f16 && (r->merge || (r->per_token && hp->head_dim <= Q35_ATTN_PREP_MAX_HD));
    if (fused_in ? attention_in_fused(r, l, (uint16_t *)kc, (uint16_t *)vc)
                 : residual_norm(r, l->attn_norm, k_attn_norm) ||
                       q35_proj_many(r, (float *const[]){BUF(r, Q_FULL), BUF(r, K), v_rows},
                                     (const int64_t[]){2 * qd, kvd, kvd}, BUF(r, NORMED),
                                     (const q35_dweight *const[]){&l->q, &l->k, &l->v}, 3) ||
                       qk_norm_rope(r, l, k_rows, v_rows, kc, vc))
        return -1;
    const bool pruned = pruned_here(r, l);
    if (pruned && r->n_keep == 0) /* the cache holds this chunk's K and V: no row goes on */
        return 0;
    if (!pruned && gate_in_flash(r)) { /* the out gate in the sm_90a kernel's epilogue: attn_output's f16 input,
                                          no out_gate op */
        attn_begin(r, r->pos, r->T);
        if (input_written(r, BUF(r, ATTN_O),
                          q35_op_end(r, q35_attention_prefill_flash_sm90_gated_f16(
                                            r->cm->f16_act, BUF(r, GATE), BUF(r, Q), (const uint16_t *)kc,
                                            (const uint16_t *)vc, r->pos, r->T,
                                            r->cm->attn, r->cm->paths.flash_sm90_variant, r->cm->stream,
                                            r->err))) ||
            out_proj(r, BUF(r, ATTN_O), &l->o, false))
            return -1;
        return ffn(r, l);
    }
    /* pruned: up to Q35_PRUNE_DECODE_MAX kept rows attend alone (ATTN_O's first rows), more after the chunk's rows */
    const bool alone = pruned && r->n_keep <= Q35_PRUNE_DECODE_MAX;
    if (alone) {
        if (attend_kept(r, qd, kc, vc))
            return -1;
    } else {
        attn_begin(r, r->pos, r->T);
        if (q35_op_end(r, r->attend(r, BUF(r, ATTN_O), BUF(r, Q), kc, vc)))
            return -1;
    }
    if (pruned) { /* the kept rows' gate, x and (where the chunk's rows attended) attention output go on */
        const kept_buf b[3] = {{BUF(r, GATE), qd, qd}, {BUF(r, X), hp->n_embd, hp->n_embd}, {BUF(r, ATTN_O), qd, qd}};
        if (keep_rows(r, b, alone ? 2 : 3))
            return -1;
    }
    q35_op_begin(r, Q35_OP_OUT_GATE, "out_gate");
    const int gated = act_q8(r, qd)
                          ? q8_written(r, BUF(r, ATTN_O),
                                       q35_op_end(r, q35_sigmoid_gate_q8(BUF(r, ATTN_O), r->cm->f16_act, BUF(r, GATE), qd,
                                                                         r->cm->stream, r->err)))
                      : r->f16_inputs /* ATTN_O as attn_output's f16 input only */
                          ? input_written(r, BUF(r, ATTN_O),
                                        q35_op_end(r, q35_sigmoid_gate_rows_f16(r->cm->f16_act, BUF(r, ATTN_O),
                                                                                BUF(r, GATE), qd, r->T, r->cm->stream,
                                                                                r->err)))
                          : q35_op_end(r, q35_sigmoid_gate_rows(BUF(r, ATTN_O), BUF(r, GATE), qd, r->T, r->cm->stream,
                                                                r->err));
    if (gated || out_proj(r, BUF(r, ATTN_O), &l->o, false))
        return -1;
    return ffn(r, l);
}

int q35_layer_tail(q35_run *r, int64_t row)
{
    q35_cuda_model *cm = r->cm;
    const q35_hparams *hp = &cm->hp;
    q35_op_begin(r, Q35_OP_TAIL, "tail");
    /* a decode step's lm_head through the 8-bit-activation GEMV where the switch decode-q8 takes it */
    /* (decode-act-q8: the norm writes the 8-bit form itself, q35_rmsnorm_q8 over many blocks) */
    const bool q8 = q35_token_q8(r, hp->n_embd) && q35_gemv_q8_takes(cm->lm_type), act = q8 && act_q8(r, hp->n_embd);
    const float *x = BUF(r, X) + row * hp->n_embd;
    const int rc = (act ? q35_rmsnorm_q8(cm->tail_row, cm->f16_act, x, cm->output_norm, hp->n_embd, hp->eps, cm->stream,
                                         r->err)
                        : q35_rmsnorm(cm->tail_row, x, cm->output_norm, hp->n_embd, hp->eps, cm->stream, r->err)) ||
                   (q8 ? (!act && q35_gemv_q8_quantize(cm->f16_act, cm->tail_row, hp->n_embd, cm->stream, r->err)) ||
                             q35_token_gemv_q8(r, &(q35_gemv_part){.y = cm->logits, .w = cm->lm_head,
                                                                   .type = cm->lm_type, .n = hp->n_vocab},
                                               1, cm->lm_type, hp->n_embd, cm->f16_act)
                        : q35_gemv(cm->logits, cm->lm_head, cm->lm_type, hp->n_vocab, hp->n_embd, cm->tail_row,
                                   Q35_VARIANT_DEFAULT, cm->stream, r->err));
    return q35_op_end(r, rc ? -1 : 0);
}
