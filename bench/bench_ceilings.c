/* The ceilings as ordinary benchmarks (gpu_bench.h): device-to-device copy,
 * SGEMM without TF32, HGEMM with f32 accumulation, each also as a percentage of
 * the start-up measurement (a check of its stability). */
#include "bench/gpu_bench.h"

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init(&argc, argv))
        return 1;
    q35_bench_register_ceilings();
    return q35_bench_main(argc, argv);
}
