/* A parallel for over [0, n) on pthreads, for the CPU reference and the model
 * generator. Work is handed out in grains from an atomic counter, so uneven items
 * balance; every index is computed by exactly one call, and results must not
 * depend on which thread ran it (the callers write disjoint outputs). */
#ifndef Q35_PARALLEL_H
#define Q35_PARALLEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* fn(ctx, begin, end, thread): process items [begin, end); thread in [0, threads). */
typedef void (*q35_range_fn)(void *ctx, int64_t begin, int64_t end, int thread);

/* Threads used by q35_parallel_for: set by q35_set_threads, else $Q35_THREADS,
 * else the online CPU count. */
int q35_threads(void);
void q35_set_threads(int n);

/* Runs fn over [0, n) in grains of `grain` items on q35_threads() threads (the
 * caller's thread is one of them). Runs inline when one grain covers n. */
void q35_parallel_for(int64_t n, int64_t grain, q35_range_fn fn, void *ctx);

/* Seconds on a monotonic clock. */
double q35_now(void);

#ifdef __cplusplus
}
#endif

#endif /* Q35_PARALLEL_H */
