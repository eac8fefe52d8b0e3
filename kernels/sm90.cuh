/* The sm_90a (Hopper) PTX the wgmma/TMA kernels are built from
 * (kernels/attention_flash_sm90.cu, parity/kernels/sm90_probe.cu), each a thin
 * inline-PTX wrapper named after its instruction (PTX ISA 8.x: wgmma.mma_async,
 * cp.async.bulk.tensor, mbarrier, setmaxnreg):
 *
 *   shared memory   q35_sm90_smem (a generic pointer to its 32-bit shared address),
 *                   q35_sw128 (the 128-byte swizzle of a [rows][64] f16 box, as
 *                   TMA's CU_TENSOR_MAP_SWIZZLE_128B writes it: 16-byte chunk c of
 *                   row r at chunk c ^ (r % 8); boxes 1024-byte aligned);
 *   descriptors     q35_gmma_desc: the 64-bit shared-memory matrix descriptor
 *                   (start address >> 4 in bits 0-13, leading byte offset >> 4
 *                   in 16-29, stride byte offset >> 4 in 32-45, base offset 0 in
 *                   49-51, layout type 1 = SWIZZLE_128B in 62-63);
 *   wgmma           fence / commit_group / wait_group, SS m64n64k16 (both
 *                   operands K-major in shared memory; _first: D written
 *                   only, scale-d false), SS m64n256k16 (A K-major, B K- or
 *                   MN-major), SS m64n32k16 (A and B each K- or MN-major),
 *                   RS m64n{64,128,256}k16
 *                   (A from registers, B from shared memory, K- or MN-major),
 *                   f32 += f16 * f16; q35_reg_fence (keeps the compiler from
 *                   moving accumulator reads and writes across an async wgmma);
 *   mbarrier        init, arrive, arrive.expect_tx, try_wait.parity (a bounded
 *                   spin: after 20 s it traps, so a lost arrival fails the
 *                   launch instead of hanging it), fence.mbarrier_init;
 *   clusters        the block's rank, the cluster barrier, mapa (another
 *                   block's shared address), a remote mbarrier arrival;
 *   TMA             2-D and 3-D tile loads (cp.async.bulk.tensor, completion
 *                   counted on an mbarrier; 2-D also multicast to the blocks
 *                   of a cluster), fence.proxy.async (generic shared
 *                   memory writes made visible to the async proxy: wgmma, TMA);
 *   grids at once   griddepcontrol (launch_dependents, wait), a flag published
 *                   with release and waited for with acquire across grids;
 *   registers       setmaxnreg inc / dec (warp-group register reallocation);
 *   misc            named barriers (sync, arrive), ex2.approx, f16x2 packing,
 *                   stmatrix (x4, transposed: fragments to a K-major operand).
 *
 * Canonical layouts (PTX ISA "Shared Memory Matrix Layout", 128-byte swizzle,
 * f16, T = 8 elements = 16 bytes):
 *   K-major   ((8,m),(T,2k)):((8T,SBO),(1,T)): rows of 64 K-values (128 bytes),
 *             8-row atoms of 1024 bytes, SBO = 1024 between atoms, LBO unused;
 *             a k16 step inside the 64-wide box advances the start address by
 *             32 bytes, the next box by its size;
 *   MN-major  ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)): rows of 64 N-values (one
 *             K index each), 8 K rows an atom; LBO = the byte step between
 *             64-wide N blocks, SBO = between 8-row K atoms (the PTX ISA's
 *             reading; parity/kernels/test_kernels_sm90.c tries both orders).
 * Every wrapper compiles only in the sm_90a device pass (Q35_SM90A_CODE);
 * elsewhere the kernels that use them are stubs that trap. griddepcontrol's
 * two are the exception: plain sm_90, no-ops below it. */
#ifndef Q35_KERNELS_SM90_CUH
#define Q35_KERNELS_SM90_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define Q35_SM90A_CODE 1
#endif

/* Byte offset of f16 element (row, col) (col < 64) in a 128-byte-swizzled box
 * [rows][64] (host and device: the probes read TMA's image with it). */
__host__ __device__ __forceinline__ uint32_t q35_sw128(int row, int col)
{
    return (uint32_t)(row * 128 + ((((col >> 3) ^ row) & 7) << 4) + (col & 7) * 2);
}

/* ---- grids that run at once (programmatic dependent launch) ------------------------- */

/* These two are plain sm_90 (no sm_90a feature): defined in every device pass,
 * no-ops below sm_90, where no grid is launched early. */

