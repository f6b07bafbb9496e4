/* Unit tests for the KV config store: operations, the file format (byte for byte against files
 * written by Java), loading what Java loads and refusing what Java refuses, atomic writes under
 * injected and real failures, and concurrent writers.
 *
 * tests/data/kvConfig-java.json and kvConfig-escape-java.json were written by fastjson 1.2.83
 * (JSON.toJSONString of a KVConfigSerializeWrapper, as a 4.x NameServer's persist() does); the
 * escape file holds U+0001..U+00FF, U+2026..U+2030, CJK, an emoji, U+FEFF, U+FFFF, and keys
 * with escapes. kvConfig-java5.json and kvConfig-escape-java5.json are the same files as the
 * 5.5.0 NameServer (fastjson2) rewrites them (tests/data/strings/make_vectors.sh): that is what
 * our rewrite must equal. Their namespaces and keys are single letters, whose Java HashMap
 * order is their sorted order, so our sorted output must equal it exactly. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config_int.h"
#include "ns_common.h"
#include "ns_json_tree.h"
#include "ns_kv.h"
#include "ns_log.h"
#include "ns_persist.h"

/* ---- helpers ------------------------------------------------------------------------------ */

typedef struct fixture {
    char dir[64];   /* a fresh temporary directory */
    char path[128]; /* <dir>/kvConfig.json */
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/ns_kv_test.XXXXXX");
    if (mkdtemp(f->dir) == NULL)
        return -1;
    snprintf(f->path, sizeof(f->path), "%s/kvConfig.json", f->dir);
    *state = f;
    ns__kv_fail_next(NS__KV_STEP_NONE, 0);
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    chmod(f->dir, 0755);
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Returns the whole file, malloc'd and NUL-terminated, or NULL when it cannot be read. */
static char *slurp(const char *path, size_t *len_out)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, fp)) > 0) {
        len += n;
        if (cap - len - 1 == 0)
            buf = realloc(buf, cap *= 2);
    }
    fclose(fp);
    buf[len] = '\0';
    if (len_out != NULL)
        *len_out = len;
    return buf;
}

static void spit(const char *path, const char *content, size_t len)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(content, 1, len, fp), len);
    assert_int_equal(fclose(fp), 0);
}

