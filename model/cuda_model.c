/* Load (the capacity plan, then the upload and the fast paths' weight sets,
 * cuda_weight_sets.c), the paths of a loaded model, and the workspace every
 * call reuses (cuda_model.h). */
#include "cuda_internal.h"

#include "kernels/attention_flash.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_rule.h"
#include "kernels/fp8.h"
#include "kernels/gemm_lt.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv_q8.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int q35_cuda_devices(char *why, size_t cap)
{
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0) {
        snprintf(why, cap, "%s", rc != cudaSuccess ? cudaGetErrorString(rc) : "no CUDA device present");
        return 0;
    }
    return count;
}

float *q35_cuda_host_floats(size_t n, q35_error *err)
{
    void *p = NULL;
    if (n == 0 || n > SIZE_MAX / sizeof(float)) {
        q35_fail(err, "cuda host memory: %zu floats (1 .. %zu)", n, SIZE_MAX / sizeof(float));
        return NULL;
    }
    if (Q35_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(float)), err))
        return NULL;
    return (float *)p;
}

void q35_cuda_host_free(float *p)
{
    if (p)
        cudaFreeHost(p);
}

/* ---- checks before anything is uploaded ---- */

/* Every weight the forward reads must be of a type the kernels compute. */
static int refuse_type(const q35_weight *w, q35_error *err)
{
    char names[256];
    return q35_fail(err, "cuda model: %s has quant type %s, which no kernel computes (supported: %s)",
                    w->name ? w->name : "a weight", q35_type_name(w->type), q35_type_computable_names(names, sizeof names));
}

static int check_types(const q35_model *m, q35_error *err)
{
    const q35_weight *globals[] = {&m->token_embd, &m->output_norm, &m->output};
    for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++)
        if (!q35_type_computable(globals[i]->type))
            return refuse_type(globals[i], err);
    for (int il = 0; il < m->hp.n_layer; il++) {
        const q35_layer *l = &m->layers[il];
        const q35_weight *w[] = {&l->attn_norm, &l->post_attention_norm, &l->ffn_gate, &l->ffn_up, &l->ffn_down,
                                 &l->attn_qkv, &l->attn_gate, &l->ssm_alpha, &l->ssm_beta, &l->ssm_conv1d,
                                 &l->ssm_dt, &l->ssm_a, &l->ssm_norm, &l->ssm_out, &l->attn_q, &l->attn_k,
                                 &l->attn_v, &l->attn_q_norm, &l->attn_k_norm, &l->attn_output};
        const bool delta = l->kind == Q35_LAYER_DELTANET;
        for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
            const bool used = i < 5 || (delta ? i < 14 : i >= 14);
            if (used && !q35_type_computable(w[i]->type))
                return refuse_type(w[i], err);
        }
    }
    return 0;
}

static q35_attn_shape attn_shape(const q35_hparams *hp)
{
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = (int64_t)hp->n_head_kv * hp->head_dim;
    q35_attn_shape s = {.heads = hp->n_head, .kv_heads = hp->n_head_kv, .head_dim = hp->head_dim, .q_stride = qd,
                        .o_stride = qd, .kv_stride = kvd, .scale = (float)(1.0 / sqrt((double)hp->head_dim))};
    return s;
}

