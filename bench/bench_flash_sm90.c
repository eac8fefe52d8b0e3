/* Benchmarks of the sm_90 flash attention over an f16 cache
 * (kernels/attention_flash_sm90.h) at the heads of 0.8B (8 / 2), 9B (16 / 4)
 * and 27B (24 / 4), head_dim 256, causal, over contexts of 512 .. 128k, beside
 * bench_attention's flash_chunk / flash_prompt (f32 caches) at the same points:
 *   flash_sm90_chunk    a chunk of 512 query rows at the end of the context;
 *   flash_sm90_prompt   a whole prompt as chunks of 512 (contexts up to 32k);
 *   flash_sm90_prompt2k a whole prompt as chunks of 2048, the model's chunk
 *                       (contexts up to WHOLE_MAX): at ctx 4096 the 2048-row
 *                       chunks of a 4k prompt;
 *   flash_sm90_whole    a whole prompt in one launch (contexts up to
 *                       WHOLE_MAX): torch SDPA's query:prompt point (bench/peers.py),
 *                       which a chunk of 512 is not: its 64 blocks (9B heads)
 *                       leave half of an H200's 132 SMs idle, where one launch
 *                       of a prompt has blocks for all of them;
 *   flash_sm90_gate     a chunk of 2048 rows (the model's) at the end of the
 *                       context with the f16 path's output gate: gate:0 the
 *                       kernel then q35_sigmoid_gate_rows_f16 (the chain the
 *                       model ran before), gate:1 the gated f16 form
 *                       (q35_attention_prefill_flash_sm90_gated_f16, the gate in
 *                       the epilogue);
 * each per kernel variant (axis variant, by name: variant:serial);
 * FLOP as bench_attention counts them (q35_bench_attn_flop: visible pairs
 * only), and rows. Built only with the sm_90a code (Q35_SM90); a device where
 * the kernel does not run skips every point with the launcher's reason. */
#include "bench/gpu_bench.h"
#include "bench/models.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/pointwise.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CHUNK 512
#define GATE_CHUNK 2048
#define PROMPT_MAX 32768
#define WHOLE_MAX 65536

static const int k_chunk = 0, k_prompt = 1, k_gate = 2, k_prompt2k = 3, k_whole = 4;

struct sm90_ctx {
    q35_attn_shape s;
    float *q, *o;          /* [T][q_stride], [T][o_stride] */
    float *gate;           /* flash_sm90_gate: [T][o_stride] */
    uint16_t *y16;         /* flash_sm90_gate: [T][o_stride] f16 */
    uint16_t *k, *v;       /* f16 caches [n_ctx][kv_stride] */
    int64_t n_ctx, T;      /* chunk: rows n_ctx - T .. n_ctx - 1; prompt: chunks of T up to n_ctx */
    int prompt, variant;
    int gated;             /* flash_sm90_gate: -1 none, 0 the chain, 1 the gated form */
};

static int sm90_launch(void *p, q35_error *err)
{
    struct sm90_ctx *c = p;
    for (int64_t r0 = c->prompt ? 0 : c->n_ctx - c->T; r0 < c->n_ctx; r0 += c->T) {
        const int64_t rows = c->n_ctx - r0 < c->T ? c->n_ctx - r0 : c->T;
        if (c->gated == 1) {
            if (q35_attention_prefill_flash_sm90_gated_f16(c->y16, c->gate, c->q, c->k, c->v, r0, rows, c->s,
                                                            c->variant, NULL, err))
                return -1;
            continue;
        }
        if (q35_attention_prefill_flash_sm90(c->o, c->q, c->k, c->v, r0, rows, c->s, c->variant, NULL, err) ||
            (c->gated == 0 && q35_sigmoid_gate_rows_f16(c->y16, c->o, c->gate, c->s.o_stride, rows, NULL, err)))
            return -1;
    }
    return 0;
}

/* Skips the point with the reason (the shim's way: the loop still runs). */
static void skip(q35_bench_state *st, const char *why)
{
    q35_bench_skip(st, why);
    while (q35_bench_keep_running(st))
        ;
}

