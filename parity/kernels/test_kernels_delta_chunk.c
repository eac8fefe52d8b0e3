/* GPU parity of the chunked gated delta rule (kernels/delta_chunk.h), which is
 * not bitwise the scan: its outputs o and final state S against the float64
 * recurrence (and the float64 chunked form at 64-token chunks) within BOUND_L2
 * (rel L2) and BOUND_LINF (rel L-inf), nothing non-finite; the scan, its exact
 * oracle, measured on the same inputs beside it; two runs of every variant
 * bitwise equal (no order-dependent reduction, no race showing); every variant
 * bitwise equal to the first of its family (q35_delta_chunk_variant_family:
 * one formulation each, w4's or tb4's; across families only the float64 bound
 * holds); at the
 * head layouts of 0.8B, 9B and 27B, T at and around the chunk size, a state
 * carried across calls of different T, a chunked prefill followed by per-token
 * steps of the scan, long runs with slow
 * decay (g -> 0, beta -> 1, where rounding would random-walk); every variant
 * of tb4's formulation also through q35_delta_chunk_qk16 (q and k rounded to f16 on
 * the host into the workspace, NaN past the last token), bitwise its f32-input
 * run; and what it refuses. $Q35_DELTA_CHUNK_VARIANTS (names, comma-separated)
 * runs only those variants.
 *
 * The bound: every tensor-core product takes f16 operands, a relative rounding
 * of 2^-11 = 4.9e-4 each (kernels/delta_chunk.h). A product of K-long dot
 * products of such operands has a relative error near 2^-11 in the worst
 * element and well under it in L2 (the roundings are independent and partly
 * cancel); the chunk pass chains three of them (T, W or U, D), the state pass
 * two more (D, O or S). BOUND_L2 = 2e-3 is four times one rounding and
 * BOUND_LINF = 1e-2 twenty times; the worst measured (parity output and the
 * note in bench/results/) must sit well inside, also at 131072 tokens. */
#include "parity/lib/gpu.h"

#include "core/half.h"
#include "core/parallel.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_rule.h"
#include "kernels/l2norm.h"

#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOUND_L2 2e-3
#define BOUND_LINF 1e-2

static q35_rng g_rng;

/* How the gates are drawn. */
typedef enum {
    GATES_MIXED, /* half the heads g in [-0.1, 0) (long memory), half [-20, 0) (fast); beta in (0.01, 0.99) */
    GATES_SLOW,  /* g in [-1e-3, 0), beta in [0.9, 1): the state keeps nearly everything */
} gates_kind;

/* The inputs of T tokens: conv-output rows [T][stride] (q, k heads of unit norm,
 * v), gates, and a starting state; on the host and the device. */
typedef struct inputs {
    q35_delta_dims d;
    int64_t T, kd, vd, stride, ns;
    float *rows, *g, *beta, *S0;      /* host */
    float *drows, *dg, *dbeta;        /* device */
} inputs;

static inputs make_inputs(q35_delta_dims d, int64_t T, gates_kind kind)
{
    inputs in = {.d = d, .T = T};
    q35_error err = {{0}};
    in.kd = (int64_t)d.hk * d.dk, in.vd = (int64_t)d.hv * d.dv, in.stride = 2 * in.kd + in.vd;
    in.ns = in.vd * d.dk;
    in.rows = q35_host_normal(T * in.stride, 0.0, 1.0, &g_rng);
    in.S0 = q35_host_normal(in.ns, 0.0, 0.1, &g_rng);
    in.g = malloc((size_t)(T * d.hv) * sizeof *in.g);
    in.beta = kind == GATES_SLOW ? q35_host_uniform(T * d.hv, 0.9, 1.0, &g_rng)
                                 : q35_host_uniform(T * d.hv, 0.01, 0.99, &g_rng);
    for (int64_t t = 0; t < T; t++)
        for (int j = 0; j < d.hv; j++)
            in.g[t * d.hv + j] = (float)(kind == GATES_SLOW ? q35_rng_range(&g_rng, -1e-3, -1e-7)
                                         : j % 2           ? q35_rng_range(&g_rng, -20.0, -1e-4)
                                                           : q35_rng_range(&g_rng, -0.1, -1e-4));
    in.drows = q35_gpu_from_host(in.rows, T * in.stride);
    q35_gpu_ok(q35_l2norm_rows(in.drows, d.dk, 2 * d.hk, T, in.stride, 1e-6f, NULL, &err), &err); /* unit q, k */
    q35_gpu_download(in.rows, in.drows, (size_t)(T * in.stride) * sizeof *in.rows);
    in.dg = q35_gpu_from_host(in.g, T * d.hv);
    in.dbeta = q35_gpu_from_host(in.beta, T * d.hv);
    return in;
}

