/* The process's own resource figures for the standard process_* series, read from /proc/self
 * (Linux). Any thread; no state. */
#ifndef NS_PROCSTAT_H
#define NS_PROCSTAT_H

#include <stdint.h>

typedef struct ns_procstat {
    double cpu_seconds;        /* user + system CPU time */
    uint64_t rss_bytes;        /* resident set size */
    uint64_t vsize_bytes;      /* virtual memory size */
    uint64_t threads;          /* threads of the process */
    uint64_t open_fds;         /* open file descriptors (the one used to count them excluded) */
    uint64_t max_fds;          /* RLIMIT_NOFILE soft limit (0: unlimited) */
    double start_time_seconds; /* process start, seconds since the Unix epoch */
} ns_procstat_t;

/* Fills *out. Returns 0, or -errno when /proc/self/stat cannot be read (out zeroed then;
 * fields that could not be read stay 0). */
int ns_procstat_read(ns_procstat_t *out);

#endif
