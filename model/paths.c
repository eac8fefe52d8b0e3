/* Options over environment over defaults (paths.h). */
#include "paths.h"

#include "core/escape.h"
#include "kernels/attention_f32.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *q35_attn_path_name(q35_attn_path a)
{
    return a == Q35_ATTN_F32 ? "f32" : a == Q35_ATTN_FLASH ? "flash" : "default";
}

const char *q35_gemm_path_name(q35_gemm_path g)
{
    return g == Q35_GEMM_F32 ? "f32" : g == Q35_GEMM_F16 ? "f16" : g == Q35_GEMM_FP8 ? "fp8" : "default";
}

const char *q35_delta_path_name(q35_delta_path d)
{
    return d == Q35_DELTA_SCAN ? "scan" : d == Q35_DELTA_CHUNKED ? "chunked" : "default";
}

const char *q35_flash_kernel_name(q35_flash_kernel k)
{
    return k == Q35_FLASH_KERNEL_SM90 ? "sm90" : k == Q35_FLASH_KERNEL_MMA ? "mma" : "default";
}

const char *q35_gemm_kernel_name(q35_gemm_kernel k)
{
    return k == Q35_GEMM_KERNEL_CUBLASLT ? "cublaslt" : k == Q35_GEMM_KERNEL_CUBLAS ? "cublas"
         : k == Q35_GEMM_KERNEL_SM90     ? "sm90"
                                         : "default";
}

q35_flash_kernel q35_flash_kernel_parse(const char *name)
{
    for (int k = Q35_FLASH_KERNEL_SM90; k <= Q35_FLASH_KERNEL_MMA; k++)
        if (strcmp(name, q35_flash_kernel_name((q35_flash_kernel)k)) == 0)
            return (q35_flash_kernel)k;
    return Q35_FLASH_KERNEL_DEFAULT;
}

q35_gemm_kernel q35_gemm_kernel_parse(const char *name)
{
    for (int k = Q35_GEMM_KERNEL_CUBLASLT; k <= Q35_GEMM_KERNEL_SM90; k++)
        if (strcmp(name, q35_gemm_kernel_name((q35_gemm_kernel)k)) == 0)
            return (q35_gemm_kernel)k;
    return Q35_GEMM_KERNEL_DEFAULT;
}

/* ---- the switches ---- */

/* The switches' names and defaults (what each does: paths.h's enum, model/README.md's table). */
static const struct {
    const char *name;
    bool on;
} k_switches[Q35_SW_COUNT] = {
    [Q35_SW_MERGE] = {"merge", true},
    [Q35_SW_SWIGLU] = {"swiglu", true},
    [Q35_SW_PREP] = {"prep", true},
    [Q35_SW_QK16] = {"qk16", true},
    [Q35_SW_PRUNE] = {"prune", true},
    [Q35_SW_GATE] = {"gate", false},
    [Q35_SW_GRAPHS] = {"graphs", false},
    [Q35_SW_F16_GU] = {"f16-gu", false},
    [Q35_SW_FP8_GU_BF16] = {"fp8-gu-bf16", true},
    [Q35_SW_TUNE_STEADY] = {"tune-steady", false},
    [Q35_SW_DECODE_GRAPH] = {"decode-graph", true},
    [Q35_SW_DECODE_Q8] = {"decode-q8", true},
    [Q35_SW_DECODE_SPLIT] = {"decode-split", true},
    [Q35_SW_DECODE_PDL] = {"decode-pdl", true},
    [Q35_SW_DECODE_FUSE] = {"decode-fuse", false},
    [Q35_SW_DECODE_ACT_Q8] = {"decode-act-q8", true},
    [Q35_SW_DECODE_OVERLAP] = {"decode-overlap", false},
};

const char *q35_switch_name(q35_switch s)
{
    return (unsigned)s < Q35_SW_COUNT ? k_switches[s].name : NULL;
}

bool q35_switch_default(q35_switch s)
{
    return (unsigned)s < Q35_SW_COUNT && k_switches[s].on;
}

char *q35_switches_list(char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < Q35_SW_COUNT && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s (%s)", i ? ", " : "", k_switches[i].name,
                                 k_switches[i].on ? "on" : "off");
    return buf;
}