static void free_inputs(inputs *in)
{
    free(in->rows), free(in->g), free(in->beta), free(in->S0);
    q35_gpu_free(in->drows), q35_gpu_free(in->dg), q35_gpu_free(in->dbeta);
}

/* The float64 recurrence over tokens [t0, t1), one value head a task. */
typedef struct recurrence {
    const inputs *in;
    const double *rows, *g, *beta;
    double *o, *S; /* o [T][vd] (rows t0..t1-1 written); S [hv][dv][dk], updated */
    int64_t t0, t1;
} recurrence;

static void recurrence_heads(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const recurrence *r = ctx;
    const q35_delta_dims d = r->in->d, one = {1, 1, d.dk, d.dv};
    for (int64_t j = begin; j < end; j++) {
        const int64_t kh = j % d.hk;
        double *S = r->S + j * d.dv * d.dk;
        for (int64_t t = r->t0; t < r->t1; t++) {
            const double *row = r->rows + t * r->in->stride;
            q35_ref_delta_rule_step(r->o + t * r->in->vd + j * d.dv, S, row + kh * d.dk, row + r->in->kd + kh * d.dk,
                                    row + 2 * r->in->kd + j * d.dv, r->g + t * d.hv + j, r->beta + t * d.hv + j, one);
        }
    }
}

/* The float64 chunked form (64-token chunks), one value head a task: the
 * reference call on a single head's slices (o and S of that head). */
static void chunked_heads(void *ctx, int64_t begin, int64_t end, int thread)
{
    (void)thread;
    const recurrence *r = ctx;
    const q35_delta_dims d = r->in->d, one = {1, 1, d.dk, d.dv};
    const int64_t T = r->t1, vd = r->in->vd, stride = r->in->stride, kd = r->in->kd;
    double *g = malloc((size_t)T * sizeof *g), *beta = malloc((size_t)T * sizeof *beta);
    double *o = malloc((size_t)(T * d.dv) * sizeof *o);
    for (int64_t j = begin; j < end; j++) {
        const int64_t kh = j % d.hk;
        for (int64_t t = 0; t < T; t++)
            g[t] = r->g[t * d.hv + j], beta[t] = r->beta[t * d.hv + j];
        /* one head: q and k at the key head's offset, v at the value head's, o [T][dv] */
        if (!g || !beta || !o || q35_ref_delta_rule_chunked(o, r->S + j * d.dv * d.dk, r->rows + kh * d.dk,
                                                            r->rows + kd + kh * d.dk, r->rows + 2 * kd + j * d.dv,
                                                            stride, g, beta, T, Q35_DELTA_CHUNK, one) != 0) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        for (int64_t t = 0; t < T; t++)
            memcpy(r->o + t * vd + j * d.dv, o + t * d.dv, (size_t)d.dv * sizeof *o);
    }
    free(g), free(beta), free(o);
}

/* The float64 references of `in`: the recurrence's (or, chunked, the chunked
 * form's) o and final S (malloc'd). */
static void reference(const inputs *in, bool chunked, double **o, double **S)
{
    double *rows = q35_host_f64(in->rows, in->T * in->stride), *g = q35_host_f64(in->g, in->T * in->d.hv);
    double *beta = q35_host_f64(in->beta, in->T * in->d.hv);
    *S = q35_host_f64(in->S0, in->ns);
    *o = malloc((size_t)(in->T * in->vd) * sizeof **o);
    recurrence r = {in, rows, g, beta, *o, *S, 0, in->T};
    q35_parallel_for(in->d.hv, 1, chunked ? chunked_heads : recurrence_heads, &r);
    free(rows), free(g), free(beta);
}

