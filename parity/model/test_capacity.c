/* The CUDA model's capacity plan (model/capacity.h) on the CPU, against figures
 * computed by hand: the 0.8B, 9B and 27B shapes (model/shapes.c) with Q4_K
 * weights at 4096, 151552 (148k) and 262144 positions, chunk rows 512; then the
 * plan's choices on devices of given free memory (f32 while it fits, flash past
 * it, smaller chunks past that, a refusal naming each term).
 *
 * The hand computation. Q4_K: 144 bytes per 256 values, so a row of c inputs
 * is c/256*144 bytes; al(x) rounds up to 256 bytes; vectors are f32.
 *
 * 0.8B: H 1024, 24 layers (18 DeltaNet, 6 attention), heads 8/2 of 256, ffn
 * 3584, Hk 16, Hv 16, dk = dv 128, K 4, vocab 248320, tied.
 *   conv_dim = 2*16*128 + 16*128 = 6144; Hv*dv = 2048; q 2048; kv 512
 *   both kinds: ffn_gate, ffn_up 3584*576 = 2064384 each, ffn_down 1024*2016 =
 *     2064384, two norms 4096 each: 6201344
 *   DeltaNet: + attn_qkv 6144*576 = 3538944 + attn_gate 2048*576 = 1179648 +
 *     ssm_alpha, ssm_beta 16*576 = 9216 each + ssm_out 1024*1152 = 1179648 +
 *     conv1d 6144*4*4 = 98304 + dt, a al(64) = 256 each + ssm_norm 512
 *     = 12217344 per layer
 *   attention: + attn_q 4096*576 = 2359296 + attn_k, attn_v 512*576 = 294912
 *     each + attn_output 1024*1152 = 1179648 + q/k norms 1024 each = 10332160
 *   globals: token_embd 248320*576 = 143032320 + output_norm 4096 = 143036416
 *   weights = 18*12217344 + 6*10332160 + 143036416 = 424941568
 *   f16 set = 2 * (n*k summed over the projections) = 995229696
 *   largest projection: attn_qkv 6144*1024 = 6291456 (dequant 25165824 bytes)
 *   KV(S) = 2 * 6 * S * 512 * 4: 100663296 at 4096, 3724541952 at 151552,
 *     6442450944 at 262144
 *   recurrent = 18 * 4 * (6144*3 + 16*128*128) = 20201472
 *   chunk row floats: 3H + 2*conv_dim + 4*Hv + 2*Hv*dv + 2q (q_full) + 3q
 *     (q, gate, attn_o) + kv + 3 ffn = 3072 + 12288 + 64 + 4096 + 4096 +
 *     6144 + 512 + 10752 = 41024; chunk = 512 * 41024 * 4 = 86114304
 *   scores, heads/kv = 4, ld = S rounded to 32, a row 16*ld bytes:
 *     4096: 512 rows * 65536 = 33554432 (one pass of all 512 rows)
 *     151552: a row 2424832, 512 rows 1241513984 > 1 GiB: the budget,
 *       1073741824, passes of 442 rows
 *     262144: a row 4194304: 1073741824, passes of 256 rows
 *   ids 4*S; tail al(1024*4) + al(248320*4) + al(8) (the decode position) = 4096 +
 *   993280 + 256 = 997632
 *   overhead 512 MiB = 536870912
 *   total at 4096 = 424941568 + 100663296 + 20201472 + (86114304 + 33554432 +
 *     25165824 + 16384 + 997632 = 143751424) + 536870912 = 1228525824
 *
 * 9B: H 4096, 32 layers (24/8), heads 16/4, ffn 12288, Hk 16, Hv 32, untied.
 *   conv_dim 8192; Hv*dv 4096; q 4096; kv 1024; rows of H cost 2304 bytes,
 *   of ffn 6912, of 4096 2304
 *   both kinds: 2*12288*2304 + 4096*6912 + 2*16384 = 84967424
 *   DeltaNet: + 8192*2304 + 4096*2304 + 2*32*2304 + 4096*2304 + 8192*4*4 +
 *     2*256 + 512 = 122995712
 *   attention: + 8192*2304 + 2*1024*2304 + 4096*2304 + 2*1024 = 117999616
 *   globals: 2 * 248320*2304 + 16384 = 1144274944
 *   weights = 24*122995712 + 8*117999616 + 1144274944 = 5040168960
 *   f16 set 13837008896; largest ffn 12288*4096 = 50331648 (dequant 201326592)
 *   KV(S) = 2*8*S*1024*4: 268435456, 9932111872, 17179869184
 *   recurrent = 24*4*(8192*3 + 32*128*128) = 52690944
 *   chunk row floats 97408: chunk 199491584; scores as 0.8B (heads/kv 4);
 *   tail 16384 + 993280 + 256 = 1009920
 *   total at 4096 = 6333565184; at 262144 = 24286218496 (23161.1 MiB), flash
 *   (no scores, an f16 KV cache: 8589934592, half the f32 path's) 14622542080
 *   (13945.1 MiB); at chunk rows 256 the chunk is 99745792: flash 14522796288
 *   (13849.9 MiB); at 128 the chunk is 49872896 and the scores 128 rows *
 *   4194304 = 536870912: f32 23599728896 (22506.5 MiB), flash 14472923392
 *   (13802.5 MiB); at 64 flash 14447986944 (13778.7 MiB)
 *   f16 GEMM at 4096: + f16 set 13837008896, no dequant, + f16 activations
 *   512*12288*2 = 12582912, + the tuned GEMM's cuBLASLt workspace 32 MiB =
 *   33554432: 20015384832 (19981830400 with it off)
 *   deterministic at 4096: no scores, no dequant: 6098684160
 *
 * 27B: H 5120, 64 layers (48/16), heads 24/4 (6 per KV head), ffn 17408, Hk
 * 16, Hv 48, untied.
 *   weights 15138099200; f16 set 48701112320; largest ffn 17408*5120 =
 *   89128960; KV(S) = 2*16*S*1024*4: 536870912, 19864223744, 34359738368;
 *   recurrent 48*4*(10240*3 + 48*16384) = 156893184; chunk row floats
 *   134336: chunk 275120128; scores at 4096: 512 * 4*6*4096 = 50331648,
 *   then the budget (passes of 295 and 170 rows); tail 20480 + 993280 + 256
 *   total at 262144 = 51899042048 (49494.8 MiB), flash (f16 KV 17179869184)
 *   33645431040 (32086.8 MiB)
 * 0.8B flash at 262144: the f32 path's 8611533056 less the scores 1073741824
 * and half the KV 3221225472: 4316565760
 *
 * The KV term counts q35_kv_value_bytes: 4 bytes a value on f32 attention and
 * when deterministic, 2 on the flash path (its f16 cache); the figures above
 * are the f32 path's unless they say flash. */
