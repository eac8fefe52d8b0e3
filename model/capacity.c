/* The capacity plan (capacity.h): sums of bytes, first fit over candidates. */
#include "capacity.h"

#include "kernels/blas.h"
#include "kernels/delta_chunk.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

uint64_t q35_align_bytes(uint64_t bytes)
{
    return (bytes + Q35_CAPACITY_ALIGN - 1) / Q35_CAPACITY_ALIGN * Q35_CAPACITY_ALIGN;
}

/* The weights of one layer: every one the forward reads. Projections are the
 * linear weights a GEMM or GEMV reads as stored; the rest are uploaded as f32. */
enum { LAYER_WEIGHTS_MAX = 16 };

static int layer_weights(const q35_layer *l, const q35_weight **w, bool *proj)
{
    int n = 0;
#define W(field, is_proj) (w[n] = &l->field, proj[n++] = (is_proj))
    W(attn_norm, false);
    W(post_attention_norm, false);
    W(ffn_gate, true);
    W(ffn_up, true);
    W(ffn_down, true);
    if (l->kind == Q35_LAYER_DELTANET) {
        W(attn_qkv, true);
        W(attn_gate, true);
        W(ssm_alpha, true);
        W(ssm_beta, true);
        W(ssm_out, true);
        W(ssm_conv1d, false);
        W(ssm_dt, false);
        W(ssm_a, false);
        W(ssm_norm, false);
    } else {
        W(attn_q, true);
        W(attn_k, true);
        W(attn_v, true);
        W(attn_output, true);
        W(attn_q_norm, false);
        W(attn_k_norm, false);
    }
#undef W
    return n;
}

static uint64_t f32_bytes(const q35_weight *w)
{
    return (uint64_t)(w->rows * w->cols) * 4u;
}

static void add_layer(q35_weight_bytes *b, const q35_layer *l)
{
    const q35_weight *w[LAYER_WEIGHTS_MAX];
    bool proj[LAYER_WEIGHTS_MAX];
    const int n = layer_weights(l, w, proj);
    for (int i = 0; i < n; i++) {
        if (!proj[i]) {
            b->uploaded += q35_align_bytes(f32_bytes(w[i]));
            continue;
        }
        b->uploaded += q35_align_bytes(w[i]->nbytes);
        b->f16 += q35_align_bytes((uint64_t)(w[i]->rows * w[i]->cols) * 2u);
        b->fp8 += q35_align_bytes((uint64_t)(w[i]->rows * w[i]->cols)) + q35_align_bytes((uint64_t)w[i]->rows * 4u);
        if (w[i]->rows * w[i]->cols > b->largest_proj)
            b->largest_proj = w[i]->rows * w[i]->cols;
        if (w[i]->cols > b->widest_input)
            b->widest_input = w[i]->cols;
    }
}

static void add_globals(q35_weight_bytes *b, const q35_weight *embd, const q35_weight *output_norm,
                        const q35_weight *output, bool tied)
{
    b->uploaded += q35_align_bytes(embd->nbytes) + q35_align_bytes(f32_bytes(output_norm));
    if (!tied)
        b->uploaded += q35_align_bytes(output->nbytes);
}

q35_weight_bytes q35_capacity_weights_of_model(const q35_model *m)
{
    q35_weight_bytes b = {0};
    for (int il = 0; il < m->hp.n_layer; il++)
        add_layer(&b, &m->layers[il]);
    add_globals(&b, &m->token_embd, &m->output_norm, &m->output, m->tied);
    return b;
}

/* A weight of the shape: rows x cols in `type` (f32 for vectors). */
static q35_weight shaped(int64_t rows, int64_t cols, q35_type type)
{
    q35_weight w = {.type = type, .rows = rows, .cols = cols};
    w.nbytes = (uint64_t)rows * q35_row_bytes(type, cols);
    return w;
}

