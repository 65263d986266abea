/* The CPU device's thread pool (see threads.h). One job at a time: the caller
 * publishes {fn, arg, n, chunks} and bumps a generation counter; workers that
 * are spinning see it at once, parked ones are woken by a broadcast; everyone,
 * caller included, takes chunk indices from one atomic counter. A worker must
 * join the job (a tagged count, `ticket`) before it reads it; when the caller
 * runs out of chunks it closes the job and waits only for the workers that
 * joined, so a worker the OS has not scheduled yet (the cores are shared)
 * never delays the caller: it wakes later, finds the job closed, and parks.
 * The spin (tens of microseconds) keeps back-to-back ops from paying a futex
 * wake each; after it, idle workers sleep and cost nothing. */
#include "threads.h"

#include <stdlib.h>

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define TX_NO_THREADS 1
#endif
#if defined(_WIN32) && !defined(TX_NO_THREADS)
#define TX_NO_THREADS 1 /* no pthreads port yet */
#endif

typedef void (*tx_range_fn)(void *arg, int64_t begin, int64_t end, int thread);

#ifdef TX_NO_THREADS

struct tx_threadpool {
    int size;
};

tx_threadpool *tx_threadpool_create(int n) {
    (void)n;
    tx_threadpool *tp = malloc(sizeof *tp);
    if (tp)
        tp->size = 1;
    return tp;
}

void tx_threadpool_destroy(tx_threadpool *tp) {
    free(tp);
}

int tx_threadpool_size(const tx_threadpool *tp) {
    (void)tp;
    return 1;
}

void tx_parallel_for(tx_threadpool *tp, int64_t n, int64_t grain, tx_range_fn fn, void *arg) {
    (void)tp;
    (void)grain;
    if (n > 0)
        fn(arg, 0, n, 0);
}

#else

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

enum { MAX_THREADS = 256, SPIN = 4000, CHUNKS_PER_THREAD = 4 };

struct tx_threadpool {
    int size; /* threads, caller included */
    int nworkers;
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* gen changed or stop */
    pthread_cond_t done; /* remaining reached 0 */
    atomic_int busy;     /* a tx_parallel_for is running */
    atomic_uint gen;     /* bumped per job */
    atomic_bool stop;
    /* The current job (written before gen is bumped, read after). */
    tx_range_fn fn;
    void *arg;
    int64_t n, nchunks;
    atomic_llong next; /* next chunk index */
    /* gen << 32 | CLOSED | workers in the job: who the caller waits for */
    _Atomic uint64_t ticket;
};

#define TICKET_CLOSED 0x80000000u
#define TICKET_ACTIVE 0x7fffffffu

typedef struct {
    tx_threadpool *tp;
    int id;
} worker_arg;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void run_chunks(tx_threadpool *tp, int thread) {
    const int64_t n = tp->n, nchunks = tp->nchunks;
    for (;;) {
        int64_t c = atomic_fetch_add_explicit(&tp->next, 1, memory_order_relaxed);
        if (c >= nchunks)
            break;
        /* chunk c is [c*n/nchunks, (c+1)*n/nchunks): every chunk >= grain */
        int64_t b = c * n / nchunks, e = (c + 1) * n / nchunks;
        tp->fn(tp->arg, b, e, thread);
    }
}

static void *worker_main(void *p) {
    worker_arg wa = *(worker_arg *)p;
    free(p);
    tx_threadpool *tp = wa.tp;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&tp->gen, memory_order_acquire);
        for (int i = 0; g == seen && i < SPIN && !atomic_load(&tp->stop); i++) {
            cpu_relax();
            g = atomic_load_explicit(&tp->gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&tp->mu);
            while ((g = atomic_load(&tp->gen)) == seen && !atomic_load(&tp->stop))
                pthread_cond_wait(&tp->wake, &tp->mu);
            pthread_mutex_unlock(&tp->mu);
        }
        if (atomic_load(&tp->stop))
            break;
        seen = g;
        /* join job g unless it is over (closed, or a later one started) */
        uint64_t t = atomic_load_explicit(&tp->ticket, memory_order_relaxed);
        bool joined = false;
        while ((uint32_t)(t >> 32) == g && !(t & TICKET_CLOSED) && !joined)
            joined = atomic_compare_exchange_weak_explicit(
                &tp->ticket, &t, t + 1, memory_order_acquire, memory_order_relaxed);
        if (!joined)
            continue;
        run_chunks(tp, wa.id);
        t = atomic_fetch_sub_explicit(&tp->ticket, 1, memory_order_acq_rel) - 1;
        if ((t & TICKET_CLOSED) && !(t & TICKET_ACTIVE)) {
            pthread_mutex_lock(&tp->mu);
            pthread_cond_signal(&tp->done);
            pthread_mutex_unlock(&tp->mu);
        }
    }
    return NULL;
}

