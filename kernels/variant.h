/* The variant registry every op with kernel variants shares: the flash
 * attention kernel, decode attention, the delta-rule scan, the chunked delta
 * rule, the per-token GEMV. Each op's header declares the same four functions,
 * read through the helpers below:
 *
 *   int         q35_<op>_variant_count(void)        how many this program has
 *   const char *q35_<op>_variant_name(int v)        v's name; NULL outside 0 .. count - 1
 *   int         q35_<op>_variant_find(const char *) the index of a name; -1 when none
 *   int         q35_<op>_variant_default(...)       what the op runs when asked for
 *                                                   Q35_VARIANT_DEFAULT (the device,
 *                                                   the shape: what the choice needs)
 *
 * and its launcher takes an index (Q35_VARIANT_DEFAULT: the default), alone or
 * in the op's options (the flash kernel's: the KV split beside it). The model,
 * the benchmarks' axes and the suites select a variant by name through _find.
 *
 * Production and experiments. Each op's .cu instantiates its production
 * variants, the default and its fallbacks: what the model's library
 * (q35_kernels) holds. kernels/experiments/<op>.cu instantiates the others;
 * they are built (CMake option Q35_KERNEL_EXPERIMENTS, on by default and in CI)
 * only into the suites and the benchmarks, which link them as objects. An op
 * reaches its experiments through a weak reference to their table: where they
 * are linked the registry lists every variant, elsewhere (the q35 command) only
 * the production ones. Production variants that need sm_90a code (wgmma, TMA)
 * live in q35_kernels_sm90, compiled for 90a-real alone, and join their op's
 * registry the same way, by a weak reference to their table (the set's sm90);
 * every program that links that library asks the linker for the table, so the
 * model lists them. Every variant has a rank, its index when all are linked,
 * and the indices follow the ranks, so a benchmark name that carries an index
 * keeps it; without the experiments the production variants are numbered 0 ..
 * in rank order. */
#ifndef Q35_KERNELS_VARIANT_H
#define Q35_KERNELS_VARIANT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_VARIANT_DEFAULT (-1) /* a launcher's "the op's default variant" */

typedef struct q35_variant {
    const char *name;  /* how it is selected: "kv64" */
    int rank;          /* its index when every variant of the op is linked */
    const void *impl;  /* the op's own entry: its launcher, its parameters */
} q35_variant;

/* A table of variants: an op's production table, or its experiments'. */
typedef struct q35_variant_table {
    const q35_variant *v;
    int n;
} q35_variant_table;

/* An op's variants: its production table, its experiments' (NULL where the
 * program does not link them), and production variants another library adds
 * (NULL where not linked): the sm_90a ones in q35_kernels_sm90, built for
 * 90a-real alone, reached as the experiments are (kernels/CMakeLists.txt). */
typedef struct q35_variant_set {
    q35_variant_table production;
    const q35_variant_table *experiments;
    const q35_variant_table *sm90;
} q35_variant_set;

/* How many variants the set has. */
int q35_variant_count(const q35_variant_set *s);

/* The variant of that index (rank order), or NULL outside 0 .. count - 1. */
const q35_variant *q35_variant_at(const q35_variant_set *s, int index);

/* The name of the variant of that index, or NULL outside 0 .. count - 1. */
const char *q35_variant_name(const q35_variant_set *s, int index);

/* The index of the variant named `name`, or -1 (none, or name NULL). An op's
 * _variant_default finds a production variant this way: it is always there. */
int q35_variant_find(const q35_variant_set *s, const char *name);

/* Every variant as "0 = base, 1 = kv64 (default here), ..." into buf (cut at
 * cap), for logs and benchmark contexts; `mark` (or none: -1) gets the note.
 * Reads an op through its count and name functions. Returns buf. */
const char *q35_variant_list(int (*count)(void), const char *(*name)(int), int mark, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_VARIANT_H */
