/* The controller's configuration keys (ControllerConfig, JraftConfig) against what Java 5.5.0
 * does with them, recorded by tests/interop/controller/record.sh: a file in the shape of
 * Apache's cluster-3n-namesrv-plugin files (an XML comment block first) is read as Java's
 * Properties reads it (props_java.txt), -p prints ControllerConfig in Java's order, 1010's
 * body has the keys of Java's (golden_one.jsonl); 1009 changes the run-time keys only, 318
 * none. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ns_atomic_file.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_properties.h"

#define CTL_DIR NS_TEST_DATA_DIR "/../interop/controller"

static char *slurp(const char *path)
{
    ns_buf_t b = NS_BUF_INIT;
    assert_int_equal(ns_afile_read(path, SIZE_MAX, &b), 0);
    char *s = ns_xstrdup(ns_buf_cstr(&b));
    ns_buf_free(&b);
    return s;
}

/* The lines of props_java.txt between the header line starting with `from` and the next
 * header (or `until` when given). */
static char *java_section(const char *from, const char *until)
{
    char *all = slurp(CTL_DIR "/props_java.txt");
    char *a = strstr(all, from);
    assert_non_null(a);
    a = strchr(a, '\n') + 1;
    char *b = strstr(a, until);
    if (b != NULL)
        *b = '\0';
    char *out = ns_xstrdup(a);
    free(all);
    return out;
}

static int collect(void *arg, const char *key, const char *value, int line)
{
    (void)line;
    /* Properties keeps the last value of a key: the list is sorted and de-duplicated below */
    ns_buf_t *b = arg;
    ns_buf_appendf(b, "%s=%s\n", key, value);
    return 0;
}

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lines of text sorted (by the key's bytes, as Java's TreeMap of the recording sorts them). */
static char *sorted_lines(char *text)
{
    char *lines[256];
    size_t n = 0;
    for (char *l = strtok(text, "\n"); l != NULL && n < 256; l = strtok(NULL, "\n"))
        lines[n++] = l;
    qsort(lines, n, sizeof(char *), cmp_line);
    ns_buf_t b = NS_BUF_INIT;
    for (size_t i = 0; i < n; i++)
        ns_buf_appendf(&b, "%s\n", lines[i]);
    char *s = ns_xstrdup(ns_buf_cstr(&b));
    ns_buf_free(&b);
    return s;
}

static void test_xml_block_read_like_java(void **state)
{
    (void)state;
    char *conf = slurp(CTL_DIR "/plugin-n0.conf");
    ns_buf_t got = NS_BUF_INIT;
    assert_int_equal(ns_properties_parse(conf, strlen(conf), collect, &got, NULL), 0);
    char *text = ns_xstrdup(ns_buf_cstr(&got));
    char *ours = sorted_lines(text);
    free(text);
    char *java = java_section("# -- java.util.Properties.load", "# --");
    char *java_sorted = sorted_lines(java);
    assert_string_equal(ours, java_sorted);
    free(ours);
    free(java);
    free(java_sorted);
    ns_buf_free(&got);
    free(conf);
}

