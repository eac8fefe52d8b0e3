/* The variant registry every op with kernel variants shares: the flash
 * attention kernel, decode attention, the delta-rule scan, the chunked delta
 * rule, the per-token GEMV, the sm_90a flash attention and the sm_90a GEMM.
 * Each op's header declares the same five functions:
 *
 *   int         q35_<op>_variant_count(void)          how many this program has
 *   const char *q35_<op>_variant_name(int v)          v's name; NULL outside 0 .. count - 1
 *   int         q35_<op>_variant_find(const char *)   the index of a name; -1 when none (or NULL)
 *   int         q35_<op>_variant_production(int v)    1 for a production variant, 0 for an
 *                                                     experiment, -1 outside 0 .. count - 1
 *   int         q35_<op>_variant_default(...)         what the op runs when asked for
 *                                                     Q35_VARIANT_DEFAULT (the device,
 *                                                     the shape: what the choice needs)
 *
 * The first four are the same for every op: Q35_VARIANT_REGISTRY(op, set)
 * defines them over the op's q35_variant_set, in its .cu; _default is the
 * op's own. The launcher takes an index (Q35_VARIANT_DEFAULT: the default),
 * alone or in the op's options (the flash kernel's: the KV split beside it).
 * The model, the benchmarks' axes and the suites select a variant by name
 * through _find; q35_variant_list writes an op's legend.
 *
 * Production and experiments: three tables an op, one a link unit. A variant's
 * entry holds its launch code (impl), so a table can only be built where that
 * code is; each table lives in the library that holds its variants, and the
 * op's set reaches the tables of the other libraries by weak references, which
 * are NULL where the program does not link them:
 *   production   the op's .cu: its default and its fallbacks, in the model's
 *                library (q35_kernels; the sm_90a ops' own variants, in
 *                q35_kernels_sm90, are their production table).
 *   experiments  kernels/experiments/<op>.cu: the others, built (CMake option
 *                Q35_KERNEL_EXPERIMENTS, on by default and in CI) into the
 *                object libraries the suites and the benchmarks alone link
 *                (q35_link_kernel_experiments), never into the q35 command.
 *   sm90         production variants of an op in q35_kernels that need sm_90a
 *                code (wgmma, TMA): in q35_kernels_sm90, compiled for 90a-real
 *                alone. Every program linking that library asks the linker for
 *                the table by name (kernels/CMakeLists.txt), so the model has it.
 * So the tables stay separate: one table an op would put references to the
 * experiments' code into the model's library. The table a variant comes from
 * is what says whether it is production (_production: the production and sm90
 * tables' variants are), so that cannot disagree with where its code is linked.
 *
 * Guarantees. The indices run 0 .. count - 1 with no gaps and follow the
 * ranks: every variant has a rank, unique in its op, its index when all of the
 * op's tables are linked, so a benchmark name that carries an index keeps it;
 * without the experiments the production variants are numbered 0 .. in rank
 * order. Names are unique in an op, so a name and its index agree both ways
 * (_find(_name(v)) == v; parity/kernels/test_variants.c checks every op). An
 * op's _default is a production variant this program has. Lookups walk the
 * tables (a handful of entries) on each call; nothing is allocated or cached. */
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

/* A table of variants, all from one link unit: an op's production table, its
 * experiments' or its sm_90a production variants'. */
typedef struct q35_variant_table {
    const q35_variant *v;
    int n;
} q35_variant_table;

/* A q35_variant_table of a whole array of entries: Q35_VARIANT_TABLE(k_production). */
#define Q35_VARIANT_TABLE(entries) {(entries), (int)(sizeof(entries) / sizeof((entries)[0]))}

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

/* Whether the variant of that index is a production one (from the set's
 * production or sm90 table): 1, 0 for an experiment, -1 outside 0 .. count - 1. */
int q35_variant_production(const q35_variant_set *s, int index);

/* Defines an op's registry functions, q35_<op>_variant_count, _name, _find and
 * _production (the top of this file), over `set`, a q35_variant_set object of
 * the unit; the op's header declares them. At file scope, once, in the op's
 * .cu: Q35_VARIANT_REGISTRY(attention_flash, k_set) */
#define Q35_VARIANT_REGISTRY(op, set)                                                                                  \
    int q35_##op##_variant_count(void)                                                                                 \
    {                                                                                                                  \
        return q35_variant_count(&(set));                                                                              \
    }                                                                                                                  \
    const char *q35_##op##_variant_name(int variant)                                                                   \
    {                                                                                                                  \
        return q35_variant_name(&(set), variant);                                                                      \
    }                                                                                                                  \
    int q35_##op##_variant_find(const char *name)                                                                      \
    {                                                                                                                  \
        return q35_variant_find(&(set), name);                                                                         \
    }                                                                                                                  \
    int q35_##op##_variant_production(int variant)                                                                     \
    {                                                                                                                  \
        return q35_variant_production(&(set), variant);                                                                \
    }

/* Every variant as "0 = base (production), 1 = kv64 (production, default
 * here), 2 = async, ..." into buf (cut at cap), for logs and benchmark
 * contexts; `mark` (or none: -1) gets "default here". Where the op lists
 * experiments too, its production variants say so; where every variant is a
 * production one (the q35 command, or an op without experiments), none does.
 * Reads an op through its count, name and production functions. Returns buf. */
const char *q35_variant_list(int (*count)(void), const char *(*name)(int), int (*production)(int), int mark,
                             char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_VARIANT_H */