#include "parity/lib/harness.h"

#include "model/capacity.h"
#include "model/shapes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MIB Q35_MIB

typedef struct hand {
    const char *shape;
    int64_t seq;
    uint64_t weights, f16, kv, recurrent, chunk, scores, dequant, total;
    int64_t pass_rows;
} hand;

static const hand k_hand[] = {
    {"0.8b", 4096, 424941568, 995229696, 100663296, 20201472, 86114304, 33554432, 25165824, 1228525824, 512},
    {"0.8b", 151552, 424941568, 995229696, 3724541952, 20201472, 86114304, 1073741824, 25165824, 5893181696, 442},
    {"0.8b", 262144, 424941568, 995229696, 6442450944, 20201472, 86114304, 1073741824, 25165824, 8611533056, 256},
    {"9b", 4096, 5040168960, 13837008896, 268435456, 52690944, 199491584, 33554432, 201326592, 6333565184, 512},
    {"9b", 151552, 5040168960, 13837008896, 9932111872, 52690944, 199491584, 1073741824, 201326592, 17038018816,
     442},
    {"9b", 262144, 5040168960, 13837008896, 17179869184, 52690944, 199491584, 1073741824, 201326592, 24286218496,
     256},
    {"27b", 4096, 15138099200, 48701112320, 536870912, 156893184, 275120128, 50331648, 356515840, 17051732224, 512},
    {"27b", 151552, 15138099200, 48701112320, 19864223744, 156893184, 275120128, 1073741824, 356515840,
     37403085056, 295},
    {"27b", 262144, 15138099200, 48701112320, 34359738368, 156893184, 275120128, 1073741824, 356515840,
     51899042048, 170},
};

