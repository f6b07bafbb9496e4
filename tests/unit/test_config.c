/* Configuration: defaults, `-p` (vs. the output of the Java 5.5.0 NameServer), the 319 body (vs.
 * docs/protocol.md, section GET_NAMESRV_CONFIG (319)), value conversion, the -c loader, the
 * command line (vs. commons-cli 1.5.0 as NamesrvStartup uses it) and 318 updates with their
 * persistence. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "ns_common.h"
#include "ns_config.h"
#include "ns_version.h"
#include "ns_log.h"

/* `mqnamesrv -p` of Apache RocketMQ 5.5.0 with HOME=/root, ROCKETMQ_HOME=/opt/rocketmq, the
 * timestamps cut; %d stands for the CPU count. */
static const char java_p_output[] = "rocketmqHome=/opt/rocketmq\n"
                                    "kvConfigPath=/root/namesrv/kvConfig.json\n"
                                    "configStorePath=/root/namesrv/namesrv.properties\n"
                                    "productEnvName=center\n"
                                    "clusterTest=false\n"
                                    "orderMessageEnable=false\n"
                                    "returnOrderTopicConfigToBroker=true\n"
                                    "clientRequestThreadPoolNums=8\n"
                                    "defaultThreadPoolNums=16\n"
                                    "clientRequestThreadPoolQueueCapacity=50000\n"
                                    "defaultThreadPoolQueueCapacity=10000\n"
                                    "scanNotActiveBrokerInterval=5000\n"
                                    "unRegisterBrokerQueueCapacity=3000\n"
                                    "supportActingMaster=false\n"
                                    "enableAllTopicList=true\n"
                                    "enableTopicList=true\n"
                                    "notifyMinBrokerIdChanged=false\n"
                                    "enableControllerInNamesrv=false\n"
                                    "needWaitForService=false\n"
                                    "waitSecondsForService=45\n"
                                    "deleteTopicWithBrokerRegistration=false\n"
                                    "configBlackList=configBlackList;configStorePath;kvConfigPath\n"
                                    "bindAddress=0.0.0.0\n"
                                    "listenPort=9876\n"
                                    "serverWorkerThreads=8\n"
                                    "serverCallbackExecutorThreads=0\n"
                                    "serverSelectorThreads=3\n"
                                    "serverOnewaySemaphoreValue=256\n"
                                    "serverAsyncSemaphoreValue=64\n"
                                    "serverChannelMaxIdleTimeSeconds=120\n"
                                    "serverSocketSndBufSize=0\n"
                                    "serverSocketRcvBufSize=0\n"
                                    "writeBufferHighWaterMark=0\n"
                                    "writeBufferLowWaterMark=0\n"
                                    "serverSocketBacklog=1024\n"
                                    "serverNettyWorkerGroupEnable=true\n"
                                    "serverPooledByteBufAllocatorEnable=true\n"
                                    "enableShutdownGracefully=false\n"
                                    "shutdownWaitTimeSeconds=30\n"
                                    "useEpollNativeSelector=false\n"
                                    "clientWorkerThreads=4\n"
                                    "clientCallbackExecutorThreads=%d\n"
                                    "clientOnewaySemaphoreValue=65535\n"
                                    "clientAsyncSemaphoreValue=65535\n"
                                    "connectTimeoutMillis=3000\n"
                                    "channelNotActiveInterval=60000\n"
                                    "isScanAvailableNameSrv=true\n"
                                    "clientChannelMaxIdleTimeSeconds=120\n"
                                    "clientSocketSndBufSize=0\n"
                                    "clientSocketRcvBufSize=0\n"
                                    "clientPooledByteBufAllocatorEnable=false\n"
                                    "clientCloseSocketIfTimeout=true\n"
                                    "useTLS=false\n"
                                    "socksProxyConfig={}\n"
                                    "writeBufferHighWaterMark=0\n"
                                    "writeBufferLowWaterMark=0\n"
                                    "disableCallbackExecutor=false\n"
                                    "disableNettyWorkerGroup=false\n"
                                    "maxReconnectIntervalTimeSeconds=60\n"
                                    "enableReconnectForGoAway=true\n";

/* docs/protocol.md, section GET_NAMESRV_CONFIG (319): the default 319 body with HOME=/root,
 * ROCKETMQ_HOME=/opt/rocketmq. */
static const char default_319[] = "bindAddress=0.0.0.0\n"
                                  "clientRequestThreadPoolNums=8\n"
                                  "clientRequestThreadPoolQueueCapacity=50000\n"
                                  "clusterTest=false\n"
                                  "configBlackList=configBlackList;configStorePath;kvConfigPath\n"
                                  "configStorePath=/root/namesrv/namesrv.properties\n"
                                  "defaultThreadPoolNums=16\n"
                                  "defaultThreadPoolQueueCapacity=10000\n"
                                  "deleteTopicWithBrokerRegistration=false\n"
                                  "enableAllTopicList=true\n"
                                  "enableControllerInNamesrv=false\n"
                                  "enableShutdownGracefully=false\n"
                                  "enableTopicList=true\n"
                                  "kvConfigPath=/root/namesrv/kvConfig.json\n"
                                  "listenPort=9876\n"
                                  "needWaitForService=false\n"
                                  "notifyMinBrokerIdChanged=false\n"
                                  "orderMessageEnable=false\n"
                                  "productEnvName=center\n"
                                  "returnOrderTopicConfigToBroker=true\n"
                                  "rocketmqHome=/opt/rocketmq\n"
                                  "scanNotActiveBrokerInterval=5000\n"
                                  "serverAsyncSemaphoreValue=64\n"
                                  "serverCallbackExecutorThreads=0\n"
                                  "serverChannelMaxIdleTimeSeconds=120\n"
                                  "serverNettyWorkerGroupEnable=true\n"
                                  "serverOnewaySemaphoreValue=256\n"
                                  "serverPooledByteBufAllocatorEnable=true\n"
                                  "serverSelectorThreads=3\n"
                                  "serverSocketBacklog=1024\n"
                                  "serverSocketRcvBufSize=0\n"
                                  "serverSocketSndBufSize=0\n"
                                  "serverWorkerThreads=8\n"
                                  "shutdownWaitTimeSeconds=30\n"
                                  "supportActingMaster=false\n"
                                  "unRegisterBrokerQueueCapacity=3000\n"
                                  "useEpollNativeSelector=false\n"
                                  "waitSecondsForService=45\n"
                                  "writeBufferHighWaterMark=0\n"
                                  "writeBufferLowWaterMark=0\n";

static const char java_usage[] =
    "usage: mqnamesrv [-c <arg>] [-h] [-n <arg>] [-p]\n"
    " -c,--configFile <arg>    Name server config properties file\n"
    " -h,--help                Print help\n"
    " -n,--namesrvAddr <arg>   Name server address list, eg: '192.168.0.1:9876;192.168.0.2:9876'\n"
    " -p,--printConfigItem     Print all config items\n";

static char tmpdir[256];

/* ---- helpers ------------------------------------------------------------------------------ */

static void env_java_defaults(void)
{
    setenv("HOME", "/root", 1);
    setenv("ROCKETMQ_HOME", "/opt/rocketmq", 1);
}

