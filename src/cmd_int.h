/* Shared between cmd.c and cmd_codec.c only. */
#ifndef NS_CMD_INT_H
#define NS_CMD_INT_H

#include "ns_cmd.h"

/* Sets extFields[key] = value, taking ownership of both heap strings (key is freed when an
 * entry with that key already exists, whose value is then replaced in place). Sets has_ext. */
void ns__cmd_ext_put_owned(ns_cmd_t *cmd, char *key, char *value);

#endif