/* This block lets the grid launched after it with programmatic stream
 * serialization start (once every block of this grid has said so or left). */
__device__ __forceinline__ void q35_grid_launch_dependents(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

/* Waits until the grids this one was launched early after have completed, their
 * writes visible. */
__device__ __forceinline__ void q35_grid_dependency_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

/* At a kernel's start, before any memory access: the grid after it may
 * start (once every block of this one has said so), then the grid before it
 * done and its writes seen where this one was launched early (decode-pdl's
 * GEMVs, decode-overlap's programmatic graph edges); a no-op otherwise. */
__device__ __forceinline__ void q35_grid_chain(void)
{
    q35_grid_launch_dependents();
    q35_grid_dependency_wait();
}

#ifdef Q35_SM90A_CODE

/* ---- shared memory ------------------------------------------------------------------ */

__device__ __forceinline__ uint32_t q35_sm90_smem(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* The descriptor of a 128-byte-swizzled operand at shared address addr. */
__device__ __forceinline__ uint64_t q35_gmma_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFF) >> 4) | (uint64_t)((lbo >> 4) & 0x3FFF) << 16 |
           (uint64_t)((sbo >> 4) & 0x3FFF) << 32 | (uint64_t)1 << 62;
}

/* ---- wgmma -------------------------------------------------------------------------- */

__device__ __forceinline__ void q35_wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void q35_wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* Waits until at most N committed wgmma groups are pending. */
template <int N>
__device__ __forceinline__ void q35_wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* An accumulator's registers pinned at this point of the program (after a
 * wgmma.wait_group: the compiler neither moves their reads and writes above
 * it nor reuses them earlier). */
template <int N>
__device__ __forceinline__ void q35_reg_fence(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/* The same for A fragments in registers ([K16 steps][4]): an in-flight RS
 * wgmma still reads them. */
template <int K>
__device__ __forceinline__ void q35_reg_fence(uint32_t (&a)[K][4])
{
#pragma unroll
    for (int k = 0; k < K; k++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            asm volatile("" : "+r"(a[k][i])::"memory");
}

/* ---- wgmma instructions (one wrapper a shape) ---- */

/* D[64][64] (+)= A B^T, A [64][16] and B [64][16] from shared memory (descriptors),
 * K-major both (tnsp 0); scale_d 0: D = A B^T, else D += A B^T. */
__device__ __forceinline__ void q35_wgmma_ss_m64n64k16(float (&d)[32],
                                                       uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
                 :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* D[64][64] = A B^T (D not read: scale-d false), as q35_wgmma_ss_m64n64k16;
 * D's registers are outputs only, so nothing defines them before. */
__device__ __forceinline__ void q35_wgmma_ss_m64n64k16_first(float (&d)[32], uint64_t desc_a, uint64_t desc_b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, 0, 1, 1, 0, 0;\n"
                 :
          "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
                 : "l"(desc_a), "l"(desc_b));
}

/* D[64][64] += A B, A [64][16] f16 from registers (a: the m64nNk16 A fragment),
 * B [16][64] from shared memory, MN-major (TNSP_B 1: N contiguous) or K-major (0);
 * scale_d 0: D = A B. */
template <int TNSP_B>
__device__ __forceinline__ void q35_wgmma_rs_m64n64k16(float (&d)[32],
                                                       const uint32_t (&a)[4], uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, {%32, %33, %34, %35}, %36, p, 1, 1, %38;\n}\n"
                 :
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TNSP_B));
}

/* The 64 accumulator registers of an m64n128 wgmma: their places in the
 * instruction (%0 .. %63) and their operands (d: float[64], read and
 * written). */
#define Q35_WGMMA_D64_PLACES \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15," \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31," \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47," \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define Q35_WGMMA_D64_OPERANDS(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

/* D[64][128] += A B, A [64][16] f16 from registers (a: the m64nNk16 A fragment),
 * B [16][128] from shared memory, MN-major (TNSP_B 1: N contiguous) or K-major (0);
 * scale_d 0: D = A B. */
template <int TNSP_B>
__device__ __forceinline__ void q35_wgmma_rs_m64n128k16(float (&d)[64],
                                                        const uint32_t (&a)[4], uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
                 Q35_WGMMA_D64_PLACES
                 "}, {%64, %65, %66, %67}, %68, p, 1, 1, %70;\n}\n"
                 : Q35_WGMMA_D64_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TNSP_B));
}

/* D[64][128] += A B^T, A [64][16] and B [128][16] from shared memory
 * (descriptors), both K-major; scale_d 0: D = A B^T (the pingpong GEMM's
 * product, kernels/gemm_sm90.cu). */
