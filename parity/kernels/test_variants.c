/* The kernel variant registries (kernels/variant.h), without a GPU: each op
 * with variants lists, in rank order, every variant where the experiments are
 * linked (test_variants) and only its production variants where they are not
 * (test_variants_production, linked as the model and the q35 command are);
 * names and indices agree both ways, nothing is listed past the count (the
 * sm_90a units' variants are all production ones, and the chunked delta
 * rule's tb4wtkh and tb4wm2kh, from q35_kernels_sm90, are listed by both: their
 * table is linked by name); each says which of its variants are production
 * ones, exactly those listed without the experiments; the defaults (the
 * chunked rule's by the device: tb4wm2kh exactly where it runs); the chunked
 * delta rule's families; the legend, its production variants marked. */
#include "parity/lib/harness.h"

#include "kernels/attention_decode.h"
#include "kernels/attention_flash.h"
#include "kernels/attention_flash_sm90.h"
#include "kernels/delta_chunk.h"
#include "kernels/delta_rule.h"
#include "kernels/gemm_sm90.h"
#include "kernels/gemv.h"
#include "kernels/gemv_q8.h"

#include <stdio.h>
#include <string.h>

/* An op's registry and the variants it must list, in rank order, with the
 * experiments and without them. */
typedef struct op_case {
    const char *op;
    int (*count)(void);
    const char *(*name)(int);
    int (*find)(const char *);
    int (*production)(int);
    const char *all;              /* "base kv64 async ..." */
    const char *production_names; /* "base kv64" */
} op_case;

