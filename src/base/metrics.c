/* Reading metrics: sums and snapshots of every thread's shard, and the Prometheus text
 * exposition of the registered series (ns_metrics.h). */
#include "ns_metrics.h"

#include <stdio.h>
#include <string.h>

#include "ns_common.h"

/* The same bounds as the text Prometheus shows (le="..."). */
static const char *const bucket_le[NS_METRICS_BUCKETS] = {
    "0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005", "0.001",
    "0.0025",  "0.005",    "0.01",    "0.025",  "0.05",    "0.1",    "0.25",
    "0.5",     "1",        "2.5",     "5",      "10"};

typedef struct row {
    const char *name;
    const char *labels;
    const char *help;
} row_t;

#define NS__ROW(id, name, labels, help) {name, labels, help},
static const row_t counter_rows[NS_M_COUNT] = {NS_METRIC_COUNTERS(NS__ROW)};
static const row_t hist_rows[NS_H_COUNT] = {NS_METRIC_HISTOGRAMS(NS__ROW)};

static uint64_t load(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}

uint64_t ns_metrics_counter(ns_metric_id_t id)
{
    uint64_t sum = 0;
    for (ns_metrics_shard_t *s = ns__metrics_shards(); s != NULL; s = s->next)
        sum += load(&s->counters[id]);
    return sum;
}

static void merge_unknown(ns_metrics_snapshot_t *out, int32_t code, uint64_t count)
{
    for (size_t i = 0; i < out->unknown_n; i++) {
        if (out->unknown_code[i] == code) {
            out->unknown_count[i] += count;
            return;
        }
    }
    if (out->unknown_n < NS_METRICS_UNKNOWN_MERGED) {
        out->unknown_code[out->unknown_n] = code;
        out->unknown_count[out->unknown_n++] = count;
    }
}

void ns_metrics_snapshot(ns_metrics_snapshot_t *out)
{
    memset(out, 0, sizeof(*out));
    for (ns_metrics_shard_t *s = ns__metrics_shards(); s != NULL; s = s->next) {
        for (size_t i = 0; i < NS_M_COUNT; i++)
            out->counters[i] += load(&s->counters[i]);
        for (size_t i = 0; i < NS_METRICS_REQ_SLOTS; i++)
            for (size_t r = 0; r < NS_METRICS_RESP_SLOTS; r++)
                out->requests[i][r] += load(&s->requests[i][r]);
        for (size_t r = 0; r < NS_METRICS_RESP_SLOTS; r++)
            out->replies[r] += load(&s->replies[r]);
        for (size_t h = 0; h < NS_H_COUNT; h++) {
            for (size_t b = 0; b <= NS_METRICS_BUCKETS; b++)
                out->hist[h][b] += load(&s->hist[h][b]);
            out->hist_sum_ns[h] += load(&s->hist_sum_ns[h]);
        }
        for (size_t i = 0; i < NS_METRICS_UNKNOWN_CODES; i++) {
            uint64_t n = __atomic_load_n(&s->unknown_count[i], __ATOMIC_ACQUIRE);
            if (n > 0)
                merge_unknown(out, __atomic_load_n(&s->unknown_code[i], __ATOMIC_RELAXED), n);
        }
    }
}

/* ---- exposition ------------------------------------------------------------------------- */

void ns_metrics_escape_label(ns_buf_t *out, const char *value)
{
    for (const char *p = value; *p; p++) {
        if (*p == '\\')
            ns_buf_append_str(out, "\\\\");
        else if (*p == '"')
            ns_buf_append_str(out, "\\\"");
        else if (*p == '\n')
            ns_buf_append_str(out, "\\n");
        else
            ns_buf_append_char(out, *p);
    }
}

void ns_metrics_write_family(ns_buf_t *out, const char *name, const char *type, const char *help)
{
    ns_buf_appendf(out, "# HELP %s ", name);
    /* HELP text escapes only backslash and line feed. */
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            ns_buf_append_str(out, "\\\\");
        else if (*p == '\n')
            ns_buf_append_str(out, "\\n");
        else
            ns_buf_append_char(out, *p);
    }
    ns_buf_appendf(out, "\n# TYPE %s %s\n", name, type);
}

static void sample_name(ns_buf_t *out, const char *name, const char *labels)
{
    ns_buf_append_str(out, name);
    if (labels[0] != '\0')
        ns_buf_appendf(out, "{%s}", labels);
    ns_buf_append_char(out, ' ');
}

