/* KV append (kernels/kv_append.h): a block per appended row, its threads copy
 * the row's kv_dim floats of k and of v into the cache row pos + t, as f32 or
 * rounded to f16 (__float2half_rn). Per element, so the rows form is bitwise T
 * per-token appends. */
#include "kernels/kv_append.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define THREADS 256

static __device__ __forceinline__ float q35_cache_value(float x, float *)
{
    return x;
}

static __device__ __forceinline__ __half q35_cache_value(float x, __half *)
{
    return __float2half_rn(x);
}

template <class C>
__global__ void q35_kv_append_kernel(C *k_cache, C *v_cache, int64_t cache_stride, const float *k, const float *v,
                                     int64_t src_stride, int64_t kv_dim, int64_t pos, const int64_t *pos_at)
{
    if (pos_at)
        pos = *pos_at;
    const int64_t t = blockIdx.x;
    C *kc = k_cache + (pos + t) * cache_stride, *vc = v_cache + (pos + t) * cache_stride;
    const float *ks = k + t * src_stride, *vs = v + t * src_stride;
    for (int64_t i = threadIdx.x; i < kv_dim; i += THREADS) {
        kc[i] = q35_cache_value(ks[i], kc);
        vc[i] = q35_cache_value(vs[i], vc);
    }
}

template <class C>
static int append(const char *who, C *k_cache, C *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                  const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, const int64_t *pos_at, int64_t T,
                  q35_stream stream, q35_error *err)
{
    if (kv_dim < 1 || cache_stride < kv_dim || src_stride < kv_dim || T < 0 || T > INT32_MAX || pos < 0 ||
        max_seq < 0)
        return q35_fail(err,
                        "%s: kv_dim %lld (>= 1), cache stride %lld and source stride %lld (>= kv_dim), "
                        "T %lld, pos %lld, max_seq %lld",
                        who, (long long)kv_dim, (long long)cache_stride, (long long)src_stride, (long long)T,
                        (long long)pos, (long long)max_seq);
    if (pos_at ? T > max_seq : pos > max_seq - T)
        return q35_fail(err, "%s: rows %lld..%lld past the cache's max_seq %lld", who, (long long)pos,
                        (long long)(pos + T - 1), (long long)max_seq);
    if (T == 0)
        return 0;
    q35_kv_append_kernel<C><<<(unsigned)T, THREADS, 0, stream>>>(k_cache, v_cache, cache_stride, k, v, src_stride,
                                                                kv_dim, pos, pos_at);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_kv_append_rows(float *k_cache, float *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                       const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, int64_t T,
                       q35_stream stream, q35_error *err)
{
    return append("kv_append_rows", k_cache, v_cache, cache_stride, max_seq, k, v, src_stride, kv_dim, pos, NULL, T,
                  stream, err);
}

int q35_kv_append_rows_f16(uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride, int64_t max_seq,
                           const float *k, const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, int64_t T,
                           q35_stream stream, q35_error *err)
{
    return append("kv_append_rows_f16", (__half *)k_cache, (__half *)v_cache, cache_stride, max_seq, k, v,
                  src_stride, kv_dim, pos, NULL, T, stream, err);
}

int q35_kv_append_rows_at(float *k_cache, float *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                          const float *v, int64_t src_stride, int64_t kv_dim, const int64_t *pos_at, int64_t T,
                          q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "kv_append_rows_at: no position pointer");
    return append("kv_append_rows_at", k_cache, v_cache, cache_stride, max_seq, k, v, src_stride, kv_dim, 0, pos_at,
                  T, stream, err);
}

int q35_kv_append_rows_f16_at(uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride, int64_t max_seq,
                              const float *k, const float *v, int64_t src_stride, int64_t kv_dim,
                              const int64_t *pos_at, int64_t T, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "kv_append_rows_f16_at: no position pointer");
    return append("kv_append_rows_f16_at", (__half *)k_cache, (__half *)v_cache, cache_stride, max_seq, k, v,
                  src_stride, kv_dim, 0, pos_at, T, stream, err);
}