__device__ __forceinline__ void q35_wgmma_ss_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
                 Q35_WGMMA_D64_PLACES
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : Q35_WGMMA_D64_OPERANDS(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* The 128 accumulator registers of an m64n256 wgmma: their places in the
 * instruction (%0 .. %127) and their operands (d: float[128], read and
 * written). */
#define Q35_WGMMA_D128_PLACES \
    Q35_WGMMA_D64_PLACES "," \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79," \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95," \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111," \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define Q35_WGMMA_D128_OPERANDS(d) \
    Q35_WGMMA_D64_OPERANDS(d), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

/* D[64][256] += A B, A [64][16] f16 from registers (a: the m64nNk16 A fragment),
 * B [16][256] from shared memory, MN-major (TNSP_B 1: N contiguous) or K-major (0);
 * scale_d 0: D = A B. */
template <int TNSP_B>
__device__ __forceinline__ void q35_wgmma_rs_m64n256k16(float (&d)[128],
                                                        const uint32_t (&a)[4], uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" Q35_WGMMA_D128_PLACES
                 "}, {%128, %129, %130, %131}, %132, p, 1, 1, %134;\n}\n"
                 : Q35_WGMMA_D128_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d), "n"(TNSP_B));
}

/* D[64][256] += A B, A [64][16] f16 from shared memory (K-major, as for
 * the SS m64n64k16), B [16][256] from shared memory, MN-major (TNSP_B 1) or
 * K-major (0); scale_d 0: D = A B. */
template <int TNSP_B>
__device__ __forceinline__ void q35_wgmma_ss_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b,
                                                        int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" Q35_WGMMA_D128_PLACES
                 "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
                 : Q35_WGMMA_D128_OPERANDS(d)
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_B));
}

/* D[64][32] (+)= A B, A [64][16] and B [16][32] from shared memory
 * (descriptors): TNSP_A 0 A K-major ([m][k], k contiguous), 1 MN-major (m
 * contiguous); TNSP_B 0 B K-major ([n][k]), 1 MN-major; scale_d 0: D = A B
 * (the chunked delta rule's wgmma state pass, its products 32 value columns
 * wide: kernels/experiments/delta_chunk_sm90.cu). */
template <int TNSP_A, int TNSP_B>
__device__ __forceinline__ void q35_wgmma_ss_m64n32k16(float (&d)[16], uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
                 "}, %16, %17, p, 1, 1, %19, %20;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A), "n"(TNSP_B));
}

/* Four 8 x 8 b16 matrices from their mma fragments (r[i]: matrix i, this
 * thread's row lane / 4, columns 2 (lane % 4), + 1) stored transposed: lane l
 * gives the shared address of stored row l % 8 (= fragment column) of matrix
 * l / 8, 16 bytes. */
__device__ __forceinline__ void q35_stsm_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

/* ---- mbarrier ----------------------------------------------------------------------- */

__device__ __forceinline__ void q35_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

/* The barriers' initialisation made visible to the other threads and to the
 * async proxy (before a __syncthreads). */
__device__ __forceinline__ void q35_mbar_init_fence(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ __forceinline__ void q35_mbar_arrive(uint32_t bar)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

/* This thread's arrival, and bytes more transactions expected in the phase. */
__device__ __forceinline__ void q35_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

/* Waits for the phase of that parity to complete; traps when it has not after
 * 20 s (%globaltimer, read at the first failed poll and every 1024 after): a
 * lost arrival or a TMA that never lands fails the launch instead of hanging
 * it. One asm block, the timer's registers live only on its slow path: the
 * C form (a 64-bit start carried through a C loop) made ptxas 13.0 serialize
 * the overlap schedule's wgmmas for want of registers (C7512). */
__device__ __forceinline__ void q35_mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 ".reg .u32 n;\n"
                 ".reg .u64 t0, t1;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@p bra DONE_%=;\n"
                 "mov.u64 t0, %%globaltimer;\n"
                 "mov.u32 n, 0;\n"
                 "POLL_%=:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                 "@p bra DONE_%=;\n"
                 "add.u32 n, n, 1;\n"
                 "and.b32 n, n, 1023;\n"
                 "setp.ne.u32 p, n, 0;\n"
                 "@p bra POLL_%=;\n"
                 "mov.u64 t1, %%globaltimer;\n"
                 "sub.u64 t1, t1, t0;\n"
                 "setp.lt.u64 p, t1, 20000000000;\n"
                 "@p bra POLL_%=;\n"
                 "trap;\n"
                 "DONE_%=:\n"
                 "}\n" ::"r"(bar),
                 "r"(parity)
                 : "memory");
}

