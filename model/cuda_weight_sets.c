/* The prefill weight sets of the fast GEMM paths (f16, fp8): every projection
 * converted (or quantized) once into one device allocation, in groups whose
 * members sit side by side so a merged projection is one GEMM
 * (cuda_internal.h's q35_weight_set_build; cuda_model.c calls it at load and
 * when the paths change). */
#include "cuda_internal.h"

#include "core/parallel.h"
#include "kernels/dequant.h"
#include "kernels/fp8.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

/* The projections that read one input, in the order their outputs sit side by
 * side in the chunk buffers (model/capacity.h): a merged set holds the group's
 * rows one after the other, so the group is also one weight of n = the sum
 * (its `merged`), one GEMM. A group of one is a projection alone. */
typedef struct proj_group {
    q35_dweight *merged;  /* NULL: a single projection */
    q35_dweight *w[4];
    int n;
} proj_group;

/* Every projection of the model in groups, in layer order: the count. */
static int proj_groups(q35_cuda_model *cm, proj_group *out)
{
    int n = 0;
    for (int il = 0; il < cm->hp.n_layer; il++) {
        q35_dlayer *l = &cm->layers[il];
        if (l->kind == Q35_LAYER_DELTANET) {
            out[n++] = (proj_group){&l->mix, {&l->qkv, &l->z, &l->alpha, &l->beta}, 4};
            out[n++] = (proj_group){NULL, {&l->ssm_out}, 1};
        } else {
            out[n++] = (proj_group){&l->qkv_a, {&l->q, &l->k, &l->v}, 3};
            out[n++] = (proj_group){NULL, {&l->o}, 1};
        }
        out[n++] = (proj_group){&l->gu, {&l->ffn_gate, &l->ffn_up}, 2};
        out[n++] = (proj_group){NULL, {&l->ffn_down}, 1};
    }
    return n;
}

/* Free device memory now, within the cap the options set (the cap counts what
 * this model has taken since the load measured it). */
static int free_now(q35_cuda_model *cm, uint64_t *free_out, q35_error *err)
{
    size_t f = 0, t = 0;
    if (Q35_CUDA_CHECK(cudaMemGetInfo(&f, &t), err))
        return -1;
    *free_out = f;
    const uint64_t taken = cm->info.weight_bytes + cm->ws.total;
    if (cm->opts.free_cap > 0) {
        const uint64_t capped = cm->info.free_bytes > taken ? cm->info.free_bytes - taken : 0;
        if (capped < *free_out)
            *free_out = capped;
    }
    return 0;
}

/* Places group g's rows in the set (f16: [rows][k] halves; fp8: [rows][k]
 * codes, then [rows] scales) and fills each member's from its stored weight
 * (fp8: dequantized to f32 in tmp, then each row quantized, kernels/fp8.h). */
static int fill_group(q35_cuda_model *cm, q35_arena *a, const proj_group *g, bool fp8, float *tmp, q35_error *err)
{
    int64_t rows = 0;
    const int64_t k = g->w[0]->k;
    for (int i = 0; i < g->n; i++)
        rows += g->w[i]->n;
    uint8_t *base = q35_arena_take(a, (uint64_t)(rows * k) * (fp8 ? 1u : 2u));
    float *scales = fp8 ? q35_arena_take(a, (uint64_t)rows * 4u) : NULL;
    if (!base || (fp8 && !scales))
        return q35_fail(err, "cuda model: the %s arena is too small at %s", fp8 ? "fp8" : "f16", g->w[0]->label);
    int64_t row = 0;
    for (int i = 0; i < g->n; i++) {
        q35_dweight *w = g->w[i];
        int rc;
        if (fp8) {
            w->w8 = base + row * k;
            w->s8 = scales + row;
            rc = q35_dequant_f32(tmp, w->w, w->type, w->n, w->k, cm->stream, err) ||
                 q35_fp8_quantize_rows(w->w8, w->s8, tmp, w->n, w->k, w->k, cm->stream, err);
        } else {
            w->w16 = (uint16_t *)base + row * k;
            rc = q35_dequant_f16(w->w16, w->w, w->type, w->n, w->k, cm->stream, err);
        }
        if (rc)
            return -1;
        row += w->n;
    }
    if (g->merged) { /* this set's pointers only: the other set's stay */
        q35_dweight *m = g->merged;
        m->type = g->w[0]->type, m->n = rows, m->k = k;
        if (fp8)
            m->w8 = base, m->s8 = scales;
        else
            m->w16 = (uint16_t *)base;
        snprintf(m->label, sizeof m->label, "proj %s+%d", g->w[0]->label + 5, g->n - 1);
    }
    return 0;
}

