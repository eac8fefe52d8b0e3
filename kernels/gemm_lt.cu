/* The f16 GEMM through cuBLASLt with an algorithm chosen per shape
 * (kernels/gemm_lt.h): gemm.cu's cublasGemmEx call as cuBLASLt descriptors
 * (q35_lt_call_make: A = W, B = X f16, C = D = y f32, compute 32F), or with
 * C = D = y16 f16 (the _f16 form: the same f32 accumulation rounded once in the
 * epilogue). */
#include "kernels/gemm_lt.h"
#include "kernels/linear_args.cuh"
#include "kernels/lt_call.cuh"

#include <cuda_runtime.h>
#include <algorithm>
#include <new>

namespace {

constexpr int kTimed = 3; /* timed calls of a candidate, after one warm-up */

/* Steady tuning (Q35_HGEMM_TUNE_STEADY): the candidates timed in kRounds
 * rounds, each candidate's calls in a round lasting ~kRoundMs, all rounds
 * back to back after ~kHeatMs of the first candidate's calls, one wait at the
 * end: a candidate's time its median round's, taken while the device runs
 * GEMMs without a break, as in a prefill. */
constexpr int kRounds = 5;
constexpr float kRoundMs = 1.0f, kHeatMs = 20.0f;

/* What y holds: f32 (beta 0), f32 added to (beta 1), f16 (beta 0). */
enum out_kind { OUT_F32, OUT_F32_ADD, OUT_F16 };

const char *const k_who[] = {"hgemm", "hgemm_add", "hgemm_f16"};

/* What makes two calls one shape (gemm_lt.h). */
struct shape_key {
    int n, k, T, ldy;
    out_kind out;
    uint32_t align[3]; /* of w16 (A), x16 (B), y (C = D) */
};

bool same_shape(const shape_key &a, const shape_key &b)
{
    return a.n == b.n && a.k == b.k && a.T == b.T && a.ldy == b.ldy && a.out == b.out && a.align[0] == b.align[0] &&
           a.align[1] == b.align[1] && a.align[2] == b.align[2];
}

/* The split-K reductions a shape's algorithms may use: for f16 out only those
 * that keep the partial sums in f32 (cublasLt.h: INPLACE adds the parts in the
 * output's type, in y; OUTPUT_TYPE stores them in it), so the f32 sum is
 * rounded to f16 once; for f32 out any. */
uint32_t reductions_of(out_kind out)
{
    return out == OUT_F16 ? (uint32_t)CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE : (uint32_t)CUBLASLT_REDUCTION_SCHEME_MASK;
}

/* The largest power of two up to 256 that divides p's address. */
uint32_t align_of(const void *p)
{
    uint32_t a = 256;
    while (a > 1 && (uintptr_t)p % a)
        a /= 2;
    return a;
}

/* A shape's descriptors, its algorithm and how it was chosen. */
struct entry {
    bool used = false;
    shape_key key = {};
    q35_lt_call call;
    cublasLtMatmulAlgo_t algo = {};
    q35_hgemm_choice choice = {};
};

} // namespace

struct q35_hgemm {
    cublasLtHandle_t lt = nullptr;
    cudaStream_t stream = nullptr;
    void *workspace = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr; /* around a candidate's timed calls */
    int tune = 0; /* 0, Q35_HGEMM_TUNE_BURST or Q35_HGEMM_TUNE_STEADY */
    entry cache[Q35_HGEMM_CACHE];
    int next = 0;  /* the entry the next new shape replaces */
    int last = -1; /* the entry of the last call */
};

int q35_hgemm_create(q35_hgemm **out, q35_stream stream, int tune, q35_error *err)
{
    *out = nullptr;
    q35_hgemm *h = new (std::nothrow) q35_hgemm();
    if (!h)
        return q35_fail(err, "hgemm_create: out of host memory");
    h->stream = (cudaStream_t)stream;
    if (tune < 0 || tune > Q35_HGEMM_TUNE_STEADY) {
        delete h;
        return q35_fail(err, "hgemm_create: tune = %d (want 0, %d burst or %d steady)", tune, Q35_HGEMM_TUNE_BURST,
                        Q35_HGEMM_TUNE_STEADY);
    }
    h->tune = tune;
    if (Q35_CUBLAS_CHECK(cublasLtCreate(&h->lt), err) ||
        Q35_CUDA_CHECK(cudaMalloc(&h->workspace, Q35_LT_WORKSPACE_BYTES), err) ||
        Q35_CUDA_CHECK(cudaEventCreate(&h->start), err) || Q35_CUDA_CHECK(cudaEventCreate(&h->stop), err)) {
        q35_hgemm_destroy(h);
        return q35_fail_context(err, "hgemm_create (a cuBLASLt handle, its %zu MiB workspace, two events)",
                                Q35_LT_WORKSPACE_BYTES >> 20);
    }
    *out = h;
    return 0;
}

