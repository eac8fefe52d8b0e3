/* The per-request state on the device (cuda_model.h): one allocation holding
 * the conv windows, the recurrent states and the KV cache. */
#include "cuda_internal.h"

#include "core/half.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of each part, each aligned: conv, ssm, k, v. */
static void state_parts(const q35_cuda_state *st, uint64_t part[4])
{
    part[0] = q35_align_bytes((uint64_t)st->n_delta * (uint64_t)st->conv_len * 4u);
    part[1] = q35_align_bytes((uint64_t)st->n_delta * (uint64_t)st->ssm_len * 4u);
    part[2] = part[3] = q35_align_bytes((uint64_t)st->n_attn * (uint64_t)st->max_seq * (uint64_t)st->kv_dim *
                                        (uint64_t)st->kv_capacity_bytes);
}

static uint64_t state_bytes(const q35_cuda_state *st)
{
    uint64_t part[4];
    state_parts(st, part);
    return part[0] + part[1] + part[2] + part[3];
}

int q35_cuda_state_create(q35_cuda_state **out, const q35_cuda_model *cm, int64_t max_seq, q35_error *err)
{
    *out = NULL;
    const q35_hparams *hp = &cm->hp;
    if (max_seq == 0)
        max_seq = cm->info.plan.seq;
    if (max_seq < 1 || max_seq > INT32_MAX)
        return q35_fail(err, "cuda state: max_seq %" PRId64 " (want 1..%d)", max_seq, INT32_MAX);
    q35_cuda_state *st = calloc(1, sizeof *st);
    if (!st)
        return q35_fail(err, "cuda state: out of host memory");
    st->device = cm->info.device;
    st->max_seq = max_seq;
    st->n_delta = hp->n_delta;
    st->n_attn = hp->n_attn;
    st->conv_len = (int64_t)hp->conv_dim * (hp->conv_kernel - 1);
    st->ssm_len = (int64_t)hp->ssm_hv * hp->ssm_dv * hp->ssm_dk;
    st->kv_dim = (int64_t)hp->n_head_kv * hp->head_dim;
    st->stream = cm->stream;
    /* the cache element the model's paths write (the capacity plan counted the same) */
    st->kv_capacity_bytes = q35_kv_value_bytes(cm->paths.attention, cm->paths.deterministic);
    st->kv_f16 = st->kv_capacity_bytes == 2;
    uint64_t part[4];
    state_parts(st, part);
    const uint64_t bytes = state_bytes(st);
    if (Q35_CUDA_CHECK(cudaSetDevice(st->device), err) || Q35_CUDA_CHECK(cudaMalloc(&st->mem, (size_t)bytes), err)) {
        free(st);
        return q35_fail_context(err, "cuda state of %" PRId64 " positions (%.1f MiB)", max_seq,
                                (double)bytes / (double)Q35_MIB);
    }
    char *p = st->mem;
    st->conv = (float *)p;
    st->ssm = (float *)(p + part[0]);
    st->k_cache = p + part[0] + part[1];
    st->v_cache = p + part[0] + part[1] + part[2];
    if (q35_cuda_state_reset(st, err)) {
        q35_cuda_state_free(st);
        return -1;
    }
    *out = st;
    return 0;
}

void q35_cuda_state_free(q35_cuda_state *st)
{
    if (!st)
        return;
    if (st->mem) {
        cudaSetDevice(st->device);
        cudaStreamSynchronize((cudaStream_t)st->stream); /* no kernel may still write it */
        cudaFree(st->mem);
    }
    free(st);
}

int q35_cuda_state_reset(q35_cuda_state *st, q35_error *err)
{
    if (Q35_CUDA_CHECK(cudaSetDevice(st->device), err) ||
        Q35_CUDA_CHECK(cudaMemsetAsync(st->mem, 0, (size_t)state_bytes(st), (cudaStream_t)st->stream), err))
        return -1;
    st->kv_len = 0;
    st->broken = false;
    return 0;
}

int64_t q35_cuda_state_kv_len(const q35_cuda_state *st)
{
    return st->kv_len;
}

int64_t q35_cuda_state_max_seq(const q35_cuda_state *st)
{
    return st->max_seq;
}

void q35_cuda_state_host_free(q35_cuda_state_host *h)
{
    free(h->conv);
    free(h->ssm);
    free(h->k_cache);
    free(h->v_cache);
    memset(h, 0, sizeof *h);
}

int q35_cuda_state_download(const q35_cuda_state *st, q35_cuda_state_host *h, q35_error *err)
{
    memset(h, 0, sizeof *h);
    h->max_seq = st->max_seq;
    h->kv_len = st->kv_len;
    h->n_delta = st->n_delta;
    h->n_attn = st->n_attn;
    h->conv_len = st->conv_len;
    h->ssm_len = st->ssm_len;
    h->kv_dim = st->kv_dim;
    const size_t conv = (size_t)st->n_delta * (size_t)st->conv_len, ssm = (size_t)st->n_delta * (size_t)st->ssm_len;
    const size_t rows = (size_t)st->kv_len * (size_t)st->kv_dim, kv = (size_t)st->n_attn * rows;
    h->conv = malloc((conv ? conv : 1) * sizeof(float));
    h->ssm = malloc((ssm ? ssm : 1) * sizeof(float));
    h->k_cache = malloc((kv ? kv : 1) * sizeof(float));
    h->v_cache = malloc((kv ? kv : 1) * sizeof(float));
    if (!h->conv || !h->ssm || !h->k_cache || !h->v_cache) {
        q35_cuda_state_host_free(h);
        return q35_fail(err, "cuda state download: out of host memory");
    }
    int rc = Q35_CUDA_CHECK(cudaSetDevice(st->device), err) ||
             Q35_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)st->stream), err) ||
             Q35_CUDA_CHECK(cudaMemcpy(h->conv, st->conv, conv * sizeof(float), cudaMemcpyDeviceToHost), err) ||
             Q35_CUDA_CHECK(cudaMemcpy(h->ssm, st->ssm, ssm * sizeof(float), cudaMemcpyDeviceToHost), err);
    /* the caches' first kv_len rows of each layer, packed; an f16 cache's values
     * widened to f32 (exactly: every half is a float) */
    const size_t vb = st->kv_f16 ? 2 : 4;
    uint16_t *half = st->kv_f16 && rows > 0 ? malloc(2 * rows * sizeof *half) : NULL;
    if (st->kv_f16 && rows > 0 && !half)
        rc = q35_fail(err, "cuda state download: out of host memory");
    for (int l = 0; l < st->n_attn && rc == 0 && rows > 0; l++) {
        const size_t at = (size_t)l * (size_t)st->max_seq * (size_t)st->kv_dim * vb;
        float *k = h->k_cache + l * rows, *v = h->v_cache + l * rows;
        rc = Q35_CUDA_CHECK(cudaMemcpy(half ? (void *)half : k, (const char *)st->k_cache + at, rows * vb,
                                       cudaMemcpyDeviceToHost), err) ||
             Q35_CUDA_CHECK(cudaMemcpy(half ? (void *)(half + rows) : v, (const char *)st->v_cache + at, rows * vb,
                                       cudaMemcpyDeviceToHost), err);
        for (size_t i = 0; half && rc == 0 && i < rows; i++)
            k[i] = q35_f16_to_f32(half[i]), v[i] = q35_f16_to_f32(half[rows + i]);
    }
    free(half);
    if (rc) {
        q35_cuda_state_host_free(h);
        return -1;
    }
    return 0;
}
