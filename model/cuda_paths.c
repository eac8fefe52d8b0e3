/* The load's path helpers that need the device's kernels (model/paths.h holds
 * the choices themselves, pure C): the kernels' variants looked up by name in
 * their registries, what the DeltaNet heads allow, and the paths in words.
 * cuda_model.c and cuda_layers.c call these; they call neither. */
#include "cuda_internal.h"

#include "kernels/attention_flash.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_prep.h"
#include "kernels/delta_rule.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv_q8.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- the kernels' variants (q35_paths_variant looks the names up) ---- */

q35_delta_dims q35_model_delta_dims(const q35_hparams *hp)
{
    return (q35_delta_dims){.hk = hp->ssm_hk, .hv = hp->ssm_hv, .dk = hp->ssm_dk, .dv = hp->ssm_dv};
}

/* A flash variant runs where flash runs and its shared memory fits (where flash
 * does not run at all, the attention path says so, not the variant). */
int q35_model_flash_runs(int variant, const void *ctx, q35_error *why)
{
    const q35_cuda_model *cm = ctx;
    return !cm->info.flash_supported || q35_attention_flash_supported(cm->info.device, cm->attn, variant, why) == 1;
}

/* A scan variant runs where dv is a multiple of its rows a block. */
int q35_model_delta_rule_runs(int variant, const void *ctx, q35_error *why)
{
    const q35_cuda_model *cm = ctx;
    const int rows = q35_delta_rule_variant_rows(variant);
    if (rows > 0 && cm->hp.ssm_dv % rows == 0)
        return 1;
    q35_fail(why, "dv %d is not a multiple of its %d rows a block", cm->hp.ssm_dv, rows);
    return 0;
}

/* The variants of the ops with variants: the options' or the environment's names
 * where they run here, else each op's default. A flash variant is one of the
 * chosen flash kernel's: sm90's registry where paths.flash_sm90, else the mma
 * kernel's; the other kernel keeps its default. -1 when an option names a
 * variant its registry does not have. */
int q35_model_pick_variants(q35_cuda_model *cm, const q35_path_choice *c, q35_error *err)
{
    q35_cuda_info *in = &cm->info;
    const q35_path_variants flash = {"flash (mma)", q35_attention_flash_variant_find, q35_attention_flash_variant_name,
                                     q35_attention_flash_variant_default(in->device, cm->attn), q35_model_flash_runs, cm};
    const q35_path_variants flash90 = {"flash (sm90)", q35_attention_flash_sm90_variant_find,
                                       q35_attention_flash_sm90_variant_name,
                                       q35_attention_flash_sm90_variant_default(), NULL, NULL};
    const q35_path_variants scan = {"delta rule", q35_delta_rule_variant_find, q35_delta_rule_variant_name,
                                    q35_delta_rule_variant_default(q35_model_delta_dims(&cm->hp)), q35_model_delta_rule_runs, cm};
    const q35_path_variants chunk = {"delta chunk", q35_delta_chunk_variant_find, q35_delta_chunk_variant_name,
                                     q35_delta_chunk_variant_default(), NULL, NULL};
    const q35_path_variants gemm90 = {"gemm_sm90", q35_gemm_sm90_variant_find, q35_gemm_sm90_variant_name,
                                      q35_gemm_sm90_variant_default(), NULL, NULL};
    const q35_path_variants gemv_q8 = {"gemv_q8", q35_gemv_q8_variant_find, q35_gemv_q8_variant_name,
                                       q35_gemv_q8_variant_default(), NULL, NULL};
    const q35_path_name none = {NULL, NULL, NULL};
    const bool sm90 = cm->paths.flash_sm90;
    q35_cuda_paths *p = &cm->paths;
    char *log = in->log;
    const size_t cap = sizeof in->log;
    const bool quiet = cm->opts.quiet;
    p->flash_variant = q35_paths_variant(sm90 ? &none : &c->flash_variant, &flash, log, cap, quiet, err);
    p->flash_sm90_variant = q35_paths_variant(sm90 ? &c->flash_variant : &none, &flash90, log, cap, quiet, err);
    p->delta_rule_variant = q35_paths_variant(&c->delta_rule_variant, &scan, log, cap, quiet, err);
    p->delta_chunk_variant = q35_paths_variant(&c->delta_chunk_variant, &chunk, log, cap, quiet, err);
    p->gemm_sm90_variant = q35_paths_variant(&c->gemm_sm90_variant, &gemm90, log, cap, quiet, err);
    p->gemv_q8_variant = q35_paths_variant(&c->gemv_q8_variant, &gemv_q8, log, cap, quiet, err);
    if (p->flash_variant < 0 || p->flash_sm90_variant < 0 || p->delta_rule_variant < 0 || p->delta_chunk_variant < 0 ||
        p->gemm_sm90_variant < 0 || p->gemv_q8_variant < 0)
        return q35_fail_context(err, "cuda model");
    return 0;
}

