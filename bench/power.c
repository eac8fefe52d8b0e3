/* NVML's power, clock and energy beside every benchmark point (power.h). */
#define _POSIX_C_SOURCE 200809L
#include "bench/power.h"
#include "bench/shim.h"
#include "core/parallel.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* NVML's C interface, as nvml.h declares it (the few calls used here): the
 * toolkit's header is not installed everywhere the driver is, and the library
 * is opened at run time, so the prototypes are written out. */
typedef int nvml_return;                          /* nvmlReturn_t; NVML_SUCCESS 0 */
typedef struct nvml_device_st *nvml_device;       /* nvmlDevice_t */
enum { NVML_OK = 0, NVML_CLOCK_SM = 1 };          /* NVML_SUCCESS, nvmlClockType_t's NVML_CLOCK_SM */

static struct {
    void *lib;
    nvml_device dev;
    nvml_return (*init)(void);
    nvml_return (*shutdown)(void);
    bool initialized;
    const char *(*error_string)(nvml_return);
    nvml_return (*by_pci)(const char *, nvml_device *);
    nvml_return (*energy)(nvml_device, unsigned long long *);   /* mJ since the driver loaded */
    nvml_return (*clock)(nvml_device, int, unsigned *);          /* MHz */
    nvml_return (*limit)(nvml_device, unsigned *);               /* mW */
    nvml_return (*reasons)(nvml_device, unsigned long long *);
    bool has_energy, has_reasons;
} g_nvml;

void q35_power_tally_add(q35_power_tally *t, int64_t mhz, int has_reasons, unsigned long long reasons)
{
    if (mhz >= 0) {
        t->mhz[mhz < Q35_POWER_MHZ_BINS ? mhz : Q35_POWER_MHZ_BINS - 1]++;
        t->clock_samples++;
    }
    if (has_reasons) {
        t->reason_samples++;
        t->power_capped += (reasons & Q35_NVML_REASONS_POWER) != 0;
        t->thermal_capped += (reasons & Q35_NVML_REASONS_THERMAL) != 0;
    }
}

/* The MHz of the k-th sample in order (0-based), k < clock_samples. */
static int64_t tally_at(const q35_power_tally *t, int64_t k)
{
    int64_t seen = 0;
    for (int64_t b = 0; b < Q35_POWER_MHZ_BINS; b++) {
        seen += t->mhz[b];
        if (seen > k)
            return b;
    }
    return Q35_POWER_MHZ_BINS - 1; /* not reached while k < clock_samples */
}

double q35_power_tally_median(const q35_power_tally *t)
{
    const int64_t n = t->clock_samples;
    if (n <= 0)
        return -1.0;
    return 0.5 * (double)(tally_at(t, (n - 1) / 2) + tally_at(t, n / 2));
}

/* A symbol of the library into a function pointer (ISO C has no cast between
 * the two: the bits are copied). 0, or -1 when the library lacks it. */
static int symbol(void *fn_ptr, size_t size, const char *name)
{
    void *s = dlsym(g_nvml.lib, name);
    if (!s)
        return -1;
    memcpy(fn_ptr, &s, size);
    return 0;
}
#define SYMBOL(field, name) symbol(&g_nvml.field, sizeof g_nvml.field, name)

static const char *nvml_error(nvml_return rc)
{
    const char *s = g_nvml.error_string ? g_nvml.error_string(rc) : NULL;
    return s ? s : "unknown error";
}

/* One sample of the clock and the reasons into t. */
static void sample(q35_power_tally *t)
{
    unsigned mhz = 0;
    unsigned long long reasons = 0;
    const bool has_clock = g_nvml.clock(g_nvml.dev, NVML_CLOCK_SM, &mhz) == NVML_OK;
    const bool has_reasons = g_nvml.has_reasons && g_nvml.reasons(g_nvml.dev, &reasons) == NVML_OK;
    q35_power_tally_add(t, has_clock ? (int64_t)mhz : -1, has_reasons, reasons);
}

static bool read_energy(unsigned long long *mj)
{
    return g_nvml.has_energy && g_nvml.energy(g_nvml.dev, mj) == NVML_OK;
}

/* A run: its sampler thread, its tally, its energy and time at the start. */
typedef struct power_run {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    bool stop, threaded;
    q35_power_tally tally;
    bool has_e0;
    unsigned long long e0;
    double t0;
} power_run;

