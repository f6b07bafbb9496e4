/* Unit tests for the shared atomic file writer (ns_atomic_file.h): the new content replaces the
 * old one whole, a failure at any step keeps the old file and leaves no temporary file, the
 * options (directories made, pid suffix, mode, the hook before the rename) do what they say.
 * kv.c's own use of it is covered step by step in test_kv.c. Also the file primitives of the
 * header (write all, mkdir -p, open for appending) that the logs and the KV backup use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ns_atomic_file.h"
#include "ns_common.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/ns_afile_test.XXXXXX");
    ns__afile_fail_next(NS_AFILE_STEP_NONE, 0);
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    char *buf = calloc(1, 4096);
    size_t n = fread(buf, 1, 4095, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void assert_content(const char *path, const char *want)
{
    char *got = slurp(path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void test_replaces_and_makes_dirs(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/a/b/file", dir);
    ns_afile_step_t step = NS_AFILE_STEP_WRITE;
    bool renamed = false;
    /* Without make_dirs the missing directory fails the open. */
    assert_int_equal(ns_afile_write(path, "x", 1, NULL, &step, &renamed), -ENOENT);
    assert_int_equal(step, NS_AFILE_STEP_OPEN);
    assert_false(renamed);
    ns_afile_opts_t o = {.make_dirs = true, .mode = 0600};
    assert_int_equal(ns_afile_write(path, "first", 5, &o, &step, &renamed), 0);
    assert_int_equal(step, NS_AFILE_STEP_NONE);
    assert_true(renamed);
    assert_content(path, "first");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0077, 0);
    assert_int_equal(ns_afile_write(path, "second", 6, &o, NULL, NULL), 0);
    assert_content(path, "second");
    char tmp[200];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_false(exists(tmp));
}

static void test_every_step_keeps_old_file(void **state)
{
    (void)state;
    char path[160], tmp[200];
    snprintf(path, sizeof(path), "%s/f", dir);
    snprintf(tmp, sizeof(tmp), "%s/f.tmp.%ld", dir, (long)getpid());
    ns_afile_opts_t o = {.make_dirs = true, .pid_suffix = true};
    for (int s = NS_AFILE_STEP_MKDIR; s <= NS_AFILE_STEP_DIRSYNC; s++) {
        assert_int_equal(ns_afile_write(path, "old content", 11, &o, NULL, NULL), 0);
        ns__afile_fail_next((ns_afile_step_t)s, EIO);
        ns_afile_step_t step = NS_AFILE_STEP_NONE;
        bool renamed = true;
        assert_int_equal(ns_afile_write(path, "new content here", 16, &o, &step, &renamed), -EIO);
        assert_int_equal(step, s);
        /* Only the directory fsync comes after the rename. */
        assert_int_equal(renamed, s == NS_AFILE_STEP_DIRSYNC);
        assert_content(path, s == NS_AFILE_STEP_DIRSYNC ? "new content here" : "old content");
        assert_false(exists(tmp));
    }
    assert_string_equal(ns_afile_step_name(NS_AFILE_STEP_RENAME), "rename");
}

static int hook_calls;
static int failing_hook(const char *path, void *arg)
{
    (void)path;
    hook_calls++;
    return *(int *)arg;
}

static void test_before_rename_hook(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/h", dir);
    int answer = -ENOSPC;
    ns_afile_opts_t o = {.before_rename = failing_hook, .arg = &answer};
    ns_afile_step_t step;
    assert_int_equal(ns_afile_write(path, "v", 1, &o, &step, NULL), -ENOSPC);
    assert_int_equal(step, NS_AFILE_STEP_BACKUP);
    assert_false(exists(path));
    answer = 0;
    assert_int_equal(ns_afile_write(path, "v", 1, &o, &step, NULL), 0);
    assert_content(path, "v");
    assert_int_equal(hook_calls, 2);
}

static void test_dir_of(void **state)
{
    (void)state;
    char *d = ns_afile_dir_of("x");
    assert_string_equal(d, ".");
    free(d);
    d = ns_afile_dir_of("/x");
    assert_string_equal(d, "/");
    free(d);
    d = ns_afile_dir_of("/a/b/c.json");
    assert_string_equal(d, "/a/b");
    free(d);
    char file[160];
    snprintf(file, sizeof(file), "%s/plain", dir);
    assert_int_equal(ns_afile_write(file, "", 0, NULL, NULL, NULL), 0);
    char sub[200];
    snprintf(sub, sizeof(sub), "%s/sub", file);
    assert_int_equal(ns_afile_make_dirs(sub), -ENOTDIR);
}

/* ns_afile_read appends the whole file (larger than one read), refuses past max and says
 * which errno a missing file gave. */
static void test_read_whole_file(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/big", dir);
    ns_buf_t out = NS_BUF_INIT;
    assert_int_equal(ns_afile_read(path, 1000, &out), -ENOENT);
    assert_int_equal(out.len, 0);
    enum { SIZE = 200000 }; /* more than one 64 KiB read */
    char *data = malloc(SIZE);
    for (size_t i = 0; i < SIZE; i++)
        data[i] = (char)('a' + i % 26);
    assert_int_equal(ns_afile_write(path, data, SIZE, NULL, NULL, NULL), 0);
    ns_buf_append(&out, "head", 4); /* appended after what the buffer holds */
    assert_int_equal(ns_afile_read(path, SIZE, &out), 0);
    assert_int_equal(out.len, 4 + SIZE);
    assert_memory_equal(out.data, "head", 4);
    assert_memory_equal(out.data + 4, data, SIZE);
    ns_buf_free(&out);
    assert_int_equal(ns_afile_read(path, SIZE - 1, &out), NS_ETOOBIG);
    ns_buf_free(&out);
    snprintf(path, sizeof(path), "%s/empty", dir);
    assert_int_equal(ns_afile_write(path, "", 0, NULL, NULL, NULL), 0);
    assert_int_equal(ns_afile_read(path, 0, &out), 0);
    assert_int_equal(out.len, 0);
    ns_buf_free(&out);
    free(data);
}

