/* The phases of one prefill (gpu_bench.h: q35_bench_phases). Needs no GPU, so
 * bench_fake exercises it on the CPU. */
#include "bench/gpu_bench.h"

void q35_bench_phases(q35_bench_state *st, const q35_op_times *t, int64_t prefills)
{
    double total = 0.0;
    for (int op = 0; op < Q35_OP_COUNT; op++)
        total += t->seconds[op];
    const double n = prefills > 0 ? (double)prefills : 1.0;
    const double proj = t->seconds[Q35_OP_PROJ], scan = t->seconds[Q35_OP_DELTA], attn = t->seconds[Q35_OP_ATTN];
    q35_bench_value(st, "s_proj", proj / n);
    q35_bench_value(st, "s_scan", scan / n);
    q35_bench_value(st, "s_attn", attn / n);
    q35_bench_value(st, "s_other", (total - proj - scan - attn) / n);
    /* the projections' and attention's achieved rates (their FLOP counted from the shapes,
     * q35_op_times), where the op ran and counted some */
    if (proj > 0.0 && t->flop[Q35_OP_PROJ] > 0.0)
        q35_bench_value(st, "proj_tflop_s", t->flop[Q35_OP_PROJ] / proj / 1e12);
    if (attn > 0.0 && t->flop[Q35_OP_ATTN] > 0.0)
        q35_bench_value(st, "attn_tflop_s", t->flop[Q35_OP_ATTN] / attn / 1e12);
}
