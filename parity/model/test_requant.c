/* q35_requant_file (model/requant.h): a generated f32 file quantized into each
 * mix holds, tensor for tensor, the bytes the generator writes for that mix
 * (both quantize the same f32 values with the project's quantizer; memcmp);
 * every metadata pair is copied but general.file_type and
 * quantization_version; a quantized source is quantized again from its
 * dequantized values; refusals leave the target as it was. */
#define _POSIX_C_SOURCE 200809L
#include "parity/lib/harness.h"

#include "core/gguf.h"
#include "core/quant.h"
#include "model/generate.h"
#include "model/mix.h"
#include "model/requant.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static q35_gen_options opts(const char *mix, bool tied, uint64_t seed)
{
    q35_gen_options o = q35_gen_defaults(q35_shape_find("tiny"));
    snprintf(o.mix, sizeof o.mix, "%s", mix);
    o.shape.n_layer = 4;
    o.shape.n_vocab = 256;
    o.shape.tied = tied;
    o.seed = seed;
    return o;
}

/* Whether two pairs hold the same type and value bytes. */
static bool same_kv(const q35_gguf_kv *a, const q35_gguf_kv *b)
{
    if (a->type != b->type || a->elem_type != b->elem_type || a->count != b->count)
        return false;
    if (a->type == Q35_GGUF_STRING) {
        uint64_t la, lb;
        memcpy(&la, a->data, 8);
        memcpy(&lb, b->data, 8);
        return la == lb && memcmp(a->data, b->data, 8 + la) == 0;
    }
    if (a->type != Q35_GGUF_ARRAY)
        return memcmp(a->data, b->data, q35_gguf_vtype_size(a->type)) == 0;
    if (a->elem_type != Q35_GGUF_STRING)
        return memcmp(a->data, b->data, a->count * q35_gguf_vtype_size(a->elem_type)) == 0;
    for (uint64_t i = 0; i < a->count; i++)
        if (a->strs[i].len != b->strs[i].len || memcmp(a->strs[i].data, b->strs[i].data, a->strs[i].len) != 0)
            return false;
    return true;
}

/* The requantized file against the generator's file of the mix: tensors
 * (name, type, shape, bytes) and against the source: every other pair. */
static void check_mix(q35_suite *s, const char *dir, const char *src, const q35_gguf *f32, const char *mix, bool tied,
                      uint64_t seed)
{
    char out[1024];
    snprintf(out, sizeof out, "%s/out-%s%s.gguf", dir, mix, tied ? "-tied" : "");
    q35_error err = {{0}};
    q35_requant_stats st;
    q35_gen_options o = opts(mix, tied, seed);
    void *image = NULL;
    uint64_t size = 0;
    q35_gguf *want = NULL, *got = NULL;
    if (!q35_case(s, q35_requant_file(src, mix, out, &st, &err) == 0 && q35_gguf_open(&got, out, &err) == 0 &&
                         q35_generate_image(&o, &image, &size, &err) == 0 &&
                         q35_gguf_open_memory(&want, image, size, true, &err) == 0,
                  "%-12s%s quantized and opened %s", mix, tied ? " tied" : "", err.msg)) {
        if (!want)
            free(image);
        q35_gguf_close(got);
        return;
    }
    uint64_t bad = 0, quantized = 0;
    const char *first = "";
    for (uint64_t i = 0; i < want->n_tensors && got->n_tensors == want->n_tensors; i++) {
        const q35_gguf_tensor *a = &got->tensors[i], *b = &want->tensors[i];
        const bool same = strcmp(a->name, b->name) == 0 && a->type == b->type && a->n_dims == b->n_dims &&
                          memcmp(a->ne, b->ne, sizeof a->ne) == 0 && a->nbytes == b->nbytes &&
                          memcmp(a->data, b->data, (size_t)a->nbytes) == 0;
        quantized += a->type != f32->tensors[i].type;
        if (!same && !bad++)
            first = a->name;
    }
    q35_case(s, got->n_tensors == want->n_tensors && bad == 0 && st.quantized == (int64_t)quantized &&
                    st.copied + st.quantized == st.tensors && st.requantized == 0,
             "%-12s%s %" PRIu64 " tensors (%" PRIu64 " quantized) memcmp-equal to the generator's file of the mix; "
             "%" PRIu64 " differ (first: %s)", mix, tied ? " tied" : "", got->n_tensors, quantized, bad, first);
    uint64_t kv_bad = 0;
    for (uint64_t i = 0; i < f32->n_kv; i++) {
        const q35_gguf_kv *kv = q35_gguf_find(got, f32->kv[i].key);
        kv_bad += !kv || (strcmp(kv->key, "general.file_type") != 0 && !same_kv(kv, &f32->kv[i]));
    }
    uint32_t ftype = 0, qver = 0;
    const bool ok = kv_bad == 0 && q35_gguf_get_u32(got, "general.file_type", &ftype, &err) == 0 &&
                    ftype == q35_mix_file_type(mix) &&
                    q35_gguf_get_u32(got, "general.quantization_version", &qver, &err) == 0 && qver == 2 &&
                    got->n_kv == f32->n_kv + (q35_gguf_find(f32, "general.quantization_version") ? 0 : 1);
    q35_case(s, ok,
             "%-12s%s metadata: every pair copied, file_type %u (want %u), quantization_version %u; %" PRIu64
             " differ", mix, tied ? " tied" : "", ftype, q35_mix_file_type(mix), qver, kv_bad);
    q35_gguf_close(got);
    q35_gguf_close(want);
    unlink(out);
}