static char *path_in_tmp(const char *name)
{
    char *p = malloc(strlen(tmpdir) + strlen(name) + 2);
    sprintf(p, "%s/%s", tmpdir, name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    ns_buf_t b = NS_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        ns_buf_append(&b, chunk, n);
    fclose(f);
    ns_buf_cstr(&b);
    size_t len;
    char *s = (char *)ns_buf_steal(&b, &len);
    if (s == NULL)
        s = strdup("");
    return s;
}

/* Captures what is written to fd 1 and 2 between capture_begin() and capture_end(). */
typedef struct capture {
    int saved_out, saved_err;
    char *out_path, *err_path;
    char *out, *err; /* after capture_end(); caller frees with capture_free() */
} capture_t;

static void capture_begin(capture_t *c)
{
    fflush(stdout);
    fflush(stderr);
    c->out_path = path_in_tmp("cap.out");
    c->err_path = path_in_tmp("cap.err");
    int fo = open(c->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(c->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fo >= 0 && fe >= 0);
    c->saved_out = dup(1);
    c->saved_err = dup(2);
    dup2(fo, 1);
    dup2(fe, 2);
    close(fo);
    close(fe);
}

static void capture_end(capture_t *c)
{
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved_out, 1);
    dup2(c->saved_err, 2);
    close(c->saved_out);
    close(c->saved_err);
    c->out = read_text(c->out_path);
    c->err = read_text(c->err_path);
}

static void capture_free(capture_t *c)
{
    unlink(c->out_path);
    unlink(c->err_path);
    free(c->out_path);
    free(c->err_path);
    free(c->out);
    free(c->err);
}

static int cpus(void)
{
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
    return CPU_COUNT(&set);
}

static char *dump_sorted(ns_config_t *cfg)
{
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_sorted(cfg, &b);
    ns_buf_cstr(&b);
    size_t len;
    return (char *)ns_buf_steal(&b, &len);
}

/* Runs ns_config_parse_cli on a NULL-terminated argument list, output captured. */
static int run_cli(ns_config_t *cfg, capture_t *cap, const char *const *args)
{
    /* parse_cli does not modify argv: copies keep -Wcast-qual quiet */
    static char storage[32][600];
    char *argv[32];
    int argc = 0;
    snprintf(storage[argc], sizeof(storage[0]), "mqnamesrv");
    argv[argc] = storage[argc];
    argc++;
    for (; *args && argc < 31; args++) {
        snprintf(storage[argc], sizeof(storage[0]), "%s", *args);
        argv[argc] = storage[argc];
        argc++;
    }
    argv[argc] = NULL;
    capture_begin(cap);
    int rc = ns_config_parse_cli(cfg, argc, argv);
    capture_end(cap);
    return rc;
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ns_test_config.XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    env_java_defaults();
    ns_log_set_stdout(false);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- defaults, -p, 319 -------------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    assert_string_equal(cfg.rocketmq_home, "/opt/rocketmq");
    assert_string_equal(cfg.kv_config_path, "/root/namesrv/kvConfig.json");
    assert_string_equal(cfg.config_store_path, "/root/namesrv/namesrv.properties");
    assert_int_equal(cfg.listen_port, 9876);
    assert_true(cfg.enable_all_topic_list);
    assert_int_equal(cfg.scan_not_active_broker_interval, 5000);
    assert_int_equal(cfg.server_channel_max_idle_time_seconds, 120);
    assert_int_equal(cfg.frame_max_length, 16777216);
    assert_int_equal(cfg.max_conn_output_bytes, 67108864);
    assert_string_equal(cfg.log_path, "/root/logs/rocketmqlogs/namesrv.log");
    assert_string_equal(cfg.log_level, "INFO");
    assert_string_equal(cfg.port_file, "");
    assert_int_equal(cfg.io_threads, 0);
    assert_int_equal(cfg.client.client_callback_executor_threads, cpus());
    assert_false(cfg.print_config);
    assert_null(cfg.config_file);
    assert_false(ns_config_home_missing(&cfg));
    ns_config_free(&cfg);
}

static void test_print_matches_java(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char want[4096];
    snprintf(want, sizeof(want), java_p_output, cpus());
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_java_order(&cfg, &b);
    assert_string_equal(ns_buf_cstr(&b), want);

    /* ns_config_print: the same lines behind "yyyy-MM-dd HH:mm:ss INFO main - ". */
    char *path = path_in_tmp("print.out");
    FILE *f = fopen(path, "w");
    ns_config_print(&cfg, f);
    fclose(f);
    char *text = read_text(path);
    const char *line = text;
    /* a first line naming the build (no '=': key=value readers skip it) */
    char first[160];
    snprintf(first, sizeof(first), " INFO main - %s\n", ns_version_line());
    assert_memory_equal(line + 19, first, strlen(first));
    line = strchr(line, '\n') + 1;
    /* then Java's 60 lines, then our extensions (which Java does not have) */
    ns_buf_t ext = NS_BUF_INIT;
    ns_config_dump_extensions(&cfg, &ext);
    assert_non_null(strstr(ns_buf_cstr(&ext), "frameMaxLength=16777216\n"));
    assert_non_null(strstr(ns_buf_cstr(&ext), "portFile=\n"));
    ns_buf_append_str(&b, ns_buf_cstr(&ext));
    int ext_lines = 0;
    for (const char *e = ns_buf_cstr(&ext); *e; e++)
        ext_lines += *e == '\n';
    ns_buf_free(&ext);
    const char *w = ns_buf_cstr(&b);
    int lines = 0;
    while (*line) {
        assert_true(strlen(line) > 32);
        assert_true(line[4] == '-' && line[7] == '-' && line[10] == ' ' && line[13] == ':');
        assert_memory_equal(line + 19, " INFO main - ", 13);
        const char *nl = strchr(line, '\n');
        const char *wnl = strchr(w, '\n');
        assert_int_equal(nl - (line + 32), wnl - w);
        assert_memory_equal(line + 32, w, (size_t)(wnl - w));
        line = nl + 1;
        w = wnl + 1;
        lines++;
    }
    assert_int_equal(lines, 60 + ext_lines);
    ns_buf_free(&b);
    free(text);
    unlink(path);
    free(path);
    ns_config_free(&cfg);
}

static void test_319_default_body(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *body = dump_sorted(&cfg);
    assert_string_equal(body, default_319);
    free(body);
    ns_config_free(&cfg);
}

static void test_home_missing(void **state)
{
    (void)state;
    unsetenv("ROCKETMQ_HOME");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    assert_true(ns_config_home_missing(&cfg));
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_java_order(&cfg, &b);
    assert_memory_equal(ns_buf_cstr(&b), "rocketmqHome=\nkvConfigPath=", 27); /* null: empty */
    ns_buf_free(&b);
    char *body = dump_sorted(&cfg);
    assert_null(strstr(body, "rocketmqHome")); /* null fields are not in 319 */
    free(body);
    /* rocketmqHome from the config file counts, as in Java */
    assert_int_equal(ns_config_set(&cfg, "rocketmqHome", " /srv/rmq ", true, NULL, 0), 1);
    assert_false(ns_config_home_missing(&cfg));
    assert_string_equal(cfg.rocketmq_home, "/srv/rmq");
    ns_config_free(&cfg);
    assert_string_equal(NS_CONFIG_HOME_MISSING_MSG,
                        "Please set the ROCKETMQ_HOME variable in your environment to match the "
                        "location of the RocketMQ installation\n");
    env_java_defaults();
}

/* ---- value conversion ------------------------------------------------------------------- */

typedef struct set_case {
    const char *key;
    const char *value;
    bool strict;
    int rc;             /* 1 known, 0 unknown, NS_ECONFIG */
    const char *expect; /* the key's line in the 319 dump afterwards ("key=value"), or NULL */
    const char *reason; /* substring of err when rc < 0 */
} set_case_t;

static const set_case_t set_cases[] = {
    {"listenPort", "1234", true, 1, "listenPort=1234", NULL},
    {"listenPort", "+77", true, 1, "listenPort=77", NULL},
    {"listenPort", "0", true, 1, "listenPort=0", NULL},
    {"listenPort", " 1234", true, NS_ECONFIG, "listenPort=9876", "' 1234' is not a valid int"},
    {"listenPort", " 1234", false, 1, "listenPort=9876", NULL}, /* Java ignores it */
    {"listenPort", "1234 ", false, 1, "listenPort=9876", NULL},
    {"listenPort", "70000", true, NS_ECONFIG, "listenPort=9876", "out of range [0, 65535]"},
    {"listenPort", "70000", false, 1, "listenPort=9876", NULL},
    {"listenPort", "abc", true, NS_ECONFIG, "listenPort=9876", "'abc' is not a valid int"},
    {"listenPort", "", true, NS_ECONFIG, "listenPort=9876", "is not a valid int"},
    {"listenPort", "-", false, 1, "listenPort=9876", NULL},
    {"serverWorkerThreads", "2147483647", true, 1, "serverWorkerThreads=2147483647", NULL},
    {"serverWorkerThreads", "-2147483648", true, 1, "serverWorkerThreads=-2147483648", NULL},
    {"serverWorkerThreads", "2147483648", false, 1, "serverWorkerThreads=8", NULL},
    {"serverWorkerThreads", "0x10", false, 1, "serverWorkerThreads=8", NULL},
    {"scanNotActiveBrokerInterval", "9223372036854775807", true, 1,
     "scanNotActiveBrokerInterval=9223372036854775807", NULL},
    {"scanNotActiveBrokerInterval", "9223372036854775808", false, 1,
     "scanNotActiveBrokerInterval=5000", NULL},
    {"scanNotActiveBrokerInterval", "0", true, NS_ECONFIG, "scanNotActiveBrokerInterval=5000",
     "out of range"},
    {"enableAllTopicList", "FALSE", true, 1, "enableAllTopicList=false", NULL},
    {"clusterTest", "TrUe", true, 1, "clusterTest=true", NULL},
    {"enableAllTopicList", "yes", false, 1, "enableAllTopicList=false", NULL}, /* Java: false */
    {"enableAllTopicList", "true ", false, 1, "enableAllTopicList=false", NULL},
    {"enableAllTopicList", "yes", true, NS_ECONFIG, "enableAllTopicList=true", "not a boolean"},
    {"productEnvName", "  spaced out \t", true, 1, "productEnvName=spaced out", NULL},
    {"bindAddress", "", true, 1, "bindAddress=", NULL},
    {"logLevel", "debug", true, 1, "logLevel=debug", NULL},
    {"logLevel", "LOUD", true, NS_ECONFIG, NULL, "not ERROR, WARN, INFO or DEBUG"},
    {"frameMaxLength", "100", true, NS_ECONFIG, NULL, "out of range"},
    {"ioThreads", "4", true, 1, "ioThreads=4", NULL},
    {"workerThreadNice", "0", true, 1, "workerThreadNice=0", NULL},
    {"workerThreadNice", "20", true, NS_ECONFIG, NULL, "out of range"},
    {"connectionMaxPendingWriteBytes", "0", true, 1, "connectionMaxPendingWriteBytes=0", NULL},
    {"clientWorkerThreads", "9", true, 1, "clientWorkerThreads=9", NULL}, /* client: raw text */
    {"scanAvailableNameSrv", "false", true, 1, "scanAvailableNameSrv=false", NULL},
    {"isScanAvailableNameSrv", "false", true, 0, "isScanAvailableNameSrv=false", NULL},
    {"myOwnKey", " x ", true, 0, "myOwnKey= x ", NULL}, /* unknown: kept verbatim */
};

static void test_set_conversions(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(set_cases); i++) {
        const set_case_t *c = &set_cases[i];
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        char err[256] = "";
        int rc = ns_config_set(&cfg, c->key, c->value, c->strict, err, sizeof(err));
        char *body = dump_sorted(&cfg);
        bool ok = rc == c->rc;
        if (c->expect != NULL) {
            char line[256];
            snprintf(line, sizeof(line), "\n%s\n", c->expect);
            ok = ok && (strncmp(body, line + 1, strlen(line + 1)) == 0 || strstr(body, line));
        }
        if (c->reason != NULL)
            ok = ok && strstr(err, c->reason) != NULL;
        if (!ok) {
            print_error("case %zu %s=%s strict=%d: rc %d (want %d) err '%s'\n%s", i, c->key,
                        c->value, c->strict, rc, c->rc, err, body);
            fail();
        }
        free(body);
        ns_config_free(&cfg);
    }
}

