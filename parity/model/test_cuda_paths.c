/* The CUDA model's path choices (model/paths.h) on the CPU: each option, when
 * set, wins over its environment variable, which wins over the default; every
 * unknown value and impossible pick is a warning in the log, never a silent
 * reread; options out of range are errors. */
#include "parity/lib/harness.h"

#include "model/paths.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct want {
    const char *attention;  /* the candidates, "f32,flash" */
    q35_gemm_path gemm;
    int64_t first_rows;     /* first chunk-rows candidate */
    int n_rows;             /* how many */
    bool deterministic;
    size_t budget;
    const char *warning;    /* a substring of the log, or NULL: the log must be empty */
} want;

static void candidates(const q35_path_choice *c, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < c->n_attention; i++) {
        const size_t used = strlen(buf);
        snprintf(buf + used, cap - used, "%s%s", i ? "," : "", q35_attn_path_name(c->attention[i]));
    }
}

static void check(q35_suite *s, const char *what, const q35_cuda_options *o, const q35_path_env *env, bool flash,
                  bool unified, want w)
{
    q35_path_choice c;
    char log[1024] = "", attn[64];
    q35_error err = {{0}};
    const int rc = q35_paths_resolve(&c, o, env, flash, "compute capability 7.5 (want 8.0+)", unified, log,
                                     sizeof log, &err);
    candidates(&c, attn, sizeof attn);
    const bool log_ok = w.warning ? strstr(log, w.warning) != NULL : log[0] == '\0';
    const bool ok = rc == 0 && strcmp(attn, w.attention) == 0 && c.gemm == w.gemm && c.chunk_rows[0] == w.first_rows &&
                    c.n_chunk_rows == w.n_rows && c.deterministic == w.deterministic && c.scores_budget == w.budget &&
                    log_ok;
    char *nl = strchr(log, '\n');
    if (nl)
        *nl = '\0';
    q35_case(s, ok, "%-44s attention %-9s gemm %s, rows %" PRId64 " (of %d), deterministic %d, budget %zu%s%s", what,
             attn, q35_gemm_path_name(c.gemm), c.chunk_rows[0], c.n_chunk_rows, c.deterministic, c.scores_budget,
             log[0] ? " | " : "", log);
}

static void check_error(q35_suite *s, const char *what, const q35_cuda_options *o, const char *expect)
{
    q35_path_choice c;
    char log[256] = "";
    q35_error err = {{0}};
    const q35_path_env none = {0};
    const int rc = q35_paths_resolve(&c, o, &none, true, "", false, log, sizeof log, &err);
    q35_case(s, rc == -1 && strstr(err.msg, expect) != NULL, "%-44s refused: %s", what, err.msg);
}

static void check_device(q35_suite *s, const char *what, int option, const char *env_value, int want_dev,
                         const char *warning)
{
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    o.device = option;
    const q35_path_env env = {.device = env_value};
    char log[256] = "";
    q35_error err = {{0}};
    const int d = q35_paths_device(&o, &env, log, sizeof log, &err);
    const bool ok = d == want_dev && (warning ? strstr(log, warning) != NULL : log[0] == '\0') &&
                    (want_dev >= 0 || strstr(err.msg, "device -5") != NULL);
    char *nl = strchr(log, '\n');
    if (nl)
        *nl = '\0';
    q35_case(s, ok, "%-44s device %d %s%s", what, d, log, err.msg);
}

/* The delta rule a choice resolves to, on the f32 and the f16 GEMM paths. */
static void check_delta(q35_suite *s, const char *what, const q35_cuda_options *o, const q35_path_env *env,
                        q35_delta_path want_f32, q35_delta_path want_f16, const char *warning)
{
    q35_path_choice c;
    char log[512] = "";
    q35_error err = {{0}};
    const int rc = q35_paths_resolve(&c, o, env, true, "", false, log, sizeof log, &err);
    const q35_delta_path on_f32 = q35_paths_delta_for(&c, Q35_GEMM_F32), on_f16 = q35_paths_delta_for(&c, Q35_GEMM_F16);
    const bool log_ok = warning ? strstr(log, warning) != NULL : log[0] == '\0';
    char *nl = strchr(log, '\n');
    if (nl)
        *nl = '\0';
    q35_case(s, rc == 0 && on_f32 == want_f32 && on_f16 == want_f16 && log_ok,
             "%-44s delta on GEMM f32: %s, on f16: %s%s%s", what, q35_delta_path_name(on_f32),
             q35_delta_path_name(on_f16), log[0] ? " | " : "", log);
}

