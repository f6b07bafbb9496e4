/* Logging to stdout and a file, in the layout of the Java NameServer's logback pattern
 * ("%d %p %t - %m"), with milliseconds. */
#include "ns_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "ns_atomic_file.h"
#include "ns_common.h"

/* 8 KiB is far above any line we write; longer ones (a huge topic name in a WARN) are cut. */
#define LOG_LINE_MAX 8192

static int log_level = NS_LOG_INFO; /* atomic */
static int log_stdout = 1;          /* atomic */
static int log_fd = -1;             /* guarded by log_lock for open/close */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

int ns_log_open_file(const char *path)
{
    int fd = -1;
    if (path != NULL && path[0] != '\0') {
        fd = ns_afile_open_append(path, 0644);
        if (fd < 0)
            return fd;
    }
    pthread_mutex_lock(&log_lock);
    int old = log_fd;
    __atomic_store_n(&log_fd, fd, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&log_lock);
    if (old >= 0)
        close(old);
    return 0;
}

void ns_log_set_stdout(bool enabled)
{
    __atomic_store_n(&log_stdout, enabled ? 1 : 0, __ATOMIC_RELAXED);
}

void ns_log_set_level(ns_log_level_t level)
{
    __atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
}

ns_log_level_t ns_log_get_level(void)
{
    return (ns_log_level_t)__atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

bool ns_log_level_parse(const char *name, ns_log_level_t *out)
{
    for (size_t i = 0; i < NS_ARRAY_SIZE(level_names); i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *out = (ns_log_level_t)i;
            return true;
        }
    }
    return false;
}

static __thread char thread_label[16];

void ns_log(ns_log_level_t level, const char *fmt, ...)
{
    if ((int)level > __atomic_load_n(&log_level, __ATOMIC_RELAXED))
        return;
    char line[LOG_LINE_MAX];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    if (thread_label[0] == '\0') {
        if (pthread_getname_np(pthread_self(), thread_label, sizeof(thread_label)) != 0 ||
            thread_label[0] == '\0')
            snprintf(thread_label, sizeof(thread_label), "main");
    }
    int n = snprintf(line, sizeof(line), "%04d-%02d-%02d %02d:%02d:%02d,%03ld %s %s - ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000, level_names[level], thread_label);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof(line) - 2)
        len = sizeof(line) - 2;
    /* One event, one line: a line break or other control byte inside a message (a topic name
     * from a peer) must not forge log lines, so it becomes '?'. */
    for (size_t i = (size_t)n; i < len; i++)
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t')
            line[i] = '?';
    line[len++] = '\n';

    /* A failing sink has nowhere left to report to: its error is dropped. */
    if (__atomic_load_n(&log_stdout, __ATOMIC_RELAXED))
        (void)ns_afile_write_all(STDOUT_FILENO, line, len);
    pthread_mutex_lock(&log_lock);
    if (log_fd >= 0)
        (void)ns_afile_write_all(log_fd, line, len);
    pthread_mutex_unlock(&log_lock);
}

void ns_log_escape(const void *data, size_t len, size_t max_in, char *out, size_t outlen)
{
    const uint8_t *p = data;
    size_t o = 0;
    if (outlen == 0)
        return;
    size_t n = len < max_in ? len : max_in;
    for (size_t i = 0; i < n; i++) {
        if (o + 5 >= outlen)
            break;
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
            out[o++] = (char)p[i];
        } else {
            o += (size_t)snprintf(out + o, outlen - o, "\\x%02x", p[i]);
        }
    }
    if (len > n && o + 4 < outlen) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

void ns_log_close(void)
{
    ns_log_open_file(NULL);
}
