/* The generator's quantization mixes: which type each tensor of a qwen35 model
 * gets.
 *
 * A mix named as llama-quantize names an ftype ("q4_k_m", "Q2_K", "iq4_xs", ...,
 * case-insensitive) is that ftype tensor for tensor: the type llama.cpp's
 * llama_tensor_get_type picks for each tensor of the same qwen35 model (the
 * output and a tied token_embd, the attention-v-like weights, ffn_down and
 * attn_output by layer and GQA ratio), then its row-length fallback. The
 * pure-<type> mixes are one type throughout, as llama-quantize --pure writes
 * them (the fallback only); q3_k, q4_k and q5_k are pure-q3_k, pure-q4_k and
 * pure-q5_k (in llama-quantize, the _M mixes: mix.c says why). The rules are one table (mix.c) read by one
 * function; test_generate holds every mix to llama-quantize's own choices
 * (data/golden/llama-0c1e570/quantize/). */
#ifndef Q35_MIX_H
#define Q35_MIX_H

#include "core/error.h"
#include "core/quant.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What of the model the rules look at. */
typedef struct q35_mix_model {
    int n_block; /* blocks, MTP ones included (llama's n_layer_all: it counts their attn_v and ffn_down) */
    int n_gqa;   /* n_head / n_head_kv */
    bool tied;   /* no output.weight: token_embd is quantized as the output */
} q35_mix_model;

/* 0 when mix names a known mix (case-insensitive), else -1 with a message
 * listing them. */
int q35_mix_check(const char *mix, q35_error *err);

/* The known mixes, ", "-separated, into buf (cut to cap - 1 bytes); buf. Beside
 * them q3_k, q4_k and q5_k are known: pure-q3_k, pure-q4_k, pure-q5_k (mix.c says why). */
char *q35_mix_names(char *buf, size_t cap);

/* llama.cpp's llama_ftype of a mix (general.file_type): the ftype's own number;
 * a pure-<type> mix's is that of the ftype whose default type it is (a k-quant's
 * _S form, Q2_K for q2_K). 1024 (LLAMA_FTYPE_GUESSED) for an unknown mix. */
uint32_t q35_mix_file_type(const char *mix);

/* The type of a 2-D weight: `kind` is the tensor's name after "blk.N." (or the
 * whole name: "output.weight", "token_embd.weight"), `layer` its block (-1 for
 * none), ne0 its row length. F16 for an unknown mix. */
q35_type q35_mix_type(const char *mix, const char *kind, int layer, const q35_mix_model *m, int64_t ne0);

#ifdef __cplusplus
}
#endif

#endif /* Q35_MIX_H */