static const q35_attn_path k_both[] = {Q35_ATTN_F32, Q35_ATTN_FLASH};
static const int64_t k_rows[] = {512, 256, 128, 64};

static q35_capacity_request request(const q35_hparams *hp, bool tied, int64_t seq, uint64_t free_bytes)
{
    q35_capacity_request r = {
        .hp = hp, .weights = q35_capacity_weights_of_shape(hp, Q35_TYPE_Q4_K, tied), .seq = seq,
        .gemm = Q35_GEMM_F32, .scores_budget = (size_t)1 << 30, .free_bytes = free_bytes, .attention = k_both,
        .n_attention = 2, .chunk_rows = k_rows, .n_chunk_rows = 4,
    };
    return r;
}

/* The 9B's request at 4096 positions on a device of unbounded memory (GEMM
 * f32, f32 and flash candidates); hp filled with its hyperparameters. */
static q35_capacity_request request_9b_4096(q35_hparams *hp)
{
    const q35_shape *shape = q35_shape_find("9b");
    q35_shape_hparams(shape, hp);
    return request(hp, shape->tied, 4096, UINT64_MAX);
}

static void check_terms(q35_suite *s, const hand *h)
{
    const q35_shape *shape = q35_shape_find(h->shape);
    q35_hparams hp;
    q35_shape_hparams(shape, &hp);
    const q35_capacity_request r = request(&hp, shape->tied, h->seq, UINT64_MAX);
    q35_workspace ws;
    const q35_capacity_terms t = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws);
    const bool ok = t.weights == h->weights && r.weights.f16 == h->f16 && t.kv == h->kv &&
                    t.recurrent == h->recurrent && ws.chunk == h->chunk && ws.scores == h->scores &&
                    ws.dequant == h->dequant && ws.pass_rows == h->pass_rows && t.overhead == 512 * MIB &&
                    t.total == h->total;
    q35_case(s, ok,
             "%-4s at %6" PRId64 ": weights %" PRIu64 " (hand %" PRIu64 "), f16 %" PRIu64 " (%" PRIu64 "), KV %" PRIu64
             " (%" PRIu64 "), recurrent %" PRIu64 " (%" PRIu64 "), chunk %" PRIu64 " (%" PRIu64 "), scores %" PRIu64
             " (%" PRIu64 ", passes of %" PRId64 " rows, hand %" PRId64 "), dequant %" PRIu64 " (%" PRIu64
             "), total %" PRIu64 " (%" PRIu64 ")",
             h->shape, h->seq, t.weights, h->weights, r.weights.f16, h->f16, t.kv, h->kv, t.recurrent, h->recurrent,
             ws.chunk, h->chunk, ws.scores, h->scores, ws.pass_rows, h->pass_rows, ws.dequant, h->dequant, t.total,
             h->total);
}

/* The plan's pick on a device with free_mib MiB free; want_attention DEFAULT = a refusal. */
static void check_pick(q35_suite *s, const char *shape_name, int64_t seq, uint64_t free_mib, q35_gemm_path gemm,
                       bool deterministic, q35_attn_path want_attention, int64_t want_rows, uint64_t want_total)
{
    const q35_shape *shape = q35_shape_find(shape_name);
    q35_hparams hp;
    q35_shape_hparams(shape, &hp);
    q35_capacity_request r = request(&hp, shape->tied, seq, free_mib * MIB);
    r.gemm = gemm;
    r.deterministic = deterministic;
    q35_capacity_plan p;
    q35_error err = {{0}};
    const int rc = q35_capacity_plan_make(&p, &r, &err);
    char line[512];
    if (want_attention == Q35_ATTN_DEFAULT) {
        /* the refusal names each term in MiB and the free memory */
        const bool named = strstr(err.msg, "weights ") && strstr(err.msg, "KV ") && strstr(err.msg, "recurrent ") &&
                           strstr(err.msg, "workspace ") && strstr(err.msg, "overhead 512.0") &&
                           strstr(err.msg, "MiB free") && strstr(err.msg, "flash/64");
        q35_case(s, rc == -1 && !p.fits && named, "%-4s at %6" PRId64 " on %6" PRIu64 " MiB free: refused: %s",
                 shape_name, seq, free_mib, err.msg);
        return;
    }
    q35_case(s, rc == 0 && p.fits && p.attention == want_attention && p.chunk_rows == want_rows &&
                    p.terms.total == want_total,
             "%-4s at %6" PRId64 " on %6" PRIu64 " MiB free, GEMM %s%s: %s/%" PRId64 " (want %s/%" PRId64
             ", total %" PRIu64 "): %s",
             shape_name, seq, free_mib, q35_gemm_path_name(gemm), deterministic ? ", deterministic" : "",
             q35_attn_path_name(p.attention), p.chunk_rows, q35_attn_path_name(want_attention), want_rows, want_total,
             q35_capacity_str(&p, line, sizeof line));
}