/* A quantized source: each tensor of the result is its dequantized values quantized. */
static void check_requantize(q35_suite *s, const char *dir, uint64_t seed)
{
    char src[1024], out[1024];
    snprintf(src, sizeof src, "%s/q8.gguf", dir);
    snprintf(out, sizeof out, "%s/q8-q4km.gguf", dir);
    q35_gen_options o = opts("q8_0", false, seed);
    q35_error err = {{0}};
    q35_requant_stats st;
    q35_gguf *a = NULL, *b = NULL;
    if (!q35_case(s, q35_generate_file(&o, src, &err) == 0 && q35_requant_file(src, "q4_k_m", out, &st, &err) == 0 &&
                         q35_gguf_open(&a, src, &err) == 0 && q35_gguf_open(&b, out, &err) == 0,
                  "q8_0 file quantized into q4_k_m %s", err.msg)) {
        q35_gguf_close(a);
        return;
    }
    uint64_t bad = 0, n = 0;
    for (uint64_t i = 0; i < a->n_tensors; i++) {
        const q35_gguf_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (x->type == y->type) {
            bad += x->nbytes != y->nbytes || memcmp(x->data, y->data, (size_t)x->nbytes) != 0;
            continue;
        }
        const int64_t count = x->ne[0] * x->ne[1];
        float *v = malloc((size_t)count * sizeof *v);
        uint8_t *q = malloc((size_t)y->nbytes);
        q35_dequantize((q35_type)x->type, x->data, v, count);
        q35_quantize((q35_type)y->type, v, q, count);
        bad += memcmp(q, y->data, (size_t)y->nbytes) != 0;
        n++;
        free(v);
        free(q);
    }
    q35_case(s, bad == 0 && n > 0 && st.requantized == (int64_t)n,
             "q8_0 -> q4_k_m: %" PRIu64 " tensors quantized again from their dequantized values (stats say %" PRId64
             "), %" PRIu64 " differ", n, st.requantized, bad);
    q35_gguf_close(a);
    q35_gguf_close(b);
    unlink(src);
    unlink(out);
}

/* Refusals: the target, where one is there, is as it was. */
static void check_refusals(q35_suite *s, const char *dir, const char *src)
{
    char out[1024], bad[1024];
    snprintf(out, sizeof out, "%s/kept.gguf", dir);
    snprintf(bad, sizeof bad, "%s/not-a-gguf", dir);
    static const char sentinel[] = "a file the user had";
    q35_test_write_bytes(out, sentinel, sizeof sentinel);
    q35_test_write_bytes(bad, "GGUF\x03\0\0\0 truncated", 17);
    struct {
        const char *in, *mix, *out, *want;
    } cases[] = {
        {src, "q4_k_m", src, "is the input itself"},
        {src, "q9_9", out, "unknown quant mix"},
        {bad, "q4_k_m", out, "not-a-gguf"},
        {"/nonexistent/in.gguf", "q4_k_m", out, "/nonexistent/in.gguf"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        q35_error err = {{0}};
        const int rc = q35_requant_file(cases[i].in, cases[i].mix, cases[i].out, NULL, &err);
        size_t n = 0;
        char *now = q35_read_file(out, &n);
        q35_case(s, rc == -1 && strstr(err.msg, cases[i].want) && now && n == sizeof sentinel &&
                        memcmp(now, sentinel, n) == 0,
                 "refused (%s), the target kept: %s", cases[i].want, err.msg);
        free(now);
    }
    q35_error err = {{0}};
    snprintf(out, sizeof out, "%s/no-such-dir/x.gguf", dir);
    q35_case(s, q35_requant_file(src, "q8_0", out, NULL, &err) == -1 && access(out, F_OK) != 0,
             "an output in a missing folder refused, nothing written: %s", err.msg);
    unlink(bad);
    snprintf(out, sizeof out, "%s/kept.gguf", dir);
    unlink(out);
}

int main(void)
{
    q35_suite s;
    const uint64_t seed = q35_test_seed();
    q35_suite_begin(&s, "requant", seed);
    char dir[] = "/tmp/q35-requant-XXXXXX";
    if (!mkdtemp(dir)) {
        q35_case(&s, false, "a temporary folder");
        return q35_suite_end(&s);
    }
    char names[2048];
    q35_mix_names(names, sizeof names);
    for (int tied = 0; tied < 2; tied++) {
        char src[1024];
        snprintf(src, sizeof src, "%s/f32%s.gguf", dir, tied ? "-tied" : "");
        q35_gen_options o = opts("f32", tied, seed);
        q35_error err = {{0}};
        q35_gguf *f32 = NULL;
        if (!q35_case(&s, q35_generate_file(&o, src, &err) == 0 && q35_gguf_open(&f32, src, &err) == 0,
                      "f32 source%s %s", tied ? " (tied)" : "", err.msg))
            continue;
        /* untied: every mix; tied: those whose output rules differ from the untied ones' */
        char list[2048];
        snprintf(list, sizeof list, "%s", tied ? "q4_k_m, q2_k, q8_0, iq4_xs, pure-q4_0" : names);
        for (char *save = NULL, *m = strtok_r(list, ", ", &save); m; m = strtok_r(NULL, ", ", &save))
            check_mix(&s, dir, src, f32, m, tied, seed);
        if (!tied)
            check_refusals(&s, dir, src);
        q35_gguf_close(f32);
        unlink(src);
    }
    check_requantize(&s, dir, seed);
    rmdir(dir);
    return q35_suite_end(&s);
}
