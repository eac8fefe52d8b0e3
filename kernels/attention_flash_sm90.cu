/* The sm_90 flash prefill attention (kernels/attention_flash_sm90.h).
 *
 * Work split. A block takes one KV head and R query rows of every one of its
 * hpk query heads: M = 128 M-rows, GQA-packed with the heads interleaved
 * (M-row m = query row r0 + m / hpk of head kvh * hpk + m % hpk), so one K/V
 * tile serves the whole group and the rows of a warp group span the fewest
 * positions:
 *
 *     hpk     1    2    3    4    6    8
 *     R     128   64   42   32   21   16     (hpk 3, 6: M-rows 126, 127 idle)
 *
 * 384 threads, three warp groups:
 *   producer    warp group 0 (setmaxnreg down to 24): one thread walks the KV
 *               tiles j = 0 .. (the block's last visible position) / 64, each
 *               K and V tile (64 positions x 256 dims, f16) four TMA boxes of
 *               64 x 64 (128-byte swizzle), into stage j % 2 of the ring once
 *               both consumers released it (mbarrier `empty`), completing on
 *               `full_k` / `full_v`;
 *   consumers   warp groups 1, 2 (setmaxnreg up to 240), 64 M-rows each: Q
 *               rounded to f16 into shared memory in the swizzled K-major
 *               layout by the threads, then per tile up to their last visible
 *               position:
 *     S   = Q K^T      16 wgmma m64n64k16 SS (K-major both, the descriptors
 *                      stepping 32 bytes a k16 step, a box every 4);
 *     mask             only on the tiles reaching past the group's first
 *                      row's position: position > the row's -> -inf;
 *     softmax          row max over the quad (2 shuffles), m in log2 units
 *                      (scale * log2 e folded in), O and l rescaled by
 *                      2^(m_old - m_new), P = 2^(s - m) packed to f16 straight
 *                      into the A fragments of the next product;
 *     O  += P V        4 wgmma m64n256k16 RS (V MN-major: positions are K,
 *                      dims N; LBO the 8 KiB step between 64-dim boxes, SBO the
 *                      1 KiB step between 8-position atoms);
 *               then they arrive on `empty`; at the end O / l (l reduced over
 *               the quad) to f32 o rows.
 * Shared memory: Q 2 x 32 KiB, K 2 stages x 32 KiB, V 2 x 32 KiB, 8 mbarriers
 * (in 1 KiB), fa3turn's P 2 x 8 KiB: 209 KiB + 1 KiB of alignment (boxes
 * 1024-byte aligned for the swizzle).
 * Order: blocks take query tiles from the last (the longest rows) to the
 * first, every KV head's in turn.
 * Variants (q35_attention_flash_sm90_variant_*; sm90_loop says how):
 *   serial     each product waited for where it is issued, the two consumer
 *              groups overlapping each other as the warp schedulers let them:
 *              the oracle;
 *   pingpong   the two groups take turns at the tensor cores through two
 *              named barriers, one product a turn (S0 S1 PV0 PV1 ...), so
 *              one group's softmax runs under the other's product; each
 *              group's own code is serial's. Why: a group's tile is two
 *              products of 2.1 MFLOP and a softmax of about one product's
 *              time (32 ex2 a thread, O's 128 rescales, the max, the pack).
 *              Serial loses the tensor cores while both groups softmax at
 *              once and while each product drains (wait_group 0 with nothing
 *              queued behind it). Pingpong always has the other group's
 *              product queued behind the running one, so they idle only where
 *              a softmax outlasts one product; the gain shrinks at short
 *              contexts, where the prologue and the diagonal tiles weigh more.
 *   fa3turn    FA3's turn: a group's O += P(j-1) V(j-1) and S(j) issued
 *              together in one turn, P through shared memory (sm90_fa3_loop
 *              says how), so a softmax has both of the other group's
 *              products to hide under instead of one: the better of the two
 *              where the softmax outlasts one product; costs P's 8 KiB store
 *              and a group barrier a tile, and one dropped S a block.
 *   overlap    FA3's intra-warp-group pipeline (sm90_overlap_loop says how):
 *              each group on its own as in serial, but the softmax of tile j
 *              runs while its own O += P(j-1) V(j-1) is in flight, so a group
 *              keeps the tensor cores busy by itself; bitwise serial. Faster
 *              than serial on whole prompts, by less than hoped
 *              (bench/results/index.tsv, family flash_sm90): the default;
 *              ptxas schedules about half of the
 *              softmax's ex2 under the product (17 of 34 on the tiles below
 *              the diagonal, 9 on the diagonal ones: kernels_flash_sm90_sass
 *              counts them).
 * Tried and left out: O += P V left in flight under the next S, and a first
 * form of the overlap: ptxas 13.0 serialized their wgmmas (C7515 / C7518:
 * accumulators defined, or waits, inside the in-flight stage; C7512: the
 * registers of q35_mbar_wait's C timer loop) or spilled; rescaling O between
 * S(j) and P V (FA3's order) serialized them too (C7518, a wait in a
 * divergent path). On the way to
 * fa3turn, ptxas serialized (C7512, "insufficient register resources") and
 * spilled when P stayed in registers (an RS P V in flight beside S), when a
 * first turn was peeled off the loop (O still known zeros there), and when
 * P's box was zeroed through the same code as the loop's (its 16 addresses
 * held across the loop); and a wgmma under a branch was serialized (C7520).
 * Registers (ptxas, CUDA 13.0, sm_90a): 168 at launch (384 threads), up to
 * 240 in the consumers after setmaxnreg (R0-R187 used by serial, R0-R191 by
 * pingpong, R0-R206 by fa3turn, R0-R207 by overlap); no spills.
 * The pieces (sizes, shared-memory map, the device steps): attention_flash_sm90.cuh.
 * Not yet: a KV split for short chunks (more blocks than 64 on 132 SMs), an
 * f16 output. */