static void test_set_client_and_shared_keys(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    assert_int_equal(ns_config_set(&cfg, "scanAvailableNameSrv", "false", true, NULL, 0), 1);
    assert_false(cfg.client.is_scan_available_name_srv);
    /* writeBufferHighWaterMark is a field of both Netty configs: Java sets both */
    assert_int_equal(ns_config_set(&cfg, "writeBufferHighWaterMark", "65536", true, NULL, 0), 1);
    assert_int_equal(cfg.write_buffer_high_water_mark, 65536);
    assert_int_equal(cfg.client.write_buffer_high_water_mark, 65536);
    assert_int_equal(ns_config_set(&cfg, "socksProxyConfig", " {\"a\":1} ", true, NULL, 0), 1);
    assert_string_equal(cfg.client.socks_proxy_config, "{\"a\":1}");
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_java_order(&cfg, &b);
    assert_non_null(strstr(ns_buf_cstr(&b), "\nisScanAvailableNameSrv=false\n"));
    ns_buf_free(&b);
    ns_config_free(&cfg);
}

/* ---- -c files ----------------------------------------------------------------------------- */

static void test_load_file(void **state)
{
    (void)state;
    char *path = path_in_tmp("ok.properties");
    write_text(path, "# a comment\n"
                     "listenPort = 19876\n"
                     "enableAllTopicList:false\n"
                     "unknownThing=42\n"
                     "clientWorkerThreads=6\n"
                     "logLevel WARN\n"
                     "configStorePath=/elsewhere\n"
                     "productEnvName=first\n"
                     "productEnvName=second\n");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char err[512] = "";
    capture_t cap;
    capture_begin(&cap);
    int rc = ns_config_load_file(&cfg, path, err, sizeof(err));
    capture_end(&cap);
    assert_int_equal(rc, 0);
    char want[1024];
    snprintf(want, sizeof(want), "load config properties file OK, %s\n", path);
    assert_string_equal(cap.out, want);
    snprintf(want, sizeof(want), "mqnamesrv: unknown property unknownThing at %s:4\n", path);
    assert_string_equal(cap.err, want);
    capture_free(&cap);

    assert_int_equal(cfg.listen_port, 19876);
    assert_false(cfg.enable_all_topic_list);
    assert_int_equal(cfg.client.client_worker_threads, 6);
    assert_string_equal(cfg.log_level, "WARN");
    assert_string_equal(cfg.product_env_name, "second");
    assert_string_equal(cfg.config_store_path, path); /* the -c path wins, as in Java */
    assert_string_equal(cfg.config_file, path);
    char *body = dump_sorted(&cfg);
    assert_non_null(strstr(body, "\nunknownThing=42\n"));
    assert_non_null(strstr(body, "\nclientWorkerThreads=6\n"));
    assert_non_null(strstr(body, "\nlogLevel=WARN\n"));
    assert_null(strstr(body, "portFile")); /* extensions not set stay out of 319 */
    snprintf(want, sizeof(want), "\nconfigStorePath=%s\n", path);
    assert_non_null(strstr(body, want));
    free(body);
    ns_config_free(&cfg);
    unlink(path);
    free(path);
}

typedef struct bad_file_case {
    const char *text;
    int rc;
    const char *err_suffix; /* err after "<path>" */
} bad_file_case_t;

static const bad_file_case_t bad_files[] = {
    {"# x\nlistenPort=9876\nserverWorkerThreads=many\n", NS_ECONFIG,
     ":3: serverWorkerThreads: 'many' is not a valid int"},
    {"listenPort=99999\n", NS_ECONFIG, ":1: listenPort: 99999 is out of range [0, 65535]"},
    {"\n\nclusterTest=maybe\n", NS_ECONFIG,
     ":3: clusterTest: 'maybe' is not a boolean (true or false)"},
    {"a=1\nb=\\u12\n", NS_EPROTO, ":2: Malformed \\uxxxx encoding."},
    /* a key given twice: Java keeps the last value, so only that one is checked */
    {"listenPort=bad\nlistenPort=1\n", 0, NULL},
    {"listenPort=1\nlistenPort=bad\n", NS_ECONFIG, ":2: listenPort: 'bad' is not a valid int"},
};

static void test_load_file_errors(void **state)
{
    (void)state;
    char *path = path_in_tmp("bad.properties");
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad_files); i++) {
        write_text(path, bad_files[i].text);
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        char err[512] = "";
        capture_t cap;
        capture_begin(&cap);
        int rc = ns_config_load_file(&cfg, path, err, sizeof(err));
        capture_end(&cap);
        capture_free(&cap);
        if (rc != bad_files[i].rc) {
            print_error("bad file %zu: rc %d err %s\n", i, rc, err);
            fail();
        }
        if (bad_files[i].err_suffix != NULL) {
            char want[512];
            snprintf(want, sizeof(want), "%s%s", path, bad_files[i].err_suffix);
            assert_string_equal(err, want);
        }
        ns_config_free(&cfg);
    }
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *missing = path_in_tmp("does-not-exist");
    char err[512];
    assert_int_equal(ns_config_load_file(&cfg, missing, err, sizeof(err)), -ENOENT);
    ns_config_free(&cfg);
    free(missing);
    unlink(path);
    free(path);
}

