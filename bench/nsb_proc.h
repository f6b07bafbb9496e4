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

/* The one CPU the process may run on (pid 0: this process), or -1 when its affinity allows
 * more than one or cannot be read. */
int nsb_proc_pinned_cpu(long pid);

/* Time CPU `cpu` has spent so far, from /proc/stat, in clock ticks: *busy running anything but
 * niced user code (user, system, irq, softirq, and steal: time the hypervisor gave elsewhere),
 * *niced running user code at a positive nice (which yields to normal work), *total all of that
 * and idle. Returns 0, or -1 when the line cannot be read. */
int nsb_proc_cpu_times(int cpu, uint64_t *busy, uint64_t *niced, uint64_t *total);

#endif
