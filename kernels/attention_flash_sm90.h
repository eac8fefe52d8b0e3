/* The sm_90 flash prefill attention over an f16 KV cache (kernels/attention.h's
 * formula): one fused causal kernel for head_dim 256 on Hopper's warp-group
 * tensor cores (wgmma.mma_async: S = Q K^T with both operands in shared memory,
 * O += P V with P from registers), K/V tiles brought by TMA
 * (cp.async.bulk.tensor, mbarrier completion) into a 2-stage ring, a producer
 * warp group and two consumer warp groups, f32 accumulation and an f32 online
 * softmax in exp2. kernels/attention_flash_sm90.cu says how; kernels/sm90.cuh
 * holds the PTX. An experiment beside the production flash kernel
 * (kernels/attention_flash.h, f32 caches): not yet the model's path.
 *
 * Caches: IEEE f16 (uint16_t bits), k_cache[pos][kv_stride] with KV head h's
 * 256 values at h * 256, as the f32 cache's layout; s.kv_stride counts f16
 * elements. q, o: f32 [T][q_stride], [T][o_stride] as for
 * q35_attention_prefill_flash (q rounded to f16 by the kernel).
 *
 * Runs where: compute capability 9.0 exactly (sm_90a code), a build with that
 * code (CMake option Q35_SM90, on when CMAKE_CUDA_ARCHITECTURES holds 90),
 * head_dim 256, 1, 2, 3, 4, 6 or 8 query heads a KV head. */
#ifndef Q35_KERNELS_ATTENTION_FLASH_SM90_H
#define Q35_KERNELS_ATTENTION_FLASH_SM90_H

#include "kernels/attention.h"
#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build holds the sm_90a kernel (Q35_SM90), else 0. */
int q35_attention_flash_sm90_built(void);

/* Whether the kernel runs these heads on this device (see above; also the
 * shared memory it needs): 1, or 0 with the reason in why. */
int q35_attention_flash_sm90_supported(int device, q35_attn_shape s, q35_error *why);

/* o [T][o_stride] for query rows q [T][q_stride] at positions pos0..pos0+T-1,
 * over f16 cache rows 0..pos0+T-1 (this chunk's rows already appended), with
 * kernel variant `variant` (below; Q35_VARIANT_DEFAULT: the default); no
 * workspace; T = 0 does nothing. Refuses what _supported refuses, an unknown
 * variant, and: q not
 * 16-byte aligned or q_stride not a multiple of 4; o not 8-byte aligned or
 * o_stride odd; a cache not 16-byte aligned or kv_stride not a multiple of 8
 * (TMA: 16-byte strides); pos0 < 0, T < 0, pos0 + T > INT32_MAX. */
int q35_attention_prefill_flash_sm90(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                     int64_t pos0, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                     q35_error *err);

/* The same attention with the output gate in the epilogue, for the f16 GEMM
 * path's attn_output input: y16 [T][s.o_stride] (IEEE f16 bits) = o *
 * sigmoid(gate), rounded to nearest even, with gate f32 [T][s.o_stride] at
 * o's offsets (query head h's 256 values at h * 256); o itself is never
 * written. Bitwise q35_attention_prefill_flash_sm90 then
 * q35_sigmoid_gate_rows_f16 (kernels/pointwise.h) of its o: the same f32 o,
 * gated by the same q35_sigmoid and rounded once. Saves that launch and the
 * f32 o's store and reload (2 x 4 bytes a value against the gate's 4 and y16's
 * 2). The refusals of q35_attention_prefill_flash_sm90, with y16 4-byte and
 * gate 8-byte aligned in place of o's 8 bytes, and NULL y16 or gate refused. */
int q35_attention_prefill_flash_sm90_gated_f16(uint16_t *y16, const float *gate, const float *q,
                                               const uint16_t *k_cache, const uint16_t *v_cache, int64_t pos0,
                                               int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                               q35_error *err);

/* The variants (kernels/variant.h; all in this unit): serial (each wgmma
 * product waited for where it is issued), the oracle; pingpong (the two
 * consumer warp groups take turns at the tensor cores, one product a turn,
 * through named barriers: one group's softmax under the other's product);
 * fa3turn (FA3's turn: a group's P V and next S issued together, its softmax
 * under both of the other's); overlap (FA3's intra-warp-group pipeline: a
 * group's S(j) and P(j-1) V(j-1) issued together, the softmax of j under its
 * own product; bitwise serial), the default (faster than serial on whole
 * prompts); persist (overlap's schedule on a persistent grid, a block an SM
 * walking the work items longest first, snaking, one ring run on across a
 * block's items; bitwise serial; level with overlap).
 * The suite runs and the benchmarks time every one (bench/results/index.tsv,
 * family flash_sm90). */
int q35_attention_flash_sm90_variant_count(void);
const char *q35_attention_flash_sm90_variant_name(int variant);
int q35_attention_flash_sm90_variant_find(const char *name);
int q35_attention_flash_sm90_variant_production(int variant);
int q35_attention_flash_sm90_variant_default(void);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_FLASH_SM90_H */
