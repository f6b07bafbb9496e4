/* An fsync that takes as long as the test wants: an LD_PRELOAD library for the fault suite
 * (tests/faults/disk.sh). fsync() and fdatasync() of a file whose path contains
 * $FAULT_FSYNC_MATCH wait while the file $FAULT_FSYNC_GATE exists (at most
 * FAULT_FSYNC_MAX_MS), then do the real call; while one waits, $FAULT_FSYNC_GATE.waiting exists,
 * so the test knows the disk is "busy" now. Every other call goes straight through. A gate
 * rather than a delay: the test asserts what happens while the fsync is held, not how long
 * anything took. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A gate left behind by a test that died does not hang the server for longer than this. */
#define FAULT_FSYNC_MAX_MS 120000

static int holds(int fd)
{
    const char *match = getenv("FAULT_FSYNC_MATCH");
    const char *gate = getenv("FAULT_FSYNC_GATE");
    if (match == NULL || gate == NULL || access(gate, F_OK) != 0)
        return 0;
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return 0;
    path[n] = '\0';
    return strstr(path, match) != NULL;
}

static void wait_at_gate(void)
{
    const char *gate = getenv("FAULT_FSYNC_GATE");
    char waiting[4200];
    snprintf(waiting, sizeof(waiting), "%s.waiting", gate);
    int fd = open(waiting, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int waited = 0; waited < FAULT_FSYNC_MAX_MS && access(gate, F_OK) == 0; waited += 10)
        nanosleep(&tick, NULL);
    unlink(waiting);
}

/* The next definition of `name` (libc's), as POSIX says to convert dlsym's answer. */
static int (*next_fn(const char *name))(int)
{
    int (*fn)(int);
    *(void **)(&fn) = dlsym(RTLD_NEXT, name);
    return fn;
}

int fsync(int fd)
{
    int (*real)(int) = next_fn("fsync");
    if (holds(fd))
        wait_at_gate();
    return real(fd);
}

int fdatasync(int fd)
{
    int (*real)(int) = next_fn("fdatasync");
    if (holds(fd))
        wait_at_gate();
    return real(fd);
}
