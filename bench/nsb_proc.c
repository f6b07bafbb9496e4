#include "nsb_proc.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t nsb_proc_cpu_ticks(long pid, int *ok)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    *ok = 0;
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    unsigned long long ut = 0, st = 0;
    /* Fields after the command name: state(3) ... utime(14) stime(15). */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    *ok = 1;
    return ut + st;
}

uint64_t nsb_proc_rss_kb(long pid)
{
    char path[64], line[256];
    unsigned long long kb = 0;
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "VmRSS: %llu", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

uint64_t nsb_proc_wait_ns(long pid)
{
    char path[96];
    if (pid > 0)
        snprintf(path, sizeof(path), "/proc/%ld/task", pid);
    else
        snprintf(path, sizeof(path), "/proc/self/task");
    DIR *d = opendir(path);
    if (!d)
        return 0;
    uint64_t sum = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char f[sizeof(path) + sizeof(e->d_name) + 16];
        snprintf(f, sizeof(f), "%s/%s/schedstat", path, e->d_name);
        FILE *fp = fopen(f, "r");
        if (!fp)
            continue;
        unsigned long long run = 0, wait = 0;
        /* Fields: time on the CPU, time waiting on a run queue (ns), time slices. */
        if (fscanf(fp, "%llu %llu", &run, &wait) == 2)
            sum += wait;
        fclose(fp);
    }
    closedir(d);
    return sum;
}

int nsb_proc_pinned_cpu(long pid)
{
    if (pid <= 0) {
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1)
            return -1;
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                return i;
        return -1;
    }
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%ld/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int cpu = -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Cpus_allowed_list:", 18) != 0)
            continue;
        char *p = line + 18, *end;
        while (*p == ' ' || *p == '\t')
            p++;
        long n = strtol(p, &end, 10);
        /* One CPU: a number and nothing after it ("1"; a list or range has ',' or '-'). */
        if (end != p && (*end == '\n' || *end == '\0'))
            cpu = (int)n;
        break;
    }
    fclose(f);
    return cpu;
}

int nsb_proc_cpu_times(int cpu, uint64_t *busy, uint64_t *niced, uint64_t *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[512], want[16];
    int wlen = snprintf(want, sizeof(want), "cpu%d ", cpu);
    int rc = -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, want, (size_t)wlen) != 0)
            continue;
        unsigned long long v[8] = {0};
        /* user nice system idle iowait irq softirq steal */
        if (sscanf(line + wlen, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
            *busy = v[0] + v[2] + v[5] + v[6] + v[7];
            *niced = v[1];
            *total = *busy + v[1] + v[3] + v[4];
            rc = 0;
        }
        break;
    }
    fclose(f);
    return rc;
}
