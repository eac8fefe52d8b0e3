/* The CUDA model's refusals (SPEC §3), each with its message: an empty prompt;
 * pos0 != kv_len; positions past the cache; a token outside the vocabulary;
 * logit positions not ascending or outside the prompt; a decode step at the
 * wrong position; an unsupported quant type; a device that is not there; paths
 * out of range; a KV cache element the call's path does not read (an f16
 * cache, the flash path's, under f32 attention or the deterministic mode; a
 * state made f16 asked for f32). After each refusal the state is untouched (kv_len and every
 * byte) and goes on working. A load whose capacity plan does not fit the free
 * memory it is given (free_cap) is refused before any upload, leaving the
 * device's free memory exactly where it was; so is a load + prefill + free.
 * Those checks read the device's free memory, which other processes on the
 * device move too: it needs the device to itself (RUN_SERIAL under ctest). */
#include "cuda_model_cases.h"

#include <cuda_runtime_api.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t free_memory(void)
{
    size_t f = 0, t = 0;
    q35_gpu_sync();
    if (cudaMemGetInfo(&f, &t) != cudaSuccess) {
        printf("FAIL  cudaMemGetInfo\n");
        exit(1);
    }
    return f;
}

typedef struct call {
    const char *what, *expect;
    int64_t n, pos0;
    int32_t bad_token;     /* put at index 1 when nonzero */
    int64_t at[2];
    int64_t n_at;
    bool decode;
} call;

static void check_state_refusals(q35_suite *s, q35_cuda_model *cm, const int32_t *tokens, int vocab)
{
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    float *logits = malloc(2 * (size_t)vocab * sizeof *logits);
    if (q35_cuda_state_create(&st, cm, 16, &err) || q35_cuda_prefill(cm, st, tokens, 4, 0, logits, NULL, &err)) {
        printf("FAIL  setup: %s\n", err.msg);
        exit(1);
    }
    q35_cuda_state_host before;
    cm_download(st, &before);
    const call calls[] = {
        {"an empty prompt", "the prompt is empty", 0, 4, 0, {0}, 0, false},
        {"pos0 behind kv_len", "pos0 2 is not where the state stands (4 positions written)", 3, 2, 0, {0}, 0, false},
        {"pos0 past kv_len", "pos0 5 is not where the state stands", 3, 5, 0, {0}, 0, false},
        {"past the cache", "positions 4..16 are past the KV cache (16 rows)", 13, 4, 0, {0}, 0, false},
        {"a token past the vocabulary", "is outside the vocabulary", 3, 4, 1 << 30, {0}, 0, false},
        {"a negative token", "token -1 at prompt index 1 is outside the vocabulary", 3, 4, -1, {0}, 0, false},
        {"logit positions descending", "logit positions must ascend (5 follows 6)", 4, 4, 0, {6, 5}, 2, false},
        {"a logit position before the prompt", "logit position 3 is outside the prompt's positions 4..7", 4, 4, 0,
         {3, 5}, 2, false},
        {"a logit position after the prompt", "logit position 8 is outside", 4, 4, 0, {5, 8}, 2, false},
        {"a decode step at the wrong position", "pos0 3 is not where the state stands", 1, 3, 0, {0}, 0, true},
        {"a decode step past the vocabulary", "is outside the vocabulary", 1, 4, -7, {0}, 0, true},
    };
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        const call *c = &calls[i];
        int32_t buf[16];
        memcpy(buf, tokens, sizeof buf);
        if (c->bad_token)
            buf[c->decode ? 0 : 1] = c->bad_token;
        memset(&err, 0, sizeof err);
        int rc;
        if (c->decode)
            rc = q35_cuda_forward_token(cm, st, buf[0], c->pos0, logits, NULL, &err);
        else if (c->n_at)
            rc = q35_cuda_prefill_logits_at(cm, st, buf, c->n, c->pos0, c->at, c->n_at, logits, NULL, &err);
        else
            rc = q35_cuda_prefill(cm, st, buf, c->n, c->pos0, logits, NULL, &err);
        q35_cuda_state_host after;
        cm_download(st, &after);
        const cm_state_cmp sc = cm_compare_states(&after, &before);
        q35_case(s, rc == -1 && strstr(err.msg, c->expect) != NULL && q35_cuda_state_kv_len(st) == 4 && sc.bitwise,
                 "%-36s refused, state untouched (kv_len %" PRId64 ", %s): %s", c->what, q35_cuda_state_kv_len(st),
                 sc.bitwise ? "bitwise" : sc.msg, err.msg);
        q35_cuda_state_host_free(&after);
    }
    /* and the state goes on: 4 more tokens from where it stands */
    memset(&err, 0, sizeof err);
    const int rc = q35_cuda_prefill(cm, st, tokens + 4, 4, 4, logits, NULL, &err);
    q35_case(s, rc == 0 && q35_cuda_state_kv_len(st) == 8, "after the refusals a prefill at 4 goes on: kv_len %" PRId64
             " %s", q35_cuda_state_kv_len(st), err.msg);
    q35_cuda_state_host_free(&before);
    q35_cuda_state_free(st);
    free(logits);
}

