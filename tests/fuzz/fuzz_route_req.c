/* Differential fuzzing of the route-read fast path's header reader against the complete
 * decoder: the first byte picks the encoding (even: JSON, odd: ROCKETMQ), the rest is the
 * header. Wherever ns_route_req_scan accepts, ns_cmd_decode must decode the same request: code,
 * opaque, flag, version, language, no remark, and extFields = the topic plus, when sent,
 * acceptStandardJsonOnly with the same Boolean.parseBoolean value. */
#include <string.h>

#include "fuzz.h"
#include "ns_cmd.h"
#include "ns_cmd_codec.h"
#include "ns_common.h"
#include "ns_route_req.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    size_t len = size - 1;
    uint8_t *hdr = malloc(len ? len : 1); /* exactly the header: ASan sees any overread */
    FUZZ_CHECK(hdr != NULL);
    memcpy(hdr, data + 1, len);
    ns_frame_t f = {.serialize_type = (data[0] & 1) ? NS_SERIALIZE_ROCKETMQ : NS_SERIALIZE_JSON,
                    .header = hdr,
                    .header_len = len};
    ns_route_req_t rr;
    if (ns_route_req_scan(&f, &rr) == 0) {
        ns_cmd_t cmd;
        FUZZ_CHECK(ns_cmd_decode(&f, &cmd) == 0);
        FUZZ_CHECK(cmd.code == rr.code && cmd.opaque == rr.opaque && cmd.flag == rr.flag);
        FUZZ_CHECK(cmd.version == rr.version && cmd.language == rr.language);
        FUZZ_CHECK(cmd.remark == NULL);
        if (rr.opaque_text != NULL) { /* the reply copies it: what ns_put_int writes */
            char digits[24];
            size_t n = (size_t)(ns_put_int(digits, rr.opaque) - digits);
            FUZZ_CHECK(rr.opaque_text >= hdr && rr.opaque_text + rr.opaque_text_len <= hdr + len);
            FUZZ_CHECK(n == rr.opaque_text_len && memcmp(digits, rr.opaque_text, n) == 0);
        }
        FUZZ_CHECK(rr.topic_len > 0 && rr.topic_len <= NS_ROUTE_REQ_TOPIC_MAX);
        FUZZ_CHECK(rr.topic >= hdr && rr.topic + rr.topic_len <= hdr + len);
        const char *topic = ns_cmd_ext_get(&cmd, "topic");
        FUZZ_CHECK(topic != NULL && strlen(topic) == rr.topic_len &&
                   memcmp(topic, rr.topic, rr.topic_len) == 0);
        size_t fields = 1;
        static const char *const names[] = {"acceptStandardJsonOnly", "AccessKey", "SecurityToken",
                                            "Signature"};
        const ns_route_req_text_t *views[] = {&rr.accept_text, &rr.access_key, &rr.security_token,
                                              &rr.signature};
        for (size_t i = 0; i < 4; i++) { /* each view is the decoder's value, or both absent */
            const char *value = ns_cmd_ext_get(&cmd, names[i]);
            FUZZ_CHECK((value != NULL) == (views[i]->p != NULL));
            if (value != NULL) {
                FUZZ_CHECK(strlen(value) == views[i]->len &&
                           memcmp(value, views[i]->p, views[i]->len) == 0);
                fields++;
            }
        }
        FUZZ_CHECK(cmd.ext_count == fields);
        FUZZ_CHECK(ns_cmd_ext_bool(&cmd, "acceptStandardJsonOnly") == rr.accept_standard_json);
        ns_cmd_free(&cmd);
    }
    free(hdr);
    return 0;
}