/* The device, its properties and its free memory (after the cap). */
static int open_device(q35_cuda_model *cm, const q35_path_env *env, q35_error *err)
{
    q35_cuda_info *in = &cm->info;
    const int dev = q35_paths_device(&cm->opts, env, in->log, sizeof in->log, err);
    if (dev < 0)
        return -1;
    int count = 0;
    const int rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess || count == 0)
        return q35_fail(err, "cuda model: no usable CUDA device (%s)",
                        rc != cudaSuccess ? cudaGetErrorString((cudaError_t)rc) : "none present");
    if (dev >= count)
        return q35_fail(err, "cuda model: device %d asked for, %d present", dev, count);
    struct cudaDeviceProp p;
    size_t free_b = 0, total_b = 0;
    if (Q35_CUDA_CHECK(cudaSetDevice(dev), err) || Q35_CUDA_CHECK(cudaGetDeviceProperties(&p, dev), err) ||
        Q35_CUDA_CHECK(cudaFree(NULL), err) || /* the context, before its memory is counted */
        Q35_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b), err))
        return -1;
    in->device = dev;
    snprintf(in->device_name, sizeof in->device_name, "%s", p.name);
    in->sm = p.major * 10 + p.minor;
    in->sms = p.multiProcessorCount;
    in->unified = p.integrated != 0;
    in->total_bytes = total_b;
    in->free_bytes = cm->opts.free_cap > 0 && cm->opts.free_cap < free_b ? cm->opts.free_cap : free_b;
    q35_error why = {{0}};
    in->flash_supported = q35_attention_flash_supported(dev, cm->attn, Q35_VARIANT_DEFAULT, &why) == 1;
    in->flash_sm90 = q35_attention_flash_sm90_supported(dev, cm->attn, &why) == 1;
    in->gemm_sm90 = q35_gemm_sm90_supported(dev, &why) == 1 && cm->hp.n_ff % 128 == 0 && cm->hp.n_embd % 64 == 0;
    return 0;
}

/* ---- the plan ---- */

static int make_plan(q35_cuda_model *cm, const q35_path_choice *c, q35_gemm_path gemm, q35_capacity_plan *plan,
                     q35_error *err)
{
    const q35_capacity_request r = {
        .hp = &cm->hp, .weights = cm->wbytes, .seq = c->max_seq, .gemm = gemm,
        .delta = q35_paths_delta_for(c, gemm), .deterministic = c->deterministic, .gemm_lt_off = c->gemm_kernel == Q35_GEMM_KERNEL_CUBLAS,
        .scores_budget = c->scores_budget, .free_bytes = cm->info.free_bytes, .attention = c->attention,
        .n_attention = c->n_attention, .chunk_rows = c->chunk_rows, .n_chunk_rows = c->n_chunk_rows,
    };
    return q35_capacity_plan_make(plan, &r, err);
}

/* The plan for the chosen paths; an f16 set that does not fit falls back to f32, said. */
static int plan_paths(q35_cuda_model *cm, const q35_path_choice *c, q35_error *err)
{
    q35_cuda_info *in = &cm->info;
    q35_gemm_path gemm = c->gemm;
    q35_error f16_err = {{0}}, fp8_err = {{0}};
    if (gemm == Q35_GEMM_FP8 && !c->deterministic) {
        if (!q35_fp8_supported(in->device, &fp8_err)) {
            q35_paths_note(in->log, sizeof in->log, cm->opts.quiet, "warning: GEMM fp8 cannot run here (%s); using f16",
                           fp8_err.msg);
            gemm = Q35_GEMM_F16;
        } else if (make_plan(cm, c, gemm, &in->plan, &fp8_err)) {
            q35_paths_note(in->log, sizeof in->log, cm->opts.quiet,
                           "warning: GEMM fp8: the fp8 weight set (%.1f MiB) does not fit the plan; using f16 (%s)",
                           (double)cm->wbytes.fp8 / (double)Q35_MIB, fp8_err.msg);
            gemm = Q35_GEMM_F16;
        }
    }
    if (gemm == Q35_GEMM_F16 && !c->deterministic && make_plan(cm, c, gemm, &in->plan, &f16_err)) {
        q35_paths_note(in->log, sizeof in->log, cm->opts.quiet,
                       "warning: GEMM f16: the f16 weight set (%.1f MiB) does not fit the plan; using f32 (%s)",
                       (double)cm->wbytes.f16 / (double)Q35_MIB, f16_err.msg);
        gemm = Q35_GEMM_F32;
    }
    if (make_plan(cm, c, gemm, &in->plan, err))
        return q35_fail_context(err, "cuda model on %s (device %d)", in->device_name, in->device);
    cm->paths = (q35_cuda_paths){.attention = in->plan.attention, .gemm = gemm, .delta = q35_paths_delta_for(c, gemm),
                                 .chunk_rows = in->plan.chunk_rows,
                                 .deterministic = c->deterministic, .scores_budget = c->scores_budget};
    q35_paths_apply(c, in->flash_sm90, in->gemm_sm90, &cm->paths, in->log, sizeof in->log, cm->opts.quiet);
    if (q35_model_pick_variants(cm, c, err))
        return -1;
    char line[512];
    q35_paths_note(in->log, sizeof in->log, cm->opts.quiet, "plan for %" PRId64 " positions: attention %s, chunk rows %"
                   PRId64 ": %s", in->plan.seq, q35_attn_path_name(in->plan.attention), in->plan.chunk_rows,
                   q35_capacity_str(&in->plan, line, sizeof line));
    if (c->deterministic)
        q35_paths_note(in->log, sizeof in->log, cm->opts.quiet,
                       "deterministic: projections through q35_gemv_rows, attention through q35_attention_decode_rows"
                       " (the GEMM and attention paths are not used)");
    return 0;
}

