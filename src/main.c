/* mqnamesrv: the RocketMQ NameServer in C. Startup follows Java's NamesrvStartup: command line,
 * config file, `-p`, ROCKETMQ_HOME check, KV load, listen, boot line; SIGTERM/SIGINT stop it
 * gracefully with exit status 0. With enableControllerInNamesrv=true the controller runs inside
 * it (docs/controller.md); with --controller (bin/mqcontroller, Java's ControllerStartup) the
 * controller runs alone: no NameServer port, no KV store or route snapshot. */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "ns_acl.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_exporter.h"
#include "ns_health.h"
#include "ns_kv.h"
#include "ns_log.h"
#include "ns_metrics.h"
#include "ns_persist.h"
#include "ns_route.h"
#include "ns_server.h"
#include "ns_ctl.h"
#include "ns_snapshot.h"
#include "ns_traffic_log.h"

/* How long the exit waits for the last route snapshot to reach the disk once encoded. */
#define SNAPSHOT_STOP_TIMEOUT_MS 5000

/* Java's exit statuses: System.exit(-1) and System.exit(-2) as seen by a shell. */
#define EXIT_FATAL 255
#define EXIT_NO_HOME 254

static void log_config(ns_config_t *cfg)
{
    ns_buf_t dump = NS_BUF_INIT;
    ns_config_dump_java_order(cfg, &dump);
    ns_config_dump_extensions(cfg, &dump);
    const char *text = ns_buf_cstr(&dump);
    while (*text) {
        const char *eol = strchr(text, '\n');
        size_t n = eol ? (size_t)(eol - text) : strlen(text);
        ns_log(NS_LOG_INFO, "%.*s", (int)n, text);
        text += n + (eol ? 1 : 0);
    }
    ns_buf_free(&dump);
}

/* Raises the soft limit of open files to the hard limit, as the JVM does at start
 * (-XX:+MaxFDLimit, on by default): every broker and client holds a connection, and a server
 * at the soft limit (often 1024) would have libuv accept and drop new peers without a word.
 * Returns the limit in force. */
static long raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return -1;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            rl.rlim_cur = rl.rlim_max;
    }
    return rl.rlim_cur == RLIM_INFINITY ? -1 : (long)rl.rlim_cur;
}

/* The JVM options of Apache's scripts and image (runserver.sh, rocketmq-docker): compose files
 * and charts made for the Java NameServer set them, and they keep working unchanged; one line
 * tells the operator they have no effect here. */
static void log_ignored_jvm_options(void)
{
    static const char *const names[] = {"JAVA_OPT", "JAVA_OPT_EXT", "HEAP_OPTS"};
    char set[64] = "";
    for (size_t i = 0; i < NS_ARRAY_SIZE(names); i++) {
        const char *v = getenv(names[i]);
        if (v == NULL || v[0] == '\0')
            continue;
        size_t n = strlen(set);
        snprintf(set + n, sizeof(set) - n, "%s%s", n ? ", " : "", names[i]);
    }
    if (set[0] != '\0')
        ns_log(NS_LOG_INFO,
               "%s set: ignored (JVM options of the Java NameServer; mqnamesrv is not a JVM)", set);
}

/* aclEnable: the account file (aclPlainFile, relative to rocketmqHome as the broker's
 * rocketmq.acl.plain.file is) loaded once. Returns the checker, or NULL after printing why the
 * server cannot start (an operator who asked for ACL must not get an open server). */
static ns_acl_t *start_acl(const ns_config_t *cfg)
{
    const char *file =
        cfg->acl_plain_file && cfg->acl_plain_file[0] ? cfg->acl_plain_file : "conf/plain_acl.yml";
    char path[4096];
    if (file[0] == '/')
        snprintf(path, sizeof(path), "%s", file);
    else
        snprintf(path, sizeof(path), "%s/%s", cfg->rocketmq_home, file);
    ns_acl_t *acl = ns_acl_new(path, cfg->acl_reads_require_signature);
    char err[512] = "";
    int rc = ns_acl_reload(acl, err, sizeof(err));
    if (rc != 0) {
        ns_log(NS_LOG_ERROR, "aclEnable=true but the ACL file %s cannot be used: %s", path, err);
        fprintf(stderr, "aclEnable=true but the ACL file %s cannot be used: %s\n", path, err);
        ns_acl_free(acl);
        return NULL;
    }
    ns_log(NS_LOG_INFO, "ACL on: writes%s need a signature (%s)",
           cfg->acl_reads_require_signature ? " and reads" : "", path);
    return acl;
}

/* Everything a start makes, in the order it makes it; stop_all tears down whatever part was
 * made, at every exit. */
