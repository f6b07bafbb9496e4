/* A remoting command (RocketMQ RemotingCommand): the decoded form of a request or a response.
 *
 * Plain data: tests build these directly. The strings it points to are owned by the command
 * unless a comment says otherwise; free everything with ns_cmd_free(). */
#ifndef NS_CMD_H
#define NS_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ns_buf.h"

/* flag bits (RemotingCommand RPC_TYPE / RPC_ONEWAY). */
#define NS_FLAG_RESPONSE 0x1 /* set on every response */
#define NS_FLAG_ONEWAY 0x2   /* the requester expects no response at all */

/* LanguageCode values: the binary header carries the byte, JSON the name. */
enum {
    NS_LANG_JAVA = 0,
    NS_LANG_CPP = 1,
    NS_LANG_DOTNET = 2,
    NS_LANG_PYTHON = 3,
    NS_LANG_DELPHI = 4,
    NS_LANG_ERLANG = 5,
    NS_LANG_RUBY = 6,
    NS_LANG_OTHER = 7,
    NS_LANG_HTTP = 8,
    NS_LANG_GO = 9,
    NS_LANG_PHP = 10,
    NS_LANG_OMS = 11,
    NS_LANG_RUST = 12,
    NS_LANG_NODE_JS = 13,
    NS_LANG_UNKNOWN = 255, /* a name or byte Java would map to null; harmless */
};

/* The version our responses carry: MQVersion V5_3_3, what a Java 5.3.3 server sends. */
#define NS_SERVER_VERSION 479

/* One extFields entry. */
typedef struct ns_ext_field {
    char *key;         /* owned, NUL-terminated */
    char *value;       /* NUL-terminated; never NULL (null values are dropped on decode) */
    bool value_in_key; /* value lives in key's allocation (decoded requests: one malloc per
                          field); otherwise value is owned on its own */
} ns_ext_field_t;

typedef struct ns_cmd {
    int32_t code;           /* request code, or result code in a response */
    uint8_t language;       /* NS_LANG_* */
    int32_t version;        /* sender's MQVersion ordinal (int16 on the binary wire) */
    int32_t opaque;         /* request id, copied into the response */
    int32_t flag;           /* NS_FLAG_* bits */
    char *remark;           /* owned; NULL = absent (omitted on output) */
    bool has_ext;           /* output: write "extFields" ({} when ext_count == 0) */
    ns_ext_field_t *ext;    /* owned array of ext_count entries, in insertion order */
    size_t ext_count;       /* entries in use */
    size_t ext_cap;         /* entries allocated */
    const uint8_t *body;    /* body bytes (a view: into the frame for requests, into body_blob
                               for responses); NULL/0 = no body */
    size_t body_len;        /* bytes at body */
    ns_blob_t *body_blob;   /* owned reference keeping `body` alive, or NULL for a view */
    uint8_t serialize_type; /* NS_SERIALIZE_* the command arrived in / is to be sent in */
} ns_cmd_t;

/* Initialises an empty command (all zero, no remark, no ext, no body). */
void ns_cmd_init(ns_cmd_t *cmd);

/* Frees everything the command owns and leaves it initialised. NULL is a no-op. */
void ns_cmd_free(ns_cmd_t *cmd);

/* Returns the value of extFields[key], or NULL when absent. The pointer is valid until the
 * command is modified or freed. */
const char *ns_cmd_ext_get(const ns_cmd_t *cmd, const char *key);

/* Sets extFields[key] = value (both copied), replacing an existing entry; sets has_ext. */
void ns_cmd_ext_set(ns_cmd_t *cmd, const char *key, const char *value);
/* Same with a formatted value. */
void ns_cmd_ext_setf(ns_cmd_t *cmd, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Removes extFields[key], keeping the order of the rest (has_ext is unchanged). Returns whether
 * an entry was removed. */
bool ns_cmd_ext_del(ns_cmd_t *cmd, const char *key);

/* Replaces the remark with a formatted copy (NULL fmt clears it). */
void ns_cmd_set_remark(ns_cmd_t *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes `blob` the body, taking ownership of the caller's reference. */
void ns_cmd_set_body_blob(ns_cmd_t *cmd, ns_blob_t *blob);
/* Makes a copy of the bytes the body. */
void ns_cmd_set_body_copy(ns_cmd_t *cmd, const void *data, size_t len);
/* Takes the bytes of `buf` as the body (buf is left empty). */
void ns_cmd_set_body_buf(ns_cmd_t *cmd, ns_buf_t *buf);

/* Java-style typed views of an ext field (RocketMQ's custom-header decoding rules):
 * Boolean.parseBoolean: true only for case-insensitive "true", else false; absent -> false.
 * Long.parseLong: an optional sign and decimal digits that fit int64; anything else (or
 * absent) returns false and leaves *out untouched. */
bool ns_cmd_ext_bool(const ns_cmd_t *cmd, const char *key);
bool ns_cmd_ext_int64(const ns_cmd_t *cmd, const char *key, int64_t *out);
/* Integer.parseInt: as above, within int32. */
bool ns_cmd_ext_int32(const ns_cmd_t *cmd, const char *key, int32_t *out);

#endif