static void bench_sm90(q35_bench_state *st, void *which)
{
    const q35_shape *m = q35_bench_model((int)q35_bench_arg(st, 0));
    const int kind = *(const int *)which;
    const bool gate = kind == k_gate;
    struct sm90_ctx c = {.n_ctx = q35_bench_arg(st, 1),
                         .prompt = kind == k_prompt || kind == k_prompt2k || kind == k_whole,
                         .variant = (int)q35_bench_arg(st, 2), .gated = gate ? (int)q35_bench_arg(st, 3) : -1};
    const int64_t rows = kind == k_whole ? c.n_ctx : gate || kind == k_prompt2k ? GATE_CHUNK : CHUNK;
    c.T = c.n_ctx < rows ? c.n_ctx : rows;
    c.s = (q35_attn_shape){m->n_head, m->n_head_kv, m->head_dim, (int64_t)m->n_head * m->head_dim,
                           (int64_t)m->n_head * m->head_dim, (int64_t)m->n_head_kv * m->head_dim,
                           (float)(1.0 / sqrt((double)m->head_dim))};
    q35_error why = {{0}};
    int dev = 0;
    if (c.prompt && c.n_ctx > (kind == k_prompt ? PROMPT_MAX : WHOLE_MAX)) {
        skip(st, kind == k_prompt ? "a whole prompt past 32k takes too long per iteration: see flash_sm90_chunk"
                                  : "a whole prompt past 64k takes too long per iteration: see flash_sm90_chunk");
        return;
    }
    if (cudaGetDevice(&dev) != cudaSuccess || !q35_attention_flash_sm90_supported(dev, c.s, &why)) {
        skip(st, why.msg[0] ? why.msg : "cudaGetDevice failed");
        return;
    }
    const size_t cache = (size_t)c.n_ctx * (size_t)c.s.kv_stride * sizeof(uint16_t);
    c.q = q35_bench_try_alloc((size_t)c.T * c.s.q_stride * sizeof(float), st);
    c.o = c.q ? q35_bench_try_alloc((size_t)c.T * c.s.o_stride * sizeof(float), st) : NULL;
    c.k = c.o ? q35_bench_try_alloc(cache, st) : NULL;
    c.v = c.k ? q35_bench_try_alloc(cache, st) : NULL;
    if (c.v && gate) {
        c.gate = q35_bench_try_alloc((size_t)c.T * c.s.o_stride * sizeof(float), st);
        c.y16 = c.gate ? q35_bench_try_alloc((size_t)c.T * c.s.o_stride * sizeof(uint16_t), st) : NULL;
        if (c.y16) /* a finite gate (the allocation's pattern may not be) */
            q35_bench_check(cudaMemset(c.gate, 0, (size_t)c.T * c.s.o_stride * sizeof(float)), "cudaMemset");
    }
    if (c.v && (!gate || c.y16)) {
        /* f16 1.0547 (bytes 0x3c): finite caches (q35_bench_alloc's float pattern read as f16 may not be) */
        q35_bench_check(cudaMemset(c.k, 0x3c, cache), "cudaMemset");
        q35_bench_check(cudaMemset(c.v, 0x3c, cache), "cudaMemset");
        q35_bench_time(st, sm90_launch, &c);
        q35_bench_rate(st, "FLOP", c.prompt ? q35_bench_attn_flop(m, 0, c.n_ctx)
                                            : q35_bench_attn_flop(m, c.n_ctx - c.T, c.T));
        q35_bench_rate(st, "rows", (double)(c.prompt ? c.n_ctx : c.T));
    }
    q35_bench_free(c.q), q35_bench_free(c.o), q35_bench_free(c.k), q35_bench_free(c.v);
    q35_bench_free(c.gate), q35_bench_free(c.y16);
}

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init(&argc, argv))
        return 1;
    static const int64_t contexts[] = {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    static int64_t variants[8];
    static const char *labels[8];
    const int n_variants = q35_attention_flash_sm90_variant_count() < 8 ? q35_attention_flash_sm90_variant_count() : 8;
    for (int v = 0; v < n_variants; v++)
        variants[v] = v, labels[v] = q35_attention_flash_sm90_variant_name(v);
    const q35_bench_axis model = q35_bench_model_axis(), ctx = {"ctx", contexts, 9},
                         variant = {"variant", variants, n_variants};
    q35_bench_register("flash_sm90_chunk", bench_sm90, (void *)&k_chunk, (q35_bench_axis[]){model, ctx, variant}, 3);
    q35_bench_register("flash_sm90_prompt", bench_sm90, (void *)&k_prompt, (q35_bench_axis[]){model, ctx, variant},
                       3);
    q35_bench_register("flash_sm90_prompt2k", bench_sm90, (void *)&k_prompt2k,
                       (q35_bench_axis[]){model, ctx, variant}, 3);
    q35_bench_register("flash_sm90_whole", bench_sm90, (void *)&k_whole, (q35_bench_axis[]){model, ctx, variant}, 3);
    static const int64_t gates[] = {0, 1};
    const q35_bench_axis gate = {"gate", gates, 2};
    q35_bench_register("flash_sm90_gate", bench_sm90, (void *)&k_gate, (q35_bench_axis[]){model, ctx, variant, gate},
                       4);
    q35_bench_axis_labels("variant", labels, n_variants); /* flash_sm90_chunk/.../variant:overlap */
    char names[200];
    q35_variant_list(q35_attention_flash_sm90_variant_count, q35_attention_flash_sm90_variant_name,
                     q35_attention_flash_sm90_variant_production, q35_attention_flash_sm90_variant_default(), names,
                     sizeof names);
    q35_bench_context("flash_sm90_variant", names);
    char legend[200];
    q35_bench_context("models", q35_bench_model_legend(legend, sizeof legend));
    q35_bench_context("flash_sm90", "f16 caches; wgmma + TMA, 128 query rows x 64 positions a tile; head_dim 256");
    return q35_bench_main(argc, argv);
}
