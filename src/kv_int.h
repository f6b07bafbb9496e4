/* KV store internals shared with its tests and fuzzer: a fault-injection hook for the file
 * write, the parser without the file, the serialiser without the write. */
#ifndef NS_KV_INT_H
#define NS_KV_INT_H

#include <stddef.h>

#include "ns_buf.h"
#include "ns_kv.h"

/* The steps of an atomic write, in order. */
enum {
    NS__KV_STEP_NONE = 0,
    NS__KV_STEP_MKDIR = 1,   /* creating missing parent directories */
    NS__KV_STEP_OPEN = 2,    /* creating <path>.tmp */
    NS__KV_STEP_WRITE = 3,   /* writing it (after half the bytes, to leave a partial file) */
    NS__KV_STEP_FSYNC = 4,   /* fsync of <path>.tmp */
    NS__KV_STEP_BACKUP = 5,  /* <path> -> <path>.bak */
    NS__KV_STEP_RENAME = 6,  /* <path>.tmp -> <path> */
    NS__KV_STEP_DIRSYNC = 7, /* fsync of the directory, after the rename */
};

/* Makes the next atomic write fail at `step` as if the system call had set errno to `err`
 * (positive). One shot: cleared when it fires. NS__KV_STEP_NONE disarms. For tests only. */
void ns__kv_fail_next(int step, int err);

/* Calls hook(arg) at the start of every file write, with write_lock held and the table lock
 * not held (NULL removes it). For tests that check what may run while the disk is busy. */
void ns__kv_set_persist_hook(void (*hook)(void *), void *arg);

/* ns_kv_load's parser over data[0..len) (need not be NUL-terminated), for the fuzzer: same
 * results, without the file. */
int ns__kv_load_text(ns_kv_t *kv, const char *data, size_t len, char *err, size_t errlen);

/* Appends the file content the store would write now. Takes the mutex. */
void ns__kv_serialize(ns_kv_t *kv, ns_buf_t *out);

#endif
