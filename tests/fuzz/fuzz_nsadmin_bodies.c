/* Fuzzes nsadmin's reply-body decoders (tools/nsadmin/model.c) and what prints their result:
 * the first byte picks the decoder, the rest is the body. Whatever decodes must print in
 * every form without a fault, and the compact JSON of a route must decode again to the same
 * text (nsadmin's --json output is valid for its own reader). The controller's bodies: a
 * BrokerReplicasInfo (1006) printed as getSyncStateSet does, its sets in Java's HashMap order
 * (each name once); an ElectMasterResponseBody (1002) with the header of a success. */
#include <string.h>

#include "fjson.h"
#include "model.h"
#include "tables.h"
#include "fuzz.h"

/* The text form of a table of properties has one line per property and no control byte but
 * its line feeds: a server cannot reach the terminal with an escape sequence or a line of its
 * own (issue 23, A.6). */
static void properties_checks(const nsa_kvlist_t *kv)
{
    ns_buf_t text = NS_BUF_INIT;
    nsa_table_properties(&text, kv);
    size_t lines = 0;
    for (size_t i = 0; i < text.len; i++) {
        FUZZ_CHECK(text.data[i] >= 0x20 || text.data[i] == '\n');
        FUZZ_CHECK(text.data[i] != 0x7F);
        lines += text.data[i] == '\n';
    }
    FUZZ_CHECK(lines == kv->len);
    ns_buf_free(&text);
}

static void route_checks(const nsa_route_t *r)
{
    ns_buf_t pretty = NS_BUF_INIT, compact = NS_BUF_INIT, again = NS_BUF_INIT, table = NS_BUF_INIT;
    fj_t w;
    fj_init(&w, &pretty, true);
    fj_route(&w, r);
    fj_init(&w, &compact, false);
    fj_route(&w, r);
    nsa_table_route_list(&table, r);
    nsa_route_t back;
    char err[200];
    FUZZ_CHECK(nsa_decode_route(compact.data, compact.len, &back, err, sizeof(err)) == 0);
    fj_init(&w, &again, false);
    fj_route(&w, &back);
    FUZZ_CHECK(again.len == compact.len && memcmp(again.data, compact.data, again.len) == 0);
    nsa_route_free(&back);
    ns_buf_free(&pretty);
    ns_buf_free(&compact);
    ns_buf_free(&again);
    ns_buf_free(&table);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    char err[256];
    ns_buf_t out = NS_BUF_INIT;
    switch (data[0] % 9) {
    case 0: {
        nsa_cluster_info_t ci;
        if (nsa_decode_cluster_info(body, len, &ci, err, sizeof(err)) == 0) {
            for (size_t i = 0; i < ci.nbd; i++) {
                fj_t w;
                fj_init(&w, &out, i % 2 == 0);
                fj_broker_data(&w, &ci.bds[i]);
                for (size_t a = 0; a < ci.bds[i].naddrs; a++)
                    nsa_table_cluster_row(&out, ci.bds[i].cluster, ci.bds[i].broker_name,
                                          ci.bds[i].addrs[a].id, ci.bds[i].addrs[a].addr, NULL, 0);
            }
            nsa_cluster_info_free(&ci);
        }
        break;
    }
    case 1: {
        nsa_route_t r;
        if (nsa_decode_route(body, len, &r, err, sizeof(err)) == 0) {
            route_checks(&r);
            nsa_route_free(&r);
        }
        break;
    }
    case 2:
    case 3: {
        nsa_strlist_t l;
        int rc = data[0] % 9 == 2 ? nsa_decode_topic_list(body, len, &l, err, sizeof(err))
                                  : nsa_decode_group_list(body, len, &l, err, sizeof(err));
        if (rc == 0) {
            for (size_t i = 0; i < l.len; i++)
                nsa_table_topic_cluster_row(&out, NULL, l.items[i], l.items[i]);
            nsa_strlist_sort(&l);
            nsa_strlist_free(&l);
        }
        break;
    }
    case 4: {
        /* a broker's runtime table, printed as clusterList and -m rows */
        nsa_kvlist_t kv;
        if (nsa_decode_kv_table(body, len, &kv, err, sizeof(err)) == 0) {
            nsa_table_cluster_row(&out, "C", "b", 0, "a:1", &kv, 1700000000000);
            nsa_table_cluster_more_row(&out, "C", "b", &kv);
            nsa_table_properties(&out, &kv);
            properties_checks(&kv);
            nsa_kvlist_free(&kv);
        }
        break;
    }
    case 5: {
        nsa_broker_data_t bd;
        if (nsa_decode_member_group(body, len, &bd, err, sizeof(err)) == 0)
            nsa_broker_data_free(&bd);
        break;
    }
    case 6: {
        nsa_kvlist_t kv;
        if (nsa_decode_properties(body, len, &kv, err, sizeof(err)) == 0) {
            nsa_table_properties(&out, &kv);
            properties_checks(&kv);
            nsa_kvlist_free(&kv);
        }
        break;
    }
    case 7: {
        nsa_sync_state_data_t d;
        if (nsa_decode_sync_state_data(body, len, &d, err, sizeof(err)) == 0) {
            for (size_t i = 0; i < d.nsets; i++) {
                FUZZ_CHECK(d.sets[i].broker_name != NULL);
                for (size_t k = 0; k < i; k++)
                    FUZZ_CHECK(strcmp(d.sets[k].broker_name, d.sets[i].broker_name) != 0);
                nsa_table_sync_state(&out, &d.sets[i]);
            }
            nsa_sync_state_data_free(&d);
        } else {
            FUZZ_CHECK(err[0] != '\0' && d.nsets == 0 && d.sets == NULL);
        }
        break;
    }
    default: {
        ns_cmd_t reply;
        ns_cmd_init(&reply);
        ns_cmd_ext_set(&reply, "masterAddress", "127.0.0.1:10911");
        ns_cmd_ext_set(&reply, "masterBrokerId", "1");
        ns_cmd_ext_set(&reply, "masterEpoch", "2");
        ns_cmd_ext_set(&reply, "syncStateSetEpoch", "3");
        ns_cmd_set_body_copy(&reply, body, len);
        nsa_elect_t e;
        if (nsa_decode_elect_reply(&reply, &e, err, sizeof(err)) == 0) {
            nsa_table_elect(&out, "C", "b", &e);
            fj_t w;
            fj_init(&w, &out, false);
            if (e.has_group)
                fj_broker_data(&w, &e.group);
            nsa_elect_free(&e);
        } else {
            FUZZ_CHECK(err[0] != '\0' && e.master_address == NULL && !e.has_group);
        }
        ns_cmd_free(&reply);
        break;
    }
    }
    ns_buf_free(&out);
    return 0;
}
