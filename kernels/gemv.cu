/* The GEMV straight from the quantized blocks (kernels/gemv.h).
 *
 * A warp owns NR output rows and R activation rows. The units of a weight row
 * (kernels/dequant.cuh: 16 or 32 elements, a lane's share of bytes) go to the
 * lanes in turn: lane l takes units l, l + 32, l + 64, ... Each lane keeps one
 * accumulator per (activation row, output row) and adds its units' runs of 16 in
 * that order, each run factored by its scales (run_dot):
 *     d = sum_j x[j] q[j] (the exact levels, fused multiply-adds in order),
 *     acc = fma(s, d, acc), then for Q4_K/Q5_K acc = fma(-m1, sum_j x[j], acc)
 * (plain types: acc + d); then a fixed butterfly over the 32 lanes. That order
 * depends on k and the type alone, so any (NR, R) tiling gives every output the
 * same bits: the per-token form (R = 1, NR = 4, or 2 for Q5_K/Q6_K) and the rows
 * form (R = 8, NR = 2, the weight rows read once per tile of 8 activation rows)
 * agree bitwise. Per weight element per token that is a byte permute and a
 * subtraction (the level), one fused multiply-add, and a share of the run's
 * scale work: few enough instructions to stay under the bandwidth of Q4_K.
 *
 * Bytes: the weight as stored, 16-byte loads where a unit is 16-byte aligned
 * (F32, F16, BF16, Q4_K, Q5_K on a 16-byte aligned weight with 16-byte rows),
 * 2-byte loads otherwise; x through the read-only cache, 16-byte loads when
 * aligned. */
#include "kernels/dequant_units.cuh"
#include "kernels/gemv.h"
#include "kernels/gemv_parts.cuh"
#include "kernels/gemv_ring.cuh"
#include "kernels/linear_args.cuh"
#include "kernels/reduce.cuh"

#include <cuda_runtime.h>

namespace {

/* The per-token form's variants (gemv.h), both in the model's library: their
 * ranks are what gemv() below takes. */
constexpr int kRegistersRank = 0, kStagedRank = 1;
const q35_variant k_variant_table[] = {{"registers", kRegistersRank, NULL}, {"staged", kStagedRank, NULL}};
const q35_variant_set k_variants = {Q35_VARIANT_TABLE(k_variant_table), NULL, NULL};

constexpr int kWarps = 4; /* warps per block */
/* Per token: output rows per warp; 2 for the types whose units take the most
 * registers (Q5_K, Q6_K: 4 would spill at 128 registers). */
template <int TYPE>
constexpr int kTokenRows = TYPE == Q35_TYPE_Q5_K || TYPE == Q35_TYPE_Q6_K ? 2 : 4;
constexpr int kTileRows = 8, kTileOutRows = 2;  /* rows form: activation rows per tile, output rows per warp */
constexpr int64_t kMaxGridY = 65535;
/* Blocks per SM the registers must allow: per token 4 (16 warps, <= 128 registers:
 * loads in flight; Q6_K 3, whose 2-byte loads need more), a tile of rows 2 (<= 255
 * registers: the rows' activations). */
template <int TYPE>
constexpr int kTokenMinBlocks = TYPE == Q35_TYPE_Q6_K ? 3 : 4;
constexpr int kTileMinBlocks = 2;

/* v[j] = p[j] for j < count, else 0: four 16-byte loads when vec and the run is
 * whole (count the elements left in the unit: 16 or more). */
__device__ __forceinline__ void load_x16(float (&v)[16], const float *p, bool vec, int count)
{
    if (vec && count >= 16) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const float4 a = __ldg(reinterpret_cast<const float4 *>(p) + i);
            v[4 * i] = a.x, v[4 * i + 1] = a.y, v[4 * i + 2] = a.z, v[4 * i + 3] = a.w;
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < 16; j++)
        v[j] = j < count ? __ldg(p + j) : 0.0f;
}

/* sum_j x[j] in order. */
__device__ __forceinline__ float sum16(const float (&x)[16])
{
    float s = x[0];
#pragma unroll
    for (int j = 1; j < 16; j++)
        s = __fadd_rn(s, x[j]);
    return s;
}

/* One run into an accumulator: d = sum_j x[j] q[j] in order (q the levels), then
 * acc + s d - m sx (sx = sum_j x[j]): Q35_PLAIN acc + d, Q35_SCALED fma(s, d, acc),
 * Q35_ASYM that and fma(-m, sx, .). */
