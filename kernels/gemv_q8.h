/* The fast decode projection: a GEMV of 8-bit activations against the
 * quantized weight's integer levels (SPEC §2's projection, with its input
 * rounded as llama.cpp's CUDA backend rounds it, in our own arithmetic).
 *
 * x [k] is first quantized in blocks of 32 (q35_gemv_q8_quantize):
 *
 *     d = max|x_j| / 127 (f32),  q_j = round-to-even(x_j / d) in -127..127,
 *     s = d * sum_j q_j (f32)                    (an all-zero block: d = q = s = 0)
 *
 * so the product takes x'_j = d q_j in place of x_j. Then each output is
 *
 *     y[o] = sum over the row's sub-blocks of  (W's scale) (d sum_j w_j q_j)  - (W's min) s
 *
 * with sum_j w_j q_j exact in 32-bit integers (dp4a: four products a
 * step), one f32 multiply-add a sub-block: about a fifth of the
 * instructions q35_gemv spends a weight (an f32 multiply-add on a level made
 * from its bits), so the weight's bytes, not the issue rate, bound it.
 *
 * Not bitwise q35_gemv, and not its error: x' differs from x by up to d / 2
 * an element (a relative 1/254 of the block's largest), the error of the
 * "ggml" activations tier (docs/SPEC.md); the integer sums are exact and the
 * f32 terms round once or twice each, so against the float64 product on x'
 * (q35_ref_linear of q35_ref_gemv_q8_quantize's x') it stays within ~1e-5
 * relative (test_kernels_gemv_q8 holds it there). The decode path takes it
 * where the switch decode-q8 is on (model/cuda_layers.c).
 *
 * Types: Q4_K, Q5_K, Q6_K, Q8_0 (q35_gemv_q8_takes); k a whole number of the
 * type's blocks. kernels/gemv_q8.cu. */
#ifndef Q35_KERNELS_GEMV_Q8_H
#define Q35_KERNELS_GEMV_Q8_H

#include "core/quant.h"
#include "kernels/cuda.h"
#include "kernels/gemv.h"
#include "kernels/variant.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether q35_gemv_q8 computes weights of `type`. */
static inline bool q35_gemv_q8_takes(q35_type type)
{
    return type == Q35_TYPE_Q4_K || type == Q35_TYPE_Q5_K || type == Q35_TYPE_Q6_K || type == Q35_TYPE_Q8_0;
}

/* A quantized x of k inputs (k a multiple of 32): q [k] int8 at 0, then d [k /
 * 32] f32 at q35_gemv_q8_d_at(k), s [k / 32] f32 at q35_gemv_q8_s_at(k); each
 * part 16-byte aligned from the start; q35_gemv_q8_x_bytes(k) in all. */
static inline size_t q35_gemv_q8_d_at(int64_t k)
{
    return ((size_t)k + 15u) / 16u * 16u;
}
static inline size_t q35_gemv_q8_s_at(int64_t k)
{
    return q35_gemv_q8_d_at(k) + ((size_t)(k / 32) * 4u + 15u) / 16u * 16u;
}
static inline size_t q35_gemv_q8_x_bytes(int64_t k)
{
    return q35_gemv_q8_s_at(k) + ((size_t)(k / 32) * 4u + 15u) / 16u * 16u;
}

/* CPU: the quantization above in the GPU's arithmetic (bitwise its q, d, s):
 * q [k], d and s [k / 32]; k a multiple of 32. */
void q35_ref_gemv_q8_quantize(int8_t *q, float *d, float *s, const float *x, int64_t k);

/* CUDA: x [k] (device, 4-byte aligned; k a multiple of 32, at most
 * INT32_MAX) into xq (q35_gemv_q8_x_bytes(k) bytes, 16-byte aligned). A warp
 * a block. */
int q35_gemv_q8_quantize(void *xq, const float *x, int64_t k, q35_stream stream, q35_error *err);

/* CUDA: y [n] = W x' for W [n] rows of `type` (q35_gemv_q8_takes; as the GGUF
 * stores it, 2-byte aligned; Q4_K and Q5_K 16-byte aligned), xq from
 * q35_gemv_q8_quantize of k inputs. n at most 524280. Refuses another type,
 * k not a whole number of its blocks, a misaligned weight, a variant outside
 * the registry, each naming it. `variant`: below (Q35_VARIANT_DEFAULT:
 * q35_gemv_q8_variant_default). */
int q35_gemv_q8(float *y, const void *w, q35_type type, int64_t n, int64_t k, const void *xq, int variant,
                q35_stream stream, q35_error *err);
