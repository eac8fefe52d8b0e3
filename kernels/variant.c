/* The variant registry (variant.h): a set's variants in rank order, found by
 * index or by name, production or not by the table they come from. The tables
 * are a handful of entries: a walk each call. */
#include "variant.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

int q35_variant_count(const q35_variant_set *s)
{
    return s->production.n + (s->experiments ? s->experiments->n : 0) + (s->sm90 ? s->sm90->n : 0);
}

/* The entry of the smallest rank above `after`, from any of the tables. */
static const q35_variant *next_by_rank(const q35_variant_set *s, int after)
{
    const q35_variant *best = NULL;
    const q35_variant_table *tables[3] = {&s->production, s->experiments, s->sm90};
    for (int t = 0; t < 3; t++)
        for (int i = 0; tables[t] && i < tables[t]->n; i++) {
            const q35_variant *v = &tables[t]->v[i];
            if (v->rank > after && (!best || v->rank < best->rank))
                best = v;
        }
    return best;
}

const q35_variant *q35_variant_at(const q35_variant_set *s, int index)
{
    if (index < 0 || index >= q35_variant_count(s))
        return NULL;
    const q35_variant *v = next_by_rank(s, INT_MIN);
    for (int i = 0; i < index; i++)
        v = next_by_rank(s, v->rank);
    return v;
}

const char *q35_variant_name(const q35_variant_set *s, int index)
{
    const q35_variant *v = q35_variant_at(s, index);
    return v ? v->name : NULL;
}

int q35_variant_production(const q35_variant_set *s, int index)
{
    const q35_variant *v = q35_variant_at(s, index);
    if (!v)
        return -1;
    for (int i = 0; s->experiments && i < s->experiments->n; i++)
        if (v == &s->experiments->v[i])
            return 0;
    return 1;
}

int q35_variant_find(const q35_variant_set *s, const char *name)
{
    const q35_variant *v;
    for (int i = 0; name && (v = q35_variant_at(s, i)) != NULL; i++)
        if (strcmp(v->name, name) == 0)
            return i;
    return -1;
}

const char *q35_variant_list(int (*count)(void), const char *(*name)(int), int (*production)(int), int mark,
                             char *buf, size_t cap)
{
    size_t at = 0;
    bool experiments = false;
    for (int v = 0; v < count(); v++)
        experiments = experiments || production(v) == 0;
    if (cap)
        buf[0] = '\0';
    for (int v = 0; v < count() && at + 1 < cap; v++) {
        const bool prod = experiments && production(v) == 1, here = v == mark;
        const char *note = prod && here ? " (production, default here)"
                           : prod       ? " (production)"
                           : here       ? " (default here)"
                                        : "";
        const int n = snprintf(buf + at, cap - at, "%s%d = %s%s", v ? ", " : "", v, name(v), note);
        at = n < 0 ? cap : at + (size_t)n;
    }
    return buf;
}
