#include "device_env.h"

#include <stdlib.h>
#include <string.h>

q35_device_env q35_device_env_get(void)
{
    return (q35_device_env){getenv("CTEST_RESOURCE_GROUP_COUNT"), getenv("CTEST_RESOURCE_GROUP_0_GPUS"),
                            getenv("Q35_DEVICE")};
}

/* s[0..n) as a whole decimal number >= 0 (at most 1 << 20); -1 when it is not. */
static int ordinal(const char *s, size_t n)
{
    if (n == 0 || n > 7)
        return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = 10 * v + (s[i] - '0');
    }
    return v <= 1 << 20 ? v : -1;
}

/* The id of the first resource in "id:N,slots:S[;id:...]" (fields in any order). */
static int resource_id(const char *gpus)
{
    const size_t entry = strcspn(gpus, ";");
    for (size_t at = 0; at < entry;) {
        const size_t field = strcspn(gpus + at, ",;");
        if (field > 3 && strncmp(gpus + at, "id:", 3) == 0)
            return ordinal(gpus + at + 3, field - 3);
        at += field + 1;
    }
    return -1;
}

int q35_device_from_env(const q35_device_env *env, const char **source, q35_error *err)
{
    const char *from = "default";
    int dev = 0;
    const int groups = env->group_count ? ordinal(env->group_count, strlen(env->group_count)) : 0;
    if (groups < 0)
        return q35_fail(err, "CTEST_RESOURCE_GROUP_COUNT='%s' is not a count", env->group_count);
    if (groups > 0) {
        if (!env->group0_gpus)
            return q35_fail(err, "CTEST_RESOURCE_GROUP_COUNT=%d but CTEST_RESOURCE_GROUP_0_GPUS is unset (the suite "
                                 "declares RESOURCE_GROUPS gpus:1)", groups);
        dev = resource_id(env->group0_gpus);
        if (dev < 0)
            return q35_fail(err, "CTEST_RESOURCE_GROUP_0_GPUS='%s' holds no id:N (N a device ordinal)",
                            env->group0_gpus);
        from = "ctest resource";
    } else if (env->q35_device) {
        dev = ordinal(env->q35_device, strlen(env->q35_device));
        if (dev < 0)
            return q35_fail(err, "Q35_DEVICE='%s' is not a device ordinal", env->q35_device);
        from = "Q35_DEVICE";
    }
    if (source)
        *source = from;
    return dev;
}
