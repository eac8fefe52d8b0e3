/* The power counters' statistics (bench/power.h) without a GPU: the median
 * clock from the histogram (odd and even counts, repeated values, the last
 * bin taking all above, none read), and the samples held by the power cap and
 * by heat counted over the samples that had reasons. */
#include "bench/power.h"

#include <stdio.h>
#include <stdlib.h>

static int g_fails;

static void expect(int ok, const char *what)
{
    printf("%s  %s\n", ok ? "PASS" : "FAIL", what);
    g_fails += !ok;
}

int main(void)
{
    q35_power_tally *t = calloc(1, sizeof *t);
    if (!t)
        return 1;
    expect(q35_power_tally_median(t) == -1.0, "no sample: median -1");

    q35_power_tally_add(t, 1980, 0, 0);
    expect(q35_power_tally_median(t) == 1980.0, "one sample: itself");
    q35_power_tally_add(t, 1410, 0, 0);
    expect(q35_power_tally_median(t) == 1695.0, "two samples: their mean");
    q35_power_tally_add(t, 1425, 0, 0);
    expect(q35_power_tally_median(t) == 1425.0, "three (1410, 1425, 1980): the middle one");
    q35_power_tally_add(t, 1425, 0, 0);
    expect(q35_power_tally_median(t) == 1425.0, "four (1410, 1425, 1425, 1980): the mean of the two 1425s");
    q35_power_tally_add(t, -1, 0, 0);
    expect(t->clock_samples == 4 && q35_power_tally_median(t) == 1425.0, "a sample without a clock is not counted");
    expect(t->reason_samples == 0 && t->power_capped == 0, "samples without reasons count no reason");

    q35_power_tally *u = calloc(1, sizeof *u);
    if (!u)
        return 1;
    q35_power_tally_add(u, 100000, 0, 0);
    q35_power_tally_add(u, 100000, 0, 0);
    q35_power_tally_add(u, 0, 0, 0);
    expect(q35_power_tally_median(u) == (double)(Q35_POWER_MHZ_BINS - 1), "clocks past the histogram land in its last bin");

    q35_power_tally *r = calloc(1, sizeof *r);
    if (!r)
        return 1;
    q35_power_tally_add(r, 1400, 1, Q35_NVML_REASON_SW_POWER_CAP);
    q35_power_tally_add(r, 1400, 1, Q35_NVML_REASON_HW_POWER_BRAKE | Q35_NVML_REASON_SW_THERMAL);
    q35_power_tally_add(r, 1900, 1, 0x1ULL); /* idle: neither */
    q35_power_tally_add(r, 1900, 1, 0x10ULL); /* sync boost: neither */
    q35_power_tally_add(r, 1300, 1, Q35_NVML_REASON_HW_SLOWDOWN);
    q35_power_tally_add(r, -1, 1, Q35_NVML_REASON_HW_THERMAL); /* reasons without a clock count */
    expect(r->reason_samples == 6, "six samples with reasons");
    expect(r->power_capped == 2, "power: the software cap and the hardware brake (2 of 6)");
    expect(r->thermal_capped == 3, "heat: software and hardware thermal, hardware slowdown (3 of 6)");
    expect(r->clock_samples == 5 && q35_power_tally_median(r) == 1400.0, "the median over the five clocks");

    free(t);
    free(u);
    free(r);
    if (g_fails) {
        printf("%d check(s) failed\n", g_fails);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
