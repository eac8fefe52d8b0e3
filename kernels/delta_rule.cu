/* The gated delta rule: the chunk-resident scan and the per-token step
 * (kernels/delta_rule.h).
 *
 * A value column c of head j evolves on its own: its state row S[j][c][0..dk)
 * only meets the shared k, q, g, beta of each token. So a block of WARPS warps
 * takes rows of one head, a group of LANES lanes RPL of them, the rows in
 * registers for the whole scan (q35_delta_cfg, kernels/delta_rule_step.cuh).
 * Lane s of a group holds float4 number LANES*m + s of each of its rows: its
 * float4 reads of k and q from shared memory are conflict-free, and each read
 * serves RPL rows. Per token, the spec's step in the form whose dot products
 * read the previous state, so one pass of reductions serves a token:
 *
 *     sk = S.k;  d = (v - e^g sk) beta;  S <- e^g S + d k
 *     o = (e^g S.q + d k.q) / sqrt(dk)      (k.q once per token of a tile)
 *  or o = S'.q / sqrt(dk), S' the new state (NS: computed while the next token
 *     runs, from the state that token reads, so S.k and S'.q share the pass)
 *
 * q/k (256 floats a token), v, g and beta are staged TILE tokens at a time,
 * double-buffered with cp.async so the next tile loads while this one runs; e^g
 * (and k.q) once per token of a tile. The per-token step is the same kernel with
 * T = 1, so a variant's scan is bitwise T of its steps.
 *
 * The kernel: kernels/delta_rule_scan.cuh. Variants (kernels/variant.h; the
 * production r2pni and l16r2pn here, the rest in kernels/experiments/): rows1,
 * rows2, lanes4 are the first three layouts (a row per 8 lanes, two rows per 8
 * lanes, a row per 4 lanes; 4 warps) and their arithmetic; the names of the others read r2 = 2 rows per 8-lane group,
 * l16 = 16 lanes a row (r2: 2 rows a group), w2/w8/w16 = warps a block (else 4),
 * p = prefetch and reduce-scatter (PF), n = output from the new state (NS),
 * i = interleaved groups (IL). Only LANES, RPL and NS choose the arithmetic:
 * rows2 = r2p, r2pn = r2pni = r2w2pn, l16r2pn = l16r2w8pn bit for bit. */
#include "kernels/delta_rule_scan.cuh"

#pragma weak q35_delta_rule_experiments

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/*                                                      lanes rows warps  PF     IL     NS */
static constexpr q35_delta_scan_impl k_r2pni = scan_impl<8, 2, 4, true, true, true>(),
                                     k_l16r2pn = scan_impl<16, 2, 4, true, false, true>();
static const q35_variant k_production[] = {{"r2pni", 5, &k_r2pni}, {"l16r2pn", 7, &k_l16r2pn}};

static const q35_variant_set k_set = {Q35_VARIANT_TABLE(k_production), &q35_delta_rule_experiments, NULL};

Q35_VARIANT_REGISTRY(delta_rule, k_set)

int q35_delta_rule_variant_rows(int variant)
{
    const q35_variant *v = q35_variant_at(&k_set, variant);
    return v ? static_cast<const q35_delta_scan_impl *>(v->impl)->rows : 0;
}

int q35_delta_rule_variant_default(q35_delta_dims d)
{
    /* r2pni (32 rows a block), else l16r2pn (16): the fastest (bench/results/,
     * family kernels) */
    return q35_delta_rule_variant_find(d.dv % k_r2pni.rows == 0 ? "r2pni" : "l16r2pn");
}

int q35_delta_rule_scan(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                        int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, int variant,
                        q35_stream stream, q35_error *err)
{
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_delta_rule_variant_default(d);
    const q35_variant *x = q35_variant_at(&k_set, variant);
    if (!x)
        return q35_fail(err, "delta_rule_scan: no variant %d (0..%d)", variant, q35_variant_count(&k_set) - 1);
    const q35_delta_scan_impl *e = static_cast<const q35_delta_scan_impl *>(x->impl);
    const int rows = e->rows;
    if (d.dk != DK || d.dv < rows || d.dv % rows != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_rule_scan %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        x->name, d.hk, d.hv, d.dk, d.dv, DK, rows);
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_rule_scan: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    return e->launch(x->name, o, o_stride, S, q, k, v, stride, g, beta, T, d, stream, err);
}

int q35_delta_rule_step(float *o, float *S, const float *q, const float *k, const float *v, const float *g,
                        const float *beta, q35_delta_dims d, q35_stream stream, q35_error *err)
{
    /* one token: strides are never followed; pass a legal one */
    const int64_t stride = 2 * (int64_t)d.hk * d.dk + (int64_t)d.hv * d.dv;
    return q35_delta_rule_scan(o, (int64_t)d.hv * d.dv, S, q, k, v, stride, g, beta, 1, d, Q35_VARIANT_DEFAULT, stream,
                               err);
}
