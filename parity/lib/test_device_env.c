/* Which device a GPU suite picks from its environment (parity/device_env.h):
 * ctest's resource allocation over $Q35_DEVICE over 0, and every malformed
 * value refused with its name. No GPU needed. */
#include "device_env.h"
#include "harness.h"

#include <stdio.h>
#include <string.h>

typedef struct env_case {
    const char *what;
    q35_device_env env;  /* group count, group 0 gpus, Q35_DEVICE */
    int want;            /* the ordinal, or -1: refused */
    const char *source;  /* where it came from, or (refused) a word the message holds */
} env_case;

static const env_case k_cases[] = {
    {"nothing set: device 0", {NULL, NULL, NULL}, 0, "default"},
    {"Q35_DEVICE=3", {NULL, NULL, "3"}, 3, "Q35_DEVICE"},
    {"ctest's allocation id:2 wins over Q35_DEVICE=5", {"1", "id:2,slots:1", "5"}, 2, "ctest resource"},
    {"fields in either order: slots:1,id:7", {"1", "slots:1,id:7", NULL}, 7, "ctest resource"},
    {"two resources in the group: the first", {"1", "id:4,slots:1;id:5,slots:1", NULL}, 4, "ctest resource"},
    {"a two-digit id", {"1", "id:12,slots:2", NULL}, 12, "ctest resource"},
    {"group count 0: no allocation, Q35_DEVICE=1", {"0", "id:3,slots:1", "1"}, 1, "Q35_DEVICE"},
    {"Q35_DEVICE not a number", {NULL, NULL, "gpu1"}, -1, "Q35_DEVICE='gpu1'"},
    {"Q35_DEVICE negative", {NULL, NULL, "-1"}, -1, "Q35_DEVICE='-1'"},
    {"Q35_DEVICE empty", {NULL, NULL, ""}, -1, "Q35_DEVICE=''"},
    {"group count not a number", {"x", "id:1,slots:1", NULL}, -1, "CTEST_RESOURCE_GROUP_COUNT='x'"},
    {"group count 1 without its GPUs", {"1", NULL, NULL}, -1, "CTEST_RESOURCE_GROUP_0_GPUS is unset"},
    {"an empty id", {"1", "id:,slots:1", NULL}, -1, "holds no id:N"},
    {"an id that is not a number", {"1", "id:a1,slots:1", NULL}, -1, "holds no id:N"},
    {"no id field", {"1", "slots:1", NULL}, -1, "holds no id:N"},
    {"an id only in the second resource", {"1", "slots:1;id:3,slots:1", NULL}, -1, "holds no id:N"},
};

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "the GPU suites' device from the environment (ctest resources, Q35_DEVICE)", 0);
    for (size_t i = 0; i < sizeof k_cases / sizeof *k_cases; i++) {
        const env_case *c = &k_cases[i];
        q35_error err = {{0}};
        const char *source = "(none)";
        const int got = q35_device_from_env(&c->env, &source, &err);
        const bool ok = c->want >= 0 ? got == c->want && strcmp(source, c->source) == 0
                                     : got == -1 && strstr(err.msg, c->source) != NULL;
        q35_case(&s, ok, "%s: got %d (%s)", c->what, got, got >= 0 ? source : err.msg);
    }
    return q35_suite_end(&s);
}
