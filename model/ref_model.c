/* The float64 CPU reference model (see ref_model.h): a chunk of rows goes
 * through each layer in SPEC §2's op order, each op a call of its reference in
 * kernels/ref, applied row by row. */
#include "ref_model.h"

#include "kernels/fp8.h"

#include "core/parallel.h"
#include "kernels/attention.h"
#include "kernels/conv1d.h"
#include "kernels/delta_rule.h"
#include "kernels/embedding.h"
#include "kernels/gated_rmsnorm.h"
#include "kernels/gates.h"
#include "kernels/l2norm.h"
#include "kernels/linear.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"
#include "model/request.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *q35_op_name(q35_op op)
{
    static const char *const names[Q35_OP_COUNT] = {
        "embed", "rmsnorm", "proj", "conv1d", "l2norm", "gates", "delta_rule",
        "gated_norm", "qk_norm_rope", "attention", "out_gate", "swiglu", "residual", "tail",
        "keep_rows",
    };
    return (unsigned)op < Q35_OP_COUNT ? names[op] : "?";
}

int q35_ref_state_init(q35_ref_state *st, const q35_model *m, int64_t max_seq, q35_error *err)
{
    const q35_hparams *hp = &m->hp;
    memset(st, 0, sizeof *st);
    if (max_seq < 1)
        return q35_fail(err, "reference state: max_seq %" PRId64 " must be at least 1", max_seq);
    st->max_seq = max_seq;
    st->n_delta = hp->n_delta;
    st->n_attn = hp->n_attn;
    st->conv_len = (int64_t)hp->conv_dim * (hp->conv_kernel - 1);
    st->ssm_len = (int64_t)hp->ssm_hv * hp->ssm_dv * hp->ssm_dk;
    st->kv_dim = (int64_t)hp->n_head_kv * hp->head_dim;
    const size_t conv = (size_t)st->n_delta * (size_t)st->conv_len, ssm = (size_t)st->n_delta * (size_t)st->ssm_len;
    const size_t kv = (size_t)st->n_attn * (size_t)max_seq * (size_t)st->kv_dim;
    st->conv = calloc(conv ? conv : 1, sizeof(double));
    st->ssm = calloc(ssm ? ssm : 1, sizeof(double));
    st->k_cache = calloc(kv ? kv : 1, sizeof(double));
    st->v_cache = calloc(kv ? kv : 1, sizeof(double));
    if (!st->conv || !st->ssm || !st->k_cache || !st->v_cache) {
        q35_ref_state_free(st);
        return q35_fail(err, "reference state: out of memory for %" PRId64 " positions (%.1f MiB of KV cache)", max_seq,
                        2.0 * (double)kv * 8.0 / 1048576.0);
    }
    return 0;
}

void q35_ref_state_free(q35_ref_state *st)
{
    free(st->conv);
    free(st->ssm);
    free(st->k_cache);
    free(st->v_cache);
    memset(st, 0, sizeof *st);
}

void q35_ref_state_reset(q35_ref_state *st)
{
    memset(st->conv, 0, (size_t)st->n_delta * (size_t)st->conv_len * sizeof(double));
    memset(st->ssm, 0, (size_t)st->n_delta * (size_t)st->ssm_len * sizeof(double));
    const size_t kv = (size_t)st->n_attn * (size_t)st->max_seq * (size_t)st->kv_dim;
    memset(st->k_cache, 0, kv * sizeof(double));
    memset(st->v_cache, 0, kv * sizeof(double));
    st->kv_len = 0;
}

/* Scratch for one chunk of `rows` rows; every buffer [rows][width]. */
struct scratch {
    int64_t rows;
    double *x, *normed, *proj;                 /* [H] */
    double *conv_in, *conv_out;                /* [conv_dim] */
    double *alpha, *b, *g, *beta;              /* [Hv] */
    double *z, *o, *gated;                     /* [Hv*dv] */
    double *q_full;                            /* [2*heads*hd] */
    double *q, *gate, *attn_o;                 /* [heads*hd] */
    double *k, *v;                             /* [kv*hd] */
    double *ffn_g, *ffn_u, *ffn_act;           /* [ffn] */
    double *vec_a, *vec_b, *vec_c, *vec_d;     /* per-layer small weights as float64 */
    double *logit_row;                         /* [H] for the tail */
    double *owned[32];                         /* every buffer above, to free */
    int n_owned;
};