/* The KV cache's element (model/README.md): a state made on the flash path
 * holds f16; a prefill on a path that reads f32 refuses it (the state
 * untouched), a decode step reads it; a reset state made f16 refuses an f32
 * path; a state made f32 takes the flash path's f16 after a reset. */
static void check_kv_element(q35_suite *s, q35_cuda_model *cm, const int32_t *tokens, int vocab)
{
    if (!q35_cuda_model_info(cm)->flash_supported) {
        q35_case(s, true, "KV cache element: no flash on this device (nothing to check)");
        return;
    }
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    float *logits = malloc((size_t)vocab * sizeof *logits);
    cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_F32, 512, false, 0);
    if (q35_cuda_state_create(&st, cm, 16, &err) || q35_cuda_prefill(cm, st, tokens, 8, 0, logits, NULL, &err)) {
        printf("FAIL  setup: %s\n", err.msg);
        exit(1);
    }
    q35_cuda_state_host before;
    cm_download(st, &before);
    static const struct { const char *what; bool det; } paths[] = {{"f32 attention", false}, {"deterministic", true}};
    for (int i = 0; i < 2; i++) {
        cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 512, paths[i].det, 0);
        memset(&err, 0, sizeof err);
        const int rc = q35_cuda_prefill(cm, st, tokens + 8, 4, 8, logits, NULL, &err);
        q35_cuda_state_host after;
        cm_download(st, &after);
        const cm_state_cmp sc = cm_compare_states(&after, &before);
        q35_case(s, rc == -1 && strstr(err.msg, "KV cache holds f16") && strstr(err.msg, paths[i].what) &&
                        strstr(err.msg, "reset the state first") && q35_cuda_state_kv_len(st) == 8 && sc.bitwise,
                 "%-36s refused over an f16 cache, state untouched (kv_len %" PRId64 ", %s): %s", paths[i].what,
                 q35_cuda_state_kv_len(st), sc.bitwise ? "bitwise" : sc.msg, err.msg);
        q35_cuda_state_host_free(&after);
    }
    memset(&err, 0, sizeof err);
    int rc = q35_cuda_forward_token(cm, st, tokens[8], 8, logits, NULL, &err);
    q35_case(s, rc == 0 && q35_cuda_state_kv_len(st) == 9,
             "a decode step (deterministic paths) reads the f16 cache: kv_len %" PRId64 " %s",
             q35_cuda_state_kv_len(st), err.msg);
    memset(&err, 0, sizeof err);
    rc = q35_cuda_state_reset(st, &err);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 512, false, 0);
    rc = rc || q35_cuda_prefill(cm, st, tokens, 4, 0, logits, NULL, &err) != -1;
    q35_case(s, rc == 0 && strstr(err.msg, "was made f16") && strstr(err.msg, "create the state under it") &&
                    q35_cuda_state_kv_len(st) == 0,
             "%-36s refused on a reset state made f16: %s", "f32 attention", err.msg);
    q35_cuda_state_free(st);
    /* a state made f32 (on the f32 path) takes f16 on the flash path after a reset, and back */
    memset(&err, 0, sizeof err);
    rc = q35_cuda_state_create(&st, cm, 16, &err) || q35_cuda_prefill(cm, st, tokens, 4, 0, logits, NULL, &err) ||
         q35_cuda_state_reset(st, &err);
    cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_F32, 512, false, 0);
    rc = rc || q35_cuda_prefill(cm, st, tokens, 4, 0, logits, NULL, &err) || q35_cuda_state_reset(st, &err);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 512, false, 0);
    rc = rc || q35_cuda_prefill(cm, st, tokens, 4, 0, logits, NULL, &err);
    q35_case(s, rc == 0, "a state made f32: f32, then flash (f16), then f32 prefills after resets %s", err.msg);
    q35_cuda_state_free(st);
    q35_cuda_state_host_free(&before);
    free(logits);
}