template <int KIND>
__device__ __forceinline__ float run_dot(float acc, const float (&x)[16], const float (&q)[16], float s, float m,
                                         float sx)
{
    float d = __fmul_rn(x[0], q[0]);
#pragma unroll
    for (int j = 1; j < 16; j++)
        d = __fmaf_rn(x[j], q[j], d);
    if constexpr (KIND == Q35_PLAIN)
        return __fadd_rn(acc, d);
    acc = __fmaf_rn(s, d, acc);
    if constexpr (KIND == Q35_ASYM)
        acc = __fmaf_rn(-m, sx, acc);
    return acc;
}

/* One unit u of NR weight rows (raw) against one token's row x, in the per-token
 * order: per run, x's 16 loaded once (and their sum), each row's levels used at
 * once. Both per-token variants run exactly this. */
template <int TYPE, int NR>
__device__ __forceinline__ void token_unit(float (&acc)[NR], const typename q35_unit<TYPE>::raw (&raw)[NR], int64_t u,
                                           const float *x, bool vec_x, int count)
{
    using Unit = q35_unit<TYPE>;
    constexpr int kind = Unit::kind;
#pragma unroll
    for (int run = 0; run < Unit::runs; run++) {
        float xv[16];
        load_x16(xv, x + Unit::run_elem(u, run), vec_x, count);
        const float sx = kind == Q35_ASYM ? sum16(xv) : 0.0f;
#pragma unroll
        for (int i = 0; i < NR; i++) {
            float q[16], s, m;
            Unit::levels(raw[i], u, run, q);
            Unit::scale(raw[i], u, run, &s, &m);
            acc[i] = run_dot<kind>(acc[i], xv, q, s, m, sx);
        }
    }
}

/* y[t][o] = sum_i x[t][i] W[o][i] for the R rows t0.. of blockIdx.x and the
 * NR rows of this warp's row group of the parts (rows past T or a part's n are
 * computed on the last row and not written). vec_w: the units 16-byte aligned;
 * vec_x: x's rows 16-byte aligned. One token (R = 1): x's run loaded once,
 * each row's levels used at once. A tile of rows: the NR rows' levels and
 * scales read once, used by the R rows. */
template <int TYPE, int NR, int R>
__global__ void __launch_bounds__(kWarps * 32, R == 1 ? kTokenMinBlocks<TYPE> : kTileMinBlocks)
    gemv_kernel(gemv_parts P, int64_t ldy, int64_t row_bytes, int64_t k, const float *x, int64_t T, bool vec_w,
                bool vec_x)
{
    using Unit = q35_unit<TYPE>;
    constexpr int kind = Unit::kind;
    static_assert(NR * R <= 32, "one lane stores each output");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t gi = (int64_t)blockIdx.y * kWarps + warp, t0 = (int64_t)blockIdx.x * R;
    if (gi >= P.g[P.count])
        return; /* the whole warp */
    const gemv_group grp = locate<NR>(P, gi, row_bytes);
    const int64_t units = (k + Unit::elems - 1) / Unit::elems;
    const uint8_t *wrow = grp.w;
    const float *xrow = x + t0 * k;
    /* the last valid row of each (at most NR - 1, R - 1) */
    const int last_i = grp.last;
    const int last_t = (int)(T - 1 - t0 < R - 1 ? T - 1 - t0 : R - 1);
    float acc[R][NR];
#pragma unroll
    for (int t = 0; t < R; t++)
#pragma unroll
        for (int i = 0; i < NR; i++)
            acc[t][i] = 0.0f;

#pragma unroll 1
    for (int64_t u = lane; u < units; u += 32) {
        const int64_t left = k - u * Unit::elems;
        const int count = left < Unit::elems ? (int)left : Unit::elems; /* below 16 only in a plain row's last unit */
        typename Unit::raw raw[NR];
#pragma unroll
        for (int i = 0; i < NR; i++) /* every row's load first: NR units in flight */
            Unit::load(raw[i], wrow + (i < last_i ? i : last_i) * row_bytes, u, vec_w, count);
        if constexpr (R == 1) {
            token_unit<TYPE, NR>(acc[0], raw, u, xrow, vec_x, count);
        } else {
#pragma unroll
            for (int run = 0; run < Unit::runs; run++) {
                const int64_t e = Unit::run_elem(u, run);
                float q[NR][16], s[NR], m[NR];
#pragma unroll
                for (int i = 0; i < NR; i++) {
                    Unit::levels(raw[i], u, run, q[i]);
                    Unit::scale(raw[i], u, run, &s[i], &m[i]);
                }
#pragma unroll
                for (int t = 0; t < R; t++) {
                    float xv[16];
                    load_x16(xv, xrow + (t < last_t ? t : last_t) * k + e, vec_x, count);
                    const float sx = kind == Q35_ASYM ? sum16(xv) : 0.0f;
#pragma unroll
                    for (int i = 0; i < NR; i++)
                        acc[t][i] = run_dot<kind>(acc[t][i], xv, q[i], s[i], m[i], sx);
                }
            }
        }
    }
#pragma unroll
    for (int t = 0; t < R; t++)
#pragma unroll
        for (int i = 0; i < NR; i++) {
            const float sum = q35_group_sum<32>(acc[t][i]);
            if (lane == t * NR + i && t <= last_t && i <= last_i)
                grp.y[(t0 + t) * ldy + i] = sum;
        }
}