static void scratch_free(struct scratch *s)
{
    for (int i = 0; i < s->n_owned; i++)
        free(s->owned[i]);
    s->n_owned = 0;
}

static int scratch_alloc(struct scratch *s, const q35_hparams *hp, int64_t rows)
{
    memset(s, 0, sizeof *s);
    s->rows = rows;
    const int64_t H = hp->n_embd, vd = (int64_t)hp->ssm_hv * hp->ssm_dv, qd = (int64_t)hp->n_head * hp->head_dim;
    const int64_t kvd = (int64_t)hp->n_head_kv * hp->head_dim;
    const int64_t small = hp->conv_dim * (int64_t)hp->conv_kernel + H + qd;
    struct { double **p; int64_t n; } bufs[] = {
        {&s->x, rows * H}, {&s->normed, rows * H}, {&s->proj, rows * H},
        {&s->conv_in, rows * hp->conv_dim}, {&s->conv_out, rows * hp->conv_dim},
        {&s->alpha, rows * hp->ssm_hv}, {&s->b, rows * hp->ssm_hv}, {&s->g, rows * hp->ssm_hv},
        {&s->beta, rows * hp->ssm_hv}, {&s->z, rows * vd}, {&s->o, rows * vd}, {&s->gated, rows * vd},
        {&s->q_full, rows * 2 * qd}, {&s->q, rows * qd}, {&s->gate, rows * qd}, {&s->attn_o, rows * qd},
        {&s->k, rows * kvd}, {&s->v, rows * kvd},
        {&s->ffn_g, rows * hp->n_ff}, {&s->ffn_u, rows * hp->n_ff}, {&s->ffn_act, rows * hp->n_ff},
        {&s->vec_a, small}, {&s->vec_b, small}, {&s->vec_c, small}, {&s->vec_d, small},
        {&s->logit_row, H},
    };
    _Static_assert(sizeof bufs / sizeof bufs[0] <= sizeof s->owned / sizeof s->owned[0], "scratch table");
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        *bufs[i].p = malloc((size_t)(bufs[i].n > 0 ? bufs[i].n : 1) * sizeof(double));
        if (*bufs[i].p)
            s->owned[s->n_owned++] = *bufs[i].p;
        else {
            scratch_free(s);
            return -1;
        }
    }
    return 0;
}

/* A small weight (a norm, a bias, the conv taps) as float64, all rows*cols values. */
static double *as_f64(double *dst, const q35_weight *w)
{
    q35_ref_embedding(dst, w->type, w->data, w->rows * w->cols, 0);
    return dst;
}

struct ctx {
    const q35_model *m;
    const q35_hparams *hp;
    q35_ref_state *st;
    struct scratch *s;
    q35_op_times *times;
    q35_error *err;
    double t0; /* start of the op being timed */
};

static void tic(struct ctx *c)
{
    c->t0 = q35_now();
}

static void toc(struct ctx *c, q35_op op)
{
    if (c->times) {
        c->times->seconds[op] += q35_now() - c->t0;
        c->times->calls[op]++;
    }
}

/* op's FLOP (q35_op_times) counted, where the call is timed */
static void count_flop(struct ctx *c, q35_op op, double flop)
{
    if (c->times)
        c->times->flop[op] += flop;
}

static const char *const k_fp8_kinds[] = {"attn_qkv", "attn_gate", "ssm_alpha", "ssm_beta", "ssm_out", "attn_q",
                                           "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"};

const char *q35_ref_fp8_kind(int k)
{
    return k >= 0 && k < (int)(sizeof k_fp8_kinds / sizeof k_fp8_kinds[0]) ? k_fp8_kinds[k] : NULL;
}

