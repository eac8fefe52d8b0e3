/* q35_requant_file: a qwen35 GGUF quantized again into a mix (requant.h). */
#define _POSIX_C_SOURCE 200809L
#include "model/requant.h"

#include "core/gguf.h"
#include "core/outfile.h"
#include "core/parallel.h"
#include "core/quant.h"
#include "model/mix.h"
#include "model/qwen35.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Whether llama-quantize would quantize this tensor: a 2-D (or more) ".weight"
 * but the conv kernel. */
static bool quantizable(const q35_gguf_tensor *t)
{
    const size_t n = strlen(t->name);
    return t->n_dims >= 2 && n > 7 && strcmp(t->name + n - 7, ".weight") == 0 && !strstr(t->name, "ssm_conv1d");
}

/* The mix's type of tensor t: kind is the name after "blk.N.". */
static q35_type target_type(const q35_gguf_tensor *t, const char *mix, const q35_mix_model *mm)
{
    if (!quantizable(t))
        return (q35_type)t->type;
    int layer = -1, used = 0;
    const char *kind = t->name;
    if (sscanf(t->name, "blk.%d.%n", &layer, &used) == 1 && used > 0)
        kind = t->name + used;
    else
        layer = -1;
    return q35_mix_type(mix, kind, layer, mm, t->ne[0]);
}

typedef struct job {
    const q35_gguf_tensor *t;
    q35_type to;
    uint8_t *dst;
    float **fbuf;       /* per thread, grain rows */
    int64_t grain;
} job;

static void convert_rows(void *ctx, int64_t begin, int64_t end, int thread)
{
    const job *j = ctx;
    const int64_t ne0 = j->t->ne[0];
    const size_t in_row = q35_row_bytes(j->t->type, ne0), out_row = q35_row_bytes(j->to, ne0);
    for (int64_t r = begin; r < end; r += j->grain) {
        const int64_t rows = end - r < j->grain ? end - r : j->grain;
        q35_dequantize((q35_type)j->t->type, j->t->data + (size_t)r * in_row, j->fbuf[thread], rows * ne0);
        q35_quantize(j->to, j->fbuf[thread], j->dst + (size_t)r * out_row, rows * ne0);
    }
}

static bool is_float(uint32_t type)
{
    return type == Q35_TYPE_F32 || type == Q35_TYPE_F16 || type == Q35_TYPE_BF16;
}

/* The header: every pair copied (general.file_type and quantization_version
 * set), every tensor with its new type. */
static int plan(q35_gguf_writer *w, const q35_gguf *g, const char *mix, const q35_mix_model *mm, q35_type *types,
                q35_error *err)
{
    bool ftype = false, qver = false;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const q35_gguf_kv *kv = &g->kv[i];
        int rc;
        if (strcmp(kv->key, "general.file_type") == 0) {
            rc = q35_gguf_writer_set_u32(w, kv->key, q35_mix_file_type(mix), err);
            ftype = true;
        } else if (strcmp(kv->key, "general.quantization_version") == 0) {
            rc = q35_gguf_writer_set_u32(w, kv->key, 2, err);
            qver = true;
        } else if (strcmp(kv->key, "general.alignment") == 0) {
            uint32_t a;
            rc = q35_gguf_get_u32(g, kv->key, &a, err) || q35_gguf_writer_set_alignment(w, a, err);
        } else {
            rc = q35_gguf_writer_copy(w, kv, err);
        }
        if (rc)
            return -1;
    }
    if ((!qver && q35_gguf_writer_set_u32(w, "general.quantization_version", 2, err)) ||
        (!ftype && q35_gguf_writer_set_u32(w, "general.file_type", q35_mix_file_type(mix), err)))
        return -1;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        types[i] = target_type(t, mix, mm);
        if (types[i] != (q35_type)t->type && (!q35_type_computable(t->type) || !q35_type_computable(types[i])))
            return q35_fail(err, "tensor '%s' is %s, which this build cannot %s into %s", t->name,
                            q35_type_name(t->type), q35_type_computable(t->type) ? "quantize" : "dequantize",
                            q35_type_name(types[i]));
        if (q35_gguf_writer_add_tensor(w, t->name, types[i], t->n_dims, t->ne, err) < 0)
            return -1;
    }
    return 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Writes the tensors after the header, each converted into one buffer. */