/* Runs variant `variant` of the chunked kernel over tokens [t0, t0 + n) of `in`
 * into o (device, [T][vd]) with the state dS (device), through a workspace of its own. */
static void run_chunk(int variant, float *o, float *dS, const inputs *in, int64_t t0, int64_t n)
{
    q35_error err = {{0}};
    const size_t wsb = q35_delta_chunk_workspace_bytes(n, in->d);
    void *ws = q35_gpu_bytes(wsb ? wsb : 1);
    const float *r = in->drows + t0 * in->stride;
    q35_gpu_ok(q35_delta_chunk(o + t0 * in->vd, in->vd, dS, r, r + in->kd, r + 2 * in->kd, in->stride,
                               in->dg + t0 * in->d.hv, in->dbeta + t0 * in->d.hv, n, in->d, ws, wsb, variant, NULL, &err),
               &err);
    q35_gpu_sync();
    q35_gpu_free(ws);
}

/* Element i of key head h's token t in the workspace's f16 Q and K
 * ([chunk][Hk][64][dk], kernels/delta_chunk.h). */
static int64_t qk16_at(q35_delta_dims d, int64_t t, int64_t h, int64_t i)
{
    const int64_t R = Q35_DELTA_CHUNK;
    return ((t / R * d.hk + h) * R + t % R) * d.dk + i;
}

/* run_chunk through q35_delta_chunk_qk16: q and k of the tokens rounded to f16
 * on the host (core/half.h) into the workspace's chunk layout, the rows past
 * the last token NaN (the kernel must not take them); returns whether those
 * rows are zeros after the call (q35_delta_chunk_qk16's promise). */
static bool run_chunk_qk16(int variant, float *o, float *dS, const inputs *in, int64_t t0, int64_t n)
{
    q35_error err = {{0}};
    const q35_delta_dims d = in->d;
    const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(n, d);
    const int64_t R = Q35_DELTA_CHUNK, rows = (n + R - 1) / R * R, m = rows * d.hk * d.dk;
    char *ws = q35_gpu_bytes(L.total ? L.total : 1);
    uint16_t *q16 = malloc((size_t)m * 2), *k16 = malloc((size_t)m * 2);
    for (int64_t t = 0; t < rows; t++)
        for (int64_t h = 0; h < d.hk; h++)
            for (int64_t i = 0; i < d.dk; i++) {
                const int64_t at = qk16_at(d, t, h, i);
                const float *row = in->rows + (t0 + t) * in->stride;
                q16[at] = t < n ? q35_f32_to_f16(row[h * d.dk + i]) : 0x7e00u;
                k16[at] = t < n ? q35_f32_to_f16(row[in->kd + h * d.dk + i]) : 0x7e00u;
            }
    q35_gpu_upload(ws + L.q, q16, (size_t)m * 2), q35_gpu_upload(ws + L.k, k16, (size_t)m * 2);
    const float *r = in->drows + t0 * in->stride;
    q35_gpu_ok(q35_delta_chunk_qk16(o + t0 * in->vd, in->vd, dS, r + 2 * in->kd, in->stride, in->dg + t0 * d.hv,
                                    in->dbeta + t0 * d.hv, n, d, ws, L.total, variant, NULL, &err),
               &err);
    q35_gpu_download(q16, ws + L.q, (size_t)m * 2), q35_gpu_download(k16, ws + L.k, (size_t)m * 2);
    bool zeros = true;
    for (int64_t t = n; t < rows; t++)
        for (int64_t h = 0; h < d.hk; h++)
            for (int64_t i = 0; i < d.dk; i++) {
                const int64_t at = qk16_at(d, t, h, i);
                zeros = zeros && q16[at] == 0 && k16[at] == 0;
            }
    free(q16), free(k16);
    q35_gpu_free(ws);
    return zeros;
}