static void assert_file_equals(const char *path, const char *want)
{
    char *got = slurp(path, NULL);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

static void assert_get(ns_kv_t *kv, const char *ns, const char *key, const char *want)
{
    char *v = ns_kv_get(kv, ns, key);
    if (want == NULL) {
        assert_null(v);
    } else {
        assert_non_null(v);
        assert_string_equal(v, want);
    }
    free(v);
}

static void assert_table(ns_kv_t *kv, const char *ns, const char *want)
{
    ns_buf_t out = NS_BUF_INIT;
    int rc = ns_kv_get_table_json(kv, ns, &out);
    if (want == NULL) {
        assert_int_equal(rc, NS_ENOTFOUND);
        assert_int_equal(out.len, 0);
    } else {
        assert_int_equal(rc, 0);
        assert_string_equal(ns_buf_cstr(&out), want);
    }
    ns_buf_free(&out);
}

/* ---- operations in memory ------------------------------------------------------------------ */

static void test_put_get_delete(void **state)
{
    (void)state;
    ns_kv_t *kv = ns_kv_new(NULL);
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
    assert_get(kv, "NS", "k", NULL);
    assert_table(kv, "NS", NULL);

    assert_int_equal(ns_kv_put(kv, "NS", "k", "v1"), 0);
    assert_get(kv, "NS", "k", "v1");
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v2"), 0); /* update */
    assert_get(kv, "NS", "k", "v2");
    assert_int_equal(ns_kv_put(kv, "NS", "a", ""), 0); /* empty value is a value */
    assert_get(kv, "NS", "a", "");
    assert_get(kv, "NS", "other", NULL);
    assert_get(kv, "OTHER", "k", NULL);
    assert_table(kv, "NS", "{\"table\":{\"a\":\"\",\"k\":\"v2\"}}");

    assert_int_equal(ns_kv_delete(kv, "NS", "k"), 0);
    assert_get(kv, "NS", "k", NULL);
    assert_int_equal(ns_kv_delete(kv, "NS", "k"), 0); /* absent: still fine */
    assert_int_equal(ns_kv_delete(kv, "NOPE", "k"), 0);
    assert_int_equal(ns_kv_delete(kv, "NS", "a"), 0);
    /* An emptied namespace stays, as in Java. */
    assert_table(kv, "NS", "{\"table\":{}}");

    /* NULL arguments: Java's null header fields. */
    assert_int_equal(ns_kv_put(kv, NULL, "k", "v"), NS_EINVAL);
    assert_int_equal(ns_kv_put(kv, "NS", NULL, "v"), NS_EINVAL);
    assert_get(kv, NULL, "k", NULL);
    assert_get(kv, "NS", NULL, NULL);
    assert_table(kv, NULL, NULL);
    assert_int_equal(ns_kv_delete(kv, NULL, NULL), 0);
    assert_int_equal(ns_kv_delete(kv, "NS", NULL), 0);
    ns_kv_free(kv);
    ns_kv_free(NULL);
}

static void test_null_value_is_java_null(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v"), 0);
    /* Java stores null: the key turns invisible to get, the KVTable and the file. */
    assert_int_equal(ns_kv_put(kv, "NS", "k", NULL), 0);
    assert_get(kv, "NS", "k", NULL);
    assert_table(kv, "NS", "{\"table\":{}}");
    /* A null value still creates its namespace. */
    assert_int_equal(ns_kv_put(kv, "NEW", "k", NULL), 0);
    assert_table(kv, "NEW", "{\"table\":{}}");
    assert_file_equals(f->path, "{\"configTable\":{\"NEW\":{},\"NS\":{}}}");
    ns_kv_free(kv);
}

static void test_table_json_sorted_and_escaped(void **state)
{
    (void)state;
    ns_kv_t *kv = ns_kv_new(NULL);
    assert_int_equal(ns_kv_put(kv, "ORDER_TOPIC_CONFIG", "TopicB", "broker-a:8"), 0);
    assert_int_equal(ns_kv_put(kv, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4"), 0);
    assert_int_equal(ns_kv_put(kv, "ORDER_TOPIC_CONFIG", "q\"\\/",
                               "\t\x01\x7f\xc2\x85\xe2\x80\xa8"
                               "\xe4\xb8\xad"),
                     0);
    assert_table(kv, "ORDER_TOPIC_CONFIG",
                 "{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\",\"TopicB\":\"broker-a:8\","
                 "\"q\\\"\\\\/\":\"\\t\\u0001\x7f\xc2\x85\xe2\x80\xa8\xe4\xb8\xad\"}}");
    ns_kv_free(kv);
}

/* Keys and values are Java text (the request decoders make it): U+0000 is C0 80, so a key
 * with a NUL inside is its own key, not the key before the NUL; the KVTable JSON and the file
 * say \u0000, and the file loads back to the same text. */
static void test_nul_is_kept(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_put(kv, "N", "victim", "good"), 0);
    assert_int_equal(ns_kv_put(kv, "N",
                               "victim\xc0\x80"
                               "evil",
                               "bad"),
                     0);
    assert_int_equal(ns_kv_put(kv, "N", "v",
                               "a\xc0\x80"
                               "b"),
                     0);
    assert_get(kv, "N", "victim", "good");
    assert_get(kv, "N",
               "victim\xc0\x80"
               "evil",
               "bad");
    assert_get(kv, "N", "v",
               "a\xc0\x80"
               "b");
    const char *json = "{\"table\":{\"v\":\"a\\u0000b\",\"victim\":\"good\","
                       "\"victim\\u0000evil\":\"bad\"}}";
    assert_table(kv, "N", json);
    /* the file, as Java 5.5.0 writes it for the same requests */
    assert_file_equals(f->path, "{\"configTable\":{\"N\":{\"v\":\"a\\u0000b\",\"victim\":\"good\","
                                "\"victim\\u0000evil\":\"bad\"}}}");
    ns_kv_free(kv);
    kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
    assert_get(kv, "N", "victim", "good");
    assert_get(kv, "N",
               "victim\xc0\x80"
               "evil",
               "bad");
    assert_get(kv, "N", "v",
               "a\xc0\x80"
               "b");
    assert_table(kv, "N", json);
    ns_kv_free(kv);
}

/* A file is decoded as Java's file2String decodes it (malformed UTF-8 -> U+FFFD, over the whole
 * text), then parsed; a raw NUL in a string is U+0000, a lone surrogate escape '?'. */
static void test_load_decodes_as_java(void **state)
{
    fixture_t *f = *state;
    static const char file[] = "{\"configTable\":{\"N\xff\":{\"k\xed\xa0\x80\":\"a\0b\","
                               "\"s\":\"x\\ud800y\",\"e\":\"\\ud83d\\ude00\"}}}";
    spit(f->path, file, sizeof(file) - 1);
    ns_kv_t *kv = ns_kv_new(f->path);
    char err[256];
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), 0);
    assert_get(kv, "N\xef\xbf\xbd", "k\xef\xbf\xbd",
               "a\xc0\x80"
               "b");
    assert_get(kv, "N\xef\xbf\xbd", "s", "x?y");
    assert_get(kv, "N\xef\xbf\xbd", "e", "\xf0\x9f\x98\x80");
    ns_kv_free(kv);
}

static void test_generation(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_generation(kv), 0);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v"), 0);
    assert_int_equal(ns_kv_generation(kv), 1);
    assert_int_equal(ns_kv_delete(kv, "NS", "absent"), 0);
    assert_int_equal(ns_kv_generation(kv), 2);
    assert_int_equal(ns_kv_put(kv, NULL, "k", "v"), NS_EINVAL);
    assert_int_equal(ns_kv_generation(kv), 2);
    /* A change that the disk refused was visible for a moment and is undone: both move the
     * generation, so that no cached answer keeps the value that never reached the disk. */
    ns__kv_fail_next(NS__KV_STEP_FSYNC, EIO);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v2"), -EIO);
    assert_int_equal(ns_kv_generation(kv), 4);
    ns_kv_free(kv);
}

