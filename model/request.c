/* The prefill refusals (request.h). */
#include "request.h"

#include <inttypes.h>

int q35_request_check(int n_vocab, int64_t kv_len, int64_t max_seq, const int32_t *tokens, int64_t n, int64_t pos0,
                      const int64_t *at, int64_t n_at, q35_error *err)
{
    if (n < 1)
        return q35_fail(err, "prefill: the prompt is empty");
    if (pos0 != kv_len)
        return q35_fail(err,
                        "prefill: pos0 %" PRId64 " is not where the state stands (%" PRId64
                        " positions written): a prefill continues the state, it cannot skip or rewind it",
                        pos0, kv_len);
    if (n > max_seq - pos0)
        return q35_fail(err, "prefill: positions %" PRId64 "..%" PRId64 " are past the KV cache (%" PRId64 " rows)",
                        pos0, pos0 + n - 1, max_seq);
    for (int64_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= n_vocab)
            return q35_fail(err, "prefill: token %" PRId32 " at prompt index %" PRId64 " is outside the vocabulary (0..%d)",
                            tokens[i], i, n_vocab - 1);
    for (int64_t i = 0; i < n_at; i++) {
        if (at[i] < pos0 || at[i] >= pos0 + n)
            return q35_fail(err, "prefill: logit position %" PRId64 " is outside the prompt's positions %" PRId64
                            "..%" PRId64, at[i], pos0, pos0 + n - 1);
        if (i > 0 && at[i] <= at[i - 1])
            return q35_fail(err, "prefill: logit positions must ascend (%" PRId64 " follows %" PRId64 ")", at[i],
                            at[i - 1]);
    }
    return 0;
}
