/* Shared between cmd.c and cmd_codec.c only. */
#ifndef NS_CMD_INT_H
#define NS_CMD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ns_cmd.h"

/* Sets extFields[key] = value, taking ownership of both heap strings (key is freed when an
 * entry with that key already exists, whose value is then replaced in place). Sets has_ext. */
void ns__cmd_ext_put_owned(ns_cmd_t *cmd, char *key, char *value);

/* Sets extFields[key] = value from byte ranges, copying both into one allocation (the decoders'
 * case: one malloc per field). Sets has_ext. */
void ns__cmd_ext_put_copy(ns_cmd_t *cmd, const char *key, size_t klen, const char *value,
                          size_t vlen);

/* Frees one entry's strings. */
void ns__cmd_ext_free_entry(ns_ext_field_t *e);

/* The two JSON header decoders behind ns_cmd_decode(), exposed for the differential fuzzer.
 * _fast: the common subset without allocating a tree; 0 (decoded into *out, which the caller
 * initialised) or 1 (not in the subset: *out holds partial results, free it and use _cjson).
 * _cjson: the complete decoder; 0 or NS_EPROTO, as ns_cmd_decode() documents. */
int ns__cmd_decode_json_fast(const uint8_t *hdr, size_t len, ns_cmd_t *out);
int ns__cmd_decode_json_cjson(const uint8_t *hdr, size_t len, ns_cmd_t *out);

#endif
