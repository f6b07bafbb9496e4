/* Shared basics: error codes, small macros and the aborting allocators.
 *
 * Every int-returning function in mqnamesrv returns 0 on success or a negative NS_E* code:
 * -errno for system errors, libuv's codes unchanged, and the codes below for our own. */
#ifndef NS_COMMON_H
#define NS_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* Our own error codes live far below any errno value and libuv's UV_E* codes (>= -4096). */
#define NS_EPROTO (-20001)    /* bytes that break the wire protocol */
#define NS_ETOOBIG (-20002)   /* a length above a configured limit */
#define NS_EINVAL (-20003)    /* a well-formed request with a bad value */
#define NS_ENOTFOUND (-20004) /* the thing asked for does not exist */
#define NS_EJSON (-20005)     /* a body that is not the JSON we expect */
#define NS_ECRC (-20006)      /* a body whose CRC32 does not match its header */
#define NS_EZLIB (-20007)     /* a compressed body that does not inflate */
#define NS_ECONFIG (-20008)   /* a configuration value that cannot be used */
#define NS_ENOTREG (-20009)   /* a path that must name a regular file names a FIFO, device... */

#define NS_UNUSED(x) ((void)(x))
#define NS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Returns a human-readable name for any NS_E*, -errno or libuv code (libuv's are -errno on
 * Linux but for UV_EOF, UV_UNKNOWN, UV_ECHARSET, UV_EFTYPE and UV_EAI_*, named here): our own
 * text, or strerror()'s for an errno. Needs no libuv. The string is not to be freed. */
const char *ns_strerror(int err);

/* Allocators that never return NULL: on exhaustion they log and abort(), as redis' zmalloc does.
 * A NameServer that cannot allocate cannot answer correctly, and a half-applied registration
 * would be worse than a restart. */
void *ns_xmalloc(size_t size);
void *ns_xcalloc(size_t count, size_t size);
void *ns_xrealloc(void *ptr, size_t size);
char *ns_xstrdup(const char *s);
char *ns_xstrndup(const char *s, size_t n);

/* Logs the failed condition with file:line and aborts. For our own invariants only: never for
 * anything a peer or a config file can cause. */
#define NS_ASSERT(cond)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ns_assert_fail(#cond, __FILE__, __LINE__);                                             \
    } while (0)
_Noreturn void ns_assert_fail(const char *cond, const char *file, int line);

/* Formats a one-line reason into err[0..errlen) for a caller that asked for one (err may be
 * NULL or errlen 0: nothing is written). */
void ns_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Longest decimal form ns_put_int writes: "-9223372036854775808". */
#define NS_INT_TEXT_MAX 20

/* Writes the decimal form of v at p (room for NS_INT_TEXT_MAX bytes, no NUL) and returns the
 * end. No locale, no printf: the JSON encoders call it for every number they write. */
char *ns_put_int(char *p, int64_t v);

/* Walks a comma-separated list (config values such as tls.ciphers or
 * proxyProtocolTrustedProxies): each call sets item/len to the next item, blanks (space, tab)
 * around it trimmed (len 0 for an empty item), moves *cursor past it and returns true; returns
 * false once *cursor is at the end of the string (a trailing comma ends the list). */
bool ns_list_next(const char **cursor, const char **item, size_t *len);

/* The row whose code is code in a table of n rows of stride bytes, sorted by a leading int32_t
 * code (the request tables: proc.c, ctl_proc.c), or NULL. */
const void *ns_find_by_code(const void *rows, size_t n, size_t stride, int32_t code);

/* Threads other than loop 0's (the main thread) must never take the process signals the server
 * handles (SIGTERM, SIGINT, SIGHUP): libuv's handler would still forward them, but a thread
 * blocked in a call a sanitizer does not interrupt could hold one back. Call ns_signals_block()
 * just before creating a thread (the thread inherits the mask) and ns_signals_restore() after. */
void ns_signals_block(sigset_t *saved);
void ns_signals_restore(const sigset_t *saved);

/* Monotonic milliseconds, for timeouts and expiry (never wall time). */
uint64_t ns_now_ms(void);

/* Monotonic nanoseconds, for measuring how long something took. */
uint64_t ns_now_ns(void);

/* Wall-clock milliseconds since the epoch, for log stamps only. */
int64_t ns_wall_ms(void);

#endif
