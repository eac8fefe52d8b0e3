/* libFuzzer target for the GGUF reader: q35_gguf_open_memory on a malloc'd copy
 * of exactly the input (so ASan sees any read past it). On success it touches
 * every value (q35_gguf_format_value, every array element and string) and every
 * tensor's data bytes, and traps when a promise of the reader is broken; on
 * failure it traps unless the reader returned -1, cleared *out and left a
 * message. Built with clang by parity/fuzz.cmake; ctest fuzz_gguf runs it. */
#include "model/gguf.h"
#include "model/quant.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t g_sink; /* keeps the reads of the touched bytes */

/* Reads every byte of n at p. */
static void touch(const void *p, uint64_t n)
{
    const uint8_t *b = p;
    uint8_t x = 0;
    for (uint64_t i = 0; i < n; i++)
        x ^= b[i];
    g_sink ^= x;
}

/* Whether [p, p + n) lies inside the image of g. */
static int inside(const q35_gguf *g, const void *p, uint64_t n)
{
    const uint8_t *b = p;
    return b >= g->base && (uint64_t)(b - g->base) <= g->size && n <= g->size - (uint64_t)(b - g->base);
}

static void check_kv(const q35_gguf *g, const q35_gguf_kv *kv)
{
    char buf[256];
    q35_gguf_format_value(kv, buf, sizeof buf);
    touch(buf, strlen(buf));
    if (q35_gguf_find(g, kv->key) != kv) /* keys are unique */
        __builtin_trap();
    q35_error err = {{0}};
    uint32_t u;
    float f;
    q35_gguf_str s;
    if (q35_gguf_get_u32(g, kv->key, &u, &err) == 0)
        g_sink ^= (uint8_t)u;
    if (q35_gguf_get_f32(g, kv->key, &f, &err) == 0)
        touch(&f, sizeof f);
    if (q35_gguf_get_str(g, kv->key, &s, &err) == 0) {
        if (!inside(g, s.data, s.len))
            __builtin_trap();
        touch(s.data, s.len);
    }
    if (kv->type != Q35_GGUF_ARRAY)
        return;
    if (kv->elem_type == Q35_GGUF_STRING) {
        for (uint64_t i = 0; i < kv->count; i++) {
            if (!inside(g, kv->strs[i].data, kv->strs[i].len))
                __builtin_trap();
            touch(kv->strs[i].data, kv->strs[i].len);
        }
        return;
    }
    const uint64_t bytes = kv->count * q35_gguf_vtype_size(kv->elem_type);
    if (!inside(g, kv->data, bytes))
        __builtin_trap();
    touch(kv->data, bytes);
    if (q35_gguf_vtype_is_int(kv->elem_type))
        for (uint64_t i = 0; i < kv->count; i++)
            g_sink ^= (uint8_t)q35_gguf_array_int(kv, i);
}

/* The bytes of t by its shape and type, computed without wrapping; false when
 * they do not fit a u64 (which the reader must have refused). */
static bool tensor_bytes(const q35_gguf_tensor *t, uint64_t *bytes)
{
    const q35_type_info *ti = q35_type_get(t->type);
    if (!ti || t->ne[0] < 1 || t->ne[0] % ti->block_elems != 0)
        return false;
    uint64_t n = (uint64_t)(t->ne[0] / ti->block_elems);
    if (__builtin_mul_overflow(n, (uint64_t)ti->block_bytes, &n))
        return false;
    for (uint32_t d = 1; d < Q35_GGUF_MAX_DIMS; d++)
        if (t->ne[d] < 1 || __builtin_mul_overflow(n, (uint64_t)t->ne[d], &n))
            return false;
    *bytes = n;
    return true;
}

static void check_tensor(const q35_gguf *g, const q35_gguf_tensor *t)
{
    /* The size is the one its shape and type give; the data is inside the image,
     * aligned, and found under its name. */
    uint64_t bytes;
    if (t->n_dims < 1 || t->n_dims > Q35_GGUF_MAX_DIMS || !tensor_bytes(t, &bytes) || t->nbytes != bytes ||
        t->offset % g->alignment != 0 || t->data != g->base + g->data_offset + t->offset ||
        !inside(g, t->data, t->nbytes) || q35_gguf_find_tensor(g, t->name) != t)
        __builtin_trap();
    touch(t->data, t->nbytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    if (!copy && size)
        return 0;
    if (size)
        memcpy(copy, data, size);
    q35_error err = {{0}};
    q35_gguf *g = (q35_gguf *)&err; /* not NULL: the reader must clear it */
    if (q35_gguf_open_memory(&g, copy, size, true, &err) != 0) {
        if (g != NULL || err.msg[0] == '\0')
            __builtin_trap();
        free(copy); /* not taken on failure */
        return 0;
    }
    for (uint64_t i = 0; i < g->n_kv; i++)
        check_kv(g, &g->kv[i]);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        check_tensor(g, &g->tensors[i]);
    q35_gguf_close(g); /* frees the copy */
    return 0;
}
