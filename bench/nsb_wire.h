/* nsbench wire helpers: just enough of the RocketMQ remoting protocol to drive a NameServer
 * (frames, a JSON request header writer, a response header scanner, RegisterBrokerBody in JSON
 * and zlib form) and a latency histogram. Self-contained on purpose: the benchmark must not
 * depend on the server's own codec, which it is meant to measure. No function here allocates
 * except nsb_buf_* and nsb_body_*. */
#ifndef NSB_WIRE_H
#define NSB_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Request codes and response codes used by the benchmark (docs/protocol.md, section Request
 * codes). */
enum {
    NSB_REQ_REGISTER_BROKER = 103,
    NSB_REQ_GET_ROUTEINFO_BY_TOPIC = 105,
};

/* Width of the space-padded "opaque" value in prebuilt headers: "opaque":123 followed by
 * spaces up to this many characters, so a frame can be reused by patching digits in place.
 * 11 characters hold any int32. JSON allows whitespace before the following comma. */
#define NSB_OPAQUE_FIELD_WIDTH 11

/* A growable byte buffer; the only allocating type here. */
typedef struct nsb_buf {
    uint8_t *data; /* owned */
    size_t len;    /* bytes used */
    size_t cap;    /* bytes allocated */
} nsb_buf_t;

/* Makes room for n more bytes after len (len unchanged); aborts when out of memory. */
void nsb_buf_reserve(nsb_buf_t *b, size_t n);
/* Appends n bytes, growing the buffer; aborts the process when out of memory. */
void nsb_buf_append(nsb_buf_t *b, const void *p, size_t n);
/* Appends a NUL-free C string. */
void nsb_buf_puts(nsb_buf_t *b, const char *s);
/* Appends a decimal integer. */
void nsb_buf_putu(nsb_buf_t *b, uint64_t v);
/* Frees the storage; the buffer may be reused afterwards (it is empty). */
void nsb_buf_free(nsb_buf_t *b);

/* Writes the decimal digits of v to out (no terminator); returns the number written (<= 20). */
size_t nsb_utoa(char *out, uint64_t v);

/* Big-endian 32-bit helpers. */
uint32_t nsb_be32(const uint8_t *p);
void nsb_put_be32(uint8_t *p, uint32_t v);

/* Writes a complete GET_ROUTEINFO_BY_TOPIC request frame (JSON header, no body) for `topic`
 * into out, which must hold at least 200 + topic_len bytes. Returns the frame length in
 * bytes (including the 4-byte length prefix). */
size_t nsb_write_route_request(uint8_t *out, const char *topic, size_t topic_len, int32_t opaque,
                               int version);

/* The names a simulated broker uses. */
typedef struct nsb_broker_id {
    const char *cluster;       /* clusterName */
    const char *name;          /* brokerName */
    const char *addr;          /* brokerAddr, ip:port (never contacted) */
    const char *ha_addr;       /* haServerAddr */
    long heartbeat_timeout_ms; /* > 0: sent as heartbeatTimeoutMillis, the silence after which
                                  the NameServer drops the broker (absent: its 120 s) */
} nsb_broker_id_t;

/* Builds a REGISTER_BROKER frame (header + body) into *out (cleared first). The header's
 * opaque is a space-padded field; *opaque_off receives its offset in the frame so
 * nsb_patch_opaque() can rewrite it. body/body_len is the body exactly as sent (compressed or
 * not); its masked CRC32 goes into bodyCrc32 and `compressed` into the header. */
void nsb_build_register_frame(nsb_buf_t *out, size_t *opaque_off, const nsb_broker_id_t *id,
                              const uint8_t *body, size_t body_len, int compressed, int version);

/* Rewrites the padded opaque field at frame+off. */
void nsb_patch_opaque(uint8_t *frame, size_t off, int32_t opaque);

/* Builds the JSON RegisterBrokerBody (5.x shape, docs/protocol.md, section Body shapes) for the
 * given topics with DataVersion counter `counter` and timestamp `ts_ms` into *out (cleared
 * first). */
void nsb_body_json(nsb_buf_t *out, const char *const *topics, size_t ntopics, uint64_t counter,
                   uint64_t ts_ms);

/* Builds the compressed RegisterBrokerBody (zlib stream of the binary layout in
 * docs/protocol.md, section Compressed register body, with the 5.x mapping section when
 * version >= 413) into *out (cleared first). Returns 0, or -1 when zlib fails. */
int nsb_body_zlib(nsb_buf_t *out, const char *const *topics, size_t ntopics, uint64_t counter,
                  uint64_t ts_ms, int version);

/* The CRC32 a broker puts in bodyCrc32: zlib crc32 over the bytes sent, & 0x7FFFFFFF. */
uint32_t nsb_body_crc(const uint8_t *body, size_t len);

/* Reads `code` and `opaque` from a response header. type is the serialize type byte
 * (0 JSON, 1 ROCKETMQ binary). Returns 0 on success, -1 when the header is malformed or has
 * no opaque. A missing code reads as 0. Keys are matched only at the top level. */
int nsb_scan_header(int type, const uint8_t *hdr, size_t len, int *code, int32_t *opaque);

/* Checks the shape of a successful route body: it names brokerDatas, and brokerAddrs keys are
 * quoted strings when version >= 401 (standard JSON) or bare numbers otherwise. Returns 1 when
 * it matches, 0 when not. */
int nsb_check_route_body(const uint8_t *body, size_t len, int version);

/* Log-linear latency histogram in nanoseconds: 64 sub-buckets per power of two, so any
 * reported percentile is within 1.6 % of the true value. */
#define NSB_HIST_SUB_BITS 6
#define NSB_HIST_BUCKETS (128 + 57 * 64)
typedef struct nsb_hist {
    uint64_t count;                     /* samples */
    uint64_t max;                       /* largest sample, ns */
    uint64_t sum;                       /* sum of samples, ns */
    uint64_t buckets[NSB_HIST_BUCKETS]; /* counts */
} nsb_hist_t;

/* Records one sample (ns). */
void nsb_hist_add(nsb_hist_t *h, uint64_t ns);
/* Adds every sample of src to dst. */
void nsb_hist_merge(nsb_hist_t *dst, const nsb_hist_t *src);
/* Returns the value (ns) at quantile q in [0,1]: the upper bound of the bucket that holds it,
 * capped at max. 0 when empty. */
uint64_t nsb_hist_quantile(const nsb_hist_t *h, double q);

#endif