#include "kernels/attention_flash_sm90.cuh"
#include "kernels/variant.h"

#ifdef Q35_SM90A_CODE

/* The named barriers of the pingpong schedule: SCHED_BAR + c is group c's
 * turn at the tensor cores (ids 1, 2: the groups' Q staging). */
#define SCHED_BAR 3

/* A group's tiles under schedule SCHED (warp group 2's last row is the
 * block's: it sees every tile, so each stage is released only after its TMA
 * landed).
 *   serial: each product waited for where it is issued, the two groups
 *     overlapping each other as the warp schedulers let them;
 *   pingpong: the groups take turns at the tensor cores, one product a turn,
 *     through two named barriers: a group waits for its turn
 *     (bar.sync SCHED_BAR + c), issues its product, hands the turn on
 *     (bar.arrive SCHED_BAR + 1 - c) and waits for the product. The order is
 *     S0 S1 PV0 PV1 (group 0, 1) tile after tile, so group 0's softmax runs
 *     under group 1's S and group 1's under group 0's P V, and the tensor
 *     cores always hold the other group's next product while one waits for
 *     its own. Each group's code is the serial one (one product in flight,
 *     nothing touching its registers meanwhile): ptxas keeps it asynchronous.
 *     Group 0 goes first (group 1's arrival before its first tile); a tile
 *     group 0 does not see is two empty turns; group 1's last turn hands
 *     nothing on, so both barriers end balanced. */
