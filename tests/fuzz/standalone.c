/* Replays fuzz inputs without libFuzzer: every file named on the command line
 * (directories: every file under them) goes through LLVMFuzzerTestOneInput once.
 * Ends with the harness line "N passed, 0 failed"; a crash ends the process,
 * which scripts/test.sh counts as a failure. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int g_runs;

static void run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *buf = malloc((size_t)(n > 0 ? n : 1));
    if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    if (getenv("TEXEL_TEST_VERBOSE"))
        printf("run  %s (%ld bytes)\n", path, n);
    LLVMFuzzerTestOneInput(buf, (size_t)(n > 0 ? n : 0));
    free(buf);
    g_runs++;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "no such input: %s\n", path);
        exit(1);
    }
    if (!S_ISDIR(st.st_mode)) {
        run_file(path);
        return;
    }
    DIR *d = opendir(path);
    char **names = NULL;
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        names = realloc(names, (size_t)(n + 1) * sizeof *names);
        names[n] = malloc(strlen(path) + strlen(e->d_name) + 2);
        sprintf(names[n++], "%s/%s", path, e->d_name);
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name); /* same order every run */
    for (int i = 0; i < n; i++) {
        run_path(names[i]); /* subdirectories too (libonnx-testdata's tree) */
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv) {
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        run_path(argv[i]);
    printf("%d passed, 0 failed\n", g_runs);
    return 0;
}
