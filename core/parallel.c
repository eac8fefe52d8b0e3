#define _POSIX_C_SOURCE 200809L
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define Q35_MAX_THREADS 256

static int g_threads; /* 0 = not decided yet */

int q35_threads(void)
{
    if (g_threads > 0)
        return g_threads;
    int n = 0;
    const char *env = getenv("Q35_THREADS");
    if (env)
        n = atoi(env);
    if (n <= 0)
        n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n <= 0)
        n = 1;
    if (n > Q35_MAX_THREADS)
        n = Q35_MAX_THREADS;
    g_threads = n;
    return n;
}

void q35_set_threads(int n)
{
    g_threads = n > Q35_MAX_THREADS ? Q35_MAX_THREADS : n;
}

struct job {
    q35_range_fn fn;
    void *ctx;
    int64_t n, grain;
    atomic_llong next; /* first item not yet handed out */
};

struct worker {
    struct job *job;
    int thread;
};

static void run_grains(struct job *job, int thread)
{
    for (;;) {
        const int64_t begin = atomic_fetch_add(&job->next, job->grain);
        if (begin >= job->n)
            return;
        const int64_t end = begin + job->grain < job->n ? begin + job->grain : job->n;
        job->fn(job->ctx, begin, end, thread);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    run_grains(w->job, w->thread);
    return NULL;
}

void q35_parallel_for(int64_t n, int64_t grain, q35_range_fn fn, void *ctx)
{
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int threads = q35_threads();
    const int64_t grains = (n + grain - 1) / grain;
    if (grains < threads)
        threads = (int)grains;
    if (threads <= 1) {
        fn(ctx, 0, n, 0);
        return;
    }
    struct job job = {.fn = fn, .ctx = ctx, .n = n, .grain = grain};
    atomic_init(&job.next, 0);
    pthread_t tid[Q35_MAX_THREADS];
    struct worker w[Q35_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++) {
        w[t] = (struct worker){.job = &job, .thread = t};
        if (pthread_create(&tid[t], NULL, worker_main, &w[t]) != 0)
            break; /* fewer threads: the grains still all get done below */
        started = t;
    }
    run_grains(&job, 0);
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
}

double q35_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
