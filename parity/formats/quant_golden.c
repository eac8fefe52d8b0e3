/* Test helper: the quantized golden files (quant_golden.h). */
#include "quant_golden.h"

#include "core/gguf.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN_QUANT "data/golden/tiny-r2/quant"

/* One line of dequant-<variant>.json. */
typedef struct golden_hash {
    char name[257];  /* tensor name (Q35_GGUF_MAX_NAME bytes at most) */
    char type[16];   /* ggml's type name */
    uint64_t fnv;    /* FNV-1a 64 of the dequantized float32 bytes */
    bool matched;    /* a tensor of the file carries this name */
} golden_hash;

const char *const q35_golden_variants[Q35_GOLDEN_VARIANTS] = {"BF16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0", "MIXED", "GRID"};

uint64_t q35_fnv1a64_f32(const float *x, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], sizeof u);
        for (int k = 0; k < 4; k++) {
            h ^= (u >> (8 * k)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Reads the lines `"name": {"type": "q4_K", "fnv1a64_f32": "09f5f77ebc270e42"},`;
 * a line naming fnv1a64_f32 that does not parse counts as malformed. NULL when the
 * file cannot be read. */
static golden_hash *read_hashes(const char *path, int *count, int *malformed)
{
    size_t size = 0;
    char *text = q35_read_file(path, &size);
    *count = *malformed = 0;
    if (!text)
        return NULL;
    text[size] = '\0'; /* q35_read_file leaves room for it */
    int lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    golden_hash *h = calloc((size_t)lines, sizeof *h);
    for (char *line = text; h && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (strstr(line, "fnv1a64_f32")) {
            golden_hash *e = &h[*count];
            char hex[17] = "";
            int used = 0;
            if (sscanf(line, " \"%256[^\"]\": {\"type\": \"%15[^\"]\", \"fnv1a64_f32\": \"%16[0-9a-f]\"}%n", e->name,
                       e->type, hex, &used) == 3 &&
                used > 0 && strlen(hex) == 16) {
                e->fnv = strtoull(hex, NULL, 16);
                (*count)++;
            } else {
                (*malformed)++;
            }
        }
        line = end ? end + 1 : line + strlen(line);
    }
    free(text);
    return h;
}

void q35_check_golden_quant_file(q35_suite *s, const char *who, const char *variant, q35_golden_dequant_fn dequant,
                                 void *ctx)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, GOLDEN_QUANT "/dequant-%s.json", variant);
    int n_hashes = 0, malformed = 0;
    golden_hash *hashes = read_hashes(q35_repo_path(rel, path, sizeof path), &n_hashes, &malformed);
    snprintf(rel, sizeof rel, GOLDEN_QUANT "/model-%s.gguf", variant);
    q35_error err = {{0}};
    q35_gguf *g = NULL;
    if (!hashes || q35_gguf_open(&g, q35_repo_path(rel, path, sizeof path), &err)) {
        q35_case(s, false, "%s model-%s.gguf and dequant-%s.json: %s", who, variant, variant,
                 hashes ? err.msg : "cannot read the json");
        free(hashes);
        return;
    }
    int matched = 0, bad = 0;
    int type_count[Q35_TYPE_COUNT] = {0};
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        golden_hash *h = NULL;
        for (int k = 0; k < n_hashes && !h; k++)
            h = strcmp(hashes[k].name, t->name) == 0 ? &hashes[k] : NULL;
        if (!h) {
            q35_case(s, false, "%s model-%s.gguf %s: not listed in dequant-%s.json", who, variant, t->name, variant);
            bad++;
            continue;
        }
        h->matched = true;
        int64_t n = 1;
        for (int d = 0; d < Q35_GGUF_MAX_DIMS; d++)
            n *= t->ne[d];
        const bool computable = q35_type_computable(t->type);
        const bool sized = q35_row_bytes(t->type, n) == t->nbytes;
        float *y = computable && sized ? malloc((size_t)n * sizeof *y) : NULL;
        uint64_t got = 0;
        q35_error derr = {{0}};
        bool ran = false;
        if (y) {
            q35_poison_f32(y, n);
            ran = dequant(ctx, (q35_type)t->type, t->data, n / t->ne[0], t->ne[0], y, &derr) == 0;
            got = ran ? q35_fnv1a64_f32(y, n) : 0;
        }
        const bool type_ok = strcmp(h->type, q35_type_name(t->type)) == 0;
        if (ran && type_ok && got == h->fnv) {
            matched++;
            if (t->type < Q35_TYPE_COUNT)
                type_count[t->type]++;
        } else {
            q35_case(s, false,
                     "%s model-%s.gguf %s: type %s (listed %s), %" PRId64 " elements%s%s, fnv1a64 %016" PRIx64
                     " (listed %016" PRIx64 ")%s%s",
                     who, variant, t->name, q35_type_name(t->type), h->type, n, computable ? "" : " NOT COMPUTABLE",
                     sized ? "" : " SIZE MISMATCH", got, h->fnv, derr.msg[0] ? ": " : "", derr.msg);
            bad++;
        }
        free(y);
    }
    for (int k = 0; k < n_hashes; k++) {
        if (!hashes[k].matched) {
            q35_case(s, false, "%s dequant-%s.json %s: no such tensor in the file", who, variant, hashes[k].name);
            bad++;
        }
    }
    char types[256] = "";
    for (int t = 0; t < Q35_TYPE_COUNT; t++) {
        if (type_count[t]) {
            const size_t used = strlen(types);
            snprintf(types + used, sizeof types - used, "%s%s x%d", used ? ", " : "", q35_type_name((uint32_t)t),
                     type_count[t]);
        }
    }
    q35_case(s, bad == 0 && malformed == 0 && (uint64_t)n_hashes == g->n_tensors,
             "%s model-%-7s %d/%" PRIu64 " tensors hash as ggml dequantizes them (%d listed, %d malformed lines; %s)",
             who, variant, matched, g->n_tensors, n_hashes, malformed, types);
    q35_gguf_close(g);
    free(hashes);
}