q35_weight_bytes q35_capacity_weights_of_shape(const q35_hparams *hp, q35_type type, bool tied)
{
    const int64_t H = hp->n_embd, ff = hp->n_ff, vd = (int64_t)hp->ssm_hv * hp->ssm_dv;
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = (int64_t)hp->n_head_kv * hp->head_dim;
    q35_weight_bytes b = {0};
    for (int il = 0; il < hp->n_layer; il++) {
        q35_layer l = {.kind = hp->is_attn[il] ? Q35_LAYER_ATTENTION : Q35_LAYER_DELTANET};
        l.attn_norm = l.post_attention_norm = shaped(1, H, Q35_TYPE_F32);
        l.ffn_gate = l.ffn_up = shaped(ff, H, type);
        l.ffn_down = shaped(H, ff, type);
        l.attn_qkv = shaped(hp->conv_dim, H, type);
        l.attn_gate = shaped(vd, H, type);
        l.ssm_alpha = l.ssm_beta = shaped(hp->ssm_hv, H, type);
        l.ssm_out = shaped(H, vd, type);
        l.ssm_conv1d = shaped(hp->conv_dim, hp->conv_kernel, Q35_TYPE_F32);
        l.ssm_dt = l.ssm_a = shaped(1, hp->ssm_hv, Q35_TYPE_F32);
        l.ssm_norm = shaped(1, hp->ssm_dv, Q35_TYPE_F32);
        l.attn_q = shaped(2 * qd, H, type);
        l.attn_k = l.attn_v = shaped(kvd, H, type);
        l.attn_output = shaped(H, qd, type);
        l.attn_q_norm = l.attn_k_norm = shaped(1, hp->head_dim, Q35_TYPE_F32);
        add_layer(&b, &l);
    }
    const q35_weight embd = shaped(hp->n_vocab, H, type), norm = shaped(1, H, Q35_TYPE_F32);
    add_globals(&b, &embd, &norm, &embd, tied);
    return b;
}

q35_mix_cols q35_mix_cols_of(const q35_hparams *hp)
{
    const int64_t vd = (int64_t)hp->ssm_hv * hp->ssm_dv;
    const q35_mix_cols c = {.qkv = 0, .z = hp->conv_dim, .alpha = hp->conv_dim + vd, .beta = hp->conv_dim + vd + hp->ssm_hv,
                            .width = (hp->conv_dim + vd + 2 * (int64_t)hp->ssm_hv + 3) / 4 * 4};
    return c;
}

int64_t q35_chunk_buf_floats(const q35_hparams *hp, q35_chunk_buf b)
{
    const int64_t H = hp->n_embd, vd = (int64_t)hp->ssm_hv * hp->ssm_dv;
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = (int64_t)hp->n_head_kv * hp->head_dim;
    switch (b) {
    case Q35_BUF_X: case Q35_BUF_NORMED: case Q35_BUF_PROJ: return H;
    case Q35_BUF_MIX: return q35_mix_cols_of(hp).width;
    case Q35_BUF_CONV_OUT: return hp->conv_dim;
    case Q35_BUF_G: case Q35_BUF_BETA: return hp->ssm_hv;
    case Q35_BUF_O: return vd;
    case Q35_BUF_Q_FULL: return 2 * qd + 2 * kvd;
    case Q35_BUF_Q: case Q35_BUF_GATE: case Q35_BUF_ATTN_O: return qd;
    case Q35_BUF_K: return kvd;
    case Q35_BUF_GU: return 2 * hp->n_ff;
    case Q35_BUF_FFN_ACT: return hp->n_ff;
    case Q35_BUF_COUNT: break;
    }
    return 0;
}

int q35_kv_value_bytes(q35_attn_path attention, bool deterministic)
{
    return attention == Q35_ATTN_FLASH && !deterministic ? 2 : 4;
}

