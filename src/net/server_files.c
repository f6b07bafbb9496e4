/* The operator's files read while the server runs: the ACL account file (looked at every 2 s),
 * the certificate and key files (every second) and, on SIGHUP, both again together with
 * tls.config.file. Reading a file can block: a FIFO no longer can (ns_afile_read opens with
 * O_NONBLOCK and reads only regular files), but stat() and read() on a hung network file
 * system can, for as long as the file system likes. So no pass runs on an I/O loop: loop 0
 * queues one pass at a time on libuv's thread pool, and the pass swaps in what it loaded itself
 * (the account set and the TLS contexts are replaced under their own short locks, ns_acl.h and
 * ns_tls.h), so nothing needs to be handed back but "done". A pass that takes long only delays
 * the next reload; loop 0 says so once (WARN) and again when it ends. */
#include "net_int.h"

#include <pthread.h>

#include "ns_acl.h"
#include "ns_common.h"
#include "ns_log.h"

/* How often loop 0 starts a pass (the certificate files are looked at in every one). */
#define FILES_TICK_MS 1000
/* The ACL account file is looked at in every second pass (every 2 s). */
#define ACL_EVERY_TICKS 2
/* A pass running longer than this is reported: a file system is probably hung. */
#define FILES_STALL_MS 10000

/* The thread pool: one pass, which may block. */
static void run_pass(uv_work_t *req)
{
    ns_server_t *server = req->data;
    ns_server_files_t *f = &server->files;
    pthread_setname_np(pthread_self(), "NSFiles");
    if (server->acl != NULL && (f->pass_hup || f->pass_acl))
        ns_acl_poll(server->acl, f->pass_hup, ns_now_ms());
    if (f->pass_hup)
        ns__server_tls_reload(server, "SIGHUP");
    else
        ns__server_tls_watch(server);
}

/* Loop 0: the pass is over (or was cancelled at shutdown before it began). */
static void on_pass_done(uv_work_t *req, int status)
{
    ns_server_t *server = req->data;
    ns_server_files_t *f = &server->files;
    (void)status;
    f->running = false;
    if (f->stall_said)
        NS_LOG_I("reading the ACL and certificate files took %llu s; reloads go on",
                 (unsigned long long)((uv_now(&server->loops[0].loop) - f->started_ms) / 1000));
    f->stall_said = false;
    if (f->hup && !f->stopping)
        ns__server_files_kick(server);
}

void ns__server_files_kick(ns_server_t *server)
{
    ns_server_files_t *f = &server->files;
    uv_loop_t *loop0 = &server->loops[0].loop;
    if (f->stopping)
        return;
    if (f->running) {
        if (!f->stall_said && uv_now(loop0) - f->started_ms >= FILES_STALL_MS) {
            f->stall_said = true;
            NS_LOG_W("reading the ACL and certificate files has taken more than %d s: is a file "
                     "system hung? Their reloads wait; requests are served as usual",
                     FILES_STALL_MS / 1000);
        }
        return;
    }
    f->pass_hup = f->hup;
    f->hup = false;
    f->pass_acl = server->acl != NULL && f->ticks++ % ACL_EVERY_TICKS == ACL_EVERY_TICKS - 1;
    bool tls = server->tls.server_ctx != NULL || server->tls.client_ctx != NULL;
    if (!f->pass_hup && !f->pass_acl && !tls)
        return; /* nothing to look at */
    f->work.data = server;
    f->started_ms = uv_now(loop0);
    if (uv_queue_work(loop0, &f->work, run_pass, on_pass_done) == 0)
        f->running = true;
}

static void on_tick(uv_timer_t *timer)
{
    ns__server_files_kick(timer->data);
}

void ns__server_files_start(ns_server_t *server)
{
    ns_server_files_t *f = &server->files;
    uv_timer_init(&server->loops[0].loop, &f->timer);
    f->timer.data = server;
    uv_timer_start(&f->timer, on_tick, FILES_TICK_MS, FILES_TICK_MS);
}

void ns__server_files_hup(ns_server_t *server)
{
    server->files.hup = true;
    ns__server_files_kick(server);
}

void ns__server_files_stop(ns_server_t *server)
{
    ns_server_files_t *f = &server->files;
    f->stopping = true;
    uv_close((uv_handle_t *)&f->timer, NULL);
    /* A pass not begun yet is dropped; one under way ends on its own, and loop 0 runs until it
     * has (a hung file system holds the exit up, not the service). */
    if (f->running)
        uv_cancel((uv_req_t *)&f->work);
}
