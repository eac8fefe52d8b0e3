/* The trained model's KL-divergence cases (issue 50), shared by the CPU suite
 * (test_trained) and the GPU one (test_cuda_model_kld): the held-out tokens cut
 * into windows as q35 run --eval cuts them (model/eval.h), the float64 CPU
 * reference's logits of every scored position, and the report of a path's
 * logits against a reference's. */
#ifndef Q35_KLD_CASE_H
#define Q35_KLD_CASE_H

#include "model/eval.h"
#include "model/ref_model.h"
#include "model/qwen35.h"

#include <stdint.h>

#define KLD_TRAINED "data/golden/trained-bytes"

typedef struct kld_case {
    int32_t *tokens;   /* windows * ctx held-out tokens */
    int64_t ctx, windows, scored;
    int64_t *at;       /* the scored positions of a window */
    int vocab;
} kld_case;

/* The first `windows` windows of ctx tokens of KLD_TRAINED/heldout.i32; 0, or -1 said. */
int kld_case_open(kld_case *k, int64_t ctx, int64_t windows, int vocab);
void kld_case_free(kld_case *k);

/* The float64 CPU reference's logits of m at every scored position, rounded
 * to float32: [windows * scored][vocab] (malloc'd), or NULL said. */
float *kld_ref_logits(const kld_case *k, const q35_model *m);

/* The same with the projections fp8 names rounded as the FP8 GEMM rounds them
 * (q35_ref_fp8, model/ref_model.h). */
float *kld_ref_logits_fp8(const kld_case *k, const q35_model *m, q35_ref_fp8 fp8);

/* The same with every product's activations rounded as act says (kernels/linear.h). */
float *kld_ref_logits_act(const kld_case *k, const q35_model *m, q35_act_quant act);

/* The report of logits against ref (both [windows * scored][vocab]). */
q35_eval_report kld_report(const kld_case *k, const float *logits, const float *ref);

#endif /* Q35_KLD_CASE_H */
