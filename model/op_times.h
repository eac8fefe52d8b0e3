/* Time per op of a forward, accumulated over every layer and chunk: the names
 * the CPU reference and the CUDA model report in. */
#ifndef Q35_OP_TIMES_H
#define Q35_OP_TIMES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum q35_op {
    Q35_OP_EMBED,        /* embedding gather */
    Q35_OP_NORM,         /* RMSNorm of the residual stream */
    Q35_OP_PROJ,         /* every projection (GEMM / GEMV) */
    Q35_OP_CONV,         /* causal conv1d + SiLU (with the q/k L2 norm and the gates where fused: kernels/delta_prep.h) */
    Q35_OP_L2NORM,       /* per-head L2 norm of q, k */
    Q35_OP_GATES,        /* g and beta */
    Q35_OP_DELTA,        /* the delta-rule scan */
    Q35_OP_GATED_NORM,   /* gated RMSNorm */
    Q35_OP_QK_NORM_ROPE, /* q/gate split, per-head q/k RMSNorm, RoPE, KV append */
    Q35_OP_ATTN,         /* causal softmax attention */
    Q35_OP_OUT_GATE,     /* sigmoid output gate */
    Q35_OP_SWIGLU,       /* FFN activation */
    Q35_OP_RESIDUAL,     /* residual adds */
    Q35_OP_TAIL,         /* output norm + lm_head of the rows that pay it */
    Q35_OP_KEEP_ROWS,    /* the last layer's rows whose logits are asked for, gathered (a pruned prefill) */
    Q35_OP_COUNT
} q35_op;

typedef struct q35_op_times {
    double seconds[Q35_OP_COUNT]; /* wall seconds per op */
    int64_t calls[Q35_OP_COUNT];  /* launches (or reference calls) per op */
    /* floating-point operations the op's products did, counted from their shapes (2 a multiply-add):
     * projections 2 T n k each (T rows through an n x k weight); attention 4 heads head_dim a
     * (query, key) pair it scores (Q K^T and P V), T rows at positions pos.. scoring pos + 1 ..
     * pos + T keys; 0 for the other ops. Their rate over seconds[] is the op's achieved FLOP/s. */
    double flop[Q35_OP_COUNT];
} q35_op_times;

/* The attention FLOP of `rows` query rows at positions pos .. pos + rows - 1,
 * each scoring every key up to its own position (q35_op_times' count). */
static inline double q35_attention_flop(int64_t heads, int64_t head_dim, int64_t pos, int64_t rows)
{
    const double keys = (double)rows * (double)pos + 0.5 * (double)rows * (double)(rows + 1);
    return 4.0 * (double)heads * (double)head_dim * keys;
}

/* A short name: "proj", "delta_rule", ... */
const char *q35_op_name(q35_op op);

#ifdef __cplusplus
}
#endif

#endif /* Q35_OP_TIMES_H */
