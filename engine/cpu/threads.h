/* A thread pool for the CPU device's kernels: persistent workers parked on a
 * condition variable (after a short spin), woken per tx_parallel_for call, so
 * a call costs a few microseconds, not a thread start. The pool is owned by
 * whoever creates it (the engine context); there is no global state.
 *
 * Built on pthreads; under emscripten only when __EMSCRIPTEN_PTHREADS__ is
 * defined (-pthread), else (and when TX_NO_THREADS is defined) every pool has
 * size 1 and tx_parallel_for runs inline. */
#ifndef TX_CPU_THREADS_H
#define TX_CPU_THREADS_H

#include <stdint.h>

typedef struct tx_threadpool tx_threadpool;

/* A pool of n threads counting the caller's (n - 1 workers are started).
 * n <= 0: the number of online cores; n == 1: no threads. NULL only when
 * out of memory. A failure to start a thread gives a smaller pool. */
tx_threadpool *tx_threadpool_create(int n);
/* Stops and joins the workers and frees the pool; NULL is a no-op. Not while
 * a tx_parallel_for on it runs. */
void tx_threadpool_destroy(tx_threadpool *tp);
/* The number of threads a tx_parallel_for may use, caller included (1 for
 * NULL): the bound of the `thread` argument, for per-thread scratch. */
int tx_threadpool_size(const tx_threadpool *tp);

/* fn(arg, begin, end, thread) over [0, n): chunks of at least `grain` items
 * (grain < 1 counts as 1), handed out dynamically to the workers and to the
 * calling thread; returns when every chunk is done. `thread` is in
 * [0, tx_threadpool_size(tp)) and no two chunks run at once with the same
 * value. tp NULL or of size 1, n <= grain, or a call while the pool is busy
 * (from inside fn, or from another thread): runs fn(arg, 0, n, 0) inline. */
void tx_parallel_for(tx_threadpool *tp, int64_t n, int64_t grain,
                     void (*fn)(void *arg, int64_t begin, int64_t end, int thread), void *arg);

#endif
