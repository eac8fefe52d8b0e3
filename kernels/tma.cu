/* TMA tensor maps through the driver entry point (kernels/tma.h). */
#include "kernels/tma.h"
#include "kernels/cuda.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

static_assert(sizeof(q35_tma_map) == sizeof(CUtensorMap), "q35_tma_map holds a CUtensorMap");
static_assert(alignof(q35_tma_map) >= alignof(CUtensorMap), "q35_tma_map is aligned as a CUtensorMap");

/* cuTensorMapEncodeTiled of the driver, looked up once (NULL on failure, with
 * the reason in err). */
static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled(const char *who, q35_error *err)
{
    static PFN_cuTensorMapEncodeTiled_v12000 fn;
    if (fn)
        return fn;
    void *p = NULL;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (Q35_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                                        &found),
                       err))
        return NULL;
    if (found != cudaDriverEntryPointSuccess || !p) {
        q35_fail(err, "%s: the driver has no cuTensorMapEncodeTiled (query result %d)", who, (int)found);
        return NULL;
    }
    fn = (PFN_cuTensorMapEncodeTiled_v12000)p;
    return fn;
}

/* Either element type's map: esize bytes an element (2: f16, 4: f32). */
static int tma_map(q35_tma_map *map, const void *base, int esize, CUtensorMapDataType type, int rank,
                   const uint64_t *dims, const uint64_t *strides, const uint32_t *box, int swizzle128, const char *who,
                   q35_error *err)
{
    const char *tn = esize == 2 ? "f16" : "f32";
    if (rank != 2 && rank != 3)
        return q35_fail(err, "%s: a tensor map of rank %d (2 or 3)", who, rank);
    if ((uintptr_t)base % 16)
        return q35_fail(err, "%s: TMA needs a 16-byte aligned base, not %p", who, base);
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > ((uint64_t)1 << 32))
            return q35_fail(err, "%s: TMA dimension %d of %llu elements (1 .. 2^32)", who, i,
                            (unsigned long long)dims[i]);
        if (box[i] < 1 || box[i] > 256)
            return q35_fail(err, "%s: TMA box side %d of %u elements (1 .. 256)", who, i, box[i]);
        if (i > 0 && (strides[i - 1] % 16 || strides[i - 1] >= ((uint64_t)1 << 40)))
            return q35_fail(err, "%s: TMA stride %d of %llu bytes (a multiple of 16 below 2^40)", who, i - 1,
                            (unsigned long long)strides[i - 1]);
    }
    if (box[0] * esize % 16 || (swizzle128 && box[0] * esize > 128))
        return q35_fail(err, "%s: TMA inner box of %u %s (a multiple of 16 bytes%s)", who, box[0], tn,
                        swizzle128 ? ", at most 128 with the 128-byte swizzle" : "");
    PFN_cuTensorMapEncodeTiled_v12000 encode = encode_tiled(who, err);
    if (!encode)
        return -1;
    const cuuint32_t unit[3] = {1, 1, 1};
    const CUresult rc = encode((CUtensorMap *)map, type, (cuuint32_t)rank, (void *)base, (const cuuint64_t *)dims,
                               (const cuuint64_t *)strides, (const cuuint32_t *)box, unit,
                               CU_TENSOR_MAP_INTERLEAVE_NONE,
                               swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                               CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (rc != CUDA_SUCCESS)
        return q35_fail(err, "%s: cuTensorMapEncodeTiled failed (CUresult %d) for a rank-%d %s map, inner dim %llu, "
                             "box %u x %u",
                        who, (int)rc, rank, tn, (unsigned long long)dims[0], box[0], box[1]);
    return 0;
}

int q35_tma_map_f16(q35_tma_map *map, const void *base, int rank, const uint64_t *dims, const uint64_t *strides,
                    const uint32_t *box, int swizzle128, const char *who, q35_error *err)
{
    return tma_map(map, base, 2, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rank, dims, strides, box, swizzle128, who, err);
}

int q35_tma_map_f32(q35_tma_map *map, const void *base, int rank, const uint64_t *dims, const uint64_t *strides,
                    const uint32_t *box, int swizzle128, const char *who, q35_error *err)
{
    return tma_map(map, base, 4, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank, dims, strides, box, swizzle128, who, err);
}

int q35_sm90_persistent_blocks(int device, int64_t items, int cluster, int64_t *blocks, q35_error *err)
{
    int sms = 0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), err))
        return -1;
    const int64_t fit = sms / cluster * cluster;
    *blocks = fit < items ? fit : items;
    return 0;
}

int q35_sm90_device_ok(int device, int built, int smem_bytes, const char *who, q35_error *why)
{
    int major = 0, minor = 0, optin = 0;
    if (!built)
        return q35_fail(why, "%s: this build has no sm_90a code (CMake option Q35_SM90 is off: "
                             "CMAKE_CUDA_ARCHITECTURES holds no 90)",
                        who),
               0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), why))
        return 0;
    if (major != 9 || minor != 0)
        return q35_fail(why, "%s: needs compute capability 9.0 (sm_90a: wgmma, TMA, setmaxnreg); device %d is %d.%d",
                        who, device, major, minor),
               0;
    if (optin < smem_bytes)
        return q35_fail(why, "%s: needs %d bytes of shared memory per block; device %d allows %d", who, smem_bytes,
                        device, optin),
               0;
    return 1;
}
