/* The value helpers of the REGISTER_BROKER body types (ns_register_body.h): DataVersion
 * comparison and JSON, TopicQueueMappingInfo copy and free. */
#include <stdlib.h>
#include <string.h>

#include "ns_common.h"
#include "ns_json.h"
#include "ns_register_body.h"

bool ns_data_version_equal(const ns_data_version_t *a, const ns_data_version_t *b)
{
    return a->counter == b->counter && a->state_version == b->state_version &&
           a->timestamp == b->timestamp;
}

void ns_data_version_write(const ns_data_version_t *dv, ns_buf_t *out)
{
    ns_jsonw_t w;
    ns_jsonw_init(&w, out, NS_JSON_DEFAULT);
    ns_jsonw_object_begin(&w);
    ns_jsonw_kv_long(&w, "counter", dv->counter);
    ns_jsonw_kv_long(&w, "stateVersion", dv->state_version);
    ns_jsonw_kv_long(&w, "timestamp", dv->timestamp);
    ns_jsonw_object_end(&w);
}

void ns_mapping_info_copy(ns_mapping_info_t *dst, const ns_mapping_info_t *src)
{
    *dst = *src;
    dst->topic = src->topic ? ns_xstrdup(src->topic) : NULL;
    dst->bname = src->bname ? ns_xstrdup(src->bname) : NULL;
    dst->scope = src->scope ? ns_xstrdup(src->scope) : NULL;
    dst->curr_id_map = NULL;
    if (src->curr_id_count > 0) {
        dst->curr_id_map = ns_xmalloc(src->curr_id_count * sizeof(*src->curr_id_map));
        memcpy(dst->curr_id_map, src->curr_id_map, src->curr_id_count * sizeof(*src->curr_id_map));
    }
}

void ns_mapping_info_free(ns_mapping_info_t *info)
{
    if (info == NULL)
        return;
    free(info->topic);
    free(info->bname);
    free(info->scope);
    free(info->curr_id_map);
    memset(info, 0, sizeof(*info));
}