template <int SCHED>
__device__ __forceinline__ void sm90_loop(sm90_consumer &w, const sm90_args &a, uint32_t base, int tiles)
{
    const uint32_t full_k = base + OFF_BAR, full_v = full_k + 16, empty = full_k + 32;
    const bool pp = SCHED == SCHED_PINGPONG;
    const int mine_bar = SCHED_BAR + w.c, other_bar = SCHED_BAR + 1 - w.c;
    uint32_t p[4][4];
    if (pp && w.c == 1)
        q35_named_arrive(SCHED_BAR, 256);
    for (int j = 0; j < tiles; j++) {
        const int st = j % STAGES;
        const uint32_t phase = (j / STAGES) & 1;
        const int pass_last = w.c == 1 && j == tiles - 1 ? -1 : other_bar; /* the block's last turn */
        if (j < w.mine) {
            float s[32];
            q35_mbar_wait(full_k + 8 * st, phase);
            if (pp)
                q35_named_sync(mine_bar, 256);
            sm90_scores(s, w.sQ, base + OFF_K + st * TILE_BYTES, pp ? other_bar : -1);
            sm90_mask(s, w, j);
            sm90_softmax(s, p, w.o, w.m, w.l, a.scale_log2);
            q35_mbar_wait(full_v + 8 * st, phase);
            if (pp)
                q35_named_sync(mine_bar, 256);
            sm90_pv(w.o, p, base + OFF_V + st * TILE_BYTES, pp ? pass_last : -1);
        } else if (pp) { /* group 0 past its last tile: its two turns, empty */
            q35_named_sync(mine_bar, 256);
            q35_named_arrive(other_bar, 256);
            q35_named_sync(mine_bar, 256);
            if (pass_last >= 0)
                q35_named_arrive(pass_last, 256);
        } else { /* group 0 past its last tile: released once it has landed, so the
                    arrival cannot count toward the phase of tile j - 2, which group 1
                    may still be reading */
            q35_mbar_wait(full_k + 8 * st, phase);
        }
        q35_mbar_arrive(empty + 8 * st);
    }
}

/* fa3turn (FA3's ping-pong turn): the groups take turns as in pingpong, but
 * a turn t (t = 0 .. tiles) issues O += P(t-1) V(t-1) and S(t) = Q K(t)^T as
 * one wgmma group, hands the turn on, waits for both, releases K(t)
 * (empty_k) and V(t-1) (empty_v: V stays a turn longer than K), then masks
 * and softmaxes S(t) into P(t): a group's softmax runs under the other
 * group's two products. P goes through shared memory (the group's box at
 * OFF_P, K-major and swizzled as Q; SS wgmma): P and S in registers together
 * were more than ptxas 13.0 keeps asynchronous (C7512, spills). Both groups
 * see every tile (group 0's rows past its last tile all masked: P = 0,
 * m, l and O unchanged), so both take tiles + 1 turns; group 1's last hands
 * nothing on, and both barriers end balanced. */

/* P (the A fragments p) into the group's box sP: M-row 16 warp + g + 8 ri,
 * position 8 i + 2 q4 (+1) of n8 tile i = 2 kk + j / 2, ri = j % 2; then
 * made visible to wgmma and the group synchronised. */
__device__ __forceinline__ void sm90_stage_p(uint32_t sP, const uint32_t (&p)[4][4], const sm90_consumer &w)
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(sP + q35_sw128(16 * w.warp + w.g + 8 * (j % 2),
                                                                         8 * (2 * kk + j / 2) + 2 * w.q4)),
                         "r"(p[kk][j])
                         : "memory");
    q35_fence_proxy_async();
    q35_named_sync(1 + w.c, 128);
}

/* The fa3turn loop: turns 0 .. tiles all alike (a peeled first turn with O
 * still zeros made ptxas serialize and spill): turn 0 multiplies a P of
 * zeros into V(0) (finite: the cache, or TMA's zeros past n_ctx), the last
 * turn's S reads a stale K stage and is dropped. */