/* Runs fn with stderr redirected to a file; returns what it wrote. */
static char *stderr_of(int (*fn)(void *), void *arg, int *rc)
{
    char path[] = "/tmp/ns_cfgctl.XXXXXX";
    int fd = mkstemp(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    *rc = fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    char *s = slurp(path);
    unlink(path);
    return s;
}

typedef struct load_args {
    ns_config_t *cfg;
    const char *path;
} load_args_t;

static int do_load(void *arg)
{
    load_args_t *a = arg;
    char err[512];
    fflush(stdout);
    int rc = ns_config_load_file(a->cfg, a->path, err, sizeof(err));
    fflush(stdout);
    return rc;
}

/* rocketmq_home: ROCKETMQ_HOME for the defaults (NULL: unset) */
static void load_official_home(ns_config_t *cfg, char **err_text, const char *rocketmq_home)
{
    setenv("HOME", "/HOME", 1);
    if (rocketmq_home != NULL)
        setenv("ROCKETMQ_HOME", rocketmq_home, 1);
    else
        unsetenv("ROCKETMQ_HOME");
    ns_config_init_defaults(cfg);
    load_args_t a = {cfg, CTL_DIR "/plugin-n0.conf"};
    int rc;
    char *e = stderr_of(do_load, &a, &rc);
    assert_int_equal(rc, 0);
    if (err_text != NULL)
        *err_text = e;
    else
        free(e);
}

static void load_official(ns_config_t *cfg, char **err_text)
{
    load_official_home(cfg, err_text, NULL);
}

/* The loader takes the official shape: one note for the comment block, no warning per key. */
static void test_load_official_shape(void **state)
{
    (void)state;
    ns_config_t cfg;
    char *err;
    load_official(&cfg, &err);
    assert_non_null(strstr(err, "plugin-n0.conf:1-8 is an XML comment block"));
    assert_null(strstr(err, "unknown property"));
    assert_true(cfg.enable_controller_in_namesrv);
    assert_string_equal(cfg.ctl.controller_dleger_group, "group1");
    assert_string_equal(cfg.ctl.controller_dleger_self_id, "n0");
    assert_int_equal(cfg.ctl.scan_not_active_broker_interval, 1000);
    assert_int_equal(cfg.scan_not_active_broker_interval, 1000); /* both objects, as Java */
    free(err);
    ns_config_free(&cfg);
}

/* -p: ControllerConfig in Java's order, JraftConfig's keys where Java prints its object. */
static void test_print_controller_like_java(void **state)
{
    (void)state;
    ns_config_t cfg;
    load_official(&cfg, NULL);
    ns_buf_t out = NS_BUF_INIT;
    ns_config_dump_java_order(&cfg, &out);
    const char *all = ns_buf_cstr(&out);
    const char *ours = strstr(all, "rocketmqHome=\nconfigStorePath=/DIR/namesrv.properties\n");
    assert_non_null(ours); /* the controller's part starts with its rocketmqHome */
    char *java = java_section("# -- ControllerConfig", "-- JraftConfig");
    char *jraft = java_section("-- JraftConfig", "\n\n");
    /* Java: "jraftConfig=org.apache.rocketmq.common.JraftConfig@<hash>": the keys instead */
    ns_buf_t want = NS_BUF_INIT;
    for (char *l = strtok(java, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        if (strncmp(l, "jraftConfig=", 12) == 0)
            ns_buf_append_str(&want, jraft);
        else
            ns_buf_appendf(&want, "%s\n", l);
    }
    assert_string_equal(ours, ns_buf_cstr(&want));
    free(java);
    free(jraft);
    ns_buf_free(&want);
    ns_buf_free(&out);
    /* without enableControllerInNamesrv Java prints no ControllerConfig */
    cfg.enable_controller_in_namesrv = false;
    ns_config_dump_java_order(&cfg, &out);
    assert_null(strstr(ns_buf_cstr(&out), "controllerDLegerPeers"));
    ns_buf_free(&out);
    ns_config_free(&cfg);
}

/* The keys of the 1010 body Java sent for the same file (golden_one.jsonl, "1010 config"). */
static char *golden_1010_keys(void)
{
    char *all = slurp(CTL_DIR "/golden_one.jsonl");
    char *body = NULL;
    for (char *l = strtok(all, "\n"); l != NULL && body == NULL; l = strtok(NULL, "\n")) {
        if (strstr(l, "\"name\":\"1010 config\"") == NULL)
            continue;
        cJSON *o = cJSON_Parse(l);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "reply");
        body = ns_xstrdup(cJSON_GetObjectItemCaseSensitive(r, "body")->valuestring);
        cJSON_Delete(o);
    }
    free(all);
    assert_non_null(body);
    ns_buf_t keys = NS_BUF_INIT;
    for (char *l = strtok(body, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        char *eq = strchr(l, '=');
        if (eq != NULL && strncmp(l, "jraftConfig", (size_t)(eq - l)) != 0)
            ns_buf_appendf(&keys, "%.*s\n", (int)(eq - l), l);
    }
    free(body);
    char *s = ns_xstrdup(ns_buf_cstr(&keys));
    ns_buf_free(&keys);
    return s;
}

static void test_1010_keys_like_java(void **state)
{
    (void)state;
    ns_config_t cfg;
    load_official_home(&cfg, NULL, "/RMQ"); /* the recording had ROCKETMQ_HOME set */
    ns_buf_t body = NS_BUF_INIT;
    ns_config_dump_controller(&cfg, &body);
    ns_buf_t keys = NS_BUF_INIT;
    char *text = ns_xstrdup(ns_buf_cstr(&body));
    for (char *l = strtok(text, "\n"); l != NULL; l = strtok(NULL, "\n")) {
        char *eq = strchr(l, '=');
        assert_non_null(eq);
        if (strncmp(l, "jRaft", 5) != 0) /* ours, in the place of Java's jraftConfig object */
            ns_buf_appendf(&keys, "%.*s\n", (int)(eq - l), l);
    }
    char *want = golden_1010_keys();
    assert_string_equal(ns_buf_cstr(&keys), want);
    /* values: the file's text for keys no object has, the objects' values otherwise */
    assert_non_null(strstr(ns_buf_cstr(&body), "\nhttps=//rocketmq.apache.org/docs/"));
    assert_non_null(strstr(ns_buf_cstr(&body), "\ncontrollerDLegerSelfId=n0\n"));
    assert_non_null(strstr(ns_buf_cstr(&body), "\nisProcessReadEvent=false\n"));
    assert_non_null(strstr(ns_buf_cstr(&body), "\njRaftGroupId=jRaft-Controller\n"));
    free(want);
    free(text);
    ns_buf_free(&keys);
    ns_buf_free(&body);
    ns_config_free(&cfg);
}

static ns_config_update_result_t update_ctl(ns_config_t *cfg, const char *text, char *why)
{
    return ns_config_update_controller(cfg, text, strlen(text), why, 256);
}

static void test_1009(void **state)
{
    (void)state;
    ns_config_t cfg;
    load_official(&cfg, NULL);
    char why[256];
    /* Java's blacklist */
    assert_int_equal(update_ctl(&cfg, "configStorePath=/x\n", why), NS_CONFIG_UPDATE_BLACKLISTED);
    assert_int_equal(update_ctl(&cfg, "rocketmqHome=/x\n", why), NS_CONFIG_UPDATE_BLACKLISTED);
    assert_int_equal(update_ctl(&cfg, "configBlackList=\n", why), NS_CONFIG_UPDATE_BLACKLISTED);
    /* the run-time keys apply at once */
    assert_int_equal(update_ctl(&cfg,
                                "enableElectUncleanMaster=true\nelectMasterMaxRetryCount=5\n"
                                "notifyBrokerRoleChanged=false\nnoSuchKey=1\n",
                                why),
                     NS_CONFIG_UPDATE_OK);
    assert_true(cfg.ctl.enable_elect_unclean_master);
    assert_int_equal(cfg.ctl.elect_master_max_retry_count, 5);
    assert_false(cfg.ctl.notify_broker_role_changed);
    /* a key that names a file, the peers, a port: refused, nothing applied */
    assert_int_equal(
        update_ctl(&cfg, "enableElectUncleanMaster=false\ncontrollerStorePath=/x\n", why),
        NS_CONFIG_UPDATE_NOT_REMOTE);
    assert_non_null(strstr(why, "controllerStorePath"));
    assert_true(cfg.ctl.enable_elect_unclean_master);
    assert_int_equal(update_ctl(&cfg, "listenPort=1\n", why), NS_CONFIG_UPDATE_NOT_REMOTE);
    assert_int_equal(update_ctl(&cfg, "controllerDLegerPeers=n0-1.2.3.4:1\n", why),
                     NS_CONFIG_UPDATE_NOT_REMOTE);
    /* a value the -c loader would refuse */
    assert_int_equal(update_ctl(&cfg, "enableElectUncleanMaster=yes\n", why),
                     NS_CONFIG_UPDATE_NOT_REMOTE);
    ns_config_free(&cfg);
}

/* 318 (the NameServer's update) never changes the controller. */
static void test_318_leaves_the_controller_alone(void **state)
{
    (void)state;
    ns_config_t cfg;
    load_official(&cfg, NULL);
    free(cfg.config_store_path);
    cfg.config_store_path = ns_xstrdup("/tmp/ns_cfgctl_318.properties");
    char why[256];
    const char *t1 = "enableElectUncleanMaster=true\n";
    assert_int_equal(ns_config_update(&cfg, t1, strlen(t1), why, sizeof(why)),
                     NS_CONFIG_UPDATE_NOT_REMOTE);
    const char *t2 = "enableControllerInNamesrv=false\n";
    assert_int_equal(ns_config_update(&cfg, t2, strlen(t2), why, sizeof(why)),
                     NS_CONFIG_UPDATE_NOT_REMOTE);
    assert_false(cfg.ctl.enable_elect_unclean_master);
    /* a key both have: NamesrvConfig's changes, the controller's stays */
    const char *t3 = "scanNotActiveBrokerInterval=2000\n";
    assert_int_equal(ns_config_update(&cfg, t3, strlen(t3), why, sizeof(why)), NS_CONFIG_UPDATE_OK);
    assert_int_equal(cfg.scan_not_active_broker_interval, 2000);
    assert_int_equal(cfg.ctl.scan_not_active_broker_interval, 1000);
    unlink("/tmp/ns_cfgctl_318.properties");
    unlink("/tmp/ns_cfgctl_318.properties.bak");
    ns_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xml_block_read_like_java),
        cmocka_unit_test(test_load_official_shape),
        cmocka_unit_test(test_print_controller_like_java),
        cmocka_unit_test(test_1010_keys_like_java),
        cmocka_unit_test(test_1009),
        cmocka_unit_test(test_318_leaves_the_controller_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