/* ---- upload ---- */

/* A quantized weight as stored. */
static int upload_proj(q35_cuda_model *cm, q35_arena *a, const q35_weight *w, const char *kind, q35_dweight *d,
                       q35_error *err)
{
    memset(d, 0, sizeof *d);
    d->type = w->type;
    d->n = w->rows;
    d->k = w->cols;
    snprintf(d->label, sizeof d->label, "proj %s", kind);
    void *dst = q35_arena_take(a, w->nbytes);
    if (!dst)
        return q35_fail(err, "cuda model: the weight arena is too small at %s", w->name);
    d->w = dst;
    return Q35_CUDA_CHECK(cudaMemcpyAsync(dst, w->data, w->nbytes, cudaMemcpyHostToDevice, (cudaStream_t)cm->stream),
                          err);
}

/* A small weight (all rows*cols values) dequantized to f32 on the host. */
static int upload_f32(q35_arena *a, const q35_weight *w, float **out, q35_error *err)
{
    const int64_t n = w->rows * w->cols;
    float *host = malloc((size_t)n * sizeof *host);
    float *dst = q35_arena_take(a, (uint64_t)n * 4u);
    if (!host || !dst) {
        free(host);
        return q35_fail(err, "cuda model: out of %s memory for %s", host ? "arena" : "host", w->name);
    }
    q35_dequantize(w->type, w->data, host, n);
    /* synchronous: the host buffer is freed right after */
    const int rc = Q35_CUDA_CHECK(cudaMemcpy(dst, host, (size_t)n * sizeof *host, cudaMemcpyHostToDevice), err);
    free(host);
    *out = dst;
    return rc;
}

static int upload_layer(q35_cuda_model *cm, q35_arena *a, const q35_layer *l, int index, q35_dlayer *d, q35_error *err)
{
    d->kind = l->kind;
    d->index = index;
    d->slot = l->slot;
    if (upload_f32(a, &l->attn_norm, &d->attn_norm, err) ||
        upload_f32(a, &l->post_attention_norm, &d->post_norm, err) ||
        upload_proj(cm, a, &l->ffn_gate, "ffn_gate", &d->ffn_gate, err) ||
        upload_proj(cm, a, &l->ffn_up, "ffn_up", &d->ffn_up, err) ||
        upload_proj(cm, a, &l->ffn_down, "ffn_down", &d->ffn_down, err))
        return -1;
    if (l->kind == Q35_LAYER_DELTANET)
        return upload_proj(cm, a, &l->attn_qkv, "attn_qkv", &d->qkv, err) ||
               upload_proj(cm, a, &l->attn_gate, "attn_gate", &d->z, err) ||
               upload_proj(cm, a, &l->ssm_alpha, "ssm_alpha", &d->alpha, err) ||
               upload_proj(cm, a, &l->ssm_beta, "ssm_beta", &d->beta, err) ||
               upload_proj(cm, a, &l->ssm_out, "ssm_out", &d->ssm_out, err) ||
               upload_f32(a, &l->ssm_conv1d, &d->conv_w, err) || upload_f32(a, &l->ssm_dt, &d->dt, err) ||
               upload_f32(a, &l->ssm_a, &d->a, err) || upload_f32(a, &l->ssm_norm, &d->ssm_norm, err)
                   ? -1 : 0;
    return upload_proj(cm, a, &l->attn_q, "attn_q", &d->q, err) ||
           upload_proj(cm, a, &l->attn_k, "attn_k", &d->k, err) ||
           upload_proj(cm, a, &l->attn_v, "attn_v", &d->v, err) ||
           upload_proj(cm, a, &l->attn_output, "attn_output", &d->o, err) ||
           upload_f32(a, &l->attn_q_norm, &d->q_norm, err) || upload_f32(a, &l->attn_k_norm, &d->k_norm, err)
               ? -1 : 0;
}

