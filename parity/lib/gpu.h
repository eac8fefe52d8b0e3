/* The GPU side of the parity harness: skip when no device, device buffers
 * poisoned with NaN on allocation, checked copies. A CUDA failure in a suite is
 * fatal: it prints what failed and exits 1. */
#ifndef Q35_PARITY_GPU_H
#define Q35_PARITY_GPU_H

#include "harness.h"
#include "core/error.h"

#include <stddef.h>
#include <stdint.h>

/* Picks the device (parity/lib/device_env.h: ctest's resource allocation, else
 * $Q35_DEVICE, else 0) and prints it; returns 0, or Q35_TEST_SKIP (after
 * printing why) when no device is usable. */
int q35_gpu_begin(void);

/* Starts a GPU suite: the device (q35_gpu_begin), the seed into *rng, the
 * suite's header. Returns 0, or Q35_TEST_SKIP when there is no device. */
int q35_gpu_suite(q35_suite *s, const char *name, q35_rng *rng);

/* bytes of host memory, malloc'd; out of memory: FAIL printed, exit 1. */
void *q35_host_alloc(size_t bytes);

/* n floats copied back into a malloc'd host array (after a device sync). */
float *q35_gpu_to_host(const float *d, int64_t n);

/* n floats of device memory, every bit set (NaN) so unwritten outputs show. */
float *q35_gpu_floats(int64_t n);
/* Of the n host floats at h (copied back from q35_gpu_floats' memory), how
 * many no longer hold its poison (every bit set): the ones written. */
int64_t q35_gpu_written(const float *h, int64_t n);
void *q35_gpu_bytes(size_t n);
void q35_gpu_free(void *p);

void q35_gpu_upload(void *dst, const void *src, size_t bytes);
void q35_gpu_download(void *dst, const void *src, size_t bytes);
float *q35_gpu_from_host(const float *src, int64_t n); /* alloc + upload */
/* A device int64 holding pos: the position the kernels' _at forms read. */
int64_t *q35_gpu_pos(int64_t pos);
/* Host src [rows][width] into columns col .. col+width-1 of the device rows
 * at `stride` floats from d (a slice of a merged projection's output); the
 * rest of d as it was (NaN from q35_gpu_floats: a read of a gap shows). */
void q35_gpu_upload_cols(float *d, int64_t stride, int64_t col, const float *src, int64_t width, int64_t rows);
void q35_gpu_sync(void);

/* An f16 output of n values at d_y16 (the _f16 forms, which write the next f16
 * GEMM's input): downloaded, its halves compared with memcmp against the CPU's
 * rounding to nearest even (core/half.h) of y, the f32 form's output on the
 * same inputs, and widened against the float64 reference within limit. Two
 * case lines named `name`. */
void q35_check_f16_out(q35_suite *s, const char *name, const void *d_y16, const float *y, const double *ref,
                       int64_t n, double limit);

/* An FP8 output (the _fp8 forms, which write the next FP8 GEMM's input):
 * codes d_q [rows][cols] and scales d_scale [rows] on the device, of the rows
 * d_y [rows][cols] the f32 form wrote on the same inputs (ref: their float64
 * reference). Three case lines named `name`: codes and scales bitwise (memcmp)
 * q35_fp8_quantize_rows of d_y on the GPU; bitwise q35_ref_fp8_quantize_rows of
 * d_y on the CPU; against q35_ref_fp8_quantize_rows of ref rounded to f32, no
 * NaN code, every code within one e4m3 step and every scale within rel limit. */
void q35_check_fp8_out(q35_suite *s, const char *name, const uint8_t *d_q, const float *d_scale, const float *d_y,
                       const double *ref, int64_t rows, int64_t cols, double limit);

/* Exits 1 with the message when rc != 0 (a launcher's status). */
void q35_gpu_ok(int rc, const q35_error *err);

#endif /* Q35_PARITY_GPU_H */