/* ---- the file ------------------------------------------------------------------------------ */

/* Issue 23, A.3/A.5: a FIFO at kvConfigPath is refused at once (the start used to wait for a
 * writer for ever), and so is a file above NS_KV_MAX_FILE, from its size. */
static void test_load_refuses_fifo_and_huge(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(mkfifo(f->path, 0600), 0);
    ns_kv_t *kv = ns_kv_new(f->path);
    char err[256] = "";
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), NS_ENOTREG);
    assert_non_null(strstr(err, "not a regular file"));
    ns_kv_free(kv);
    unlink(f->path);
    FILE *fp = fopen(f->path, "w");
    assert_non_null(fp);
    assert_int_equal(ftruncate(fileno(fp), (off_t)NS_KV_MAX_FILE + 1), 0);
    fclose(fp);
    kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), NS_ETOOBIG);
    ns_kv_free(kv);
    unlink(f->path);
}

static void test_persist_round_trip_and_bak(void **state)
{
    fixture_t *f = *state;
    char bak[160];
    snprintf(bak, sizeof(bak), "%s.bak", f->path);

    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0); /* no file yet: empty */
    assert_int_equal(ns_kv_put(kv, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4"), 0);
    const char *first = "{\"configTable\":{\"ORDER_TOPIC_CONFIG\":{\"TopicA\":\"broker-a:4;broker-"
                        "b:4\"}}}";
    assert_file_equals(f->path, first);
    assert_false(exists(bak)); /* nothing before it */

    assert_int_equal(ns_kv_put(kv, "MY_NS", "k1", "v1"), 0);
    const char *second = "{\"configTable\":{\"MY_NS\":{\"k1\":\"v1\"},\"ORDER_TOPIC_CONFIG\":{"
                         "\"TopicA\":\"broker-a:4;broker-b:4\"}}}";
    assert_file_equals(f->path, second);
    assert_file_equals(bak, first); /* Java's .bak: the previous content */

    assert_int_equal(ns_kv_delete(kv, "MY_NS", "k1"), 0);
    const char *third = "{\"configTable\":{\"MY_NS\":{},\"ORDER_TOPIC_CONFIG\":{\"TopicA\":"
                        "\"broker-a:4;broker-b:4\"}}}";
    assert_file_equals(f->path, third);
    assert_file_equals(bak, second);
    ns_kv_free(kv);

    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
    assert_false(exists(tmp));

    /* A second store loads what the first wrote. */
    ns_kv_t *again = ns_kv_new(f->path);
    char err[256] = "x";
    assert_int_equal(ns_kv_load(again, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_get(again, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4");
    assert_table(again, "MY_NS", "{\"table\":{}}");
    ns_kv_free(again);
}

static void test_creates_parent_dirs(void **state)
{
    fixture_t *f = *state;
    char path[200];
    snprintf(path, sizeof(path), "%s/a/b/c/kvConfig.json", f->dir);
    ns_kv_t *kv = ns_kv_new(path);
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v"), 0);
    assert_file_equals(path, "{\"configTable\":{\"NS\":{\"k\":\"v\"}}}");
    ns_kv_free(kv);
}

static void test_java_file_loads(void **state)
{
    (void)state;
    ns_kv_t *kv = ns_kv_new(NS_TEST_DATA_DIR "/kvConfig-java.json");
    char err[256];
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), 0);
    assert_get(kv, NS_KV_ORDER_TOPIC_CONFIG, "TopicA", "broker-a:4;broker-b:4");
    assert_table(kv, NS_KV_ORDER_TOPIC_CONFIG,
                 "{\"table\":{\"TopicA\":\"broker-a:4;broker-b:4\"}}");
    ns_kv_free(kv);
}

/* Copies a Java-written file into place, loads it, forces a rewrite, and expects our bytes to be
 * the bytes Java 5.5.0 writes for it (java5_file). */
static void rewrite_equals_java(fixture_t *f, const char *java_file, const char *java5_file)
{
    size_t in_len = 0, len = 0;
    char *in = slurp(java_file, &in_len);
    char *java = slurp(java5_file, &len);
    assert_non_null(in);
    assert_non_null(java);
    spit(f->path, in, in_len);
    free(in);
    ns_kv_t *kv = ns_kv_new(f->path);
    char err[256];
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), 0);
    assert_int_equal(ns_kv_delete(kv, "absent", "absent"), 0); /* rewrites the file */
    size_t got_len = 0;
    char *got = slurp(f->path, &got_len);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, java, len);
    free(got);
    free(java);
    ns_kv_free(kv);
}

static void test_rewrite_is_byte_identical_to_java(void **state)
{
    rewrite_equals_java(*state, NS_TEST_DATA_DIR "/kvConfig-java.json",
                        NS_TEST_DATA_DIR "/kvConfig-java5.json");
    rewrite_equals_java(*state, NS_TEST_DATA_DIR "/kvConfig-escape-java.json",
                        NS_TEST_DATA_DIR "/kvConfig-escape-java5.json");
    rewrite_equals_java(*state, NS_TEST_DATA_DIR "/kvConfig-escape-java5.json",
                        NS_TEST_DATA_DIR "/kvConfig-escape-java5.json");
}