static int write_tensors(q35_outfile *f, const q35_gguf_writer *w, const q35_gguf *g, const q35_type *types,
                         q35_requant_stats *s, q35_error *err)
{
    const int threads = q35_threads();
    float **fbuf = calloc((size_t)threads, sizeof *fbuf);
    uint8_t *dst = NULL;
    size_t dst_cap = 0;
    int rc = fbuf ? 0 : q35_fail(err, "out of memory");
    uint64_t at = q35_gguf_writer_data_offset(w);
    static const uint8_t zeros[64];
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        const uint64_t off = q35_gguf_writer_tensor_offset(w, (int64_t)i), bytes = q35_gguf_writer_tensor_bytes(w, (int64_t)i);
        for (uint64_t pad = off - at; pad > 0 && rc == 0;) {
            const size_t n = pad > sizeof zeros ? sizeof zeros : (size_t)pad;
            rc = q35_outfile_write(f, zeros, n, err);
            pad -= n;
        }
        s->in_bytes += t->nbytes;
        s->out_bytes += bytes;
        if (rc == 0 && types[i] == (q35_type)t->type) {
            s->copied++;
            rc = q35_outfile_write(f, t->data, (size_t)bytes, err);
        } else if (rc == 0) {
            s->quantized++;
            s->requantized += !is_float(t->type);
            const int64_t ne0 = t->ne[0], rows = (int64_t)(t->nbytes / q35_row_bytes(t->type, ne0));
            const int64_t grain = ne0 >= 4096 ? 4 : 16;
            if (bytes > dst_cap) {
                free(dst);
                dst = malloc((size_t)bytes);
                dst_cap = dst ? (size_t)bytes : 0;
            }
            if (!dst)
                rc = q35_fail(err, "out of memory for tensor '%s' (%" PRIu64 " bytes)", t->name, bytes);
            for (int k = 0; k < threads && rc == 0; k++) { /* grain rows of this tensor's width */
                float *b = realloc(fbuf[k], (size_t)(grain * ne0) * sizeof(float));
                if (!b)
                    rc = q35_fail(err, "out of memory for tensor '%s'", t->name);
                else
                    fbuf[k] = b;
            }
            if (rc == 0) {
                job j = {.t = t, .to = types[i], .dst = dst, .fbuf = fbuf, .grain = grain};
                q35_parallel_for(rows, grain, convert_rows, &j);
                rc = q35_outfile_write(f, dst, (size_t)bytes, err);
            }
        }
        at = off + bytes;
    }
    for (int k = 0; fbuf && k < threads; k++)
        free(fbuf[k]);
    free(fbuf);
    free(dst);
    return rc;
}

int q35_requant_file(const char *in, const char *mix, const char *out, q35_requant_stats *stats, q35_error *err)
{
    q35_requant_stats s = {0};
    if (q35_mix_check(mix, err))
        return -1;
    if (same_file(in, out))
        return q35_fail(err, "the output %s is the input itself: name another file (the input is kept)", out);
    if (q35_outfile_check(out, err))
        return -1;
    q35_model *m;
    if (q35_model_open(&m, in, err))
        return -1;
    const q35_gguf *g = m->gguf;
    const q35_mix_model mm = {.n_block = m->hp.n_layer_file, .n_gqa = m->hp.n_head / m->hp.n_head_kv, .tied = m->tied};
    q35_type *types = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *types);
    q35_gguf_writer *w = q35_gguf_writer_new();
    int rc = types && w ? plan(w, g, mix, &mm, types, err) : q35_fail(err, "out of memory");
    uint8_t *hdr = NULL;
    q35_outfile f;
    bool open = false;
    if (rc == 0) {
        const uint64_t n = q35_gguf_writer_data_offset(w);
        hdr = malloc(n);
        rc = !hdr ? q35_fail(err, "out of memory for a %" PRIu64 "-byte header", n)
                  : q35_gguf_writer_write_header(w, hdr, n, err) || q35_outfile_open(&f, out, err);
        open = rc == 0;
        if (rc == 0)
            rc = q35_outfile_write(&f, hdr, (size_t)n, err);
    }
    s.tensors = (int64_t)g->n_tensors;
    if (rc == 0)
        rc = write_tensors(&f, w, g, types, &s, err);
    if (rc == 0)
        rc = q35_outfile_commit(&f, err);
    if (open)
        q35_outfile_discard(&f);
    free(hdr);
    free(types);
    q35_gguf_writer_free(w);
    q35_model_free(m);
    if (stats)
        *stats = s;
    return rc ? q35_fail_context(err, "quantizing %s into %s", in, mix) : 0;
}
