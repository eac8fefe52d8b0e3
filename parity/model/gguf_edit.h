/* Test helper: rewrites a parsed GGUF into a new image with one edit of its
 * metadata or tensor table, to build the malformed and inconsistent models the
 * loader must refuse (or must report). Tensor data is copied where the size is unchanged, zeros
 * where an edit changed it. */
#ifndef Q35_GGUF_EDIT_H
#define Q35_GGUF_EDIT_H

#include "core/gguf.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct q35_gguf_edit {
    const char *drop_key;        /* a key to leave out, or NULL */
    const char *set_key;         /* a key to set (replacing its value, or added at the end), or NULL */
    q35_gguf_vtype set_type;     /* its type: a scalar, STRING, or ARRAY */
    const void *set_value;       /* the scalar, a char * for STRING, the elements for ARRAY */
    q35_gguf_vtype set_elem;     /* ARRAY element type */
    uint64_t set_count;          /* ARRAY elements */
    const char *drop_tensor;     /* a tensor to leave out, or NULL */
    const char *rename_tensor;   /* a tensor to rename, or NULL */
    const char *new_name;        /* its new name (when rename_tensor) */
    const char *edit_tensor;     /* a tensor to retype or reshape, or NULL */
    uint32_t new_type;           /* its type (when edit_tensor) */
    uint32_t new_dims;           /* its n_dims, 0 to keep the shape */
    int64_t new_ne[4];           /* its dims (when new_dims) */
    bool fuse_qkv;               /* every blk.N.attn_q/attn_k/attn_v.weight (one type) written as one
                                    blk.N.attn_qkv.weight of their rows in that order, as
                                    convert_hf_to_gguf.py --fuse-qkv writes full-attention layers */
    bool keep_qkv;               /* with fuse_qkv: attn_q/k/v kept beside it (a file both ways) */
} q35_gguf_edit;

/* A malloc'd image of g with the edit applied. */
int q35_gguf_rewrite(const q35_gguf *g, const q35_gguf_edit *e, void **image, uint64_t *size, q35_error *err);

#endif /* Q35_GGUF_EDIT_H */
