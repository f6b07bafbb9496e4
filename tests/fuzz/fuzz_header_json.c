/* Fuzzes the JSON header decoder and encoder: the fast path and cJSON must agree wherever the
 * fast path accepts, and every decodable header must survive re-encoding (roundtrip.h). */
#include "codec/codec_int.h"
#include "ns_json_tree.h"
#include "roundtrip.h"

static void same_cmd(const ns_cmd_t *a, const ns_cmd_t *b)
{
    FUZZ_CHECK(a->code == b->code && a->flag == b->flag && a->opaque == b->opaque);
    FUZZ_CHECK(a->version == b->version && a->language == b->language);
    FUZZ_CHECK(streq_or_null(a->remark, b->remark));
    FUZZ_CHECK(a->has_ext == b->has_ext && a->ext_count == b->ext_count);
    for (size_t i = 0; i < a->ext_count; i++) {
        FUZZ_CHECK(strcmp(a->ext[i].key, b->ext[i].key) == 0);
        FUZZ_CHECK(strcmp(a->ext[i].value, b->ext[i].value) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *hdr = malloc(size ? size : 1);
    FUZZ_CHECK(hdr != NULL);
    memcpy(hdr, data, size);
    ns_cmd_t fast, slow;
    ns_cmd_init(&fast);
    ns_cmd_init(&slow);
    if (ns__cmd_decode_json_fast(hdr, size, &fast) == 0) {
        FUZZ_CHECK(ns__cmd_decode_json_cjson(hdr, size, &slow) == 0);
        same_cmd(&fast, &slow);
    }
    ns_cmd_free(&fast);
    ns_cmd_free(&slow);
    free(hdr);

    roundtrip(data, size, NS_SERIALIZE_JSON);
    return 0;
}
