/* The refusals every prefill shares, the CPU reference's and the CUDA model's
 * (SPEC §3): checked before the state is touched. */
#ifndef Q35_REQUEST_H
#define Q35_REQUEST_H

#include "core/error.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Refuses: an empty prompt; pos0 != kv_len; positions past max_seq; a token
 * outside 0..n_vocab-1; logit positions at[0..n_at) not ascending or outside
 * pos0..pos0+n-1. Messages begin "prefill: ". */
int q35_request_check(int n_vocab, int64_t kv_len, int64_t max_seq, const int32_t *tokens, int64_t n, int64_t pos0,
                      const int64_t *at, int64_t n_at, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_REQUEST_H */