__device__ __forceinline__ void sm90_fa3_loop(sm90_consumer &w, const sm90_args &a, uint32_t base, int tiles)
{
    const uint32_t full_k = base + OFF_BAR, full_v = full_k + 16, empty_k = full_k + 32, empty_v = full_k + 48;
    const uint32_t sP = base + OFF_P + w.c * BOX_BYTES;
    const int mine_bar = SCHED_BAR + w.c, other_bar = SCHED_BAR + 1 - w.c;
    uint32_t p[4][4];
    float s[32];
    for (int i = 0; i < 4; i++) /* P = 0 for turn 0: 8 KiB, 64 bytes a thread */
        asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};\n" ::"r"(sP + 64 * w.tid + 16 * i), "r"(0u)
                     : "memory");
    q35_fence_proxy_async();
    q35_named_sync(1 + w.c, 128);
    if (w.c == 1)
        q35_named_arrive(SCHED_BAR, 256); /* group 0's first turn */
    for (int t = 0; t <= tiles; t++) {
        const int st = t % STAGES, vt = t > 0 ? t - 1 : 0, sp = vt % STAGES;
        q35_mbar_wait(full_v + 8 * sp, (vt / STAGES) & 1);
        if (t < tiles)
            q35_mbar_wait(full_k + 8 * st, (t / STAGES) & 1);
        q35_named_sync(mine_bar, 256);
        q35_reg_fence(w.o);
        q35_wgmma_fence();
        const uint32_t sV = base + OFF_V + sp * TILE_BYTES;
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; kk++)
            q35_wgmma_ss_m64n256k16<1>(w.o, q35_gmma_desc(sP + kk * 32, 16, 1024),
                                       q35_gmma_desc(sV + kk * 2048, Q35_SM90_V_LBO, Q35_SM90_V_SBO), 1);
        sm90_scores_issue(s, w.sQ, base + OFF_K + st * TILE_BYTES);
        q35_wgmma_commit();
        if (w.c == 0 || t < tiles)
            q35_named_arrive(other_bar, 256);
        q35_wgmma_wait<0>();
        q35_reg_fence(w.o);
        q35_reg_fence(s);
        if (t < tiles)
            q35_mbar_arrive(empty_k + 8 * st);
        if (t > 0)
            q35_mbar_arrive(empty_v + 8 * sp);
        if (t < tiles) {
            sm90_mask(s, w, t);
            sm90_softmax(s, p, w.o, w.m, w.l, a.scale_log2);
            sm90_stage_p(sP, p, w);
        }
    }
}

/* overlap (FA3's intra-warp-group pipeline, each group on its own as in
 * serial): turn j issues S(j) = Q K(j)^T and O += P(j-1) V(j-1) as two wgmma
 * groups, waits for S(j) only (wait_group 1), masks and exponentiates it
 * (sm90_exp_scores: m, l and alpha; neither O nor P is touched while the
 * P V product reads and writes them), releases K(j), then waits for the
 * product, releases V(j-1), rescales O by alpha(j) and packs P(j): the
 * softmax runs under the group's own P V. The arithmetic is serial's, in
 * serial's order (O *= alpha(j), then O += P(j) V(j)): the same bits.
 * Turn 0 multiplies a P of zeros into V(0) (finite: the cache, or TMA's zeros
 * past n_ctx), so every turn is alike; the last P V is issued alone after the
 * turns. The tiles below the diagonal run first, without the mask, then the
 * diagonal ones with it: ptxas 13.0 moved the wait for the product up to the
 * end of a masking branch, ahead of the softmax it was to hide (cuobjdump).
 * K and V are released apart (empty_k, empty_v) as in fa3turn. Tiles past
 * the group's last (group 0's, at most one) are released once they have
 * landed, so an early arrival never counts toward the phase of the tile two
 * before. ptxas: no wgmma serialized only with q35_mbar_wait's timer in one
 * asm block (its C form cost the registers: C7512). */