static void write_bytes(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* Loads path into a fresh config (output captured); returns the result, err filled. */
static int load_quietly(ns_config_t *cfg, const char *path, char *err, size_t errlen)
{
    ns_config_init_defaults(cfg);
    capture_t cap;
    capture_begin(&cap);
    int rc = ns_config_load_file(cfg, path, err, errlen);
    capture_end(&cap);
    capture_free(&cap);
    return rc;
}

/* Issue 23, A.8: a UTF-8 byte order mark (Windows Notepad) is skipped, so the first key counts
 * (it used to be an unknown key, and its value lost); a UTF-16 file is refused with a clear
 * reason instead of being read as keys with NUL bytes in them. */
static void test_load_file_encodings(void **state)
{
    (void)state;
    char *path = path_in_tmp("enc.properties");
    char err[512];
    ns_config_t cfg;
    static const char bom[] = "\xEF\xBB\xBFlistenPort=19877\nproductEnvName=bom\n";
    write_bytes(path, bom, sizeof(bom) - 1);
    assert_int_equal(load_quietly(&cfg, path, err, sizeof(err)), 0);
    assert_int_equal(cfg.listen_port, 19877);
    assert_string_equal(cfg.product_env_name, "bom");
    assert_int_equal(cfg.extra_count, 0);
    ns_config_free(&cfg);
    /* A BOM alone, and a BOM anywhere but at the start (Java's bytes: part of the text). */
    write_bytes(path, "\xEF\xBB\xBF", 3);
    assert_int_equal(load_quietly(&cfg, path, err, sizeof(err)), 0);
    ns_config_free(&cfg);
    static const char inner[] = "listenPort=19878\n\xEF\xBB\xBFx=1\n";
    write_bytes(path, inner, sizeof(inner) - 1);
    assert_int_equal(load_quietly(&cfg, path, err, sizeof(err)), 0);
    assert_int_equal(cfg.listen_port, 19878);
    assert_int_equal(cfg.extra_count, 1);
    ns_config_free(&cfg);

    static const char le_bom[] = "\xFF\xFEl\0i\0s\0t\0e\0n\0P\0o\0r\0t\0=\0"
                                 "1\0\n\0";
    static const char be_bom[] = "\xFE\xFF\0l\0i\0s\0t\0e\0n\0P\0o\0r\0t\0=\0"
                                 "1\0\n";
    static const char le[] = "l\0i\0s\0t\0e\0n\0P\0o\0r\0t\0=\0"
                             "1\0\n\0";
    const struct {
        const char *data;
        size_t len;
    } utf16[] = {{le_bom, sizeof(le_bom) - 1}, {be_bom, sizeof(be_bom) - 1}, {le, sizeof(le) - 1}};
    for (size_t i = 0; i < NS_ARRAY_SIZE(utf16); i++) {
        write_bytes(path, utf16[i].data, utf16[i].len);
        err[0] = '\0';
        int rc = load_quietly(&cfg, path, err, sizeof(err));
        if (rc != NS_ECONFIG || strstr(err, "the file is UTF-16") == NULL)
            fail_msg("UTF-16 file %zu: rc %d, err '%s'", i, rc, err);
        assert_int_equal(cfg.listen_port, 9876);
        ns_config_free(&cfg);
    }
    unlink(path);
    free(path);
}

/* Issue 23, A.5: a -c file of 100,000 unknown keys (each kept for 319 and 318) loads in linear
 * time: it used to take a look-up through every key before it per key (minutes under ASan);
 * the ctest time-out is what would fail. A repeated key still keeps its last value, at the
 * position of its first. */
static void test_load_file_many_keys(void **state)
{
    (void)state;
    enum { KEYS = 100000 };
    char *path = path_in_tmp("many.properties");
    ns_buf_t text = NS_BUF_INIT;
    for (int i = 0; i < KEYS; i++)
        ns_buf_appendf(&text, "unknownKey%d=v%d\n", i, i);
    ns_buf_appendf(&text, "unknownKey7=last\nlistenPort=19879\n");
    write_bytes(path, text.data, text.len);
    ns_buf_free(&text);
    ns_config_t cfg;
    char err[512];
    assert_int_equal(load_quietly(&cfg, path, err, sizeof(err)), 0);
    assert_int_equal(cfg.extra_count, KEYS);
    assert_string_equal(cfg.extra_keys[7], "unknownKey7");
    assert_string_equal(cfg.extra_values[7], "last");
    assert_string_equal(cfg.extra_values[KEYS - 1], "v99999");
    assert_int_equal(cfg.listen_port, 19879);
    /* --set on a known extra replaces it in place, as before. */
    assert_int_equal(ns_config_set(&cfg, "unknownKey9", "again", true, err, sizeof(err)), 0);
    assert_string_equal(cfg.extra_values[9], "again");
    assert_int_equal(cfg.extra_count, KEYS);
    ns_config_free(&cfg);
    unlink(path);
    free(path);
}

static void test_conf_file_loads_cleanly(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof(path), "%s/../../conf/namesrv.conf", NS_TEST_DATA_DIR);
    char *text = read_text(path);
    assert_non_null(text);
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char err[512] = "";
    capture_t cap;
    capture_begin(&cap);
    int rc = ns_config_load_file(&cfg, path, err, sizeof(err));
    capture_end(&cap);
    assert_int_equal(rc, 0);
    assert_string_equal(cap.err, ""); /* no unknown keys */
    capture_free(&cap);

    /* every NamesrvConfig/NettyServerConfig key and every extension is documented, commented
     * out with its default: "#key=default" (rocketmqHome and the $HOME paths shown as such) */
    ns_config_t def;
    ns_config_init_defaults(&def);
    ns_buf_t b = NS_BUF_INIT;
    ns_config_dump_java_order(&def, &b);
    const char *line = ns_buf_cstr(&b);
    int checked = 0;
    while (*line) {
        const char *nl = strchr(line, '\n');
        const char *eq = strchr(line, '=');
        char key[128];
        snprintf(key, sizeof(key), "\n#%.*s=", (int)(eq - line), line);
        if (checked >= 40) /* NettyClientConfig keys: not required in the conf file */
            break;
        if (strstr(text, key) == NULL) {
            print_error("conf/namesrv.conf lacks %s\n", key + 1);
            fail();
        }
        checked++;
        line = nl + 1;
    }
    assert_int_equal(checked, 40);
    const char *ext[] = {"frameMaxLength=16777216",
                         "connectionMaxPendingWriteBytes=67108864",
                         "logPath=",
                         "logLevel=INFO",
                         "portFile=",
                         "ioThreads=0",
                         "metricsExporterType=DISABLE",
                         "metricsPromExporterPort=5557",
                         "metricsPromExporterHost=",
                         "trafficLogEnable=false",
                         "trafficLogPath=",
                         "aclEnable=false",
                         "aclReadsRequireSignature=false",
                         "aclPlainFile=",
                         "routeSnapshotEnable=true",
                         "routeSnapshotPath=",
                         "routeSnapshotIntervalMillis=10000",
                         "routeSnapshotMaxAgeMillis=600000",
                         "routeAnswerCacheMaxBytes=8388608",

                         "tls.server.mode=permissive",
                         "tls.test.mode.enable=true",
                         "tls.server.certPath=",
                         "tls.server.keyPath=",
                         "tls.server.keyPassword=",
                         "tls.server.need.client.auth=none",
                         "tls.server.authClient=false",
                         "tls.server.trustCertPath=",
                         "tls.ciphers=",
                         "tls.protocols=",
                         "tls.config.file=/etc/rocketmq/tls.properties",
                         "tls.enable=false",
                         "tls.client.certPath=",
                         "tls.client.keyPath=",
                         "tls.client.keyPassword=",
                         "tls.client.authServer=false",
                         "tls.client.trustCertPath=",
                         "tlsHandshakeTimeoutMillis=10000",
                         "proxyProtocolTrustedProxies="};
    for (size_t i = 0; i < NS_ARRAY_SIZE(ext); i++) {
        char key[128];
        snprintf(key, sizeof(key), "\n#%s", ext[i]);
        assert_non_null(strstr(text, key));
    }
    ns_buf_free(&b);
    ns_config_free(&def);
    ns_config_free(&cfg);

    /* Uncommented, every documented default must load strictly without a warning. */
    ns_buf_t active = NS_BUF_INIT;
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        if (n > 1 && l[0] == '#' && l[1] >= 'a' && l[1] <= 'z' && memchr(l, '=', n) != NULL) {
            const char *home = strstr(l, "$HOME");
            if (home != NULL && home < l + n) {
                ns_buf_append(&active, l + 1, (size_t)(home - l - 1));
                ns_buf_append_str(&active, tmpdir);
                ns_buf_append(&active, home + 5, (size_t)(l + n - home - 5));
            } else {
                ns_buf_append(&active, l + 1, n - 1);
            }
            ns_buf_append_char(&active, '\n');
        }
        l += n + (nl ? 1 : 0);
    }
    char *active_path = path_in_tmp("active.conf");
    write_text(active_path, ns_buf_cstr(&active));
    ns_config_init_defaults(&cfg);
    capture_begin(&cap);
    rc = ns_config_load_file(&cfg, active_path, err, sizeof(err));
    capture_end(&cap);
    if (rc != 0 || cap.err[0] != '\0') {
        print_error("uncommented conf: rc %d err %s stderr %s\n", rc, err, cap.err);
        fail();
    }
    capture_free(&cap);
    assert_int_equal(cfg.listen_port, 9876);
    assert_int_equal(cfg.frame_max_length, 16777216);
    assert_string_equal(cfg.rocketmq_home, ""); /* "#rocketmqHome=" */
    ns_config_free(&cfg);
    unlink(active_path);
    free(active_path);
    ns_buf_free(&active);
    free(text);
}

/* ---- command line ------------------------------------------------------------------------- */

static void test_cli_help(void **state)
{
    (void)state;
    assert_string_equal(ns_config_usage, java_usage);
    const char *forms[][2] = {{"-h", NULL}, {"--help", NULL}, {"--h", NULL}, {"-ph", NULL}};
    for (size_t i = 0; i < NS_ARRAY_SIZE(forms); i++) {
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        assert_int_equal(run_cli(&cfg, &cap, forms[i]), -1); /* exit 0 */
        assert_string_equal(cap.out, java_usage);
        assert_string_equal(cap.err, "");
        capture_free(&cap);
        ns_config_free(&cfg);
    }
}