/* After a failed build: this set's pointers cleared (the other set's stay). */
static void clear_group(const proj_group *g, bool fp8)
{
    for (int i = 0; i < g->n; i++) {
        if (fp8)
            g->w[i]->w8 = NULL, g->w[i]->s8 = NULL;
        else
            g->w[i]->w16 = NULL;
    }
    if (g->merged) {
        if (fp8)
            g->merged->w8 = NULL, g->merged->s8 = NULL;
        else
            g->merged->w16 = NULL;
    }
}

/* The set of path gemm, as cuda_internal.h says. */
int q35_weight_set_build(q35_cuda_model *cm, q35_gemm_path gemm, q35_error *err)
{
    if (gemm != Q35_GEMM_F16 && gemm != Q35_GEMM_FP8)
        return 1;
    const bool fp8 = gemm == Q35_GEMM_FP8;
    if (fp8 ? cm->fp8 != NULL : cm->f16 != NULL)
        return 1;
    const char *what = fp8 ? "fp8 prefill weights" : "fp16 prefill weights";
    q35_error why = {{0}};
    if (fp8 && !q35_fp8_supported(cm->info.device, &why)) {
        q35_paths_note(cm->info.log, sizeof cm->info.log, cm->opts.quiet, "%s NOT built: %s", what, why.msg);
        return 0;
    }
    uint64_t free_b = 0;
    if (free_now(cm, &free_b, err))
        return -1;
    const uint64_t bytes = fp8 ? cm->wbytes.fp8 : cm->wbytes.f16;
    const uint64_t scratch = fp8 ? q35_align_bytes((uint64_t)cm->wbytes.largest_proj * 4u) : 0;
    if (bytes + scratch + Q35_GIB > free_b) {
        char extra[64] = "";
        if (scratch)
            snprintf(extra, sizeof extra, " + %.0f MiB of scratch", (double)scratch / (double)Q35_MIB);
        q35_paths_note(cm->info.log, sizeof cm->info.log, cm->opts.quiet,
                       "%s NOT %s: %.0f MiB%s + 1024 MiB to spare needed, %.0f MiB free", what,
                       fp8 ? "built" : "prewarmed", (double)bytes / (double)Q35_MIB, extra,
                       (double)free_b / (double)Q35_MIB);
        return 0;
    }
    proj_group *groups = malloc((size_t)cm->hp.n_layer * 4 * sizeof *groups);
    if (!groups)
        return q35_fail(err, "cuda model: out of host memory");
    const int n = proj_groups(cm, groups);
    const double t0 = q35_now();
    q35_arena a = {.size = bytes};
    float *tmp = NULL;
    int rc = Q35_CUDA_CHECK(cudaMalloc((void **)&a.base, (size_t)bytes), err) ||
             (fp8 && Q35_CUDA_CHECK(cudaMalloc((void **)&tmp, (size_t)scratch), err));
    if (rc == 0 && fp8 && !cm->fp8_gemm)
        rc = q35_fp8_gemm_create(&cm->fp8_gemm, cm->stream, err);
    for (int i = 0; i < n && rc == 0; i++)
        rc = fill_group(cm, &a, &groups[i], fp8, tmp, err);
    /* the launches are asynchronous: wait, so the time printed is the build's
     * and a fault shows here */
    if (rc == 0)
        rc = Q35_CUDA_CHECK(cudaStreamSynchronize((cudaStream_t)cm->stream), err);
    cudaFree(tmp);
    if (rc) {
        for (int i = 0; i < n; i++)
            clear_group(&groups[i], fp8);
        cudaFree(a.base);
        free(groups);
        return q35_fail_context(err, "%s", what);
    }
    free(groups);
    const double ms = 1e3 * (q35_now() - t0);
    if (fp8) {
        cm->fp8 = a.base;
        cm->info.fp8_bytes = bytes;
        cm->info.fp8_prewarm_ms = ms;
        q35_paths_note(cm->info.log, sizeof cm->info.log, cm->opts.quiet, "%s: %.0f MiB built in %.0f ms", what,
                       (double)bytes / (double)Q35_MIB, ms);
    } else {
        cm->f16 = a.base;
        cm->info.f16_bytes = bytes;
        cm->info.f16_prewarm_ms = ms;
        q35_paths_note(cm->info.log, sizeof cm->info.log, cm->opts.quiet, "%s prewarmed: %.0f MiB in %.0f ms", what,
                       (double)bytes / (double)Q35_MIB, ms);
    }
    return 1;
}
