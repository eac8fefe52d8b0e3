/* The parity harness: comparisons by the exact criteria of SPEC §4, bitwise
 * comparison with the first differing index and its ULP distance, a suite that
 * prints one line per case with its verdict, seeds printed so a failure can be
 * replayed, and the paths of the repository's data. */
#ifndef Q35_HARNESS_H
#define Q35_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE for the suites */

/* a (under test) against b (the reference). */
typedef struct q35_cmp {
    int64_t n;          /* elements compared */
    int64_t nonfinite;  /* NaN or Inf in a (or in b): never passes */
    double rel_l2;      /* ||a - b|| / ||b|| */
    double rel_linf;    /* max|a - b| / max|b| */
    double max_abs;     /* max|a - b| */
    double cosine;      /* a.b / (|a||b|) */
    int64_t argmax_a;   /* index of max a */
    int64_t argmax_b;   /* index of max b */
} q35_cmp;

q35_cmp q35_compare_f64(const double *a, const double *b, int64_t n);
q35_cmp q35_compare_f32_f64(const float *a, const double *b, int64_t n);

/* Bitwise (memcmp) comparison of a against b. */
typedef struct q35_bitcmp {
    bool equal;         /* memcmp == 0 */
    int64_t n_diff;     /* elements whose bits differ */
    int64_t first;      /* first differing index, -1 when equal */
    uint64_t ulp;       /* ULP distance at `first` */
    double a, b;        /* the values at `first` */
} q35_bitcmp;

q35_bitcmp q35_bitwise_f32(const float *a, const float *b, int64_t n);
q35_bitcmp q35_bitwise_f64(const double *a, const double *b, int64_t n);

/* "bitwise equal" or "differ at 17 of 4096 (first [3]: 1.25 vs 1.2500001, 1 ulp)". */
const char *q35_bitcmp_str(const q35_bitcmp *c, char *buf, size_t cap);

typedef struct q35_suite {
    const char *name;
    int cases;          /* cases checked */
    int failed;         /* cases failed */
} q35_suite;

/* Starts a suite: prints its name and the seed. */
void q35_suite_begin(q35_suite *s, const char *name, uint64_t seed);

/* Records one case: prints "PASS|FAIL  <description>" and returns ok. */
bool q35_case(q35_suite *s, bool ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prints the summary; returns the exit status (0 when all passed, 1 otherwise). */
int q35_suite_end(q35_suite *s);

/* The seed of this run: $Q35_SEED when set, else drawn from the clock. */
uint64_t q35_test_seed(void);

/* A path under the repository (Q35_SOURCE_DIR) into buf. */
const char *q35_repo_path(const char *rel, char *buf, size_t cap);

/* Reads a whole file (malloc'd); NULL when it cannot. */
void *q35_read_file(const char *path, size_t *size);

/* Writes n bytes of p to the file path (created or truncated); -1 when it cannot. */
int q35_test_write_bytes(const char *path, const void *p, uint64_t n);

/* Whether the comma-separated list in environment variable `var` names
 * `name`; true also when `var` is unset or empty (every name wanted). */
bool q35_env_lists(const char *var, const char *name);

/* True under $Q35_QUICK (set for the compute-sanitizer runs): suites then drop
 * their largest cases, which a sanitizer would take minutes over. */
bool q35_quick(void);

/* True under $Q35_RACECHECK (set for the racecheck runs): suites then leave out
 * the cases that run cuBLAS, whose sm_90 kernels (TMA and mbarrier handoffs)
 * racecheck reports as hazards it cannot follow, and say so once. */
bool q35_racecheck(void);

/* Whether a rows-form case of T rows also runs its T per-token launches: always,
 * but under racecheck only for T <= 8. They are the same kernel at one row,
 * which the short cases race-check, and most of a racecheck run's time. */
bool q35_per_token_launches(int64_t T);

/* The odd row counts the GPU units are checked at, {1, 3, 7, 37, 600}: *rows
 * points at them, the return is how many this run takes (the 600 dropped under
 * Q35_QUICK). */
int q35_test_rows(const int64_t **rows);

/* The largest row count of this run: 600, or 37 under Q35_QUICK. */
int64_t q35_test_big_rows(void);

/* A standard normal draw (Box-Muller, float64). */
double q35_test_normal(q35_rng *r);

/* n floats ~ mean + sd * N(0, 1), malloc'd. */
float *q35_host_normal(int64_t n, double mean, double sd, q35_rng *r);

/* n floats uniform in [lo, hi), malloc'd. */
float *q35_host_uniform(int64_t n, double lo, double hi, q35_rng *r);

/* The floats widened to float64, malloc'd. */
double *q35_host_f64(const float *x, int64_t n);

/* A case of a unit against its float64 reference (rel L-inf <= limit, nothing
 * non-finite) and of its rows form against its per-token launches (bitwise):
 * prints one line. bit may be NULL when there is no second form. */
bool q35_case_unit(q35_suite *s, const char *what, const q35_cmp *c, double limit, const q35_bitcmp *bit);

/* Logits of n positions: ours [n][vocab] in float64 against theirs in float32,
 * rel L2 per position; one case line with the worst (and where), the mean and
 * the argmax agreement; passes when the worst is <= limit and nothing is
 * non-finite. */
bool q35_case_positions(q35_suite *s, const char *what, const double *ours, const float *theirs, int64_t n, int vocab,
                        double limit);

/* Fills with NaN bit patterns, so a kernel that skips an element cannot pass. */
void q35_poison_f32(float *x, int64_t n);
void q35_poison_f64(double *x, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* Q35_HARNESS_H */
