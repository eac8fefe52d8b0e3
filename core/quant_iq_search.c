/* The grid i-quants' quantizer core (core/quant_internal.h): the nearest point of
 * a grid by an exact branch-and-bound search, the signs of a group, the scales of
 * a super-block.
 *
 * The search: a grid's points are words of level indices (IQ2: 3 levels, IQ3: 8,
 * IQ1: 3) inserted into a trie, built once (pthread_once). For a target group the
 * squared error of each element at each level, e[j][l] = (t[j] - step (v_l +
 * off))^2, is computed once; a walk from the root takes each element's levels in
 * order of e (the first leaf reached is the greedy choice, usually the answer) and
 * cuts a branch when its partial sum plus the least the remaining elements can add
 * (suffix[j] = the sum of their smallest e) reaches the best so far. The cut is
 * exact: no cut branch holds a closer point. A group costs a few dozen node visits
 * where a scan of the grid costs its size (2048 points for IQ1) times 8. */
#include "core/quant_blocks.h"
#include "core/quant_grids.h"
#include "core/quant_internal.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

enum { MAX_ELEMS = 8, MAX_LEVELS = 8 };

typedef struct grid_desc {
    const void *table; /* uint64_t or uint32_t entries */
    int points, elems;
    bool is_signed;
} grid_desc;

static const grid_desc k_grids[Q35_GRID_COUNT] = {
    [Q35_GRID_IQ2XXS] = {q35_iq2xxs_grid, 256, 8, false}, [Q35_GRID_IQ2XS] = {q35_iq2xs_grid, 512, 8, false},
    [Q35_GRID_IQ2S] = {q35_iq2s_grid, 1024, 8, false},    [Q35_GRID_IQ3XXS] = {q35_iq3xxs_grid, 256, 4, false},
    [Q35_GRID_IQ3S] = {q35_iq3s_grid, 512, 4, false},     [Q35_GRID_IQ1S] = {q35_iq1s_grid, 2048, 8, true},
};

int q35_grid_point_elems(q35_grid_id g)
{
    return k_grids[g].elems;
}

int q35_grid_value(q35_grid_id g, int p, int j)
{
    const grid_desc *gd = &k_grids[g];
    const uint64_t w = gd->elems == 8 ? ((const uint64_t *)gd->table)[p] : ((const uint32_t *)gd->table)[p];
    const uint8_t b = (uint8_t)(w >> (8 * j));
    return gd->is_signed ? (int)(int8_t)b : (int)b;
}

/* A grid's trie: node k's child at level l is child[k * levels + l]: 0 none, > 0
 * a node, < 0 (at the last element) the point -c - 1. Node 0 is the root. */
typedef struct trie {
    int levels;
    float value[MAX_LEVELS]; /* the levels' values, ascending */
    int32_t *child;
} trie;

/* Nodes at most: the root and one per point and element but the last. */
#define NODES(points, elems) (1 + (points) * ((elems) - 1))
static int32_t k_child_iq2xxs[NODES(256, 8) * 3], k_child_iq2xs[NODES(512, 8) * 3], k_child_iq2s[NODES(1024, 8) * 3],
    k_child_iq3xxs[NODES(256, 4) * 8], k_child_iq3s[NODES(512, 4) * 8], k_child_iq1s[NODES(2048, 8) * 3];
static trie k_tries[Q35_GRID_COUNT] = {
    [Q35_GRID_IQ2XXS] = {.child = k_child_iq2xxs}, [Q35_GRID_IQ2XS] = {.child = k_child_iq2xs},
    [Q35_GRID_IQ2S] = {.child = k_child_iq2s},     [Q35_GRID_IQ3XXS] = {.child = k_child_iq3xxs},
    [Q35_GRID_IQ3S] = {.child = k_child_iq3s},     [Q35_GRID_IQ1S] = {.child = k_child_iq1s},
};
static pthread_once_t k_once = PTHREAD_ONCE_INIT;

static void build_trie(q35_grid_id g)
{
    const grid_desc *gd = &k_grids[g];
    trie *tr = &k_tries[g];
    /* the distinct values, ascending */
    int seen[256] = {0};
    for (int p = 0; p < gd->points; p++)
        for (int j = 0; j < gd->elems; j++)
            seen[q35_grid_value(g, p, j) + 128] = 1;
    int index[256];
    tr->levels = 0;
    for (int v = 0; v < 256; v++) {
        if (seen[v] && tr->levels < MAX_LEVELS) {
            index[v] = tr->levels;
            tr->value[tr->levels++] = (float)(v - 128);
        }
    }
    int nodes = 1;
    for (int p = 0; p < gd->points; p++) {
        int node = 0;
        for (int j = 0; j < gd->elems; j++) {
            int32_t *c = &tr->child[node * tr->levels + index[q35_grid_value(g, p, j) + 128]];
            if (j == gd->elems - 1) {
                *c = -p - 1;
            } else {
                if (*c == 0)
                    *c = nodes++;
                node = *c;
            }
        }
    }
}

