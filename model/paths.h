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
} q35_path_env;

q35_path_env q35_path_env_get(void); /* getenv of each */

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
    const char *flash_variant;  /* $Q35_FLASH_VARIANT, a name the load looks up (NULL: the default) */
    int64_t max_seq;
} q35_path_choice;

/* The device ordinal: the option (>= 0), else $Q35_DEVICE, else 0. -1 on a
 * negative option below -1; a malformed $Q35_DEVICE is a warning (device 0). */
int q35_paths_device(const q35_cuda_options *o, const q35_path_env *env, char *log, size_t cap, q35_error *err);

/* Resolves the rest for a device that can (flash_supported) or cannot (then
 * flash_why says why) run the flash kernel, unified or not. -1 on an option out
 * of its range (chunk_rows or max_seq negative, an enum value unknown). */
int q35_paths_resolve(q35_path_choice *c, const q35_cuda_options *o, const q35_path_env *env, bool flash_supported,
                      const char *flash_why, bool unified, char *log, size_t cap, q35_error *err);

/* The delta rule a choice runs on GEMM `gemm`: as pinned, else chunked on the
 * f16 GEMM path and the scan on the f32 one (the exact path stays exact);
 * always the scan when deterministic. */
q35_delta_path q35_paths_delta_for(const q35_path_choice *c, q35_gemm_path gemm);

/* Appends one line to log (and, unless quiet, prints it on stderr). */
void q35_paths_note(char *log, size_t cap, bool quiet, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif /* Q35_PATHS_H */
