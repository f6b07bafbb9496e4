/* register_body.c internals for its tests and fuzzers. */
#ifndef NS_REGISTER_BODY_INT_H
#define NS_REGISTER_BODY_INT_H

#include <stdbool.h>

/* Switches the literal reader of compact TopicConfig objects on (the default) or off, so that
 * tests can check that it decodes exactly what the member-by-member reader decodes. Not
 * thread-safe: for tests and fuzzers only. */
void ns__register_body_set_compact(bool on);

#endif
