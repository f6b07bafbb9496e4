/* KV store internals shared with its tests: a fault-injection hook for the file write. */
#ifndef NS_KV_INT_H
#define NS_KV_INT_H

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

#endif