static int upload(q35_cuda_model *cm, const q35_model *m, q35_error *err)
{
    q35_arena a = {.size = cm->wbytes.uploaded};
    if (Q35_CUDA_CHECK(cudaMalloc((void **)&a.base, (size_t)a.size), err))
        return q35_fail_context(err, "cuda model: weights (%.1f MiB)", (double)a.size / (double)Q35_MIB);
    cm->weights = a.base;
    cm->layers = calloc((size_t)m->hp.n_layer, sizeof *cm->layers);
    if (!cm->layers)
        return q35_fail(err, "cuda model: out of host memory");
    for (int il = 0; il < m->hp.n_layer; il++)
        if (upload_layer(cm, &a, &m->layers[il], il, &cm->layers[il], err))
            return -1;
    q35_dweight embd, out;
    if (upload_proj(cm, &a, &m->token_embd, "token_embd", &embd, err) ||
        upload_f32(&a, &m->output_norm, &cm->output_norm, err))
        return -1;
    cm->embd = embd.w;
    cm->embd_type = embd.type;
    cm->lm_head = embd.w;
    cm->lm_type = embd.type;
    if (!m->tied) {
        if (upload_proj(cm, &a, &m->output, "output", &out, err))
            return -1;
        cm->lm_head = out.w;
        cm->lm_type = out.type;
    }
    cm->info.weight_bytes = a.used;
    return Q35_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)cm->stream), err);
}

/* The f16 path's tuned cuBLASLt GEMM (kernels/gemm_lt.h), made once where
 * paths p take it (the capacity plan counts its workspace). */
static int make_hgemm(q35_cuda_model *cm, const q35_cuda_paths *p, q35_error *err)
{
    if (!q35_paths_tune_gemm(p) || cm->hgemm)
        return 0;
    /* switch tune-steady: the candidates timed as the prefill runs them (kernels/gemm_lt.h) */
    const int tune = p->gemm_tune_steady ? Q35_HGEMM_TUNE_STEADY : Q35_HGEMM_TUNE_BURST;
    if (q35_hgemm_create(&cm->hgemm, cm->stream, tune, err))
        return q35_fail_context(err, "cuda model: the f16 GEMM's cuBLASLt context");
    return 0;
}

/* ---- the workspace ---- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

int q35_workspace_ensure(q35_cuda_model *cm, int64_t rows, int64_t seq, q35_error *err)
{
    const q35_cuda_paths *p = &cm->paths;
    q35_workspace want = q35_workspace_of(&cm->hp, &cm->wbytes, rows, seq, p->attention, p->gemm, p->delta,
                                          p->deterministic, p->scores_budget);
    q35_workspace *have = &cm->ws;
    if (cm->ws_mem && want.rows <= have->rows && want.scores <= have->scores && want.dequant <= have->dequant &&
        want.f16_act <= have->f16_act && want.delta <= have->delta && want.ids <= have->ids)
        return 0;
    /* grow to cover both: never shrink between calls */
    if (cm->ws_mem) {
        const int64_t r = want.rows > have->rows ? want.rows : have->rows;
        /* the chunk buffers of r rows (seq = r, so min(rows, seq) = r) */
        const q35_workspace w2 = q35_workspace_of(&cm->hp, &cm->wbytes, r, r, Q35_ATTN_DEFAULT, Q35_GEMM_DEFAULT,
                                                  Q35_DELTA_DEFAULT, true, 1);
        want.rows = r;
        want.chunk = w2.chunk;
        want.scores = max_u64(want.scores, have->scores);
        want.dequant = max_u64(want.dequant, have->dequant);
        want.f16_act = max_u64(want.f16_act, have->f16_act);
        want.delta = max_u64(want.delta, have->delta);
        want.ids = max_u64(want.ids, have->ids);
        want.total = want.chunk + want.scores + want.dequant + want.f16_act + want.delta + want.ids + want.tail;
        if (Q35_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)cm->stream), err))
            return -1;
        cudaFree(cm->ws_mem);
        cm->ws_mem = NULL;
        memset(have, 0, sizeof *have);
    }
    void *mem = NULL;
    if (Q35_CUDA_CHECK(cudaMalloc(&mem, (size_t)want.total), err))
        return q35_fail_context(err, "cuda model: workspace of %.1f MiB for chunks of %" PRId64 " rows to position %"
                                PRId64, (double)want.total / (double)Q35_MIB, want.rows, seq);
    cm->ws_mem = mem;
    *have = want;
    char *at = mem;
    for (int b = 0; b < Q35_BUF_COUNT; b++) {
        cm->buf[b] = (float *)at;
        at += q35_align_bytes((uint64_t)(want.rows * q35_chunk_buf_floats(&cm->hp, (q35_chunk_buf)b)) * 4u);
    }
    cm->scores = want.scores ? (float *)at : NULL;
    at += want.scores;
    cm->dequant = want.dequant ? (float *)at : NULL;
    at += want.dequant;
    cm->f16_act = want.f16_act ? (uint16_t *)at : NULL;
    at += want.f16_act;
    cm->delta_ws = want.delta ? at : NULL;
    at += want.delta;
    cm->ids = (int32_t *)at;
    at += want.ids;
    cm->tail_row = (float *)at;
    at += q35_align_bytes((uint64_t)cm->hp.n_embd * 4u);
    cm->logits = (float *)at;
    cm->dpos = (int64_t *)(at + q35_align_bytes((uint64_t)cm->hp.n_vocab * 4u));
    return 0;
}

