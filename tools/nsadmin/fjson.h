/* JSON output: a writer for both of nsadmin's forms, from the same calls:
 *   pretty   fastjson 1.2's PrettyFormat, what mqadmin prints (JSON.toJSONString(obj, true)):
 *            tab indentation, one member per line, "key":value without blanks, empty
 *            containers as {} and [], Long map keys bare (0:"addr");
 *   compact  --json output: standard JSON on one line (map keys quoted).
 * Strings are escaped as fastjson's default mode does (ns_json.h). And the RocketMQ objects
 * written as fastjson writes their Java beans: properties in alphabetical order, null ones
 * left out. */
#ifndef NSA_FJSON_H
#define NSA_FJSON_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "model.h"
#include "ns_buf.h"

#define FJ_MAX_DEPTH 80 /* above NS_JSON_MAX_DEPTH: whatever parsed can be written */

typedef struct fj {
    ns_buf_t *out;
    bool pretty;
    int depth;
    bool after_key;
    bool has_members[FJ_MAX_DEPTH];
} fj_t;

void fj_init(fj_t *w, ns_buf_t *out, bool pretty);
void fj_obj_begin(fj_t *w);
void fj_obj_end(fj_t *w);
void fj_arr_begin(fj_t *w);
void fj_arr_end(fj_t *w);
void fj_key(fj_t *w, const char *key);
/* A Long/Integer map key: bare when pretty (fastjson), quoted when compact. */
void fj_key_long(fj_t *w, int64_t key);
void fj_str(fj_t *w, const char *s); /* NULL writes null */
void fj_int(fj_t *w, int64_t v);
void fj_double(fj_t *w, double v);
void fj_bool(fj_t *w, bool v);
void fj_null(fj_t *w);
/* Shorthands: "key":value. */
void fj_kv_str(fj_t *w, const char *key, const char *s);
void fj_kv_int(fj_t *w, const char *key, int64_t v);
void fj_kv_bool(fj_t *w, const char *key, bool v);

/* Any parsed JSON, objects as beans (members sorted by name) except maps whose keys are all
 * integers (sorted by value, written as Long keys). */
void fj_cjson(fj_t *w, const cJSON *item);

/* BrokerData, QueueData, TopicRouteData (mqadmin topicRoute prints the last one pretty). */
void fj_broker_data(fj_t *w, const nsa_broker_data_t *bd);
void fj_queue_data(fj_t *w, const nsa_queue_data_t *qd);
void fj_route(fj_t *w, const nsa_route_t *r);
/* A string list as an array, a key/value list as an object of strings. */
void fj_strlist(fj_t *w, const nsa_strlist_t *l);
void fj_kvlist(fj_t *w, const nsa_kvlist_t *l);

#endif
