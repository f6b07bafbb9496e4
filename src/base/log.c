/* Logging to stdout and a file, in the layout of the Java NameServer's logback pattern
 * ("%d %p %t - %m"), with milliseconds. */
#include "ns_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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
/* The file sink's health (log_lock): a full or failing disk loses lines there, never stdout's. */
static char *log_path;           /* the file, for the lines that say it fails */
static bool file_failing;        /* the last line did not make it to the file */
static bool file_mid_line;       /* a line was cut short there: the next begins on a new line */
static uint64_t file_lost;       /* lines lost in the current failure streak */
static uint64_t file_lost_total; /* atomic: every line lost (ns_log_file_failures) */

static const char *const level_names[] = {"ERROR", "WARN", "INFO", "DEBUG"};
static __thread char thread_label[16]; /* the thread's name, read once */

int ns_log_open_file(const char *path)
{
    int fd = -1;
    char *copy = NULL;
    if (path != NULL && path[0] != '\0') {
        fd = ns_afile_open_append(path, 0644);
        if (fd < 0)
            return fd;
        copy = strdup(path);
    }
    pthread_mutex_lock(&log_lock);
    int old = log_fd;
    __atomic_store_n(&log_fd, fd, __ATOMIC_RELEASE);
    char *old_path = log_path;
    log_path = copy;
    file_failing = file_mid_line = false;
    file_lost = 0;
    pthread_mutex_unlock(&log_lock);
    free(old_path);
    if (old >= 0)
        close(old);
    return 0;
}

uint64_t ns_log_file_failures(void)
{
    return __atomic_load_n(&file_lost_total, __ATOMIC_RELAXED);
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

/* Formats "<stamp> LEVEL thread - " into line (at least 96 bytes). Returns its length. */
static int line_prefix(char *line, size_t cap, ns_log_level_t level);

/* The file sink's part of a line (log_lock held). A line the file does not take is counted;
 * the first of a streak is announced on stdout (the file cannot say it), and the first line
 * that makes it again says how many were lost, in the file and on stdout: those notes go to
 * `note` (at least 600 bytes; *note_len 0 = none) for the caller to put on stdout. Not static,
 * never inlined: the fault tests name it (fiu's enable_stack_by_name) to fail exactly the log
 * file's writes. */
void ns__log_write_file(const char *line, size_t len, char *note, size_t *note_len);
__attribute__((noinline)) void ns__log_write_file(const char *line, size_t len, char *note,
                                                  size_t *note_len)
{
    const size_t cap = 600;
    *note_len = 0;
    if (file_mid_line) {
        /* The cut line ends here, so that the next starts on its own line. */
        if (ns_afile_write_counted(log_fd, "\n", 1, NULL) != 0)
            goto failed;
        file_mid_line = false;
    }
    if (file_failing) {
        int n = line_prefix(note, cap, NS_LOG_WARN);
        n += snprintf(note + n, cap - (size_t)n,
                      "log file %s writable again: %llu line(s) were lost (they went to stdout)\n",
                      log_path ? log_path : "?", (unsigned long long)file_lost);
        size_t want = (size_t)n < cap ? (size_t)n : cap - 1;
        size_t w = 0;
        if (ns_afile_write_counted(log_fd, note, want, &w) != 0) {
            file_mid_line = w > 0;
            goto failed;
        }
        *note_len = want;
        file_failing = false;
        file_lost = 0;
    }
    size_t w = 0;
    int err = ns_afile_write_counted(log_fd, line, len, &w);
    if (err == 0)
        return;
    file_mid_line = w > 0;
    if (!file_failing) {
        int n = line_prefix(note, cap, NS_LOG_ERROR);
        n += snprintf(note + n, cap - (size_t)n,
                      "log file %s: write failed: %s; log lines go to stdout only until it takes "
                      "them again (counted in mqnamesrv_log_write_failures_total)\n",
                      log_path ? log_path : "?", strerror(-err));
        *note_len = (size_t)n < cap ? (size_t)n : cap - 1;
    }
failed:
    file_failing = true;
    file_lost++;
    __atomic_add_fetch(&file_lost_total, 1, __ATOMIC_RELAXED);
}

static int line_prefix(char *line, size_t cap, ns_log_level_t level)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    if (thread_label[0] == '\0') {
        if (pthread_getname_np(pthread_self(), thread_label, sizeof(thread_label)) != 0 ||
            thread_label[0] == '\0')
            snprintf(thread_label, sizeof(thread_label), "main");
    }
    return snprintf(line, cap, "%04d-%02d-%02d %02d:%02d:%02d,%03ld %s %s - ", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                    ts.tv_nsec / 1000000, level_names[level], thread_label);
}

void ns_log(ns_log_level_t level, const char *fmt, ...)
{
    if ((int)level > __atomic_load_n(&log_level, __ATOMIC_RELAXED))
        return;
    char line[LOG_LINE_MAX];
    int n = line_prefix(line, sizeof(line), level);
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
    char note[600];
    size_t note_len = 0;
    pthread_mutex_lock(&log_lock);
    if (log_fd >= 0)
        ns__log_write_file(line, len, note, &note_len);
    pthread_mutex_unlock(&log_lock);
    if (note_len > 0 && __atomic_load_n(&log_stdout, __ATOMIC_RELAXED))
        (void)ns_afile_write_all(STDOUT_FILENO, note, note_len);
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