/* ---- load, free, paths ---- */

int q35_cuda_model_load(q35_cuda_model **out, const q35_model *m, const q35_cuda_options *o, q35_error *err)
{
    *out = NULL;
    if (check_types(m, err))
        return -1;
    q35_cuda_model *cm = calloc(1, sizeof *cm);
    if (!cm)
        return q35_fail(err, "cuda model: out of host memory");
    cm->hp = m->hp;
    if (o)
        cm->opts = *o;
    else
        q35_cuda_options_init(&cm->opts);
    o = &cm->opts;
    cm->attn = attn_shape(&m->hp);
    cm->wbytes = q35_capacity_weights_of_model(m);
    const q35_path_env env = q35_path_env_get();
    q35_path_choice choice;
    q35_error why = {{0}};
    if (open_device(cm, &env, err))
        goto fail;
    if (!cm->info.flash_supported)
        q35_attention_flash_supported(cm->info.device, cm->attn, Q35_VARIANT_DEFAULT, &why);
    if (q35_paths_resolve(&choice, o, &env, cm->info.flash_supported, why.msg, cm->info.unified, cm->info.log,
                          sizeof cm->info.log, err) ||
        plan_paths(cm, &choice, err))
        goto fail; /* refused before any upload */
    if (Q35_CUDA_CHECK(cudaStreamCreateWithFlags((cudaStream_t *)&cm->stream, cudaStreamNonBlocking), err) ||
        Q35_CUDA_CHECK(cudaMallocHost((void **)&cm->step_in, sizeof *cm->step_in), err) ||
        Q35_CUDA_CHECK(cudaEventCreateWithFlags((cudaEvent_t *)&cm->step_in_copied, cudaEventDisableTiming), err) ||
        q35_blas_create(&cm->blas, cm->stream, err) || upload(cm, m, err))
        goto fail;
    /* the fast path's weight set; fp8 falls back to f16, f16 to f32, each said */
    while (q35_gemm_is_fast(cm->paths.gemm) && !cm->paths.deterministic) {
        const int built = q35_weight_set_build(cm, cm->paths.gemm, err);
        if (built < 0)
            goto fail;
        if (built == 1)
            break;
        cm->paths.gemm = cm->paths.gemm == Q35_GEMM_FP8 ? Q35_GEMM_F16 : Q35_GEMM_F32;
        cm->paths.delta = q35_paths_delta_for(&choice, cm->paths.gemm);
    }
    if (make_hgemm(cm, &cm->paths, err) || q35_workspace_ensure(cm, cm->paths.chunk_rows, cm->info.plan.seq, err))
        goto fail;
    *out = cm;
    return 0;
fail:
    q35_cuda_model_free(cm);
    return -1;
}