/* One line: o and S of the chunked form against the reference, within the bound. */
static void verdict(q35_suite *s, const char *what, const float *o, const double *ro, int64_t no, const float *S,
                    const double *rS, int64_t ns, const char *extra)
{
    const q35_cmp co = q35_compare_f32_f64(o, ro, no), cs = q35_compare_f32_f64(S, rS, ns);
    const bool ok = co.nonfinite == 0 && cs.nonfinite == 0 && co.rel_l2 <= BOUND_L2 && cs.rel_l2 <= BOUND_L2 &&
                    co.rel_linf <= BOUND_LINF && cs.rel_linf <= BOUND_LINF;
    q35_case(s, ok, "%-52s o rel L2 %.2e Linf %.2e | S rel L2 %.2e Linf %.2e%s", what, co.rel_l2, co.rel_linf,
             cs.rel_l2, cs.rel_linf, extra);
}

/* Whether variant `name` runs here: every variant, or those $Q35_DELTA_CHUNK_VARIANTS
 * names (a comma-separated list: a run of the experiments apart from the
 * others, so that a trap in one cannot end the others' cases; a variant left
 * out is said once per case). */
static bool selected(const char *name)
{
    return q35_env_lists("Q35_DELTA_CHUNK_VARIANTS", name);
}

/* One case: every variant over T tokens (one call) against the float64
 * recurrence, the variants of one family bitwise equal to each other, each
 * run twice bitwise equal, the scan beside them; for T <= 4096 also against the float64
 * chunked form. */