typedef struct cli_err_case {
    const char *args[6];
    const char *err;
} cli_err_case_t;

/* Each checked against Java NamesrvStartup 5.5.0 (commons-cli 1.5.0). */
static const cli_err_case_t cli_errors[] = {
    {{"-x"}, "Unrecognized option: -x\n"},
    {{"-m"}, "Unrecognized option: -m\n"},
    {{"-px"}, "Unrecognized option: -px\n"},
    {{"--foo", "-p"}, "Unrecognized option: --foo\n"},
    {{"-p=1"}, "Unrecognized option: -p=1\n"},
    {{"--printConfigItem=x"}, "Unrecognized option: --printConfigItem=x\n"},
    {{"-c"}, "Missing argument for option: c\n"},
    {{"-c", "-p"}, "Missing argument for option: c\n"},
    {{"-c", "--", "-p"}, "Missing argument for option: c\n"},
    {{"-p", "-c"}, "Missing argument for option: c\n"},
    {{"-n"}, "Missing argument for option: n\n"},
    {{"-p", "-h", "-x"}, "Unrecognized option: -x\n"},
    {{"--set"}, "Missing argument for option: set\n"},
};

static void test_cli_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(cli_errors); i++) {
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        int rc = run_cli(&cfg, &cap, cli_errors[i].args);
        if (rc != -2 || strcmp(cap.err, cli_errors[i].err) != 0 ||
            strcmp(cap.out, java_usage) != 0) {
            print_error("cli error case %zu: rc %d stderr '%s'\n", i, rc, cap.err);
            fail();
        }
        capture_free(&cap);
        ns_config_free(&cfg);
    }
}

