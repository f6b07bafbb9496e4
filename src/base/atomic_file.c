/* Atomic file replacement (ns_atomic_file.h): temporary file, fsync, rename, directory fsync. */
#include "ns_atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ns_common.h"

static atomic_int fail_step;
static atomic_int fail_err;

void ns__afile_fail_next(ns_afile_step_t step, int err)
{
    atomic_store(&fail_err, err);
    atomic_store(&fail_step, (int)step);
}

int ns__afile_injected(ns_afile_step_t step)
{
    int expected = (int)step;
    if (step != NS_AFILE_STEP_NONE && atomic_compare_exchange_strong(&fail_step, &expected, 0))
        return -atomic_load(&fail_err);
    return 0;
}

const char *ns_afile_step_name(ns_afile_step_t step)
{
    static const char *const names[] = {"",      "mkdir",  "open temp file", "write",
                                        "fsync", "backup", "rename",         "fsync directory"};
    return (size_t)step < NS_ARRAY_SIZE(names) ? names[step] : "?";
}

char *ns_afile_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return ns_xstrdup(".");
    if (slash == path)
        return ns_xstrdup("/");
    return ns_xstrndup(path, (size_t)(slash - path));
}

static char *tmp_name(const char *path, bool pid_suffix)
{
    size_t n = strlen(path) + 32;
    char *tmp = ns_xmalloc(n);
    if (pid_suffix)
        snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    else
        snprintf(tmp, n, "%s.tmp", path);
    return tmp;
}

int ns_afile_write(const char *path, const void *data, size_t len, const ns_afile_opts_t *opts,
                   ns_afile_step_t *failed_step, bool *renamed)
{
    static const ns_afile_opts_t defaults = {0};
    const ns_afile_opts_t *o = opts ? opts : &defaults;
    ns_afile_step_t step_store, *step = failed_step ? failed_step : &step_store;
    bool renamed_store, *done = renamed ? renamed : &renamed_store;
    char *dir = ns_afile_dir_of(path);
    char *tmp = tmp_name(path, o->pid_suffix);
    int fd = -1;
    bool tmp_made = false;
    int rc;
    *done = false;

    *step = NS_AFILE_STEP_MKDIR;
    if (o->make_dirs &&
        ((rc = ns__afile_injected(*step)) != 0 || (rc = ns_afile_make_dirs(dir)) != 0))
        goto out;

    *step = NS_AFILE_STEP_OPEN;
    if ((rc = ns__afile_injected(*step)) != 0)
        goto out;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, o->mode ? (mode_t)o->mode : 0666);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    tmp_made = true;

    *step = NS_AFILE_STEP_WRITE;
    if ((rc = ns__afile_injected(*step)) != 0) {
        (void)ns_afile_write_all(fd, data, len / 2); /* the fault leaves a partial file */
        goto out;
    }
    if ((rc = ns_afile_write_all(fd, data, len)) != 0)
        goto out;

    *step = NS_AFILE_STEP_FSYNC;
    if ((rc = ns__afile_injected(*step)) != 0)
        goto out;
    if (fsync(fd) != 0) {
        rc = -errno;
        goto out;
    }
    rc = close(fd) != 0 ? -errno : 0;
    fd = -1;
    if (rc != 0)
        goto out;

    *step = NS_AFILE_STEP_BACKUP;
    if ((rc = ns__afile_injected(*step)) != 0)
        goto out;
    if (o->before_rename != NULL && (rc = o->before_rename(path, o->arg)) != 0)
        goto out;

    *step = NS_AFILE_STEP_RENAME;
    if ((rc = ns__afile_injected(*step)) != 0)
        goto out;
    if (rename(tmp, path) != 0) {
        rc = -errno;
        goto out;
    }
    tmp_made = false;
    *done = true;

    /* Without this the rename itself may not survive a power cut. File systems that cannot
     * fsync a directory say EINVAL; there is nothing more to do on them. */
    *step = NS_AFILE_STEP_DIRSYNC;
    if ((rc = ns__afile_injected(*step)) != 0)
        goto out;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        rc = -errno;
        goto out;
    }
    if (fsync(dfd) != 0 && errno != EINVAL)
        rc = -errno;
    close(dfd);

out:
    if (rc == 0)
        *step = NS_AFILE_STEP_NONE;
    if (fd >= 0)
        close(fd);
    if (tmp_made)
        unlink(tmp);
    free(tmp);
    free(dir);
    return rc;
}

int ns_afile_read(const char *path, size_t max, ns_buf_t *out)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = 0;
    struct stat st;
    if (fstat(fd, &st) != 0)
        rc = -errno;
    else if (S_ISDIR(st.st_mode))
        rc = -EISDIR;
    else if (!S_ISREG(st.st_mode))
        rc = NS_ENOTREG;
    else if ((uint64_t)st.st_size > max)
        rc = NS_ETOOBIG;
    if (rc != 0) {
        close(fd);
        return rc;
    }
    size_t start = out->len;
    /* Room for the file and one byte more: the read that finds the end needs no new space. */
    ns_buf_reserve_exact(out, (size_t)st.st_size + 1);
    for (;;) {
        if (out->cap - out->len < 2) /* the file grew while we read it */
            ns_buf_reserve(out, 64 * 1024);
        size_t room = out->cap - out->len - 1; /* the NUL of ns_buf_cstr stays possible */
        /* One byte past max is enough to tell that the file is too big. */
        size_t left = max - (out->len - start);
        left = left < SIZE_MAX ? left + 1 : SIZE_MAX;
        ssize_t n = read(fd, out->data + out->len, room < left ? room : left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
        if (out->len - start > max) {
            rc = NS_ETOOBIG;
            break;
        }
    }
    close(fd);
    return rc;
}