/* The kernels' variants by name (q35_paths_variant), over a registry of the
 * test's own: "a", "b" (the default here), "c" (never runs here). */
static const char *fake_name(int v)
{
    static const char *const names[] = {"a", "b", "c"};
    return v >= 0 && v < 3 ? names[v] : NULL;
}

static int fake_find(const char *name)
{
    for (int v = 0; name && fake_name(v); v++)
        if (strcmp(fake_name(v), name) == 0)
            return v;
    return -1;
}

static int fake_runs(int v, const void *ctx, q35_error *why)
{
    (void)ctx;
    if (v == 2) {
        q35_fail(why, "needs 300 KiB of shared memory");
        return 0;
    }
    return 1;
}

/* The ops whose variants the options name: the option's field, the
 * environment's, the choice's. */
typedef enum { FLASH, DELTA_RULE, DELTA_CHUNK } variant_op;

static void set_variant(variant_op op, q35_cuda_options *o, q35_path_env *env, const char *option, const char *env_value)
{
    const char **of = op == FLASH ? &o->flash_variant : op == DELTA_RULE ? &o->delta_rule_variant
                                                                         : &o->delta_chunk_variant;
    const char **ef = op == FLASH ? &env->flash_variant : op == DELTA_RULE ? &env->delta_rule_variant
                                                                           : &env->delta_chunk_variant;
    *of = option, *ef = env_value;
}

static void check_variant(q35_suite *s, variant_op op, const char *what, const char *option, const char *env_value,
                          const char *want_name, const char *warning)
{
    static const char *const ops[] = {"flash_variant", "delta_rule_variant", "delta_chunk_variant"};
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    q35_path_env env = {0};
    set_variant(op, &o, &env, option, env_value);
    q35_path_choice c;
    char log[512] = "";
    q35_error err = {{0}};
    const int rc = q35_paths_resolve(&c, &o, &env, true, "", false, log, sizeof log, &err);
    const q35_path_name *pick = op == FLASH ? &c.flash_variant : op == DELTA_RULE ? &c.delta_rule_variant
                                                                                  : &c.delta_chunk_variant;
    const q35_path_variants v = {"fake", fake_find, fake_name, 1, fake_runs, NULL};
    const int got = rc == 0 ? q35_paths_variant(pick, &v, log, sizeof log, true, &err) : -1;
    /* want_name NULL: refused, err holding the warning's text */
    const bool log_ok = want_name ? (warning ? strstr(log, warning) != NULL : log[0] == '\0')
                                  : got == -1 && strstr(err.msg, warning) != NULL;
    char *nl = strchr(log, '\n');
    if (nl)
        *nl = '\0';
    q35_case(s, rc == 0 && (want_name ? got >= 0 && strcmp(fake_name(got), want_name) == 0 : got == -1) && log_ok,
             "%-19s %-34s variant %s%s%s%s", ops[op], what, got >= 0 ? fake_name(got) : "(refused)",
             log[0] ? " | " : "", log, err.msg);
}

/* Which paths launch a chunk's layers as CUDA graphs (q35_paths_graph_ok, q35_paths_graphs). */
static void check_graphs(q35_suite *s)
{
    const struct {
        q35_attn_path attention;
        q35_gemm_path gemm;
        bool deterministic, lt_off, ok;
    } cases[] = {
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, false, true},  /* the fast path: the tuned cuBLASLt context */
        {Q35_ATTN_FLASH, Q35_GEMM_FP8, false, false, true},  /* the fp8 GEMM's own cuBLASLt context */
        {Q35_ATTN_F32, Q35_GEMM_F32, true, false, true},     /* deterministic: GEMV rows, decode-rows attention */
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, true, false},  /* GEMM kernel cublas: cublasGemmEx */
        {Q35_ATTN_FLASH, Q35_GEMM_F32, false, false, false}, /* the f32 GEMM: cuBLAS SGEMM */
        {Q35_ATTN_F32, Q35_GEMM_F16, false, false, false},   /* f32 attention: cuBLAS */
        {Q35_ATTN_F32, Q35_GEMM_FP8, false, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int asked = 0; asked < 2; asked++) {
            const q35_cuda_paths p = {.attention = cases[i].attention, .gemm = cases[i].gemm,
                                      .deterministic = cases[i].deterministic, .gemm_lt_off = cases[i].lt_off,
                                      .graphs = asked};
            const bool ok = q35_paths_graph_ok(&p), on = q35_paths_graphs(&p);
            q35_case(s, ok == cases[i].ok && on == (asked && cases[i].ok),
                     "graphs: attention %s, GEMM %s%s%s, asked %d: able %d (want %d), on %d", q35_attn_path_name(p.attention),
                     q35_gemm_path_name(p.gemm), p.deterministic ? ", deterministic" : "",
                     p.gemm_lt_off ? ", GEMM kernel cublas" : "", asked, ok, cases[i].ok, on);
        }
}

