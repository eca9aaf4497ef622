/* tracegen_common.c: see tracegen_common.h. */
#define _POSIX_C_SOURCE 200809L

#include "tracegen_common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void tg_fail(const char *msg, const char *detail)
{
    fprintf(stderr, "hta-tracegen: %s%s\n", msg, detail ? detail : "");
    exit(2);
}

void *tg_calloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tg_fail("out of memory", NULL);
    return p;
}

void tg_json_event(FILE *f, bool *first, const char *fmt, ...)
{
    va_list ap;
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
}

void tg_complete_event(FILE *f, bool *first, const char *cat, const char *name, int64_t ts,
                       int64_t dur, int64_t corr, int64_t stream)
{
    char args[96] = "";
    int n = corr > 0 ? snprintf(args, sizeof args, "\"correlation\":%" PRId64, corr) : 0;
    if (stream >= 0)
        snprintf(args + n, sizeof args - (size_t)n, "%s\"stream\":%" PRId64 ",\"device\":0",
                 n ? "," : "", stream);
    tg_json_event(f, first,
                  "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"%s\",\"pid\":%d,\"tid\":1,"
                  "\"ts\":%" PRId64 ",\"dur\":%" PRId64 ",\"args\":{%s}}",
                  cat, name, stream >= 0 ? 0 : 100, ts, dur, args);
}

int64_t tg_json_count(const char *opt, const char *s, int64_t hi)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || errno || *end || v < 1 || v > hi) {
        char detail[200];
        snprintf(detail, sizeof detail, "%s '%s'", opt, s ? s : "");
        tg_fail("bad value for ", detail);
    }
    return v;
}

bool tg_index_factor(const char *s, int *k, double *factor)
{
    char *colon;
    *k = (int)strtol(s, &colon, 10);
    return *colon == ':' && (*factor = strtod(colon + 1, NULL)) >= 1.0;
}

void tg_truth_job_parse(tg_truth_job *job, int argc, char **argv, const char *flag,
                        int64_t max_ranks, int64_t max_steps)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, flag))
            continue;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            job->dir = v;
        else if (!strcmp(a, "--ranks"))
            job->ranks = tg_json_count(a, v, max_ranks);
        else if (!strcmp(a, "--steps"))
            job->steps = tg_json_count(a, v, max_steps);
        else {
            fprintf(stderr, "hta-tracegen: %s takes only -o DIR, --ranks N, --steps S: %s\n",
                    flag, a);
            exit(2);
        }
        i++;
    }
    if (!job->dir) {
        fprintf(stderr, "hta-tracegen: %s needs -o DIR\n", flag);
        exit(2);
    }
}

FILE *tg_truth_open(const tg_truth_job *job, const char *suffix, char *path)
{
    if (mkdir(job->dir, 0777) && errno != EEXIST)
        tg_fail("cannot create ", job->dir);
    snprintf(path, 4096, "%s%s", job->dir, suffix);
    FILE *truth = fopen(path, "w");
    if (!truth)
        tg_fail("cannot write ", path);
    fputs("{\"ranks\": {\n", truth);
    return truth;
}

void tg_truth_close(FILE *truth, const char *path)
{
    fputs("}}\n", truth);
    if (fclose(truth))
        tg_fail("write failed: ", path);
}

FILE *tg_rank_trace_open(const char *dir, int64_t rank, int64_t world, char *path)
{
    snprintf(path, 4096, "%s/rank-%" PRId64 ".json", dir, rank);
    FILE *f = fopen(path, "w");
    if (!f)
        tg_fail("cannot write ", path);
    fprintf(f, "{\"distributedInfo\": {\"rank\": %" PRId64 ", \"world_size\": %" PRId64
               "}, \"traceEvents\": [", rank, world);
    return f;
}

void tg_rank_trace_close(FILE *f, const char *path)
{
    fputs("\n]}\n", f);
    if (fclose(f))
        tg_fail("write failed: ", path);
}

void tg_rank_put(tg_rank_writer *k, const char *cat, const char *name, int64_t ts, int64_t dur,
                 int64_t corr, int64_t stream)
{
    tg_complete_event(k->f, &k->first, cat, name, ts, dur, corr, stream);
}

void tg_rank_put_kernel(tg_rank_writer *k, const char *name, int64_t launch, int64_t start,
                        int64_t dur, int64_t stream)
{
    int64_t corr = k->next_corr++;
    tg_rank_put(k, "cuda_runtime", "cudaLaunchKernel", launch, 5, corr, -1);
    tg_rank_put(k, "kernel", name, start, dur, corr, stream);
}

void tg_truth_run(const tg_truth_job *job, const char *suffix, tg_rank_fn *write_rank,
                  const void *ctx)
{
    char path[4096];
    FILE *truth = tg_truth_open(job, suffix, path);
    for (int64_t r = 0; r < job->ranks; r++) {
        tg_rank_writer k = {.first = true, .next_corr = 1};
        k.f = tg_rank_trace_open(job->dir, r, job->ranks, k.path);
        fprintf(truth, "  \"%" PRId64 "\": ", r);
        write_rank(&k, truth, r, job, ctx);
        tg_rank_trace_close(k.f, k.path);
        fputs(r + 1 == job->ranks ? "\n" : ",\n", truth);
    }
    tg_truth_close(truth, path);
}
