/* The committed GGUF files of test_gguf (gguf_corpus.h): the malformed corpus
 * data/fixtures/gguf-bad and the fuzz seed data/fixtures/gguf-seed/valid.gguf. */
#define _POSIX_C_SOURCE 200809L
#include "gguf_corpus.h"

#include "gguf_images.h"
#include "gguf_malformed.h"
#include "core/gguf.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS_DIR "data/fixtures/gguf-bad"
#define SEED_FILE "data/fixtures/gguf-seed/valid.gguf"

int q35_test_write_corpus(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    FILE *m = fopen(path, "w");
    if (!m) {
        fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(m, "# Malformed GGUF files, each refused by the reader with the message substring after\n"
               "# the file name. Written by `test_gguf --write-corpus DIR` from its table; checked by\n"
               "# test_gguf through q35_gguf_open. Seeds of the fuzz_gguf ctest.\n");
    int rc = 0;
    for (size_t i = 0; i < Q35_TEST_COUNT(q35_test_bad_cases) && rc == 0; i++) {
        q35_test_bad_image x;
        if (q35_test_build_bad(&q35_test_bad_cases[i], &x) != 0) {
            fprintf(stderr, "%s: cannot build\n", q35_test_bad_cases[i].name);
            rc = 1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s.gguf", dir, q35_test_bad_cases[i].name);
        if (q35_test_write_bytes(path, x.b.p, x.b.len) != 0) {
            fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
            rc = 1;
        }
        fprintf(m, "%s.gguf %s\n", q35_test_bad_cases[i].name, q35_test_bad_cases[i].want);
        printf("wrote %s (%" PRIu64 " bytes)\n", path, x.b.len);
        q35_test_bytes_free(&x.b);
    }
    if (fclose(m) != 0)
        rc = 1;
    return rc;
}

int q35_test_write_seed(const char *path)
{
    q35_error err = {{0}};
    q35_test_bytes img;
    uint64_t infos_end;
    if (q35_test_rich_image(&img, &infos_end, &err) != 0 || q35_test_write_bytes(path, img.p, img.len) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", path, err.msg[0] ? err.msg : strerror(errno));
        q35_test_bytes_free(&img);
        return 1;
    }
    printf("wrote %s (%" PRIu64 " bytes)\n", path, img.len);
    q35_test_bytes_free(&img);
    return 0;
}

static const q35_test_bad_case *find_bad(const char *file)
{
    for (size_t i = 0; i < Q35_TEST_COUNT(q35_test_bad_cases); i++) {
        const size_t n = strlen(q35_test_bad_cases[i].name);
        if (strncmp(file, q35_test_bad_cases[i].name, n) == 0 && strcmp(file + n, ".gguf") == 0)
            return &q35_test_bad_cases[i];
    }
    return NULL;
}

void q35_test_suite_corpus(q35_suite *s)
{
    printf("-- the corpus %s through q35_gguf_open (regenerate: test_gguf --write-corpus %s)\n", CORPUS_DIR,
           CORPUS_DIR);
    char dir[1024], path[1200];
    q35_repo_path(CORPUS_DIR, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t size = 0;
    char *manifest = q35_read_file(path, &size);
    if (!q35_case(s, manifest != NULL, "%s readable", path))
        return;
    manifest[size] = '\0';
    bool listed[Q35_TEST_COUNT(q35_test_bad_cases)] = {false};
    char *save = NULL;
    int n_listed = 0;
    for (char *line = strtok_r(manifest, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *want = strchr(line, ' ');
        if (!want) {
            q35_case(s, false, "MANIFEST line '%s' is not '<file> <substring>'", line);
            continue;
        }
        *want++ = '\0';
        n_listed++;
        snprintf(path, sizeof path, "%s/%s", dir, line);
        size_t file_bytes = 0;
        void *file = q35_read_file(path, &file_bytes);
        q35_error err = {{0}};
        q35_gguf *g = (q35_gguf *)&err;
        const int rc = q35_gguf_open(&g, path, &err);
        q35_case(s, file && file_bytes < Q35_TEST_CORPUS_MAX_BYTES && rc == -1 && g == NULL && strstr(err.msg, want),
                 "corpus %-32s (%4zu bytes): %s", line, file_bytes, err.msg);
        if (rc == 0)
            q35_gguf_close(g);
        /* The file is the one the table builds now, listed with the table's substring. */
        const q35_test_bad_case *c = find_bad(line);
        q35_test_bad_image x;
        const bool built = c && q35_test_build_bad(c, &x) == 0;
        q35_case(s, built && strcmp(c->want, want) == 0 && file && x.b.len == file_bytes &&
                        (file_bytes == 0 || memcmp(x.b.p, file, file_bytes) == 0),
                 "corpus %-32s matches the table's case", line);
        if (c)
            listed[c - q35_test_bad_cases] = true;
        if (built)
            q35_test_bytes_free(&x.b);
        free(file);
    }
    free(manifest);
    int missing = 0;
    for (size_t i = 0; i < Q35_TEST_COUNT(q35_test_bad_cases); i++)
        missing += !listed[i];
    q35_case(s, missing == 0, "MANIFEST lists all %zu table cases (%d missing)", Q35_TEST_COUNT(q35_test_bad_cases),
             missing);
    /* Every .gguf in the directory is listed. */
    DIR *d = opendir(dir);
    int unlisted = 0, n_files = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
            continue;
        n_files++;
        if (!find_bad(e->d_name)) {
            printf("       %s is not in the table\n", e->d_name);
            unlisted++;
        }
    }
    if (d)
        closedir(d);
    q35_case(s, d && unlisted == 0 && n_files == n_listed,
             "every .gguf in %s is listed: %d files, %d listed, %d unknown", CORPUS_DIR, n_files, n_listed, unlisted);

    /* The fuzz seed is the valid image of the truncation sweep. */
    q35_repo_path(SEED_FILE, path, sizeof path);
    q35_error err = {{0}};
    q35_gguf *g = NULL;
    q35_test_bytes img = {0};
    uint64_t infos_end;
    size_t seed_bytes = 0;
    void *seed = q35_read_file(path, &seed_bytes);
    const int rc = q35_gguf_open(&g, path, &err);
    q35_case(s, rc == 0 && q35_test_rich_image(&img, &infos_end, &err) == 0 && seed && seed_bytes == img.len &&
                    memcmp(seed, img.p, img.len) == 0 && seed_bytes < Q35_TEST_CORPUS_MAX_BYTES,
             "fuzz seed %s (%zu bytes) opens and is the valid image (regenerate: test_gguf --write-seed %s) %s",
             SEED_FILE, seed_bytes, SEED_FILE, err.msg);
    q35_gguf_close(g);
    free(seed);
    q35_test_bytes_free(&img);
}