/* Whether the study rounds weight w through FP8 (q35_ref_fp8). */
static bool fp8_here(const q35_ref_fp8 *f, const char *name)
{
    int layer = -1, used = 0;
    if (!f->kinds || sscanf(name, "blk.%d.%n", &layer, &used) != 1 || used == 0)
        return false;
    if (f->layers && (layer >= 64 || !((f->layers >> layer) & 1)))
        return false;
    const size_t n = strcspn(name + used, ".");
    for (int k = 0; q35_ref_fp8_kind(k); k++)
        if (((f->kinds >> k) & 1) && strlen(k_fp8_kinds[k]) == n && strncmp(name + used, k_fp8_kinds[k], n) == 0)
            return true;
    return false;
}

/* y[rows][w.rows] = x[rows][w.cols] . w^T */
static int project(struct ctx *c, double *y, const double *x, const q35_weight *w, int64_t rows)
{
    tic(c);
    if (fp8_here(&c->st->fp8, w->name)
            ? q35_ref_linear_fp8(y, x, w->type, w->data, w->rows, w->cols, rows, c->st->fp8.block)
            : q35_ref_linear_act(y, x, w->type, w->data, w->rows, w->cols, rows, c->st->act))
        return q35_fail(c->err, "reference %s: out of memory", w->name);
    toc(c, Q35_OP_PROJ);
    count_flop(c, Q35_OP_PROJ, 2.0 * (double)rows * (double)w->rows * (double)w->cols);
    return 0;
}

static void rmsnorm_rows(struct ctx *c, double *y, const double *x, const q35_weight *w, int64_t n, int64_t rows)
{
    tic(c);
    const double *wd = as_f64(c->s->vec_a, w);
    for (int64_t t = 0; t < rows; t++)
        q35_ref_rmsnorm(y + t * n, x + t * n, wd, n, c->hp->eps);
    toc(c, Q35_OP_NORM);
}

static void residual_rows(struct ctx *c, int64_t rows)
{
    tic(c);
    q35_ref_residual_add(c->s->x, c->s->proj, rows * c->hp->n_embd);
    toc(c, Q35_OP_RESIDUAL);
}

static int ffn(struct ctx *c, const q35_layer *l, int64_t rows)
{
    struct scratch *s = c->s;
    const int64_t ff = c->hp->n_ff;
    rmsnorm_rows(c, s->normed, s->x, &l->post_attention_norm, c->hp->n_embd, rows);
    if (project(c, s->ffn_g, s->normed, &l->ffn_gate, rows) || project(c, s->ffn_u, s->normed, &l->ffn_up, rows))
        return -1;
    tic(c);
    q35_ref_swiglu(s->ffn_act, s->ffn_g, s->ffn_u, rows * ff);
    toc(c, Q35_OP_SWIGLU);
    if (project(c, s->proj, s->ffn_act, &l->ffn_down, rows))
        return -1;
    residual_rows(c, rows);
    return 0;
}

