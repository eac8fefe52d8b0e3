/* The board's power, its SM clock and its energy beside every benchmark point,
 * from NVML: the driver's libnvidia-ml, opened at run time ($Q35_NVML_LIB,
 * else libnvidia-ml.so.1), so nothing is linked, and where it cannot be opened
 * the benchmarks run without these counters, the context saying why.
 *
 * Why: the prefill's GEMMs run at the board's power limit (the H200 at 700 W:
 * its SM clock's median ~1425 MHz through the 9B's 4k prefill against ~1980 in
 * a kernel's short benchmark, bench/results/), where only a change that spends
 * fewer joules a token makes the prefill faster. These counters say, for every
 * point, at what clock it ran, whether the power limit held it there, and what
 * it cost in energy, in the same JSON as its time.
 *
 * Each run of a point (each repetition; Google Benchmark's runs that size the
 * iterations too, of which only the last is reported) is measured over its
 * loop's wall time, from its first q35_bench_keep_running to the call that
 * ends the loop (the shim's run hooks, bench/shim.h): the host's gaps between
 * iterations are in it, so for launches of microseconds these describe the
 * loop, not the kernel alone. Counters (plain values):
 *
 *   gpu_j           joules an iteration: the board's energy counter
 *                   (nvmlDeviceGetTotalEnergyConsumption, mJ) over the loop,
 *                   divided by its iterations
 *   gpu_w           the loop's mean board power, W: that energy over the
 *                   loop's wall time
 *   sm_mhz          the median of the SM clock (nvmlDeviceGetClockInfo)
 *                   sampled every Q35_POWER_SAMPLE_MS by a thread through
 *                   the loop, and once as it ends
 *   power_capped    the fraction of those samples whose clock-event reasons
 *                   (nvmlDeviceGetCurrentClocksEventReasons) held the power
 *                   cap: software power cap or hardware power brake
 *   thermal_capped  the fraction held by heat: software or hardware thermal
 *                   slowdown, or hardware slowdown
 *
 * NVML's energy counter moves in coarse steps: over loops of 0.3-0.6 s an
 * H100's gpu_w read 655-750 W against its 700 W limit and gpu_j spread +-10 %
 * between runs of one build (bench/results/, e08c0bc), so compare energy
 * over loops of seconds (--benchmark_min_time=2), not sub-second ones.
 *
 * Tokens per joule: tokens_per_s / gpu_w. A counter NVML cannot give on the
 * device (its energy counter: Volta and later) is left out, never zero.
 * Context: power ("nvml", or why not: "off (--q35_power=0)", "unavailable:
 * ..."), power_limit_w (the enforced limit at start-up), and power_energy /
 * power_reasons where NVML lacks them. */
#ifndef Q35_BENCH_POWER_H
#define Q35_BENCH_POWER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_POWER_SAMPLE_MS 10  /* the sampler thread's period */
#define Q35_POWER_MHZ_BINS 8192 /* the clock's histogram: one bin a MHz, the last taking all above */

/* Opens NVML for the device at PCI bus id `pci_bus_id` (cudaDeviceGetPCIBusId's
 * form; NVML's own works too) and installs the shim's run hooks, unless
 * --q35_power=0 (q35_bench_flags must have run). Records the context above
 * and prints one line on stderr. 0 when installed; -1 when not, the context
 * saying why (the benchmarks then run without these counters). */
int q35_power_attach(const char *pci_bus_id);

/* A run's samples (pure, tested without a GPU): the clock's histogram and the
 * samples held by the power cap and by heat. */
typedef struct q35_power_tally {
    uint32_t mhz[Q35_POWER_MHZ_BINS];
    int64_t clock_samples;  /* samples with a clock */
    int64_t reason_samples; /* samples with clock-event reasons */
    int64_t power_capped, thermal_capped;
} q35_power_tally;

/* Adds a sample: the clock in MHz (negative: none read), the reasons' mask
 * (has_reasons 0: none read). */
void q35_power_tally_add(q35_power_tally *t, int64_t mhz, int has_reasons, unsigned long long reasons);

/* The median clock in MHz (the mean of the two middle samples for an even
 * count), or -1 with no sample. */
double q35_power_tally_median(const q35_power_tally *t);

/* NVML's clock-event reasons (nvml.h's nvmlClocksEventReason*), as the tally
 * counts them. */
#define Q35_NVML_REASON_SW_POWER_CAP 0x4ULL
#define Q35_NVML_REASON_HW_SLOWDOWN 0x8ULL
#define Q35_NVML_REASON_SW_THERMAL 0x20ULL
#define Q35_NVML_REASON_HW_THERMAL 0x40ULL
#define Q35_NVML_REASON_HW_POWER_BRAKE 0x80ULL
#define Q35_NVML_REASONS_POWER (Q35_NVML_REASON_SW_POWER_CAP | Q35_NVML_REASON_HW_POWER_BRAKE)
#define Q35_NVML_REASONS_THERMAL (Q35_NVML_REASON_SW_THERMAL | Q35_NVML_REASON_HW_THERMAL | Q35_NVML_REASON_HW_SLOWDOWN)

#ifdef __cplusplus
}
#endif

#endif /* Q35_BENCH_POWER_H */
