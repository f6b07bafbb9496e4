/* Test support: nsadmin as a child process (see nsadmin_run.h). */
#include "nsadmin_run.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Output files of a background run, named after the result's address. */
static void paths(const nsadmin_result_t *r, char *out, char *err, size_t cap)
{
    snprintf(out, cap, "/tmp/nsadmin-it-%d-%p.out", (int)getpid(), (const void *)r);
    snprintf(err, cap, "/tmp/nsadmin-it-%d-%p.err", (int)getpid(), (const void *)r);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)(n > 0 ? n : 0) + 1);
    size_t got = n > 0 ? fread(s, 1, (size_t)n, f) : 0;
    s[got] = '\0';
    fclose(f);
    return s;
}

static pid_t start(const nsadmin_result_t *r, const char *const *env, const char *const *args)
{
    const char *bin = getenv("NSADMIN_BIN");
    if (bin == NULL) {
        fprintf(stderr, "NSADMIN_BIN is not set\n");
        return -1;
    }
    char out[128], err[128];
    paths(r, out, err, sizeof(out));
    const char *argv[64];
    size_t argc = 0;
    argv[argc++] = bin;
    for (size_t i = 0; args[i] && argc < 63; i++)
        argv[argc++] = args[i];
    argv[argc] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        dup2(e, 2);
        close(o);
        close(e);
        for (size_t i = 0; env && env[i]; i++) {
            const char *eq = strchr(env[i], '=');
            char name[128];
            snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
            if (eq[1] == '\0')
                unsetenv(name);
            else
                setenv(name, eq + 1, 1);
        }
        execv(bin, (char *const *)(uintptr_t)argv);
        _exit(127);
    }
    return pid;
}

void nsadmin_wait(nsadmin_result_t *r, pid_t pid)
{
    int status = 0;
    r->status = -1;
    for (int waited = 0; waited < 60000; waited += 5) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            r->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            break;
        }
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    if (r->status == -1 && kill(pid, SIGKILL) == 0)
        waitpid(pid, &status, 0);
    char out[128], err[128];
    paths(r, out, err, sizeof(out));
    r->out = slurp(out);
    r->err = slurp(err);
    unlink(out);
    unlink(err);
    r->sanitizer = strstr(r->err, "AddressSanitizer") || strstr(r->err, "LeakSanitizer") ||
                   strstr(r->err, "runtime error:");
    if (r->sanitizer || r->status == -1)
        fprintf(stderr, "nsadmin %s (status %d):\n%s\n", r->sanitizer ? "sanitizer report" : "died",
                r->status, r->err);
}

pid_t nsadmin_spawn(nsadmin_result_t *r, const char *const *args)
{
    memset(r, 0, sizeof(*r));
    return start(r, NULL, args);
}

char *nsadmin_peek_out(const nsadmin_result_t *r)
{
    char out[128], err[128];
    paths(r, out, err, sizeof(out));
    return slurp(out);
}

void nsadmin_run(nsadmin_result_t *r, const char *const *env, const char *const *args)
{
    memset(r, 0, sizeof(*r));
    pid_t pid = start(r, env, args);
    if (pid < 0) {
        r->status = -1;
        r->out = strdup("");
        r->err = strdup("");
        return;
    }
    nsadmin_wait(r, pid);
}

void nsadmin_runv(nsadmin_result_t *r, ...)
{
    const char *args[64];
    size_t n = 0;
    va_list ap;
    va_start(ap, r);
    for (const char *a; n < 63 && (a = va_arg(ap, const char *)) != NULL;)
        args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    nsadmin_run(r, NULL, args);
}

void nsadmin_result_free(nsadmin_result_t *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