static void check_op(q35_suite *s, const op_case *c)
{
    char listed[512] = "", production[512] = "";
    bool agree = c->name(c->count()) == NULL && c->name(-1) == NULL && c->find("no such variant") == -1 &&
                 c->find(NULL) == -1 && c->production(c->count()) == -1 && c->production(-1) == -1;
    for (int v = 0; v < c->count(); v++) {
        const char *n = c->name(v);
        const int p = c->production(v);
        agree = agree && n && c->find(n) == v && (p == 0 || p == 1);
        size_t at = strlen(listed);
        snprintf(listed + at, sizeof listed - at, "%s%s", v ? " " : "", n ? n : "(null)");
        at = strlen(production);
        if (p == 1)
            snprintf(production + at, sizeof production - at, "%s%s", at ? " " : "", n ? n : "(null)");
    }
    const char *want = Q35_KERNEL_EXPERIMENTS ? c->all : c->production_names;
    const bool ok = strcmp(listed, want) == 0 && strcmp(production, c->production_names) == 0;
    q35_case(s, agree && ok, "%-12s %d variants %s: %s; production: %s%s%s%s%s", c->op, c->count(),
             Q35_KERNEL_EXPERIMENTS ? "(experiments linked)" : "(production only)", listed, production,
             ok ? "" : " | want ", ok ? "" : want, ok ? "" : "; production: ", ok ? "" : c->production_names);
}

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, Q35_KERNEL_EXPERIMENTS ? "kernel variant registries, experiments linked"
                                               : "kernel variant registries, production only",
                    0);
    const op_case ops[] = {
        {"flash", q35_attention_flash_variant_count, q35_attention_flash_variant_name,
         q35_attention_flash_variant_find, q35_attention_flash_variant_production,
         "base kv64 async kv64_async pair_async dsplit16_async", "base kv64"},
        {"decode", q35_attention_decode_variant_count, q35_attention_decode_variant_name,
         q35_attention_decode_variant_find, q35_attention_decode_variant_production, "block cluster", "block cluster"},
        {"delta_rule", q35_delta_rule_variant_count, q35_delta_rule_variant_name, q35_delta_rule_variant_find,
         q35_delta_rule_variant_production, "rows1 rows2 lanes4 r2p r2pn r2pni r2w2pn l16r2pn l16r2w8pn l16w16pn",
         "r2pni l16r2pn"},
        {"delta_chunk", q35_delta_chunk_variant_count, q35_delta_chunk_variant_name, q35_delta_chunk_variant_find,
         q35_delta_chunk_variant_production,
         "w4 w8 s64w8 w4o4 tb4 tb4o4 tb4kh tb4w tb4wt tb4wtkh tb4wmkh tb4wm2kh tb4wpkh tb4wm2kho tb4wm2khf tb4wm2khq",
         "w4 tb4 tb4wtkh tb4wm2kh"},
        {"gemv", q35_gemv_variant_count, q35_gemv_variant_name, q35_gemv_variant_find, q35_gemv_variant_production,
         "registers staged", "registers staged"},
        {"gemv_q8", q35_gemv_q8_variant_count, q35_gemv_q8_variant_name, q35_gemv_q8_variant_find,
         q35_gemv_q8_variant_production, "registers persist rows2 unroll2 persist_narrow persist_u2 persist_prefetch persist_r0 persist_y",
         "registers persist"},
        {"flash_sm90", q35_attention_flash_sm90_variant_count, q35_attention_flash_sm90_variant_name,
         q35_attention_flash_sm90_variant_find, q35_attention_flash_sm90_variant_production,
         "serial pingpong fa3turn overlap persist", "serial pingpong fa3turn overlap persist"},
        {"gemm_sm90", q35_gemm_sm90_variant_count, q35_gemm_sm90_variant_name, q35_gemm_sm90_variant_find,
         q35_gemm_sm90_variant_production, "simple mcast persist mcast_persist pingpong persist_tail",
         "simple mcast persist mcast_persist pingpong persist_tail"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        check_op(&s, &ops[i]);

    /* the defaults that need no device: the scan's by dv */
    const q35_delta_dims dv128 = {16, 32, 128, 128}, dv16 = {2, 4, 128, 16};
    q35_case(&s,
             strcmp(q35_delta_rule_variant_name(q35_delta_rule_variant_default(dv128)), "r2pni") == 0 &&
                 strcmp(q35_delta_rule_variant_name(q35_delta_rule_variant_default(dv16)), "l16r2pn") == 0,
             "defaults: delta_rule r2pni at dv 128, l16r2pn at dv 16 (32 rows a block do not fit)");
    /* the chunked form's by the device: tb4wm2kh where it runs (sm_90, sm_90a code), tb4 elsewhere (no device) */
    q35_error why = {""};
    const bool wm2kh = q35_delta_chunk_variant_supported(q35_delta_chunk_variant_find("tb4wm2kh"), dv128, &why) == 0;
    const char *chunk_default = wm2kh ? "tb4wm2kh" : "tb4";
    q35_case(&s, strcmp(q35_delta_chunk_variant_name(q35_delta_chunk_variant_default()), chunk_default) == 0,
             "defaults: delta_chunk %s (got %s)%s%s", chunk_default,
             q35_delta_chunk_variant_name(q35_delta_chunk_variant_default()),
             wm2kh ? "" : ": tb4wm2kh does not run here: ", why.msg);
    q35_case(&s,
             strcmp(q35_gemv_variant_name(q35_gemv_variant_default(Q35_TYPE_Q4_K)), "staged") == 0 &&
                 strcmp(q35_gemv_variant_name(q35_gemv_variant_default(Q35_TYPE_Q8_0)), "registers") == 0,
             "defaults: gemv staged for q4_K, registers for q8_0");
    q35_case(&s,
             strcmp(q35_attention_flash_sm90_variant_name(q35_attention_flash_sm90_variant_default()), "overlap") == 0 &&
                 strcmp(q35_gemm_sm90_variant_name(q35_gemm_sm90_variant_default()), "persist_tail") == 0,
             "defaults: flash_sm90 overlap, gemm_sm90 persist_tail");
    q35_case(&s, strcmp(q35_gemv_q8_variant_name(q35_gemv_q8_variant_default()), "persist") == 0,
             "defaults: gemv_q8 persist");

    /* the chunked delta rule's families: which variants the suite holds to each other's bits */
    char fam[256] = "";
    bool fam_ok = q35_delta_chunk_variant_family(-1) == -1 &&
                  q35_delta_chunk_variant_family(q35_delta_chunk_variant_count()) == -1;
    for (int v = 0; v < q35_delta_chunk_variant_count(); v++) {
        const char *n = q35_delta_chunk_variant_name(v);
        const int f = q35_delta_chunk_variant_family(v);
        fam_ok = fam_ok && f == (strncmp(n, "tb4w", 4) == 0 ? 2 : strncmp(n, "tb", 2) == 0 ? 1 : 0);
        const size_t at = strlen(fam);
        snprintf(fam + at, sizeof fam - at, "%s%s %d", v ? ", " : "", n, f);
    }
    q35_case(&s, fam_ok, "delta_chunk families (w4's formulation 0, T beta's 1, its wgmma form 2; -1 past the ends): %s", fam);

    /* the legend benchmarks and logs print */
    char legend[512];
    q35_variant_list(q35_delta_chunk_variant_count, q35_delta_chunk_variant_name, q35_delta_chunk_variant_production,
                     q35_delta_chunk_variant_default(), legend, sizeof legend);
    const char *want = Q35_KERNEL_EXPERIMENTS
                           ? (wm2kh ? "0 = w4 (production), 1 = w8, 2 = s64w8, 3 = w4o4, 4 = tb4 (production), "
                                     "5 = tb4o4, 6 = tb4kh, 7 = tb4w, 8 = tb4wt, 9 = tb4wtkh (production), "
                                     "10 = tb4wmkh, 11 = tb4wm2kh (production, default here), 12 = tb4wpkh, "
                                     "13 = tb4wm2kho, 14 = tb4wm2khf, 15 = tb4wm2khq"
                                   : "0 = w4 (production), 1 = w8, 2 = s64w8, 3 = w4o4, 4 = tb4 (production, default "
                                     "here), 5 = tb4o4, 6 = tb4kh, 7 = tb4w, 8 = tb4wt, 9 = tb4wtkh (production), "
                                     "10 = tb4wmkh, 11 = tb4wm2kh (production), 12 = tb4wpkh, 13 = tb4wm2kho, "
                                     "14 = tb4wm2khf, 15 = tb4wm2khq")
                           : (wm2kh ? "0 = w4, 1 = tb4, 2 = tb4wtkh, 3 = tb4wm2kh (default here)"
                                   : "0 = w4, 1 = tb4 (default here), 2 = tb4wtkh, 3 = tb4wm2kh");
    q35_case(&s, strcmp(legend, want) == 0, "q35_variant_list: \"%s\"", legend);
    return q35_suite_end(&s);
}