static void build_all(void)
{
    for (int g = 0; g < Q35_GRID_COUNT; g++)
        build_trie((q35_grid_id)g);
}

typedef struct search {
    const trie *tr;
    int elems;
    float e[MAX_ELEMS][MAX_LEVELS];
    uint8_t order[MAX_ELEMS][MAX_LEVELS]; /* each element's levels by ascending e */
    float suffix[MAX_ELEMS + 1];          /* the least the elements from j on can add */
    float best;
    int best_point;
} search;

static void walk(search *s, int node, int j, float partial)
{
    const trie *tr = s->tr;
    for (int k = 0; k < tr->levels; k++) {
        const int l = s->order[j][k];
        const int32_t c = tr->child[node * tr->levels + l];
        if (c == 0)
            continue;
        const float p = partial + s->e[j][l];
        if (!(p + s->suffix[j + 1] < s->best))
            break; /* the later levels add at least as much */
        if (c < 0) {
            s->best = p;
            s->best_point = -c - 1;
        } else {
            walk(s, c, j + 1, p);
        }
    }
}

int q35_grid_nearest(q35_grid_id g, const float *t, float step, float off, float *dist2)
{
    pthread_once(&k_once, build_all);
    search s;
    s.tr = &k_tries[g];
    s.elems = k_grids[g].elems;
    const int levels = s.tr->levels;
    for (int j = 0; j < s.elems; j++) {
        for (int l = 0; l < levels; l++) {
            const float err = t[j] - step * (s.tr->value[l] + off);
            s.e[j][l] = err * err;
            int k = l; /* insertion into the order: ascending e, ties to the lower level */
            while (k > 0 && s.e[j][s.order[j][k - 1]] > s.e[j][l]) {
                s.order[j][k] = s.order[j][k - 1];
                k--;
            }
            s.order[j][k] = (uint8_t)l;
        }
    }
    s.suffix[s.elems] = 0.0f;
    for (int j = s.elems - 1; j >= 0; j--)
        s.suffix[j] = s.suffix[j + 1] + s.e[j][s.order[j][0]];
    s.best = INFINITY;
    s.best_point = 0; /* non-finite targets: the first point */
    walk(&s, 0, 0, 0.0f);
    if (dist2)
        *dist2 = s.best;
    return s.best_point;
}

uint32_t q35_iq_group_signs(const float *x, int n, bool parity)
{
    uint32_t signs = 0;
    int least = 0;
    for (int j = 0; j < n; j++) {
        signs |= (uint32_t)(x[j] < 0.0f) << j;
        if (fabsf(x[j]) < fabsf(x[least]))
            least = j;
    }
    uint32_t odd = 0;
    for (int j = 0; j < n; j++)
        odd ^= signs >> j & 1u;
    if (parity && odd)
        signs ^= 1u << least;
    return signs;
}

float q35_iq_scales(const float *want, int n_sub, q35_iq_step_fn step, int max_ls, uint16_t *d_out, uint8_t *ls)
{
    float wmax = 0.0f;
    for (int s = 0; s < n_sub; s++)
        wmax = want[s] > wmax ? want[s] : wmax;
    *d_out = q35_f16_at_least(wmax / step(1.0f, max_ls));
    const float d = q35_f16_to_f32(*d_out);
    for (int s = 0; s < n_sub; s++) {
        int k = 0;
        while (k < max_ls && !(step(d, k) >= want[s]))
            k++;
        ls[s] = (uint8_t)k;
    }
    return d;
}

float q35_abs_max(const float *x, int n)
{
    float amax = 0.0f;
    for (int j = 0; j < n; j++)
        amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
    return amax;
}

void q35_iq_group_points(q35_grid_id g, const float *x, uint32_t signs, float step, int *points)
{
    float t[8];
    for (int j = 0; j < 8; j++)
        t[j] = signs >> j & 1u ? -x[j] : x[j];
    const int elems = k_grids[g].elems;
    for (int k = 0; k < 8 / elems; k++)
        points[k] = q35_grid_nearest(g, t + k * elems, step, 0.0f, NULL);
}

void q35_iq_wants(const float *x, int len, float top, float *want)
{
    for (int s = 0; s < Q35_QK_K / len; s++)
        want[s] = q35_abs_max(x + len * s, len) / top;
}
