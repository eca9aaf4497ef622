/* device_entry.c: "FILE@device=N" names (see parse/device_entry.h). */
#include "parse/device_entry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DEVICE_SUFFIX "@device="

int hta_device_entry_parse(const char *path, char *base, size_t cap, long long *device)
{
    const char *at = strstr(path, DEVICE_SUFFIX);
    while (at && strstr(at + 1, DEVICE_SUFFIX))
        at = strstr(at + 1, DEVICE_SUFFIX);
    if (!at || (size_t)(at - path) >= cap)
        return 0;
    const char *digits = at + strlen(DEVICE_SUFFIX);
    char *end;
    long long v = strtoll(digits, &end, 10);
    if (end == digits || *end || v < 0)
        return 0;
    memcpy(base, path, (size_t)(at - path));
    base[at - path] = '\0';
    struct stat st;
    if (stat(base, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    *device = v;
    return 1;
}

int hta_device_entry_name(const char *file_path, long long device, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s" DEVICE_SUFFIX "%lld", file_path, device);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}
