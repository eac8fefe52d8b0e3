/* The path choices of the CUDA model (the options and paths of
 * model/cuda_options.h): each option, when set, wins over its environment
 * variable, which wins over the default. An unknown value, or a pick this
 * device or these heads cannot run, is a warning (one line appended to the
 * log), never silently reread. Pure C, so the CPU tests check every rule. */
#ifndef Q35_PATHS_H
#define Q35_PATHS_H

#include "core/error.h"
#include "model/cuda_options.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment's values (NULL when unset). */
typedef struct q35_path_env {
    const char *attention;     /* Q35_PREFILL_ATTENTION */
    const char *gemm;          /* Q35_PREFILL_GEMM */
    const char *chunk_rows;    /* Q35_PREFILL_CHUNK_ROWS */
    const char *deterministic; /* Q35_DETERMINISTIC */
    const char *scores_budget; /* Q35_ATTN_SCORES_BUDGET */
    const char *device;        /* Q35_DEVICE */
    const char *flash_variant; /* Q35_FLASH_VARIANT */
    const char *delta;         /* Q35_PREFILL_DELTA */
    const char *delta_rule_variant;  /* Q35_DELTA_RULE_VARIANT */
    const char *delta_chunk_variant; /* Q35_DELTA_CHUNK_VARIANT */
    const char *gemm_sm90_variant;   /* Q35_GEMM_SM90_VARIANT */
    const char *gemv_q8_variant;     /* Q35_GEMV_Q8_VARIANT */
    const char *flash_kernel;  /* Q35_FLASH_KERNEL */
    const char *gemm_kernel;   /* Q35_GEMM_KERNEL */
    const char *switches;      /* Q35_SWITCHES */
} q35_path_env;

/* The switches: choices that are not a path or a kernel (a fusion, the last
 * layer's pruning, CUDA graphs, a rounding), each named, on or off, set by the
 * option's list over $Q35_SWITCHES's over its default. A list is
 * "name=on|off[,name=on|off...]". */
typedef enum q35_switch {
    Q35_SW_MERGE,       /* the merged projection groups on the fast GEMM paths */
    Q35_SW_SWIGLU,      /* SwiGLU in the sm_90a [gate | up] GEMM's epilogue */
    Q35_SW_PREP,        /* the fused DeltaNet prologue */
    Q35_SW_QK16,        /* q and k in f16 from the fused prologue to the chunked rule */
    Q35_SW_PRUNE,       /* the last layer pruned to the rows whose logits are asked */
    Q35_SW_GATE,        /* the attention output gate in the sm_90a flash kernel's epilogue */
    Q35_SW_GRAPHS,      /* a prefill chunk's layers as CUDA graphs */
    Q35_SW_F16_GU,      /* the f16 path's [gate | up] written in f16 */
    Q35_SW_FP8_GU_BF16, /* the fp8 path's [gate | up] written in bf16 */
    Q35_SW_TUNE_STEADY, /* the tuned GEMM's candidates timed as the prefill runs them */
    Q35_SW_DECODE_GRAPH, /* the decode step as one CUDA graph, captured once and replayed */
    Q35_SW_DECODE_Q8,    /* a decode step's projections with 8-bit activations (kernels/gemv_q8.h) */
    Q35_SW_DECODE_SPLIT, /* a decode step's attention split over the cache (kernels/attention_decode_split.h) */
    Q35_SW_DECODE_PDL,   /* a decode step's 8-bit GEMVs launched early (q35_gemv_q8_group_early) */
    Q35_SW_DECODE_FUSE,  /* a decode step's norms write their 8-bit form too (q35_rmsnorm_q8, ...) */
    Q35_SW_DECODE_ACT_Q8, /* a decode step's ops before an 8-bit GEMV write its 8-bit x over many blocks */
    Q35_SW_DECODE_OVERLAP, /* the decode graph's kernels each launched once the one before has started */
    Q35_SW_COUNT
} q35_switch;

const char *q35_switch_name(q35_switch s);   /* "merge", "swiglu", ...; NULL outside the enum */
bool q35_switch_default(q35_switch s);       /* on or off */

/* Applies list to on[] (each name given: its value). -1 on a malformed item or
 * an unknown name, naming it and listing the names. */
int q35_switches_parse(const char *list, bool on[Q35_SW_COUNT], q35_error *err);

/* Every switch "name (on|off)" into buf, for messages and help. Returns buf. */
char *q35_switches_list(char *buf, size_t cap);

q35_path_env q35_path_env_get(void); /* getenv of each */

/* A kernel variant asked for by name: by the option, or the environment, or
 * neither (the op's default). The load looks the name up (q35_paths_variant). */
typedef struct q35_path_name {
    const char *name;    /* NULL: the op's default */
    const char *option;  /* the option's name ("flash_variant"), when the option set it; else NULL */
    const char *env;     /* the environment variable's ("Q35_FLASH_VARIANT"), when it set it; else NULL */
} q35_path_name;

