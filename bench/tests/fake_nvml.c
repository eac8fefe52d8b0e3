/* A stand-in for the driver's libnvidia-ml with the calls bench/power.c makes,
 * for its test without a GPU (bench/tests/power.sh): one device, PCI bus id
 * 0000:01:00.0, drawing 400 W (its energy counter the monotonic clock's
 * seconds since the first call times 400 000 mJ), SM clock 1500 MHz, held by
 * the software power cap, limit 700 W. It exports the clock-event reasons
 * under their older name only (nvmlDeviceGetCurrentClocksThrottleReasons), as
 * drivers before r535 do, so the test sees power.c's fallback.
 * $FAKE_NVML_NO_ENERGY=1: the energy counter answers Not Supported, as before
 * Volta; $FAKE_NVML_INIT_FAIL=1: nvmlInit_v2 fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;
enum { OK = 0, UNINITIALIZED = 1, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6 };

static struct nvml_device_st {
    int unused;
} g_device;
static double g_base = -1.0;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int env_on(const char *name)
{
    const char *v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

/* the prototypes here are the definitions the loader finds */
nvml_return nvmlInit_v2(void);
nvml_return nvmlShutdown(void);
const char *nvmlErrorString(nvml_return rc);
nvml_return nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_device *dev);
nvml_return nvmlDeviceGetTotalEnergyConsumption(nvml_device dev, unsigned long long *mj);
nvml_return nvmlDeviceGetClockInfo(nvml_device dev, int type, unsigned *mhz);
nvml_return nvmlDeviceGetEnforcedPowerLimit(nvml_device dev, unsigned *mw);
nvml_return nvmlDeviceGetCurrentClocksThrottleReasons(nvml_device dev, unsigned long long *reasons);

nvml_return nvmlInit_v2(void)
{
    if (env_on("FAKE_NVML_INIT_FAIL"))
        return UNINITIALIZED;
    if (g_base < 0.0)
        g_base = now();
    return OK;
}

nvml_return nvmlShutdown(void)
{
    return OK;
}

const char *nvmlErrorString(nvml_return rc)
{
    switch (rc) {
    case OK:
        return "Success";
    case UNINITIALIZED:
        return "Uninitialized";
    case INVALID_ARGUMENT:
        return "Invalid Argument";
    case NOT_SUPPORTED:
        return "Not Supported";
    case NOT_FOUND:
        return "Not Found";
    default:
        return "Unknown Error";
    }
}

nvml_return nvmlDeviceGetHandleByPciBusId_v2(const char *pci, nvml_device *dev)
{
    if (!pci || !dev)
        return INVALID_ARGUMENT;
    if (strcmp(pci, "0000:01:00.0") != 0)
        return NOT_FOUND;
    *dev = &g_device;
    return OK;
}

nvml_return nvmlDeviceGetTotalEnergyConsumption(nvml_device dev, unsigned long long *mj)
{
    if (dev != &g_device || !mj)
        return INVALID_ARGUMENT;
    if (env_on("FAKE_NVML_NO_ENERGY"))
        return NOT_SUPPORTED;
    *mj = (unsigned long long)((now() - g_base) * 400000.0);
    return OK;
}

nvml_return nvmlDeviceGetClockInfo(nvml_device dev, int type, unsigned *mhz)
{
    if (dev != &g_device || !mhz || type != 1) /* NVML_CLOCK_SM */
        return INVALID_ARGUMENT;
    *mhz = 1500;
    return OK;
}

nvml_return nvmlDeviceGetEnforcedPowerLimit(nvml_device dev, unsigned *mw)
{
    if (dev != &g_device || !mw)
        return INVALID_ARGUMENT;
    *mw = 700000;
    return OK;
}

nvml_return nvmlDeviceGetCurrentClocksThrottleReasons(nvml_device dev, unsigned long long *reasons)
{
    if (dev != &g_device || !reasons)
        return INVALID_ARGUMENT;
    *reasons = 0x4; /* nvmlClocksEventReasonSwPowerCap */
    return OK;
}