/* q35_switches_parse, and where named is given each switch the list names set there. */
static int parse_switches(const char *list, bool on[Q35_SW_COUNT], bool *named, q35_error *err)
{
    char names[512];
    for (const char *item = list; item && *item;) {
        const size_t len = strcspn(item, ",");
        const char *eq = memchr(item, '=', len);
        const size_t nlen = eq ? (size_t)(eq - item) : len;
        int found = -1;
        for (int i = 0; i < Q35_SW_COUNT && found < 0; i++)
            if (strlen(k_switches[i].name) == nlen && strncmp(item, k_switches[i].name, nlen) == 0)
                found = i;
        const char *v = eq ? eq + 1 : "";
        const size_t vlen = eq ? len - nlen - 1 : 0;
        const bool is_on = vlen == 2 && strncmp(v, "on", 2) == 0, is_off = vlen == 3 && strncmp(v, "off", 3) == 0;
        if (found < 0)
            return q35_fail(err, "switch '%.*s' is unknown; the switches: %s", (int)nlen, item,
                            q35_switches_list(names, sizeof names));
        if (!is_on && !is_off)
            return q35_fail(err, "switch '%.*s' wants =on or =off, got '%.*s'", (int)nlen, item, (int)len, item);
        on[found] = is_on;
        if (named)
            named[found] = true;
        item += len;
        if (*item == ',' && *++item == '\0')
            return q35_fail(err, "switch list '%s' ends with a comma", list);
    }
    return 0;
}

int q35_switches_parse(const char *list, bool on[Q35_SW_COUNT], q35_error *err)
{
    return parse_switches(list, on, NULL, err);
}

void q35_cuda_options_init(q35_cuda_options *o)
{
    memset(o, 0, sizeof *o);
    o->device = -1;
    o->attention = Q35_ATTN_DEFAULT;
    o->gemm = Q35_GEMM_DEFAULT;
    o->deterministic = -1;
}

q35_path_env q35_path_env_get(void)
{
    q35_path_env e = {
        .attention = getenv("Q35_PREFILL_ATTENTION"),
        .gemm = getenv("Q35_PREFILL_GEMM"),
        .chunk_rows = getenv("Q35_PREFILL_CHUNK_ROWS"),
        .deterministic = getenv("Q35_DETERMINISTIC"),
        .scores_budget = getenv("Q35_ATTN_SCORES_BUDGET"),
        .device = getenv("Q35_DEVICE"),
        .flash_variant = getenv("Q35_FLASH_VARIANT"),
        .delta = getenv("Q35_PREFILL_DELTA"),
        .delta_rule_variant = getenv("Q35_DELTA_RULE_VARIANT"),
        .delta_chunk_variant = getenv("Q35_DELTA_CHUNK_VARIANT"),
        .gemm_sm90_variant = getenv("Q35_GEMM_SM90_VARIANT"),
        .gemv_q8_variant = getenv("Q35_GEMV_Q8_VARIANT"),
        .flash_kernel = getenv("Q35_FLASH_KERNEL"),
        .gemm_kernel = getenv("Q35_GEMM_KERNEL"),
        .switches = getenv("Q35_SWITCHES"),
    };
    return e;
}

q35_delta_path q35_paths_delta_for(const q35_path_choice *c, q35_gemm_path gemm)
{
    if (c->deterministic)
        return Q35_DELTA_SCAN;
    if (c->delta != Q35_DELTA_DEFAULT)
        return c->delta;
    return q35_gemm_is_fast(gemm) ? Q35_DELTA_CHUNKED : Q35_DELTA_SCAN;
}

void q35_paths_note(char *log, size_t cap, bool quiet, const char *fmt, ...)
{
    char raw[512], line[4 * sizeof raw];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    q35_escape_str(line, sizeof line, raw); /* values from the environment reach a terminal */
    if (!quiet)
        fprintf(stderr, "q35 cuda: %s\n", line);
    const size_t used = strlen(log);
    if (used + 1 < cap)
        snprintf(log + used, cap - used, "%s\n", line);
}

