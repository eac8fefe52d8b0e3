/* The device a GPU suite runs on, read from its environment:
 *   1. ctest's resource allocation, when ctest runs with --resource-spec-file
 *      (tools/gpu-resource-spec.sh writes one; every GPU suite declares
 *      RESOURCE_GROUPS gpus:1): CTEST_RESOURCE_GROUP_COUNT >= 1 and
 *      CTEST_RESOURCE_GROUP_0_GPUS = "id:N,slots:1" give device N;
 *   2. else $Q35_DEVICE;
 *   3. else 0.
 * Numbers are CUDA ordinals, so CUDA_VISIBLE_DEVICES applies beneath them.
 * Pure C (no CUDA), so the CPU tests check every rule. */
#ifndef Q35_PARITY_DEVICE_ENV_H
#define Q35_PARITY_DEVICE_ENV_H

#include "core/error.h"

/* The environment's values (NULL when unset). */
typedef struct q35_device_env {
    const char *group_count; /* CTEST_RESOURCE_GROUP_COUNT */
    const char *group0_gpus; /* CTEST_RESOURCE_GROUP_0_GPUS */
    const char *q35_device;  /* Q35_DEVICE */
} q35_device_env;

q35_device_env q35_device_env_get(void); /* getenv of each */

/* The ordinal (>= 0); *source (may be NULL) names where it came from: "ctest
 * resource", "Q35_DEVICE" or "default". -1 with the variable and its value in
 * err when one is malformed. */
int q35_device_from_env(const q35_device_env *env, const char **source, q35_error *err);

#endif /* Q35_PARITY_DEVICE_ENV_H */
