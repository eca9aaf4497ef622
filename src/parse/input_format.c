/* input_format.c: which reader a trace input needs (see hta/input_format.h). */
#include "hta/input_format.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const NAMES[] = {"auto", "kineto", "nsys-sqlite", "cupti-csv"};

const char *hta_input_format_name(hta_input_format format)
{
    return format >= HTA_INPUT_AUTO && format <= HTA_INPUT_CUPTI_CSV ? NAMES[format] : "?";
}

int hta_input_format_parse(const char *text)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, NAMES[i]) == 0)
            return i;
    return -1;
}

static int has_file(const char *dir, const char *name)
{
    char path[4096];
    struct stat st;
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    return n > 0 && (size_t)n < sizeof path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int hta_is_cupti_csv_dir(const char *dir)
{
    return has_file(dir, "kernel.csv") || has_file(dir, "conc_kernel.csv");
}

/* SQLite's 16-byte file header. */
static int starts_like_sqlite(const char *path)
{
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && memcmp(head, magic, sizeof head) == 0;
}

hta_input_format hta_input_format_of(const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return HTA_INPUT_CUPTI_CSV;
    size_t n = strlen(path);
    if (starts_like_sqlite(path) || (n >= 7 && strcmp(path + n - 7, ".sqlite") == 0))
        return HTA_INPUT_NSYS_SQLITE;
    return HTA_INPUT_KINETO;
}