/* A whole decimal integer in [lo, hi], or -1. */
static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!s || !*s)
        return -1;
    char *end = NULL;
    errno = 0;
    const long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int q35_paths_device(const q35_cuda_options *o, const q35_path_env *env, char *log, size_t cap, q35_error *err)
{
    if (o->device < -1)
        return q35_fail(err, "cuda options: device %d (want an ordinal >= 0, or -1 for $Q35_DEVICE)", o->device);
    if (o->device >= 0)
        return o->device;
    int64_t d = 0;
    if (env->device && parse_int(env->device, 0, 1024, &d)) {
        q35_paths_note(log, cap, o->quiet, "warning: Q35_DEVICE=\"%s\" is not a device ordinal; using device 0",
                       env->device);
        d = 0;
    }
    return (int)d;
}

static void resolve_attention(q35_path_choice *c, q35_attn_path a, const char *source, bool flash_supported,
                              const char *why, char *log, size_t cap, bool quiet)
{
    c->n_attention = 0;
    if (a == Q35_ATTN_F32) {
        c->attention[c->n_attention++] = Q35_ATTN_F32;
        return;
    }
    if (a == Q35_ATTN_FLASH && !flash_supported)
        q35_paths_note(log, cap, quiet, "warning: %s, but the flash kernel cannot run here (%s); using f32",
                       source, why && *why ? why : "unsupported");
    if (a == Q35_ATTN_FLASH && flash_supported) {
        c->attention[c->n_attention++] = Q35_ATTN_FLASH;
        return;
    }
    /* the default: flash where it runs (it needs no scores, so it fits wherever f32 does), else f32 */
    c->attention[c->n_attention++] = a == Q35_ATTN_DEFAULT && flash_supported ? Q35_ATTN_FLASH : Q35_ATTN_F32;
}

/* The option's name when set, else the environment's when set and not empty. */
static q35_path_name pick_name(const char *option, const char *option_name, const char *env, const char *env_name)
{
    if (option)
        return (q35_path_name){option, option_name, NULL};
    if (env && env[0])
        return (q35_path_name){env, NULL, env_name};
    return (q35_path_name){NULL, NULL, NULL};
}

int q35_paths_variant(const q35_path_name *pick, const q35_path_variants *v, char *log, size_t cap, bool quiet,
                      q35_error *err)
{
    if (!pick->name)
        return v->fallback;
    char source[160];
    if (pick->option)
        snprintf(source, sizeof source, "option %s \"%s\"", pick->option, pick->name);
    else
        snprintf(source, sizeof source, "%s=\"%s\"", pick->env ? pick->env : "?", pick->name);
    const int i = v->find(pick->name);
    q35_error why = {{0}};
    if (i < 0 && pick->option) {
        char names[400] = "";
        for (int k = 0, used = 0; v->name(k) && used < (int)sizeof names; k++)
            used += snprintf(names + used, sizeof names - (size_t)used, "%s%s", k ? ", " : "", v->name(k));
        return q35_fail(err, "%s is not a %s variant; its variants: %s", source, v->op, names);
    }
    if (i < 0)
        q35_paths_note(log, cap, quiet, "warning: %s is not a %s variant; using %s", source, v->op,
                       v->name(v->fallback));
    else if (v->runs && v->runs(i, v->ctx, &why) != 1)
        q35_paths_note(log, cap, quiet, "warning: %s cannot run here (%s); using %s", source, why.msg,
                       v->name(v->fallback));
    else
        return i;
    return v->fallback;
}