/* The same with y [n] += W x': each y[i] + its product, one f32 add (so
 * bitwise q35_gemv_q8 into p, then y[i] + p[i]: a decode step's output
 * projection adding into the residual stream, kernels/pointwise.h's residual
 * add). The same refusals. */
int q35_gemv_q8_add(float *y, const void *w, q35_type type, int64_t n, int64_t k, const void *xq, int variant,
                    q35_stream stream, q35_error *err);

/* CUDA: the same for a group of weights of one type that read the same x
 * (kernels/gemv.h's q35_gemv_part; 1 .. Q35_GEMV_GROUP_MAX parts): each output
 * bitwise q35_gemv_q8 of its part alone. */
int q35_gemv_q8_group(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const void *xq, int variant,
                      q35_stream stream, q35_error *err);

/* CUDA: q35_gemv_q8_group launched early (programmatic dependent launch, on
 * compute capability 9.0+; plainly elsewhere): its blocks may start while the
 * grid before it in the stream finishes and wait for it (griddepcontrol.wait)
 * before reading xq or writing y; a variant's early form may first prefetch
 * its rows of the weights into L2 (no output of that grid: registers, rows2,
 * unroll2, persist_prefetch do; persist and the others wait first and
 * prefetch nothing). Bitwise q35_gemv_q8_group. The grid before it lets it
 * start early by triggering its dependents (the quantization, the GEMVs here
 * and the norms' 8-bit forms do, at their start); any other grid, at its end.
 * Nothing but the prefetches runs before the wait, so whatever that grid reads
 * or writes, the result is the plain launch's. */
int q35_gemv_q8_group_early(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const void *xq,
                            int variant, q35_stream stream, q35_error *err);

/* The variants (kernels/variant.h): registers and persist in the model's
 * library, the others experiments (kernels/experiments/gemv_q8.cu: the suites and the
 * benchmarks only). The same arithmetic in the same order, so bitwise the
 * same outputs; they differ in how the work is cut among the warps.
 *   registers  a warp 4 rows, a lane its units one at a time (each row's
 *              bytes of a unit loaded, then computed); a warp a group, as
 *              many blocks as groups.
 *   persist    a warp 2 rows a group, a grid of the blocks the SMs hold at
 *              once, each warp taking groups in turn: no second wave, and a
 *              finer share of the last groups (Q6_K: rows2's form, its ql and
 *              qh read 8 bytes a load and realigned, 13 load instructions a
 *              unit against 35). Q6_K and Q8_0 weights whose rows are 16-byte
 *              aligned (Q6_K: k a multiple of 2048; Q8_0: of 256) stream
 *              through shared memory a warp's pass at a time with coalesced
 *              16-byte copies (kernels/gemv_ring.cuh), each lane's unit read
 *              from there (their 2-byte aligned blocks otherwise take narrow
 *              loads spread over the warp's bytes); a lane loads a pass's x
 *              a pass ahead (its L2 round trip overlapping the wait for the
 *              stage), sums Q6_K's levels as sum l x - 32 sum x (the same
 *              int32, no byte subtraction a word), and a warp locates a
 *              group once, not at every stage. Launched early, the same
 *              kernels, waiting first.
 *   rows2      a warp 2 rows: twice the warps, each half the bytes in
 *              flight and about three quarters of the registers.
 *   unroll2    a warp 4 rows, a lane's two next units loaded before either
 *              is computed: twice the bytes in flight a warp.
 *   persist_narrow persist without the wide loads and the ring: every unit's
 *              bytes loaded by its lane, Q6_K and Q8_0 2 bytes a load.
 *   persist_u2 persist, a lane's two next units loaded before either is
 *              computed (a row of 4096 one round trip to memory, not two;
 *              Q6_K: rows2's form so unrolled; none through the ring).
 *   persist_prefetch persist_narrow, launched early (decode-pdl) as rows2's
 *              early forms, which prefetch their rows into L2 before they wait.
 *   persist_r0 persist with its ring kernels as they were before x was
 *              loaded a pass ahead: x in its pass, Q6_K's levels less 32 a
 *              byte, the group located at every stage.
 *   persist_y  persist whose Q6_K ring kernel builds a word's levels with
 *              one shift of qh (left 4 - 2 qp or right 2 qp, then the mask;
 *              not right, mask, left) and reads its stage with shared-space
 *              loads (ld.shared; the compiler reads it with generic loads
 *              otherwise).
 * The default: persist (bench_linear gemv_q8's variant axis: the faster on
 * every type). */
int q35_gemv_q8_variant_count(void);
const char *q35_gemv_q8_variant_name(int variant);
int q35_gemv_q8_variant_find(const char *name);
int q35_gemv_q8_variant_production(int variant);
int q35_gemv_q8_variant_default(void);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMV_Q8_H */
