/* The read ceiling at a weight's size (bench_linear's ceiling/read): the
 * least a kernel does that reads a buffer once and writes an output the size
 * of a GEMV's, so a GEMV's rate at that size has a plain kernel's beside it,
 * launch ramp and tail included. */
#ifndef Q35_BENCH_GPU_READ_H
#define Q35_BENCH_GPU_READ_H

#include "core/error.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* out [n] (device, 4-byte aligned) from in [bytes] (device, 16-byte
 * aligned): every 16-byte word of in read once (coalesced, four loads in
 * flight a thread, a grid of the blocks the SMs hold at once), the words'
 * XOR folded per thread, and out[i] written for every i < n (a thread's fold
 * or zero). Bytes past the last whole 16 are not read. One plain launch on the
 * default stream; -1 with err set where the launch or the device query fails
 * or an argument is out of range, naming it. */
int q35_bench_read(uint32_t *out, int64_t n, const void *in, size_t bytes, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_BENCH_GPU_READ_H */
