/* NVTX ranges (prefill -> chunk -> layer -> op) and the per-op device timing:
 * a pair of CUDA events around each op, recorded only when the call is timed,
 * read back after the call's last launch. */
#include "cuda_internal.h"

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>

void q35_trace_push(const char *name)
{
    nvtxRangePushA(name);
}

void q35_trace_pop(void)
{
    nvtxRangePop();
}

/* Grows the pool of event pairs by doubling; 0, or -1 when out of memory. */
static int timer_grow(q35_timer *t, q35_error *err)
{
    const int cap = t->cap ? 2 * t->cap : 256;
    void **ev = realloc(t->ev, (size_t)cap * 2 * sizeof *ev);
    if (ev)
        t->ev = ev;
    q35_op *op = realloc(t->op, (size_t)cap * sizeof *op);
    if (op)
        t->op = op;
    if (!ev || !op)
        return q35_fail(err, "op timing: out of memory for %d event pairs", cap);
    for (int i = 2 * t->cap; i < 2 * cap; i++) {
        cudaEvent_t e = NULL;
        if (Q35_CUDA_CHECK(cudaEventCreate(&e), err)) {
            t->cap = i / 2; /* the pairs made so far stay whole */
            for (int j = 2 * t->cap; j < i; j++)
                cudaEventDestroy((cudaEvent_t)t->ev[j]);
            return -1;
        }
        t->ev[i] = e;
    }
    t->cap = cap;
    return 0;
}

void q35_op_begin(q35_run *r, q35_op op, const char *name)
{
    nvtxRangePushA(name);
    if (op != Q35_OP_PROJ) /* it may rewrite the x that the f16 scratch rounds (or holds in 8 bits) */
        r->x16_of = r->xq_of = NULL;
    if (!r->times)
        return;
    q35_timer *t = &r->cm->timer;
    /* a full pool: read back what it holds (a sync, only when timing) */
    if (t->n == t->cap && t->cap >= 65536 && q35_timer_collect(r->cm, r->times, r->err))
        r->timing_rc = -1;
    else if (t->n == t->cap && timer_grow(t, r->err))
        r->timing_rc = -1;
    if (r->timing_rc)
        return;
    t->op[t->n] = op;
    r->timing_rc = Q35_CUDA_CHECK(cudaEventRecord((cudaEvent_t)t->ev[2 * t->n], (cudaStream_t)r->cm->stream), r->err);
}

int q35_op_end(q35_run *r, int rc)
{
    if (r->times && !r->timing_rc) {
        q35_timer *t = &r->cm->timer;
        r->timing_rc =
            Q35_CUDA_CHECK(cudaEventRecord((cudaEvent_t)t->ev[2 * t->n + 1], (cudaStream_t)r->cm->stream), r->err);
        t->n += r->timing_rc == 0;
    }
    nvtxRangePop();
    return rc || r->timing_rc ? -1 : 0;
}

void q35_op_flop(q35_run *r, q35_op op, double flop)
{
    if (r->times)
        r->times->flop[op] += flop;
}

int q35_timer_collect(q35_cuda_model *cm, q35_op_times *times, q35_error *err)
{
    q35_timer *t = &cm->timer;
    const int n = t->n;
    t->n = 0;
    if (n == 0 || !times)
        return 0;
    if (Q35_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)t->ev[2 * n - 1]), err))
        return -1;
    for (int i = 0; i < n; i++) {
        float ms = 0.0f;
        if (Q35_CUDA_CHECK(cudaEventElapsedTime(&ms, (cudaEvent_t)t->ev[2 * i], (cudaEvent_t)t->ev[2 * i + 1]), err))
            return -1;
        times->seconds[t->op[i]] += 1e-3 * (double)ms;
        times->calls[t->op[i]]++;
    }
    return 0;
}

void q35_timer_free(q35_timer *t)
{
    for (int i = 0; i < 2 * t->cap; i++)
        cudaEventDestroy((cudaEvent_t)t->ev[i]);
    free(t->ev);
    free(t->op);
    t->ev = NULL;
    t->op = NULL;
    t->n = t->cap = 0;
}
