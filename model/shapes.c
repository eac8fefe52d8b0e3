#include "shapes.h"

#include <string.h>
#include <strings.h>

#define QWEN35_COMMON .head_dim = 256, .ssm_dk = 128, .ssm_dv = 128, .conv_kernel = 4, .n_vocab = 248320, \
                      .n_rot = 64, .full_attn_interval = 4, .n_ctx_train = 262144, .eps = 1e-6f, .rope_base = 1e7f

static const q35_shape k_shapes[] = {
    /* tiny: two attention layers of 4/2 heads (GQA groups of 2), r = 2 DeltaNet
     * heads, ffn 384 (so k-quant mixes fall back to Q5_0/Q8_0 for ffn_down, as
     * real Q4_K_M files do), a small vocabulary. Runs on a CPU in a blink. */
    {.name = "tiny", .n_embd = 256, .n_layer = 8, .n_head = 4, .n_head_kv = 2, .head_dim = 256, .n_ff = 384,
     .ssm_hk = 2, .ssm_hv = 4, .ssm_dk = 128, .ssm_dv = 128, .conv_kernel = 4, .n_vocab = 1024, .n_rot = 64,
     .full_attn_interval = 4, .n_ctx_train = 32768, .eps = 1e-6f, .rope_base = 1e7f, .tied = false},
    {.name = "0.8b", .n_embd = 1024, .n_layer = 24, .n_head = 8, .n_head_kv = 2, .n_ff = 3584, .ssm_hk = 16,
     .ssm_hv = 16, .tied = true, QWEN35_COMMON},
    {.name = "2b", .n_embd = 2048, .n_layer = 24, .n_head = 8, .n_head_kv = 2, .n_ff = 6144, .ssm_hk = 16,
     .ssm_hv = 16, .tied = true, QWEN35_COMMON},
    {.name = "4b", .n_embd = 2560, .n_layer = 32, .n_head = 16, .n_head_kv = 4, .n_ff = 9216, .ssm_hk = 16,
     .ssm_hv = 32, .tied = true, QWEN35_COMMON},
    {.name = "9b", .n_embd = 4096, .n_layer = 32, .n_head = 16, .n_head_kv = 4, .n_ff = 12288, .ssm_hk = 16,
     .ssm_hv = 32, .tied = false, QWEN35_COMMON},
    {.name = "27b", .n_embd = 5120, .n_layer = 64, .n_head = 24, .n_head_kv = 4, .n_ff = 17408, .ssm_hk = 16,
     .ssm_hv = 48, .tied = false, QWEN35_COMMON},
};

const q35_shape *q35_shape_at(int i)
{
    return i >= 0 && i < (int)(sizeof k_shapes / sizeof k_shapes[0]) ? &k_shapes[i] : 0;
}

const q35_shape *q35_shape_find(const char *name)
{
    for (int i = 0; q35_shape_at(i); i++)
        if (strcasecmp(k_shapes[i].name, name) == 0)
            return &k_shapes[i];
    return 0;
}

const q35_shape *q35_shape_default(void)
{
    return &k_shapes[0];
}

void q35_shape_hparams(const q35_shape *s, q35_hparams *hp)
{
    memset(hp, 0, sizeof *hp);
    hp->n_layer = hp->n_layer_file = s->n_layer;
    hp->n_embd = s->n_embd;
    hp->n_ff = s->n_ff;
    hp->n_vocab = s->n_vocab;
    hp->n_ctx_train = s->n_ctx_train;
    hp->n_head = s->n_head;
    hp->n_head_kv = s->n_head_kv;
    hp->head_dim = s->head_dim;
    hp->n_rot = s->n_rot;
    hp->rope_base = s->rope_base;
    hp->eps = s->eps;
    hp->conv_kernel = s->conv_kernel;
    hp->ssm_dk = s->ssm_dk;
    hp->ssm_hk = s->ssm_hk;
    hp->ssm_hv = s->ssm_hv;
    hp->ssm_dv = s->ssm_dv;
    hp->ssm_r = s->ssm_hv / s->ssm_hk;
    hp->conv_dim = 2 * s->ssm_hk * s->ssm_dk + s->ssm_hv * s->ssm_dv;
    hp->full_attn_interval = s->full_attn_interval;
    for (int i = 0; i < s->n_layer && i < Q35_MAX_LAYERS; i++) {
        hp->is_attn[i] = (i + 1) % s->full_attn_interval == 0;
        if (hp->is_attn[i])
            hp->n_attn++;
        else
            hp->n_delta++;
    }
}
