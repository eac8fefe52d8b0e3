/* The kernel benchmarks' model axis (models.h). */
#include "bench/models.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names of the shapes table, in axis order (bench/peers.py reads this array). */
static const char *const k_bench_models[] = {"0.8b", "9b", "27b"};

int q35_bench_model_count(void)
{
    return (int)(sizeof k_bench_models / sizeof k_bench_models[0]);
}

const q35_shape *q35_bench_model(int i)
{
    const q35_shape *s = i >= 0 && i < q35_bench_model_count() ? q35_shape_find(k_bench_models[i]) : NULL;
    if (!s) {
        fprintf(stderr, "benchmark: no model %d in the shapes table\n", i);
        exit(1);
    }
    return s;
}

const char *q35_bench_model_label(int i, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", q35_bench_model(i)->name);
    for (char *p = buf; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return buf;
}

q35_bench_axis q35_bench_model_axis(void)
{
    static const int64_t indices[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const int n = q35_bench_model_count();
    if (n > (int)(sizeof indices / sizeof indices[0])) {
        fprintf(stderr, "benchmark: %d models, the axis holds %zu\n", n, sizeof indices / sizeof indices[0]);
        exit(1);
    }
    return (q35_bench_axis){"model", indices, n};
}

const char *q35_bench_model_legend(char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; i < q35_bench_model_count(); i++) {
        char label[16];
        const size_t at = strlen(buf);
        snprintf(buf + at, cap - at, "%s%d = %s", i ? ", " : "", i, q35_bench_model_label(i, label, sizeof label));
    }
    return buf;
}

double q35_bench_attn_flop(const q35_shape *m, int64_t pos0, int64_t T)
{
    return 4.0 * m->head_dim * m->n_head * ((double)T * (double)pos0 + (double)T * (double)(T + 1) / 2.0);
}
