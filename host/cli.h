/* What every texel command does the same way (host/cli.c): --help, usage
 * errors that name what was wrong, `mkdir -p`, and the progress line on
 * stderr. Exit statuses of the CLI (README, "The CLI"): 0 ok, 1 error
 * (conformance: a test failed), 2 usage, 3 texel op's results differ from
 * the reference, 4 the model needs what texel lacks (run), 77 no GL context. */
#ifndef TX_HOST_CLI_H
#define TX_HOST_CLI_H

#include <stdbool.h>

/* --help or -h */
bool tx_cli_is_help(const char *arg);
/* Prints usage to stdout; returns 0 (the status of `texel CMD --help`). */
int tx_cli_help(const char *usage);
/* "texel CMD: WHY" and the usage on stderr; returns 2. */
int tx_cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An argument the command does not take: "texel CMD: unknown option \"ARG\"" (or
 * "... unexpected argument" when it is no option); returns 2. */
int tx_cli_unknown(const char *cmd, const char *usage, const char *arg);
/* arg is one of the NULL-terminated names */
bool tx_cli_in(const char *arg, const char *const *names);
/* "texel CMD: OPT needs a value"; returns 2. */
int tx_cli_no_value(const char *cmd, const char *usage, const char *opt);
/* The first look at option a of a command line (v: the argument after it, or
 * NULL): for --help prints usage and returns 0; for an option of value_opts
 * with no value says so and returns 2; else returns -1 (go on parsing a). */
int tx_cli_first_look(const char *cmd, const char *usage, const char *a, const char *v,
                      const char *const *value_opts);

/* Creates path and its missing parents (mkdir -p); false with errno set. */
bool tx_mkdirs(const char *path);

/* The progress line: one line on stderr, rewritten in place ("\r"), only when
 * stderr is a terminal and not quiet. tx_progress_begin starts the clock; a
 * line shows once delay_ms have passed since then (0: at once) and at most
 * every 100 ms; tx_progress_end clears it. */
typedef struct tx_progress {
    bool on;
    bool shown;
    double t0, delay_ms, last;
} tx_progress;
void tx_progress_begin(tx_progress *p, bool quiet, double delay_ms);
void tx_progress_update(tx_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Clears the line (before other output to the terminal); it comes back at the next update. */
void tx_progress_clear(tx_progress *p);
void tx_progress_end(tx_progress *p);

/* The same line kept up to date by a thread while the caller blocks in long
 * calls: "TEXT (2.4 s)", every 100 ms once delay_ms have passed. NULL (all
 * calls then do nothing) when the line is off. */
typedef struct tx_ticker tx_ticker;
tx_ticker *tx_ticker_start(bool quiet, double delay_ms);
void tx_ticker_set(tx_ticker *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Stops the thread and clears the line; t is freed. */
void tx_ticker_stop(tx_ticker *t);

#endif
