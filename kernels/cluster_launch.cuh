/* A cudaLaunchKernelEx configuration with thread-block clusters of `cluster`
 * blocks along x (sm_90+; none when cluster is 1), shared by the attention
 * kernels that split one row's work over a cluster, the sm_90a GEMM's and the
 * chunked delta rule's multicast kernels. Use it in place:
 * cfg points at its own attributes. early() lets the kernel start before the
 * grid launched before it in the stream has finished (programmatic stream
 * serialization: the kernel waits for it with griddepcontrol.wait, that grid
 * lets it start with griddepcontrol.launch_dependents; kernels/sm90.cuh). */
#ifndef Q35_KERNELS_CLUSTER_LAUNCH_CUH
#define Q35_KERNELS_CLUSTER_LAUNCH_CUH

#include <cuda_runtime.h>

struct q35_cluster_launch {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr[2];

    q35_cluster_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, unsigned cluster)
        : cfg(), attr()
    {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.gridDim = grid;
        cfg.blockDim = block;
        cfg.dynamicSmemBytes = smem;
        cfg.stream = stream;
        cfg.attrs = attr;
        cfg.numAttrs = cluster > 1 ? 1 : 0;
    }
    void early()
    {
        attr[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        attr[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.numAttrs++;
    }
    q35_cluster_launch(const q35_cluster_launch &) = delete;
    q35_cluster_launch &operator=(const q35_cluster_launch &) = delete;
};

/* Whether kernel fn runs with clusters here: a device of compute capability
 * `major` >= 9 and code compiled for sm_90 or newer (a build for older
 * architectures only would JIT their PTX, where the cluster paths are stubs). */
static inline bool q35_clusters_usable(const void *fn, int major)
{
    cudaFuncAttributes a;
    if (major < 9)
        return false;
    if (cudaFuncGetAttributes(&a, fn) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.ptxVersion >= 90;
}

#endif /* Q35_KERNELS_CLUSTER_LAUNCH_CUH */