void q35_hgemm_destroy(q35_hgemm *h)
{
    if (!h)
        return;
    if (h->stop)
        cudaEventDestroy(h->stop);
    if (h->start)
        cudaEventDestroy(h->start);
    cudaFree(h->workspace);
    if (h->lt)
        cublasLtDestroy(h->lt);
    delete h;
}

int q35_hgemm_tune(const q35_hgemm *h)
{
    return h->tune;
}

int q35_hgemm_last_choice(const q35_hgemm *h, q35_hgemm_choice *out)
{
    if (h->last < 0)
        return -1;
    *out = h->cache[h->last].choice;
    return 0;
}

namespace {

/* A choice not (yet) timed: `candidates` of them, `chosen` kept. */
q35_hgemm_choice untimed(int candidates, int chosen)
{
    q35_hgemm_choice c;
    c.candidates = candidates, c.chosen = chosen, c.tuned = 0, c.first_ms = -1.0f, c.best_ms = -1.0f;
    return c;
}

/* One GEMM of the shape through algo into y (C = D = y, f32 or f16 as c's
 * layout says; beta 1 adds). */
int matmul(const q35_hgemm *h, const q35_lt_call &c, const cublasLtMatmulAlgo_t *algo, void *y, const uint16_t *x16,
           const uint16_t *w16, float beta, q35_error *err)
{
    const float one = 1.0f;
    return Q35_CUBLAS_CHECK(cublasLtMatmul(h->lt, c.desc, &one, w16, c.a, x16, c.b, &beta, y, c.d, y, c.d, algo,
                                           h->workspace, Q35_LT_WORKSPACE_BYTES, h->stream),
                            err);
}

/* A candidate cuBLASLt refused to run: its status is dropped (the next one is
 * tried), and so is a launch error it may have left (not sticky: a device
 * fault stays, and the next event's check reports it), which the next
 * launch's check would otherwise take for its own. */
int refused_candidate()
{
    (void)cudaGetLastError();
    return 0;
}

/* *ms = ms a call of algo into y over kTimed calls after a warm-up, or -1 when
 * cuBLASLt refuses to run it. -1 when an event fails (a device error: every
 * later call would). */
int time_algo(q35_hgemm *h, const q35_lt_call &c, const cublasLtMatmulAlgo_t *algo, void *y, const uint16_t *x16,
              const uint16_t *w16, float beta, float *ms, q35_error *err)
{
    q35_error refused = {{0}};
    float total = 0.0f;
    *ms = -1.0f;
    if (matmul(h, c, algo, y, x16, w16, beta, &refused))
        return refused_candidate();
    if (Q35_CUDA_CHECK(cudaEventRecord(h->start, h->stream), err))
        return -1;
    for (int i = 0; i < kTimed; i++)
        if (matmul(h, c, algo, y, x16, w16, beta, &refused))
            return refused_candidate();
    if (Q35_CUDA_CHECK(cudaEventRecord(h->stop, h->stream), err) ||
        Q35_CUDA_CHECK(cudaEventSynchronize(h->stop), err) ||
        Q35_CUDA_CHECK(cudaEventElapsedTime(&total, h->start, h->stop), err))
        return -1;
    *ms = total / kTimed;
    return 0;
}

/* Events a steady tuning records, destroyed with it. */
struct event_set {
    cudaEvent_t ev[2 * kRounds * Q35_HGEMM_CANDIDATES] = {};
    event_set() = default;
    event_set(const event_set &) = delete;
    event_set &operator=(const event_set &) = delete;
    ~event_set()
    {
        for (cudaEvent_t e : ev)
            if (e)
                cudaEventDestroy(e);
    }
};

/* ms[i] (in: candidate i's burst time, time_algo's, which sizes its calls a
 * round; -1 where cuBLASLt refuses it) = ms a call of it in steady tuning
 * (above): the heat and the rounds, one wait. -1 when a CUDA call fails. */
int time_steady(q35_hgemm *h, const q35_lt_call &c, const cublasLtMatmulHeuristicResult_t *res, int found, void *y,
                const uint16_t *x16, const uint16_t *w16, float beta, float *ms, q35_error *err)
{
    int calls[Q35_HGEMM_CANDIDATES] = {}, first = -1;
    for (int i = 0; i < found; i++) {
        if (ms[i] >= 0.0f) {
            const float want = kRoundMs / (ms[i] > 1e-4f ? ms[i] : 1e-4f);
            calls[i] = want < 1.0f ? 1 : want > 10000.0f ? 10000 : (int)want + 1;
            first = first < 0 ? i : first;
        }
    }
    if (first < 0)
        return 0; /* none ran: tune_shape says so */
    event_set e;
    const int heat = (int)(kHeatMs / kRoundMs) * calls[first];
    for (int k = 0; k < heat; k++)
        if (matmul(h, c, &res[first].algo, y, x16, w16, beta, err))
            return q35_fail_context(err, "steady tuning: heating with candidate %d", first);
    for (int r = 0; r < kRounds; r++)
        for (int i = 0; i < found; i++) {
            if (calls[i] == 0)
                continue;
            cudaEvent_t *pair = &e.ev[2 * (r * Q35_HGEMM_CANDIDATES + i)];
            if (Q35_CUDA_CHECK(cudaEventCreate(&pair[0]), err) || Q35_CUDA_CHECK(cudaEventCreate(&pair[1]), err) ||
                Q35_CUDA_CHECK(cudaEventRecord(pair[0], h->stream), err))
                return -1;
            for (int k = 0; k < calls[i]; k++)
                if (matmul(h, c, &res[i].algo, y, x16, w16, beta, err))
                    return q35_fail_context(err, "steady tuning: candidate %d, round %d", i, r);
            if (Q35_CUDA_CHECK(cudaEventRecord(pair[1], h->stream), err))
                return -1;
        }
    if (Q35_CUDA_CHECK(cudaStreamSynchronize(h->stream), err))
        return -1;
    for (int i = 0; i < found; i++) {
        if (calls[i] == 0)
            continue;
        float round_ms[kRounds];
        for (int r = 0; r < kRounds; r++) {
            const cudaEvent_t *pair = &e.ev[2 * (r * Q35_HGEMM_CANDIDATES + i)];
            if (Q35_CUDA_CHECK(cudaEventElapsedTime(&round_ms[r], pair[0], pair[1]), err))
                return -1;
            round_ms[r] /= (float)calls[i];
        }
        std::nth_element(round_ms, round_ms + kRounds / 2, round_ms + kRounds);
        ms[i] = round_ms[kRounds / 2];
    }
    return 0;
}

/* The fastest of the candidates res[0..found), timed into y (beta 0: the call
 * then overwrites what the timing wrote) or into a copy of y at y's alignment
 * (OUT_F32_ADD: beta 1 as the call, on y's values, y itself untouched). */
int tune_shape(q35_hgemm *h, const q35_lt_call &c, const shape_key &s, const cublasLtMatmulHeuristicResult_t *res,
               int found, void *y, const uint16_t *x16, const uint16_t *w16, cublasLtMatmulAlgo_t *algo,
               q35_hgemm_choice *choice, q35_error *err)
{
    const bool add = s.out == OUT_F32_ADD;
    const size_t y_floats = (size_t)(s.T - 1) * (size_t)s.ldy + (size_t)s.n; /* the last row ends at column n */
    void *copy = nullptr;
    void *into = y;
    if (add) {
        if (Q35_CUDA_CHECK(cudaMalloc(&copy, y_floats * sizeof(float) + 256), err))
            return q35_fail_context(err, "a copy of y (%zu floats) to time the candidates with beta 1", y_floats);
        into = (char *)copy + (uintptr_t)y % 256;
        if (Q35_CUDA_CHECK(cudaMemcpyAsync(into, y, y_floats * sizeof(float), cudaMemcpyDeviceToDevice, h->stream),
                           err)) {
            cudaFree(copy);
            return -1;
        }
    }
    *choice = untimed(found, -1);
    choice->tuned = 1;
    const float beta = add ? 1.0f : 0.0f;
    float ms[Q35_HGEMM_CANDIDATES];
    int rc = 0;
    for (int i = 0; i < found && rc == 0; i++)
        rc = time_algo(h, c, &res[i].algo, into, x16, w16, beta, &ms[i], err);
    if (rc == 0 && h->tune == Q35_HGEMM_TUNE_STEADY)
        rc = time_steady(h, c, res, found, into, x16, w16, beta, ms, err);
    for (int i = 0; i < found && rc == 0; i++) {
        if (i == 0)
            choice->first_ms = ms[i];
        if (ms[i] >= 0.0f && (choice->chosen < 0 || ms[i] < choice->best_ms))
            choice->chosen = i, choice->best_ms = ms[i], *algo = res[i].algo;
    }
    q35_error freed = {{0}};
    if (copy && Q35_CUDA_CHECK(cudaFree(copy), &freed) && rc == 0)
        rc = q35_fail(err, "%s", freed.msg);
    if (rc)
        return q35_fail_context(err, "timing the candidates");
    if (choice->chosen < 0)
        return q35_fail(err, "none of cuBLASLt's %d candidates ran", found);
    return 0;
}

/* The algorithm of shape s (descriptors c): the heuristic's candidates, then
 * the fastest of them (tune) or its first. */
int choose(q35_hgemm *h, const q35_lt_call &c, const shape_key &s, bool tune, void *y, const uint16_t *x16,
           const uint16_t *w16, cublasLtMatmulAlgo_t *algo, q35_hgemm_choice *choice, q35_error *err)
{
    cublasLtMatmulHeuristicResult_t res[Q35_HGEMM_CANDIDATES] = {};
    int found = 0, ok = 0;
    if (q35_lt_candidates(h->lt, c, s.align, reductions_of(s.out), Q35_HGEMM_CANDIDATES, res, &found, err))
        return q35_fail_context(err, "asking cuBLASLt's heuristic");
    for (int i = 0; i < found; i++) /* the usable ones, in the heuristic's order */
        if (res[i].state == CUBLAS_STATUS_SUCCESS)
            res[ok++] = res[i];
    if (ok < 1)
        return q35_fail(err, "cuBLASLt has no algorithm for it (f16 x f16, f32 accumulation, %s output, pointers "
                        "aligned to %u, %u, %u bytes)", s.out == OUT_F16 ? "f16" : "f32", s.align[0], s.align[1],
                        s.align[2]);
    if (tune)
        return tune_shape(h, c, s, res, ok, y, x16, w16, algo, choice, err);
    *algo = res[0].algo;
    *choice = untimed(ok, 0);
    return 0;
}

/* y (f32, or f16 for OUT_F16) = the product, or y += it (OUT_F32_ADD). */
int hgemm(q35_hgemm *h, void *y, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16, int64_t n,
          int64_t k, out_kind out, q35_error *err)
{
    const char *who = k_who[out];
    if (q35_check_gemm(who, Q35_TYPE_F16, n, k, T, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    const shape_key s = {(int)n, (int)k, (int)T, (int)ldy, out, {align_of(w16), align_of(x16), align_of(y)}};
    int at = -1;
    for (int i = 0; i < Q35_HGEMM_CACHE && at < 0; i++)
        if (h->cache[i].used && same_shape(h->cache[i].key, s))
            at = i;
    bool tune = h->tune && (at < 0 || !h->cache[at].choice.tuned);
    if (tune) { /* nothing is timed while the stream is being captured into a graph */
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        if (Q35_CUDA_CHECK(cudaStreamIsCapturing(h->stream, &capture), err))
            return q35_fail_context(err, "%s", who);
        tune = capture == cudaStreamCaptureStatusNone;
    }
    q35_lt_call c; /* a new shape's descriptors */
    cublasLtMatmulAlgo_t algo;
    q35_hgemm_choice choice;
    const bool fresh = at < 0, chosen = fresh || tune; /* tune on a kept shape: first met under a capture */
    const cudaDataType_t d_type = out == OUT_F16 ? CUDA_R_16F : CUDA_R_32F;
    if (chosen && ((fresh && q35_lt_call_make(&c, CUDA_R_16F, d_type, s.n, s.k, s.T, s.ldy, err)) ||
                   choose(h, fresh ? c : h->cache[at].call, s, tune, y, x16, w16, &algo, &choice, err)))
        return q35_fail_context(err, "%s: choosing an algorithm (n %lld, k %lld, T %lld, ldy %lld)", who,
                                (long long)n, (long long)k, (long long)T, (long long)ldy);
    if (fresh) { /* into the entry the oldest shape held */
        at = h->next;
        h->next = (h->next + 1) % Q35_HGEMM_CACHE;
        h->cache[at].call.swap(c); /* c now holds the evicted shape's descriptors, destroyed with it */
        h->cache[at].used = true, h->cache[at].key = s;
    }
    entry *e = &h->cache[at];
    if (chosen)
        e->algo = algo, e->choice = choice;
    if (matmul(h, e->call, &e->algo, y, x16, w16, out == OUT_F32_ADD ? 1.0f : 0.0f, err))
        return q35_fail_context(err, "%s (n %lld, k %lld, T %lld, ldy %lld)", who, (long long)n, (long long)k,
                                (long long)T, (long long)ldy);
    h->last = at;
    return 0;
}

} // namespace

int q35_hgemm_rounded(q35_hgemm *h, float *y, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16,
                      int64_t n, int64_t k, int add, q35_error *err)
{
    return hgemm(h, y, ldy, x16, T, w16, n, k, add ? OUT_F32_ADD : OUT_F32, err);
}

int q35_hgemm_rounded_f16(q35_hgemm *h, uint16_t *y16, int64_t ldy, const uint16_t *x16, int64_t T,
                          const uint16_t *w16, int64_t n, int64_t k, q35_error *err)
{
    return hgemm(h, y16, ldy, x16, T, w16, n, k, OUT_F16, err);
}