static void check_load_refusal(q35_suite *s, const char *what, const q35_model *m, const q35_cuda_options *o,
                               const char *expect)
{
    const size_t f0 = free_memory();
    q35_cuda_model *cm = NULL;
    q35_error err = {{0}};
    const int rc = q35_cuda_model_load(&cm, m, o, &err);
    const size_t f1 = free_memory();
    q35_case(s, rc == -1 && cm == NULL && strstr(err.msg, expect) != NULL && f0 == f1,
             "%-36s refused, free memory %s (%zu -> %zu bytes%s): %s", what, f0 == f1 ? "unchanged" : "CHANGED", f0, f1,
             f0 == f1 ? "" : "; another process on this device also moves it", err.msg);
    q35_cuda_model_free(cm);
}

/* A decode step (after a prefill of 15) on two states, its logits into
 * page-locked and pageable memory, each poisoned first: the same bytes. */
static void check_host_floats(q35_suite *s, q35_cuda_model *cm, const int32_t *tokens, int vocab)
{
    q35_error err = {{0}};
    float *none = q35_cuda_host_floats(0, &err);
    q35_case(s, none == NULL && strstr(err.msg, "0 floats") != NULL, "%-36s refused: %s", "page-locked logits, 0 floats",
             err.msg);
    q35_cuda_host_free(none);
    float *out[2] = {q35_cuda_host_floats((size_t)vocab, &err), malloc((size_t)vocab * sizeof(float))};
    bool ok = out[0] && out[1];
    for (int k = 0; k < 2 && ok; k++) {
        memset(out[k], k ? 0x7f : 0xff, (size_t)vocab * sizeof(float)); /* two NaN patterns */
        q35_cuda_state *st = NULL;
        ok = q35_cuda_state_create(&st, cm, 64, &err) == 0 && q35_cuda_prefill(cm, st, tokens, 15, 0, NULL, NULL, &err) == 0 &&
             q35_cuda_forward_token(cm, st, tokens[15], 15, out[k], NULL, &err) == 0;
        q35_cuda_state_free(st);
    }
    q35_case(s, ok && memcmp(out[0], out[1], (size_t)vocab * sizeof(float)) == 0, "%-36s %s %s",
             "a decode step's logits, page-locked", ok ? "bitwise the pageable copy's" : "failed:", ok ? "" : err.msg);
    q35_cuda_host_free(out[0]);
    free(out[1]);
}

static void check_paths_refusal(q35_suite *s, q35_cuda_model *cm)
{
    const q35_cuda_paths before = *q35_cuda_model_paths(cm);
    q35_cuda_paths p = before;
    p.chunk_rows = 0;
    q35_error err = {{0}};
    const int rc = q35_cuda_model_set_paths(cm, &p, &err);
    const q35_cuda_paths *now = q35_cuda_model_paths(cm);
    q35_case(s, rc == -1 && strstr(err.msg, "chunk rows 0") != NULL && now->chunk_rows == before.chunk_rows,
             "%-36s refused, paths unchanged: %s", "chunk rows 0", err.msg);
}

