/* RocketMQ remoting framing (see ns_frame.h). */
#include "ns_frame.h"

#include "ns_buf.h"

ns_frame_status_t ns_frame_decode(const uint8_t *buf, size_t len, size_t max_frame, ns_frame_t *out)
{
    if (len < 4)
        return NS_FRAME_NEED_MORE;
    uint32_t total = ns_read_be32(buf);
    /* Refuse a bad length before buffering its bytes: no waiting for 4 GiB. total counts the
     * header word, so less than 4 can never be a frame; Java counts the prefix in the max. */
    if (total < 4 || (uint64_t)total + 4 > (uint64_t)max_frame)
        return NS_FRAME_EBADLEN;
    if (len < 8)
        return NS_FRAME_NEED_MORE;
    uint32_t word = ns_read_be32(buf + 4);
    uint8_t type = (uint8_t)(word >> 24);
    size_t header_len = word & 0x00FFFFFFu;
    if (type != NS_SERIALIZE_JSON && type != NS_SERIALIZE_ROCKETMQ)
        return NS_FRAME_EBADTYPE;
    if (header_len > (size_t)total - 4)
        return NS_FRAME_EBADHDR;
    if (len - 4 < total)
        return NS_FRAME_NEED_MORE;
    out->serialize_type = type;
    out->header = buf + 8;
    out->header_len = header_len;
    out->body = buf + 8 + header_len;
    out->body_len = (size_t)total - 4 - header_len;
    out->frame_len = (size_t)total + 4;
    return NS_FRAME_OK;
}

void ns_frame_write_prefix(uint8_t out[8], uint8_t serialize_type, size_t header_len,
                           size_t body_len)
{
    ns_write_be32(out, (uint32_t)(4 + header_len + body_len));
    ns_write_be32(out + 4, ((uint32_t)serialize_type << 24) | ((uint32_t)header_len & 0x00FFFFFFu));
}

const char *ns_frame_strerror(ns_frame_status_t status)
{
    switch (status) {
    case NS_FRAME_OK:
        return "ok";
    case NS_FRAME_NEED_MORE:
        return "incomplete frame";
    case NS_FRAME_EBADLEN:
        return "bad frame length";
    case NS_FRAME_EBADTYPE:
        return "unknown serialize type";
    case NS_FRAME_EBADHDR:
        return "bad header length";
    }
    return "unknown frame status";
}
