/* A qwen35 GGUF quantized again into a mix (model/mix.h): what `q35 model
 * quantize` writes, as llama-quantize writes it from the same file.
 *
 * Every metadata pair is copied as it is but general.file_type (the mix's
 * llama_ftype, mix.h) and general.quantization_version (2, as llama.cpp writes
 * it). Every tensor keeps its name, shape and order; a 2-D ".weight" but the
 * DeltaNet conv kernel (ssm_conv1d, kept as llama-quantize keeps it) gets the
 * mix's type for its name, layer and row length, and is dequantized to f32
 * (core/quant.h) and quantized to that type row by row, in parallel; a tensor
 * whose type does not change, and every other tensor, is copied byte for byte.
 * Quantizing an f32 tensor is therefore the project's quantizer on the same
 * values: a file the generator writes in "f32" and quantized into a mix holds
 * the same tensor bytes as the generator's own file of that mix.
 *
 * Refuses, before writing anything: a file that does not load as a qwen35
 * model (model/qwen35.h's checks), an unknown mix, a tensor whose type has no
 * dequantizer, and an output that is the input itself. The output goes through
 * a temporary file renamed into place (core/outfile.h): a failure leaves a file
 * already at `out` as it was. */
#ifndef Q35_REQUANT_H
#define Q35_REQUANT_H

#include "core/error.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a quantization did. */
typedef struct q35_requant_stats {
    int64_t tensors;      /* in the file */
    int64_t quantized;    /* given a new type */
    int64_t copied;       /* kept byte for byte */
    int64_t requantized;  /* of the quantized ones, those whose source was already quantized (not F32/F16/BF16) */
    uint64_t in_bytes, out_bytes; /* tensor data, both files */
} q35_requant_stats;

int q35_requant_file(const char *in, const char *mix, const char *out, q35_requant_stats *stats, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_REQUANT_H */