static void test_escape_file_values(void **state)
{
    (void)state;
    ns_kv_t *kv = ns_kv_new(NS_TEST_DATA_DIR "/kvConfig-escape-java.json");
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
    assert_get(kv, "c", "a", "x\"y\\z/\xc3\xa9\xe4\xb8\xad");
    assert_get(kv, "c", "b\n\x01", "k\x7f");
    char *all = ns_kv_get(kv, "a", "a");
    assert_non_null(all);
    for (int c = 1; c < 0x80; c++) /* the ASCII part, decoded */
        assert_int_equal((unsigned char)all[c - 1], c);
    assert_non_null(strstr(all, "\xe2\x80\xa8\xe2\x80\xa9"));     /* U+2028 U+2029 */
    assert_non_null(strstr(all, "\xf0\x9f\x98\x80\xef\xbb\xbf")); /* emoji, U+FEFF */
    free(all);
    assert_table(kv, "b", "{\"table\":{}}");
    ns_kv_free(kv);
}

/* ---- loading: what Java accepts and what makes it refuse to start ---------------------------- */

typedef struct load_case {
    const char *name;
    const char *content; /* file content */
    int rc;              /* expected ns_kv_load result */
    const char *ns;      /* when set: a namespace to check */
    const char *table;   /* its KVTable JSON, or NULL for "absent" */
} load_case_t;

static const load_case_t load_cases[] = {
    /* fastjson returns no wrapper: Java starts with an empty store. */
    {"empty file", "", 0, "NS", NULL},
    {"blank file", " \n\t\r", 0, "NS", NULL},
    {"null", "null", 0, "NS", NULL},
    {"empty array", "[]", 0, "NS", NULL},
    /* Good files, and what fastjson tolerates in them. */
    {"plain", "{\"configTable\":{\"NS\":{\"k\":\"v\"}}}", 0, "NS", "{\"table\":{\"k\":\"v\"}}"},
    {"pretty, trailing newline", "{\n  \"configTable\" : {\n \"NS\" : { \"k\" : \"v\" } }\n}\n", 0,
     "NS", "{\"table\":{\"k\":\"v\"}}"},
    {"byte-order mark", "\xef\xbb\xbf{\"configTable\":{\"NS\":{\"k\":\"v\"}}}", 0, "NS",
     "{\"table\":{\"k\":\"v\"}}"},
    {"empty table", "{\"configTable\":{}}", 0, "NS", NULL},
    {"other members ignored", "{\"x\":1,\"configTable\":{\"NS\":{}},\"y\":[1]}", 0, "NS",
     "{\"table\":{}}"},
    {"smart-matched name", "{\"config_table\":{\"NS\":{\"k\":\"v\"}}}", 0, "NS",
     "{\"table\":{\"k\":\"v\"}}"},
    {"last duplicate wins",
     "{\"configTable\":{\"A\":{}},\"configTable\":{\"NS\":{\"k\":\"1\",\"k\":"
     "\"2\"}}}",
     0, "NS", "{\"table\":{\"k\":\"2\"}}"},
    {"non-string values",
     "{\"configTable\":{\"NS\":{\"i\":12,\"b\":true,\"f\":false,\"o\":{\"a\":1},"
     "\"a\":[1,\"x\"],\"n\":null,\"neg\":-3}}}",
     0, "NS",
     "{\"table\":{\"a\":\"[1,\\\"x\\\"]\",\"b\":\"true\",\"f\":\"false\",\"i\":\"12\",\"neg\":\"-"
     "3\","
     "\"o\":\"{\\\"a\\\":1}\"}}"},
    {"null namespace skipped", "{\"configTable\":{\"NS\":null}}", 0, "NS", NULL},
    {"empty-string namespace skipped", "{\"configTable\":{\"NS\":\"\"}}", 0, "NS", NULL},
    {"\"null\" namespace skipped", "{\"configTable\":{\"NS\":\"null\"}}", 0, "NS", NULL},
    {"empty names", "{\"configTable\":{\"\":{\"\":\"\"}}}", 0, "", "{\"table\":{\"\":\"\"}}"},
    /* Java refuses to start (exception out of load()). */
    {"empty object", "{}", NS_EJSON, NULL, NULL},
    {"null configTable", "{\"configTable\":null}", NS_EJSON, NULL, NULL},
    {"string configTable", "{\"configTable\":\"x\"}", NS_EJSON, NULL, NULL},
    {"empty-string configTable", "{\"configTable\":\"\"}", NS_EJSON, NULL, NULL},
    {"array configTable", "{\"configTable\":[]}", NS_EJSON, NULL, NULL},
    {"string namespace", "{\"configTable\":{\"NS\":\"x\"}}", NS_EJSON, NULL, NULL},
    {"number namespace", "{\"configTable\":{\"NS\":1}}", NS_EJSON, NULL, NULL},
    {"bool namespace", "{\"configTable\":{\"NS\":true}}", NS_EJSON, NULL, NULL},
    {"array namespace", "{\"configTable\":{\"NS\":[]}}", NS_EJSON, NULL, NULL},
    {"array root", "[1]", NS_EJSON, NULL, NULL},
    {"array of object", "[{}]", NS_EJSON, NULL, NULL},
    {"number root", "5", NS_EJSON, NULL, NULL},
    {"string root", "\"str\"", NS_EJSON, NULL, NULL},
    {"true root", "true", NS_EJSON, NULL, NULL},
    {"truncated (a crash of Java's in-place write)", "{\"configTable\":{\"NS\":{\"k\":\"v\"}}",
     NS_EJSON, NULL, NULL},
    {"cut inside a string", "{\"configTable\":{\"NS\":{\"k\":\"v", NS_EJSON, NULL, NULL},
    {"garbage after the end", "{\"configTable\":{}}x", NS_EJSON, NULL, NULL},
    {"two documents", "{\"configTable\":{}}{}", NS_EJSON, NULL, NULL},
    {"binary", "\x00\x01\x02garbage", NS_EJSON, NULL, NULL},
    /* fastjson's non-standard lenience that cJSON does not share: refused (safe, no loss). */
    {"single quotes", "{'configTable':{'NS':{'k':'v'}}}", NS_EJSON, NULL, NULL},
};

