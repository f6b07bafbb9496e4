/* The header fuzzers' shared check: decode, re-encode, decode again, compare. */
#ifndef NS_FUZZ_ROUNDTRIP_H
#define NS_FUZZ_ROUNDTRIP_H

#include <string.h>

#include "fuzz.h"
#include "ns_buf.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_frame.h"

static int streq_or_null(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Treats the input as a header of `type`; when it decodes, its re-encoding must decode to the
 * same code, opaque, flag, version, remark and extFields. */
static void roundtrip(const uint8_t *data, size_t size, uint8_t type)
{
    uint8_t *hdr = malloc(size ? size : 1);
    FUZZ_CHECK(hdr != NULL);
    memcpy(hdr, data, size);
    ns_frame_t f = {
        .serialize_type = type, .header = hdr, .header_len = size, .frame_len = size + 8};
    ns_cmd_t a;
    if (ns_cmd_decode(&f, &a) != 0) {
        FUZZ_CHECK(a.remark == NULL && a.ext == NULL && a.ext_count == 0);
        free(hdr);
        return;
    }
    FUZZ_CHECK(a.serialize_type == type && a.body == NULL && a.body_len == 0);
    FUZZ_CHECK(a.ext_count <= NS_CMD_MAX_EXT_FIELDS);

    ns_buf_t out = NS_BUF_INIT;
    FUZZ_CHECK(ns_cmd_encode_header(&a, &out) == 0);
    ns_frame_t g;
    FUZZ_CHECK(ns_frame_decode(out.data, out.len, SIZE_MAX, &g) == NS_FRAME_OK);
    FUZZ_CHECK(g.frame_len == out.len && g.body_len == 0 && g.serialize_type == type);
    ns_cmd_t b;
    FUZZ_CHECK(ns_cmd_decode(&g, &b) == 0);
    FUZZ_CHECK(a.code == b.code && a.opaque == b.opaque && a.flag == b.flag);
    FUZZ_CHECK(a.version == b.version);
    FUZZ_CHECK(streq_or_null(a.remark, b.remark));
    FUZZ_CHECK(a.has_ext == b.has_ext || (type == NS_SERIALIZE_ROCKETMQ && a.ext_count == 0));
    FUZZ_CHECK(a.ext_count == b.ext_count);
    for (size_t i = 0; i < a.ext_count; i++) {
        FUZZ_CHECK(strcmp(a.ext[i].key, b.ext[i].key) == 0);
        FUZZ_CHECK(strcmp(a.ext[i].value, b.ext[i].value) == 0);
        FUZZ_CHECK(strcmp(ns_cmd_ext_get(&b, a.ext[i].key), a.ext[i].value) == 0);
    }
    ns_cmd_free(&b);
    ns_cmd_free(&a);
    ns_buf_free(&out);
    free(hdr);
}

#endif
