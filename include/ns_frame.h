/* RocketMQ remoting framing: pure functions over bytes, no I/O, no allocation.
 *
 * Wire layout (all integers big-endian; RocketMQ NettyDecoder / RemotingCommand):
 *   [u32 total][u32 type << 24 | header_len][header][body]
 * `total` counts every byte after itself, so total = 4 + header_len + body_len. */
#ifndef NS_FRAME_H
#define NS_FRAME_H

#include <stddef.h>
#include <stdint.h>

/* Java's LengthFieldBasedFrameDecoder refuses frames whose total + 4 exceeds 16 MiB. */
#define NS_FRAME_DEFAULT_MAX (16u * 1024u * 1024u)

/* Serialize types carried in the top byte of the header word. */
#define NS_SERIALIZE_JSON 0
#define NS_SERIALIZE_ROCKETMQ 1

typedef enum ns_frame_status {
    NS_FRAME_OK = 0,        /* one whole frame decoded into *out */
    NS_FRAME_NEED_MORE = 1, /* a prefix of a frame: read more bytes and call again */
    NS_FRAME_EBADLEN = -1,  /* total < 4 or total + 4 > max_frame: close the peer */
    NS_FRAME_EBADTYPE = -2, /* serialize type neither JSON nor ROCKETMQ: close the peer */
    NS_FRAME_EBADHDR = -3,  /* header_len > total - 4: close the peer */
} ns_frame_status_t;

/* One decoded frame. Pointers are views into the caller's buffer. */
typedef struct ns_frame {
    uint8_t serialize_type; /* NS_SERIALIZE_JSON or NS_SERIALIZE_ROCKETMQ */
    const uint8_t *header;  /* header bytes (not NUL-terminated) */
    size_t header_len;      /* bytes at header */
    const uint8_t *body;    /* body bytes; meaningful only when body_len > 0 */
    size_t body_len;        /* bytes at body; 0 means "no body" (Java null) */
    size_t frame_len;       /* bytes this frame occupies in the buffer, length prefix included */
} ns_frame_t;

/* Decodes one frame at buf[0..len). max_frame bounds total + 4 (the whole frame as Java counts
 * it). NS_FRAME_OK: *out holds views into buf, valid while buf is unchanged.
 * NS_FRAME_NEED_MORE: only part of a frame so far (*out untouched). Negative: the stream can
 * never be valid; the caller closes the connection. Reads nothing past buf + len. */
ns_frame_status_t ns_frame_decode(const uint8_t *buf, size_t len, size_t max_frame,
                                  ns_frame_t *out);

/* Writes the 8-byte frame prefix for a header of header_len bytes and a body of body_len
 * bytes into out[0..8). The caller guarantees header_len < 2^24 and that the total fits. */
void ns_frame_write_prefix(uint8_t out[8], uint8_t serialize_type, size_t header_len,
                           size_t body_len);

/* Returns a static name for a status ("bad frame length", ...). */
const char *ns_frame_strerror(ns_frame_status_t status);

#endif
