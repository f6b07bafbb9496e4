/* Fuzzes the controller's replicated bytes: a Raft log entry (ns__ctl_event_decode) and a
 * snapshot (ns__ctl_state_restore), both of which come from disk or from a peer. The first
 * input byte picks which; for a snapshot the trailing CRC is set to match (the fuzzer could not
 * find it otherwise), so mutations reach the tables.
 * Invariants: a decoder answers 0 or a refusal, reads nothing past the input (exact-size copy
 * for ASan) and leaves the state untouched on refusal; an accepted entry re-encodes to bytes
 * that decode to the same entry, and applies to a state without failing; an accepted snapshot
 * re-encodes to the same bytes. */
#include <string.h>

#include "fuzz.h"
#include "ctl/ctl_int.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_crc32.h"
#include "ns_log.h"

static void fuzz_event(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, data, size);
    ns_ctl_event_t ev;
    int rc = ns__ctl_event_decode(copy, size, &ev);
    FUZZ_CHECK(rc == 0 || rc == NS_EPROTO);
    if (rc == 0) {
        ns_buf_t a = NS_BUF_INIT, b = NS_BUF_INIT;
        ns__ctl_event_encode(&ev, &a);
        ns_ctl_event_t again;
        FUZZ_CHECK(ns__ctl_event_decode(a.data, a.len, &again) == 0);
        ns__ctl_event_encode(&again, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        ns_ctl_state_t st;
        ns__ctl_state_init(&st);
        ns__ctl_state_apply(&st, &ev); /* on an empty state */
        ns__ctl_state_apply(&st, &ev); /* and on what it made */
        ns__ctl_state_clear(&st);
        ns__ctl_event_free(&again);
        ns__ctl_event_free(&ev);
        ns_buf_free(&a);
        ns_buf_free(&b);
    }
    free(copy);
}

static void fuzz_snapshot(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    FUZZ_CHECK(copy != NULL);
    memcpy(copy, data, size);
    if (size >= 16)
        ns_write_be32(copy + size - 4, ns_crc32(0, copy, size - 4));
    ns_ctl_state_t st;
    ns__ctl_state_init(&st);
    int rc = ns__ctl_state_restore(&st, copy, size);
    FUZZ_CHECK(rc == 0 || rc == NS_EPROTO || rc == NS_ECRC);
    if (rc == 0) {
        ns_buf_t a = NS_BUF_INIT;
        ns__ctl_state_snapshot(&st, &a);
        ns_ctl_state_t back;
        ns__ctl_state_init(&back);
        FUZZ_CHECK(ns__ctl_state_restore(&back, a.data, a.len) == 0);
        ns_buf_t b = NS_BUF_INIT;
        ns__ctl_state_snapshot(&back, &b);
        FUZZ_CHECK(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        ns__ctl_state_clear(&back);
        ns_buf_free(&a);
        ns_buf_free(&b);
    } else {
        FUZZ_CHECK(st.replicas.count == 0 && st.sync.count == 0);
    }
    ns__ctl_state_clear(&st);
    free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_log_set_stdout(false);
    if (size == 0)
        return 0;
    if (data[0] & 1)
        fuzz_snapshot(data + 1, size - 1);
    else
        fuzz_event(data + 1, size - 1);
    return 0;
}