static void test_load_cases(void **state)
{
    fixture_t *f = *state;
    for (size_t i = 0; i < NS_ARRAY_SIZE(load_cases); i++) {
        const load_case_t *c = &load_cases[i];
        size_t len = strlen(c->content);
        if (strcmp(c->name, "binary") == 0)
            len = 10;
        spit(f->path, c->content, len);
        ns_kv_t *kv = ns_kv_new(f->path);
        /* Something already in the store, to see that a refused file changes nothing. */
        assert_int_equal(ns_kv_put(kv, "KEEP", "k", "v"), 0);
        spit(f->path, c->content, len);
        char err[256] = "";
        int rc = ns_kv_load(kv, err, sizeof(err));
        if (rc != c->rc)
            fail_msg("case \"%s\": rc %d, want %d (%s)", c->name, rc, c->rc, err);
        if (rc != 0) {
            if (err[0] == '\0')
                fail_msg("case \"%s\": no reason given", c->name);
            assert_get(kv, "KEEP", "k", "v");
            assert_table(kv, "KEEP", "{\"table\":{\"k\":\"v\"}}");
        } else if (c->ns != NULL) {
            ns_buf_t out = NS_BUF_INIT;
            int trc = ns_kv_get_table_json(kv, c->ns, &out);
            const char *got = trc == 0 ? ns_buf_cstr(&out) : NULL;
            if ((c->table == NULL) != (got == NULL) || (got != NULL && strcmp(got, c->table) != 0))
                fail_msg("case \"%s\": table %s, want %s", c->name, got ? got : "(absent)",
                         c->table ? c->table : "(absent)");
            ns_buf_free(&out);
        }
        ns_kv_free(kv);
    }
}

static void test_load_missing_and_unreadable(void **state)
{
    fixture_t *f = *state;
    char path[200];
    snprintf(path, sizeof(path), "%s/no/such/dir/kvConfig.json", f->dir);
    ns_kv_t *kv = ns_kv_new(path);
    char err[256];
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), 0);
    ns_kv_free(kv);

    /* A directory where the file should be: cannot be read, refuse. */
    assert_int_equal(mkdir(f->path, 0755), 0);
    kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(kv, err, sizeof(err)), -EISDIR);
    assert_non_null(strstr(err, "cannot read"));
    ns_kv_free(kv);
}

/* ---- failures: memory never claims what the disk does not have --------------------------------
 */

static void test_unwritable_dir(void **state)
{
    fixture_t *f = *state;
    /* The parent "directory" is a regular file: every write fails with ENOTDIR. */
    char blocker[160], path[200];
    snprintf(blocker, sizeof(blocker), "%s/blocker", f->dir);
    spit(blocker, "x", 1);
    snprintf(path, sizeof(path), "%s/kvConfig.json", blocker);
    ns_kv_t *kv = ns_kv_new(path);
    assert_int_equal(ns_kv_load(kv, NULL, 0), -ENOTDIR);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v"), -ENOTDIR);
    assert_get(kv, "NS", "k", NULL);
    assert_table(kv, "NS", NULL); /* the namespace it created is gone too */
    assert_int_equal(ns_kv_delete(kv, "NS", "k"), -ENOTDIR);
    assert_int_equal(ns_kv_generation(kv), 4); /* two changes, each made and undone */
    ns_kv_free(kv);
}