/* What the options and the environment resolve to: the candidates the capacity
 * plan tries, most preferred first. */
typedef struct q35_path_choice {
    q35_attn_path attention[2]; /* f32 then flash (flash only where it runs), or the one pinned */
    int n_attention;
    q35_gemm_path gemm;         /* F32 or F16 */
    q35_delta_path delta;       /* SCAN or CHUNKED as pinned; DEFAULT: q35_paths_delta_for the GEMM the plan takes */
    int64_t chunk_rows[12];     /* the pinned value alone, or the default halved down to 64 */
    int n_chunk_rows;
    bool deterministic;
    size_t scores_budget;
    q35_path_name flash_variant;       /* the flash kernel's variant */
    q35_path_name delta_rule_variant;  /* the scan's */
    q35_path_name delta_chunk_variant; /* the chunked delta rule's */
    q35_path_name gemm_sm90_variant;   /* the sm_90a GEMM's */
    q35_path_name gemv_q8_variant;     /* the 8-bit-activation GEMV's (decode-q8) */
    q35_flash_kernel flash_kernel;     /* SM90 or MMA as asked; DEFAULT: sm90 where it runs */
    q35_gemm_kernel gemm_kernel;       /* CUBLASLT, CUBLAS or SM90 */
    bool sw[Q35_SW_COUNT];             /* each switch on or off */
    bool sw_named[Q35_SW_COUNT];       /* each switch named by $Q35_SWITCHES or the option (not its default) */
    int64_t max_seq;
} q35_path_choice;

/* The choice's kernel picks and switches written into the paths of a load
 * (flash_sm90 where the sm_90a flash kernel runs here, gemm_sm90 where that
 * GEMM does; the rest of p as the plan made it). A pick this device cannot run
 * is a warning in the log. */
void q35_paths_apply(const q35_path_choice *c, bool flash_sm90_runs, bool gemm_sm90_runs, q35_cuda_paths *p,
                     char *log, size_t cap, bool quiet);

/* The device ordinal: the option (>= 0), else $Q35_DEVICE, else 0. -1 on a
 * negative option below -1; a malformed $Q35_DEVICE is a warning (device 0). */
int q35_paths_device(const q35_cuda_options *o, const q35_path_env *env, char *log, size_t cap, q35_error *err);

/* Resolves the rest for a device that can (flash_supported) or cannot (then
 * flash_why says why) run the flash kernel, unified or not. The defaults are
 * the fast path: the f16 GEMM, flash attention where it runs, the chunked
 * delta rule on it. -1 on an option out of its range (chunk_rows or max_seq
 * negative, an enum value unknown) or an option's switch list malformed or
 * naming an unknown switch; the environment's is a warning. */
int q35_paths_resolve(q35_path_choice *c, const q35_cuda_options *o, const q35_path_env *env, bool flash_supported,
                      const char *flash_why, bool unified, char *log, size_t cap, q35_error *err);

/* The delta rule a choice runs on GEMM `gemm`: as pinned, else chunked on the
 * f16 GEMM path and the scan on the f32 one (the exact path stays exact);
 * always the scan when deterministic. */
q35_delta_path q35_paths_delta_for(const q35_path_choice *c, q35_gemm_path gemm);

/* An op's kernel variants as the path choices see them: its registry's find
 * and name functions (kernels/variant.h), its default here, and whether a
 * variant runs here (NULL: every one does). The load passes the kernels'; the
 * CPU tests pass their own. */
typedef struct q35_path_variants {
    const char *op;                 /* "flash", "delta rule", "delta chunk": what a warning names */
    int (*find)(const char *name);  /* an index, or -1 */
    const char *(*name)(int variant);
    int fallback;                   /* the op's default here */
    int (*runs)(int variant, const void *ctx, q35_error *why); /* 1, or 0 with the reason; NULL: all run */
    const void *ctx;                /* for runs */
} q35_path_variants;

/* The variant a load runs for a name picked by option or environment: its
 * index, or the default (v->fallback) when none is picked. A name the registry
 * does not have is refused when the option gave it (-1, err naming the names it
 * has) and a warning in the log and the default when the environment did; one
 * that cannot run here is a warning and the default. */
int q35_paths_variant(const q35_path_name *pick, const q35_path_variants *v, char *log, size_t cap, bool quiet,
                      q35_error *err);

/* The accuracy tier of paths p in words: deterministic, exact, fast (the
 * default), fp8, or a mix, and what each is held to. */
const char *q35_paths_tier(const q35_cuda_paths *p);

/* Appends one line to log (and, unless quiet, prints it on stderr), every byte a
 * terminal would act on escaped (core/escape.h). */
void q35_paths_note(char *log, size_t cap, bool quiet, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* Q35_PATHS_H */
