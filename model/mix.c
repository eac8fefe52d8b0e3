#include "mix.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The tensor categories llama-quantize's rules tell apart on a qwen35 model (its
 * tensor_get_category; attn_qkv, the DeltaNet's fused input projection, is
 * attention-v-like as attn_v is). Every other weight (attn_q, attn_k, attn_gate,
 * ffn_gate, ffn_up, ssm_alpha, ssm_beta, ssm_out, nextn.eh_proj) keeps the
 * ftype's default type: none of the ftypes here has a rule for it. */
typedef enum category { CAT_NONE, CAT_OTHER, CAT_OUTPUT, CAT_TOKEN_EMBD, CAT_ATTN_V, CAT_ATTN_OUTPUT, CAT_FFN_DOWN } category;

/* When a bump applies, by the tensor's block i (llama counts the attention-v-like
 * weights and the ffn_downs in its name order, blocks by number: one of each a
 * block, so the count is the block) of n blocks. */
typedef enum when {
    W_ALL,
    W_GQA4,      /* n_head / n_head_kv >= 4 */
    W_FIRST,     /* i < the bump's n */
    W_EIGHTH,    /* i < n/8 */
    W_SIXTEENTH, /* i < n/16 */
    W_MORE_BITS, /* use_more_bits: the first and last eighth and every third between */
} when;

typedef struct bump {
    category cat; /* CAT_NONE ends the list */
    when when;
    int n;
    q35_type type;
} bump;

typedef struct mix_row {
    const char *name;
    uint32_t ftype; /* llama_ftype (llama.h) */
    q35_type base;  /* the ftype's default type */
    bool pure;      /* no per-tensor rules: the default type throughout (row-length fallbacks aside) */
    bump bumps[5];  /* the first whose category and condition hold wins */
} mix_row;

#define V CAT_ATTN_V
#define DOWN CAT_FFN_DOWN
#define AOUT CAT_ATTN_OUTPUT

/* llama-quantize's named ftypes on a dense qwen35 model (llama_tensor_get_type_impl
 * at 0c1e570: its arms for Falcon, 70B, 8-expert models and an imatrix never
 * apply), then the one-type mixes (llama-quantize --pure). Every quantized
 * ftype also gives the output (a tied token_embd too) Q6_K, or Q8_0 where the
 * default type is Q8_0 or its blocks do not fit the row (mix_type). F32, F16
 * and BF16 have no rules: llama.cpp applies them to quantized types only. */
