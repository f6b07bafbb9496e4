/* process_* figures from /proc/self/stat, /proc/stat and /proc/self/fd (ns_procstat.h). */
#include "ns_procstat.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Seconds since the epoch at boot ("btime" of /proc/stat), 0 when unknown. */
static uint64_t boot_time(void)
{
    FILE *f = fopen("/proc/stat", "re");
    if (f == NULL)
        return 0;
    char line[256];
    unsigned long long bt = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "btime ", 6) == 0) {
            bt = strtoull(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return bt;
}

static uint64_t count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 0;
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n > 0 ? n - 1 : 0; /* the directory stream's own descriptor */
}

int ns_procstat_read(ns_procstat_t *out)
{
    *out = (ns_procstat_t){0};
    FILE *f = fopen("/proc/self/stat", "re");
    if (f == NULL)
        return -errno;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (p == NULL)
        return -EINVAL;
    p += 2; /* field 3, state */
    unsigned long long v[24] = {0};
    /* Fields 3..24 of proc(5): state, then numbers; we keep 14 utime, 15 stime, 20 threads,
     * 22 starttime, 23 vsize, 24 rss (pages). */
    int field = 3;
    char *save = NULL;
    for (char *tok = strtok_r(p, " ", &save); tok != NULL && field <= 24;
         tok = strtok_r(NULL, " ", &save), field++) {
        if (field > 3)
            v[field - 1] = strtoull(tok, NULL, 10);
    }
    long tck = sysconf(_SC_CLK_TCK);
    long page = sysconf(_SC_PAGESIZE);
    if (tck <= 0)
        tck = 100;
    if (page <= 0)
        page = 4096;
    out->cpu_seconds = (double)(v[13] + v[14]) / (double)tck;
    out->threads = v[19];
    out->start_time_seconds = (double)boot_time() + (double)v[21] / (double)tck;
    out->vsize_bytes = v[22];
    out->rss_bytes = v[23] * (uint64_t)page;
    out->open_fds = count_fds();
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        out->max_fds = (uint64_t)rl.rlim_cur;
    return 0;
}
