/* launcher_env.c: a recorded environment's rank, size and host (see
 * parse/launcher_env.h). */
#include "parse/launcher_env.h"

#include <string.h>

/* The launcher's rank and size variables, most specific first. */
static const char *const RANK_VARIABLES[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                             "PMI_RANK", "MV2_COMM_WORLD_RANK", "SLURM_PROCID",
                                             NULL};
static const char *const SIZE_VARIABLES[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                             "MV2_COMM_WORLD_SIZE", "SLURM_NTASKS", NULL};

static int is_name_byte(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* The value of `NAME=digits` in an environment dump (whatever separates
 * its variables), or -1. */
static int64_t variable_in(const char *env, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(env, name); p; p = strstr(p + 1, name)) {
        if ((p > env && is_name_byte(p[-1])) || p[n] != '=')
            continue;
        const char *q = p + n + 1;
        int64_t v = 0;
        if (*q < '0' || *q > '9')
            continue;
        for (; *q >= '0' && *q <= '9' && v < (INT64_MAX - 9) / 10; q++)
            v = v * 10 + (*q - '0');
        if (!is_name_byte(*q))
            return v;
    }
    return -1;
}

/* The value of the first of names set in env, or -1. */
static int64_t first_variable(const char *env, const char *const *names)
{
    for (; env && *names; names++) {
        int64_t v = variable_in(env, *names);
        if (v >= 0)
            return v;
    }
    return -1;
}

void hta_env_host(const char *env, char *host, size_t size)
{
    static const char NAME[] = "HOSTNAME=";
    for (const char *p = strstr(env, NAME); p; p = strstr(p + 1, NAME)) {
        if (p > env && is_name_byte(p[-1]))
            continue;
        const char *v = p + sizeof NAME - 1;
        size_t n = strcspn(v, ";");
        if (n == 0 || n >= size)
            return;
        memcpy(host, v, n);
        host[n] = '\0';
        return;
    }
}

int64_t hta_env_rank(const char *env)
{
    return first_variable(env, RANK_VARIABLES);
}

int64_t hta_env_world_size(const char *env)
{
    return first_variable(env, SIZE_VARIABLES);
}
