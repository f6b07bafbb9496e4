/* Placeholder until the KV module lands (kv.c replaces this file): a store that holds nothing. */
#include "ns_kv.h"

#include <stdlib.h>

#include "ns_common.h"

struct ns_kv {
    int unused;
};

ns_kv_t *ns_kv_new(const char *path)
{
    (void)path;
    return ns_xcalloc(1, sizeof(ns_kv_t));
}

int ns_kv_load(ns_kv_t *kv, char *err, size_t errlen)
{
    (void)kv;
    (void)err;
    (void)errlen;
    return 0;
}

void ns_kv_log_all(ns_kv_t *kv)
{
    (void)kv;
}

void ns_kv_free(ns_kv_t *kv)
{
    free(kv);
}