void ns_metrics_write_sample(ns_buf_t *out, const char *name, const char *labels, double value)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%.15g\n", value);
}

void ns_metrics_write_sample_u64(ns_buf_t *out, const char *name, const char *labels, uint64_t v)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%llu\n", (unsigned long long)v);
}

/* Nanoseconds as exact decimal seconds. */
static void write_sample_seconds(ns_buf_t *out, const char *name, const char *labels, uint64_t ns)
{
    sample_name(out, name, labels);
    ns_buf_appendf(out, "%llu.%09llu\n", (unsigned long long)(ns / 1000000000u),
                   (unsigned long long)(ns % 1000000000u));
}

static bool starts_family(const row_t *rows, size_t i)
{
    return i == 0 || strcmp(rows[i - 1].name, rows[i].name) != 0;
}

static void write_counters(const ns_metrics_snapshot_t *snap, ns_buf_t *out)
{
    for (size_t i = 0; i < NS_M_COUNT; i++) {
        const row_t *r = &counter_rows[i];
        if (starts_family(counter_rows, i))
            ns_metrics_write_family(out, r->name, "counter", r->help);
        ns_metrics_write_sample_u64(out, r->name, r->labels, snap->counters[i]);
    }
}

static void write_histograms(const ns_metrics_snapshot_t *snap, ns_buf_t *out)
{
    char name[128], labels[256];
    for (size_t h = 0; h < NS_H_COUNT; h++) {
        const row_t *r = &hist_rows[h];
        if (starts_family(hist_rows, h))
            ns_metrics_write_family(out, r->name, "histogram", r->help);
        const char *sep = r->labels[0] ? "," : "";
        snprintf(name, sizeof(name), "%s_bucket", r->name);
        uint64_t cum = 0;
        for (size_t b = 0; b < NS_METRICS_BUCKETS; b++) {
            cum += snap->hist[h][b];
            snprintf(labels, sizeof(labels), "%s%sle=\"%s\"", r->labels, sep, bucket_le[b]);
            ns_metrics_write_sample_u64(out, name, labels, cum);
        }
        cum += snap->hist[h][NS_METRICS_BUCKETS];
        snprintf(labels, sizeof(labels), "%s%sle=\"+Inf\"", r->labels, sep);
        ns_metrics_write_sample_u64(out, name, labels, cum);
        snprintf(name, sizeof(name), "%s_sum", r->name);
        write_sample_seconds(out, name, r->labels, snap->hist_sum_ns[h]);
        snprintf(name, sizeof(name), "%s_count", r->name);
        ns_metrics_write_sample_u64(out, name, r->labels, cum);
    }
}

static void write_requests(const ns_metrics_snapshot_t *snap, ns_metrics_slot_name_fn *slot_name,
                           ns_buf_t *out)
{
    static const char *const name = "mqnamesrv_requests_total";
    ns_metrics_write_family(out, name, "counter",
                            "Requests served, by request code and response code (unknown request "
                            "codes are one series; response_code=\"other\" never happens).");
    ns_buf_t labels = NS_BUF_INIT;
    for (unsigned i = 0; i < NS_METRICS_REQ_SLOTS; i++) {
        int32_t code = 0;
        const char *rname = i == 0 ? "UNKNOWN" : slot_name(i, &code);
        if (rname == NULL)
            break;
        for (unsigned r = 0; r < NS_METRICS_RESP_SLOTS; r++) {
            uint64_t v = snap->requests[i][r];
            if (v == 0)
                continue; /* a series appears with its first request */
            labels.len = 0;
            if (i == 0)
                ns_buf_append_str(&labels, "request_code=\"unknown\",request_name=\"");
            else
                ns_buf_appendf(&labels, "request_code=\"%d\",request_name=\"", (int)code);
            ns_metrics_escape_label(&labels, rname);
            if (r == NS_METRICS_RESP_SLOTS - 1)
                ns_buf_append_str(&labels, "\",response_code=\"other\"");
            else
                ns_buf_appendf(&labels, "\",response_code=\"%d\"", (int)ns_metrics_resp_codes[r]);
            ns_metrics_write_sample_u64(out, name, ns_buf_cstr(&labels), v);
        }
    }
    ns_buf_free(&labels);
}

void ns_metrics_write(const ns_metrics_snapshot_t *snap, ns_metrics_slot_name_fn *slot_name,
                      ns_buf_t *out)
{
    write_requests(snap, slot_name, out);
    write_histograms(snap, out);
    write_counters(snap, out);
}