typedef struct parts {
    ns_persister_t *persister; /* writes the KV store and the 318 config file */
    ns_kv_t *kv;               /* the KV store, loaded */
    ns_acl_t *acl;             /* aclEnable: the access check; NULL = off */
    ns_route_t *route;         /* the route table, maybe restored from the snapshot */
    ns_server_t *server;       /* the server over kv, acl and route (made, not running yet) */
    ns_ctl_t *ctl;             /* enableControllerInNamesrv: the controller; NULL = none */
    ns_exporter_t *exporter;   /* the Prometheus exporter; NULL = off */
    bool traffic;              /* the traffic log runs */
    ns_snapshot_t *snapshot;   /* the snapshot writer; NULL = off */
    bool served;               /* the server ran and stopped cleanly: the last snapshot is due */
} parts_t;

/* The command line, tls.config.file, -p and the checks Java makes before it starts. Returns
 * true to go on; false with *status set to the exit status (0 after -h, -p or --version). */
static bool read_config(ns_config_t *cfg, int argc, char **argv, int *status)
{
    int rc = ns_config_parse_cli(cfg, argc, argv);
    if (rc < 0) {
        *status = -rc - 1;
        return false;
    }
    /* Java's TlsHelper reads tls.config.file over the -D values; ours are -c and --set. */
    char tls_err[600];
    if (ns_config_load_tls_file(cfg, false, tls_err, sizeof(tls_err)) < 0) {
        fprintf(stderr, "mqnamesrv: tls.config.file: %s\n", tls_err);
        *status = 1;
        return false;
    }
    if (cfg->print_config) {
        ns_config_print(cfg, stdout);
        *status = 0;
        return false;
    }
    const char *tls_problem = ns_config_tls_problem(cfg);
    if (tls_problem != NULL) {
        fprintf(stderr, "mqnamesrv: %s\n", tls_problem);
        *status = EXIT_FATAL;
        return false;
    }
    if (cfg->enable_controller_in_namesrv) {
        /* what the controller would refuse (a Java controller's store above all) stops the
         * start now, before the logs and the store are touched */
        char ctl_err[1024];
        if (ns_ctl_check_config(cfg, ctl_err, sizeof(ctl_err)) < 0) {
            fprintf(stderr, "mqnamesrv: the %scontroller: %s\n",
                    cfg->controller_only ? "" : "embedded ", ctl_err);
            *status = EXIT_FATAL;
            return false;
        }
    }
    if (ns_config_home_missing(cfg)) {
        /* Java: NamesrvStartup exits -2, ControllerStartup -1 */
        fputs(cfg->controller_only ? NS_CONFIG_CTL_HOME_MISSING_MSG : NS_CONFIG_HOME_MISSING_MSG,
              stdout);
        *status = cfg->controller_only ? EXIT_FATAL : EXIT_NO_HOME;
        return false;
    }
    return true;
}

/* logLevel, logPath, the configuration in the log, the open-files limit. */
static void start_logging(ns_config_t *cfg)
{
    ns_log_level_t level = NS_LOG_INFO;
    if (cfg->log_level && !ns_log_level_parse(cfg->log_level, &level))
        fprintf(stderr, "unknown logLevel %s, using INFO\n", cfg->log_level);
    ns_log_set_level(level);
    if (cfg->log_path && cfg->log_path[0]) {
        int rc = ns_log_open_file(cfg->log_path);
        if (rc != 0)
            fprintf(stderr, "cannot open log file %s: %s (logging to stdout only)\n", cfg->log_path,
                    strerror(-rc));
    }
    log_config(cfg);
    log_ignored_jvm_options();
    long fd_limit = raise_fd_limit();
    if (fd_limit >= 0)
        ns_log(NS_LOG_INFO, "open files limit %ld (connections beyond it are refused)", fd_limit);
}

/* Loads kvConfigPath into p->kv. False after printing why the server cannot start. */
static bool load_kv(const ns_config_t *cfg, parts_t *p)
{
    p->kv = ns_kv_new(cfg->kv_config_path);
    char err[512] = "";
    int rc = ns_kv_load(p->kv, err, sizeof(err));
    if (rc == 0)
        return true;
    ns_log(NS_LOG_ERROR, "cannot load KV config %s: %s", cfg->kv_config_path,
           err[0] ? err : ns_strerror(rc));
    fprintf(stderr, "cannot load KV config %s: %s\n", cfg->kv_config_path,
            err[0] ? err : ns_strerror(rc));
    return false;
}

/* Monitoring (docs/operations.md): both off by default; an exporter that cannot bind is fatal,
 * as for the broker: the operator asked for it. False after printing why. */
static bool start_monitoring(ns_config_t *cfg, parts_t *p)
{
    bool prom = ns_config_metrics_enabled(cfg);
    ns_metrics_configure(cfg->traffic_log_enable, prom);
    if (prom && ns_exporter_start(cfg, p->route, p->kv, p->ctl, &p->exporter) != 0) {
        fprintf(stderr, "Failed to start the metrics exporter on %s:%d\n",
                cfg->metrics_prom_exporter_host[0] ? cfg->metrics_prom_exporter_host : "0.0.0.0",
                (int)cfg->metrics_prom_exporter_port);
        return false;
    }
    if (cfg->traffic_log_enable)
        p->traffic = ns_traffic_log_start(cfg->traffic_log_path) == 0;
    return true;
}

