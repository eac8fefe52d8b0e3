/* The Qwen3.5 dense hybrid (GGUF architecture "qwen35"): hyperparameters from
 * the metadata, the layer pattern, and every tensor found, shape- and
 * type-checked, as views into the GGUF image (SPEC §1).
 *
 * Layer i is full attention when (i + 1) % full_attention_interval == 0, or as
 * `qwen35.attention.recurrent_layers` says (a bool per block, true = DeltaNet)
 * when present. An MTP block counted in block_count (`nextn_predict_layers`) is
 * not run: its tensors are left alone and the model carries a note. */
#ifndef Q35_QWEN35_H
#define Q35_QWEN35_H

#include "core/error.h"
#include "core/gguf.h"
#include "core/quant.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_MAX_LAYERS 256

typedef struct q35_hparams {
    int n_layer;          /* decoder layers the forward runs */
    int n_layer_file;     /* block_count, MTP blocks included */
    int n_nextn;          /* MTP blocks skipped (nextn_predict_layers) */
    int n_embd;           /* H, the residual width */
    int n_ff;             /* FFN inner width */
    int n_vocab;          /* rows of token_embd */
    int n_ctx_train;      /* context_length */
    int n_head;           /* attention query heads */
    int n_head_kv;        /* attention KV heads */
    int head_dim;         /* attention head width (key_length) */
    int n_rot;            /* dims rotated by RoPE (rope.dimension_count) */
    float rope_base;      /* rope.freq_base */
    float eps;            /* layer_norm_rms_epsilon */
    int conv_kernel;      /* K, the causal conv width */
    int ssm_dk;           /* DeltaNet key head width (ssm.state_size) */
    int ssm_hk;           /* DeltaNet key heads (ssm.group_count) */
    int ssm_hv;           /* DeltaNet value heads (ssm.time_step_rank) */
    int ssm_dv;           /* DeltaNet value head width (inner_size / Hv) */
    int ssm_r;            /* value heads per key head, Hv / Hk */
    int conv_dim;         /* conv channels, 2*Hk*dk + Hv*dv */
    int full_attn_interval; /* full_attention_interval (0 when recurrent_layers decided) */
    bool is_attn[Q35_MAX_LAYERS]; /* layer pattern: true = full attention */
    int n_attn;           /* full-attention layers */
    int n_delta;          /* DeltaNet layers */
} q35_hparams;

/* A tensor of the model: a view into the GGUF image. A linear weight {in, out}
 * is row-major [out][in]: `rows` = out, `cols` = in. A vector has rows = 1. */
typedef struct q35_weight {
    const char *name;     /* the GGUF tensor name (owned by the GGUF) */
    q35_type type;        /* element type */
    int64_t rows, cols;   /* ne[1], ne[0] */
    const void *data;     /* rows * row_bytes */
    uint64_t nbytes;      /* bytes of data */
} q35_weight;

typedef enum q35_layer_kind { Q35_LAYER_DELTANET = 0, Q35_LAYER_ATTENTION = 1 } q35_layer_kind;

typedef struct q35_layer {
    q35_layer_kind kind;
    int slot;                       /* index among layers of its kind (state slot) */
    q35_weight attn_norm;           /* {H} */
    q35_weight post_attention_norm; /* {H} */
    q35_weight ffn_gate, ffn_up;    /* {H, ffn} */
    q35_weight ffn_down;            /* {ffn, H} */
    /* DeltaNet */
    q35_weight attn_qkv;            /* {H, conv_dim}: rows [q | k | v] */
    q35_weight attn_gate;           /* {H, Hv*dv}: the z gate */
    q35_weight ssm_alpha, ssm_beta; /* {H, Hv} */
    q35_weight ssm_conv1d;          /* {K, conv_dim}: w[c][K-1] multiplies the current token */
    q35_weight ssm_dt;              /* {Hv} (ssm_dt.bias) */
    q35_weight ssm_a;               /* {Hv}, already -exp(A_log) */
    q35_weight ssm_norm;            /* {dv}, shared by all value heads, no +1 */
    q35_weight ssm_out;             /* {Hv*dv, H} */
    /* full attention */
    q35_weight attn_q;              /* {H, 2*heads*hd}: per head [q | gate] */
    q35_weight attn_k, attn_v;      /* {H, kv*hd} */
    q35_weight attn_q_norm, attn_k_norm; /* {hd} */
    q35_weight attn_output;         /* {heads*hd, H} */
} q35_layer;

typedef struct q35_model {
    q35_hparams hp;
    q35_weight token_embd;   /* {H, vocab} */
    q35_weight output_norm;  /* {H} */
    q35_weight output;       /* {H, vocab}: token_embd when the file has none */
    bool tied;               /* output is token_embd */
    q35_layer layers[Q35_MAX_LAYERS]; /* hp.n_layer of them */
    q35_gguf *gguf;          /* owned: the image the weights point into */
    char note[256];          /* what the loader chose to say ("MTP block 24 skipped"), or "" */
    uint64_t n_unknown;      /* tensors the loader does not know: not used, not in an MTP block */
    uint64_t *unknown;       /* their indices in gguf->tensors, file order (owned), or NULL */
} q35_model;

/* Reads hyperparameters and the layer pattern from metadata alone. */
int q35_hparams_read(q35_hparams *hp, const q35_gguf *g, q35_error *err);

/* Builds a model over an open GGUF, taking ownership of it (closed with the
 * model, or on failure). Checks the architecture, every hyperparameter's
 * range and consistency (the floats finite), and each tensor's presence, shape
 * and type. Tensors it does not know are listed in m->unknown, not refused (a
 * renamed output.weight leaves the model tied: callers should say so). */
int q35_model_load(q35_model **out, q35_gguf *g, q35_error *err);

/* Opens a file and loads it. */
int q35_model_open(q35_model **out, const char *path, q35_error *err);

void q35_model_free(q35_model *m);

#ifdef __cplusplus
}
#endif

#endif /* Q35_QWEN35_H */