q35_delta_prep_dims q35_model_delta_prep_dims(const q35_hparams *hp)
{
    return (q35_delta_prep_dims){.conv_dim = hp->conv_dim, .K = hp->conv_kernel, .hk = hp->ssm_hk, .dk = hp->ssm_dk,
                                 .hv = hp->ssm_hv};
}

bool q35_model_delta_prep_fits(const q35_hparams *hp)
{
    return q35_delta_prep_fits(q35_model_delta_prep_dims(hp));
}

/* Whether paths p pass q and k in f16 to the chunked rule where the heads
 * allow (q35_cuda_model_delta_qk16): asked for where it applies, the rule's
 * variant of tb4's formulation. */
static bool paths_delta_qk16(const q35_cuda_paths *p)
{
    return q35_paths_delta_qk16(p) && q35_delta_chunk_variant_takes_qk16(p->delta_chunk_variant);
}

bool q35_cuda_model_delta_qk16(const q35_cuda_model *cm)
{
    return paths_delta_qk16(&cm->paths) && q35_model_delta_prep_fits(&cm->hp);
}

const char *q35_cuda_paths_str(const q35_cuda_paths *p, char *buf, size_t cap)
{
    if (p->deterministic)
        snprintf(buf, cap, "deterministic (q35_gemv_rows, q35_attention_decode_rows), chunk rows %" PRId64,
                 p->chunk_rows);
    else
        snprintf(buf, cap, "attention %s%s, GEMM %s, delta %s%s, chunk rows %" PRId64,
                 p->attention != Q35_ATTN_FLASH ? "f32 (cuBLAS)"
                 : p->flash_sm90                ? "flash (f16 cache, f32 accumulation), sm_90a wgmma, variant "
                                                : "flash (f16 inputs, f32 accumulation), variant ",
                 p->attention != Q35_ATTN_FLASH ? ""
                 : p->flash_sm90 ? q35_attention_flash_sm90_variant_name(p->flash_sm90_variant)
                                 : q35_attention_flash_variant_name(p->flash_variant),
                 p->gemm == Q35_GEMM_F16   ? (p->gemm_lt_off ? "f16 (f32 accumulation)"
                                                             : "f16 (f32 accumulation, cuBLASLt tuned)")
                 : p->gemm == Q35_GEMM_FP8 ? "fp8 (e4m3, row scales, f32 accumulation)"
                                           : "f32 (dequant + SGEMM)",
                 p->delta == Q35_DELTA_CHUNKED ? "chunked (tensor cores), variant " : "scan, variant ",
                 p->delta == Q35_DELTA_CHUNKED ? q35_delta_chunk_variant_name(p->delta_chunk_variant)
                                               : q35_delta_rule_variant_name(p->delta_rule_variant),
                 p->chunk_rows);
    const size_t used = strlen(buf);
    const bool sm90 = q35_paths_gemm_swiglu(p) || q35_paths_gemm_sm90_proj(p);
    char split[96] = "";
    if (q35_paths_decode_split(p))
        snprintf(split, sizeof split, ", attention split over the cache from %d positions (decode-split)",
                 Q35_DECODE_SPLIT_MIN_SEQ);
    snprintf(buf + used, cap > used ? cap - used : 0, "%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s",
             paths_delta_qk16(p) ? ", q and k in f16 to the chunked rule" : "",
             q35_paths_flash_gate(p) ? ", out gate in the flash epilogue" : "",
             q35_paths_gemm_swiglu(p) ? ", SwiGLU in the sm_90a [gate | up] GEMM" : "",
             q35_paths_gemm_sm90_proj(p) ? ", projections through the sm_90a GEMM" : "",
             sm90 ? " (variant " : "", sm90 ? q35_gemm_sm90_variant_name(p->gemm_sm90_variant) : "", sm90 ? ")" : "",
             q35_paths_graphs(p) ? ", CUDA graphs (a layer each)" : "",
             q35_paths_prune(p) ? ", last layer pruned to the asked rows" : "",
             p->decode_graph ? "; decode: one CUDA graph a step" : "; decode: plain launches",
             q35_paths_decode_q8(p) ? ", 8-bit activations (decode-q8, gemv_q8 " : "",
             q35_paths_decode_q8(p) ? q35_gemv_q8_variant_name(p->gemv_q8_variant) : "",
             q35_paths_decode_q8(p) ? ")" : "",
             q35_paths_decode_pdl(p) ? " launched early (decode-pdl)" : "",
             q35_paths_decode_fuse(p) ? ", written by the norms (decode-fuse)" : "",
             q35_paths_decode_act_q8(p) ? ", the 8-bit x written by the ops before them (decode-act-q8)" : "",
             q35_paths_decode_overlap(p) ? ", each kernel launched once the one before has started (decode-overlap)" : "",
             split);
    return buf;
}