static const mix_row k_rows[] = {
    {"f32", 0, Q35_TYPE_F32, true, {{0}}},
    {"f16", 1, Q35_TYPE_F16, true, {{0}}},
    {"bf16", 32, Q35_TYPE_BF16, true, {{0}}},
    {"q4_0", 2, Q35_TYPE_Q4_0, false, {{0}}},
    {"q4_1", 3, Q35_TYPE_Q4_1, false, {{0}}},
    {"q5_0", 8, Q35_TYPE_Q5_0, false, {{0}}},
    {"q5_1", 9, Q35_TYPE_Q5_1, false, {{0}}},
    {"q8_0", 7, Q35_TYPE_Q8_0, false, {{0}}},
    {"q2_k", 10, Q35_TYPE_Q2_K, false,
     {{V, W_GQA4, 0, Q35_TYPE_Q4_K}, {V, W_ALL, 0, Q35_TYPE_Q3_K}, {DOWN, W_ALL, 0, Q35_TYPE_Q3_K},
      {AOUT, W_ALL, 0, Q35_TYPE_Q3_K}}},
    {"q2_k_s", 21, Q35_TYPE_Q2_K, false, {{V, W_GQA4, 0, Q35_TYPE_Q4_K}, {DOWN, W_EIGHTH, 0, Q35_TYPE_Q4_K}}},
    {"q3_k_s", 11, Q35_TYPE_Q3_K, false, {{0}}},
    {"q3_k_m", 12, Q35_TYPE_Q3_K, false,
     {{V, W_FIRST, 2, Q35_TYPE_Q5_K}, {V, W_ALL, 0, Q35_TYPE_Q4_K}, {DOWN, W_SIXTEENTH, 0, Q35_TYPE_Q5_K},
      {DOWN, W_ALL, 0, Q35_TYPE_Q4_K}, {AOUT, W_ALL, 0, Q35_TYPE_Q4_K}}},
    {"q3_k_l", 13, Q35_TYPE_Q3_K, false,
     {{V, W_ALL, 0, Q35_TYPE_Q5_K}, {DOWN, W_ALL, 0, Q35_TYPE_Q5_K}, {AOUT, W_ALL, 0, Q35_TYPE_Q5_K}}},
    {"q4_k_s", 14, Q35_TYPE_Q4_K, false, {{V, W_FIRST, 4, Q35_TYPE_Q5_K}, {DOWN, W_EIGHTH, 0, Q35_TYPE_Q5_K}}},
    {"q4_k_m", 15, Q35_TYPE_Q4_K, false, {{V, W_MORE_BITS, 0, Q35_TYPE_Q6_K}, {DOWN, W_MORE_BITS, 0, Q35_TYPE_Q6_K}}},
    {"q5_k_s", 16, Q35_TYPE_Q5_K, false, {{0}}},
    {"q5_k_m", 17, Q35_TYPE_Q5_K, false, {{V, W_MORE_BITS, 0, Q35_TYPE_Q6_K}, {DOWN, W_MORE_BITS, 0, Q35_TYPE_Q6_K}}},
    {"q6_k", 18, Q35_TYPE_Q6_K, false, {{0}}},
    {"iq4_nl", 25, Q35_TYPE_IQ4_NL, false, {{V, W_GQA4, 0, Q35_TYPE_Q5_K}, {DOWN, W_EIGHTH, 0, Q35_TYPE_Q5_K}}},
    {"iq4_xs", 30, Q35_TYPE_IQ4_XS, false, {{V, W_GQA4, 0, Q35_TYPE_Q5_K}, {DOWN, W_EIGHTH, 0, Q35_TYPE_Q5_K}}},
    {"iq3_s", 26, Q35_TYPE_IQ3_S, false, {{V, W_GQA4, 0, Q35_TYPE_Q4_K}}},
    {"iq3_m", 27, Q35_TYPE_IQ3_S, false,
     {{V, W_ALL, 0, Q35_TYPE_Q4_K}, {DOWN, W_EIGHTH, 0, Q35_TYPE_Q4_K}, {AOUT, W_ALL, 0, Q35_TYPE_Q4_K}}},
    {"pure-q4_0", 2, Q35_TYPE_Q4_0, true, {{0}}},
    {"pure-q4_1", 3, Q35_TYPE_Q4_1, true, {{0}}},
    {"pure-q5_0", 8, Q35_TYPE_Q5_0, true, {{0}}},
    {"pure-q5_1", 9, Q35_TYPE_Q5_1, true, {{0}}},
    {"pure-q8_0", 7, Q35_TYPE_Q8_0, true, {{0}}},
    {"pure-q2_k", 10, Q35_TYPE_Q2_K, true, {{0}}},
    {"pure-q3_k", 11, Q35_TYPE_Q3_K, true, {{0}}},
    {"pure-q4_k", 14, Q35_TYPE_Q4_K, true, {{0}}},
    {"pure-q5_k", 16, Q35_TYPE_Q5_K, true, {{0}}},
    {"pure-q6_k", 18, Q35_TYPE_Q6_K, true, {{0}}},
    {"pure-iq4_nl", 25, Q35_TYPE_IQ4_NL, true, {{0}}},
    {"pure-iq4_xs", 30, Q35_TYPE_IQ4_XS, true, {{0}}},
    {"pure-iq2_xxs", 19, Q35_TYPE_IQ2_XXS, true, {{0}}},
    {"pure-iq2_xs", 20, Q35_TYPE_IQ2_XS, true, {{0}}},
    {"pure-iq2_s", 29, Q35_TYPE_IQ2_S, true, {{0}}}, /* llama's IQ2_M --pure: its IQ2_S ftype is IQ2_XS */
    {"pure-iq3_xxs", 23, Q35_TYPE_IQ3_XXS, true, {{0}}},
    {"pure-iq3_s", 26, Q35_TYPE_IQ3_S, true, {{0}}},
    {"pure-iq1_s", 24, Q35_TYPE_IQ1_S, true, {{0}}},
    {"pure-iq1_m", 31, Q35_TYPE_IQ1_M, true, {{0}}},
};

#undef V
#undef DOWN
#undef AOUT

#define N_ROWS (sizeof k_rows / sizeof k_rows[0])

/* The one-type k-quant mixes' names from before the named ftypes, kept for the
 * benchmarks and results keyed on them (bench/, "quant:q4_k"): the one place a
 * name means other than in llama-quantize, whose Q3_K, Q4_K and Q5_K are its
 * _M mixes (cli/README.md). */
static const char *const k_aliases[][2] = {{"q3_k", "pure-q3_k"}, {"q4_k", "pure-q4_k"}, {"q5_k", "pure-q5_k"}};