void q35_cuda_model_free(q35_cuda_model *cm)
{
    if (!cm)
        return;
    if (cm->stream) {
        cudaSetDevice(cm->info.device);
        cudaStreamSynchronize((cudaStream_t)cm->stream);
    }
    q35_timer_free(&cm->timer);
    q35_graphs_reset(cm);
    cudaFree(cm->ws_mem);
    cudaFree(cm->f16);
    cudaFree(cm->fp8);
    q35_fp8_gemm_destroy(cm->fp8_gemm);
    q35_hgemm_destroy(cm->hgemm);
    cudaFree(cm->weights);
    q35_blas_destroy(cm->blas);
    if (cm->step_in_copied)
        cudaEventDestroy((cudaEvent_t)cm->step_in_copied);
    if (cm->step_in)
        cudaFreeHost(cm->step_in);
    if (cm->stream)
        cudaStreamDestroy((cudaStream_t)cm->stream);
    free(cm->layers);
    free(cm);
}

const q35_hparams *q35_cuda_model_hparams(const q35_cuda_model *cm)
{
    return &cm->hp;
}

const q35_cuda_info *q35_cuda_model_info(const q35_cuda_model *cm)
{
    return &cm->info;
}

const q35_cuda_paths *q35_cuda_model_paths(const q35_cuda_model *cm)
{
    return &cm->paths;
}