/* Which paths take the output gate in the sm_90a flash epilogue (q35_paths_flash_gate). */
static void check_flash_gate(q35_suite *s)
{
    const struct {
        q35_attn_path attention;
        q35_gemm_path gemm;
        bool deterministic, sm90, ok;
    } cases[] = {
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, true, true},  /* the f16 path over the sm_90a kernel */
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, false, false}, /* the mma.sync kernel: the op apart */
        {Q35_ATTN_FLASH, Q35_GEMM_FP8, false, true, false},  /* fp8: its inputs are e4m3 codes */
        {Q35_ATTN_F32, Q35_GEMM_F16, false, true, false},
        {Q35_ATTN_FLASH, Q35_GEMM_F16, true, true, false},   /* deterministic: decode-rows attention */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int asked = 0; asked < 2; asked++) {
            const q35_cuda_paths p = {.attention = cases[i].attention, .gemm = cases[i].gemm,
                                      .deterministic = cases[i].deterministic, .flash_sm90 = cases[i].sm90,
                                      .flash_gate = asked};
            const bool on = q35_paths_flash_gate(&p);
            q35_case(s, on == (asked && cases[i].ok), "flash gate: attention %s, GEMM %s%s, sm_90a %d, asked %d: on %d",
                     q35_attn_path_name(p.attention), q35_gemm_path_name(p.gemm),
                     p.deterministic ? ", deterministic" : "", p.flash_sm90, asked, on);
        }
}

/* Which paths take the FFN's [gate | up] GEMM and SwiGLU as the one sm_90a
 * kernel (q35_paths_gemm_swiglu), and the projections on the sm_90a GEMM
 * (q35_paths_gemm_sm90_proj: the same, merged or not). */
static void check_gemm_swiglu(q35_suite *s)
{
    const struct {
        q35_gemm_path gemm;
        bool deterministic, split, sm90, ok;
    } cases[] = {
        {Q35_GEMM_F16, false, false, true, true},  /* the f16 path, merged, where the kernel runs */
        {Q35_GEMM_F16, false, false, false, false}, /* not here (device or FFN shape): the two apart */
        {Q35_GEMM_F16, false, true, true, false},  /* projections alone (switch merge=off) */
        {Q35_GEMM_FP8, false, false, true, false}, /* fp8: e4m3 inputs, its own GEMM */
        {Q35_GEMM_F32, false, false, true, false},
        {Q35_GEMM_F16, true, false, true, false},  /* deterministic: GEMV rows */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int asked = 0; asked < 2; asked++) {
            const q35_cuda_paths p = {.attention = Q35_ATTN_FLASH, .gemm = cases[i].gemm,
                                      .deterministic = cases[i].deterministic, .split_proj = cases[i].split,
                                      .gemm_sm90 = cases[i].sm90, .gemm_swiglu = asked};
            const bool on = q35_paths_gemm_swiglu(&p);
            q35_case(s, on == (asked && cases[i].ok),
                     "gemm swiglu: GEMM %s%s%s, sm_90a %d, asked %d: on %d", q35_gemm_path_name(p.gemm),
                     p.deterministic ? ", deterministic" : "", p.split_proj ? ", split" : "", p.gemm_sm90, asked, on);
            /* the projections on the sm_90a GEMM: as SwiGLU's but split projections too */
            const q35_cuda_paths pp = {.attention = Q35_ATTN_FLASH, .gemm = cases[i].gemm,
                                       .deterministic = cases[i].deterministic, .split_proj = cases[i].split,
                                       .gemm_sm90 = cases[i].sm90, .gemm_sm90_proj = asked};
            const bool on_p = q35_paths_gemm_sm90_proj(&pp);
            q35_case(s, on_p == (asked && (cases[i].ok || (cases[i].split && cases[i].sm90))),
                     "gemm sm90 projections: GEMM %s%s%s, sm_90a %d, asked %d: on %d", q35_gemm_path_name(pp.gemm),
                     pp.deterministic ? ", deterministic" : "", pp.split_proj ? ", split" : "", pp.gemm_sm90, asked,
                     on_p);
        }
}

