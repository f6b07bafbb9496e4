/* What nsbench and nscluster report per request class: the answer codes counted, and the RESULT
 * line. bench/compare.sh, bench/capacity.sh and bench/tls.sh parse that line by its keys: a key
 * renamed or dropped here breaks them. */
#ifndef NSB_REPORT_H
#define NSB_REPORT_H

#include "nsb_wire.h"

#include <stdint.h>

/* Distinct codes counted; a class that sees more is broken anyway, and the line stays short. */
#define NSB_CODES_MAX 16

/* How many answers carried each response code, in the order the codes were first seen. */
typedef struct nsb_codes {
    struct {
        int code;   /* response code */
        uint64_t n; /* answers with it */
    } of[NSB_CODES_MAX];
    int n; /* distinct codes held; codes past NSB_CODES_MAX are not counted */
} nsb_codes_t;

/* Counts one answer with `code`. */
void nsb_codes_add(nsb_codes_t *codes, int code);
/* Adds the counts of src to dst (a code new to dst is appended while there is room). */
void nsb_codes_merge(nsb_codes_t *dst, const nsb_codes_t *src);

/* One request class of a run, as its RESULT line shows it. */
typedef struct nsb_result {
    const char *target;       /* --label */
    const char *workload;     /* nsbench's -w, or "cluster" */
    const char *cls;          /* the request class: route, register, ... */
    long conns;               /* connections that sent this class */
    int inflight;             /* requests in flight per connection */
    double secs;              /* the measured window, s: rate = count / secs */
    const nsb_hist_t *hist;   /* latencies of the answers counted */
    uint64_t errors;          /* answers that were not valid */
    uint64_t bad_body;        /* of those, code 0 with a body of the wrong shape */
    const nsb_codes_t *codes; /* answers by code */
    const char *extra;        /* appended as is: "" or " key=value..." */
} nsb_result_t;

/* Prints the RESULT line to stdout: count, rate, latency percentiles in µs (p50, p99, p99.9,
 * max, mean), errors, and codes as "code:count,..." ("-" when none). */
void nsb_print_result(const nsb_result_t *r);

/* ns to µs, as the report prints latencies. */
double nsb_us(uint64_t ns);

#endif
