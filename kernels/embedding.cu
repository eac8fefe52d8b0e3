/* The embedding gather (kernels/embedding.h): a block per token. */
#include "kernels/dequant_units.cuh" /* q35_dequant_at, the grid i-quants' units */
#include "kernels/embedding.h"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_runtime.h>

__global__ void q35_embedding_kernel(float *x, const uint8_t *table, int type, size_t row_bytes, int64_t n_embd,
                                     int64_t vocab, const int32_t *tokens)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    const int64_t t = blockIdx.x;
    const int32_t tok = tokens[t];
    float *xr = x + t * n_embd;
    if (tok < 0 || tok >= vocab) {
        for (int64_t i = threadIdx.x; i < n_embd; i += blockDim.x)
            xr[i] = __int_as_float(0x7fc00000);
        return;
    }
    const uint8_t *row = table + (size_t)tok * row_bytes;
    for (int64_t i = threadIdx.x; i < n_embd; i += blockDim.x)
        xr[i] = q35_dequant_at(type, row, i);
}

int q35_embedding_rows(float *x, const void *table, q35_type type, int64_t n_embd, int64_t vocab,
                       const int32_t *tokens, int64_t T, q35_stream stream, q35_error *err)
{
    const size_t row_bytes = q35_row_bytes(type, n_embd);
    if (!q35_type_computable(type) || row_bytes == 0 || vocab < 1 || T < 0 || T > INT32_MAX)
        return q35_fail(err, "embedding_rows: type %s (computable: %s), row of %lld (%s), vocab %lld, T %lld",
                        q35_type_name(type), q35_type_computable(type) ? "yes" : "no", (long long)n_embd,
                        row_bytes ? "whole blocks" : "not whole blocks", (long long)vocab, (long long)T);
    if (T == 0)
        return 0;
    q35_embedding_kernel<<<(unsigned)T, 256, 0, stream>>>(x, (const uint8_t *)table, (int)type, row_bytes, n_embd,
                                                          vocab, tokens);
    return Q35_LAUNCH_CHECK("embedding_rows", err);
}
