/* Prefill and decode (cuda_model.h): the refusals, then chunks of rows, each
 * gathered from the device's embedding table and taken through every layer;
 * the requested rows pay the tail. One stream; the host waits only to hand
 * back logits. */
#include "cuda_internal.h"

#include "kernels/attention_f32.h"
#include "kernels/embedding.h"
#include "model/capacity.h"
#include "model/request.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>

static int embed(q35_run *r, const int32_t *ids)
{
    const q35_cuda_model *cm = r->cm;
    q35_op_begin(r, Q35_OP_EMBED, "embed");
    return q35_op_end(r, q35_embedding_rows(cm->buf[Q35_BUF_X], cm->embd, cm->embd_type, cm->hp.n_embd,
                                            cm->hp.n_vocab, ids, r->T, cm->stream, r->err));
}

/* Every layer over the chunk: plain launches, or a CUDA graph a layer
 * (cuda_graph.c). A pruned last layer (r->prune) leaves r->T at the rows it
 * kept; the chunk's own count is back in r->T after. */
static int layers(q35_run *r)
{
    const q35_cuda_model *cm = r->cm;
    const int64_t T = r->T;
    const bool graphs = q35_graphs_chunk(r);
    for (int il = 0; il < cm->hp.n_layer; il++) {
        const q35_dlayer *l = &cm->layers[il];
        char name[48];
        snprintf(name, sizeof name, "layer %d %s", il, l->kind == Q35_LAYER_DELTANET ? "deltanet" : "attention");
        q35_trace_push(name);
        int (*body)(q35_run *, const q35_dlayer *) =
            l->kind == Q35_LAYER_DELTANET ? q35_layer_deltanet : q35_layer_attention;
        const int rc = graphs ? q35_graphs_layer(r, l, body) : body(r, l);
        r->T = T;
        q35_trace_pop();
        if (rc)
            return q35_fail_context(r->err, "layer %d (%s) at positions %" PRId64 "..%" PRId64, il,
                                    l->kind == Q35_LAYER_DELTANET ? "DeltaNet" : "attention", r->pos,
                                    r->pos + r->T - 1);
    }
    if (!graphs)
        q35_graphs_ran_plain(r);
    return 0;
}

/* The tail of chunk row `row`, its logits copied into out (the host waits). */
static int tail(q35_run *r, int64_t row, float *out)
{
    const q35_cuda_model *cm = r->cm;
    return q35_layer_tail(r, row) ||
           Q35_CUDA_CHECK(cudaMemcpyAsync(out, cm->logits, (size_t)cm->hp.n_vocab * sizeof(float),
                                          cudaMemcpyDeviceToHost, (cudaStream_t)cm->stream), r->err) ||
           Q35_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)cm->stream), r->err)
               ? -1 : 0;
}

/* A decode step's launches (q35_graph_body; no layer of its own): the
 * embedding, every layer, the tail's norm and lm_head when the call wants
 * logits (r->n_keep); no host wait. */
static int step_body(q35_run *r, const q35_dlayer *unused)
{
    (void)unused;
    return embed(r, r->cm->ids) || layers(r) || (r->n_keep > 0 && q35_layer_tail(r, 0));
}

/* One decode step: its token and position to the device, then its launches
 * as the decode graph (cuda_graph.c; untimed, where paths.decode_graph) or
 * plainly, then the logits to the host (the host waits). */
static int token_step(q35_run *r, int32_t token, int64_t pos, float *logits)
{
    q35_cuda_model *cm = r->cm;
    const cudaStream_t stream = (cudaStream_t)cm->stream;
    r->T = 1;
    r->pos = pos;
    r->n_keep = logits ? 1 : 0;
    char name[64];
    snprintf(name, sizeof name, "chunk %" PRId64 "..%" PRId64, pos, pos);
    q35_trace_push(name);
    /* from page-locked memory (cm->step_in), once the last step's copies of it are done */
    int rc = Q35_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)cm->step_in_copied), r->err);
    if (rc == 0) {
        cm->step_in->pos = pos;
        cm->step_in->token = token;
        rc = Q35_CUDA_CHECK(cudaMemcpyAsync(cm->ids, &cm->step_in->token, sizeof token, cudaMemcpyHostToDevice, stream),
                            r->err) ||
             Q35_CUDA_CHECK(cudaMemcpyAsync(cm->dpos, &cm->step_in->pos, sizeof pos, cudaMemcpyHostToDevice, stream),
                            r->err) ||
             Q35_CUDA_CHECK(cudaEventRecord((cudaEvent_t)cm->step_in_copied, stream), r->err);
    }
    if (rc == 0)
        rc = cm->paths.decode_graph && !r->times ? q35_graphs_decode(r, step_body) : step_body(r, NULL);
    if (rc == 0)
        r->st->kv_len = pos + 1;
    if (rc == 0 && logits)
        rc = Q35_CUDA_CHECK(cudaMemcpyAsync(logits, cm->logits, (size_t)cm->hp.n_vocab * sizeof(float),
                                            cudaMemcpyDeviceToHost, stream), r->err) ||
             Q35_CUDA_CHECK(cudaStreamSynchronize(stream), r->err);
    q35_trace_pop();
    return rc ? -1 : 0;
}

/* The chunk loop over checked tokens; the state advances chunk by chunk. A
 * chunk's rows whose logits are asked for (at[]) pay the tail; where the
 * paths prune (q35_paths_prune) and they are fewer than the chunk's rows, the
 * last layer keeps only them, gathered in order into its first rows, so the
 * i-th of them is row i of the last layer's output. */