/* The embedded controller (docs/controller.md), before anything listens: its thread, its Raft
 * store, its hooks into the server (1008, closes). The server then serves its port. False after
 * printing why. */
static bool start_controller(const ns_config_t *cfg, parts_t *p)
{
    ns_ctl_hooks_t hooks;
    ns_server_controller_hooks(p->server, &hooks);
    char err[1024] = "";
    int rc = ns_ctl_start(cfg, NS_CTL_LISTEN_HANDED, &hooks, &p->ctl, err, sizeof(err));
    if (rc != 0) {
        ns_log(NS_LOG_ERROR, "the controller cannot start: %s", err);
        fprintf(stderr, "mqnamesrv: the controller cannot start: %s\n", err);
        return false;
    }
    ns_server_set_controller(p->server, p->ctl, cfg->controller_only);
    ns_health_set_controller(cfg->controller_only, ns_now_ms());
    return true;
}

/* Starts every part in order and serves until SIGTERM or SIGINT. Returns the exit status: 0
 * after a clean stop, EXIT_FATAL (the reason printed) when a part cannot start. What was made
 * stays in p for stop_all. */
static int serve(ns_config_t *cfg, parts_t *p)
{
    start_logging(cfg);
    /* mqcontroller serves no NameServer request: its KV store and route table stay empty and
     * are never loaded or written (the server's loops still own them) */
    if (cfg->controller_only)
        p->kv = ns_kv_new(cfg->kv_config_path);
    else if (!load_kv(cfg, p))
        return EXIT_FATAL;
    /* Requests that change a file are answered once it is on disk, and no request thread waits
     * for that (docs/operations.md, Files). */
    p->persister = ns_persister_start();
    ns_kv_use_persister(p->kv, p->persister);
    ns_config_use_persister(cfg, p->persister);
    if (cfg->acl_enable && (p->acl = start_acl(cfg)) == NULL)
        return EXIT_FATAL;
    p->route = ns_route_new(cfg);
    /* Warm restart (docs/route.md, Snapshot): the routes are served from the first request. */
    ns_health_reset();
    if (!cfg->controller_only)
        ns_snapshot_restore(cfg, p->route, ns_now_ms(), ns_wall_ms());
    p->server = ns_server_new(cfg, p->route, p->kv);
    ns_server_set_acl(p->server, p->acl);
    if (cfg->enable_controller_in_namesrv && !start_controller(cfg, p))
        return EXIT_FATAL;
    if (!start_monitoring(cfg, p))
        return EXIT_FATAL;
    if (!cfg->controller_only)
        p->snapshot = ns_snapshot_start(cfg, p->route);
    int rc = ns_server_run(p->server);
    if (rc != 0) {
        if (cfg->controller_only)
            fprintf(stderr, "Failed to bind the controller port %s: %s\n", ns_ctl_self_addr(p->ctl),
                    ns_strerror(rc));
        else
            fprintf(stderr, "Failed to bind to %s:%d: %s\n", cfg->bind_address,
                    (int)cfg->listen_port, ns_strerror(rc));
        return EXIT_FATAL;
    }
    /* After a clean stop the table holds what the brokers had (ns_route_seal): write it. */
    p->served = true;
    return 0;
}

/* The one teardown of every exit, early or not, in the reverse order of serve(): a part never
 * made is NULL (or false), and its stop or free does nothing. */
static void stop_all(parts_t *p)
{
    ns_snapshot_stop(p->snapshot, p->served, SNAPSHOT_STOP_TIMEOUT_MS);
    if (p->traffic)
        ns_traffic_log_stop();
    ns_exporter_stop(p->exporter);
    ns_ctl_stop(p->ctl); /* after the server has stopped: every request it handed over is back */
    ns_server_free(p->server);
    /* After the server: its last writes are answered; before the KV store and the config. */
    ns_persister_stop(p->persister);
    ns_route_free(p->route);
    ns_acl_free(p->acl);
    ns_kv_free(p->kv);
    *p = (parts_t){0};
}

int main(int argc, char **argv)
{
    /* A peer or a stdout reader that goes away must cost an EPIPE, not the process (Java
     * ignores SIGPIPE too). */
    signal(SIGPIPE, SIG_IGN);
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    int status = 0;
    parts_t parts = {0};
    if (read_config(&cfg, argc, argv, &status))
        status = serve(&cfg, &parts);
    stop_all(&parts);
    ns_config_free(&cfg);
    ns_metrics_free_all();
    ns_log_close();
    return status;
}
