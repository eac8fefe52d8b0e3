/* The benchmarks' device: --device N or $Q35_DEVICE, its description in the
 * JSON context, its power counters (power.h), the ceilings measured at
 * start-up (gpu_bench.h). */
#include "bench/gpu_bench.h"
#include "bench/power.h"
#include "kernels/cuda.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void context_int(const char *key, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    q35_bench_context(key, buf);
}

static int attribute(enum cudaDeviceAttr a, int dev, const char *what)
{
    int v = 0;
    q35_bench_check(cudaDeviceGetAttribute(&v, a, dev), what);
    return v;
}

static const char *pci_bus_id(int dev, char *buf, size_t cap)
{
    q35_bench_check(cudaDeviceGetPCIBusId(buf, (int)cap, dev), "cudaDeviceGetPCIBusId");
    return buf;
}

/* The device, its properties and the library versions into the context. */
static void describe_device(int dev)
{
    struct cudaDeviceProp p;
    q35_bench_check(cudaGetDeviceProperties(&p, dev), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0, blas[3] = {0, 0, 0};
    q35_bench_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
    q35_bench_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
    const libraryPropertyType parts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
    for (int i = 0; i < 3; i++)
        if (cublasGetProperty(parts[i], &blas[i]) != CUBLAS_STATUS_SUCCESS)
            blas[i] = -1;
    const int clock_khz = attribute(cudaDevAttrClockRate, dev, "cudaDeviceGetAttribute (clock)");
    const int mem_khz = attribute(cudaDevAttrMemoryClockRate, dev, "cudaDeviceGetAttribute (memory clock)");
    const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, dev, "cudaDeviceGetAttribute (bus width)");
    const int l2 = attribute(cudaDevAttrL2CacheSize, dev, "cudaDeviceGetAttribute (L2)");
    char buf[128];
    q35_bench_context("device", p.name);
    context_int("device_ordinal", dev);
    q35_bench_context("device_pci_bus_id", pci_bus_id(dev, buf, sizeof buf));
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    q35_bench_context("cuda_visible_devices", visible ? visible : "(unset)");
    snprintf(buf, sizeof buf, "sm_%d%d", p.major, p.minor);
    q35_bench_context("device_arch", buf);
    context_int("device_sms", p.multiProcessorCount);
    context_int("device_clock_mhz", clock_khz / 1000);
    context_int("device_memory_clock_mhz", mem_khz / 1000);
    context_int("device_memory_bus_bits", bus_bits);
    /* double data rate: two transfers per memory clock */
    snprintf(buf, sizeof buf, "%.6e", 2.0 * mem_khz * 1e3 * bus_bits / 8.0);
    q35_bench_context("device_memory_peak_bytes_per_s", buf);
    snprintf(buf, sizeof buf, "%.1f", (double)p.totalGlobalMem / (1 << 30));
    q35_bench_context("device_memory_gib", buf);
    snprintf(buf, sizeof buf, "%.1f", (double)l2 / (1 << 20));
    q35_bench_context("device_l2_mib", buf);
    snprintf(buf, sizeof buf, "%d.%d", driver / 1000, (driver % 1000) / 10);
    q35_bench_context("cuda_driver", buf);
    snprintf(buf, sizeof buf, "%d.%d", runtime / 1000, (runtime % 1000) / 10);
    q35_bench_context("cuda_runtime", buf);
    snprintf(buf, sizeof buf, "%d.%d", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
    q35_bench_context("cuda_toolkit_built", buf);
    snprintf(buf, sizeof buf, "%d.%d.%d", blas[0], blas[1], blas[2]);
    q35_bench_context("cublas", buf);
    fprintf(stderr, "benchmark: device %d: %s (%d SMs, %.1f GiB, PCI %s; CUDA_VISIBLE_DEVICES %s)\n", dev, p.name,
            p.multiProcessorCount, (double)p.totalGlobalMem / (1 << 30), pci_bus_id(dev, buf, sizeof buf),
            visible ? visible : "unset");
}

/* --device N, else $Q35_DEVICE, else 0; -1 (printed) when out of range or malformed. */
static int pick_device(int count)
{
    int dev = q35_bench_get_options()->device;
    const char *env = getenv("Q35_DEVICE");
    if (dev < 0 && env) {
        char *end = NULL;
        const long v = strtol(env, &end, 10);
        if (end == env || *end || v < 0 || v > 1 << 20) {
            fprintf(stderr, "benchmark: Q35_DEVICE='%s' is not a device ordinal\n", env);
            return -1;
        }
        dev = (int)v;
    }
    if (dev < 0)
        dev = 0;
    if (dev >= count) {
        fprintf(stderr, "benchmark: device %d asked for (%s), but %d device(s) are visible\n", dev,
                q35_bench_get_options()->device >= 0 ? "--device" : "Q35_DEVICE", count);
        return -1;
    }
    return dev;
}

int q35_bench_gpu_init(int *argc, char **argv)
{
    if (q35_bench_flags(argc, argv))
        return -1;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        fprintf(stderr, "benchmark: no usable CUDA device\n");
        return -1;
    }
    const int dev = pick_device(n);
    if (dev < 0)
        return -1;
    q35_bench_check(cudaSetDevice(dev), "cudaSetDevice");
    describe_device(dev);
    const q35_bench_options *o = q35_bench_get_options();
    if (!o->listing) {
        char pci[64];
        q35_power_attach(pci_bus_id(dev, pci, sizeof pci)); /* or the context says why not */
    }
    if (o->ceilings && !o->listing)
        q35_bench_measure_ceilings();
    return 0;
}

int q35_bench_gpu_init_blas(int *argc, char **argv, q35_blas *blas)
{
    q35_error err = {{0}};
    if (q35_bench_gpu_init(argc, argv))
        return -1;
    if (q35_blas_create(blas, NULL, &err)) {
        fprintf(stderr, "benchmark: %s\n", err.msg);
        return -1;
    }
    return 0;
}