q35_workspace q35_workspace_of(const q35_hparams *hp, const q35_weight_bytes *w, int64_t chunk_rows, int64_t seq,
                               q35_attn_path attention, q35_gemm_path gemm, q35_delta_path delta, bool deterministic,
                               size_t scores_budget)
{
    q35_workspace ws = {.rows = chunk_rows < seq ? chunk_rows : seq};
    if (ws.rows < 1)
        ws.rows = 1;
    for (int b = 0; b < Q35_BUF_COUNT; b++)
        ws.chunk += q35_align_bytes((uint64_t)(ws.rows * q35_chunk_buf_floats(hp, (q35_chunk_buf)b)) * 4u);
    if (attention == Q35_ATTN_F32 && !deterministic) {
        /* attention_f32.h: a pass's scores are heads/kv * pass_rows * ld floats, ld =
         * seq rounded up to 32; pass_rows the budget's rows, clamped to [1, rows].
         * A call ending before seq may take up to max(one row, the budget) with
         * its own pass rows: the term is that bound. */
        const uint64_t hpk = (uint64_t)(hp->n_head / (hp->n_head_kv > 0 ? hp->n_head_kv : 1));
        const uint64_t row_bytes = 4u * hpk * (uint64_t)((seq + 31) / 32 * 32);
        const uint64_t by_budget = scores_budget / row_bytes;
        ws.pass_rows = by_budget < 1 ? 1 : by_budget > (uint64_t)ws.rows ? ws.rows : (int64_t)by_budget;
        const uint64_t all = (uint64_t)ws.rows * row_bytes, cap = row_bytes > scores_budget ? row_bytes : scores_budget;
        ws.scores = q35_align_bytes(all < cap ? all : cap);
    }
    if (!deterministic && gemm == Q35_GEMM_F32)
        ws.dequant = q35_align_bytes((uint64_t)w->largest_proj * 4u);
    if (!deterministic && gemm == Q35_GEMM_F16)
        ws.f16_act = q35_align_bytes((uint64_t)(ws.rows * w->widest_input) * 2u);
    if (!deterministic && gemm == Q35_GEMM_FP8) /* the rows' codes, then their scales */
        ws.f16_act = q35_align_bytes((uint64_t)(ws.rows * w->widest_input)) + q35_align_bytes((uint64_t)ws.rows * 4u);
    if (!deterministic && delta == Q35_DELTA_CHUNKED && hp->n_delta > 0) {
        const q35_delta_dims d = {.hk = hp->ssm_hk, .hv = hp->ssm_hv, .dk = hp->ssm_dk, .dv = hp->ssm_dv};
        ws.delta = q35_align_bytes((uint64_t)q35_delta_chunk_workspace_bytes(ws.rows, d));
    }
    ws.ids = q35_align_bytes((uint64_t)seq * 4u);
    ws.tail = q35_align_bytes((uint64_t)hp->n_embd * 4u) + q35_align_bytes((uint64_t)hp->n_vocab * 4u) +
              q35_align_bytes(8u); /* the decode step's position */
    ws.total = ws.chunk + ws.scores + ws.dequant + ws.f16_act + ws.delta + ws.ids + ws.tail;
    return ws;
}

