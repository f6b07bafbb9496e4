/* Deferred logging for the route table: lines are queued while its lock is held and written
 * once it is released, so that a slow log sink never lengthens a write-lock hold. */
#include "route_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ns__route_logq_add(logq_t *q, ns_log_level_t level, const char *fmt, ...)
{
    if (ns_log_get_level() < level)
        return;
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
    ns_buf_append_char(&q->buf, (char)level);
    ns_buf_append(&q->buf, line, len);
    ns_buf_append_char(&q->buf, '\0');
}

void ns__route_logq_flush(logq_t *q)
{
    size_t i = 0;
    while (i < q->buf.len) {
        ns_log_level_t level = (ns_log_level_t)q->buf.data[i];
        const char *text = (const char *)q->buf.data + i + 1;
        ns_log(level, "%s", text);
        i += 1 + strlen(text) + 1;
    }
    ns_buf_free(&q->buf);
}
