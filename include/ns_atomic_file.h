/* Replacing a file atomically: the one helper behind every file the server writes (kvConfig.json
 * in kv.c, the 318 properties file in config.c, the route snapshot in snapshot.c).
 *
 * The new content goes to a temporary file in the same directory, is fsynced, and is renamed
 * over the path; then the directory is fsynced so that the rename survives a power cut. A
 * reader therefore sees the old file or the new one, never a mix; a failure at any step leaves
 * the old file as it was (only a failed directory fsync comes after the rename) and removes
 * the temporary file.
 *
 * Threads: any; the calls share nothing but the one-shot fault injection below (atomics). */
#ifndef NS_ATOMIC_FILE_H
#define NS_ATOMIC_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns_buf.h"

/* The steps of a write, in order (the numbers are stable: tests name them). */
typedef enum ns_afile_step {
    NS_AFILE_STEP_NONE = 0,
    NS_AFILE_STEP_MKDIR = 1,   /* creating missing parent directories (make_dirs) */
    NS_AFILE_STEP_OPEN = 2,    /* creating the temporary file */
    NS_AFILE_STEP_WRITE = 3,   /* writing it (an injected fault fires after half the bytes) */
    NS_AFILE_STEP_FSYNC = 4,   /* fsync of the temporary file */
    NS_AFILE_STEP_BACKUP = 5,  /* the caller's before_rename hook (kv.c: <path>.bak) */
    NS_AFILE_STEP_RENAME = 6,  /* temporary file -> path */
    NS_AFILE_STEP_DIRSYNC = 7, /* fsync of the directory, after the rename */
} ns_afile_step_t;

typedef struct ns_afile_opts {
    bool make_dirs;  /* create missing parent directories first (mkdir -p, mode 0755) */
    bool pid_suffix; /* temporary file <path>.tmp.<pid> instead of <path>.tmp (two processes
                        writing one path never share a temporary file) */
    unsigned mode;   /* permissions of a new file (before umask); 0 = 0666 */
    /* Called after the temporary file is complete and before the rename (NULL: none); a
     * negative errno it returns fails the write at NS_AFILE_STEP_BACKUP. */
    int (*before_rename)(const char *path, void *arg);
    void *arg;
} ns_afile_opts_t;

/* Replaces path with data[0..len). opts NULL = all defaults. Returns 0 or -errno; *failed_step
 * (may be NULL) gets the step that failed (NS_AFILE_STEP_NONE on success) and *renamed (may be
 * NULL) whether path holds the new content, which is true on success and after a failed
 * directory fsync. */
int ns_afile_write(const char *path, const void *data, size_t len, const ns_afile_opts_t *opts,
                   ns_afile_step_t *failed_step, bool *renamed);

/* "mkdir", "open temp file", "write", "fsync", "backup", "rename", "fsync directory". */
const char *ns_afile_step_name(ns_afile_step_t step);

/* ---- the file primitives every writer shares ---------------------------------------------
 * The one copy of each (this module, kv.c, log.c, traffic_log.c). Inline and allocation-free
 * because the logger uses them, and the allocator logs through the logger: a call from log.c
 * into atomic_file.c (which allocates) would close a circle of files. */

/* Writes all len bytes to fd, retrying short writes and EINTR. Returns 0 or -errno; *written
 * (may be NULL) gets the bytes that made it, which a caller that must end a cut line needs. */
static inline int ns_afile_write_counted(int fd, const void *data, size_t len, size_t *written)
{
    const char *p = data;
    size_t done = 0;
    int rc = 0;
    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -errno : -EIO;
            break;
        }
        done += (size_t)n;
    }
    if (written != NULL)
        *written = done;
    return rc;
}

/* Writes all len bytes to fd, retrying short writes and EINTR. Returns 0 or -errno. */
static inline int ns_afile_write_all(int fd, const void *data, size_t len)
{
    return ns_afile_write_counted(fd, data, len, NULL);
}

/* Creates the directory path[0..len) and its missing parents (mkdir -p, mode 0755). Returns 0
 * or -errno: -ENOTDIR when a part is not a directory, -ENAMETOOLONG from PATH_MAX bytes on. */
static inline int ns__afile_make_dirs_n(const char *path, size_t len)
{
    char dir[PATH_MAX];
    struct stat st;
    if (len == 0)
        return -ENOENT;
    if (len >= sizeof(dir))
        return -ENAMETOOLONG;
    memcpy(dir, path, len);
    dir[len] = '\0';
    if (stat(dir, &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
    for (size_t i = 1; i <= len; i++) {
        if (i < len && dir[i] != '/')
            continue;
        dir[i] = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -errno;
        if (i < len)
            dir[i] = '/';
    }
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Creates dir and its missing parents (mkdir -p). Returns 0 or -errno (-ENOTDIR when a part
 * is not a directory). */
static inline int ns_afile_make_dirs(const char *dir)
{
    return ns__afile_make_dirs_n(dir, strlen(dir));
}

/* Opens path for appending (created with mode when missing), its missing parent directories
 * made first: the log files. Returns the descriptor or -errno. */
static inline int ns_afile_open_append(const char *path, unsigned mode)
{
    const char *slash = strrchr(path, '/');
    if (slash != NULL && slash != path) {
        int rc = ns__afile_make_dirs_n(path, (size_t)(slash - path));
        if (rc < 0)
            return rc;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, (mode_t)mode);
    return fd < 0 ? -errno : fd;
}

/* Appends the whole file at path to *out (reading as many times as it takes). The reader every
 * file an operator names is loaded with (the -c file, tls.config.file, the KV store, the route
 * snapshot, the ACL account file, certificates and keys).
 *
 * The path is opened with O_NONBLOCK, so that a FIFO with no writer cannot block the open, and
 * must then be a regular file (fstat): a FIFO, a device (/dev/zero), a socket or a directory
 * is refused before any byte is read, and so is a file larger than max. A file that holds
 * still is read into one allocation of its size (no copy left behind in freed memory: the ACL
 * file holds secrets); one that grows while it is read stops at max. Blocking is left only to
 * the file system itself (a hung network mount): callers on an I/O loop must not use this.
 *
 * Returns 0, -errno (-ENOENT for a missing file, -EISDIR for a directory), NS_ENOTREG for any
 * other file that is not regular, or NS_ETOOBIG for a file above max bytes (from its size, or
 * once more than max bytes were read); what was read stays in *out either way (the caller
 * frees it). */
int ns_afile_read(const char *path, size_t max, ns_buf_t *out);

/* A malloc'd copy of the directory part of path ("." when there is none, "/" for /x). */
char *ns_afile_dir_of(const char *path);

/* Makes the next write (any caller) fail at `step` as if its system call had set errno to
 * `err` (positive). One shot: cleared when it fires; NS_AFILE_STEP_NONE disarms. Tests only. */
void ns__afile_fail_next(ns_afile_step_t step, int err);

/* Returns -err when the armed failure is for `step` (and disarms it), else 0. For callers'
 * own steps (kv.c's backup copy). */
int ns__afile_injected(ns_afile_step_t step);

#endif