static int chunks(q35_run *r, const int32_t *tokens, int64_t n, int64_t pos0, int64_t rows_max, const int64_t *at,
                  int64_t n_at, float *logits)
{
    q35_cuda_model *cm = r->cm;
    if (Q35_CUDA_CHECK(cudaMemcpyAsync(cm->ids, tokens, (size_t)n * sizeof *tokens, cudaMemcpyHostToDevice,
                                       (cudaStream_t)cm->stream), r->err))
        return -1;
    int64_t next_at = 0;
    for (int64_t r0 = 0; r0 < n; r0 += rows_max) {
        r->T = n - r0 < rows_max ? n - r0 : rows_max;
        r->pos = pos0 + r0;
        char name[64];
        snprintf(name, sizeof name, "chunk %" PRId64 "..%" PRId64, r->pos, r->pos + r->T - 1);
        q35_trace_push(name);
        int64_t end_at = next_at;
        while (end_at < n_at && at[end_at] < r->pos + r->T)
            end_at++;
        r->keep_at = at + next_at;
        r->n_keep = end_at - next_at;
        r->prune = !r->per_token && q35_paths_prune(&cm->paths) && r->n_keep < r->T;
        int rc = embed(r, cm->ids + r0) || layers(r);
        if (rc == 0)
            r->st->kv_len = r->pos + r->T;
        for (int64_t i = 0; rc == 0 && next_at < end_at; next_at++, i++)
            rc = tail(r, r->prune ? i : at[next_at] - r->pos, logits + next_at * (int64_t)cm->hp.n_vocab);
        q35_trace_pop();
        if (rc)
            return -1;
    }
    return 0;
}

static int run_call(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                    const int64_t *at, int64_t n_at, float *logits, bool per_token, q35_op_times *times,
                    q35_error *err)
{
    if (st->broken)
        return q35_fail(err, "prefill: a failed call left this state unusable; reset it");
    if (st->device != cm->info.device)
        return q35_fail(err, "prefill: the state lives on device %d, the model on device %d", st->device,
                        cm->info.device);
    if (q35_request_check(cm->hp.n_vocab, st->kv_len, st->max_seq, tokens, n, pos0, at, n_at, err))
        return -1;
    const int64_t last = pos0 + n - 1;
    if (n_at == 0 && logits) {
        at = &last;
        n_at = 1;
    }
    const q35_cuda_paths *p = &cm->paths;
    /* the KV cache's element (cuda_internal.h): a call on an empty state takes
     * its paths' (f16 on the flash path, not deterministic), or f16 where the
     * state was made for no more; later calls keep it. A decode step reads
     * either; a prefill that reads f32 (f32 attention, deterministic) refuses
     * an f16 cache rather than read it otherwise than it was written. */
    const bool want_f16 = q35_kv_value_bytes(p->attention, p->deterministic) == 2;
    const bool f16 = st->kv_len > 0 ? st->kv_f16 : want_f16 || st->kv_capacity_bytes == 2;
    if (f16 && !want_f16 && !per_token)
        return q35_fail(err, "prefill: the state's KV cache %s f16 (the flash path's, 2 bytes a value); this %s path "
                        "reads f32: %s",
                        st->kv_len == 0 ? "was made" : "holds", p->deterministic ? "deterministic" : "f32 attention",
                        st->kv_len == 0 ? "create the state under it" : "reset the state first");
    st->kv_f16 = f16;
    const int64_t rows_max = per_token ? 1 : p->chunk_rows < n ? p->chunk_rows : n;
    if (Q35_CUDA_CHECK(cudaSetDevice(cm->info.device), err) || q35_workspace_ensure(cm, rows_max, pos0 + n, err))
        return -1;
    q35_run r = {.cm = cm, .st = st, .per_token = per_token, .times = times, .err = err};
    q35_run_choose(&r);
    if (!per_token && !p->deterministic && p->attention == Q35_ATTN_F32) {
        r.pass_rows = q35_attention_f32_pass_rows(cm->attn, rows_max, pos0 + n, p->scores_budget);
        const size_t need = q35_attention_f32_scores_bytes(cm->attn, r.pass_rows, pos0 + n);
        if (need > cm->ws.scores)
            return q35_fail(err, "prefill: %zu bytes of attention scores for passes of %" PRId64
                            " rows, the workspace holds %" PRIu64, need, r.pass_rows, cm->ws.scores);
    }
    st->broken = true; /* until the call completes */
    q35_trace_push(per_token ? "forward_token" : "prefill");
    int rc = per_token ? token_step(&r, tokens[0], pos0, n_at > 0 ? logits : NULL)
                       : chunks(&r, tokens, n, pos0, rows_max, at, n_at, logits);
    q35_trace_pop();
    if (times && q35_timer_collect(cm, times, err))
        rc = -1;
    cm->timer.n = 0;
    if (rc == 0)
        st->broken = false;
    return rc;
}

int q35_cuda_prefill(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                     float *logits, q35_op_times *times, q35_error *err)
{
    return run_call(cm, st, tokens, n, pos0, NULL, 0, logits, false, times, err);
}

int q35_cuda_prefill_logits_at(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n,
                               int64_t pos0, const int64_t *at, int64_t n_at, float *logits, q35_op_times *times,
                               q35_error *err)
{
    if (n_at < 0 || (n_at > 0 && (!at || !logits)))
        return q35_fail(err, "prefill: %" PRId64 " logit positions (want >= 0, with positions and an output)", n_at);
    return run_call(cm, st, tokens, n, pos0, at, n_at, logits, false, times, err);
}

int q35_cuda_forward_token(q35_cuda_model *cm, q35_cuda_state *st, int32_t token, int64_t pos, float *logits,
                           q35_op_times *times, q35_error *err)
{
    return run_call(cm, st, &token, 1, pos, NULL, 0, logits, true, times, err);
}
