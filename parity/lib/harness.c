#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include "core/rng.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef Q35_SOURCE_DIR
#error "Q35_SOURCE_DIR must name the repository root"
#endif

static q35_cmp compare(const void *pa, int a_f32, const void *pb, int b_f32, int64_t n)
{
    q35_cmp c = {.n = n, .argmax_a = -1, .argmax_b = -1};
    double num = 0.0, den = 0.0, maxd = 0.0, maxb = 0.0, ab = 0.0, aa = 0.0;
    double best_a = -INFINITY, best_b = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        const double a = a_f32 ? (double)((const float *)pa)[i] : ((const double *)pa)[i];
        const double b = b_f32 ? (double)((const float *)pb)[i] : ((const double *)pb)[i];
        if (!isfinite(a) || !isfinite(b)) {
            c.nonfinite++;
            continue;
        }
        const double d = a - b;
        num += d * d;
        den += b * b;
        maxd = fmax(maxd, fabs(d));
        maxb = fmax(maxb, fabs(b));
        ab += a * b;
        aa += a * a;
        if (a > best_a) {
            best_a = a;
            c.argmax_a = i;
        }
        if (b > best_b) {
            best_b = b;
            c.argmax_b = i;
        }
    }
    c.rel_l2 = den > 0 ? sqrt(num / den) : sqrt(num);
    c.rel_linf = maxb > 0 ? maxd / maxb : maxd;
    c.max_abs = maxd;
    c.cosine = aa > 0 && den > 0 ? ab / sqrt(aa * den) : (aa == den ? 1.0 : 0.0);
    if (c.nonfinite) { /* make every metric fail */
        c.rel_l2 = c.rel_linf = c.max_abs = INFINITY;
        c.cosine = 0.0;
    }
    return c;
}

q35_cmp q35_compare_f64(const double *a, const double *b, int64_t n) { return compare(a, 0, b, 0, n); }
q35_cmp q35_compare_f32_f64(const float *a, const double *b, int64_t n) { return compare(a, 1, b, 0, n); }

/* Distance in representable values between two floats of the same width, via
 * their sign-magnitude bits mapped onto a monotone integer line. */
static uint64_t ulp_distance(uint64_t ua, uint64_t ub, int bits)
{
    const uint64_t sign = 1ull << (bits - 1);
    const int64_t ia = (ua & sign) ? -(int64_t)(ua & ~sign) : (int64_t)ua;
    const int64_t ib = (ub & sign) ? -(int64_t)(ub & ~sign) : (int64_t)ub;
    return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

/* memcmp, then the first differing element of `bits`-bit floats and the count. */
static q35_bitcmp bitwise(const void *pa, const void *pb, int64_t n, int bits)
{
    const size_t sz = (size_t)bits / 8;
    q35_bitcmp c = {.equal = memcmp(pa, pb, (size_t)n * sz) == 0, .first = -1};
    for (int64_t i = 0; !c.equal && i < n; i++) {
        uint64_t ua = 0, ub = 0;
        memcpy(&ua, (const char *)pa + (size_t)i * sz, sz);
        memcpy(&ub, (const char *)pb + (size_t)i * sz, sz);
        if (ua == ub)
            continue;
        if (c.first < 0) {
            c.first = i;
            c.ulp = ulp_distance(ua, ub, bits);
            c.a = bits == 32 ? (double)((const float *)pa)[i] : ((const double *)pa)[i];
            c.b = bits == 32 ? (double)((const float *)pb)[i] : ((const double *)pb)[i];
        }
        c.n_diff++;
    }
    return c;
}

q35_bitcmp q35_bitwise_f32(const float *a, const float *b, int64_t n) { return bitwise(a, b, n, 32); }
q35_bitcmp q35_bitwise_f64(const double *a, const double *b, int64_t n) { return bitwise(a, b, n, 64); }

const char *q35_bitcmp_str(const q35_bitcmp *c, char *buf, size_t cap)
{
    if (c->equal)
        snprintf(buf, cap, "bitwise equal");
    else
        snprintf(buf, cap, "differ at %" PRId64 " elements (first [%" PRId64 "]: %.9g vs %.9g, %" PRIu64 " ulp)",
                 c->n_diff, c->first, c->a, c->b, c->ulp);
    return buf;
}

void q35_suite_begin(q35_suite *s, const char *name, uint64_t seed)
{
    s->name = name;
    s->cases = s->failed = 0;
    if (seed)
        printf("== %s (seed 0x%016" PRIx64 "; replay with Q35_SEED=0x%016" PRIx64 ")\n", name, seed, seed);
    else
        printf("== %s (no random inputs)\n", name);
    fflush(stdout);
}

bool q35_case(q35_suite *s, bool ok, const char *fmt, ...)
{
    s->cases++;
    if (!ok)
        s->failed++;
    printf("%s  ", ok ? "PASS" : "FAIL");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return ok;
}

int q35_suite_end(q35_suite *s)
{
    printf("== %s: %d cases, %d failed: %s\n", s->name, s->cases, s->failed, s->failed ? "FAIL" : "PASS");
    return s->failed || s->cases == 0 ? 1 : 0;
}

uint64_t q35_test_seed(void)
{
    const char *env = getenv("Q35_SEED");
    if (env && *env)
        return strtoull(env, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    return q35_splitmix64(&x);
}

const char *q35_repo_path(const char *rel, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s", Q35_SOURCE_DIR, rel);
    return buf;
}

void *q35_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    void *p = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        const long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (p = malloc((size_t)n + 1)) != NULL) {
            if (fread(p, 1, (size_t)n, f) != (size_t)n) {
                free(p);
                p = NULL;
            } else if (size) {
                *size = (size_t)n;
            }
        }
    }
    fclose(f);
    return p;
}