int main(void)
{
    q35_suite s;
    q35_rng rng;
    const int skip = q35_gpu_suite(&s, "CUDA model refusals and the capacity plan's refusal", &rng);
    if (skip)
        return skip;
    q35_model *m = cm_model("tiny", 0, 0, "q4_k_m", q35_rng_next(&rng));
    int32_t *tokens = cm_tokens(16, m->hp.n_vocab, &rng);

    /* a load + prefill + free leaves nothing behind (a second cycle: the first
     * one's libraries may keep their own memory) */
    for (int cycle = 0; cycle < 2; cycle++) {
        const size_t f0 = free_memory();
        q35_cuda_model *cm = cm_load(m, 64);
        q35_cuda_state *st = NULL;
        q35_error err = {{0}};
        float *logits = malloc((size_t)m->hp.n_vocab * sizeof *logits);
        if (q35_cuda_state_create(&st, cm, 64, &err) || q35_cuda_prefill(cm, st, tokens, 16, 0, logits, NULL, &err)) {
            printf("FAIL  %s\n", err.msg);
            return 1;
        }
        q35_cuda_state_free(st);
        if (cycle == 1) {
            check_state_refusals(&s, cm, tokens, m->hp.n_vocab);
            check_paths_refusal(&s, cm);
            check_kv_element(&s, cm, tokens, m->hp.n_vocab);
            check_host_floats(&s, cm, tokens, m->hp.n_vocab);
        }
        q35_cuda_model_free(cm);
        free(logits);
        const size_t f1 = free_memory();
        /* a sanitizer keeps memory of its own around frees: checked without one */
        if (cycle == 1)
            q35_case(&s, f0 == f1 || q35_quick(), "load, prefill, free: free memory %s (%zu -> %zu bytes)%s",
                     f0 == f1 ? "unchanged" : "CHANGED", f0, f1, q35_quick() ? " (not checked under Q35_QUICK)" : "");
    }

    /* the capacity plan, refused below its own total */
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    o.max_seq = 4096;
    o.attention = Q35_ATTN_F32;
    o.gemm = Q35_GEMM_F32; /* the exact path, named: the fast default would fall back to it when short */
    o.delta = Q35_DELTA_SCAN;
    o.chunk_rows = 512;
    q35_cuda_model *cm = NULL;
    q35_error err = {{0}};
    if (q35_cuda_model_load(&cm, m, &o, &err)) {
        printf("FAIL  %s\n", err.msg);
        return 1;
    }
    const uint64_t need = q35_cuda_model_info(cm)->plan.terms.total;
    q35_cuda_model_free(cm);
    o.free_cap = need - Q35_MIB;
    check_load_refusal(&s, "a device 1 MiB short of the plan", m, &o, "MiB free");
    o.free_cap = need / 2;
    check_load_refusal(&s, "a device half the plan", m, &o, "workspace");
    o.free_cap = 0;
    o.device = 999;
    check_load_refusal(&s, "a device that is not there", m, &o, "device 999 asked for");
    o.device = -1;
    const q35_type was = m->layers[0].ffn_up.type;
    m->layers[0].ffn_up.type = Q35_TYPE_TQ2_0; /* a type ggml defines and no kernel here computes */
    check_load_refusal(&s, "an unsupported quant type", m, &o, "blk.0.ffn_up.weight has quant type tq2_0");
    m->layers[0].ffn_up.type = was;
    o.free_cap = need; /* exactly the plan: it loads */
    q35_case(&s, q35_cuda_model_load(&cm, m, &o, &err) == 0, "a device with exactly the plan's %.1f MiB loads %s",
             (double)need / (double)Q35_MIB, err.msg);
    q35_cuda_model_free(cm);

    free(tokens);
    q35_model_free(m);
    return q35_suite_end(&s);
}