template <bool MASK>
__device__ __forceinline__ void sm90_overlap_turn(sm90_consumer &w, const sm90_args &a, uint32_t base, int j,
                                                  uint32_t (&p)[4][4], int g0)
{
    const uint32_t full_k = base + OFF_BAR, full_v = full_k + 16, empty_k = full_k + 32, empty_v = full_k + 48;
    const int g = g0 + j, st = g % STAGES, vg = g0 + (j > 0 ? j - 1 : 0), vst = vg % STAGES;
    float s[32], alpha[2];
    q35_mbar_wait(full_k + 8 * st, (g / STAGES) & 1);
    q35_mbar_wait(full_v + 8 * vst, (vg / STAGES) & 1);
    q35_reg_fence(w.o);
    q35_reg_fence(p);
    q35_wgmma_fence();
    sm90_scores_issue(s, w.sQ, base + OFF_K + st * TILE_BYTES);
    q35_wgmma_commit();
    const uint32_t sV = base + OFF_V + vst * TILE_BYTES;
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; kk++)
        q35_wgmma_rs_m64n256k16<1>(w.o, p[kk], q35_gmma_desc(sV + kk * 2048, Q35_SM90_V_LBO, Q35_SM90_V_SBO), 1);
    q35_wgmma_commit();
    q35_wgmma_wait<1>();
    q35_reg_fence(s);
    if (MASK)
        sm90_mask_apply(s, w, j);
    sm90_exp_scores(s, w.m, w.l, alpha, a.scale_log2);
    q35_mbar_arrive(empty_k + 8 * st);
    q35_wgmma_wait<0>();
    q35_reg_fence(w.o);
    q35_reg_fence(p);
    if (j > 0)
        q35_mbar_arrive(empty_v + 8 * vst);
    sm90_rescale_pack(w.o, p, s, alpha);
}

__device__ __forceinline__ void sm90_overlap_loop(sm90_consumer &w, const sm90_args &a, uint32_t base, int tiles,
                                                  int g0 = 0)
{
    const uint32_t full_k = base + OFF_BAR, full_v = full_k + 16, empty_k = full_k + 32, empty_v = full_k + 48;
    const int below = min((w.first + 1) / BLOCK_N, w.mine); /* tiles the group sees whole */
    uint32_t p[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; kk++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            p[kk][i] = 0u;
    for (int j = 0; j < below; j++)
        sm90_overlap_turn<false>(w, a, base, j, p, g0);
    for (int j = below; j < w.mine; j++)
        sm90_overlap_turn<true>(w, a, base, j, p, g0);
    const int last = g0 + w.mine - 1, lst = last % STAGES;
    q35_mbar_wait(full_v + 8 * lst, (last / STAGES) & 1);
    sm90_pv(w.o, p, base + OFF_V + lst * TILE_BYTES, -1);
    q35_mbar_arrive(empty_v + 8 * lst);
    for (int g = g0 + w.mine; g < g0 + tiles; g++) {
        const int st = g % STAGES;
        q35_mbar_wait(full_k + 8 * st, (g / STAGES) & 1);
        q35_mbar_arrive(empty_k + 8 * st);
        q35_mbar_wait(full_v + 8 * st, (g / STAGES) & 1);
        q35_mbar_arrive(empty_v + 8 * st);
    }
}

/* Work item u of a launch: query tile qtiles - 1 - u / kv_heads (longest
 * rows first) of KV head u % kv_heads, its rows r0 .. r0 + rows - 1 and the
 * KV tiles its last row sees. */
struct sm90_item {
    int kvh, r0, rows, tiles;
};

__device__ __forceinline__ sm90_item sm90_item_at(const sm90_args &a, int u)
{
    sm90_item it;
    it.kvh = u % a.kv_heads, it.r0 = (a.qtiles - 1 - u / a.kv_heads) * a.R, it.rows = min(a.R, a.T - it.r0);
    it.tiles = (a.pos0 + it.r0 + it.rows - 1) / BLOCK_N + 1;
    return it;
}

/* The ring's barriers made by thread 0, then the block met: full_k, full_v
 * (the producer's expect_tx), empty (K's in fa3turn, overlap and persist) and
 * V's (those three): every consumer thread's arrival. */
__device__ __forceinline__ void sm90_barriers_init(uint32_t base)
{
    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; i++) {
            q35_mbar_init(base + OFF_BAR + 8 * i, 1);
            q35_mbar_init(base + OFF_BAR + 16 + 8 * i, 1);
            q35_mbar_init(base + OFF_BAR + 32 + 8 * i, 256);
            q35_mbar_init(base + OFF_BAR + 48 + 8 * i, 256);
        }
        q35_mbar_init_fence();
    }
    __syncthreads();
}

#endif /* Q35_SM90A_CODE */

