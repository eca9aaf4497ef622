/* test_fuzz_regressions.c: replays every input the fuzzers ever failed on
 * (fuzz/regressions/<harness>/ of each harness in fuzz/harnesses, one file
 * each, named for the fixed defect)
 * through the fuzz targets themselves (fuzz/targets.c), in the normal
 * build: a fixed crash stays fixed where libFuzzer is not built, and the
 * sanitized suite (scripts/test-sanitized.sh) replays them under ASan and
 * UBSan.  A target aborts on a violated invariant, which fails the test. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/targets.h"

typedef int (*fuzz_target)(const uint8_t *data, size_t size);

static unsigned char *read_whole(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *data = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)n + 1)) && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (f)
        fclose(f);
    *len = (size_t)n;
    return data;
}

/* Replays every file of dir; returns how many (0 when there is no such
 * folder: a harness that never failed has none), or -1 when one is
 * unreadable. */
static int replay(const char *dir, fuzz_target target)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int count = 0;
    struct dirent *entry;
    while (count >= 0 && (entry = readdir(d))) {
        if (entry->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
        size_t len;
        unsigned char *data = read_whole(path, &len);
        if (!data) {
            fprintf(stderr, "cannot read %s\n", path);
            count = -1;
            break;
        }
        fprintf(stderr, "replaying %s\n", path);
        target(data, len);
        free(data);
        count++;
    }
    closedir(d);
    return count;
}

typedef struct harness {
    const char *name;
    fuzz_target target;
} harness;

static const harness HARNESSES[] = {
#define HTA_FUZZ_HARNESS(name) {#name, hta_fuzz_##name},
#include "fuzz_harnesses.h"
#undef HTA_FUZZ_HARNESS
};

int main(void)
{
    int total = 0, unreadable = 0;
    for (size_t i = 0; i < sizeof HARNESSES / sizeof *HARNESSES; i++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/regressions/%s", FUZZ_DIR, HARNESSES[i].name);
        int n = replay(dir, HARNESSES[i].target);
        fprintf(stderr, "%d %s reproducers replayed\n", n, HARNESSES[i].name);
        if (n < 0)
            unreadable = 1;
        else
            total += n;
    }
    /* None at all: the folder was not found, and nothing was checked. */
    return !unreadable && total > 0 ? 0 : 1;
}