static int deltanet(struct ctx *c, const q35_layer *l, int64_t rows)
{
    const q35_hparams *hp = c->hp;
    struct scratch *s = c->s;
    const int64_t H = hp->n_embd, cd = hp->conv_dim, hv = hp->ssm_hv, dv = hp->ssm_dv, dk = hp->ssm_dk;
    const int64_t kd = (int64_t)hp->ssm_hk * dk, vd = hv * dv;
    rmsnorm_rows(c, s->normed, s->x, &l->attn_norm, H, rows);
    if (project(c, s->conv_in, s->normed, &l->attn_qkv, rows))
        return -1;

    tic(c);
    const double *taps = as_f64(s->vec_a, &l->ssm_conv1d);
    double *win = c->st->conv + (int64_t)l->slot * c->st->conv_len;
    for (int64_t t = 0; t < rows; t++)
        q35_ref_conv1d_silu(s->conv_out + t * cd, win, s->conv_in + t * cd, taps, cd, hp->conv_kernel);
    toc(c, Q35_OP_CONV);

    tic(c);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t h = 0; h < 2 * hp->ssm_hk; h++) /* the q heads, then the k heads */
            q35_ref_l2norm(s->conv_out + t * cd + h * dk, s->conv_out + t * cd + h * dk, dk, hp->eps);
    toc(c, Q35_OP_L2NORM);

    if (project(c, s->alpha, s->normed, &l->ssm_alpha, rows) || project(c, s->b, s->normed, &l->ssm_beta, rows))
        return -1;
    tic(c);
    const double *dt = as_f64(s->vec_b, &l->ssm_dt), *a = as_f64(s->vec_c, &l->ssm_a);
    for (int64_t t = 0; t < rows; t++)
        q35_ref_gates(s->g + t * hv, s->beta + t * hv, s->alpha + t * hv, s->b + t * hv, dt, a, hv);
    toc(c, Q35_OP_GATES);

    if (project(c, s->z, s->normed, &l->attn_gate, rows))
        return -1;

    tic(c);
    double *S = c->st->ssm + (int64_t)l->slot * c->st->ssm_len;
    const q35_delta_dims d = {.hk = hp->ssm_hk, .hv = hp->ssm_hv, .dk = hp->ssm_dk, .dv = hp->ssm_dv};
    for (int64_t t = 0; t < rows; t++) {
        const double *row = s->conv_out + t * cd;
        q35_ref_delta_rule_step(s->o + t * vd, S, row, row + kd, row + 2 * kd, s->g + t * hv, s->beta + t * hv, d);
    }
    toc(c, Q35_OP_DELTA);

    tic(c);
    const double *nw = as_f64(s->vec_d, &l->ssm_norm);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t j = 0; j < hv; j++)
            q35_ref_gated_rmsnorm(s->gated + t * vd + j * dv, s->o + t * vd + j * dv, s->z + t * vd + j * dv, nw, dv,
                                  hp->eps);
    toc(c, Q35_OP_GATED_NORM);

    if (project(c, s->proj, s->gated, &l->ssm_out, rows))
        return -1;
    residual_rows(c, rows);
    return ffn(c, l, rows);
}

static int attention(struct ctx *c, const q35_layer *l, int64_t rows, int64_t pos0)
{
    const q35_hparams *hp = c->hp;
    struct scratch *s = c->s;
    const int64_t H = hp->n_embd, hd = hp->head_dim, qd = (int64_t)hp->n_head * hd, kvd = c->st->kv_dim;
    rmsnorm_rows(c, s->normed, s->x, &l->attn_norm, H, rows);
    if (project(c, s->q_full, s->normed, &l->attn_q, rows) || project(c, s->k, s->normed, &l->attn_k, rows) ||
        project(c, s->v, s->normed, &l->attn_v, rows))
        return -1;

    tic(c);
    double *kc = c->st->k_cache + (int64_t)l->slot * c->st->max_seq * kvd;
    double *vc = c->st->v_cache + (int64_t)l->slot * c->st->max_seq * kvd;
    const double *qn = as_f64(s->vec_a, &l->attn_q_norm), *kn = as_f64(s->vec_b, &l->attn_k_norm);
    for (int64_t t = 0; t < rows; t++) {
        double *q = s->q + t * qd, *krow = kc + (pos0 + t) * kvd;
        q35_ref_split_qgate(q, s->gate + t * qd, s->q_full + t * 2 * qd, hp->n_head, (int)hd);
        for (int h = 0; h < hp->n_head; h++)
            q35_ref_rmsnorm(q + h * hd, q + h * hd, qn, hd, hp->eps);
        for (int h = 0; h < hp->n_head_kv; h++)
            q35_ref_rmsnorm(krow + h * hd, s->k + t * kvd + h * hd, kn, hd, hp->eps);
        q35_ref_rope_neox(q, hp->n_head, (int)hd, hp->n_rot, pos0 + t, hp->rope_base);
        q35_ref_rope_neox(krow, hp->n_head_kv, (int)hd, hp->n_rot, pos0 + t, hp->rope_base);
        memcpy(vc + (pos0 + t) * kvd, s->v + t * kvd, (size_t)kvd * sizeof(double));
    }
    toc(c, Q35_OP_QK_NORM_ROPE);

    tic(c);
    const q35_attn_dims d = {.heads = hp->n_head, .kv_heads = hp->n_head_kv, .head_dim = (int)hd,
                             .kv_stride = kvd, .scale = 1.0 / sqrt((double)hd)};
    for (int64_t t = 0; t < rows; t++)
        if (q35_ref_attention(s->attn_o + t * qd, s->q + t * qd, kc, vc, pos0 + t + 1, d))
            return q35_fail(c->err, "reference attention: out of memory for %" PRId64 " scores", pos0 + t + 1);
    toc(c, Q35_OP_ATTN);
    count_flop(c, Q35_OP_ATTN, q35_attention_flop(hp->n_head, hd, pos0, rows));

    tic(c);
    q35_ref_sigmoid_gate(s->attn_o, s->gate, rows * qd);
    toc(c, Q35_OP_OUT_GATE);

    if (project(c, s->proj, s->attn_o, &l->attn_output, rows))
        return -1;
    residual_rows(c, rows);
    return ffn(c, l, rows);
}