tx_threadpool *tx_threadpool_create(int n) {
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    if (n > MAX_THREADS)
        n = MAX_THREADS;
    tx_threadpool *tp = calloc(1, sizeof *tp);
    if (!tp)
        return NULL;
    tp->size = 1;
    if (n == 1)
        return tp;
    tp->workers = calloc((size_t)n - 1, sizeof *tp->workers);
    if (!tp->workers)
        return tp;
    pthread_mutex_init(&tp->mu, NULL);
    pthread_cond_init(&tp->wake, NULL);
    pthread_cond_init(&tp->done, NULL);
    atomic_init(&tp->busy, 0);
    atomic_init(&tp->gen, 0);
    atomic_init(&tp->stop, false);
    atomic_init(&tp->next, 0);
    atomic_init(&tp->ticket, TICKET_CLOSED);
    for (int i = 0; i < n - 1; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa)
            break;
        *wa = (worker_arg){tp, i + 1};
        if (pthread_create(&tp->workers[i], NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        tp->nworkers++;
    }
    tp->size = tp->nworkers + 1;
    return tp;
}

void tx_threadpool_destroy(tx_threadpool *tp) {
    if (!tp)
        return;
    if (tp->workers) {
        pthread_mutex_lock(&tp->mu);
        atomic_store(&tp->stop, true);
        pthread_cond_broadcast(&tp->wake);
        pthread_mutex_unlock(&tp->mu);
        for (int i = 0; i < tp->nworkers; i++)
            pthread_join(tp->workers[i], NULL);
        pthread_cond_destroy(&tp->done);
        pthread_cond_destroy(&tp->wake);
        pthread_mutex_destroy(&tp->mu);
        free(tp->workers);
    }
    free(tp);
}

int tx_threadpool_size(const tx_threadpool *tp) {
    return tp ? tp->size : 1;
}

void tx_parallel_for(tx_threadpool *tp, int64_t n, int64_t grain, tx_range_fn fn, void *arg) {
    if (n <= 0)
        return;
    if (grain < 1)
        grain = 1;
    int64_t nchunks = n / grain;
    if (tp && nchunks > (int64_t)tp->size * CHUNKS_PER_THREAD)
        nchunks = (int64_t)tp->size * CHUNKS_PER_THREAD;
    if (!tp || tp->size == 1 || nchunks < 2 || atomic_exchange(&tp->busy, 1)) {
        fn(arg, 0, n, 0);
        return;
    }
    tp->fn = fn;
    tp->arg = arg;
    tp->n = n;
    tp->nchunks = nchunks;
    atomic_store_explicit(&tp->next, 0, memory_order_relaxed);
    unsigned g = atomic_load_explicit(&tp->gen, memory_order_relaxed) + 1;
    atomic_store_explicit(&tp->ticket, (uint64_t)g << 32, memory_order_release);
    pthread_mutex_lock(&tp->mu);
    atomic_store_explicit(&tp->gen, g, memory_order_release);
    pthread_cond_broadcast(&tp->wake);
    pthread_mutex_unlock(&tp->mu);

    run_chunks(tp, 0);

    /* every chunk is taken: wait for the workers that joined to finish theirs */
    uint64_t t = atomic_fetch_or_explicit(&tp->ticket, TICKET_CLOSED, memory_order_acq_rel);
    for (int i = 0; i < SPIN && (t & TICKET_ACTIVE); i++) {
        cpu_relax();
        t = atomic_load_explicit(&tp->ticket, memory_order_acquire);
    }
    if (t & TICKET_ACTIVE) {
        pthread_mutex_lock(&tp->mu);
        while (atomic_load(&tp->ticket) & TICKET_ACTIVE)
            pthread_cond_wait(&tp->done, &tp->mu);
        pthread_mutex_unlock(&tp->mu);
    }
    atomic_store_explicit(&tp->busy, 0, memory_order_release);
}

#endif