/* The kernel of one schedule (SCHED_*), with o in f32 or (GATED) the gated
 * f16 y16: two instantiations, so the f32 form's code is the same with or
 * without the gated one (the gated epilogue's 64 sigmoids a thread change
 * how ptxas schedules the whole kernel). */
template <int SCHED, bool GATED>
__global__ void __launch_bounds__(THREADS, 1)
    q35_flash_sm90_kernel(const __grid_constant__ q35_tma_map kmap, const __grid_constant__ q35_tma_map vmap,
                          const sm90_args a)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u;
    const sm90_item it = sm90_item_at(a, (int)blockIdx.x);
    sm90_barriers_init(base);
    if (threadIdx.x < 128) {
        q35_setmaxnreg_dec<24>();
        if (threadIdx.x == 0)
            sm90_produce(&kmap, &vmap, base, it.tiles, it.kvh, base + OFF_BAR + 32,
                         base + OFF_BAR + (SCHED == SCHED_FA3TURN || SCHED == SCHED_OVERLAP ? 48 : 32));
    } else {
        q35_setmaxnreg_inc<240>();
        sm90_consumer w;
        sm90_consumer_init(w, a, base, threadIdx.x / 128 - 1, it.r0, it.rows, it.kvh);
        if (SCHED == SCHED_FA3TURN)
            sm90_fa3_loop(w, a, base, it.tiles);
        else if (SCHED == SCHED_OVERLAP)
            sm90_overlap_loop(w, a, base, it.tiles);
        else
            sm90_loop<SCHED>(w, a, base, it.tiles);
        sm90_store<GATED>(w, a, it.r0, it.rows, it.kvh);
    }
#else
    (void)kmap, (void)vmap, (void)a;
    __trap(); /* built without sm_90a code: the launcher refuses first */
#endif
}

/* persist: overlap's schedule on a persistent grid (a block an SM). The
 * blocks walk the work items u (query tile qtiles - 1 - u / kv_heads, KV
 * head u % kv_heads: longest rows first, as the one-block-an-item grid
 * orders them) in rounds of gridDim.x, snaking (round r takes u = r G + b,
 * or r G + G - 1 - b when r is odd) so the long and short items of
 * successive rounds even out across blocks; one ring runs on through a
 * block's items (its tiles counted from g0), so the producer loads the next
 * item's first K / V tiles while the consumers finish this one and store it.
 * The same products in the same order as overlap (and serial): the same
 * bits. */
template <bool GATED>
__global__ void __launch_bounds__(THREADS, 1)
    q35_flash_sm90_persist_kernel(const __grid_constant__ q35_tma_map kmap, const __grid_constant__ q35_tma_map vmap,
                                  const sm90_args a)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u;
    sm90_barriers_init(base);
    const int G = (int)gridDim.x, b = (int)blockIdx.x, n = a.qtiles * a.kv_heads;
    /* round r's item of this block, or -1 past the last */
    auto item = [&](int r) { const int u = r * G + (r % 2 ? G - 1 - b : b); return u < n ? u : -1; };
    if (threadIdx.x < 128) {
        q35_setmaxnreg_dec<24>();
        if (threadIdx.x == 0)
            for (int r = 0, g = 0, u; (u = item(r)) >= 0; r++) {
                const sm90_item it = sm90_item_at(a, u);
                sm90_produce(&kmap, &vmap, base, it.tiles, it.kvh, base + OFF_BAR + 32, base + OFF_BAR + 48, g);
                g += it.tiles;
            }
    } else {
        q35_setmaxnreg_inc<240>();
        for (int r = 0, g = 0, u; (u = item(r)) >= 0; r++) {
            const sm90_item it = sm90_item_at(a, u);
            sm90_consumer w;
            sm90_consumer_init(w, a, base, threadIdx.x / 128 - 1, it.r0, it.rows, it.kvh);
            sm90_overlap_loop(w, a, base, it.tiles, g);
            sm90_store<GATED>(w, a, it.r0, it.rows, it.kvh);
            g += it.tiles;
        }
    }
