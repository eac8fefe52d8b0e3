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
    c->attention[c->n_attention++] = Q35_ATTN_F32; /* the default: f32 while it fits, flash past it */
    if (a == Q35_ATTN_DEFAULT && flash_supported)
        c->attention[c->n_attention++] = Q35_ATTN_FLASH;
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

int q35_paths_variant(const q35_path_name *pick, const q35_path_variants *v, char *log, size_t cap, bool quiet)
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
                           "warning: Q35_PREFILL_GEMM=\"%s\" is not one of \"f32\" / \"f16\" / \"fp8\"; using the default (f32)",
                           env->gemm);
    }
    if (c->gemm == Q35_GEMM_DEFAULT)
        c->gemm = Q35_GEMM_F32;

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

    c->max_seq = o->max_seq > 0 ? o->max_seq : 4096;
    return 0;
}