int q35_paths_resolve(q35_path_choice *c, const q35_cuda_options *o, const q35_path_env *env, bool flash_supported,
                      const char *flash_why, bool unified, char *log, size_t cap, q35_error *err)
{
    memset(c, 0, sizeof *c);
    const bool quiet = o->quiet;
    if (o->attention < Q35_ATTN_DEFAULT || o->attention > Q35_ATTN_FLASH || o->gemm < Q35_GEMM_DEFAULT ||
        o->gemm > Q35_GEMM_FP8 || o->delta < Q35_DELTA_DEFAULT || o->delta > Q35_DELTA_CHUNKED)
        return q35_fail(err, "cuda options: attention %d, gemm %d, delta %d (want one of the q35_attn_path / "
                        "q35_gemm_path / q35_delta_path values)", (int)o->attention, (int)o->gemm, (int)o->delta);
    if (o->chunk_rows < 0 || o->max_seq < 0 || o->deterministic < -1 || o->deterministic > 1)
        return q35_fail(err, "cuda options: chunk_rows %" PRId64 ", max_seq %" PRId64 " (want >= 0, 0 = default), "
                        "deterministic %d (want -1, 0 or 1)", o->chunk_rows, o->max_seq, o->deterministic);

    /* attention */
    q35_attn_path a = o->attention;
    const char *a_source = "option attention flash";
    if (a == Q35_ATTN_DEFAULT && env->attention) {
        a_source = "Q35_PREFILL_ATTENTION=flash";
        if (strcmp(env->attention, "f32") == 0)
            a = Q35_ATTN_F32;
        else if (strcmp(env->attention, "flash") == 0)
            a = Q35_ATTN_FLASH;
        else
            q35_paths_note(log, cap, quiet,
                           "warning: Q35_PREFILL_ATTENTION=\"%s\" is not one of \"f32\" / \"flash\"; using the default",
                           env->attention);
    }
    resolve_attention(c, a, a_source, flash_supported, flash_why, log, cap, quiet);

    /* GEMM */
    c->gemm = o->gemm;
    if (c->gemm == Q35_GEMM_DEFAULT && env->gemm) {
        if (strcmp(env->gemm, "f32") == 0)
            c->gemm = Q35_GEMM_F32;
        else if (strcmp(env->gemm, "f16") == 0)
            c->gemm = Q35_GEMM_F16;
        else if (strcmp(env->gemm, "fp8") == 0)
            c->gemm = Q35_GEMM_FP8;
        else
            q35_paths_note(log, cap, quiet,
                           "warning: Q35_PREFILL_GEMM=\"%s\" is not one of \"f32\" / \"f16\" / \"fp8\"; using the default (f16)",
                           env->gemm);
    }
    if (c->gemm == Q35_GEMM_DEFAULT)
        c->gemm = Q35_GEMM_F16; /* the fast path; the plan falls back to f32 where its weight set does not fit */

    /* chunk rows: a pinned value alone, else the device's default (on the fast GEMM paths their own) halved down
     * to 64 */
    int64_t rows = o->chunk_rows;
    if (rows == 0 && env->chunk_rows && parse_int(env->chunk_rows, 1, 1 << 20, &rows)) {
        q35_paths_note(log, cap, quiet,
                       "warning: Q35_PREFILL_CHUNK_ROWS=\"%s\" is not a row count in 1..1048576; using the default",
                       env->chunk_rows);
        rows = 0;
    }
    if (rows > 0) {
        c->chunk_rows[c->n_chunk_rows++] = rows;
    } else {
        const bool fast = c->gemm == Q35_GEMM_F16 || c->gemm == Q35_GEMM_FP8;
        for (rows = unified ? Q35_CHUNK_ROWS_UNIFIED : fast ? Q35_CHUNK_ROWS_FAST : Q35_CHUNK_ROWS_DISCRETE;
             rows >= 64 && c->n_chunk_rows < (int)(sizeof c->chunk_rows / sizeof c->chunk_rows[0]); rows /= 2)
            c->chunk_rows[c->n_chunk_rows++] = rows;
    }

    /* deterministic */
    c->deterministic = o->deterministic == 1;
    if (o->deterministic == -1 && env->deterministic) {
        if (strcmp(env->deterministic, "1") == 0)
            c->deterministic = true;
        else if (strcmp(env->deterministic, "0") != 0 && env->deterministic[0] != '\0')
            q35_paths_note(log, cap, quiet, "warning: Q35_DETERMINISTIC=\"%s\" is not \"0\" or \"1\"; off",
                           env->deterministic);
    }

    /* scores budget */
    c->scores_budget = o->scores_budget;
    int64_t budget = 0;
    if (c->scores_budget == 0 && env->scores_budget) {
        if (parse_int(env->scores_budget, 1, INT64_MAX, &budget) == 0)
            c->scores_budget = (size_t)budget;
        else
            q35_paths_note(log, cap, quiet,
                           "warning: Q35_ATTN_SCORES_BUDGET=\"%s\" is not a positive byte count; using 1 GiB",
                           env->scores_budget);
    }
    if (c->scores_budget == 0)
        c->scores_budget = Q35_ATTN_SCORES_BUDGET;

    /* the delta rule: pinned by the option or $Q35_PREFILL_DELTA, else left to
     * q35_paths_delta_for once the plan has its GEMM path */
    c->delta = o->delta;
    if (c->delta == Q35_DELTA_DEFAULT && env->delta) {
        if (strcmp(env->delta, "scan") == 0)
            c->delta = Q35_DELTA_SCAN;
        else if (strcmp(env->delta, "chunked") == 0)
            c->delta = Q35_DELTA_CHUNKED;
        else
            q35_paths_note(log, cap, quiet,
                           "warning: Q35_PREFILL_DELTA=\"%s\" is not one of \"scan\" / \"chunked\"; using the default",
                           env->delta);
    }
    if (c->delta == Q35_DELTA_CHUNKED && c->deterministic) {
        q35_paths_note(log, cap, quiet, "warning: delta chunked is not batch-invariant; deterministic mode runs the scan");
        c->delta = Q35_DELTA_SCAN;
    }

    /* the kernels' variants: names, looked up by the load (the names live with the kernels) */
    c->flash_variant = pick_name(o->flash_variant, "flash_variant", env->flash_variant, "Q35_FLASH_VARIANT");
    c->delta_rule_variant =
        pick_name(o->delta_rule_variant, "delta_rule_variant", env->delta_rule_variant, "Q35_DELTA_RULE_VARIANT");
    c->delta_chunk_variant =
        pick_name(o->delta_chunk_variant, "delta_chunk_variant", env->delta_chunk_variant, "Q35_DELTA_CHUNK_VARIANT");
    c->gemm_sm90_variant =
        pick_name(o->gemm_sm90_variant, "gemm_sm90_variant", env->gemm_sm90_variant, "Q35_GEMM_SM90_VARIANT");
    c->gemv_q8_variant =
        pick_name(o->gemv_q8_variant, "gemv_q8_variant", env->gemv_q8_variant, "Q35_GEMV_Q8_VARIANT");

    /* the kernels */
    c->flash_kernel = o->flash_kernel;
    if (c->flash_kernel == Q35_FLASH_KERNEL_DEFAULT && env->flash_kernel && env->flash_kernel[0]) {
        c->flash_kernel = q35_flash_kernel_parse(env->flash_kernel);
        if (c->flash_kernel == Q35_FLASH_KERNEL_DEFAULT)
            q35_paths_note(log, cap, quiet, "warning: Q35_FLASH_KERNEL=\"%s\" is not one of \"sm90\" / \"mma\"; "
                           "using the default", env->flash_kernel);
    }
    c->gemm_kernel = o->gemm_kernel;
    if (c->gemm_kernel == Q35_GEMM_KERNEL_DEFAULT && env->gemm_kernel && env->gemm_kernel[0]) {
        c->gemm_kernel = q35_gemm_kernel_parse(env->gemm_kernel);
        if (c->gemm_kernel == Q35_GEMM_KERNEL_DEFAULT)
            q35_paths_note(log, cap, quiet, "warning: Q35_GEMM_KERNEL=\"%s\" is not one of \"cublaslt\" / "
                           "\"cublas\" / \"sm90\"; using the default", env->gemm_kernel);
    }
    if (c->gemm_kernel == Q35_GEMM_KERNEL_DEFAULT)
        c->gemm_kernel = Q35_GEMM_KERNEL_CUBLASLT;

    /* the switches: their defaults, then the environment's list, then the option's */
    for (int i = 0; i < Q35_SW_COUNT; i++)
        c->sw[i] = q35_switch_default((q35_switch)i), c->sw_named[i] = false;
    if (env->switches && env->switches[0]) {
        bool from_env[Q35_SW_COUNT], named[Q35_SW_COUNT] = {false};
        memcpy(from_env, c->sw, sizeof from_env);
        q35_error why = {{0}};
        if (parse_switches(env->switches, from_env, named, &why) == 0)
            memcpy(c->sw, from_env, sizeof from_env), memcpy(c->sw_named, named, sizeof named);
        else
            q35_paths_note(log, cap, quiet, "warning: Q35_SWITCHES=\"%s\": %s; the switches at their defaults",
                           env->switches, why.msg);
    }
    if (o->switches && parse_switches(o->switches, c->sw, c->sw_named, err))
        return q35_fail_context(err, "cuda options: switches");

    c->max_seq = o->max_seq > 0 ? o->max_seq : 4096;
    return 0;
}