static void check_case(q35_suite *s, const char *what, q35_delta_dims d, int64_t T, gates_kind kind)
{
    q35_error err = {{0}};
    inputs in = make_inputs(d, T, kind);
    double *ro, *rS, *co = NULL, *cS = NULL;
    reference(&in, false, &ro, &rS);
    if (T <= 4096)
        reference(&in, true, &co, &cS);
    float *dSs = q35_gpu_from_host(in.S0, in.ns), *dos = q35_gpu_floats(T * in.vd);
    q35_gpu_ok(q35_delta_rule_scan(dos, in.vd, dSs, in.drows, in.drows + in.kd, in.drows + 2 * in.kd, in.stride, in.dg,
                                   in.dbeta, T, d, Q35_VARIANT_DEFAULT, NULL, &err),
               &err);
    float *os = q35_gpu_to_host(dos, T * in.vd);
    const q35_cmp scan_o = q35_compare_f32_f64(os, ro, T * in.vd);
    const int nv = q35_delta_chunk_variant_count(), def = q35_delta_chunk_variant_default();
    enum { FAMILIES = 4 };
    float *fo[FAMILIES] = {NULL}, *fS[FAMILIES] = {NULL}; /* each formulation's first result */
    int fv[FAMILIES] = {-1, -1, -1, -1};
    for (int v = 0; v < nv; v++) {
        const char *vn = q35_delta_chunk_variant_name(v);
        q35_error why = {{0}};
        if (!selected(vn)) {
            printf("SKIP  delta_chunk %-3s %-5s T %6" PRId64 ": not in $Q35_DELTA_CHUNK_VARIANTS\n", vn, what, T);
            continue;
        }
        if (q35_delta_chunk_variant_supported(v, d, &why)) {
            q35_case(s, v != def, "delta_chunk %-3s %-5s skipped here: %s", vn, what, why.msg);
            continue;
        }
        float *dS = q35_gpu_from_host(in.S0, in.ns), *dout = q35_gpu_floats(T * in.vd);
        const double t_a = q35_now();
        run_chunk(v, dout, dS, &in, 0, T);
        const double chunk_s = q35_now() - t_a;
        float *o = q35_gpu_to_host(dout, T * in.vd), *S = q35_gpu_to_host(dS, in.ns);
        char name[200], extra[160], bo_s[160], bs_s[160];
        snprintf(extra, sizeof extra, " (scan: o %.1e; %.1f ms)", scan_o.rel_l2, 1e3 * chunk_s);
        snprintf(name, sizeof name, "delta_chunk %-3s %-5s %s Hk %2d Hv %2d T %6" PRId64 " vs f64", vn, what,
                 kind == GATES_SLOW ? "slow " : "mixed", d.hk, d.hv, T);
        verdict(s, name, o, ro, T * in.vd, S, rS, in.ns, extra);
        if (co) {
            snprintf(name, sizeof name, "delta_chunk %-3s %-5s %s Hk %2d Hv %2d T %6" PRId64 " vs f64 chunked", vn, what,
                     kind == GATES_SLOW ? "slow " : "mixed", d.hk, d.hv, T);
            verdict(s, name, o, co, T * in.vd, S, cS, in.ns, "");
        }
        { /* every variant: no order-dependent reduction, no race: the same bits again */
            q35_gpu_upload(dS, in.S0, (size_t)in.ns * sizeof *in.S0);
            run_chunk(v, dout, dS, &in, 0, T);
            float *o2 = q35_gpu_to_host(dout, T * in.vd), *S2 = q35_gpu_to_host(dS, in.ns);
            const q35_bitcmp bo = q35_bitwise_f32(o, o2, T * in.vd), bs = q35_bitwise_f32(S, S2, in.ns);
            q35_case(s, bo.equal && bs.equal, "delta_chunk %-3s %-5s T %6" PRId64 " twice: o %s, S %s", vn, what, T,
                     q35_bitcmp_str(&bo, bo_s, sizeof bo_s), q35_bitcmp_str(&bs, bs_s, sizeof bs_s));
            free(o2), free(S2);
        }
        const int f = q35_delta_chunk_variant_family(v);
        if (q35_delta_chunk_variant_takes_qk16(v)) { /* q, k given as f16 in the workspace: the same bits */
            q35_gpu_upload(dS, in.S0, (size_t)in.ns * sizeof *in.S0);
            const bool zeros = run_chunk_qk16(v, dout, dS, &in, 0, T);
            float *o2 = q35_gpu_to_host(dout, T * in.vd), *S2 = q35_gpu_to_host(dS, in.ns);
            const q35_bitcmp bo = q35_bitwise_f32(o2, o, T * in.vd), bs = q35_bitwise_f32(S2, S, in.ns);
            q35_case(s, bo.equal && bs.equal && zeros,
                     "delta_chunk %-3s %-5s T %6" PRId64 " qk16 (q, k f16 in the workspace) vs f32: o %s, S %s; "
                     "rows past T %s",
                     vn, what, T, q35_bitcmp_str(&bo, bo_s, sizeof bo_s), q35_bitcmp_str(&bs, bs_s, sizeof bs_s),
                     zeros ? "zeros" : "NOT zeros");
            free(o2), free(S2);
        }
        if (f < 0 || f >= FAMILIES) {
            q35_case(s, false, "delta_chunk %s: family %d outside 0..%d", vn, f, FAMILIES - 1);
            free(o), free(S);
        } else if (!fo[f]) { /* its formulation's first: the others of its family against it */
            fo[f] = o, fS[f] = S, fv[f] = v;
        } else {
            const q35_bitcmp bo = q35_bitwise_f32(o, fo[f], T * in.vd), bs = q35_bitwise_f32(S, fS[f], in.ns);
            q35_case(s, bo.equal && bs.equal, "delta_chunk %s and %s %-5s T %6" PRId64 ": o %s, S %s", vn,
                     q35_delta_chunk_variant_name(fv[f]), what, T, q35_bitcmp_str(&bo, bo_s, sizeof bo_s),
                     q35_bitcmp_str(&bs, bs_s, sizeof bs_s));
            free(o), free(S);
        }
        q35_gpu_free(dS), q35_gpu_free(dout);
    }
    for (int f = 0; f < FAMILIES; f++)
        free(fo[f]), free(fS[f]);
    free(os), free(ro), free(rS), free(co), free(cS);
    q35_gpu_free(dSs), q35_gpu_free(dos);
    free_inputs(&in);
}

