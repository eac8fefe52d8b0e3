/* The gated delta rule over T rows in chunks of 64 tokens, on tensor cores: the
 * fast form of the scan of kernels/delta_rule.h (same function, same layouts,
 * same state in and out, so a caller can switch between the two at any call),
 * not bitwise it. The scan stays its oracle.
 *
 * Per value head j (key head j % Hk), a chunk of C <= 64 tokens t = 0..C-1 with
 * G_t = g_0 + ... + g_t (the chunk's cumulative log decay, f32) and state S0
 * [dv][dk] on entry (delta_rule.h's second formulation):
 *
 *     A_ts = beta_t e^{G_t - G_s} (k_t . k_s)        s < t, else 0
 *     T    = (I + A)^-1                              (unit lower triangular)
 *     W    = T diag(beta e^G) K                      [C][dk]
 *     U    = T diag(beta) V                          [C][dv]
 *     D    = U - W S0^T                              [C][dv] (the deltas d_t)
 *     P_ts = e^{G_t - G_s} (q_t . k_s)               s <= t, else 0
 *     O    = (diag(e^G) Q S0^T + P D) / sqrt(dk)
 *     S    = e^{G_last} S0 + (diag(e^{G_last - G}) D)^T K
 *
 * Every exponent is a difference G_t - G_s with s <= t, or G_t, or G_last - G_s:
 * never above 0 (g <= 0), so no factor exceeds 1 and no gate can overflow.
 *
 * Two launches. The first, parallel over every (chunk, value head), computes
 * G, A (k.k on tensor cores), T by forward substitution in f32, W, U and P
 * (tensor cores), into the workspace as f16 (G as f32), with K and Q rounded to
 * f16 once per key head. The second, one block per (value head, 32 value
 * columns), walks the chunks in order with its slice of the state in f32
 * registers: D, O and the new state, each a tensor-core product.
 *
 * Precision: every tensor-core product takes f16 operands (k, q, beta v, T, W,
 * U, P, D, and the state as read) and accumulates in f32; the state itself,
 * the gates, their cumulative sums and exponentials, and T's substitution
 * stay f32. Each operand rounding is a relative 2^-11 (4.9e-4); f16's range
 * needs |v| and the state's entries below 65504 (the model's are O(1)).
 * The bound this gives against the float64 recurrence, measured over the
 * model's head layouts and lengths and with slow decay (gate -> 0, beta -> 1),
 * is stated and asserted in parity/kernels/test_kernels_delta_chunk.c.
 *
 * What bounds it: the two-launch design reads q, k, v and writes o, and
 * writes its workspace and reads it back, so the copy rate sets its floor (a
 * design without the workspace has half of it); its tensor-core time is a
 * small part. Both launches are latency-bound (ncu): the parallel pass in T's
 * substitution and the barrier after it, the state pass in its chain of
 * dependent products a chunk. The parallel pass's tensor-core work is balanced
 * over its warps. Tried and not kept: T solved in 16 x 16 blocks by every
 * thread (the substitution's share of the samples was not time it won back);
 * the state pass overlapping the parallel pass by programmatic dependent
 * launch, a flag a (chunk, value head) (the handoff cost more than the overlap
 * won; one kernel with producer warps, the handoff in shared memory, is what
 * remains of that idea). The figures: bench/results/index.tsv, family kernels
 * (benchmark delta_chunk), and the runs' log, bench/results/log/. */
#ifndef Q35_KERNELS_DELTA_CHUNK_H
#define Q35_KERNELS_DELTA_CHUNK_H

#include "kernels/delta_rule.h"
#include "kernels/variant.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_DELTA_CHUNK 64 /* tokens a chunk */

/* The workspace of T rows: byte offsets of its arrays (each 256-byte aligned)
 * and the total. Header-only, so the capacity plan (pure C) counts it too. */
typedef struct q35_delta_chunk_layout {
    size_t w;     /* W  [chunk][hv][64][dk] f16 */
    size_t u;     /* U  [chunk][hv][dv/32][64][32] f16 */
    size_t p;     /* P  [chunk][hv][64][64] f16 */
    size_t g;     /* G  [chunk][hv][64] f32 */
    size_t q;     /* Q  [chunk][hk][64][dk] f16 */
    size_t k;     /* K  [chunk][hk][64][dk] f16 */
    size_t total; /* bytes */
} q35_delta_chunk_layout;

static inline size_t q35_delta_chunk_next_(size_t *off, size_t bytes)
{
    const size_t at = *off;
    *off = (*off + bytes + 255) & ~(size_t)255;
    return at;
}

static inline q35_delta_chunk_layout q35_delta_chunk_layout_of(int64_t T, q35_delta_dims d)
{
    q35_delta_chunk_layout L = {0, 0, 0, 0, 0, 0, 0};
    if (T <= 0 || d.hk < 1 || d.hv < 1 || d.dk < 1 || d.dv < 1)
        return L;
    const size_t rows = (size_t)((T + Q35_DELTA_CHUNK - 1) / Q35_DELTA_CHUNK) * Q35_DELTA_CHUNK;
    const size_t hv = (size_t)d.hv, hk = (size_t)d.hk, dk = (size_t)d.dk, dv = (size_t)d.dv;
    size_t off = 0;
    L.w = q35_delta_chunk_next_(&off, rows * hv * dk * 2);
    L.u = q35_delta_chunk_next_(&off, rows * hv * dv * 2);
    L.p = q35_delta_chunk_next_(&off, rows * hv * Q35_DELTA_CHUNK * 2);
    L.g = q35_delta_chunk_next_(&off, rows * hv * 4);
    L.q = q35_delta_chunk_next_(&off, rows * hk * dk * 2);
    L.k = q35_delta_chunk_next_(&off, rows * hk * dk * 2);
    L.total = off;
    return L;
}