template <int TYPE, int NR, int R>
int launch(const char *who, gemv_parts P, int64_t ldy, int64_t k, const float *x, int64_t T, q35_stream stream,
           q35_error *err)
{
    const int64_t row_bytes = (int64_t)q35_row_bytes(TYPE, k);
    const bool vec_w = q35_unit<TYPE>::wide && parts_aligned16(P) && row_bytes % 16 == 0;
    const bool vec_x = (uintptr_t)x % 16 == 0 && k % 4 == 0;
    P = with_groups<NR>(P);
    const dim3 grid((unsigned)((T + R - 1) / R), (unsigned)((P.g[P.count] + kWarps - 1) / kWarps));
    gemv_kernel<TYPE, NR, R><<<grid, kWarps * 32, 0, stream>>>(P, ldy, row_bytes, k, x, T, vec_w, vec_x);
    return Q35_LAUNCH_CHECK(who, err);
}

/* ---- the staged per-token variant ---------------------------------------------------
 * The weight streams through shared memory (kernels/gemv_ring.cuh): a stage
 * is 32 J units (J a lane) of NR weight rows. A lane reads its unit u = 32 J
 * it + 32 j + lane of each row from the stage (16-byte reads for Q4_K/Q5_K,
 * aligned words funnel-shifted for the 2-byte aligned blocks) and computes
 * token_unit: the arithmetic and order of the register variant. */
/* rows: NR; per_lane: J; stages: S; seg: a stage's bytes of one row (32 J units:
 * Q6_K 2 a lane, 8 blocks of 210, the first whole number of 16 bytes) */
template <int TYPE>
struct staged_shape {
    static constexpr bool q6k = TYPE == Q35_TYPE_Q6_K, two = q6k || TYPE == Q35_TYPE_Q8_0;
    static constexpr int rows = two ? 2 : 4, per_lane = q6k ? 2 : 1, stages = q6k ? 3 : 4;
    static constexpr int unit_bytes = TYPE == Q35_TYPE_Q8_0                           ? 34
                                      : TYPE == Q35_TYPE_Q4_K || TYPE == Q35_TYPE_Q4_0 ? 18
                                                                                       : 22;
    static constexpr int seg = q6k ? 8 * 210 : 32 * unit_bytes;
};

template <int TYPE>
constexpr bool kStaged = TYPE == Q35_TYPE_Q4_K || TYPE == Q35_TYPE_Q5_K || TYPE == Q35_TYPE_Q8_0 ||
                         TYPE == Q35_TYPE_Q4_0 || TYPE == Q35_TYPE_Q5_0 || TYPE == Q35_TYPE_Q6_K;
constexpr int kStagedMinBlocks = 4;

template <int TYPE, bool VEC_X>
__global__ void __launch_bounds__(kWarps * 32, kStagedMinBlocks)
    gemv_staged_kernel(gemv_parts P, int64_t row_bytes, int64_t k, const float *x)
{
    using Unit = q35_unit<TYPE>;
    using Shape = staged_shape<TYPE>;
    constexpr int NR = Shape::rows, J = Shape::per_lane;
    using Ring = gemv_ring<NR, Shape::stages, Shape::seg>;
    __shared__ __align__(16) uint8_t stage[kWarps][Ring::bytes];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t units = k / Unit::elems, per_stage = 32 * J;
    const int iters = (int)((units + per_stage - 1) / per_stage); /* stages a group */
    float acc[NR];
#pragma unroll
    for (int i = 0; i < NR; i++)
        acc[i] = 0.0f;
    Ring::run(
        P, row_bytes, stage[warp], iters, (int64_t)blockIdx.x * kWarps + warp, (int64_t)gridDim.x * kWarps,
        [&](const uint8_t *st, int it) {
#pragma unroll
            for (int j = 0; j < J; j++) {
                const int ul = 32 * j + lane;
                const int64_t u = it * per_stage + ul;
                if (u < units) {
                    typename Unit::raw raw[NR];
#pragma unroll
                    for (int i = 0; i < NR; i++)
                        Unit::load_shared(raw[i], st + i * Ring::pitch, ul);
                    token_unit<TYPE, NR>(acc, raw, u, x, VEC_X, Unit::elems);
                }
            }
        },
        [&](int64_t g) { group_store<NR>(P, locate<NR>(P, g, row_bytes), acc); }); /* P.add: never here */
}

/* The staged variant where it applies (the type staged, the weight and its rows
 * 16-byte aligned); 1 when it does not (the caller runs the register variant). */