#else
    (void)kmap, (void)vmap, (void)a;
    __trap(); /* built without sm_90a code: the launcher refuses first */
#endif
}

/* A variant's entry: its kernel. */
typedef void (*sm90_kernel_fn)(q35_tma_map, q35_tma_map, sm90_args);

/* A variant's kernels: o in f32, and the gated f16 form; whether its grid is
 * persistent (a block an SM). */
struct sm90_kernels {
    sm90_kernel_fn plain, gated;
    bool persist;
};

static const sm90_kernels k_serial = {&q35_flash_sm90_kernel<SCHED_SERIAL, false>,
                                      &q35_flash_sm90_kernel<SCHED_SERIAL, true>, false};
static const sm90_kernels k_pingpong = {&q35_flash_sm90_kernel<SCHED_PINGPONG, false>,
                                        &q35_flash_sm90_kernel<SCHED_PINGPONG, true>, false};
static const sm90_kernels k_fa3turn = {&q35_flash_sm90_kernel<SCHED_FA3TURN, false>,
                                       &q35_flash_sm90_kernel<SCHED_FA3TURN, true>, false};
static const sm90_kernels k_overlap = {&q35_flash_sm90_kernel<SCHED_OVERLAP, false>,
                                       &q35_flash_sm90_kernel<SCHED_OVERLAP, true>, false};
static const sm90_kernels k_persist = {&q35_flash_sm90_persist_kernel<false>, &q35_flash_sm90_persist_kernel<true>,
                                       true};

/* The variants: serial (the oracle), pingpong, fa3turn, overlap (the default),
 * persist (overlap on a persistent grid). */
static const q35_variant k_table[] = {
    {"serial", 0, &k_serial},
    {"pingpong", 1, &k_pingpong},
    {"fa3turn", 2, &k_fa3turn},
    {"overlap", 3, &k_overlap},
    {"persist", 4, &k_persist},
};
static const q35_variant_set k_set = {Q35_VARIANT_TABLE(k_table), NULL, NULL};

Q35_VARIANT_REGISTRY(attention_flash_sm90, k_set)

int q35_attention_flash_sm90_variant_default(void)
{
    return q35_variant_find(&k_set, "overlap"); /* bitwise serial, faster (bench/results/, family flash_sm90) */
}

int q35_attention_flash_sm90_built(void)
{
    return Q35_SM90;
}

int q35_attention_flash_sm90_supported(int device, q35_attn_shape s, q35_error *why)
{
    if (!q35_sm90_device_ok(device, Q35_SM90, SMEM_BYTES, "flash_sm90", why))
        return 0;
    if (s.head_dim != HD)
        return q35_fail(why, "flash_sm90: takes head_dim %d only, not %d", HD, s.head_dim), 0;
    if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0)
        return q35_fail(why, "flash_sm90: heads %d is not a multiple of kv_heads %d", s.heads, s.kv_heads), 0;
    if (!sm90_rows(s.heads / s.kv_heads))
        return q35_fail(why, "flash_sm90: %d query heads per KV head (takes 1, 2, 3, 4, 6 or 8)",
                        s.heads / s.kv_heads),
               0;
    return 1;
}