/* The state carried across calls of different lengths, then per-token steps of
 * the scan from the chunked state: the whole against one float64 recurrence. */
static void check_carried(q35_suite *s, const char *what, q35_delta_dims d)
{
    q35_error err = {{0}};
    static const int64_t calls[] = {100, 37, 64, 1, 129, 63};
    const int64_t steps = 5;
    int64_t T = steps;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        T += calls[i];
    inputs in = make_inputs(d, T, GATES_MIXED);
    double *ro, *rS;
    reference(&in, false, &ro, &rS);
    float *dS = q35_gpu_from_host(in.S0, in.ns), *dout = q35_gpu_floats(T * in.vd);
    int64_t t = 0;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; t += calls[i++])
        run_chunk(q35_delta_chunk_variant_default(), dout, dS, &in, t, calls[i]);
    for (; t < T; t++) {
        const float *r = in.drows + t * in.stride;
        q35_gpu_ok(q35_delta_rule_step(dout + t * in.vd, dS, r, r + in.kd, r + 2 * in.kd, in.dg + t * d.hv,
                                       in.dbeta + t * d.hv, d, NULL, &err),
                   &err);
    }
    float *o = q35_gpu_to_host(dout, T * in.vd), *S = q35_gpu_to_host(dS, in.ns);
    char name[200];
    snprintf(name, sizeof name, "delta_chunk %-5s calls 100,37,64,1,129,63 + 5 steps", what);
    verdict(s, name, o, ro, T * in.vd, S, rS, in.ns, "");
    free(o), free(S), free(ro), free(rS);
    q35_gpu_free(dS), q35_gpu_free(dout);
    free_inputs(&in);
}

/* One refusal: -1 and a message holding `want`. */
static void refused(q35_suite *s, const char *what, int rc, const q35_error *err, const char *want)
{
    q35_case(s, rc == -1 && strstr(err->msg, want), "delta_chunk refuses %s: %s", what, err->msg);
}