void q35_paths_apply(const q35_path_choice *c, bool flash_sm90_runs, bool gemm_sm90_runs, q35_cuda_paths *p,
                     char *log, size_t cap, bool quiet)
{
    if (c->flash_kernel == Q35_FLASH_KERNEL_SM90 && !flash_sm90_runs && p->attention == Q35_ATTN_FLASH)
        q35_paths_note(log, cap, quiet, "warning: flash kernel sm90 cannot run here (its device or heads); using mma");
    p->flash_sm90 = c->flash_kernel != Q35_FLASH_KERNEL_MMA && flash_sm90_runs;
    p->gemm_sm90 = gemm_sm90_runs;
    p->gemm_lt_off = c->gemm_kernel == Q35_GEMM_KERNEL_CUBLAS;
    p->gemm_sm90_proj = c->gemm_kernel == Q35_GEMM_KERNEL_SM90;
    if (p->gemm_sm90_proj && !gemm_sm90_runs && p->gemm == Q35_GEMM_F16)
        q35_paths_note(log, cap, quiet, "warning: GEMM kernel sm90 cannot run here (its device or this FFN); "
                       "using cublaslt");
    p->split_proj = !c->sw[Q35_SW_MERGE];
    p->gemm_swiglu = c->sw[Q35_SW_SWIGLU];
    p->delta_prep_chain = !c->sw[Q35_SW_PREP];
    p->delta_qk16 = c->sw[Q35_SW_QK16];
    p->prune_off = !c->sw[Q35_SW_PRUNE];
    p->flash_gate = c->sw[Q35_SW_GATE];
    p->graphs = c->sw[Q35_SW_GRAPHS];
    p->f16_gu = c->sw[Q35_SW_F16_GU];
    p->fp8_gu_f32 = !c->sw[Q35_SW_FP8_GU_BF16];
    p->gemm_tune_steady = c->sw[Q35_SW_TUNE_STEADY];
    p->decode_graph = c->sw[Q35_SW_DECODE_GRAPH];
    p->decode_q8 = c->sw[Q35_SW_DECODE_Q8];
    p->decode_split = c->sw[Q35_SW_DECODE_SPLIT];
    p->decode_pdl = c->sw[Q35_SW_DECODE_PDL];
    p->decode_fuse = c->sw[Q35_SW_DECODE_FUSE];
    p->decode_act_q8 = c->sw[Q35_SW_DECODE_ACT_Q8];
    p->decode_overlap = c->sw[Q35_SW_DECODE_OVERLAP];
    if (p->decode_q8 && !q35_paths_decode_q8(p) && c->sw_named[Q35_SW_DECODE_Q8]) /* on by default: asked */
        q35_paths_note(log, cap, quiet, "note: the decode step's 8-bit activations (switch decode-q8=on) are taken "
                       "on the f16 and fp8 GEMM paths only (not deterministic); exact GEMVs");
    if (p->graphs && !q35_paths_graph_ok(p))
        q35_paths_note(log, cap, quiet, "note: CUDA graphs (switch graphs=on) are not taken on these paths (cuBLAS's "
                       "own calls: f32 GEMM, f32 attention or GEMM kernel cublas); plain launches");
}

const char *q35_paths_tier(const q35_cuda_paths *p)
{
    if (p->deterministic)
        return "deterministic: batch-invariant, bitwise its per-token forward (the parity oracle)";
    if (p->gemm == Q35_GEMM_F32 && p->attention == Q35_ATTN_F32 && p->delta == Q35_DELTA_SCAN)
        return "exact: f32 GEMM, f32 attention, the scan: the path the parity suites compare against";
    if (p->gemm == Q35_GEMM_F16)
        return "fast: f16 operands, f32 accumulation; the model sweep holds its logits within rel L2 2e-3 of "
               "the exact path's (--exact runs that)";
    if (p->gemm == Q35_GEMM_FP8)
        return "fp8 (opt-in): e4m3 projections, looser; its tier against the f32 GEMM is printed after the run";
    return "mixed: the f32 GEMM with flash attention or the chunked rule (f16 operands there)";
}