/* The launch of both forms: o f32, or (y16 non-NULL) the gated f16 y16 from gate. */
static int launch(const char *who, float *o, uint16_t *y16, const float *gate, const float *q, const uint16_t *k_cache,
                  const uint16_t *v_cache, int64_t pos0, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                  q35_error *err)
{
    if (q35_attention_check_shape(who, s, err))
        return -1;
    const q35_variant *v = q35_variant_at(&k_set, variant == Q35_VARIANT_DEFAULT
                                                      ? q35_attention_flash_sm90_variant_default()
                                                      : variant);
    if (!v)
        return q35_fail(err, "%s: flash_sm90 has variants 0..%d, not %d", who, q35_variant_count(&k_set) - 1,
                        variant);
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err))
        return -1;
    q35_error why = {{0}};
    if (!q35_attention_flash_sm90_supported(dev, s, &why))
        return q35_fail(err, "%s: %s", who, why.msg);
    if (pos0 < 0 || T < 0 || pos0 > (int64_t)INT32_MAX - T)
        return q35_fail(err, "%s: pos0 %lld, T %lld (>= 0, pos0 + T <= %d)", who, (long long)pos0, (long long)T,
                        INT32_MAX);
    if ((uintptr_t)q % 16 || s.q_stride % 4 || s.o_stride % 2)
        return q35_fail(err, "%s: q must be 16-byte aligned with a stride of whole float4 (%lld), the output "
                             "with an even stride (%lld)",
                        who, (long long)s.q_stride, (long long)s.o_stride);
    if (y16 ? (uintptr_t)y16 % 4 || (uintptr_t)gate % 8 : (uintptr_t)o % 8)
        return q35_fail(err, "%s: %s", who, y16 ? "y16 must be 4-byte aligned and gate 8-byte aligned"
                                                : "o must be 8-byte aligned");
    if ((uintptr_t)k_cache % 16 || (uintptr_t)v_cache % 16 || s.kv_stride % 8)
        return q35_fail(err, "%s: TMA needs 16-byte aligned caches and a row stride of whole 16 bytes (kv_stride %lld "
                             "f16 is not a multiple of 8, or a cache is misaligned)",
                        who, (long long)s.kv_stride);
    if (T == 0)
        return 0;
    const int hpk = s.heads / s.kv_heads, R = sm90_rows(hpk);
    const int64_t n_ctx = pos0 + T, qtiles = (T + R - 1) / R;
    const uint64_t dims[2] = {(uint64_t)s.kv_heads * HD, (uint64_t)n_ctx}, strides[1] = {(uint64_t)s.kv_stride * 2};
    const uint32_t box[2] = {64, BLOCK_N};
    q35_tma_map kmap, vmap;
    if (q35_tma_map_f16(&kmap, k_cache, 2, dims, strides, box, 1, who, err) ||
        q35_tma_map_f16(&vmap, v_cache, 2, dims, strides, box, 1, who, err))
        return -1;
    const sm90_args a = {o,        q,  s.q_stride, s.o_stride, (int)pos0, (int)T, hpk, R, s.kv_heads, (int)qtiles,
                         s.scale * LOG2E, gate, y16};
    const sm90_kernels *ks = (const sm90_kernels *)v->impl;
    const sm90_kernel_fn kernel = y16 ? ks->gated : ks->plain;
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            SMEM_BYTES),
                       err))
        return -1;
    int64_t blocks = qtiles * s.kv_heads;
    if (blocks > INT32_MAX)
        return q35_fail(err, "%s: %lld work items (T %lld) past %d", who, (long long)blocks, (long long)T, INT32_MAX);
    if (ks->persist && q35_sm90_persistent_blocks(dev, blocks, 1, &blocks, err))
        return -1;
    kernel<<<(unsigned)blocks, THREADS, SMEM_BYTES, (cudaStream_t)stream>>>(kmap, vmap, a);
    return Q35_LAUNCH_CHECK(ks->persist ? "q35_flash_sm90_persist_kernel" : "q35_flash_sm90_kernel", err);
}

int q35_attention_prefill_flash_sm90(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                     int64_t pos0, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                     q35_error *err)
{
    return launch("attention_prefill_flash_sm90", o, NULL, NULL, q, k_cache, v_cache, pos0, T, s, variant, stream,
                  err);
}

int q35_attention_prefill_flash_sm90_gated_f16(uint16_t *y16, const float *gate, const float *q,
                                               const uint16_t *k_cache, const uint16_t *v_cache, int64_t pos0,
                                               int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                               q35_error *err)
{
    static const char *who = "attention_prefill_flash_sm90_gated_f16";
    if (!y16 || !gate)
        return q35_fail(err, "%s: y16 %p, gate %p (both wanted)", who, (void *)y16, (const void *)gate);
    return launch(who, NULL, y16, gate, q, k_cache, v_cache, pos0, T, s, variant, stream, err);
}