static void test_cli_config_file_forms(void **state)
{
    (void)state;
    char *a = path_in_tmp("a.conf");
    char *b = path_in_tmp("b.conf");
    write_text(a, "productEnvName=A\n");
    write_text(b, "productEnvName=B\n");
    char dash_c[600], eq_c[600], long_eq[600], pref_eq[600], quoted[600], glued[600];
    snprintf(dash_c, sizeof(dash_c), "-c%s", a);
    snprintf(eq_c, sizeof(eq_c), "-c=%s", a);
    snprintf(long_eq, sizeof(long_eq), "--configFile=%s", a);
    snprintf(pref_eq, sizeof(pref_eq), "--conf=%s", a);
    snprintf(quoted, sizeof(quoted), "\"%s\"", a);
    snprintf(glued, sizeof(glued), "-configFile%s", a);
    const char *forms[][7] = {
        {"-c", a, "-p"},
        {dash_c, "-p"},
        {eq_c, "-p"},
        {"--configFile", a, "-p"},
        {long_eq, "-p"},
        {pref_eq, "-p"},
        {"-configFile", a, "-p"},
        {glued, "-p"},
        {"-pc", a},
        {"-c", a, "-c", b, "-p"}, /* the first -c wins */
        {"-c", quoted, "-p"},     /* commons-cli strips the quotes */
        {"foo", "-n", "1.2.3.4:9876", "-c", a, "bar", "-p"},
        {"--namesrvAddr=x", "-c", a, "-p", "--", "-x"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(forms); i++) {
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        int rc = run_cli(&cfg, &cap, forms[i]);
        char want[700];
        snprintf(want, sizeof(want), "load config properties file OK, %s\n", a);
        if (rc != 0 || !cfg.print_config || strcmp(cfg.product_env_name, "A") != 0 ||
            strcmp(cap.out, want) != 0 || strcmp(cap.err, "") != 0) {
            print_error("form %zu: rc %d out '%s' err '%s'\n", i, rc, cap.out, cap.err);
            fail();
        }
        capture_free(&cap);
        ns_config_free(&cfg);
    }
    /* No -p: goes on with print_config false. */
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    const char *plain[] = {"-n", "127.0.0.1:9876", NULL};
    assert_int_equal(run_cli(&cfg, &cap, plain), 0);
    assert_false(cfg.print_config);
    assert_null(cfg.config_file);
    capture_free(&cap);
    ns_config_free(&cfg);
    unlink(a);
    unlink(b);
    free(a);
    free(b);
}

static void test_cli_file_failures(void **state)
{
    (void)state;
    char *missing = path_in_tmp("nope.conf");
    char *bad = path_in_tmp("bad.conf");
    char *malformed = path_in_tmp("malformed.conf");
    write_text(bad, "listenPort=x\n");
    write_text(malformed, "k=\\uZZZZ\n");
    char *fifo = path_in_tmp("fifo.conf");
    unlink(fifo);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *huge = path_in_tmp("huge.conf");
    FILE *hf = fopen(huge, "w");
    assert_non_null(hf);
    assert_int_equal(ftruncate(fileno(hf), (off_t)NS_CONFIG_FILE_MAX + 1), 0);
    fclose(hf);
    struct {
        const char *file;
        int rc;
        const char *err_has;
    } cases[] = {
        {missing, -256, "cannot read config file"},
        {bad, -2, ":1: listenPort: 'x' is not a valid int"},
        {malformed, -256, ":1: Malformed \\uxxxx encoding."},
        /* Issue 23, A.5: nothing but a regular file is read (a FIFO used to block the start
         * for ever, /dev/zero to fill memory), and nothing larger than the cap. */
        {fifo, -256, "not a regular file"},
        {"/dev/zero", -256, "not a regular file"},
        {huge, -256, "larger than 16777216 bytes"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(cases); i++) {
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        const char *args[] = {"-c", cases[i].file, "-p", NULL};
        assert_int_equal(run_cli(&cfg, &cap, args), cases[i].rc);
        assert_non_null(strstr(cap.err, cases[i].err_has));
        assert_non_null(strstr(cap.err, cases[i].file));
        capture_free(&cap);
        ns_config_free(&cfg);
    }
    unlink(bad);
    unlink(malformed);
    unlink(fifo);
    unlink(huge);
    free(missing);
    free(bad);
    free(malformed);
    free(fifo);
    free(huge);
}

static void test_cli_set(void **state)
{
    (void)state;
    char *a = path_in_tmp("s.conf");
    write_text(a, "listenPort=1111\nportFile=/from/file\n");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    const char *args[] = {"--set", "listenPort=0",          "-c", a, "--set=portFile=/tmp/p",
                          "--set", "clientWorkerThreads=3", NULL};
    assert_int_equal(run_cli(&cfg, &cap, args), 0);
    assert_string_equal(cap.err, "");
    capture_free(&cap);
    assert_int_equal(cfg.listen_port, 0); /* --set applies after the file */
    assert_string_equal(cfg.port_file, "/tmp/p");
    assert_int_equal(cfg.client.client_worker_threads, 3);
    char *body = dump_sorted(&cfg);
    assert_non_null(strstr(body, "\nportFile=/tmp/p\n"));
    assert_non_null(strstr(body, "\nlistenPort=0\n"));
    free(body);
    ns_config_free(&cfg);

    struct {
        const char *arg;
        const char *err_has;
    } bad[] = {
        {"listenPort=x", "mqnamesrv: --set listenPort=x: listenPort: 'x' is not a valid int\n"},
        {"noSuchKey=1", "mqnamesrv: --set noSuchKey=1: unknown property\n"},
        {"listenPort", "mqnamesrv: --set listenPort: expected key=value\n"},
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(bad); i++) {
        ns_config_init_defaults(&cfg);
        const char *args2[] = {"--set", bad[i].arg, NULL};
        assert_int_equal(run_cli(&cfg, &cap, args2), -2);
        assert_string_equal(cap.err, bad[i].err_has);
        capture_free(&cap);
        ns_config_free(&cfg);
    }
    unlink(a);
    free(a);
}

/* ---- 318 ---------------------------------------------------------------------------------- */

static int count_dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void test_update_blacklist_and_bad_text(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *store = path_in_tmp("bl/namesrv.properties");
    free(cfg.config_store_path);
    cfg.config_store_path = strdup(store);
    const char *refused[] = {"kvConfigPath=/x", "configStorePath=/x", "rocketmqHome=/x",
                             "configBlackList=", "listenPort=1\nconfigStorePath=/x"};
    for (size_t i = 0; i < NS_ARRAY_SIZE(refused); i++)
        assert_int_equal(ns_config_update(&cfg, refused[i], strlen(refused[i]), NULL, 0),
                         NS_CONFIG_UPDATE_BLACKLISTED);
    assert_int_equal(cfg.listen_port, 9876); /* nothing applied */
    assert_int_equal(ns_config_update(&cfg, "a=\\u12", 6, NULL, 0), NS_CONFIG_UPDATE_BAD_TEXT);
    struct stat st;
    assert_int_equal(stat(store, &st), -1); /* nothing written */

    /* configBlackList entries (set at startup) add to the fixed set */
    ns_config_set(&cfg, "configBlackList", "listenPort;;bindAddress;", true, NULL, 0);
    assert_int_equal(ns_config_update(&cfg, "bindAddress=1.2.3.4", 19, NULL, 0),
                     NS_CONFIG_UPDATE_BLACKLISTED);
    assert_int_equal(ns_config_update(&cfg, "listenPort=1", 12, NULL, 0),
                     NS_CONFIG_UPDATE_BLACKLISTED);
    assert_int_equal(ns_config_update(&cfg, "=x", 2, NULL, 0),
                     NS_CONFIG_UPDATE_BLACKLISTED); /* "" */
    ns_config_free(&cfg);
    free(store);
}

static void test_update_applies_and_persists(void **state)
{
    (void)state;
    char *dir = path_in_tmp("store");
    char *store = path_in_tmp("store/namesrv.properties");
    char *bak = path_in_tmp("store/namesrv.properties.bak");
    char *conf = path_in_tmp("store-conf.properties");
    write_text(conf, "clientWorkerThreads=6\nmystery=1\n");

    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&cfg, conf, NULL, 0), 0);
    capture_end(&cap);
    capture_free(&cap);
    free(cfg.config_store_path); /* as if -c had been this path */
    cfg.config_store_path = strdup(store);

    const char *body = "# mqadmin updateNamesrvConfig\n"
                       "enableAllTopicList=false\n"
                       "orderMessageEnable=true\n"
                       "waitSecondsForService=7\n"
                       "listenPort=notanumber\n"
                       "serverWorkerThreads=32\n"
                       "clientWorkerThreads=9\n"
                       "mystery=2\n"
                       "brandNew=3\n"
                       "productEnvName=caf\xc3\xa9\n";
    assert_int_equal(ns_config_update(&cfg, body, strlen(body), NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_false(NS_CFG_GET(cfg.enable_all_topic_list));
    assert_true(NS_CFG_GET(cfg.order_message_enable));
    assert_int_equal(NS_CFG_GET(cfg.wait_seconds_for_service), 7);
    assert_int_equal(cfg.listen_port, 9876);               /* bad number ignored, as in Java */
    assert_int_equal(cfg.server_worker_threads, 32);       /* applied, effective at restart */
    assert_int_equal(cfg.client.client_worker_threads, 6); /* 318 skips NettyClientConfig */
    assert_string_equal(cfg.product_env_name, "caf\xc3\x83\xc2\xa9"); /* ISO-8859-1 reading */

    char *dump = dump_sorted(&cfg);
    assert_non_null(strstr(dump, "\nclientWorkerThreads=9\n")); /* present extra: text updated */
    assert_non_null(strstr(dump, "\nmystery=2\n"));
    assert_null(strstr(dump, "brandNew")); /* unknown and not present: dropped */
    char *file = read_text(store);
    assert_non_null(file);
    /* the file holds the 319 pairs, escaped as Properties.store writes them */
    ns_buf_t want = NS_BUF_INIT;
    ns_config_dump_file(&cfg, &want);
    assert_string_equal(file, ns_buf_cstr(&want));
    ns_buf_free(&want);
    assert_non_null(strstr(dump, "\nproductEnvName=caf\xc3\x83\xc2\xa9\n"));
    assert_non_null(strstr(file, "\nproductEnvName=caf\\u00C3\\u00A9\n"));
    free(file);
    free(dump);
    assert_int_equal(access(bak, F_OK), -1); /* no previous file, no .bak */

    /* a second update keeps the previous file as .bak */
    char *before = read_text(store);
    assert_int_equal(ns_config_update(&cfg, "enableTopicList=false", 21, NULL, 0),
                     NS_CONFIG_UPDATE_OK);
    char *bak_text = read_text(bak);
    assert_string_equal(bak_text, before);
    char *after = read_text(store);
    assert_non_null(strstr(after, "\nenableTopicList=false\n"));
    assert_int_equal(count_dir_entries(dir), 2); /* no temp file left behind */
    free(before);
    free(bak_text);
    free(after);

    /* logLevel is applied to the logger at once */
    ns_log_level_t old = ns_log_get_level();
    assert_int_equal(ns_config_update(&cfg, "logLevel=ERROR", 14, NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_int_equal(ns_log_get_level(), NS_LOG_ERROR);
    ns_log_set_level(old);
    dump = dump_sorted(&cfg);
    assert_non_null(strstr(dump, "\nlogLevel=ERROR\n"));
    free(dump);

    /* empty text: nothing changes but the file is rewritten, as Java does */
    assert_int_equal(ns_config_update(&cfg, "", 0, NULL, 0), NS_CONFIG_UPDATE_OK);

    ns_config_free(&cfg);
    unlink(store);
    unlink(bak);
    rmdir(dir);
    unlink(conf);
    free(dir);
    free(store);
    free(bak);
    free(conf);
}

static void test_update_persist_failure(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *blocker = path_in_tmp("blocker");
    write_text(blocker, "a file, not a directory\n");
    char *store = path_in_tmp("blocker/namesrv.properties");
    free(cfg.config_store_path);
    cfg.config_store_path = strdup(store);
    assert_int_equal(ns_config_update(&cfg, "enableAllTopicList=false", 24, NULL, 0),
                     NS_CONFIG_UPDATE_PERSIST_FAILED);
    assert_false(NS_CFG_GET(cfg.enable_all_topic_list)); /* applied in memory all the same */
    ns_config_free(&cfg);
    unlink(blocker);
    free(blocker);
    free(store);
}

/* Issue 23, A.7 (issue 13, item 1 before it): a value holding a line break (sent as \n, \r or
 * \u000a) would show in the 319 text as a line of its own, which readers take for another key
 * (productEnvName=x\nkvConfigPath=/srv/evil): 318 refuses it with 16 and a remark that says
 * why, for every key it would store (a known one, an extra of the -c file), and changes
 * nothing, neither memory nor file. An unknown key is ignored as before (mergeIfExist). */
static void test_update_refuses_line_breaks(void **state)
{
    (void)state;
    char *store = path_in_tmp("escaped.properties");
    static const char *const bodies[] = {
        "productEnvName=x\\nkvConfigPath=/srv/evil",
        "productEnvName=x\\rrocketmqHome=/srv/evil",
        "productEnvName=x\\u000akvConfigPath=/srv/evil\\u000d\\u000arocketmqHome=/srv/evil",
        "productEnvName=x\\n#kvConfigPath=/srv/evil\\n!y\\n kvConfigPath = /srv/evil",
        "listenPort=9876\nclientWorkerThreads=4\\n5",
        "someExtraKey=a\\u000dportFile=/tmp/p",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(bodies); i++) {
        write_text(store, "listenPort=9876\nclientWorkerThreads=4\nsomeExtraKey=plain\n");
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        capture_begin(&cap);
        assert_int_equal(ns_config_load_file(&cfg, store, NULL, 0), 0);
        capture_end(&cap);
        capture_free(&cap);
        char *before = read_text(store);
        char *dump_before = dump_sorted(&cfg);
        char why[256] = "";
        capture_begin(&cap);
        ns_config_update_result_t res =
            ns_config_update(&cfg, bodies[i], strlen(bodies[i]), why, sizeof(why));
        capture_end(&cap);
        capture_free(&cap);
        if (res != NS_CONFIG_UPDATE_NOT_REMOTE || strstr(why, "holds a line break") == NULL)
            fail_msg("body %zu: result %d, why '%s'", i, (int)res, why);
        char *dump_after = dump_sorted(&cfg);
        assert_string_equal(dump_before, dump_after);
        char *after = read_text(store);
        assert_string_equal(before, after);
        free(before);
        free(after);
        free(dump_before);
        free(dump_after);
        ns_config_free(&cfg);
    }
    /* A line break in a key nobody knows: ignored, as Java ignores unknown keys. */
    write_text(store, "listenPort=9876\n");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&cfg, store, NULL, 0), 0);
    const char *unknown = "nobodyKnowsMe=a\\nb\nproductEnvName=fine";
    assert_int_equal(ns_config_update(&cfg, unknown, strlen(unknown), NULL, 0),
                     NS_CONFIG_UPDATE_OK);
    capture_end(&cap);
    capture_free(&cap);
    assert_string_equal(cfg.product_env_name, "fine");
    ns_config_free(&cfg);
    unlink(store);
    free(store);
}

/* A -c file may still hold a value with a line break (the operator's own text): the file 318
 * writes escapes it (Properties.store), so that the next start reads back exactly that value and
 * no line of it as a key of its own. */
static void test_update_persists_values_escaped(void **state)
{
    (void)state;
    char *store = path_in_tmp("escaped.properties");
    static const char *const files[] = {
        "productEnvName=x\\nkvConfigPath=/srv/evil\n",
        "productEnvName=x\\rrocketmqHome=/srv/evil\n",
        "productEnvName=x\\u000akvConfigPath=/srv/evil\\u000d\\u000arocketmqHome=/srv/evil\n",
        "productEnvName=x\\n#kvConfigPath=/srv/evil\\n!y\\n kvConfigPath = /srv/evil\n",
    };
    static const char *const values[] = {
        "x\nkvConfigPath=/srv/evil",
        "x\rrocketmqHome=/srv/evil",
        "x\nkvConfigPath=/srv/evil\r\nrocketmqHome=/srv/evil",
        "x\n#kvConfigPath=/srv/evil\n!y\n kvConfigPath = /srv/evil",
    };
    for (size_t i = 0; i < NS_ARRAY_SIZE(files); i++) {
        write_text(store, files[i]);
        ns_config_t cfg;
        ns_config_init_defaults(&cfg);
        capture_t cap;
        capture_begin(&cap);
        assert_int_equal(ns_config_load_file(&cfg, store, NULL, 0), 0);
        capture_end(&cap);
        capture_free(&cap);
        char *kv_path = strdup(cfg.kv_config_path);
        char *home = cfg.rocketmq_home ? strdup(cfg.rocketmq_home) : NULL;
        const char *body = "listenPort=9877";
        assert_int_equal(ns_config_update(&cfg, body, strlen(body), NULL, 0), NS_CONFIG_UPDATE_OK);
        assert_string_equal(cfg.product_env_name, values[i]);
        /* the file: no line of its own for the smuggled keys */
        char *file = read_text(store);
        assert_null(strstr(file, "\nkvConfigPath=/srv/evil"));
        assert_null(strstr(file, "\nrocketmqHome=/srv/evil"));
        assert_null(strstr(file, "\r"));
        free(file);
        /* the next start reads back exactly what was there, and nothing else */
        ns_config_t again;
        ns_config_init_defaults(&again);
        capture_begin(&cap);
        assert_int_equal(ns_config_load_file(&again, store, NULL, 0), 0);
        capture_end(&cap);
        capture_free(&cap);
        assert_string_equal(again.product_env_name, values[i]);
        assert_string_equal(again.kv_config_path, kv_path);
        if (home != NULL)
            assert_string_equal(again.rocketmq_home, home);
        char *d1 = dump_sorted(&cfg), *d2 = dump_sorted(&again);
        assert_string_equal(d1, d2);
        free(d1);
        free(d2);
        free(kv_path);
        free(home);
        ns_config_free(&again);
        ns_config_free(&cfg);
    }
    /* U+0000: 319 sends a NUL byte (as Java), the file \u0000, and it reads back */
    write_text(store, "listenPort=9876\n");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&cfg, store, NULL, 0), 0);
    capture_end(&cap);
    capture_free(&cap);
    const char *body = "productEnvName=a\\u0000b";
    assert_int_equal(ns_config_update(&cfg, body, strlen(body), NULL, 0), NS_CONFIG_UPDATE_OK);
    ns_buf_t reply = NS_BUF_INIT;
    ns_config_dump_sorted(&cfg, &reply);
    assert_non_null(memmem(reply.data, reply.len, "\nproductEnvName=a\0b\n", 19));
    ns_buf_free(&reply);
    char *file = read_text(store);
    assert_non_null(strstr(file, "\nproductEnvName=a\\u0000b\n"));
    free(file);
    ns_config_t again;
    ns_config_init_defaults(&again);
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&again, store, NULL, 0), 0);
    capture_end(&cap);
    capture_free(&cap);
    assert_string_equal(again.product_env_name, "a\xc0\x80"
                                                "b");
    ns_config_free(&again);
    ns_config_free(&cfg);
    unlink(store);
    free(store);
}

