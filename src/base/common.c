/* Error names, aborting allocators, clocks. */
#include "ns_common.h"

#include <pthread.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uv.h> /* UV_ERRNO_MAP only: a table of names and texts, no libuv call */

#include "ns_log.h"

const char *ns_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
    case NS_EPROTO:
        return "protocol error";
    case NS_ETOOBIG:
        return "too big";
    case NS_EINVAL:
        return "invalid value";
    case NS_ENOTFOUND:
        return "not found";
    case NS_EJSON:
        return "bad JSON";
    case NS_ECRC:
        return "crc32 not match";
    case NS_EZLIB:
        return "bad compressed data";
    case NS_ECONFIG:
        return "bad configuration";
    case NS_ENOTREG:
        return "not a regular file";
    default:
        break;
    }
    /* libuv's texts for its codes, from the table its header publishes: the same words as
     * uv_strerror(), without linking libuv (nscodec does not). */
#define NS__UV_TEXT(name, text)                                                                    \
    case UV_##name:                                                                                \
        return text;
    switch (err) {
        UV_ERRNO_MAP(NS__UV_TEXT)
    default:
        break;
    }
#undef NS__UV_TEXT
    if (err < 0 && err > -4096)
        return strerror(-err); /* an errno libuv has no name for; thread-safe in glibc 2.32+ */
    return "unknown error";
}

static _Noreturn void out_of_memory(size_t size)
{
    ns_log(NS_LOG_ERROR, "out of memory allocating %zu bytes", size);
    abort();
}

void *ns_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p == NULL)
        out_of_memory(size);
    return p;
}

void *ns_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (p == NULL)
        out_of_memory(count * size);
    return p;
}

void *ns_xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (p == NULL)
        out_of_memory(size);
    return p;
}

char *ns_xstrdup(const char *s)
{
    return ns_xstrndup(s, strlen(s));
}

char *ns_xstrndup(const char *s, size_t n)
{
    char *p = ns_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void ns_assert_fail(const char *cond, const char *file, int line)
{
    ns_log(NS_LOG_ERROR, "assertion failed: %s at %s:%d", cond, file, line);
    abort();
}

void ns_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

uint64_t ns_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t ns_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

char *ns_put_int(char *p, int64_t v)
{
    if (v >= 0 && v < 10) { /* perm, flags, codes, most queue counts */
        *p = (char)('0' + v);
        return p + 1;
    }
    /* Two digits per division (the route-read fast path writes an opaque into every reply). */
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                   "31323334353637383940414243444546474849505152535455565758596061"
                                   "62636465666768697071727374757677787980818283848586878889909192"
                                   "93949596979899";
    char tmp[NS_INT_TEXT_MAX];
    size_t n = sizeof(tmp);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        uint64_t q = u / 100;
        n -= 2;
        memcpy(tmp + n, pairs + 2 * (u - q * 100), 2);
        u = q;
    }
    if (u >= 10) {
        n -= 2;
        memcpy(tmp + n, pairs + 2 * u, 2);
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0)
        tmp[--n] = '-';
    memcpy(p, tmp + n, sizeof(tmp) - n);
    return p + (sizeof(tmp) - n);
}

int64_t ns_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void ns_signals_block(sigset_t *saved)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, saved);
}

void ns_signals_restore(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

const void *ns_find_by_code(const void *rows, size_t n, size_t stride, int32_t code)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const void *row = (const char *)rows + mid * stride;
        int32_t c;
        memcpy(&c, row, sizeof(c));
        if (c == code)
            return row;
        if (c < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool ns_list_next(const char **cursor, const char **item, size_t *len)
{
    const char *p = *cursor;
    if (*p == '\0')
        return false;
    const char *comma = strchr(p, ',');
    const char *end = comma ? comma : p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && (*a == ' ' || *a == '\t'))
        a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
        b--;
    *item = a;
    *len = (size_t)(b - a);
    *cursor = comma ? comma + 1 : end;
    return true;
}
