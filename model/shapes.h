/* Model shapes: the released Qwen3.5 dense sizes of SPEC §1 and a tiny default
 * for fast runs and CI. The loader never reads these: it reads every size from
 * the file. They feed the generator and the capacity plan's tests. */
#ifndef Q35_SHAPES_H
#define Q35_SHAPES_H

#include "model/qwen35.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_shape {
    const char *name;      /* "tiny", "0.8b", "2b", "4b", "9b", "27b" */
    int n_embd;            /* H */
    int n_layer;           /* decoder layers */
    int n_head;            /* attention query heads */
    int n_head_kv;         /* attention KV heads */
    int head_dim;          /* attention head width */
    int n_ff;              /* FFN inner width */
    int ssm_hk;            /* DeltaNet key heads */
    int ssm_hv;            /* DeltaNet value heads */
    int ssm_dk;            /* DeltaNet key head width */
    int ssm_dv;            /* DeltaNet value head width */
    int conv_kernel;       /* causal conv width */
    int n_vocab;           /* vocabulary */
    int n_rot;             /* RoPE dims */
    int full_attn_interval;/* every n-th layer is full attention */
    int n_ctx_train;       /* context_length written */
    float eps;             /* RMSNorm epsilon */
    float rope_base;       /* RoPE base */
    bool tied;             /* no output.weight: lm_head is token_embd */
} q35_shape;

/* The shape of that name (case-insensitive, "9B" == "9b"), or NULL. */
const q35_shape *q35_shape_find(const char *name);

/* The i-th known shape, or NULL past the end. */
const q35_shape *q35_shape_at(int i);

/* The built-in default: "tiny". */
const q35_shape *q35_shape_default(void);

/* The hyperparameters a file of this shape loads as (no MTP block): what the
 * capacity plan's tests reason about without building the model. */
void q35_shape_hparams(const q35_shape *s, q35_hparams *hp);

#ifdef __cplusplus
}
#endif

#endif /* Q35_SHAPES_H */
