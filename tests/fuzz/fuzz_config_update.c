/* Fuzzes UPDATE_NAMESRV_CONFIG (318) end to end: the input is the request body; it is applied
 * to a configuration that came from a -c file (so that mergeIfExist has extra keys to update),
 * persisted to configStorePath, and the file is loaded again as the next start would load it.
 * Invariants: an accepted update always persists a file that loads, and what loads is exactly
 * what was accepted (the 319 text of both configurations is equal); a refused update writes
 * nothing; the file is ASCII, one line per key. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "ns_buf.h"
#include "ns_common.h"
#include "ns_config.h"
#include "ns_log.h"

static char dir[128];   /* a private directory, removed at exit */
static char store[256]; /* configStorePath in it, on a tmpfs when there is one (cheap fsync) */

static void remove_dir(void)
{
    char bak[300];
    snprintf(bak, sizeof(bak), "%s.bak", store);
    unlink(bak);
    unlink(store);
    rmdir(dir);
}

static void setup_once(void)
{
    if (store[0] != '\0')
        return;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(dir, sizeof(dir), "%s/fuzz_config_update.XXXXXX", base);
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    snprintf(store, sizeof(store), "%s/namesrv.properties", dir);
    atexit(remove_dir);
    ns_log_set_stdout(false);
    setenv("ROCKETMQ_HOME", "/opt/rocketmq", 0);
    FUZZ_CHECK(freopen("/dev/null", "w", stdout) != NULL); /* the loader's "load ... OK" line */
}

/* The -c file the server was started with: Java keys, an extension, and NettyClientConfig keys
 * (kept as text, which 318 may update: a number and a string; an unknown key is kept the same
 * way, but the loader warns about it on stderr at every run). */
static const char base_conf[] = "listenPort=9876\n"
                                "productEnvName=center\n"
                                "frameMaxLength=16777216\n"
                                "clientWorkerThreads=4\n"
                                "socksProxyConfig={}\n";

static char *slurp(const char *path, size_t *len)
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
    return (char *)ns_buf_steal(&b, len);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL);
    FUZZ_CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
    FUZZ_CHECK(fclose(f) == 0);
}

static int count_pair(void *arg, const char *key, const char *value, int line)
{
    (void)key;
    (void)value;
    size_t *n = arg;
    FUZZ_CHECK((size_t)line == *n + 1); /* no pair spans two lines */
    (*n)++;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup_once();
    write_file(store, base_conf);
    ns_config_t cfg;
    ns_config_init_defaults(&cfg);
    char err[512] = "";
    FUZZ_CHECK(ns_config_load_file(&cfg, store, err, sizeof(err)) == 0);

    size_t before_len = 0;
    char *before = slurp(store, &before_len);
    FUZZ_CHECK(before != NULL);
    char why[256];
    ns_config_update_result_t res =
        ns_config_update(&cfg, (const char *)data, size, why, sizeof(why));
    size_t file_len = 0;
    char *file = slurp(store, &file_len);
    FUZZ_CHECK(file != NULL);

    if (res != NS_CONFIG_UPDATE_OK) {
        FUZZ_CHECK(res == NS_CONFIG_UPDATE_BLACKLISTED || res == NS_CONFIG_UPDATE_BAD_TEXT ||
                   res == NS_CONFIG_UPDATE_NOT_REMOTE);
        if (res == NS_CONFIG_UPDATE_NOT_REMOTE)
            FUZZ_CHECK(why[0] != '\0');
        FUZZ_CHECK(file_len == before_len && memcmp(file, before, file_len) == 0);
    } else {
        /* one printable ASCII line per pair of the file */
        ns_buf_t reply = NS_BUF_INIT;
        ns_config_dump_sorted(&cfg, &reply);
        /* the 319 text, unescaped as Java sends it, has one line per pair too: no value holds
         * a line break (refused: issue 23, A.7), checked below against the file's lines */
        size_t reply_lines = 0;
        for (size_t i = 0; i < reply.len; i++)
            reply_lines += reply.data[i] == '\n' || reply.data[i] == '\r';
        ns_buf_t want_file = NS_BUF_INIT;
        ns_config_dump_file(&cfg, &want_file);
        FUZZ_CHECK(want_file.len == file_len && memcmp(want_file.data, file, file_len) == 0);
        size_t lines = 0;
        for (size_t i = 0; i < file_len; i++) {
            FUZZ_CHECK(file[i] == '\n' || (file[i] >= 0x20 && file[i] < 0x7F));
            lines += file[i] == '\n';
        }
        size_t pairs = 0;
        FUZZ_CHECK(ns_properties_parse(file, file_len, count_pair, &pairs, NULL) == 0);
        FUZZ_CHECK(lines > 0 && lines == pairs);
        FUZZ_CHECK(reply_lines == lines);

        /* the next start reads exactly what was accepted */
        ns_config_t again;
        ns_config_init_defaults(&again);
        int rc = ns_config_load_file(&again, store, err, sizeof(err));
        if (rc != 0) {
            fprintf(stderr, "the persisted file does not load: %s\n", err);
            abort();
        }
        ns_buf_t reread = NS_BUF_INIT;
        ns_config_dump_sorted(&again, &reread);
        FUZZ_CHECK(reread.len == reply.len && memcmp(reread.data, reply.data, reply.len) == 0);
        ns_buf_t file_again = NS_BUF_INIT;
        ns_config_dump_file(&again, &file_again);
        FUZZ_CHECK(file_again.len == file_len && memcmp(file_again.data, file, file_len) == 0);
        ns_buf_free(&file_again);
        ns_buf_free(&reread);
        ns_config_free(&again);
        ns_buf_free(&want_file);
        ns_buf_free(&reply);
    }
    free(file);
    free(before);
    ns_config_free(&cfg);
    return 0;
}