/* Which paths prune the prefill's last layer (q35_paths_prune): every one
 * but with the switch prune=off (prune_off), deterministic, or taking CUDA
 * graphs (asked for on a path that takes them; asked for elsewhere they do
 * not run, and the path prunes). */
static void check_prune(q35_suite *s)
{
    const struct {
        q35_attn_path attention;
        q35_gemm_path gemm;
        bool deterministic, off, graphs, ok;
        const char *what;
    } cases[] = {
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, false, false, true, "flash/f16"},
        {Q35_ATTN_F32, Q35_GEMM_F32, false, false, false, true, "f32/f32"},
        {Q35_ATTN_FLASH, Q35_GEMM_FP8, false, false, false, true, "flash/fp8"},
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, true, false, false, "flash/f16, switch prune=off"},
        {Q35_ATTN_F32, Q35_GEMM_F32, true, false, false, false, "deterministic"},
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, false, true, false, "flash/f16 with graphs"},
        {Q35_ATTN_F32, Q35_GEMM_F32, false, false, true, true, "f32/f32, graphs asked (not taken there)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const q35_cuda_paths p = {.attention = cases[i].attention, .gemm = cases[i].gemm,
                                  .deterministic = cases[i].deterministic, .prune_off = cases[i].off,
                                  .graphs = cases[i].graphs};
        const bool on = q35_paths_prune(&p);
        q35_case(s, on == cases[i].ok, "last layer pruned: %s: %d (want %d)", cases[i].what, on, cases[i].ok);
    }
}

/* The kernel choices and the switches, option over environment over default,
 * and what q35_paths_apply writes into the paths of a load. */
