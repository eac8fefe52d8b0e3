/* float64 reference of kernels/attn_prep.h: the ops it fuses, composed. */
#include "kernels/attn_prep.h"
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"
#include "kernels/rope.h"

#include <string.h>

void q35_ref_attn_prep(double *q, double *gate, double *k, double *v, const double *full, const double *q_norm,
                       const double *k_norm, int heads, int kv_heads, int hd, int n_rot, int64_t pos, double rope_base,
                       double eps)
{
    const int64_t qd = (int64_t)heads * hd, kvd = (int64_t)kv_heads * hd;
    q35_ref_split_qgate(q, gate, full, heads, hd);
    for (int h = 0; h < heads; h++)
        q35_ref_rmsnorm(q + (int64_t)h * hd, q + (int64_t)h * hd, q_norm, hd, eps);
    for (int h = 0; h < kv_heads; h++)
        q35_ref_rmsnorm(k + (int64_t)h * hd, full + 2 * qd + (int64_t)h * hd, k_norm, hd, eps);
    q35_ref_rope_neox(q, heads, hd, n_rot, pos, rope_base);
    q35_ref_rope_neox(k, kv_heads, hd, n_rot, pos, rope_base);
    memcpy(v, full + 2 * qd + kvd, (size_t)kvd * sizeof *v);
}
