/* Runs a fuzz harness's LLVMFuzzerTestOneInput() without libFuzzer, on every file named on the
 * command line and every file in the folders named there (in name order): the regression test of
 * the inputs in tests/fuzz/regressions, built with any compiler in the normal build. An input
 * that breaks an assertion of the harness aborts; one that leaves the function returning 0 passes.
 *   replay_HARNESS FILE_OR_FOLDER...                                                             */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t capacity = 4096, size = 0;
    uint8_t *data = malloc(capacity);
    for (size_t got = 1; data && got > 0;) {
        if (size == capacity) {
            uint8_t *grown = realloc(data, capacity * 2);
            if (!grown) free(data);
            data = grown;
            capacity *= 2;
            if (!data) break;
        }
        got = fread(data + size, 1, capacity - size, file);
        size += got;
    }
    const int failed = ferror(file);
    fclose(file);
    if (!data || failed) {
        free(data);
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    printf("replay: %s (%zu bytes)\n", path, size);
    fflush(stdout);
    const int result = LLVMFuzzerTestOneInput(data, size);
    free(data);
    return result != 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int run_folder(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir) {
        fprintf(stderr, "replay: cannot open folder %s\n", path);
        return 1;
    }
    char **names = NULL;
    size_t count = 0;
    int failures = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (e->d_name[0] == '.') continue;
        char **grown = realloc(names, sizeof *names * (count + 1));
        if (!grown) {
            failures++;
            break;
        }
        names = grown;
        const size_t length = strlen(path) + strlen(e->d_name) + 2;
        char *name = malloc(length);
        if (!name) {
            failures++;
            break;
        }
        snprintf(name, length, "%s/%s", path, e->d_name);
        names[count++] = name;
    }
    closedir(dir);
    if (count > 0) qsort(names, count, sizeof *names, compare_names);
    for (size_t i = 0; i < count; i++) {
        failures += run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return failures;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_FOLDER...\n", argv[0]);
        return 2;
    }
    int failures = 0, inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no file or folder %s\n", argv[i]);
            failures++;
            continue;
        }
        failures += S_ISDIR(st.st_mode) ? run_folder(argv[i]) : run_file(argv[i]);
        inputs++;
    }
    if (failures) fprintf(stderr, "replay: %d failure(s)\n", failures);
    return failures != 0 || inputs == 0;
}
