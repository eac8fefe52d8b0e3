/* float64 reference of kernels/embedding.h. */
#include "kernels/embedding.h"

void q35_ref_embedding(double *x, q35_type type, const void *table, int64_t n_embd, int64_t token)
{
    /* 256 elements at a time: a whole number of blocks of every type */
    const unsigned char *row = (const unsigned char *)table + (size_t)token * q35_row_bytes(type, n_embd);
    float buf[256];
    for (int64_t i = 0; i < n_embd; i += 256) {
        const int64_t n = n_embd - i < 256 ? n_embd - i : 256;
        q35_dequantize(type, row + q35_row_bytes(type, i), buf, n);
        for (int64_t j = 0; j < n; j++)
            x[i + j] = buf[j];
    }
}
