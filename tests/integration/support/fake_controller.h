/* Test support: a controller node on a loopback port, in its own thread, answering the requests
 * of nsadmin's controller commands with what a Java 5.5.0 controller answers
 * (tests/interop/controller/golden_one.jsonl), so that nsadmin's path through a follower to the
 * leader, its headers and its reading of the answers are checked over TCP:
 *   1005  the metadata: group1, the leader it is told (none: no leader fields), isLeader;
 *   1006  (leader only) the sets "broker1" and "b2" among the names asked;
 *   1002  (leader only) broker 2: SUCCESS with Java's body (bare or quoted keys); broker 1:
 *         2011 MASTER_STILL_EXIST; others 2012;
 *   1011  (leader only) ids holding "2" without isCleanLivingBroker: 2009; else SUCCESS;
 *   1009  configStorePath: 16 (blacklist); else SUCCESS;   1010: a Properties text;
 * a node that is not the leader answers 1006, 1002 and 1011 with 2007; other codes: 3. */
#ifndef FAKE_CONTROLLER_H
#define FAKE_CONTROLLER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct fake_ctl {
    int port;
    bool leader;          /* serves the leader's requests */
    pthread_mutex_t lock; /* guards what follows */
    bool bare_keys;       /* the 1002 body as Java 5.5.0 writes it ({1:"addr"}) */
    char leader_addr[64]; /* what 1005 names as leader; "" for none */
    char peers[160];      /* 1005's peers */
    int requests;         /* requests answered */
    int last_code;        /* the last request's code */
    char last_ext[1024];  /* its ext fields, "key=value\n" each, in the order sent */
    char last_body[256];  /* its body (cut), as text */
    int listen_fd;
    int wake[2];
    pthread_t thread;
} fake_ctl_t;

/* Starts a node on 127.0.0.1 (port in fc->port) that is the leader or not. 0 or -1. */
int fake_ctl_start(fake_ctl_t *fc, bool leader);

/* What the node says from now on: the leader it names (NULL or "": none), its peers, the form
 * of its 1002 body. */
void fake_ctl_configure(fake_ctl_t *fc, const char *leader_addr, const char *peers, bool bare_keys);

/* Requests answered so far; *last_code (when not NULL) gets the last one's code, *last_body
 * (when not NULL, cap bytes) its body. */
int fake_ctl_requests(fake_ctl_t *fc, int *last_code, char *last_body, size_t cap);

/* The value of key in the last request's ext fields (a copy into out), or NULL. */
const char *fake_ctl_last_ext(fake_ctl_t *fc, const char *key, char *out, size_t cap);

/* Stops the thread and closes everything. */
void fake_ctl_stop(fake_ctl_t *fc);

#endif
