/* The model shapes the kernel benchmarks sweep: their axis `model` takes 0, 1,
 * 2 for the shapes named in bench/models.c, whose widths (heads, DeltaNet
 * heads, hidden size) are the shapes table's (model/shapes.c). bench/peers.py
 * reads the same list and table. */
#ifndef Q35_BENCH_MODELS_H
#define Q35_BENCH_MODELS_H

#include "bench/shim.h"
#include "model/shapes.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How many, and the i-th (0.8b, 9b, 27b); exits naming it when the shapes
 * table lacks a name. */
int q35_bench_model_count(void);
const q35_shape *q35_bench_model(int i);

/* Model i's name as results print it: "0.8B". */
const char *q35_bench_model_label(int i, char *buf, size_t cap);

/* The axis `model` (0 .. count - 1), and its legend for the JSON context:
 * "0 = 0.8B, 1 = 9B, 2 = 27B". */
q35_bench_axis q35_bench_model_axis(void);
const char *q35_bench_model_legend(char *buf, size_t cap);

/* FLOP of causal attention of T query rows at positions pos0 .. pos0 + T - 1
 * (every attention benchmark counts so): visible (row, position) pairs only,
 * 4 * head_dim * heads * sum_t (pos0 + t + 1). */
double q35_bench_attn_flop(const q35_shape *m, int64_t pos0, int64_t T);

#ifdef __cplusplus
}
#endif

#endif /* Q35_BENCH_MODELS_H */
