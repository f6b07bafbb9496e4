#include "nsb_report.h"

#include <inttypes.h>
#include <stdio.h>

void nsb_codes_add(nsb_codes_t *codes, int code)
{
    for (int i = 0; i < codes->n; i++) {
        if (codes->of[i].code == code) {
            codes->of[i].n++;
            return;
        }
    }
    if (codes->n < NSB_CODES_MAX) {
        codes->of[codes->n].code = code;
        codes->of[codes->n++].n = 1;
    }
}

void nsb_codes_merge(nsb_codes_t *dst, const nsb_codes_t *src)
{
    for (int j = 0; j < src->n; j++) {
        int found = 0;
        for (int i = 0; i < dst->n && !found; i++) {
            if (dst->of[i].code == src->of[j].code) {
                dst->of[i].n += src->of[j].n;
                found = 1;
            }
        }
        if (!found && dst->n < NSB_CODES_MAX)
            dst->of[dst->n++] = src->of[j];
    }
}

double nsb_us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

void nsb_print_result(const nsb_result_t *r)
{
    const nsb_hist_t *h = r->hist;
    char codes[256] = "";
    size_t off = 0;
    for (int i = 0; i < r->codes->n && off < sizeof(codes) - 32; i++)
        off += (size_t)snprintf(codes + off, sizeof(codes) - off, "%s%d:%" PRIu64, i ? "," : "",
                                r->codes->of[i].code, r->codes->of[i].n);
    printf("RESULT target=%s workload=%s class=%s conns=%ld inflight=%d secs=%.2f count=%" PRIu64
           " rate=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f mean_us=%.1f"
           " errors=%" PRIu64 " bad_body=%" PRIu64 " codes=%s%s\n",
           r->target, r->workload, r->cls, r->conns, r->inflight, r->secs, h->count,
           r->secs > 0 ? (double)h->count / r->secs : 0, nsb_us(nsb_hist_quantile(h, 0.50)),
           nsb_us(nsb_hist_quantile(h, 0.99)), nsb_us(nsb_hist_quantile(h, 0.999)), nsb_us(h->max),
           h->count ? nsb_us(h->sum / h->count) : 0.0, r->errors, r->bad_body, off ? codes : "-",
           r->extra);
}
