/* Logging: one line per event, "yyyy-MM-dd HH:mm:ss,SSS LEVEL message", to stdout and to the
 * log file (both optional). Thread-safe: a line is formatted on the caller's stack and written
 * with one write() per sink. */
#ifndef NS_LOG_H
#define NS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ns_log_level {
    NS_LOG_ERROR = 0,
    NS_LOG_WARN = 1,
    NS_LOG_INFO = 2,
    NS_LOG_DEBUG = 3,
} ns_log_level_t;

/* Opens `path` for appending (creating missing parent directories) as the file sink; NULL
 * closes the file sink. Returns 0 or -errno (the previous sink is kept on failure). */
int ns_log_open_file(const char *path);

/* Lines the file sink lost since start (a full or failing disk: they still went to stdout).
 * A failure is announced once on stdout until the file takes a line again, which then says how
 * many were lost. Any thread. */
uint64_t ns_log_file_failures(void);

/* Enables or disables the stdout sink (on by default). */
void ns_log_set_stdout(bool enabled);

/* Lines above `level` are dropped. Default NS_LOG_INFO. */
void ns_log_set_level(ns_log_level_t level);
ns_log_level_t ns_log_get_level(void);

/* Parses "ERROR", "WARN", "INFO", "DEBUG" (any case). Returns false for anything else. */
bool ns_log_level_parse(const char *name, ns_log_level_t *out);

/* Logs one line. Lines longer than 8 KiB are cut. */
void ns_log(ns_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define NS_LOG_E(...) ns_log(NS_LOG_ERROR, __VA_ARGS__)
#define NS_LOG_W(...) ns_log(NS_LOG_WARN, __VA_ARGS__)
#define NS_LOG_I(...) ns_log(NS_LOG_INFO, __VA_ARGS__)
#define NS_LOG_D(...)                                                                              \
    do {                                                                                           \
        if (ns_log_get_level() >= NS_LOG_DEBUG)                                                    \
            ns_log(NS_LOG_DEBUG, __VA_ARGS__);                                                     \
    } while (0)

/* Writes a printable, bounded rendering of peer bytes into out (always NUL-terminated):
 * printable ASCII as is, everything else as \xNN, at most max_in input bytes, "..." if cut. */
void ns_log_escape(const void *data, size_t len, size_t max_in, char *out, size_t outlen);

/* Flushes and closes the file sink. */
void ns_log_close(void);

#endif
