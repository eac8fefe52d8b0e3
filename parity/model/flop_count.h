/* What a prefill's projections and attention should count as FLOP
 * (model/op_times.h: 2 T n k a projection, 4 heads head_dim a scored (query,
 * key) pair), worked out here from the hyperparameters alone (SPEC §1's
 * shapes), for the suites to hold the models' own counts to. */
#ifndef Q35_PARITY_FLOP_COUNT_H
#define Q35_PARITY_FLOP_COUNT_H

#include "model/cuda_options.h"
#include "model/op_times.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stdint.h>

/* A prefill of n tokens from position 0 in chunks of `rows`, the logits asked
 * at positions at[0 .. n_at) (ascending); prune: a chunk asking for fewer
 * logits than its rows runs its last layer past the mixing op (the DeltaNet's
 * [qkv | z | alpha | beta], the attention's [q | gate | k | v], both over every
 * row) over the asked rows only (q35_paths_prune): the output projection and
 * the FFN over them, and the attention of theirs alone (none asked: none)
 * where at most Q35_PRUNE_DECODE_MAX, else the chunk's. *proj and *attn
 * the FLOP; every term an integer below 2^53, so any order of the sums gives
 * these bits. */
static inline void q35_expected_flop(const q35_hparams *hp, int64_t n, int64_t rows, const int64_t *at, int64_t n_at,
                                     bool prune, double *proj, double *attn)
{
    const double H = hp->n_embd, vd = (double)hp->ssm_hv * hp->ssm_dv, qd = (double)hp->n_head * hp->head_dim,
                 kvd = (double)hp->n_head_kv * hp->head_dim;
    const double delta_mix = (hp->conv_dim + vd + 2.0 * hp->ssm_hv) * H; /* qkv, z, alpha, beta */
    const double attn_mix = (2.0 * qd + 2.0 * kvd) * H;                 /* q | gate, k, v */
    const double ffn = 3.0 * hp->n_ff * H;                               /* gate, up, down */
    *proj = *attn = 0.0;
    int64_t next = 0;
    for (int64_t p = 0; p < n; p += rows) {
        const int64_t T = n - p < rows ? n - p : rows, first = next;
        while (next < n_at && at[next] < p + T)
            next++;
        const int64_t keep = next - first;
        const bool pruned = prune && keep < T;
        for (int il = 0; il < hp->n_layer; il++) {
            const bool cut = pruned && il == hp->n_layer - 1;
            const double rest = cut ? (double)keep : (double)T; /* the rows past the mixing op */
            if (hp->is_attn[il]) {
                *proj += 2.0 * T * attn_mix + 2.0 * rest * (H * qd + ffn);
                if (!cut || keep > Q35_PRUNE_DECODE_MAX) /* the chunk's rows all attend */
                    *attn += q35_attention_flop(hp->n_head, hp->head_dim, p, T);
                else
                    for (int64_t i = first; i < next; i++)
                        *attn += q35_attention_flop(hp->n_head, hp->head_dim, at[i], 1);
            } else {
                *proj += 2.0 * T * delta_mix + 2.0 * rest * (H * vd + ffn);
            }
        }
    }
}

#endif /* Q35_PARITY_FLOP_COUNT_H */