/* ns_afile_write_all writes everything through a pipe smaller than the data (short writes);
 * ns_afile_make_dirs and ns_afile_open_append make what is missing, say what is in the way, and
 * refuse a name longer than PATH_MAX. */
static void test_file_primitives(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    enum { SIZE = 300000 }; /* above a pipe's 64 KiB: the writer blocks, then writes short */
    char *data = malloc(SIZE);
    for (size_t i = 0; i < SIZE; i++)
        data[i] = (char)('A' + i % 23);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(ns_afile_write_all(fds[1], data, SIZE) == 0 ? 0 : 1);
    }
    close(fds[1]);
    char *back = malloc(SIZE + 1);
    size_t got = 0;
    for (ssize_t n; (n = read(fds[0], back + got, SIZE + 1 - got)) > 0;)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, SIZE);
    assert_memory_equal(back, data, SIZE);
    free(back);
    free(data);
    assert_int_equal(ns_afile_write_all(-1, "x", 1), -EBADF);

    char path[256];
    snprintf(path, sizeof(path), "%s/a/b/c", dir);
    assert_int_equal(ns_afile_make_dirs(path), 0);
    assert_int_equal(ns_afile_make_dirs(path), 0); /* already there */
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    snprintf(path, sizeof(path), "%s/logs/x/ns.log", dir);
    int fd = ns_afile_open_append(path, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ns_afile_write_all(fd, "one\n", 4), 0);
    close(fd);
    fd = ns_afile_open_append(path, 0600); /* appends */
    assert_int_equal(ns_afile_write_all(fd, "two\n", 4), 0);
    close(fd);
    char *text = slurp(path);
    assert_string_equal(text, "one\ntwo\n");
    free(text);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char below[300];
    snprintf(below, sizeof(below), "%s/sub/x.log", path); /* a file is in the way */
    assert_int_equal(ns_afile_open_append(below, 0644), -ENOTDIR);
    assert_int_equal(ns_afile_make_dirs(""), -ENOENT);
    char *longname = malloc(PATH_MAX + 2);
    memset(longname, 'd', PATH_MAX + 1);
    longname[0] = '/';
    longname[PATH_MAX + 1] = '\0';
    assert_int_equal(ns_afile_make_dirs(longname), -ENAMETOOLONG);
    free(longname);
}

/* Runs ns_afile_read(path, max) in a child that an alarm ends after 20 s (an open that blocks
 * fails the test instead of hanging it); returns its result, or 1 when the child was killed. */
static int read_in_child(const char *path, size_t max)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        ns_buf_t out = NS_BUF_INIT;
        int rc = ns_afile_read(path, max, &out);
        ns_buf_free(&out);
        _exit(write(fds[1], &rc, sizeof(rc)) == (ssize_t)sizeof(rc) ? 0 : 1);
    }
    close(fds[1]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    int rc = 1;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
          read(fds[0], &rc, sizeof(rc)) == (ssize_t)sizeof(rc)))
        rc = 1;
    close(fds[0]);
    return rc;
}

/* Issue 23, A.3 and A.5: only regular files are read, and their size is checked before any
 * byte is: a FIFO without a writer (open used to block for ever), /dev/zero (read until the
 * limit), a directory, and a 2 GiB file against a 1 GiB limit (used to be read up to the
 * limit first). A file that holds still is read into one allocation of its size. */
static void test_read_refuses_what_is_not_a_file(void **state)
{
    (void)state;
    char path[160];
    snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(read_in_child(path, 1u << 20), NS_ENOTREG);
    assert_int_equal(read_in_child("/dev/zero", 1u << 20), NS_ENOTREG);
    assert_int_equal(read_in_child(dir, 1u << 20), -EISDIR);

    snprintf(path, sizeof(path), "%s/sparse", dir);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(ftruncate(fileno(fp), (off_t)2 << 30), 0);
    fclose(fp);
    ns_buf_t out = NS_BUF_INIT;
    assert_int_equal(ns_afile_read(path, 1u << 30, &out), NS_ETOOBIG);
    assert_int_equal(out.len, 0);
    assert_true(out.cap < 4096);
    ns_buf_free(&out);

    enum { SIZE = 100000 };
    char *data = calloc(1, SIZE);
    memset(data, 'x', SIZE);
    snprintf(path, sizeof(path), "%s/still", dir);
    assert_int_equal(ns_afile_write(path, data, SIZE, NULL, NULL, NULL), 0);
    assert_int_equal(ns_afile_read(path, SIZE, &out), 0);
    assert_int_equal(out.len, SIZE);
    assert_int_equal(out.cap, SIZE + 2); /* the data, one byte to see the end, the NUL */
    ns_buf_free(&out);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replaces_and_makes_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_step_keeps_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_before_rename_hook, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dir_of, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_whole_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_primitives, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_refuses_what_is_not_a_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
