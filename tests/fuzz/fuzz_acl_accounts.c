/* Fuzzes the plain_acl.yml parser (libyaml underneath) and the address patterns it compiles:
 * any bytes either parse into a set whose every account is well formed, or are refused with
 * NS_EINVAL / NS_ETOOBIG and a reason; nothing crashes, hangs, leaks or reads past the input.
 * The set found is then exercised: look-ups and white-list matches of a few peers. */
#include <string.h>

#include "fuzz.h"
#include "ns_acl_accounts.h"
#include "ns_common.h"
#include "ns_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_stdout(false);             /* duplicate-key warnings */
    char *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees any over-read */
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, data, size);

    ns_acl_accounts_t *set = NULL;
    char err[256] = "";
    int rc = ns_acl_accounts_parse(copy, size, &set, err, sizeof(err));
    FUZZ_CHECK(rc == 0 || rc == NS_EINVAL || rc == NS_ETOOBIG);
    FUZZ_CHECK((rc == 0) == (set != NULL));
    FUZZ_CHECK(rc == 0 || err[0] != '\0');
    if (set != NULL) {
        static const char *const peers[] = {"127.0.0.1:1", "10.10.103.5:9", "::1:80",
                                            "192.168.1.20:5", "?"};
        for (size_t i = 0; i < set->count; i++) {
            const ns_acl_account_t *a = &set->accounts[i];
            FUZZ_CHECK(a->access_key != NULL && a->secret_key != NULL);
            FUZZ_CHECK(strlen(a->access_key) > 6 && strlen(a->secret_key) > 6);
            FUZZ_CHECK(ns_acl_accounts_find(set, a->access_key) == a);
            FUZZ_CHECK(i == 0 || strcmp(set->accounts[i - 1].access_key, a->access_key) < 0);
            for (size_t p = 0; p < NS_ARRAY_SIZE(peers); p++)
                (void)ns_acl_addr_match(&a->white, peers[p]);
        }
        for (size_t p = 0; p < NS_ARRAY_SIZE(peers); p++)
            (void)ns_acl_accounts_global_white(set, peers[p]);
        /* A key no account can have (6 characters at most), with or without accounts. */
        FUZZ_CHECK(ns_acl_accounts_find(set, "absent") == NULL);
        FUZZ_CHECK(set->count == 0 || set->accounts_stated);
        FUZZ_CHECK(set->global_white_count == 0 || set->global_white_stated);
        ns_acl_accounts_free(set);
    }
    free(copy);
    return 0;
}
