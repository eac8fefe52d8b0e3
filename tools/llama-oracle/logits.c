/* llama.cpp's logits for fixed token ids, for tools/llama-oracle.sh: built
 * there against the pinned libllama (never by the project's build or CI).
 *
 *   logits MODEL.gguf OUT.f32 ID,ID,...
 *
 * One llama_decode of the whole prompt on the CPU, every position's logits
 * asked for, written as float32 [positions][vocab]. Made as exact as llama.cpp
 * allows: an f32 KV cache, flash attention off (its f32 attention path), one
 * sequence, one ubatch. */
#include "llama.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ggml_log_level level, const char *text, void *user)
{
    (void)user;
    if (level == GGML_LOG_LEVEL_ERROR)
        fputs(text, stderr);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL.gguf OUT.f32 ID,ID,...\n", argv[0]);
        return 2;
    }
    int32_t ids[4096];
    int n = 0;
    for (char *p = argv[3], *end; *p && n < 4096; p = *end ? end + 1 : end) {
        ids[n++] = (int32_t)strtol(p, &end, 10);
        if (end == p) {
            fprintf(stderr, "logits: token list '%s' is malformed\n", argv[3]);
            return 2;
        }
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = 0;
    struct llama_model *m = llama_model_load_from_file(argv[1], mp);
    if (!m) {
        fprintf(stderr, "logits: llama.cpp cannot load %s\n", argv[1]);
        return 1;
    }
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = (uint32_t)n + 16;
    cp.n_batch = cp.n_ubatch = (uint32_t)n;
    cp.n_seq_max = 1;
    cp.type_k = GGML_TYPE_F32;
    cp.type_v = GGML_TYPE_F32;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.n_threads = cp.n_threads_batch = 2;
    struct llama_context *ctx = llama_init_from_model(m, cp);
    if (!ctx) {
        fprintf(stderr, "logits: no context for %s\n", argv[1]);
        return 1;
    }
    struct llama_batch b = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; i++) {
        b.token[i] = ids[i];
        b.pos[i] = i;
        b.n_seq_id[i] = 1;
        b.seq_id[i][0] = 0;
        b.logits[i] = 1;
    }
    b.n_tokens = n;
    if (llama_decode(ctx, b) != 0) {
        fprintf(stderr, "logits: llama_decode failed on %s\n", argv[1]);
        return 1;
    }
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(m));
    FILE *f = fopen(argv[2], "wb");
    int rc = f ? 0 : 1;
    for (int i = 0; i < n && rc == 0; i++)
        rc = fwrite(llama_get_logits_ith(ctx, i), sizeof(float), (size_t)vocab, f) == (size_t)vocab ? 0 : 1;
    if (f && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "logits: writing %s failed\n", argv[2]);
    llama_batch_free(b);
    llama_free(ctx);
    llama_model_free(m);
    llama_backend_free();
    return rc;
}