/* Output norm and lm_head of row `row` of the chunk. */
static int tail(struct ctx *c, int64_t row, double *logits)
{
    const int64_t H = c->hp->n_embd;
    tic(c);
    q35_ref_rmsnorm(c->s->logit_row, c->s->x + row * H, as_f64(c->s->vec_a, &c->m->output_norm), H, c->hp->eps);
    const q35_weight *w = &c->m->output;
    if (q35_ref_linear_act(logits, c->s->logit_row, w->type, w->data, w->rows, w->cols, 1, c->st->act))
        return q35_fail(c->err, "reference lm_head: out of memory");
    toc(c, Q35_OP_TAIL);
    return 0;
}

static int check_request(const q35_model *m, const q35_ref_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                         int64_t chunk_rows, const int64_t *at, int64_t n_at, q35_error *err)
{
    if (n >= 1 && chunk_rows < 1)
        return q35_fail(err, "prefill: chunk rows %" PRId64 " must be at least 1", chunk_rows);
    return q35_request_check(m->hp.n_vocab, st->kv_len, st->max_seq, tokens, n, pos0, at, n_at, err);
}

int q35_ref_prefill(const q35_model *m, q35_ref_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                    int64_t chunk_rows, const int64_t *at, int64_t n_at, double *logits, q35_op_times *times,
                    q35_error *err)
{
    if (check_request(m, st, tokens, n, pos0, chunk_rows, at, n_at, err))
        return -1;
    const int64_t last = pos0 + n - 1;
    if (n_at == 0 && logits) {
        at = &last;
        n_at = 1;
    }
    const int64_t rows_max = chunk_rows < n ? chunk_rows : n;
    struct scratch s;
    if (scratch_alloc(&s, &m->hp, rows_max))
        return q35_fail(err, "prefill: out of memory for a chunk of %" PRId64 " rows", rows_max);
    struct ctx c = {.m = m, .hp = &m->hp, .st = st, .s = &s, .times = times, .err = err};
    const int64_t H = m->hp.n_embd;
    int64_t next_at = 0;
    int rc = 0;
    for (int64_t r0 = 0; r0 < n && rc == 0; r0 += rows_max) {
        const int64_t rows = n - r0 < rows_max ? n - r0 : rows_max;
        const int64_t pos = pos0 + r0;
        tic(&c);
        for (int64_t t = 0; t < rows; t++)
            q35_ref_embedding(s.x + t * H, m->token_embd.type, m->token_embd.data, H, tokens[r0 + t]);
        toc(&c, Q35_OP_EMBED);
        for (int il = 0; il < m->hp.n_layer && rc == 0; il++) {
            const q35_layer *l = &m->layers[il];
            rc = l->kind == Q35_LAYER_DELTANET ? deltanet(&c, l, rows) : attention(&c, l, rows, pos);
        }
        if (rc == 0)
            st->kv_len = pos + rows;
        for (; rc == 0 && next_at < n_at && at[next_at] < pos + rows; next_at++)
            rc = tail(&c, at[next_at] - pos, logits + next_at * (int64_t)m->hp.n_vocab);
    }
    scratch_free(&s);
    return rc;
}

int q35_ref_forward_token(const q35_model *m, q35_ref_state *st, int32_t token, int64_t pos, double *logits,
                          q35_op_times *times, q35_error *err)
{
    return q35_ref_prefill(m, st, &token, 1, pos, 1, NULL, 0, logits, times, err);
}