int q35_test_write_bytes(const char *path, const void *p, uint64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

void q35_poison_f32(float *x, int64_t n)
{
    const uint32_t nan = 0x7fc0dead;
    for (int64_t i = 0; i < n; i++)
        memcpy(&x[i], &nan, 4);
}

void q35_poison_f64(double *x, int64_t n)
{
    const uint64_t nan = 0x7ff8deaddeaddeadull;
    for (int64_t i = 0; i < n; i++)
        memcpy(&x[i], &nan, 8);
}

double q35_test_normal(q35_rng *r)
{
    const double u1 = q35_rng_uniform(r) + 0x1p-60, u2 = q35_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

float *q35_host_normal(int64_t n, double mean, double sd, q35_rng *r)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; x && i < n; i++)
        x[i] = (float)(mean + sd * q35_test_normal(r));
    return x;
}

float *q35_host_uniform(int64_t n, double lo, double hi, q35_rng *r)
{
    float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    for (int64_t i = 0; x && i < n; i++)
        x[i] = (float)q35_rng_range(r, lo, hi);
    return x;
}

double *q35_host_f64(const float *x, int64_t n)
{
    double *d = malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
    for (int64_t i = 0; d && i < n; i++)
        d[i] = x[i];
    return d;
}

bool q35_case_unit(q35_suite *s, const char *what, const q35_cmp *c, double limit, const q35_bitcmp *bit)
{
    char b[200] = "";
    if (bit)
        q35_bitcmp_str(bit, b, sizeof b);
    const bool ok = c->nonfinite == 0 && c->rel_linf <= limit && (!bit || bit->equal);
    if (c->nonfinite)
        return q35_case(s, false, "%s: %lld non-finite values (unwritten or NaN)", what, (long long)c->nonfinite);
    return q35_case(s, ok, "%s: rel Linf %.2e (<= %.0e), rel L2 %.2e%s%s", what, c->rel_linf, limit, c->rel_l2,
                    bit ? "; rows vs per-token: " : "", b);
}

/* An environment flag: set, not empty, not "0". */
static bool env_flag(const char *name)
{
    const char *e = getenv(name);
    return e && *e && strcmp(e, "0") != 0;
}

bool q35_env_lists(const char *var, const char *name)
{
    const char *list = getenv(var);
    if (!list || !*list)
        return true;
    const size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

bool q35_quick(void)
{
    return env_flag("Q35_QUICK");
}

bool q35_racecheck(void)
{
    return env_flag("Q35_RACECHECK");
}

bool q35_per_token_launches(int64_t T)
{
    return !q35_racecheck() || T <= 8;
}

int q35_test_rows(const int64_t **rows)
{
    static const int64_t odd[] = {1, 3, 7, 37, 600};
    *rows = odd;
    return q35_quick() ? 4 : 5;
}

int64_t q35_test_big_rows(void)
{
    return q35_quick() ? 37 : 600;
}

bool q35_case_positions(q35_suite *s, const char *what, const double *ours, const float *theirs, int64_t n, int vocab,
                        double limit)
{
    double worst = 0.0, sum = 0.0;
    int64_t worst_at = 0, argmax_same = 0, nonfinite = 0;
    double *ref = malloc((size_t)vocab * sizeof *ref);
    const bool have = ref != NULL;
    for (int64_t t = 0; t < n && ref; t++) {
        for (int v = 0; v < vocab; v++)
            ref[v] = theirs[t * vocab + v];
        const q35_cmp c = q35_compare_f64(ours + t * vocab, ref, vocab);
        nonfinite += c.nonfinite;
        argmax_same += c.argmax_a == c.argmax_b;
        sum += c.rel_l2;
        if (!(c.rel_l2 <= worst)) {
            worst = c.rel_l2;
            worst_at = t;
        }
    }
    free(ref);
    return q35_case(s, have && nonfinite == 0 && worst <= limit,
                    "%-40s %3" PRId64 " positions: max rel L2 %.3e (at %" PRId64 "), mean %.3e, argmax %" PRId64
                    "/%" PRId64 " (limit %.0e)",
                    what, n, worst, worst_at, sum / (double)n, argmax_same, n, limit);
}
