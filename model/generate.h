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
#include "model/mix.h"
#include "model/qwen35.h"
#include "model/shapes.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_gen_options {
    q35_shape shape;   /* the shape, overrides (layers, vocab) already applied */
    char mix[16];      /* a mix of model/mix.h: "q4_k_m", "q2_k", "pure-q4_k", ... */
    uint64_t seed;     /* every weight follows from it */
    int mtp_layers;    /* MTP blocks to append and count in block_count (the loader skips them) */
} q35_gen_options;

/* Options for a shape with the default mix (q4_k_m for tiny) and seed 1. */
q35_gen_options q35_gen_defaults(const q35_shape *shape);

/* Checks the options (mix known, sizes positive and consistent). */
int q35_gen_check(const q35_gen_options *o, q35_error *err);

/* A tensor of the file the options give: its name and type. */
typedef struct q35_gen_tensor {
    char name[96];
    q35_type type;
} q35_gen_tensor;

/* The file's tensors in its order, without their data (*out malloc'd, the
 * caller frees it; *n of them): what the mix gives each, also where the type is
 * one this build does not quantize, which q35_generate_* refuse. */
int q35_gen_tensors(const q35_gen_options *o, q35_gen_tensor **out, int *n, q35_error *err);

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