/* Bytes of device workspace q35_delta_chunk needs for T rows (0 for T <= 0). */
static inline size_t q35_delta_chunk_workspace_bytes(int64_t T, q35_delta_dims d)
{
    return q35_delta_chunk_layout_of(T, d).total;
}

/* CUDA: the gated delta rule over T rows, arguments as q35_delta_rule_scan's
 * (q, k, v of token t at q + t*stride, ...; g, beta [T][hv]; o [T][o_stride];
 * S [hv][dv][dk] updated), with workspace (device, 256-byte aligned) of at
 * least q35_delta_chunk_workspace_bytes(T, d), by variant `variant`
 * (Q35_VARIANT_DEFAULT: q35_delta_chunk_variant_default). dk = 128, dv a
 * multiple of 32 (of 64 for the variant s64w8), hv a multiple of hk; stride
 * and o_stride multiples of 4; q, k, v, o, S 16-byte aligned. Refuses (-1,
 * err naming the limit) anything else. */
int q35_delta_chunk(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, void *workspace,
                    size_t workspace_bytes, int variant, q35_stream stream, q35_error *err);

/* CUDA: q35_delta_chunk with q and k already in the workspace as f16 (round
 * to nearest of the f32 rows), in its layout's Q and K areas: token t of key
 * head h at ((t / 64 * Hk + h) * 64 + t % 64) * dk from workspace +
 * q35_delta_chunk_layout_of(T, d).q (and .k), rows past T anything, as
 * q35_delta_prep_rows_qk16 (kernels/delta_prep.h) writes them. The same bits as
 * q35_delta_chunk over the f32 q and k they round (its parallel pass rounds
 * them to f16 first); v at v + t * v_stride as there. Variants of tb4's
 * formulation only (q35_delta_chunk_variant_takes_qk16): w4's rounds beta e^G K
 * from the f32 k, and is refused, named. The workspace's q/k rows past T of the last chunk
 * are zeros after the call. */
int q35_delta_chunk_qk16(float *o, int64_t o_stride, float *S, const float *v, int64_t v_stride, const float *g,
                         const float *beta, int64_t T, q35_delta_dims d, void *workspace, size_t workspace_bytes,
                         int variant, q35_stream stream, q35_error *err);

/* The variants (kernels/variant.h; the state pass's block). Production:
 * tb4wm2kh on sm_90 (below) and tb4 elsewhere are the default
 * (q35_delta_chunk_variant_default, by the current device); tb4 (faster than
 * w4 at the model's shapes: bench/results/index.tsv, family kernels) is another formulation (family 1: D = T diag(beta)
 * (V - diag(e^G) K S^T) in the state pass, the parallel pass writing T
 * diag(beta) in W's place and neither W nor U; kernels/delta_chunk_tb.cuh),
 * and w4 = 4 warps over 32 value columns (family 0; kernels/delta_chunk.cuh).
 * The experiments: w8 = 8 warps over 32, s64w8 = 8 warps over 64 (dv a
 * multiple of 64), w4o4 = w4's 4 warps for D and the state with 4 more
 * computing O a chunk behind (kernels/experiments/delta_chunk_split.cuh; no
 * faster than w4), tb4o4, tb4's state pass split as w4o4's
 * (bitwise tb4; kernels/experiments/delta_chunk_tb_split.cuh; no faster), and
 * tb4kh, tb4 with its parallel pass one block per (chunk, key head), K, Q,
 * k.k and q.k once for the value heads that share them (bitwise tb4;
 * kernels/delta_chunk_tb_kh.cuh), tb4w, tb4's state pass on wgmma, and tb4wt,
 * tb4w with its stages brought by TMA (sm_90a only, family 2;
 * kernels/experiments/delta_chunk_sm90.cu). Production on sm_90a: tb4wtkh,
 * tb4wt after tb4kh's parallel pass (bitwise tb4wt), and tb4wm2kh, tb4wtkh with
 * the state pass's blocks in pairs sharing their tiles by TMA multicast
 * (bitwise tb4wtkh; faster: bench/results/index.tsv, family kernels), the
 * default where the device runs it (kernels/delta_chunk_sm90.cu, in
 * q35_kernels_sm90). The
 * variants of family 0 compute the same products in the same order: bitwise
 * equal. */
int q35_delta_chunk_variant_count(void);
const char *q35_delta_chunk_variant_name(int variant);
int q35_delta_chunk_variant_find(const char *name);
int q35_delta_chunk_variant_production(int variant);
/* tb4wm2kh, else tb4wtkh, where the current device runs it (sm_90, a build
 * with sm_90a code, q35_kernels_sm90 linked, its shared memory), else tb4
 * (also without a device). */
int q35_delta_chunk_variant_default(void);
/* A variant's family (-1: no such variant): variants of one family compute the
 * same products in the same order (bitwise equal); another family is another
 * formulation of the same function (tb4: D from T beta in the state pass),
 * held to the same float64 bound, not to another family's bits. */
int q35_delta_chunk_variant_family(int variant);
/* 1 when variant takes q and k as f16 in the workspace (q35_delta_chunk_qk16:
 * tb4's formulation, families 1 and 2); 0 when not or no such variant. */
int q35_delta_chunk_variant_takes_qk16(int variant);
/* 0 when variant runs these heads on the current device; else -1 and why. */
int q35_delta_chunk_variant_supported(int variant, q35_delta_dims d, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_DELTA_CHUNK_H */
