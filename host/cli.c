/* The commands' shared argument handling and progress line (host/cli.h). */
#include "cli.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool tx_cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int tx_cli_help(const char *usage) {
    fputs(usage, stdout);
    return 0;
}

static int usage_v(const char *cmd, const char *usage, const char *fmt, va_list ap) {
    fprintf(stderr, "texel %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

int tx_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_v(cmd, usage, fmt, ap);
    va_end(ap);
    return rc;
}

int tx_cli_unknown(const char *cmd, const char *usage, const char *arg) {
    if (arg[0] == '-' && arg[1])
        return tx_cli_usage_error(cmd, usage, "unknown option \"%s\"", arg);
    return tx_cli_usage_error(cmd, usage, "unexpected argument \"%s\"", arg);
}

bool tx_cli_in(const char *arg, const char *const *names) {
    for (; *names; names++)
        if (strcmp(arg, *names) == 0)
            return true;
    return false;
}

int tx_cli_no_value(const char *cmd, const char *usage, const char *opt) {
    return tx_cli_usage_error(cmd, usage, "%s needs a value", opt);
}

int tx_cli_first_look(const char *cmd, const char *usage, const char *a, const char *v,
                      const char *const *value_opts) {
    if (tx_cli_is_help(a))
        return tx_cli_help(usage);
    if (tx_cli_in(a, value_opts) && !v)
        return tx_cli_no_value(cmd, usage, a);
    return -1;
}

bool tx_mkdirs(const char *path) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = n ? ENAMETOOLONG : ENOENT;
        return false;
    }
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return false;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return false;
    struct stat st;
    if (stat(buf, &st) != 0)
        return false;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tx_progress_begin(tx_progress *p, bool quiet, double delay_ms) {
    /* TEXEL_PROGRESS_AFTER_MS: another delay (tests/cli_test.sh: 0) */
    const char *env = getenv("TEXEL_PROGRESS_AFTER_MS");
    *p = (tx_progress){.on = !quiet && isatty(STDERR_FILENO),
                       .t0 = now_ms(),
                       .delay_ms = env && *env ? atof(env) : delay_ms,
                       .last = -1e9};
}

void tx_progress_update(tx_progress *p, const char *fmt, ...) {
    if (!p->on)
        return;
    double t = now_ms();
    if (t - p->t0 < p->delay_ms || t - p->last < 100)
        return;
    p->last = t;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* \033[K: clear the rest of the previous, longer line */
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->shown = true;
}

void tx_progress_clear(tx_progress *p) {
    if (p->shown) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    p->shown = false;
    p->last = -1e9;
}

void tx_progress_end(tx_progress *p) {
    tx_progress_clear(p);
    p->on = false;
}

struct tx_ticker {
    tx_progress p;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    char text[128];
};

static void *tick(void *arg) {
    tx_ticker *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000 * 1000 * 1000) {
            until.tv_sec++;
            until.tv_nsec -= 1000 * 1000 * 1000;
        }
        pthread_cond_timedwait(&t->cv, &t->mu, &until);
        if (!t->stop)
            tx_progress_update(&t->p, "%s (%.1f s)", t->text, (now_ms() - t->p.t0) / 1e3);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

tx_ticker *tx_ticker_start(bool quiet, double delay_ms) {
    tx_progress p;
    tx_progress_begin(&p, quiet, delay_ms);
    if (!p.on)
        return NULL;
    tx_ticker *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->p = p;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (pthread_create(&t->thread, NULL, tick, t) != 0) {
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        free(t);
        return NULL;
    }
    return t;
}

void tx_ticker_set(tx_ticker *t, const char *fmt, ...) {
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->text, sizeof t->text, fmt, ap);
    va_end(ap);
    tx_progress_update(&t->p, "%s (%.1f s)", t->text, (now_ms() - t->p.t0) / 1e3);
    pthread_mutex_unlock(&t->mu);
}

void tx_ticker_stop(tx_ticker *t) {
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    tx_progress_end(&t->p);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t);
}
