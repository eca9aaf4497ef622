/* tracegen_common.h: what hta-tracegen's job shapes share: an error
 * exit, an allocation that cannot fail, the hash their randomness comes
 * from, events written into a JSON array (the layouts with a ground
 * truth), a count option, one rank's trace being written and the run of
 * a layout with a truth over its ranks. */
#ifndef TRACEGEN_COMMON_H
#define TRACEGEN_COMMON_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Prints "hta-tracegen: MSG DETAIL" and exits with status 2. */
void tg_fail(const char *msg, const char *detail);

/* calloc that exits with "out of memory" instead of returning NULL. */
void *tg_calloc(size_t n, size_t size);

/* splitmix64's finaliser: a pure function of its input, so a job shape
 * can recompute any rank's or step's random value anywhere, without state
 * shared between ranks or invocations. */
static inline uint64_t tg_mix64(uint64_t z)
{
    z += UINT64_C(0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Writes one event (printf-style) into an open JSON array, a comma
 * before it unless *first, which it then clears. */
void tg_json_event(FILE *f, bool *first, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One complete event into an open JSON array: a CPU one (pid 100, tid 1)
 * or, given a stream >= 0, a GPU one (pid 0, device 0); with a
 * correlation id when corr > 0. */
void tg_complete_event(FILE *f, bool *first, const char *cat, const char *name, int64_t ts,
                       int64_t dur, int64_t corr, int64_t stream);

/* The value of a count option, 1..hi; exits on anything else. */
int64_t tg_json_count(const char *opt, const char *s, int64_t hi);

/* "K:F", a rank or stage K slowed by a factor F >= 1 (--slow, --slow-stage,
 * --hot), into *k and *factor; false when s is not of that form. */
bool tg_index_factor(const char *s, int *k, double *factor);

/* A job shape with a ground truth: its arguments (flag, -o DIR, --ranks N
 * up to max_ranks, --steps S up to max_steps; ranks and steps keep the
 * defaults they hold when absent), exiting on anything else. */
typedef struct {
    const char *dir;
    int64_t ranks, steps;
} tg_truth_job;
void tg_truth_job_parse(tg_truth_job *job, int argc, char **argv, const char *flag,
                        int64_t max_ranks, int64_t max_steps);

/* Creates the job's DIR and opens the truth file beside it, DIR + suffix
 * (so that DIR holds only traces), into path (room for 4096), with its
 * opening "{\"ranks\": {" written; tg_truth_close writes the closing. */
FILE *tg_truth_open(const tg_truth_job *job, const char *suffix, char *path);
void tg_truth_close(FILE *truth, const char *path);

/* Opens DIR/rank-R.json (its name into path, room for 4096) with the
 * distributedInfo and the opening of traceEvents written;
 * tg_rank_trace_close writes the closing. */
FILE *tg_rank_trace_open(const char *dir, int64_t rank, int64_t world, char *path);
void tg_rank_trace_close(FILE *f, const char *path);

/* One rank's trace being written (tg_rank_trace_open): whether the next
 * event is its first and the next correlation id, from 1. */
typedef struct {
    FILE *f;
    bool first;
    int64_t next_corr;
    char path[4096];
} tg_rank_writer;

/* tg_complete_event into the rank's trace. */
void tg_rank_put(tg_rank_writer *k, const char *cat, const char *name, int64_t ts, int64_t dur,
                 int64_t corr, int64_t stream);

/* A kernel on stream, [start, start + dur), and the 5 us cudaLaunchKernel
 * at launch that launched it, under the next correlation id. */
void tg_rank_put_kernel(tg_rank_writer *k, const char *name, int64_t launch, int64_t start,
                        int64_t dur, int64_t stream);

/* Writes rank's trace into k and its entry's value (after "  \"R\": ") into
 * truth; ctx is the layout's own. */
typedef void tg_rank_fn(tg_rank_writer *k, FILE *truth, int64_t rank, const tg_truth_job *job,
                        const void *ctx);

/* The whole job: the truth file DIR + suffix (tg_truth_open) and every
 * rank's trace, the entries of the truth's "ranks" written around
 * write_rank's values, each after its rank's trace is opened so that a
 * rank that cannot be written ends the truth with the ranks before it. */
void tg_truth_run(const tg_truth_job *job, const char *suffix, tg_rank_fn *write_rank,
                  const void *ctx);

#endif