/* A value 318 would persist as text the -c loader refuses would keep the next start from
 * succeeding: refused like a key that is not remote (16), nothing applied, nothing written. */
static void test_update_refuses_values_that_would_not_load(void **state)
{
    (void)state;
    char *store = path_in_tmp("loads.properties");
    write_text(store, "clientWorkerThreads=4\n");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    capture_t cap;
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&cfg, store, NULL, 0), 0);
    capture_end(&cap);
    capture_free(&cap);
    char *before = read_text(store);
    static const char *const refused[] = {
        "logLevel=LOUD\n",
        "logLevel=\n",
        "enableTopicList=false\nclientWorkerThreads=many\n",
        "clientWorkerThreads=99999999999\n",
    };
    ns_log_set_stdout(true);
    for (size_t i = 0; i < NS_ARRAY_SIZE(refused); i++) {
        char why[256] = "";
        capture_begin(&cap);
        assert_int_equal(ns_config_update(&cfg, refused[i], strlen(refused[i]), why, sizeof(why)),
                         NS_CONFIG_UPDATE_NOT_REMOTE);
        capture_end(&cap);
        capture_free(&cap);
        assert_non_null(strstr(why, "remotely"));
        char *now = read_text(store);
        assert_string_equal(now, before); /* nothing written */
        free(now);
    }
    ns_log_set_stdout(false);
    assert_true(NS_CFG_GET(cfg.enable_topic_list));
    assert_string_equal(cfg.log_level, "INFO");
    /* good values go through, and the file loads */
    const char *ok = "logLevel=WARN\nclientWorkerThreads=8\n";
    ns_log_level_t old = ns_log_get_level();
    assert_int_equal(ns_config_update(&cfg, ok, strlen(ok), NULL, 0), NS_CONFIG_UPDATE_OK);
    ns_log_set_level(old);
    ns_config_t again;
    ns_config_init_defaults(&again);
    char err[256] = "";
    capture_begin(&cap);
    assert_int_equal(ns_config_load_file(&again, store, err, sizeof(err)), 0);
    capture_end(&cap);
    capture_free(&cap);
    assert_string_equal(again.log_level, "WARN");
    assert_int_equal(again.client.client_worker_threads, 8);
    /* a NettyClientConfig key the -c file did not give is dropped, as Java's mergeIfExist does */
    assert_int_equal(ns_config_update(&cfg, "connectTimeoutMillis=x", 22, NULL, 0),
                     NS_CONFIG_UPDATE_OK);
    ns_config_free(&again);
    ns_config_free(&cfg);
    free(before);
    unlink(store);
    free(store);
}

/* 318 refuses, as a whole, a key it may never set (a file, a directory, a protection) and a
 * number outside the range it may set; the file is not rewritten and nothing is applied. */
