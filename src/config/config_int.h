/* Internals of the config module (src/config/) shared with its tests and fuzzers: the KV
 * store's fault-injection hook for the file write, the parser without the file, the serialiser
 * without the write. */
#ifndef NS_CONFIG_INT_H
#define NS_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "ns_atomic_file.h"
#include "ns_buf.h"
#include "ns_kv.h"

/* The steps of an atomic write, in order: ns_atomic_file.h's (kvConfig.json is written with
 * ns_afile_write, the .bak made by its before_rename hook). */
enum {
    NS__KV_STEP_NONE = NS_AFILE_STEP_NONE,
    NS__KV_STEP_MKDIR = NS_AFILE_STEP_MKDIR,
    NS__KV_STEP_OPEN = NS_AFILE_STEP_OPEN,
    NS__KV_STEP_WRITE = NS_AFILE_STEP_WRITE,
    NS__KV_STEP_FSYNC = NS_AFILE_STEP_FSYNC,
    NS__KV_STEP_BACKUP = NS_AFILE_STEP_BACKUP,
    NS__KV_STEP_RENAME = NS_AFILE_STEP_RENAME,
    NS__KV_STEP_DIRSYNC = NS_AFILE_STEP_DIRSYNC,
};

/* Makes the next atomic write (of any file: ns__afile_fail_next) fail at `step` as if the system
 * call had set errno to `err` (positive). One shot: cleared when it fires. NS__KV_STEP_NONE
 * disarms. For tests only. */
void ns__kv_fail_next(int step, int err);

/* Calls hook(arg) at the start of every file write, with write_lock held and the table lock
 * not held (NULL removes it). For tests that check what may run while the disk is busy. */
void ns__kv_set_persist_hook(void (*hook)(void *), void *arg);

/* Writes one serialized store to kvConfig.json (atomically, with the .bak): 0 or -errno, with
 * *renamed (the file holds the new content, even after a failed directory fsync) and *step
 * (the step that failed). The fault tests fail exactly this function's system calls (fiu's
 * enable_stack_by_name), so it is never inlined. */
int ns__kv_write_file(ns_kv_t *kv, const ns_buf_t *buf, bool *renamed, ns_afile_step_t *step);

/* Writes the 318 config file (the previous content to <path>.bak first, as Java does, then the
 * new one atomically): 0 or -errno. Named by the fault tests, as ns__kv_write_file is. */
int ns__config_write_file(const char *path, const ns_buf_t *body);

/* ns_kv_load's parser over data[0..len) (need not be NUL-terminated), for the fuzzer: same
 * results, without the file. */
int ns__kv_load_text(ns_kv_t *kv, const char *data, size_t len, char *err, size_t errlen);

/* Appends the file content the store would write now. Takes the mutex. */
void ns__kv_serialize(ns_kv_t *kv, ns_buf_t *out);

#endif