static void *sampler(void *arg)
{
    power_run *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        pthread_mutex_unlock(&r->lock);
        sample(&r->tally);
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += Q35_POWER_SAMPLE_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_mutex_lock(&r->lock);
        while (!r->stop && pthread_cond_timedwait(&r->wake, &r->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void *run_begin(void *ctx)
{
    (void)ctx;
    power_run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    /* the sampler thread; without one (refused), the clock is sampled once, as the loop ends */
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) == 0) {
        const bool cond = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 &&
                          pthread_cond_init(&r->wake, &attr) == 0;
        pthread_condattr_destroy(&attr);
        const bool lock = cond && pthread_mutex_init(&r->lock, NULL) == 0;
        r->threaded = lock && pthread_create(&r->thread, NULL, sampler, r) == 0;
        if (lock && !r->threaded)
            pthread_mutex_destroy(&r->lock);
        if (cond && !r->threaded)
            pthread_cond_destroy(&r->wake);
    }
    if (!r->threaded)
        fprintf(stderr, "benchmark: power: no sampler thread: the clock is sampled as the loop ends only\n");
    r->has_e0 = read_energy(&r->e0);
    r->t0 = q35_now();
    return r;
}

static void run_end(void *ctx, void *run, q35_bench_state *st, int64_t iterations)
{
    (void)ctx;
    power_run *r = run;
    if (!r)
        return;
    unsigned long long e1 = 0;
    const bool has_e1 = r->has_e0 && read_energy(&e1);
    const double t1 = q35_now();
    if (r->threaded) {
        pthread_mutex_lock(&r->lock);
        r->stop = true;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        pthread_join(r->thread, NULL);
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
    }
    if (st) {
        sample(&r->tally);
        const double wall = t1 - r->t0;
        if (has_e1 && e1 >= r->e0 && iterations > 0 && wall > 0.0) {
            const double joules = (double)(e1 - r->e0) * 1e-3;
            q35_bench_value(st, "gpu_j", joules / (double)iterations);
            q35_bench_value(st, "gpu_w", joules / wall);
        }
        if (r->tally.clock_samples > 0)
            q35_bench_value(st, "sm_mhz", q35_power_tally_median(&r->tally));
        if (r->tally.reason_samples > 0) {
            q35_bench_value(st, "power_capped", (double)r->tally.power_capped / (double)r->tally.reason_samples);
            q35_bench_value(st, "thermal_capped", (double)r->tally.thermal_capped / (double)r->tally.reason_samples);
        }
    }
    free(r);
}

/* Not installed: the context says why, and stderr. */
__attribute__((format(printf, 1, 2))) static int unavailable(const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    char value[600];
    snprintf(value, sizeof value, "unavailable: %s", why);
    q35_bench_context("power", value);
    fprintf(stderr, "benchmark: power: %s; no power, clock or energy counters\n", value);
    if (g_nvml.initialized && g_nvml.shutdown)
        g_nvml.shutdown();
    if (g_nvml.lib)
        dlclose(g_nvml.lib);
    memset(&g_nvml, 0, sizeof g_nvml);
    return -1;
}

int q35_power_attach(const char *pci_bus_id)
{
    if (!q35_bench_get_options()->power) {
        q35_bench_context("power", "off (--q35_power=0)");
        return -1;
    }
    if (g_nvml.lib)
        return 0; /* attached already */
    const char *env = getenv("Q35_NVML_LIB");
    const char *path = env && *env ? env : "libnvidia-ml.so.1";
    g_nvml.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!g_nvml.lib) {
        const char *e = dlerror();
        return unavailable("cannot open %s (%s)", path, e ? e : "dlopen failed");
    }
    SYMBOL(error_string, "nvmlErrorString");
    SYMBOL(shutdown, "nvmlShutdown");
    static const char *const needed[] = {"nvmlInit_v2", "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetClockInfo",
                                         "nvmlDeviceGetEnforcedPowerLimit"};
    if (SYMBOL(init, needed[0]) || SYMBOL(by_pci, needed[1]) || SYMBOL(clock, needed[2]) || SYMBOL(limit, needed[3]))
        return unavailable("%s lacks one of nvmlInit_v2, nvmlDeviceGetHandleByPciBusId_v2, nvmlDeviceGetClockInfo, "
                           "nvmlDeviceGetEnforcedPowerLimit",
                           path);
    nvml_return rc = g_nvml.init();
    if (rc != NVML_OK)
        return unavailable("nvmlInit_v2: %s", nvml_error(rc));
    g_nvml.initialized = true;
    rc = g_nvml.by_pci(pci_bus_id, &g_nvml.dev);
    if (rc != NVML_OK)
        return unavailable("nvmlDeviceGetHandleByPciBusId_v2(%s): %s", pci_bus_id, nvml_error(rc));
    /* newer drivers name them clock-event reasons, older ones throttle reasons: the same call */
    g_nvml.has_reasons = SYMBOL(reasons, "nvmlDeviceGetCurrentClocksEventReasons") == 0 ||
                         SYMBOL(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons") == 0;
    unsigned long long mj = 0, mask = 0;
    g_nvml.has_energy = SYMBOL(energy, "nvmlDeviceGetTotalEnergyConsumption") == 0;
    if (g_nvml.has_energy && (rc = g_nvml.energy(g_nvml.dev, &mj)) != NVML_OK) {
        g_nvml.has_energy = false;
        q35_bench_context("power_energy", nvml_error(rc));
    } else if (!g_nvml.has_energy) {
        q35_bench_context("power_energy", "the library lacks nvmlDeviceGetTotalEnergyConsumption");
    }
    if (g_nvml.has_reasons && (rc = g_nvml.reasons(g_nvml.dev, &mask)) != NVML_OK) {
        g_nvml.has_reasons = false;
        q35_bench_context("power_reasons", nvml_error(rc));
    } else if (!g_nvml.has_reasons) {
        q35_bench_context("power_reasons", "the library lacks nvmlDeviceGetCurrentClocksEventReasons");
    }
    unsigned mw = 0;
    char buf[64] = "unknown";
    if (g_nvml.limit(g_nvml.dev, &mw) == NVML_OK)
        snprintf(buf, sizeof buf, "%.1f", mw * 1e-3);
    q35_bench_context("power_limit_w", buf);
    q35_bench_context("power", "nvml");
    fprintf(stderr, "benchmark: power: NVML (%s), limit %s W, SM clock sampled every %d ms%s%s\n", path, buf,
            Q35_POWER_SAMPLE_MS, g_nvml.has_energy ? "" : ", no energy counter",
            g_nvml.has_reasons ? "" : ", no clock-event reasons");
    static const q35_bench_run_hooks hooks = {run_begin, run_end, NULL};
    q35_bench_set_run_hooks(&hooks);
    return 0;
}
