/* Partial NeoX RoPE on the first n_rot dims of each head (SPEC §2 attention.3),
 * for i < n_rot/2 with theta_i = pos * base^(-2i / n_rot):
 *
 *     (x[i], x[i + n_rot/2]) <- (x[i] cos theta_i - x[i + n_rot/2] sin theta_i,
 *                                x[i] sin theta_i + x[i + n_rot/2] cos theta_i)
 *
 * dims n_rot..head_dim-1 pass through. The rows form puts row t at pos0 + t. */
#ifndef Q35_KERNELS_ROPE_H
#define Q35_KERNELS_ROPE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: `heads` heads of head_dim values at x, in place. */
void q35_ref_rope_neox(double *x, int heads, int head_dim, int n_rot, int64_t pos, double base);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ROPE_H */
