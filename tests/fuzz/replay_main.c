/* Replays every file of a corpus directory through LLVMFuzzerTestOneInput: the fuzz targets
 * as ordinary ctest programs (gcc, sanitizers), without libFuzzer.
 * Usage: replay_<target> DIR. Exit 0 after replaying at least one file; 1 when DIR is missing,
 * unreadable or holds no file. Each input goes into a malloc of exactly its size so ASan sees
 * a one-byte over-read. */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Reads the whole file into a malloc of exactly its size (1 byte for an empty file). Returns
 * NULL on error. */
static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *data = NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0)
        goto out;
    *len = (size_t)st.st_size;
    data = malloc(*len ? *len : 1);
    if (data == NULL || fread(data, 1, *len, f) != *len) {
        free(data);
        data = NULL;
    }
out:
    fclose(f);
    return data;
}

static int skip_hidden(const struct dirent *d)
{
    return d->d_name[0] != '.';
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 1;
    }
    struct dirent **names = NULL;
    int n = scandir(argv[1], &names, skip_hidden, alphasort);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    size_t replayed = 0;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", argv[1], names[i]->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            size_t len = 0;
            uint8_t *data = read_file(path, &len);
            if (data == NULL) {
                fprintf(stderr, "%s: cannot read\n", path);
                rc = 1;
            } else {
                LLVMFuzzerTestOneInput(data, len);
                free(data);
                replayed++;
            }
        }
        free(names[i]);
    }
    free(names);
    printf("replayed %zu inputs from %s\n", replayed, argv[1]);
    if (replayed == 0) {
        fprintf(stderr, "%s: no inputs\n", argv[1]);
        rc = 1;
    }
    return rc;
}
