/* KV append (kernels/kv_append.h): a block per appended row, its threads copy
 * the row's kv_dim floats of k and of v into the cache row pos + t. A copy, so
 * the rows form is bitwise T per-token appends. */
#include "kernels/kv_append.h"

#include <cuda_runtime.h>

#define THREADS 256

__global__ void q35_kv_append_kernel(float *k_cache, float *v_cache, int64_t cache_stride, const float *k,
                                     const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos)
{
    const int64_t t = blockIdx.x;
    float *kc = k_cache + (pos + t) * cache_stride, *vc = v_cache + (pos + t) * cache_stride;
    const float *ks = k + t * src_stride, *vs = v + t * src_stride;
    for (int64_t i = threadIdx.x; i < kv_dim; i += THREADS) {
        kc[i] = ks[i];
        vc[i] = vs[i];
    }
}

int q35_kv_append_rows(float *k_cache, float *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                       const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, int64_t T,
                       q35_stream stream, q35_error *err)
{
    if (kv_dim < 1 || cache_stride < kv_dim || src_stride < kv_dim || T < 0 || T > INT32_MAX || pos < 0 ||
        max_seq < 0)
        return q35_fail(err,
                        "kv_append_rows: kv_dim %lld (>= 1), cache stride %lld and source stride %lld (>= kv_dim), "
                        "T %lld, pos %lld, max_seq %lld",
                        (long long)kv_dim, (long long)cache_stride, (long long)src_stride, (long long)T,
                        (long long)pos, (long long)max_seq);
    if (pos > max_seq - T)
        return q35_fail(err, "kv_append_rows: rows %lld..%lld past the cache's max_seq %lld", (long long)pos,
                        (long long)(pos + T - 1), (long long)max_seq);
    if (T == 0)
        return 0;
    q35_kv_append_kernel<<<(unsigned)T, THREADS, 0, stream>>>(k_cache, v_cache, cache_stride, k, v, src_stride,
                                                             kv_dim, pos);
    return Q35_LAUNCH_CHECK("kv_append_rows", err);
}