static void test_injected_failure_each_step(void **state)
{
    fixture_t *f = *state;
    char tmp[160], bak[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
    snprintf(bak, sizeof(bak), "%s.bak", f->path);
    const char *old = "{\"configTable\":{\"NS\":{\"k\":\"v1\",\"x\":\"y\"}}}";
    static const int steps[] = {NS__KV_STEP_MKDIR,  NS__KV_STEP_OPEN,   NS__KV_STEP_WRITE,
                                NS__KV_STEP_FSYNC,  NS__KV_STEP_BACKUP, NS__KV_STEP_RENAME,
                                NS__KV_STEP_DIRSYNC};
    for (size_t i = 0; i < NS_ARRAY_SIZE(steps); i++) {
        spit(f->path, old, strlen(old));
        unlink(bak);
        ns_kv_t *kv = ns_kv_new(f->path);
        assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
        unsigned long gen = ns_kv_generation(kv);

        /* An update, a new key, a new namespace and a delete: each rolled back, and the file
         * is the old one, complete, after each (after a failed directory fsync the rolled-back
         * state was written again), with no temp file left. */
        ns__kv_fail_next(steps[i], ENOSPC);
        assert_int_equal(ns_kv_put(kv, "NS", "k", "v2"), -ENOSPC);
        assert_file_equals(f->path, old);
        ns__kv_fail_next(steps[i], ENOSPC);
        assert_int_equal(ns_kv_put(kv, "NS", "new", "v"), -ENOSPC);
        assert_file_equals(f->path, old);
        ns__kv_fail_next(steps[i], ENOSPC);
        assert_int_equal(ns_kv_put(kv, "NEW", "k", "v"), -ENOSPC);
        assert_file_equals(f->path, old);
        ns__kv_fail_next(steps[i], EIO);
        assert_int_equal(ns_kv_delete(kv, "NS", "x"), -EIO);
        assert_file_equals(f->path, old);
        assert_false(exists(tmp));

        assert_get(kv, "NS", "k", "v1");
        assert_get(kv, "NS", "new", NULL);
        assert_get(kv, "NS", "x", "y");
        assert_table(kv, "NEW", NULL);
        assert_int_equal(ns_kv_generation(kv), gen + 8); /* four changes, each undone */

        /* The next write works and carries only what memory has. */
        assert_int_equal(ns_kv_put(kv, "NS", "k", "v3"), 0);
        assert_file_equals(f->path, "{\"configTable\":{\"NS\":{\"k\":\"v3\",\"x\":\"y\"}}}");
        ns_kv_free(kv);
    }
}

static void test_real_write_failure_leaves_old_file(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "small"), 0);
    const char *old = "{\"configTable\":{\"NS\":{\"k\":\"small\"}}}";
    assert_file_equals(f->path, old);

    /* A file size limit makes write() fail half-way (EFBIG), like a full disk would. */
    char big[4096];
    memset(big, 'b', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    struct rlimit saved, small = {.rlim_cur = 1024, .rlim_max = RLIM_INFINITY};
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    small.rlim_max = saved.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = ns_kv_put(kv, "NS", "k", big);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, SIG_DFL);

    assert_int_equal(rc, -EFBIG);
    assert_get(kv, "NS", "k", "small");
    assert_file_equals(f->path, old);
    ns_kv_free(kv);
}

static void test_symlinked_file_is_written_through(void **state)
{
    fixture_t *f = *state;
    char real[160];
    snprintf(real, sizeof(real), "%s/real.json", f->dir);
    spit(real, "{\"configTable\":{}}", 18);
    assert_int_equal(symlink(real, f->path), 0);
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(kv, NULL, 0), 0);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "v"), 0);
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_file_equals(real, "{\"configTable\":{\"NS\":{\"k\":\"v\"}}}");
    ns_kv_free(kv);
}

/* ---- concurrency ------------------------------------------------------------------------------
 */

enum { THREADS = 4, PUTS_PER_THREAD = 25 };

typedef struct worker {
    ns_kv_t *kv;
    int id;
    int failures;
} worker_t;

static void *put_many(void *arg)
{
    worker_t *w = arg;
    char key[32], value[32];
    for (int i = 0; i < PUTS_PER_THREAD; i++) {
        snprintf(key, sizeof(key), "t%d-k%02d", w->id, i);
        snprintf(value, sizeof(value), "v%d-%d", w->id, i);
        if (ns_kv_put(w->kv, i % 2 ? "ODD" : "EVEN", key, value) != 0)
            w->failures++;
        char *back = ns_kv_get(w->kv, i % 2 ? "ODD" : "EVEN", key);
        if (back == NULL || strcmp(back, value) != 0)
            w->failures++;
        free(back);
    }
    return NULL;
}

static void test_concurrent_puts_all_in_file(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    pthread_t th[THREADS];
    worker_t w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker_t){.kv = kv, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, put_many, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(ns_kv_generation(kv), THREADS * PUTS_PER_THREAD);
    ns_kv_free(kv);

    ns_kv_t *loaded = ns_kv_new(f->path);
    assert_int_equal(ns_kv_load(loaded, NULL, 0), 0);
    for (int t = 0; t < THREADS; t++) {
        for (int i = 0; i < PUTS_PER_THREAD; i++) {
            char key[32], value[32];
            snprintf(key, sizeof(key), "t%d-k%02d", t, i);
            snprintf(value, sizeof(value), "v%d-%d", t, i);
            assert_get(loaded, i % 2 ? "ODD" : "EVEN", key, value);
        }
    }
    ns_kv_free(loaded);
}

