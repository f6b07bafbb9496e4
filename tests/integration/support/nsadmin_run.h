/* Test support: runs the nsadmin binary ($NSADMIN_BIN) as a child process and keeps what it
 * printed and how it exited. */
#ifndef NSADMIN_RUN_H
#define NSADMIN_RUN_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct nsadmin_result {
    int status;     /* exit status 0..255, or -1 when it was killed or did not end in time */
    char *out;      /* stdout (malloc'd, NUL-terminated) */
    char *err;      /* stderr */
    bool sanitizer; /* stderr holds an ASan/UBSan/LSan report (printed) */
} nsadmin_result_t;

/* Options for a write command: a server answers a write once it is on disk, which a loaded
 * machine can take seconds to do (a loaded run: an updateNamesrvConfig unanswered after nsadmin's
 * default 5 s). 25 s per server: a write to two servers stays within nsadmin_run's 60 s. */
#define WRITE_WAIT "--timeout", "25000"

/* Runs nsadmin with the NULL-terminated arguments (the command first); env: NULL or
 * "NAME=value" entries (NULL-terminated) set in the child, and "NAME=" unsets NAME. Waits up
 * to 60 s. */
void nsadmin_run(nsadmin_result_t *r, const char *const *env, const char *const *args);

/* The same, arguments as a NULL-terminated variadic list, no environment changes. */
void nsadmin_runv(nsadmin_result_t *r, ...);

/* Starts nsadmin in the background (for --watch); nsadmin_wait collects it. */
pid_t nsadmin_spawn(nsadmin_result_t *r, const char *const *args);
void nsadmin_wait(nsadmin_result_t *r, pid_t pid);
/* What the background nsadmin printed on stdout so far (malloc'd). */
char *nsadmin_peek_out(const nsadmin_result_t *r);

void nsadmin_result_free(nsadmin_result_t *r);

#endif