int q35_cuda_model_set_paths(q35_cuda_model *cm, const q35_cuda_paths *p, q35_error *err)
{
    const int n_flash = q35_attention_flash_variant_count(), n_scan = q35_delta_rule_variant_count(),
              n_chunk = q35_delta_chunk_variant_count();
    if ((p->attention != Q35_ATTN_F32 && p->attention != Q35_ATTN_FLASH) ||
        (p->gemm != Q35_GEMM_F32 && p->gemm != Q35_GEMM_F16 && p->gemm != Q35_GEMM_FP8) ||
        (p->delta != Q35_DELTA_SCAN && p->delta != Q35_DELTA_CHUNKED) || p->chunk_rows < 1 ||
        p->chunk_rows > (1 << 20) || p->scores_budget < 1 || p->flash_variant < 0 || p->flash_variant >= n_flash ||
        p->delta_rule_variant < 0 || p->delta_rule_variant >= n_scan || p->delta_chunk_variant < 0 ||
        p->delta_chunk_variant >= n_chunk)
        return q35_fail(err, "cuda model paths: attention %d, gemm %d, delta %d, chunk rows %" PRId64 ", scores budget "
                        "%zu, flash variant %d, delta rule variant %d, delta chunk variant %d (want f32/flash, f32/f16/fp8, "
                        "scan/chunked, 1..1048576 rows, a budget > 0, variants 0..%d, 0..%d, 0..%d)",
                        (int)p->attention, (int)p->gemm, (int)p->delta, p->chunk_rows, p->scores_budget,
                        p->flash_variant, p->delta_rule_variant, p->delta_chunk_variant, n_flash - 1, n_scan - 1,
                        n_chunk - 1);
    if (p->gemm_sm90_variant < 0 || p->gemm_sm90_variant >= q35_gemm_sm90_variant_count())
        return q35_fail(err, "cuda model paths: gemm_sm90 variant %d (want 0..%d)", p->gemm_sm90_variant,
                        q35_gemm_sm90_variant_count() - 1);
    if (p->gemv_q8_variant < 0 || p->gemv_q8_variant >= q35_gemv_q8_variant_count())
        return q35_fail(err, "cuda model paths: gemv_q8 variant %d (want 0..%d)", p->gemv_q8_variant,
                        q35_gemv_q8_variant_count() - 1);
    if (p->delta == Q35_DELTA_CHUNKED && p->deterministic)
        return q35_fail(err, "cuda model paths: delta chunked is not batch-invariant (deterministic mode runs the scan)");
    if (p->attention == Q35_ATTN_FLASH && !cm->info.flash_supported) {
        q35_error why = {{0}};
        q35_attention_flash_supported(cm->info.device, cm->attn, Q35_VARIANT_DEFAULT, &why);
        return q35_fail(err, "cuda model paths: flash attention cannot run here (%s)", why.msg);
    }
    if (p->flash_sm90 && !cm->info.flash_sm90) {
        q35_error why = {{0}};
        q35_attention_flash_sm90_supported(cm->info.device, cm->attn, &why);
        return q35_fail(err, "cuda model paths: the sm_90a flash kernel cannot run here (%s)", why.msg);
    }
    if (p->gemm_sm90 && !cm->info.gemm_sm90) {
        q35_error why = {{0}};
        if (q35_gemm_sm90_supported(cm->info.device, &why))
            snprintf(why.msg, sizeof why.msg, "n_ff %" PRId64 " not a multiple of 128 or n_embd %" PRId64
                     " not of 64", (int64_t)cm->hp.n_ff, (int64_t)cm->hp.n_embd);
        return q35_fail(err, "cuda model paths: the sm_90a GEMM (kernels/gemm_sm90.h) cannot run here (%s)", why.msg);
    }
    q35_error vwhy = {{0}};
    if (p->flash_sm90 && !q35_attention_flash_sm90_variant_name(p->flash_sm90_variant))
        return q35_fail(err, "cuda model paths: sm_90a flash variant %d is not one of its registry's (0..%d)",
                        p->flash_sm90_variant, q35_attention_flash_sm90_variant_count() - 1);
    if (p->attention == Q35_ATTN_FLASH && q35_model_flash_runs(p->flash_variant, cm, &vwhy) != 1)
        return q35_fail(err, "cuda model paths: flash variant %s cannot run here (%s)",
                        q35_attention_flash_variant_name(p->flash_variant), vwhy.msg);
    if (q35_model_delta_rule_runs(p->delta_rule_variant, cm, &vwhy) != 1)
        return q35_fail(err, "cuda model paths: delta rule variant %s cannot run here (%s)",
                        q35_delta_rule_variant_name(p->delta_rule_variant), vwhy.msg);
    if (Q35_CUDA_CHECK(cudaSetDevice(cm->info.device), err))
        return -1;
    if (q35_gemm_is_fast(p->gemm) && !p->deterministic) {
        const int built = q35_weight_set_build(cm, p->gemm, err);
        if (built <= 0)
            return built < 0 ? -1 : q35_fail(err, "cuda model paths: GEMM %s, but its weight set (%.0f MiB) cannot be "
                                             "built here (the load's log says why)", q35_gemm_path_name(p->gemm),
                                             (double)(p->gemm == Q35_GEMM_FP8 ? cm->wbytes.fp8 : cm->wbytes.f16) /
                                                 (double)Q35_MIB);
    }
    if (make_hgemm(cm, p, err))
        return -1;
    const q35_cuda_paths old = cm->paths;
    cm->paths = *p;
    if (q35_workspace_ensure(cm, p->chunk_rows, cm->info.plan.seq, err)) {
        cm->paths = old;
        return -1;
    }
    q35_graphs_reset(cm); /* new kernels and GEMM shapes: every row count runs plain once again */
    return 0;
}

bool q35_cuda_model_gemm_lt_steady(const q35_cuda_model *cm)
{
    return cm->hgemm && q35_hgemm_tune(cm->hgemm) == Q35_HGEMM_TUNE_STEADY;
}

q35_phase q35_phase_of(q35_op op)
{
    return op == Q35_OP_PROJ ? Q35_PHASE_PROJ
         : op == Q35_OP_DELTA ? Q35_PHASE_SCAN
         : op == Q35_OP_ATTN ? Q35_PHASE_ATTN
                             : Q35_PHASE_OTHER;
}

const char *q35_phase_name(q35_phase p)
{
    static const char *const names[Q35_PHASE_COUNT] = {"projections", "scan", "attention", "other"};
    return (unsigned)p < Q35_PHASE_COUNT ? names[p] : "?";
}

void q35_phase_times(const q35_op_times *t, double seconds[Q35_PHASE_COUNT])
{
    for (int p = 0; p < Q35_PHASE_COUNT; p++)
        seconds[p] = 0.0;
    for (int op = 0; op < Q35_OP_COUNT; op++)
        seconds[q35_phase_of((q35_op)op)] += t->seconds[op];
}