/* The chunked delta rule's workspace (kernels/delta_chunk.h) for the 9B heads
 * (Hk 16, Hv 32, dk = dv = 128), by hand: per 64-row chunk W and U 64*32*128*2
 * bytes each, P 64*32*64*2, G 64*32*4, Q and K 64*16*128*2 each; 2048 rows are
 * 32 chunks: 2*524288 + 3*262144 + 8192 = 1843200 a chunk, 58982400 in all; a
 * 100-position request rounds its 100 rows up to 2 chunks: 3686400. Only on
 * DELTA CHUNKED, never when deterministic. */
static void check_delta_workspace(q35_suite *s)
{
    const q35_shape *shape = q35_shape_find("9b");
    q35_hparams hp;
    q35_shape_hparams(shape, &hp);
    const q35_weight_bytes w = q35_capacity_weights_of_shape(&hp, Q35_TYPE_Q4_K, shape->tied);
    const q35_workspace chunked = q35_workspace_of(&hp, &w, 2048, 4096, Q35_ATTN_FLASH, Q35_GEMM_F16,
                                                   Q35_DELTA_CHUNKED, false, (size_t)1 << 30);
    const q35_workspace short_seq = q35_workspace_of(&hp, &w, 2048, 100, Q35_ATTN_FLASH, Q35_GEMM_F16,
                                                     Q35_DELTA_CHUNKED, false, (size_t)1 << 30);
    const q35_workspace scan = q35_workspace_of(&hp, &w, 2048, 4096, Q35_ATTN_FLASH, Q35_GEMM_F16, Q35_DELTA_SCAN,
                                                false, (size_t)1 << 30);
    const q35_workspace det = q35_workspace_of(&hp, &w, 2048, 4096, Q35_ATTN_FLASH, Q35_GEMM_F16, Q35_DELTA_CHUNKED,
                                               true, (size_t)1 << 30);
    q35_case(s, chunked.delta == 58982400 && short_seq.delta == 3686400 && scan.delta == 0 && det.delta == 0 &&
                    chunked.total == scan.total + chunked.delta,
             "9b delta workspace: chunked 2048 rows %" PRIu64 " (hand 58982400), 100 rows %" PRIu64
             " (hand 3686400), scan %" PRIu64 ", deterministic %" PRIu64 ", counted in the total",
             chunked.delta, short_seq.delta, scan.delta, det.delta);
}

/* The KV term by path: 4 bytes a value on f32 attention, 2 on flash (its f16
 * cache), 4 on flash when deterministic (decode attention over an f32 cache).
 * 9B at 4096: 2*8*4096*1024 values = 134217728 bytes at 2, 268435456 at 4. */
static void check_kv_bytes(q35_suite *s)
{
    q35_hparams hp;
    q35_capacity_request r = request_9b_4096(&hp);
    q35_workspace ws;
    const uint64_t f32 = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws).kv;
    const uint64_t flash = q35_capacity_terms_of(&r, Q35_ATTN_FLASH, 512, &ws).kv;
    r.deterministic = true;
    const uint64_t det = q35_capacity_terms_of(&r, Q35_ATTN_FLASH, 512, &ws).kv;
    q35_case(s, f32 == 268435456 && flash == 134217728 && det == 268435456 &&
                    q35_kv_value_bytes(Q35_ATTN_FLASH, false) == 2 && q35_kv_value_bytes(Q35_ATTN_F32, false) == 4 &&
                    q35_kv_value_bytes(Q35_ATTN_FLASH, true) == 4,
             "9b KV at 4096: f32 attention %" PRIu64 " (hand 268435456), flash %" PRIu64
             " (134217728: f16), flash deterministic %" PRIu64 " (268435456: f32)",
             f32, flash, det);
}