/* ---- clusters ----------------------------------------------------------------------- */

/* This block's rank in its cluster. */
__device__ __forceinline__ uint32_t q35_cluster_rank(void)
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

/* Every thread of every block of the cluster: the writes before it (the
 * mbarriers' init among them) visible after it. Not .aligned: a warp may
 * reach it diverged (a producer warp's one thread). */
__device__ __forceinline__ void q35_cluster_sync(void)
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

/* The shared::cluster address of this block's shared address addr in the
 * cluster's block `rank`. */
__device__ __forceinline__ uint32_t q35_mapa(uint32_t addr, uint32_t rank)
{
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

/* Arrives on the mbarrier at a shared::cluster address (q35_mapa: this
 * block's or another's), with the default semantics (release, CTA scope), as
 * CUTLASS's cluster pipelines release a stage: what the arrival orders is the
 * block's wgmma reads of the stage, complete (waited for) before it, and the
 * other block's TMA writes after its wait. Not .release.cluster: that made
 * ptxas put a MEMBAR.ALL.GPU before every arrival, two a K step in
 * gemm_sm90's mcast loop (cuobjdump), the likely cause of mcast's loss.
 * kernels_gemm_sm90_sass checks the loop holds none. */
__device__ __forceinline__ void q35_mbar_arrive_cluster(uint32_t cluster_bar)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}

/* ---- grids that run at once: the cross-grid flag (griddepcontrol is above) ---------- */

/* A flag in global memory set to 1 by another grid's block: the block's writes
 * before it (__syncthreads, then one thread's q35_flag_publish) seen by the
 * thread that q35_flag_wait saw it set, generic and async proxies alike (TMA
 * reads them after). */
__device__ __forceinline__ void q35_flag_publish(unsigned *flag)
{
    asm volatile("fence.proxy.async.global;\nst.release.gpu.global.u32 [%0], 1;\n" ::"l"(flag) : "memory");
}

/* Bounded as q35_mbar_wait is: after 20 s it traps, so a flag never published
 * fails the launch instead of hanging it. */
__device__ __forceinline__ void q35_flag_wait(const unsigned *flag)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
    if (!v) {
        uint64_t t0, t;
        asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t0));
        for (;;) {
            __nanosleep(32);
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
            if (v)
                break;
            asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
            if (t - t0 > 20000000000ull)
                __trap();
        }
    }
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

/* ---- TMA ---------------------------------------------------------------------------- */

/* Generic-proxy writes to shared memory made visible to the async proxy. */
__device__ __forceinline__ void q35_fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* The tile of map at coordinates (x innermost, y) into shared memory dst; its
 * bytes complete a transaction on bar. */
__device__ __forceinline__ void q35_tma_load_2d(uint32_t dst, const void *map, uint32_t bar, int x, int y)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], "
                 "[%2];\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(x), "r"(y)
                 : "memory");
}

/* q35_tma_load_2d into every block of the cluster in ctamask (bit r: rank r),
 * at dst in each, completing on the mbarrier at bar in each. */
__device__ __forceinline__ void q35_tma_load_2d_mcast(uint32_t dst, const void *map, uint32_t bar, int x, int y,
                                                      uint16_t ctamask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(x), "r"(y), "h"(ctamask)
                 : "memory");
}

__device__ __forceinline__ void q35_tma_load_3d(uint32_t dst, const void *map, uint32_t bar, int x, int y, int z)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, "
                 "%5}], [%2];\n" ::"r"(dst),
                 "l"(map), "r"(bar), "r"(x), "r"(y), "r"(z)
                 : "memory");
}

/* ---- registers, barriers, arithmetic ------------------------------------------------ */

template <int N>
__device__ __forceinline__ void q35_setmaxnreg_inc(void)
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int N>
__device__ __forceinline__ void q35_setmaxnreg_dec(void)
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* Named barrier id (1..15) over `threads` threads (a multiple of 32). */
__device__ __forceinline__ void q35_named_sync(int id, int threads)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* This thread's arrival on named barrier id without waiting for it (the
 * other side of a q35_named_sync over `threads`: a warp group letting
 * another go on). */
__device__ __forceinline__ void q35_named_arrive(int id, int threads)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ float q35_ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* Two floats as f16x2 (lo in the low half), round to nearest. */
__device__ __forceinline__ uint32_t q35_pack_f16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

#endif /* Q35_SM90A_CODE */

#endif /* Q35_KERNELS_SM90_CUH */