static void check_kernels_and_switches(q35_suite *s)
{
    const q35_path_env none = {0};
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    q35_path_choice c;
    char log[1024] = "";
    q35_error err = {{0}};
    const q35_cuda_paths base = {.attention = Q35_ATTN_FLASH, .gemm = Q35_GEMM_F16, .delta = Q35_DELTA_CHUNKED};

    /* the defaults: sm90 where it runs (mma elsewhere), cuBLASLt, every switch at its default */
    int rc = q35_paths_resolve(&c, &o, &none, true, "", false, log, sizeof log, &err);
    q35_cuda_paths p = base, q = base;
    q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
    q35_paths_apply(&c, false, false, &q, log, sizeof log, true);
    bool defaults = rc == 0 && p.flash_sm90 && !q.flash_sm90 && !p.gemm_lt_off && !p.gemm_sm90_proj && p.gemm_sm90 &&
                    !q.gemm_sm90 && log[0] == '\0';
    for (int i = 0; i < Q35_SW_COUNT; i++)
        defaults = defaults && c.sw[i] == q35_switch_default((q35_switch)i);
    q35_case(s, defaults, "defaults: flash kernel sm90 where it runs, else mma; GEMM kernel cublaslt; switches at "
             "their defaults %s", log);

    /* flash kernel: option over environment; naming a variant never changes it */
    const q35_path_env env_mma = {.flash_kernel = "mma", .flash_variant = "overlap"};
    rc = q35_paths_resolve(&c, &o, &env_mma, true, "", false, log, sizeof log, &err);
    p = base;
    q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
    q35_case(s, rc == 0 && c.flash_kernel == Q35_FLASH_KERNEL_MMA && !p.flash_sm90,
             "Q35_FLASH_KERNEL=mma: the mma kernel where sm90 runs too");
    o.flash_kernel = Q35_FLASH_KERNEL_SM90;
    o.flash_variant = "persist";
    rc = q35_paths_resolve(&c, &o, &env_mma, true, "", false, log, sizeof log, &err);
    p = base;
    q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
    q35_case(s, rc == 0 && p.flash_sm90 && c.flash_variant.name && strcmp(c.flash_variant.name, "persist") == 0,
             "option flash kernel sm90 over env mma, a variant named: still sm90");
    log[0] = '\0';
    p = base;
    q35_paths_apply(&c, false, true, &p, log, sizeof log, true);
    q35_case(s, !p.flash_sm90 && strstr(log, "flash kernel sm90 cannot run here"), "sm90 asked where it cannot run: "
             "mma, said: %.80s", log);
    o.flash_kernel = Q35_FLASH_KERNEL_DEFAULT;
    o.flash_variant = NULL;
    const q35_path_env env_bad_kernel = {.flash_kernel = "wgmma", .gemm_kernel = "cutlass"};
    log[0] = '\0';
    rc = q35_paths_resolve(&c, &o, &env_bad_kernel, true, "", false, log, sizeof log, &err);
    q35_case(s, rc == 0 && c.flash_kernel == Q35_FLASH_KERNEL_DEFAULT && c.gemm_kernel == Q35_GEMM_KERNEL_CUBLASLT &&
                    strstr(log, "Q35_FLASH_KERNEL=\"wgmma\" is not one of") &&
                    strstr(log, "Q35_GEMM_KERNEL=\"cutlass\" is not one of"),
             "env kernels unknown: the defaults, both said");

    /* GEMM kernel: each value, option over environment */
    static const struct { q35_gemm_kernel k; bool lt_off, sm90; } gk[] = {
        {Q35_GEMM_KERNEL_CUBLASLT, false, false}, {Q35_GEMM_KERNEL_CUBLAS, true, false}, {Q35_GEMM_KERNEL_SM90, false, true}};
    for (size_t i = 0; i < sizeof gk / sizeof gk[0]; i++) {
        const q35_path_env env_k = {.gemm_kernel = q35_gemm_kernel_name(gk[i].k)};
        o.gemm_kernel = Q35_GEMM_KERNEL_DEFAULT;
        rc = q35_paths_resolve(&c, &o, &env_k, true, "", false, log, sizeof log, &err);
        p = base;
        q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
        const bool from_env = rc == 0 && p.gemm_lt_off == gk[i].lt_off && p.gemm_sm90_proj == gk[i].sm90;
        o.gemm_kernel = gk[(i + 1) % 3].k;
        rc = q35_paths_resolve(&c, &o, &env_k, true, "", false, log, sizeof log, &err);
        p = base;
        q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
        const bool option_wins = rc == 0 && p.gemm_lt_off == gk[(i + 1) % 3].lt_off &&
                                 p.gemm_sm90_proj == gk[(i + 1) % 3].sm90;
        q35_case(s, from_env && option_wins, "GEMM kernel %s from the environment; option %s over it",
                 q35_gemm_kernel_name(gk[i].k), q35_gemm_kernel_name(gk[(i + 1) % 3].k));
    }
    o.gemm_kernel = Q35_GEMM_KERNEL_DEFAULT;

    /* every switch: the environment turns it over, the option over that */
    for (int i = 0; i < Q35_SW_COUNT; i++) {
        const char *name = q35_switch_name((q35_switch)i);
        const bool def = q35_switch_default((q35_switch)i);
        char env_list[64], opt_list[64];
        snprintf(env_list, sizeof env_list, "%s=%s", name, def ? "off" : "on");
        snprintf(opt_list, sizeof opt_list, "%s=%s", name, def ? "on" : "off");
        const q35_path_env env_sw = {.switches = env_list};
        rc = q35_paths_resolve(&c, &o, &env_sw, true, "", false, log, sizeof log, &err);
        const bool env_ok = rc == 0 && c.sw[i] == !def;
        p = base;
        q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
        const bool fields[Q35_SW_COUNT] = {
            [Q35_SW_MERGE] = !p.split_proj, [Q35_SW_SWIGLU] = p.gemm_swiglu, [Q35_SW_PREP] = !p.delta_prep_chain,
            [Q35_SW_QK16] = p.delta_qk16, [Q35_SW_PRUNE] = !p.prune_off, [Q35_SW_GATE] = p.flash_gate,
            [Q35_SW_GRAPHS] = p.graphs, [Q35_SW_F16_GU] = p.f16_gu, [Q35_SW_FP8_GU_BF16] = !p.fp8_gu_f32,
            [Q35_SW_TUNE_STEADY] = p.gemm_tune_steady, [Q35_SW_DECODE_GRAPH] = p.decode_graph,
            [Q35_SW_DECODE_Q8] = p.decode_q8, [Q35_SW_DECODE_SPLIT] = p.decode_split,
            [Q35_SW_DECODE_PDL] = p.decode_pdl, [Q35_SW_DECODE_FUSE] = p.decode_fuse,
            [Q35_SW_DECODE_ACT_Q8] = p.decode_act_q8, [Q35_SW_DECODE_OVERLAP] = p.decode_overlap};
        _Static_assert(Q35_SW_COUNT == Q35_SW_DECODE_OVERLAP + 1, "every switch's field above");
        o.switches = opt_list;
        rc = q35_paths_resolve(&c, &o, &env_sw, true, "", false, log, sizeof log, &err);
        o.switches = NULL;
        q35_case(s, env_ok && fields[i] == !def && rc == 0 && c.sw[i] == def,
                 "switch %-12s (default %s): Q35_SWITCHES=%s turns it, into its paths field; --switch %s back",
                 name, def ? "on" : "off", env_list, opt_list);
    }
    o.switches = "prune=off,bogus=on";
    rc = q35_paths_resolve(&c, &o, &none, true, "", false, log, sizeof log, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "switch 'bogus' is unknown; the switches: merge (on), swiglu (on)"),
             "option switch unknown: refused, naming the switches: %.90s", err.msg);
    err.msg[0] = '\0';
    o.switches = "prune";
    rc = q35_paths_resolve(&c, &o, &none, true, "", false, log, sizeof log, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "switch 'prune' wants =on or =off"), "option switch without a value: "
             "refused: %s", err.msg);
    o.switches = NULL;
    const q35_path_env env_bad = {.switches = "graphs=on,nope=off"};
    log[0] = '\0';
    rc = q35_paths_resolve(&c, &o, &env_bad, true, "", false, log, sizeof log, &err);
    q35_case(s, rc == 0 && !c.sw[Q35_SW_GRAPHS] && strstr(log, "Q35_SWITCHES=\"graphs=on,nope=off\": switch 'nope'"),
             "env switch list with an unknown name: all at their defaults, said");

    /* decode-q8, on by default, is taken on the f16 and fp8 paths only: on the exact path its default says
       nothing, naming it (option or environment) says it is not taken */
    const q35_cuda_paths f32p = {.attention = Q35_ATTN_F32, .gemm = Q35_GEMM_F32, .delta = Q35_DELTA_SCAN};
    const char *const lists[3] = {NULL, "decode-q8=on", "prune=on,decode-q8=on"};
    for (int i = 0; i < 3; i++) {
        const q35_path_env env_q8 = {.switches = i == 2 ? lists[i] : NULL};
        o.switches = i == 1 ? lists[i] : NULL;
        log[0] = '\0';
        rc = q35_paths_resolve(&c, &o, &env_q8, true, "", false, log, sizeof log, &err);
        p = f32p;
        q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
        const bool said = strstr(log, "decode-q8=on) are taken on the f16 and fp8 GEMM paths only") != NULL;
        q35_case(s, rc == 0 && p.decode_q8 && !q35_paths_decode_q8(&p) && said == (i > 0),
                 "decode-q8 on the f32 GEMM path, %s: not taken, %s", i == 0 ? "by default" :
                 i == 1 ? "named by the option" : "named by Q35_SWITCHES", said ? "said" : "nothing said");
    }
    o.switches = NULL;
    rc = q35_paths_resolve(&c, &o, &none, true, "", false, log, sizeof log, &err);
    p = base;
    q35_paths_apply(&c, true, true, &p, log, sizeof log, true);
    q35_case(s, rc == 0 && q35_paths_decode_q8(&p), "decode-q8 taken on the fast path by default");

    /* the tier line names each kind of path */
    const q35_cuda_paths exact = {.attention = Q35_ATTN_F32, .gemm = Q35_GEMM_F32, .delta = Q35_DELTA_SCAN},
                         det = {.deterministic = true}, fp8 = {.gemm = Q35_GEMM_FP8};
    q35_case(s, strncmp(q35_paths_tier(&base), "fast:", 5) == 0 && strncmp(q35_paths_tier(&exact), "exact:", 6) == 0 &&
                    strncmp(q35_paths_tier(&det), "deterministic:", 14) == 0 &&
                    strncmp(q35_paths_tier(&fp8), "fp8", 3) == 0,
             "the tier: fast, exact, deterministic, fp8");
}

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "CUDA model paths: options over environment over defaults", 0);
    const size_t GiB = (size_t)1 << 30;
    q35_cuda_options o;
    q35_cuda_options_init(&o);
    o.quiet = true;
    const q35_path_env none = {0};

    /* the defaults: the fast path, its 8192 rows halved down to 64 (8 candidates); unified memory 2048 (6) */
    check(&s, "defaults, discrete", &o, &none, true, false, (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    check(&s, "defaults, unified memory", &o, &none, true, true,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_UNIFIED, 6, false, GiB, NULL});
    check(&s, "defaults, no flash kernel here", &o, &none, false, false,
          (want){"f32", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});

    q35_path_env env = {.attention = "flash"};
    check(&s, "env attention flash", &o, &env, true, false, (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    check(&s, "env attention flash, no flash kernel", &o, &env, false, false,
          (want){"f32", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "cannot run here (compute capability 7.5"});
    env.attention = "f16";
    check(&s, "env attention unknown", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_PREFILL_ATTENTION=\"f16\" is not one of"});
    env.attention = "flash";
    o.attention = Q35_ATTN_F32;
    check(&s, "option attention f32 over env flash", &o, &env, true, false,
          (want){"f32", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    o.attention = Q35_ATTN_FLASH;
    check(&s, "option attention flash, no flash kernel", &o, &none, false, false,
          (want){"f32", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "option attention flash, but"});
    o.attention = Q35_ATTN_DEFAULT;

    env = (q35_path_env){.gemm = "f16"};
    check(&s, "env gemm f16", &o, &env, true, false, (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    env.gemm = "fp8";
    check(&s, "env gemm fp8", &o, &env, true, false, (want){"flash", Q35_GEMM_FP8, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    env.gemm = "f16";
    o.gemm = Q35_GEMM_F32;
    check(&s, "option gemm f32 over env f16", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F32, Q35_CHUNK_ROWS_DISCRETE, 6, false, GiB, NULL});
    o.gemm = Q35_GEMM_DEFAULT;
    env.gemm = "tf32";
    check(&s, "env gemm unknown", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_PREFILL_GEMM=\"tf32\" is not one of \"f32\" / \"f16\" / \"fp8\"; using the default (f16)"});
    env.gemm = "f\x1b[31m16"; /* echoed escaped: it reaches a terminal */
    check(&s, "env gemm unknown, a control byte in it", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_PREFILL_GEMM=\"f\\e[31m16\" is not one of"});

    env = (q35_path_env){.chunk_rows = "64"};
    check(&s, "env chunk rows 64 (pinned)", &o, &env, true, true,
          (want){"flash", Q35_GEMM_F16, 64, 1, false, GiB, NULL});
    o.chunk_rows = 7;
    check(&s, "option chunk rows 7 over env 64", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, 7, 1, false, GiB, NULL});
    o.chunk_rows = 0;
    env.chunk_rows = "0x40";
    check(&s, "env chunk rows malformed", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_PREFILL_CHUNK_ROWS=\"0x40\""});

    env = (q35_path_env){.deterministic = "1"};
    check(&s, "env deterministic 1", &o, &env, true, false, (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, true, GiB, NULL});
    o.deterministic = 0;
    check(&s, "option deterministic 0 over env 1", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, NULL});
    o.deterministic = -1;
    env.deterministic = "yes";
    check(&s, "env deterministic malformed", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_DETERMINISTIC=\"yes\""});

    env = (q35_path_env){.scores_budget = "65536"};
    check(&s, "env scores budget", &o, &env, true, false, (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, 65536, NULL});
    o.scores_budget = 4096;
    check(&s, "option scores budget over env", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, 4096, NULL});
    o.scores_budget = 0;
    env.scores_budget = "-1";
    check(&s, "env scores budget malformed", &o, &env, true, false,
          (want){"flash", Q35_GEMM_F16, Q35_CHUNK_ROWS_FAST, 8, false, GiB, "Q35_ATTN_SCORES_BUDGET=\"-1\""});

    { /* the flash variant's name passes through to the load, which looks it up */
        q35_path_choice c;
        char log[256] = "";
        q35_error err = {{0}};
        const q35_path_env named_env = {.flash_variant = "pair_async"}, empty = {.flash_variant = ""};
        const int rc = q35_paths_resolve(&c, &o, &named_env, true, "", false, log, sizeof log, &err);
        const bool named = rc == 0 && c.flash_variant.name && strcmp(c.flash_variant.name, "pair_async") == 0;
        const int rc2 = q35_paths_resolve(&c, &o, &empty, true, "", false, log, sizeof log, &err);
        q35_case(&s, named && rc2 == 0 && c.flash_variant.name == NULL && log[0] == '\0',
                 "env flash variant: \"pair_async\" passed on, \"\" is the default (NULL)");
    }
    /* the kernels' variants, each op alike: option over environment over the default */
    static const char *const env_names[] = {"Q35_FLASH_VARIANT=", "Q35_DELTA_RULE_VARIANT=", "Q35_DELTA_CHUNK_VARIANT="};
    for (variant_op op = FLASH; op <= DELTA_CHUNK; op++) {
        char unknown[80], refused[80];
        snprintf(unknown, sizeof unknown, "%s\"zz\" is not a fake variant; using b", env_names[op]);
        snprintf(refused, sizeof refused, "%s\"c\" cannot run here (needs 300 KiB", env_names[op]);
        check_variant(&s, op, "unset: the default", NULL, NULL, "b", NULL);
        check_variant(&s, op, "env a", NULL, "a", "a", NULL);
        check_variant(&s, op, "option a over env c", "a", "c", "a", NULL);
        check_variant(&s, op, "env \"\": the default", NULL, "", "b", NULL);
        check_variant(&s, op, "env unknown: the default, said", NULL, "zz", "b", unknown);
        check_variant(&s, op, "option unknown: refused, naming them", "zz", NULL, NULL,
                      "\"zz\" is not a fake variant; its variants: a, b, c");
        check_variant(&s, op, "env c, which cannot run here", NULL, "c", "b", refused);
    }

    /* the delta rule: chunked on f16, the scan on f32 and when deterministic */
    check_delta(&s, "delta default", &o, &none, Q35_DELTA_SCAN, Q35_DELTA_CHUNKED, NULL);
    env = (q35_path_env){.delta = "chunked"};
    check_delta(&s, "env delta chunked", &o, &env, Q35_DELTA_CHUNKED, Q35_DELTA_CHUNKED, NULL);
    env.delta = "scan";
    check_delta(&s, "env delta scan", &o, &env, Q35_DELTA_SCAN, Q35_DELTA_SCAN, NULL);
    o.delta = Q35_DELTA_CHUNKED;
    check_delta(&s, "option delta chunked over env scan", &o, &env, Q35_DELTA_CHUNKED, Q35_DELTA_CHUNKED, NULL);
    o.deterministic = 1;
    check_delta(&s, "option delta chunked, deterministic", &o, &none, Q35_DELTA_SCAN, Q35_DELTA_SCAN,
                "not batch-invariant");
    o.deterministic = -1;
    o.delta = Q35_DELTA_DEFAULT;
    env.delta = "wy";
    check_delta(&s, "env delta unknown", &o, &env, Q35_DELTA_SCAN, Q35_DELTA_CHUNKED, "Q35_PREFILL_DELTA=\"wy\"");
    check_device(&s, "device option 2", 2, "1", 2, NULL);
    check_device(&s, "device from env", -1, "1", 1, NULL);
    check_device(&s, "device env malformed", -1, "gpu1", 0, "Q35_DEVICE=\"gpu1\"");
    check_device(&s, "device option -5", -5, NULL, -1, NULL);

    q35_cuda_options_init(&o);
    o.chunk_rows = -1;
    check_error(&s, "option chunk rows -1", &o, "chunk_rows -1");
    q35_cuda_options_init(&o);
    o.deterministic = 2;
    check_error(&s, "option deterministic 2", &o, "deterministic 2");
    q35_cuda_options_init(&o);
    o.attention = (q35_attn_path)7;
    check_error(&s, "option attention 7", &o, "attention 7");
    q35_cuda_options_init(&o);
    o.delta = (q35_delta_path)3;
    check_error(&s, "option delta 3", &o, "delta 3");
    q35_cuda_options_init(&o);
    o.gemm = (q35_gemm_path)4;
    check_error(&s, "option gemm 4", &o, "gemm 4");
    check_graphs(&s);
    check_kernels_and_switches(&s);
    check_flash_gate(&s);
    check_gemm_swiglu(&s);
    check_prune(&s);
    return q35_suite_end(&s);
}
