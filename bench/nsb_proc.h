/* What a server process costs, read from /proc: the benchmarks sample the server they load
 * (--pid) for its CPU time and resident memory. */
#ifndef NSB_PROC_H
#define NSB_PROC_H

#include <stdint.h>

/* The process's user + system CPU time in clock ticks (sysconf(_SC_CLK_TCK) a second), from
 * /proc/PID/stat. *ok is 1 when it could be read, else 0 (and 0 is returned). */
uint64_t nsb_proc_cpu_ticks(long pid, int *ok);

/* The process's resident set (VmRSS) in KiB, from /proc/PID/status; 0 when unreadable. */
uint64_t nsb_proc_rss_kb(long pid);

/* Time the process's threads (those alive now) have spent runnable but waiting for a CPU, in
 * ns, summed from /proc/PID/task/.../schedstat; pid 0 is this process. On a shared machine it
 * tells a server that was slow from one that did not get the CPU. 0 when unreadable. */
uint64_t nsb_proc_wait_ns(long pid);

#endif