/* While a put is writing its file, readers are served from memory: the hook, run inside the
 * write, reads through the public API from another thread and waits (bounded) for it. Before
 * the two locks this deadlocked into the timeout: the reader waited for the writer's mutex. */
typedef struct reader_probe {
    ns_kv_t *kv;
    pthread_mutex_t m;
    pthread_cond_t done_cv;
    bool done;
    char *seen; /* what the reader got for NS/old */
} reader_probe_t;

static void *probe_read(void *arg)
{
    reader_probe_t *p = arg;
    char *v = ns_kv_get(p->kv, "NS", "old");
    pthread_mutex_lock(&p->m);
    p->seen = v;
    p->done = true;
    pthread_cond_signal(&p->done_cv);
    pthread_mutex_unlock(&p->m);
    return NULL;
}

static void probe_hook(void *arg)
{
    reader_probe_t *p = arg;
    pthread_t th;
    if (pthread_create(&th, NULL, probe_read, p) != 0)
        return;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&p->m);
    while (!p->done && pthread_cond_timedwait(&p->done_cv, &p->m, &deadline) == 0)
        ;
    bool done = p->done;
    pthread_mutex_unlock(&p->m);
    if (done)
        pthread_join(th, NULL);
    else
        pthread_detach(th); /* the reader is stuck behind us: the test fails below */
}

static void test_readers_do_not_wait_for_the_disk(void **state)
{
    fixture_t *f = *state;
    ns_kv_t *kv = ns_kv_new(f->path);
    assert_int_equal(ns_kv_put(kv, "NS", "old", "1"), 0);
    reader_probe_t p = {.kv = kv};
    pthread_mutex_init(&p.m, NULL);
    pthread_cond_init(&p.done_cv, NULL);
    ns__kv_set_persist_hook(probe_hook, &p);
    assert_int_equal(ns_kv_put(kv, "NS", "new", "2"), 0);
    ns__kv_set_persist_hook(NULL, NULL);
    assert_true(p.done);
    assert_string_equal(p.seen, "1");
    free(p.seen);
    pthread_cond_destroy(&p.done_cv);
    pthread_mutex_destroy(&p.m);
    ns_kv_free(kv);
}

/* ---- the persister: writes off the caller's thread, coalesced, answered once on disk ------ */

typedef struct gate {
    pthread_mutex_t m;
    pthread_cond_t cv;
    bool closed;  /* writes wait while set */
    int writes;   /* file writes begun */
    bool waiting; /* a write waits at the gate */
} gate_t;

static void gate_hook(void *arg)
{
    gate_t *g = arg;
    pthread_mutex_lock(&g->m);
    g->writes++;
    g->waiting = true;
    pthread_cond_broadcast(&g->cv);
    while (g->closed)
        pthread_cond_wait(&g->cv, &g->m);
    g->waiting = false;
    pthread_mutex_unlock(&g->m);
}

typedef struct answers {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int count;
    int rc[8];
} answers_t;

static void on_answer(void *arg, int rc)
{
    answers_t *a = arg;
    pthread_mutex_lock(&a->m);
    a->rc[a->count++] = rc;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->m);
}

static void wait_answers(answers_t *a, int n)
{
    pthread_mutex_lock(&a->m);
    while (a->count < n)
        pthread_cond_wait(&a->cv, &a->m);
    pthread_mutex_unlock(&a->m);
}

static void wait_at_gate(gate_t *g)
{
    pthread_mutex_lock(&g->m);
    while (!g->waiting)
        pthread_cond_wait(&g->cv, &g->m);
    pthread_mutex_unlock(&g->m);
}

static void open_gate(gate_t *g)
{
    pthread_mutex_lock(&g->m);
    g->closed = false;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->m);
}

static void test_persister_coalesces_and_answers_on_disk(void **state)
{
    fixture_t *f = *state;
    gate_t g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0, false};
    answers_t a = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}};
    ns_persister_t *p = ns_persister_start();
    ns_kv_t *kv = ns_kv_new(f->path);
    ns_kv_use_persister(kv, p);
    ns__kv_set_persist_hook(gate_hook, &g);
    /* The first write holds its disk (the gate); three more changes come meanwhile. */
    assert_int_equal(ns_kv_put_async(kv, "NS", "k1", "v1", on_answer, &a), 0);
    wait_at_gate(&g);
    assert_int_equal(ns_kv_put_async(kv, "NS", "k2", "v2", on_answer, &a), 0);
    assert_int_equal(ns_kv_put_async(kv, "NS", "k3", "v3", on_answer, &a), 0);
    ns_kv_delete_async(kv, "NS", "k1", on_answer, &a);
    /* Visible at once, acknowledged not yet: the thread that made them did not wait. */
    assert_get(kv, "NS", "k3", "v3");
    assert_get(kv, "NS", "k1", NULL);
    pthread_mutex_lock(&a.m);
    assert_int_equal(a.count, 0);
    pthread_mutex_unlock(&a.m);
    open_gate(&g);
    wait_answers(&a, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(a.rc[i], 0);
    /* Two file writes for four changes: the three made during the first went together. */
    assert_int_equal(g.writes, 2);
    assert_file_equals(f->path, "{\"configTable\":{\"NS\":{\"k2\":\"v2\",\"k3\":\"v3\"}}}");
    ns__kv_set_persist_hook(NULL, NULL);
    ns_persister_stop(p);
    ns_kv_free(kv);
}

