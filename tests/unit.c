/* unit.c: see unit.h. */
#include "unit.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <zlib.h>

int unit_failures, unit_checks;

const char *unit_real_traces(int argc, char **argv)
{
    struct stat st;
    char hta[4096];
    if (argc < 2) {
        printf("SKIP the checks on real traces: no traces folder given "
               "(../shared/traces beside the repository)\n");
        return NULL;
    }
    snprintf(hta, sizeof hta, "%s/hta", argv[1]);
    if (stat(hta, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("SKIP the checks on real traces: %s is absent "
               "(../shared/traces beside the repository)\n", hta);
        return NULL;
    }
    return argv[1];
}

/* The whole file, inflated when gzip, with room for a terminating NUL. */
static char *inflate_file(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *data = malloc(cap);
    int got;
    while ((got = gzread(f, data + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap)
            data = realloc(data, cap *= 2);
    }
    gzclose(f);
    *len = n;
    return data;
}

int for_each_real_trace(const char *traces, real_trace_check check)
{
    char root[4096];
    snprintf(root, sizeof root, "%s/hta", traces);
    DIR *d = opendir(root);
    CHECK(d != NULL, "cannot open %s", root);
    struct dirent *folder;
    int files = 0;
    while (d && (folder = readdir(d))) {
        if (folder->d_name[0] == '.')
            continue;
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, folder->d_name);
        DIR *fd = opendir(dir);
        struct dirent *file;
        while (fd && (file = readdir(fd))) {
            if (file->d_name[0] == '.')
                continue;
            char path[12288];
            snprintf(path, sizeof path, "%s/%s", dir, file->d_name);
            size_t len;
            char *data = inflate_file(path, &len);
            CHECK(data != NULL, "%s: unreadable", path);
            if (!data)
                continue;
            data[len] = '\0';  /* inflate_file always leaves room */
            check(path, data, len);
            files++;
            free(data);
        }
        if (fd)
            closedir(fd);
    }
    if (d)
        closedir(d);
    return files;
}

int unit_finish(void)
{
    printf("%d passed, %d failed\n", unit_checks - unit_failures, unit_failures);
    return unit_failures ? 1 : 0;
}
