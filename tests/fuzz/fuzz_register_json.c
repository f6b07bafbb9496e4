/* Fuzzes the JSON forms of REGISTER_BROKER bodies: the input is decoded as a RegisterBrokerBody
 * (version >= 37) and as a bare TopicConfigSerializeWrapper (version < 37). */
#include <string.h>

#include "fuzz.h"
#include "ns_common.h"
#include "ns_json.h"
#include "ns_json_tree.h"
#include "ns_register_body.h"
#include "ns_utf8.h"
#include "codec/codec_int.h"

/* Names are Java text (ns_utf8.h): valid UTF-8, U+0000 only as C0 80. */
static void check_java_text(const char *s)
{
    size_t len = strlen(s);
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += ns_java_text_next((const uint8_t *)s + i, len - i, &cp);
        FUZZ_CHECK(cp != NS_UTF8_BAD);
    }
}

/* Checks what every successful decode promises: names present and unique, sane counts. */
static void check_body(const ns_register_body_t *b, int32_t version)
{
    FUZZ_CHECK(b->topic_count <= NS_REGISTER_MAX_TOPICS);
    FUZZ_CHECK(b->topic_count == 0 || b->topics != NULL);
    for (size_t i = 0; i < b->topic_count; i++) {
        FUZZ_CHECK(b->topics[i].topic_name != NULL);
        check_java_text(b->topics[i].topic_name);
        FUZZ_CHECK(b->topics[i].filter_type == NS_FILTER_SINGLE_TAG ||
                   b->topics[i].filter_type == NS_FILTER_MULTI_TAG);
        if (b->topic_count <= 256)
            for (size_t j = 0; j < i; j++)
                FUZZ_CHECK(strcmp(b->topics[i].topic_name, b->topics[j].topic_name) != 0);
    }
    for (size_t i = 0; i < b->filter_server_count; i++)
        FUZZ_CHECK(b->filter_servers[i] != NULL);
    for (size_t i = 0; i < b->mapping_count; i++) {
        FUZZ_CHECK(b->mappings[i].topic != NULL && b->mappings[i].bname != NULL);
        FUZZ_CHECK(b->mappings[i].curr_id_count == 0 || b->mappings[i].curr_id_map != NULL);
    }
    if (version < NS_VERSION_V3_0_11)
        FUZZ_CHECK(!b->has_filter_servers && b->mapping_count == 0);
}

/* The literal reader of compact TopicConfigs must decode exactly what the member-by-member
 * reader decodes: the same answer, the same topics. */
static void check_same_without_compact(const uint8_t *data, size_t size, int32_t version, int rc,
                                       const ns_register_body_t *b)
{
    ns_register_body_t g;
    char err[128];
    ns__register_body_set_compact(false);
    int grc = ns_register_body_decode(data, size, version, false, &g, err, sizeof(err));
    ns__register_body_set_compact(true);
    FUZZ_CHECK(grc == rc);
    FUZZ_CHECK(g.topic_count == b->topic_count);
    for (size_t i = 0; i < g.topic_count; i++) {
        const ns_topic_config_t *x = &g.topics[i], *y = &b->topics[i];
        FUZZ_CHECK(strcmp(x->topic_name, y->topic_name) == 0);
        FUZZ_CHECK(x->read_queue_nums == y->read_queue_nums &&
                   x->write_queue_nums == y->write_queue_nums && x->perm == y->perm &&
                   x->topic_sys_flag == y->topic_sys_flag && x->order == y->order &&
                   x->filter_type == y->filter_type);
    }
    ns_register_body_free(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int32_t versions[] = {NS_VERSION_V5_0_0 + 66, NS_VERSION_V3_0_11 - 1};
    for (size_t v = 0; v < NS_ARRAY_SIZE(versions); v++) {
        ns_register_body_t b;
        char err[128];
        int rc = ns_register_body_decode(data, size, versions[v], false, &b, err, sizeof(err));
        FUZZ_CHECK(rc == 0 || rc == NS_EJSON || rc == NS_ETOOBIG);
        FUZZ_CHECK(strlen(err) < sizeof(err));
        check_same_without_compact(data, size, versions[v], rc, &b);
        if (rc == 0) {
            check_body(&b, versions[v]);
            /* Differential: the decoder's own reader accepts no text the tree parser refuses. */
            if (size > 0) {
                cJSON *tree = ns_json_parse_lenient(data, size);
                FUZZ_CHECK(tree != NULL && cJSON_IsObject(tree));
                cJSON_Delete(tree);
            }
        } else
            FUZZ_CHECK(b.topics == NULL && b.topic_count == 0 && err[0] != '\0');
        ns_register_body_free(&b);
    }
    return 0;
}