static const mix_row *find_row(const char *mix)
{
    for (size_t i = 0; i < sizeof k_aliases / sizeof k_aliases[0]; i++)
        if (strcasecmp(mix, k_aliases[i][0]) == 0)
            mix = k_aliases[i][1];
    for (size_t i = 0; i < N_ROWS; i++)
        if (strcasecmp(mix, k_rows[i].name) == 0)
            return &k_rows[i];
    return NULL;
}

char *q35_mix_names(char *buf, size_t cap)
{
    size_t used = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < N_ROWS && used + 1 < cap; i++) {
        const int n = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", k_rows[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

int q35_mix_check(const char *mix, q35_error *err)
{
    if (find_row(mix))
        return 0;
    char names[512];
    return q35_fail(err, "generator: unknown quant mix '%s' (one of %s; q3_k, q4_k, q5_k: "
                    "pure-q3_k, pure-q4_k, pure-q5_k)", mix, q35_mix_names(names, sizeof names));
}

uint32_t q35_mix_file_type(const char *mix)
{
    const mix_row *r = find_row(mix);
    return r ? r->ftype : 1024;
}

static category category_of(const char *kind, bool tied)
{
    if (strcmp(kind, "output.weight") == 0)
        return CAT_OUTPUT;
    if (strcmp(kind, "token_embd.weight") == 0)
        return tied ? CAT_OUTPUT : CAT_TOKEN_EMBD;
    if (strstr(kind, "attn_qkv.weight") || strstr(kind, "attn_v.weight"))
        return CAT_ATTN_V;
    if (strstr(kind, "attn_output.weight"))
        return CAT_ATTN_OUTPUT;
    if (strstr(kind, "ffn_down"))
        return CAT_FFN_DOWN;
    return CAT_OTHER;
}

static bool holds(const bump *b, int i, const q35_mix_model *m)
{
    const int n = m->n_block;
    switch (b->when) {
    case W_ALL: return true;
    case W_GQA4: return m->n_gqa >= 4;
    case W_FIRST: return i < b->n;
    case W_EIGHTH: return i < n / 8;
    case W_SIXTEENTH: return i < n / 16;
    case W_MORE_BITS: return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
    }
    return false;
}

/* A type whose blocks fit a row of ne0, as llama-quantize's tensor_type_fallback
 * picks it: a 256-block type falls back to a 32-block one (the i-quants to
 * IQ4_NL, Q2_K and Q3_K to Q4_0, Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0), and
 * what still does not fit to F16. */
static q35_type fit_row(q35_type t, int64_t ne0)
{
    if (q35_row_bytes(t, ne0) != 0)
        return t;
    q35_type fb = t;
    switch (t) {
    case Q35_TYPE_Q2_K:
    case Q35_TYPE_Q3_K: fb = Q35_TYPE_Q4_0; break;
    case Q35_TYPE_Q4_K: fb = Q35_TYPE_Q5_0; break;
    case Q35_TYPE_Q5_K: fb = Q35_TYPE_Q5_1; break;
    case Q35_TYPE_Q6_K: fb = Q35_TYPE_Q8_0; break;
    case Q35_TYPE_IQ1_S:
    case Q35_TYPE_IQ1_M:
    case Q35_TYPE_IQ2_XXS:
    case Q35_TYPE_IQ2_XS:
    case Q35_TYPE_IQ2_S:
    case Q35_TYPE_IQ3_XXS:
    case Q35_TYPE_IQ3_S:
    case Q35_TYPE_IQ4_XS: fb = Q35_TYPE_IQ4_NL; break;
    default: break;
    }
    return q35_row_bytes(fb, ne0) != 0 ? fb : Q35_TYPE_F16;
}

q35_type q35_mix_type(const char *mix, const char *kind, int layer, const q35_mix_model *m, int64_t ne0)
{
    const mix_row *r = find_row(mix);
    if (!r)
        return Q35_TYPE_F16;
    q35_type t = r->base;
    const category c = r->pure ? CAT_OTHER : category_of(kind, m->tied);
    if (c == CAT_OUTPUT) {
        const q35_type_info *ti = q35_type_get(r->base);
        t = r->base == Q35_TYPE_Q8_0 || !ti || ne0 % ti->block_elems != 0 ? Q35_TYPE_Q8_0 : Q35_TYPE_Q6_K;
    } else {
        for (const bump *b = r->bumps; b < r->bumps + 5 && b->cat != CAT_NONE; b++)
            if (b->cat == c && layer >= 0 && holds(b, layer, m)) {
                t = b->type;
                break;
            }
    }
    return fit_row(t, ne0);
}