static void check_refusals(q35_suite *s)
{
    float *d = q35_gpu_floats(1 << 16);
    const q35_delta_dims ok = {2, 4, 128, 128}, dk64 = {2, 4, 64, 64}, dv48 = {2, 4, 128, 48}, hv3 = {2, 3, 128, 128};
    const size_t wsb = q35_delta_chunk_workspace_bytes(7, ok);
    char *ws = q35_gpu_bytes(wsb + 256);
    const int64_t stride = 2 * 2 * 128 + 4 * 128;
    q35_error e[7] = {{{0}}};
    refused(s, "dk = 64",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, dk64, ws, wsb, Q35_VARIANT_DEFAULT, NULL, &e[0]),
            &e[0], "needs dk = 128");
    refused(s, "dv = 48",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, dv48, ws, wsb, Q35_VARIANT_DEFAULT, NULL, &e[1]),
            &e[1], "dv 48");
    refused(s, "Hv 3 over Hk 2",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, hv3, ws, wsb, Q35_VARIANT_DEFAULT, NULL, &e[2]), &e[2],
            "Hv 3");
    refused(s, "a misaligned q",
            q35_delta_chunk(d, 512, d, d + 1, d, d, stride, d, d, 7, ok, ws, wsb, Q35_VARIANT_DEFAULT, NULL, &e[3]),
            &e[3], "16-byte aligned");
    refused(s, "o_stride 510",
            q35_delta_chunk(d, 510, d, d, d, d, stride, d, d, 7, ok, ws, wsb, Q35_VARIANT_DEFAULT, NULL, &e[4]), &e[4],
            "o_stride 510");
    refused(s, "a workspace a byte short",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, ok, ws, wsb - 1, Q35_VARIANT_DEFAULT, NULL, &e[5]),
            &e[5], "workspace");
    refused(s, "a misaligned workspace",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, ok, ws + 16, wsb, Q35_VARIANT_DEFAULT, NULL, &e[6]),
            &e[6], "256-byte aligned");
    q35_case(s, q35_delta_chunk_workspace_bytes(64, ok) == q35_delta_chunk_workspace_bytes(1, ok) &&
                    q35_delta_chunk_workspace_bytes(65, ok) > q35_delta_chunk_workspace_bytes(64, ok),
             "delta_chunk workspace grows by whole chunks (%zu bytes for 1..64 tokens, %zu for 65)",
             q35_delta_chunk_workspace_bytes(64, ok), q35_delta_chunk_workspace_bytes(65, ok));
    q35_error err = {{0}};
    q35_case(s, q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 0, ok, NULL, 0, Q35_VARIANT_DEFAULT, NULL, &err) == 0,
             "delta_chunk of T = 0 does nothing (no workspace needed)");
    memset(&err, 0, sizeof err);
    const int nv = q35_delta_chunk_variant_count();
    refused(s, "a variant past the last",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, ok, ws, wsb, nv, NULL, &err), &err,
            "no variant");
    memset(&err, 0, sizeof err);
    refused(s, "no workspace",
            q35_delta_chunk(d, 512, d, d, d, d, stride, d, d, 7, ok, NULL, wsb, Q35_VARIANT_DEFAULT, NULL, &err), &err,
            "workspace of");
    memset(&err, 0, sizeof err);
    refused(s, "q and k in f16 to w4",
            q35_delta_chunk_qk16(d, 512, d, d, stride, d, d, 7, ok, ws, wsb, q35_delta_chunk_variant_find("w4"), NULL,
                                 &err),
            &err, "variant w4 reads q and k in f32");
    memset(&err, 0, sizeof err);
    refused(s, "q and k in f16 with a workspace a byte short",
            q35_delta_chunk_qk16(d, 512, d, d, stride, d, d, 7, ok, ws, wsb - 1, Q35_VARIANT_DEFAULT, NULL, &err),
            &err, "delta_chunk_qk16: workspace");
    bool names = q35_delta_chunk_variant_name(nv) == NULL && q35_delta_chunk_variant_find("nope") == -1;
    for (int v = 0; v < nv; v++)
        names = names && q35_delta_chunk_variant_find(q35_delta_chunk_variant_name(v)) == v;
    q35_case(s, names, "delta_chunk variant names and their lookup agree (%d variants, default %s)", nv,
             q35_delta_chunk_variant_name(q35_delta_chunk_variant_default()));
    q35_gpu_free(d), q35_gpu_free(ws);
}

int main(void)
{
    q35_suite s;
    const int skip = q35_gpu_suite(&s, "GPU chunked delta rule (against float64, the scan beside it)", &g_rng);
    if (skip)
        return skip;
    const q35_delta_dims d08 = {16, 16, 128, 128}, d9 = {16, 32, 128, 128}, d27 = {16, 48, 128, 128};
    const q35_delta_dims two = {1, 2, 128, 128}, dv64 = {2, 4, 128, 64};
    const bool quick = q35_quick();
    static const int64_t Ts[] = {1, 7, 63, 64, 65, 1000, 2047, 2048, 4096};
    for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++)
        if (!quick || Ts[i] <= 65)
            check_case(&s, "9B", d9, Ts[i], GATES_MIXED);
    check_case(&s, "0.8B", d08, quick ? 65 : 1000, GATES_MIXED);
    check_case(&s, "27B", d27, quick ? 65 : 2048, GATES_MIXED);
    check_case(&s, "dv 64", dv64, 300, GATES_MIXED); /* 5 chunks: the split variants' barriers reused */
    check_case(&s, "9B", d9, quick ? 64 : 2048, GATES_SLOW);
    check_carried(&s, "9B", d9);
    check_carried(&s, "dv 64", dv64);
    if (!quick) { /* long runs, slow decay: two heads keep the float64 recurrence to seconds */
        check_case(&s, "2 hv", two, 32768, GATES_SLOW);
        check_case(&s, "2 hv", two, 131072, GATES_SLOW);
        check_case(&s, "2 hv", two, 131072, GATES_MIXED);
    }
    check_refusals(&s);
    return q35_suite_end(&s);
}