static void test_update_refuses_what_is_not_remote(void **state)
{
    (void)state;
    char *store = path_in_tmp("range.properties");
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    free(cfg.config_store_path);
    cfg.config_store_path = strdup(store);
    static const char *const refused[] = {
        "frameMaxLength=0\nenableTopicList=false\n",
        "enableTopicList=false\nlistenPort=-1\n",
        "listenPort=0\n", /* the -c file may ask for an ephemeral port, 318 may not */
        "connectionMaxPendingWriteBytes=0\n",
        "connectionMaxPendingWriteBytes=9999999999999\n",
        "serverChannelMaxIdleTimeSeconds=1\n",
        "serverChannelMaxIdleTimeSeconds=0\n",
        "portFile=/tmp/evil\n",
        "logPath=/tmp/evil.log\n",
        "enableTopicList=false\nlogPath=\n",
        /* with needWaitForService (a run-time switch) this would refuse every route query for
         * 68 years from the start on */
        "needWaitForService=true\nwaitSecondsForService=2147483647\n",
        /* no remote request may open or move a listening port, not even for the next start */
        "metricsExporterType=PROM\n",
        "metricsPromExporterPort=5558\n",
        "metricsPromExporterHost=0.0.0.0\n",
        "trafficLogPath=/tmp/evil.log\n",
        /* the route snapshot: its file, switching the warm restart off, and intervals or ages
         * that would make it a constant write or never usable */
        "routeSnapshotPath=/tmp/evil.bin\n",
        "routeSnapshotEnable=false\n",
        "routeSnapshotIntervalMillis=100\n",
        "routeSnapshotIntervalMillis=86400000\n",
        "routeSnapshotMaxAgeMillis=1000\n",
        /* the answer cache: neither off nor unbounded from afar */
        "routeAnswerCacheMaxBytes=0\n",
        "routeAnswerCacheMaxBytes=1073741825\n",
    };
    ns_log_set_stdout(true);
    for (size_t i = 0; i < NS_ARRAY_SIZE(refused); i++) {
        char why[256] = "";
        capture_t cap;
        capture_begin(&cap);
        assert_int_equal(ns_config_update(&cfg, refused[i], strlen(refused[i]), why, sizeof(why)),
                         NS_CONFIG_UPDATE_NOT_REMOTE);
        capture_end(&cap);
        assert_non_null(strstr(why, "remotely"));
        assert_non_null(strstr(cap.out, "updateConfig refused"));
        capture_free(&cap);
    }
    ns_log_set_stdout(false);
    assert_int_equal(cfg.frame_max_length, 16777216);
    assert_int_equal(cfg.listen_port, 9876);
    assert_int_equal(cfg.max_conn_output_bytes, 67108864);
    assert_string_equal(cfg.port_file, "");
    assert_string_equal(cfg.metrics_exporter_type, "DISABLE");
    assert_int_equal(cfg.metrics_prom_exporter_port, 5557);
    assert_true(NS_CFG_GET(cfg.enable_topic_list)); /* the whole update was refused */
    assert_false(NS_CFG_GET(cfg.need_wait_for_service));
    assert_int_equal(NS_CFG_GET(cfg.wait_seconds_for_service), 45);
    assert_int_equal(access(store, F_OK), -1); /* and nothing was written */
    assert_true(cfg.route_snapshot_enable);
    assert_string_equal(cfg.route_snapshot_path, "");
    assert_int_equal(NS_CFG_GET(cfg.route_snapshot_interval_ms), 10000);
    assert_int_equal(cfg.route_snapshot_max_age_ms, 600000);

    /* inside the remote range: applied (for the next start) and persisted */
    const char *ok = "connectionMaxPendingWriteBytes=2097152\nframeMaxLength=33554432\n";
    assert_int_equal(ns_config_update(&cfg, ok, strlen(ok), NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_int_equal(cfg.max_conn_output_bytes, 2097152);
    ns_config_t again;
    ns_config_init_defaults(&again);
    char why[256] = "";
    assert_int_equal(ns_config_load_file(&again, store, why, sizeof(why)), 0);
    assert_int_equal(again.frame_max_length, 33554432);
    ns_config_free(&again);
    /* the snapshot interval applies at once within its remote range */
    const char *iv = "routeSnapshotIntervalMillis=2000\n";
    assert_int_equal(ns_config_update(&cfg, iv, strlen(iv), NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_int_equal(NS_CFG_GET(cfg.route_snapshot_interval_ms), 2000);
    /* and so does the answer cache's bound */
    assert_int_equal(NS_CFG_GET(cfg.route_answer_cache_max_bytes), 8388608);
    const char *cb = "routeAnswerCacheMaxBytes=65536\n";
    assert_int_equal(ns_config_update(&cfg, cb, strlen(cb), NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_int_equal(NS_CFG_GET(cfg.route_answer_cache_max_bytes), 65536);
    assert_int_equal(ns_config_set(&cfg, "routeAnswerCacheMaxBytes", "0", true, NULL, 0), 1);
    /* the -c file and --set still take the full range */
    assert_int_equal(ns_config_set(&cfg, "connectionMaxPendingWriteBytes", "0", true, NULL, 0), 1);
    /* metricsExporterType: PROM or DISABLE (any case); RocketMQ's OTLP_GRPC and LOG refused */
    assert_false(ns_config_metrics_enabled(&cfg));
    assert_int_equal(ns_config_set(&cfg, "metricsExporterType", "prom", true, NULL, 0), 1);
    assert_true(ns_config_metrics_enabled(&cfg));
    char err[160] = "";
    assert_int_equal(
        ns_config_set(&cfg, "metricsExporterType", "OTLP_GRPC", true, err, sizeof(err)),
        NS_ECONFIG);
    assert_string_equal(err, "metricsExporterType: 'OTLP_GRPC' is not PROM or DISABLE");
    assert_int_equal(ns_config_set(&cfg, "metricsPromExporterPort", "65536", true, NULL, 0),
                     NS_ECONFIG);
    assert_int_equal(cfg.max_conn_output_bytes, 0);
    ns_config_free(&cfg);
    unlink(store);
    free(store);
}

/* Issue 13: every budget has a protecting default, 318 may tune it but never switch it off,
 * and the register-body limits apply at once. */
static void test_budget_keys(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *store = path_in_tmp("budgets.properties");
    free(cfg.config_store_path);
    cfg.config_store_path = strdup(store);
    assert_int_equal(cfg.max_partial_frame_bytes, 268435456);
    assert_int_equal(cfg.frame_receive_timeout_ms, 30000);
    assert_int_equal(cfg.max_worker_queue_bytes, 67108864);
    assert_int_equal(cfg.conn_max_worker_requests, 16);
    assert_int_equal(cfg.conn_max_worker_bytes, 4194304);
    assert_int_equal(cfg.max_pending_write_bytes, 268435456);
    assert_int_equal(cfg.register_max_inflated, 268435456);
    assert_int_equal(cfg.register_max_ratio, 100);
    assert_int_equal(cfg.register_max_cpu_ms, 1000);
    static const char *const off[] = {
        "serverMaxPartialFrameBytes=0\n",
        "frameReceiveTimeoutMillis=0\n",
        "serverMaxWorkerQueueBytes=0\n",
        "connectionMaxWorkerRequests=0\n",
        "connectionMaxWorkerBytes=0\n",
        "serverMaxPendingWriteBytes=0\n",
        "registerBodyMaxInflateRatio=0\n",
        "registerBodyMaxCpuMillis=0\n",
        "registerBodyMaxInflatedBytes=9999999999\n",
        "connectionMaxWorkerRequests=100000\n",
    };
    ns_log_set_stdout(false);
    for (size_t i = 0; i < NS_ARRAY_SIZE(off); i++) {
        char why[256] = "";
        assert_int_equal(ns_config_update(&cfg, off[i], strlen(off[i]), why, sizeof(why)),
                         NS_CONFIG_UPDATE_NOT_REMOTE);
        assert_non_null(strstr(why, "remotely"));
    }
    const char *tune = "registerBodyMaxInflateRatio=50\nserverMaxWorkerQueueBytes=33554432\n";
    assert_int_equal(ns_config_update(&cfg, tune, strlen(tune), NULL, 0), NS_CONFIG_UPDATE_OK);
    assert_int_equal(NS_CFG_GET(cfg.register_max_ratio), 50);
    assert_int_equal(cfg.max_worker_queue_bytes, 33554432);
    /* The -c file may switch them off. */
    assert_int_equal(ns_config_set(&cfg, "serverMaxPartialFrameBytes", "0", true, NULL, 0), 1);
    assert_int_equal(cfg.max_partial_frame_bytes, 0);
    char err[128];
    assert_int_equal(
        ns_config_set(&cfg, "connectionMaxWorkerRequests", "0", true, err, sizeof(err)),
        NS_ECONFIG);
    ns_config_free(&cfg);
    unlink(store);
    free(store);
}

static void test_update_replaces_strings_safely(void **state)
{
    (void)state;
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char *store = path_in_tmp("cow.properties");
    free(cfg.config_store_path);
    cfg.config_store_path = strdup(store);
    const char *seen = cfg.bind_address; /* a reader on another thread */
    assert_int_equal(ns_config_update(&cfg, "bindAddress=127.0.0.1", 21, NULL, 0),
                     NS_CONFIG_UPDATE_OK);
    assert_string_equal(cfg.bind_address, "127.0.0.1");
    assert_string_equal(seen, "0.0.0.0"); /* still valid until ns_config_free */
    ns_config_free(&cfg);
    unlink(store);
    free(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_print_matches_java),
        cmocka_unit_test(test_319_default_body),
        cmocka_unit_test(test_home_missing),
        cmocka_unit_test(test_set_conversions),
        cmocka_unit_test(test_set_client_and_shared_keys),
        cmocka_unit_test(test_load_file),
        cmocka_unit_test(test_load_file_errors),
        cmocka_unit_test(test_load_file_encodings),
        cmocka_unit_test(test_load_file_many_keys),
        cmocka_unit_test(test_conf_file_loads_cleanly),
        cmocka_unit_test(test_cli_help),
        cmocka_unit_test(test_cli_errors),
        cmocka_unit_test(test_cli_config_file_forms),
        cmocka_unit_test(test_cli_file_failures),
        cmocka_unit_test(test_cli_set),
        cmocka_unit_test(test_update_blacklist_and_bad_text),
        cmocka_unit_test(test_update_applies_and_persists),
        cmocka_unit_test(test_update_persist_failure),
        cmocka_unit_test(test_update_refuses_what_is_not_remote),
        cmocka_unit_test(test_budget_keys),
        cmocka_unit_test(test_update_refuses_line_breaks),
        cmocka_unit_test(test_update_persists_values_escaped),
        cmocka_unit_test(test_update_refuses_values_that_would_not_load),
        cmocka_unit_test(test_update_replaces_strings_safely),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