template <int TYPE>
int launch_staged(gemv_parts P, int64_t k, const float *x, q35_stream stream, q35_error *err)
{
    if constexpr (!kStaged<TYPE>) {
        (void)P, (void)k, (void)x, (void)stream, (void)err;
        return 1;
    } else {
        const int64_t row_bytes = (int64_t)q35_row_bytes(TYPE, k);
        if (!parts_aligned16(P) || row_bytes % 16 != 0 || row_bytes > INT32_MAX / staged_shape<TYPE>::rows)
            return 1;
        const bool vec_x = (uintptr_t)x % 16 == 0 && k % 4 == 0;
        const auto kernel = vec_x ? gemv_staged_kernel<TYPE, true> : gemv_staged_kernel<TYPE, false>;
        int64_t resident = 0;
        if (resident_blocks(kernel, kWarps * 32, &resident, err))
            return -1;
        P = with_groups<staged_shape<TYPE>::rows>(P);
        const int64_t groups = P.g[P.count];
        const int64_t want = (groups + kWarps - 1) / kWarps;
        const unsigned blocks = (unsigned)(want < resident ? want : resident);
        kernel<<<blocks, kWarps * 32, 0, stream>>>(P, row_bytes, k, x);
        return Q35_LAUNCH_CHECK("gemv (staged)", err);
    }
}

/* grid.y counts blocks of row groups (the same limit for both forms, whose
 * groups have 2 rows at least); grid.x tiles of rows */
static_assert(kGemvMaxRows == kMaxGridY * kWarps * 2, "the parts' row limit is grid.y's");

/* The parts' checks (check_parts; each part's rows written at ldy) and the
 * launch; T == 1 per token through `variant`'s rank. */
int gemv(const char *who, gemv_parts P, q35_type type, int64_t ldy, int64_t k, const float *x, int64_t T,
         int variant, q35_stream stream, q35_error *err)
{
    if (check_parts(who, P, type, k, err))
        return -1;
    for (int i = 0; i < P.count; i++)
        if (q35_check_rows(who, P.n[i], T, (int64_t)INT32_MAX * kTileRows, ldy, err))
            return -1;
    if (T == 0)
        return 0;
    return q35_type_dispatch(type, [&](auto tc) {
        constexpr int TYPE = decltype(tc)::value;
        if (T == 1 && variant == kStagedRank) {
            const int rc = launch_staged<TYPE>(P, k, x, stream, err);
            if (rc <= 0)
                return rc;
        }
        return T == 1 ? launch<TYPE, kTokenRows<TYPE>, 1>(who, P, ldy, k, x, T, stream, err)
                      : launch<TYPE, kTileOutRows, kTileRows>(who, P, ldy, k, x, T, stream, err);
    });
}

} // namespace

Q35_VARIANT_REGISTRY(gemv, k_variants)

int q35_gemv_variant_default(q35_type type)
{
    /* the faster per type (bench/results/, family linear): staged on Q4_K, Q5_K, Q6_K */
    return q35_gemv_variant_find(type == Q35_TYPE_Q4_K || type == Q35_TYPE_Q5_K || type == Q35_TYPE_Q6_K ? "staged"
                                                                                                      : "registers");
}

/* The per-token forms: the variant resolved (the type's default for
 * Q35_VARIANT_DEFAULT), then one launch of the parts (ldy: any >= each n). */
static int per_token(const char *who, gemv_parts P, q35_type type, int64_t k, const float *x, int variant,
                     q35_stream stream, q35_error *err)
{
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_gemv_variant_default(type);
    const q35_variant *v = q35_variant_at(&k_variants, variant);
    if (!v)
        return q35_fail(err, "%s: variant %d (want 0 .. %d)", who, variant, q35_gemv_variant_count() - 1);
    int64_t ldy = 1;
    for (int i = 0; i < P.count; i++)
        ldy = P.n[i] > ldy ? P.n[i] : ldy;
    return gemv(who, P, type, ldy, k, x, 1, v->rank, stream, err);
}

int q35_gemv(float *y, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int variant,
             q35_stream stream, q35_error *err)
{
    return per_token("gemv", one_part(y, w, n), type, k, x, variant, stream, err);
}

int q35_gemv_group(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const float *x, int variant,
                   q35_stream stream, q35_error *err)
{
    gemv_parts P;
    if (parts_of("gemv_group", parts, count, type, &P, err))
        return -1;
    return per_token("gemv_group", P, type, k, x, variant, stream, err);
}

int q35_gemv_rows(float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int64_t T,
                  q35_stream stream, q35_error *err)
{
    return gemv("gemv_rows", one_part(y, w, n), type, ldy, k, x, T, kRegistersRank, stream, err);
}