/* The cuBLASLt workspace (Q35_LT_WORKSPACE_BYTES, 32 MiB = 33554432): on GEMM
 * F16 (the tuned GEMM's context) unless gemm_lt_off, on GEMM FP8 (the FP8
 * GEMM's), never on F32 or when deterministic; counted in the total. 9B at
 * 4096, 512 rows: F16 20015384832, 19981830400 with gemm_lt_off. */
static void check_lt_workspace(q35_suite *s)
{
    q35_hparams hp;
    q35_capacity_request r = request_9b_4096(&hp);
    q35_workspace ws;
    r.gemm = Q35_GEMM_F16;
    const q35_capacity_terms f16 = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws);
    r.gemm_lt_off = true;
    const q35_capacity_terms off = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws);
    r.gemm_lt_off = false;
    r.gemm = Q35_GEMM_FP8;
    const uint64_t fp8 = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws).lt_workspace;
    r.gemm = Q35_GEMM_F32;
    const uint64_t f32 = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws).lt_workspace;
    r.gemm = Q35_GEMM_F16;
    r.deterministic = true;
    const uint64_t det = q35_capacity_terms_of(&r, Q35_ATTN_F32, 512, &ws).lt_workspace;
    q35_case(s, f16.lt_workspace == 33554432 && f16.total == 20015384832 && off.lt_workspace == 0 &&
                    off.total == 19981830400 && fp8 == 33554432 && f32 == 0 && det == 0,
             "9b cuBLASLt workspace at 4096: f16 %" PRIu64 " (hand 33554432, total %" PRIu64 ", hand 20015384832), "
             "f16 with it off %" PRIu64 " (total %" PRIu64 ", hand 19981830400), fp8 %" PRIu64 ", f32 %" PRIu64
             ", deterministic %" PRIu64,
             f16.lt_workspace, f16.total, off.lt_workspace, off.total, fp8, f32, det);
}

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "capacity plan: hand-computed figures, first fit, refusals", 0);
    for (size_t i = 0; i < sizeof k_hand / sizeof k_hand[0]; i++)
        check_terms(&s, &k_hand[i]);
    check_delta_workspace(&s);
    check_kv_bytes(&s);
    check_lt_workspace(&s);

    /* an H200 (about 140 GiB free): everything fits on f32 attention at 512 rows */
    check_pick(&s, "27b", 262144, 140 * 1024, Q35_GEMM_F32, false, Q35_ATTN_F32, 512, 51899042048);
    check_pick(&s, "9b", 262144, 140 * 1024, Q35_GEMM_F32, false, Q35_ATTN_F32, 512, 24286218496);
    /* past the f32 scores, flash at the same chunk rows (its f16 KV: half the f32 path's) */
    check_pick(&s, "27b", 262144, 48 * 1024, Q35_GEMM_F32, false, Q35_ATTN_FLASH, 512, 33645431040);
    check_pick(&s, "9b", 262144, 22600, Q35_GEMM_F32, false, Q35_ATTN_FLASH, 512, 14622542080);
    check_pick(&s, "0.8b", 262144, 8 * 1024, Q35_GEMM_F32, false, Q35_ATTN_FLASH, 512, 4316565760);
    /* past flash at 512 and 256 rows: flash at 128 (f32 at 128 needs 22506.5 MiB) */
    check_pick(&s, "9b", 262144, 13805, Q35_GEMM_F32, false, Q35_ATTN_FLASH, 128, 14472923392);
    /* the f16 set and the deterministic mode */
    check_pick(&s, "9b", 4096, 24 * 1024, Q35_GEMM_F16, false, Q35_ATTN_F32, 512, 20015384832);
    check_pick(&s, "9b", 4096, 8 * 1024, Q35_GEMM_F32, true, Q35_ATTN_F32, 512, 6098684160);
    /* nothing fits: every candidate's total, the last one's terms */
    check_pick(&s, "9b", 262144, 12 * 1024, Q35_GEMM_F32, false, Q35_ATTN_DEFAULT, 0, 0);
    check_pick(&s, "27b", 4096, 15 * 1024, Q35_GEMM_F32, false, Q35_ATTN_DEFAULT, 0, 0);
    return q35_suite_end(&s);
}