q35_capacity_terms q35_capacity_terms_of(const q35_capacity_request *r, q35_attn_path attention, int64_t chunk_rows,
                                         q35_workspace *ws)
{
    const q35_hparams *hp = r->hp;
    const uint64_t kv_dim = (uint64_t)hp->n_head_kv * (uint64_t)hp->head_dim;
    const uint64_t per_delta = (uint64_t)hp->conv_dim * (uint64_t)(hp->conv_kernel - 1) +
                               (uint64_t)hp->ssm_hv * (uint64_t)hp->ssm_dv * (uint64_t)hp->ssm_dk;
    *ws = q35_workspace_of(hp, &r->weights, chunk_rows, r->seq, attention, r->gemm, r->delta, r->deterministic,
                           r->scores_budget);
    q35_capacity_terms t = {
        .weights = r->weights.uploaded,
        .f16_weights = r->deterministic          ? 0
                       : r->gemm == Q35_GEMM_F16 ? r->weights.f16
                       : r->gemm == Q35_GEMM_FP8 ? r->weights.fp8
                                                 : 0,
        .kv = 2u * q35_align_bytes((uint64_t)hp->n_attn * (uint64_t)r->seq * kv_dim *
                                   (uint64_t)q35_kv_value_bytes(attention, r->deterministic)),
        .recurrent = q35_align_bytes((uint64_t)hp->n_delta * per_delta * 4u),
        .workspace = ws->total,
        .overhead = Q35_CAPACITY_OVERHEAD,
    };
    /* the cuBLASLt context made with the fast GEMM path's set (model/cuda_model.c) */
    if ((r->gemm == Q35_GEMM_FP8 && !r->deterministic) || q35_gemm_tuned_f16(r->gemm, r->deterministic, r->gemm_lt_off))
        t.lt_workspace = Q35_LT_WORKSPACE_BYTES;
    t.total = t.weights + t.f16_weights + t.kv + t.recurrent + t.workspace + t.lt_workspace + t.overhead;
    return t;
}

static double mib(uint64_t b)
{
    return (double)b / (double)Q35_MIB;
}

const char *q35_capacity_str(const q35_capacity_plan *p, char *buf, size_t cap)
{
    const q35_capacity_terms *t = &p->terms;
    char lt[40] = "";
    if (t->lt_workspace)
        snprintf(lt, sizeof lt, " + cuBLASLt %.1f", mib(t->lt_workspace));
    snprintf(buf, cap,
             "weights %.1f + %s weights %.1f + KV %.1f + recurrent %.1f + workspace %.1f%s + overhead %.1f = %.1f MiB"
             " %s %.1f MiB free",
             mib(t->weights), p->gemm == Q35_GEMM_FP8 ? "fp8" : "f16", mib(t->f16_weights), mib(t->kv),
             mib(t->recurrent), mib(t->workspace), lt, mib(t->overhead), mib(t->total),
             t->total <= p->free_bytes ? "<=" : ">", mib(p->free_bytes));
    return buf;
}

int q35_capacity_plan_make(q35_capacity_plan *plan, const q35_capacity_request *r, q35_error *err)
{
    memset(plan, 0, sizeof *plan);
    plan->free_bytes = r->free_bytes;
    plan->seq = r->seq;
    plan->gemm = r->gemm;
    if (r->seq < 1 || r->n_attention < 1 || r->n_chunk_rows < 1)
        return q35_fail(err, "capacity plan: %" PRId64 " positions, %d attention and %d chunk-rows candidates "
                        "(want at least 1 of each)", r->seq, r->n_attention, r->n_chunk_rows);
    char tried[768] = "";
    size_t used = 0;
    for (int i = 0; i < r->n_chunk_rows; i++)
        for (int j = 0; j < r->n_attention; j++) {
            plan->attention = r->attention[j];
            plan->chunk_rows = r->chunk_rows[i];
            plan->terms = q35_capacity_terms_of(r, plan->attention, plan->chunk_rows, &plan->workspace);
            if (plan->terms.total <= r->free_bytes) {
                plan->fits = true;
                return 0;
            }
            if (used < sizeof tried) {
                const int k = snprintf(tried + used, sizeof tried - used, "%s%s/%" PRId64 " %.1f MiB",
                                       used ? ", " : "", q35_attn_path_name(plan->attention), plan->chunk_rows,
                                       mib(plan->terms.total));
                used += k > 0 ? (size_t)k : 0;
            }
        }
    char line[512];
    return q35_fail(err, "capacity plan: %" PRId64 " positions do not fit: %s (GEMM %s%s; tried attention/chunk rows: %s)",
                    r->seq, q35_capacity_str(plan, line, sizeof line), q35_gemm_path_name(r->gemm),
                    r->deterministic ? ", deterministic" : "", tried);
}