static void test_persister_failure_undoes_every_change_not_on_disk(void **state)
{
    fixture_t *f = *state;
    gate_t g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, true, 0, false};
    answers_t a = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0}};
    ns_persister_t *p = ns_persister_start();
    ns_kv_t *kv = ns_kv_new(f->path);
    ns_kv_use_persister(kv, p);
    assert_int_equal(ns_kv_put(kv, "NS", "k", "old"), 0);
    ns__kv_set_persist_hook(gate_hook, &g);
    /* The held write fails; a change made meanwhile is undone with it (newest first), and both
     * requests get the error: memory holds again what the disk holds. */
    ns__kv_fail_next(NS__KV_STEP_FSYNC, ENOSPC);
    assert_int_equal(ns_kv_put_async(kv, "NS", "k", "new", on_answer, &a), 0);
    wait_at_gate(&g);
    assert_int_equal(ns_kv_put_async(kv, "NEW", "x", "y", on_answer, &a), 0);
    open_gate(&g);
    wait_answers(&a, 2);
    assert_int_equal(a.rc[0], -ENOSPC);
    assert_int_equal(a.rc[1], -ENOSPC);
    assert_get(kv, "NS", "k", "old");
    assert_table(kv, "NEW", NULL);
    assert_file_equals(f->path, "{\"configTable\":{\"NS\":{\"k\":\"old\"}}}");
    /* The next write works and carries only what memory has. */
    ns__kv_set_persist_hook(NULL, NULL);
    assert_int_equal(ns_kv_put(kv, "NS", "k2", "v"), 0);
    assert_file_equals(f->path, "{\"configTable\":{\"NS\":{\"k\":\"old\",\"k2\":\"v\"}}}");
    ns_persister_stop(p);
    ns_kv_free(kv);
}

/* ---- periodic dump ----------------------------------------------------------------------------
 */

static void test_log_all_format(void **state)
{
    fixture_t *f = *state;
    char log[160];
    snprintf(log, sizeof(log), "%s/namesrv.log", f->dir);
    ns_kv_t *kv = ns_kv_new(NULL);
    assert_int_equal(ns_kv_put(kv, "B", "k2", "v2"), 0);
    assert_int_equal(ns_kv_put(kv, "B", "k1", "v1"), 0);
    assert_int_equal(ns_kv_put(kv, "A", "k", NULL), 0);
    assert_int_equal(ns_kv_put(kv, "EMPTY", "k", "v"), 0);
    assert_int_equal(ns_kv_delete(kv, "EMPTY", "k"), 0);

    assert_int_equal(ns_log_open_file(log), 0);
    ns_log_set_stdout(false);
    ns_kv_log_all(kv);
    ns_log_open_file(NULL);
    ns_log_set_stdout(true);

    char *text = slurp(log, NULL);
    assert_non_null(text);
    static const char *want[] = {
        " - --------------------------------------------------------\n",
        " - configTable SIZE: 3\n",
        " - configTable NS: A Key: k Value: null\n",
        " - configTable NS: B Key: k1 Value: v1\n",
        " - configTable NS: B Key: k2 Value: v2\n",
    };
    const char *p = text;
    for (size_t i = 0; i < NS_ARRAY_SIZE(want); i++) {
        const char *hit = strstr(p, want[i]);
        if (hit == NULL)
            fail_msg("missing or out of order: %s in:\n%s", want[i], text);
        p = hit + strlen(want[i]);
    }
    assert_null(strstr(text, "EMPTY"));
    free(text);
    ns_kv_free(kv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_put_get_delete),
        cmocka_unit_test_setup_teardown(test_null_value_is_java_null, setup, teardown),
        cmocka_unit_test(test_table_json_sorted_and_escaped),
        cmocka_unit_test_setup_teardown(test_nul_is_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_decodes_as_java, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persist_round_trip_and_bak, setup, teardown),
        cmocka_unit_test_setup_teardown(test_creates_parent_dirs, setup, teardown),
        cmocka_unit_test(test_java_file_loads),
        cmocka_unit_test_setup_teardown(test_rewrite_is_byte_identical_to_java, setup, teardown),
        cmocka_unit_test(test_escape_file_values),
        cmocka_unit_test_setup_teardown(test_load_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_missing_and_unreadable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_injected_failure_each_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_write_failure_leaves_old_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_symlinked_file_is_written_through, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_puts_all_in_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persister_coalesces_and_answers_on_disk, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_persister_failure_undoes_every_change_not_on_disk,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_readers_do_not_wait_for_the_disk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_all_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_refuses_fifo_and_huge, setup, teardown),
    };
    ns_log_set_level(NS_LOG_INFO);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
