/* Fuzzes the frame decoder: decodes frames back to back from the input with a small max, as
 * conn.c does with its read buffer, checking every view and length; whole frames also go
 * through the header decoder. */
#include <string.h>

#include "fuzz.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_frame.h"

/* Small, so the fuzzer reaches the too-long path with short inputs. */
#define FUZZ_MAX_FRAME 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    FUZZ_CHECK(buf != NULL);
    memcpy(buf, data, size);
    size_t off = 0;
    for (;;) {
        const uint8_t *p = buf + off;
        size_t len = size - off;
        ns_frame_t f;
        memset(&f, 0xA5, sizeof(f));
        ns_frame_status_t st = ns_frame_decode(p, len, FUZZ_MAX_FRAME, &f);
        if (st != NS_FRAME_OK) {
            FUZZ_CHECK(st == NS_FRAME_NEED_MORE || st == NS_FRAME_EBADLEN ||
                       st == NS_FRAME_EBADTYPE || st == NS_FRAME_EBADHDR);
            FUZZ_CHECK(ns_frame_strerror(st) != NULL);
            if (st == NS_FRAME_NEED_MORE)
                FUZZ_CHECK(
                    len < 4 || len < 8 ||
                    len - 4 < ((size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]));
            break;
        }
        FUZZ_CHECK(f.frame_len >= 8 && f.frame_len <= len && f.frame_len <= FUZZ_MAX_FRAME);
        FUZZ_CHECK(f.serialize_type == NS_SERIALIZE_JSON ||
                   f.serialize_type == NS_SERIALIZE_ROCKETMQ);
        FUZZ_CHECK(f.header == p + 8);
        FUZZ_CHECK(f.header_len <= f.frame_len - 8);
        FUZZ_CHECK(f.body == f.header + f.header_len);
        FUZZ_CHECK(f.body + f.body_len == p + f.frame_len);
        /* Any strict prefix of a whole frame is only "need more" (or already known bad: the
         * length and header word are checked as soon as they are in). */
        ns_frame_t g;
        for (size_t cut = 0; cut < f.frame_len && cut < 16; cut++)
            FUZZ_CHECK(ns_frame_decode(p, cut, FUZZ_MAX_FRAME, &g) == NS_FRAME_NEED_MORE);
        FUZZ_CHECK(ns_frame_decode(p, f.frame_len - 1, FUZZ_MAX_FRAME, &g) == NS_FRAME_NEED_MORE);

        ns_cmd_t cmd;
        if (ns_cmd_decode(&f, &cmd) == 0) {
            FUZZ_CHECK(cmd.body_len == f.body_len);
            FUZZ_CHECK(cmd.serialize_type == f.serialize_type);
            FUZZ_CHECK(cmd.ext_count <= NS_CMD_MAX_EXT_FIELDS);
            ns_cmd_free(&cmd);
        }
        off += f.frame_len; /* >= 8: progress */
    }
    free(buf);
    return 0;
}
