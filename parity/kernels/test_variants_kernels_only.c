/* The chunked delta rule's registry in a program that links q35_kernels alone
 * (not q35_kernels_sm90, whose table of sm_90a variants the registry reaches by
 * a weak reference; kernels/variant.h), without a GPU: the weak reference
 * unresolved is no variant, not a crash; the production variants listed are
 * w4 and tb4, numbered 0 and 1, both production; tb4wtkh and tb4wm2kh are
 * not found and not the default;
 * asked for index 2, the launcher refuses, naming the range. */
#include "parity/lib/harness.h"

#include "kernels/delta_chunk.h"

#include <string.h>

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "chunked delta rule registry, q35_kernels alone (no sm_90a table)", 0);
    const int n = q35_delta_chunk_variant_count();
    q35_case(&s,
             n == 2 && q35_delta_chunk_variant_name(0) && strcmp(q35_delta_chunk_variant_name(0), "w4") == 0 &&
                 q35_delta_chunk_variant_name(1) && strcmp(q35_delta_chunk_variant_name(1), "tb4") == 0 &&
                 q35_delta_chunk_variant_name(2) == NULL,
             "%d variants listed: %s %s (want 2: w4 tb4)", n, q35_delta_chunk_variant_name(0),
             n > 1 ? q35_delta_chunk_variant_name(1) : "");
    q35_case(&s,
             q35_delta_chunk_variant_find("tb4wtkh") == -1 && q35_delta_chunk_variant_find("tb4wm2kh") == -1 &&
                 q35_delta_chunk_variant_find("tb4") == 1,
             "tb4wtkh, tb4wm2kh not found (%d, %d), tb4 at 1 (%d)", q35_delta_chunk_variant_find("tb4wtkh"),
             q35_delta_chunk_variant_find("tb4wm2kh"), q35_delta_chunk_variant_find("tb4"));
    q35_case(&s,
             q35_delta_chunk_variant_production(0) == 1 && q35_delta_chunk_variant_production(1) == 1 &&
                 q35_delta_chunk_variant_production(2) == -1,
             "both production, nothing at 2 (%d %d %d)", q35_delta_chunk_variant_production(0),
             q35_delta_chunk_variant_production(1), q35_delta_chunk_variant_production(2));
    q35_case(&s, q35_delta_chunk_variant_default() == 1, "the default tb4 (got %d: %s)",
             q35_delta_chunk_variant_default(), q35_delta_chunk_variant_name(q35_delta_chunk_variant_default()));
    /* refused before any pointer is read or the device asked: the variant is checked first */
    static float dummy[4];
    const q35_delta_dims d = {16, 32, 128, 128};
    q35_error err = {""};
    const int rc = q35_delta_chunk(dummy, 4096, dummy, dummy, dummy, dummy, 4, dummy, dummy, 64, d, dummy,
                                   sizeof dummy, 2, NULL, &err);
    q35_case(&s, rc == -1 && strstr(err.msg, "no variant 2 (0..1)") != NULL, "variant 2 refused: %s", err.msg);
    return q35_suite_end(&s);
}
