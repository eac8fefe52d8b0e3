/* The synthetic model generator: a valid `qwen35` GGUF with random weights of
 * realistic scale, to a file or to memory (the same bytes either way).
 *
 *   linear weights   N(0, 0.02)           2-D, in the mix's type
 *   token_embd       N(0, 1)
 *   norm weights     1 + N(0, 0.1)        attn_norm, post_attention_norm, q/k norm, ssm_norm, output_norm
 *   ssm_a            -A, A log-uniform in [0.01, 16]   (decays from e^-0.01 to ~0 per token)
 *   ssm_dt.bias      1 + N(0, 0.1)
 *   ssm_conv1d       N(0, 0.3)            F32
 *
 * Normals are the Irwin-Hall approximation of rng.h. Values depend only on the
 * seed, the tensor and its row, never on the thread count. Quantized blocks are
 * written by the project's quantizer; rows are generated and quantized in
 * parallel and written in place. */
#ifndef Q35_GENERATE_H
#define Q35_GENERATE_H

#include "core/error.h"
#include "model/qwen35.h"
#include "model/shapes.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_gen_options {
    q35_shape shape;   /* the shape, overrides (layers, vocab) already applied */
    char mix[16];      /* "f32", "f16", "bf16", "q8_0", "q4_0", "q5_0", "q4_k", "q5_k", "q6_k", "q4_k_m" */
    uint64_t seed;     /* every weight follows from it */
    int mtp_layers;    /* MTP blocks to append and count in block_count (the loader skips them) */
} q35_gen_options;

/* Options for a shape with the default mix (q4_k_m for tiny) and seed 1. */
q35_gen_options q35_gen_defaults(const q35_shape *shape);

/* 0 when mix names a known mix (case-insensitive), else -1 with a message
 * listing them. */
int q35_gen_mix_check(const char *mix, q35_error *err);

/* Checks the options (mix known, sizes positive and consistent). */
int q35_gen_check(const q35_gen_options *o, q35_error *err);

/* The type the mix gives a 2-D weight: `kind` is the tensor's name after
 * "blk.N." (or the whole name), `layer` its block (-1 for none), ne0 its row length. */
q35_type q35_gen_mix_type(const char *mix, const char *kind, int layer, int n_layer, int64_t ne0);

/* Writes a GGUF file: checks the options, then writes through a temporary
 * file renamed into place (core/outfile.h). Returns -1 with a message; the
 * target is then as it was (a file there is kept, nothing is left behind). */
int q35_generate_file(const q35_gen_options *o, const char *path, q35_error *err);

/* Builds the GGUF image in memory (malloc'd; the caller frees it). */
int q35_generate_image(const q35_gen_options *o, void **image, uint64_t *size, q35_error *err);

/* Builds the image and loads it as a model (which owns the image). */
int q35_generate_model(const q35_gen_options *o, q35_model **out, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_GENERATE_H */
