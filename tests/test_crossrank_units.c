/* test_crossrank_units.c: the cross-rank stage (crossrank/crossrank.h)
 * through its one entry, on a process alone, as the fuzzer and libhta
 * take it.
 *
 * Answers known by construction: hta-tracegen's timing model
 * (tools/tracegen_ddp.c, argv[2] is the generator): with --straggler 5:1.3
 * rank 5 starts every NCCL all-reduce last, the n-th all-reduce ends at
 * the same time on every rank, so rank q waits exactly its NCCL time less
 * rank 5's, and all the waiting is for rank 5 (tests/test_crossrank.py
 * checks the same answers through mpirun). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/kernel_breakdown.h"
#include "crossrank/exchange/collective_groups.h"
#include "crossrank/compare/collective_wait.h"
#include "crossrank/crossrank.h"
#include "crossrank/exchange/hosts.h"
#include "crossrank/job_path/kernel_medians.h"
#include "analysis/critical_path.h"
#include "parse/rank_name.h"
#include "crossrank/compare/nodes.h"
#include "crossrank/exchange/p2p_pairs.h"
#include "crossrank/compare/p2p_results.h"
#include "crossrank/compare/spread.h"
#include "crossrank/compare/stragglers.h"
#include "run/analyse_file.h"
#include "run/pipeline.h"
#include "run/ranks.h"
#include "unit.h"

#define RANKS 8
#define STRAGGLER 5
#define NCCL "ncclDevKernel_AllReduce"

/* Writes the job into dir; 0 when the generator ran. */
static int generate(const char *tracegen, const char *dir)
{
    char command[4096];
    snprintf(command, sizeof command,
             "'%s' -o '%s' --ranks %d --size-mb 0.2 --straggler %d:1.3 --seed 3 >/dev/null",
             tracegen, dir, RANKS, STRAGGLER);
    return system(command) == 0 ? 0 : -1;
}

/* Ranks 0..n-1 of dir through hta_analyse_file, as a run's processes do. */
static int analyse_ranks(const char *dir, int n, const hta_settings *s, hta_tableset *set)
{
    for (int r = 0; r < n; r++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/rank-%d.json", dir, r);
        if (stat(path, &st) || hta_analyse_file(path, (uint64_t)st.st_size, r, 0, s, set))
            return -1;
    }
    return 0;
}

static int analyse_job(const char *dir, const hta_settings *s, hta_tableset *set)
{
    return analyse_ranks(dir, RANKS, s, set);
}

/* Each rank's summed all-reduce time (us) from /kernels. */
static void nccl_time(const hta_tableset *set, double *us)
{
    const hta_table *k = hta_tableset_find(set, hta_kernels_table.name);
    for (int r = 0; r < RANKS; r++)
        us[r] = 0;
    for (size_t i = 0; k && i < k->n_rows; i++) {
        const hta_cell *row = hta_table_row(k, i);
        int64_t rank = row[HTA_KERNELS_RANK].i;
        if (rank >= 0 && rank < RANKS && strncmp(row[HTA_KERNELS_NAME].s, NCCL, strlen(NCCL)) == 0)
            us[rank] += row[HTA_KERNELS_SUM_US].f;
    }
}

static void check_collective_wait(const hta_tableset *set)
{
    const hta_table *w = hta_tableset_find(set, hta_collective_wait_table.name);
    CHECK(w && w->n_rows == RANKS, "/collective_wait: a row per rank");
    if (!w || w->n_rows != RANKS)
        return;
    double nccl[RANKS];
    nccl_time(set, nccl);
    int64_t n = hta_table_row(w, STRAGGLER)[HTA_COLLECTIVE_WAIT_COLLECTIVES].i;
    CHECK(n >= 6, "rank 5 ran %lld all-reduces", (long long)n);
    for (int q = 0; q < RANKS; q++) {
        const hta_cell *row = hta_table_row(w, (size_t)q);
        CHECK(row[HTA_COLLECTIVE_WAIT_RANK].i == q, "rows in rank order");
        CHECK(row[HTA_COLLECTIVE_WAIT_MATCHED].i == n &&
                  row[HTA_COLLECTIVE_WAIT_UNMATCHED].i == 0 &&
                  row[HTA_COLLECTIVE_WAIT_MISSING].i == 0,
              "rank %d: every all-reduce matched", q);
        CHECK(row[HTA_COLLECTIVE_WAIT_CLOCK_VIOLATIONS].i == 0, "rank %d: clocks agree", q);
        int last = q == STRAGGLER;
        CHECK(row[HTA_COLLECTIVE_WAIT_ARRIVED_LAST].i == (last ? n : 0) &&
                  row[HTA_COLLECTIVE_WAIT_ARRIVED_LAST_SHARE].f == (last ? 1.0 : 0.0),
              "rank %d arrives last %s", q, last ? "everywhere" : "nowhere");
        double want = nccl[q] - nccl[STRAGGLER];
        double got = row[HTA_COLLECTIVE_WAIT_TOTAL_WAIT_US].f;
        CHECK(fabs(got - want) <= 1e-9 * fabs(want) + 1e-9,
              "rank %d waits its all-reduce time less rank 5's: %.6f vs %.6f", q, got, want);
        CHECK(last || got > 0, "rank %d waits", q);
    }
}

static void check_stragglers(const hta_tableset *set)
{
    const hta_table *st = hta_tableset_find(set, hta_stragglers_table.name);
    CHECK(st && st->n_rows == RANKS, "/stragglers: a row per rank");
    for (size_t i = 0; st && i < st->n_rows; i++) {
        const hta_cell *row = hta_table_row(st, i);
        int top = i == 0;
        CHECK((row[HTA_STRAGGLERS_RANK].i == STRAGGLER) == top, "rank 5 first, and only first");
        CHECK(row[HTA_STRAGGLERS_FLAGGED].i == top, "only rank 5 flagged");
        CHECK(row[HTA_STRAGGLERS_SCORE].f == (top ? 1.0 : 0.0), "rank 5 caused all the wait");
    }
    const hta_table *o = hta_tableset_find(set, hta_outliers_table.name);
    size_t late = 0;
    for (size_t i = 0; o && i < o->n_rows; i++) {
        const hta_cell *row = hta_table_row(o, i);
        if (strcmp(row[HTA_OUTLIERS_CLASSIFICATION].s, "straggler") != 0)
            continue;
        late++;
        CHECK(row[HTA_OUTLIERS_RANK].i == STRAGGLER &&
                  strcmp(row[HTA_OUTLIERS_METRIC].s, "arrived_last_share") == 0,
              "the straggler outlier is rank 5's arrival share");
    }
    CHECK(late == 1, "one straggler row in /outliers, %zu", late);
}

/* The instance rows stay with the process that matched them (here the
 * only one): one per all-reduce, every rank in it. */
static void check_instances(const hta_tableset *in_place, int64_t n)
{
    const hta_table *c = hta_tableset_find(in_place, hta_collectives_table.name);
    CHECK(c && (int64_t)c->n_rows == n, "/collectives: one row per all-reduce");
    for (size_t i = 0; c && i < c->n_rows; i++)
        CHECK(hta_table_row(c, i)[HTA_COLLECTIVES_N_RANKS].i == RANKS, "all ranks in each");
}

/* What a process keeps for --write-traces adds up to its rank's wait. */
static void check_kept_waits(const hta_tableset *kept, const hta_tableset *all)
{
    const hta_table *k = hta_tableset_find(kept, hta_kernel_waits_table.name);
    const hta_table *w = hta_tableset_find(all, hta_collective_wait_table.name);
    CHECK(k && k->n_rows > 0, "kernel waits kept");
    double wait_us[RANKS] = {0};
    for (size_t i = 0; k && i < k->n_rows; i++) {
        const hta_cell *row = hta_table_row(k, i);
        int64_t rank = row[HTA_KERNEL_WAITS_RANK].i;
        if (rank >= 0 && rank < RANKS)
            wait_us[rank] += (double)row[HTA_KERNEL_WAITS_WAIT_NS].i / 1000.0;
        CHECK(row[HTA_KERNEL_WAITS_ARRIVED_LAST].i == (rank == STRAGGLER), "arrival of %lld",
              (long long)rank);
    }
    for (int q = 0; w && w->n_rows == RANKS && q < RANKS; q++) {
        double total = hta_table_row(w, (size_t)q)[HTA_COLLECTIVE_WAIT_TOTAL_WAIT_US].f;
        CHECK(fabs(wait_us[q] - total) <= 1e-6 * total + 1e-3, "rank %d: kept waits %.3f = %.3f",
              q, wait_us[q], total);
    }
}

/* The entry itself, as a run's process calls it, with the kernel waits
 * kept: the root's tables as hta_crossrank_alone makes them, and what
 * stays on the process. */
static void test_entry_keeps_what_stays(const char *dir, const hta_settings *s)
{
    hta_tableset all = {0}, exchanged = {0}, in_place = {0}, kept = {0};
    hta_rank_map map = {0};
    hta_error err = {{0}};
    size_t n_valid = 0;
    int64_t *valid = NULL;
    int rc = analyse_job(dir, s, &all) || hta_resolve_ranks(&all, &s->run.ranks, &map, &err) ||
             hta_rank_map_find_nodes(&map, &all, &s->crossrank, &err) ||
             !(valid = hta_rank_map_kept_ranks(&map, &n_valid)) ||
             hta_tableset_take(&all, HTA_TABLE_EXCHANGED | HTA_TABLE_IN_PLACE, &exchanged);
    CHECK(rc == 0, "analysed and ranks resolved: %s", err.text);
    hta_tableset_take(&exchanged, HTA_TABLE_IN_PLACE, &in_place);
    hta_tableset_keep(&all, HTA_TABLE_GATHERED); /* as the run gathers them */
    hta_processes alone = {.me = HTA_ROOT, .n = 1, .mpi = 0};
    hta_crossrank_tables t = {.all = &all, .exchanged = &exchanged, .valid = valid,
                              .n_valid = n_valid, .hosts = &map.hosts, .in_place = &in_place,
                              .kept = &kept};
    CHECK(rc == 0 && hta_crossrank(&alone, &t, &s->crossrank, &err) == 0, "entry: %s", err.text);
    CHECK(exchanged.n_tables == 0, "the exchanged tables consumed");
    for (size_t i = 0; i < all.n_tables; i++)
        CHECK(all.tables[i]->flags & HTA_TABLE_GATHERED, "the root holds only gathered tables: %s",
              all.tables[i]->name);
    check_collective_wait(&all);
    const hta_table *w = hta_tableset_find(&all, hta_collective_wait_table.name);
    if (w && w->n_rows == RANKS)
        check_instances(&in_place, hta_table_row(w, 0)[HTA_COLLECTIVE_WAIT_COLLECTIVES].i);
    check_kept_waits(&kept, &all);
    free(valid);
    hta_rank_map_free(&map);
    hta_tableset_free(&all);
    hta_tableset_free(&exchanged);
    hta_tableset_free(&in_place);
    hta_tableset_free(&kept);
}

/* The stages after the analyses for a process alone, as the fuzzer and
 * libhta's hta_analyse_trace take them. */
static void test_alone_finds_the_straggler(const char *dir, const hta_settings *s)
{
    hta_tableset set = {0};
    hta_rank_map map = {0};
    hta_error err = {{0}};
    CHECK(analyse_job(dir, s, &set) == 0, "analysed");
    CHECK(hta_crossrank_alone(&set, s, &map, &err) == 0, "cross-rank stage: %s", err.text);
    check_collective_wait(&set);
    check_stragglers(&set);
    hta_rank_map_free(&map);
    hta_tableset_free(&set);
}

/* A 1F1B pipeline without transfer time (hta-tracegen --pp, coalesced
 * batches) through the stages of a process alone: every neighbour pair
 * sends M per step, paired; every stage's bubble is 1F1B's (P-1)/(M+P-1). */
#define PP 4
#define MICROBATCHES 5
#define PP_STEPS 2

static void test_alone_pairs_the_pipeline(const char *tracegen, const hta_settings *defaults)
{
    char dir[] = "/tmp/hta-crossrank-pp.XXXXXX", command[8600];
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(command, sizeof command,
             "'%s' --pp %d --microbatches %d --steps %d --transfer-us 0 --coalesced -o '%s/job' "
             ">/dev/null", tracegen, PP, MICROBATCHES, PP_STEPS, dir);
    CHECK(system(command) == 0, "hta-tracegen --pp ran");
    hta_settings s = *defaults;
    s.analysis.include_last_step = 1;
    hta_tableset set = {0};
    hta_rank_map map = {0};
    hta_error err = {{0}};
    char job[4200];
    snprintf(job, sizeof job, "%s/job", dir);
    CHECK(analyse_ranks(job, PP, &s, &set) == 0, "analysed");
    CHECK(hta_crossrank_alone(&set, &s, &map, &err) == 0, "cross-rank stage: %s", err.text);
    const hta_table *sum = hta_tableset_find(&set, hta_p2p_summary_table.name);
    CHECK(sum && sum->n_rows == 2 * (PP - 1), "a summary row per neighbour pair and direction");
    for (size_t r = 0; sum && r < sum->n_rows; r++)
        CHECK(hta_table_row(sum, r)[HTA_P2P_SUMMARY_COUNT].i == MICROBATCHES * PP_STEPS,
              "pair %zu paired every microbatch", r);
    const hta_table *ps = hta_tableset_find(&set, hta_pipeline_steps_table.name);
    CHECK(ps && ps->n_rows == PP * PP_STEPS, "a pipeline row per rank and step");
    double closed = (double)(PP - 1) / (MICROBATCHES + PP - 1);
    for (size_t r = 0; ps && r < ps->n_rows; r++) {
        const hta_cell *row = hta_table_row(ps, r);
        CHECK(row[HTA_PIPELINE_STEPS_MICROBATCHES].i == MICROBATCHES, "microbatches counted");
        CHECK(fabs(row[HTA_PIPELINE_STEPS_BUBBLE_FRACTION].f - closed) < 1e-9,
              "rank %lld step %lld: bubble %.12f, 1F1B %.12f", (long long)row[0].i,
              (long long)row[HTA_PIPELINE_STEPS_STEP].i, row[HTA_PIPELINE_STEPS_BUBBLE_FRACTION].f,
              closed);
    }
    hta_rank_map_free(&map);
    hta_tableset_free(&set);
    snprintf(command, sizeof command, "rm -rf '%s' '%s.truth.json'", dir, job);
    CHECK(system(command) == 0, "cleaned up");
}

/* The host PyTorch's tensorboard_trace_handler writes into a file name,
 * HOST_PID.TIMESTAMP.pt.trace.json: dots and underscores in the host kept,
 * anything else no host. */
static void test_host_from_file_name(void)
{
    static const struct {
        const char *path, *host;
    } cases[] = {
        {"/a/b/node7_1234.1700000000000.pt.trace.json", "node7"},
        {"gpu-a.cluster.local_99.17.pt.trace.json.gz", "gpu-a.cluster.local"},
        {"my_host_12.34.pt.trace.json", "my_host"},
        {"rank-3.json", NULL},
        {"host_pid.17.pt.trace.json", NULL},
        {"host_12.ts.pt.trace.json", NULL},
        {"_12.34.pt.trace.json", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len = 0;
        const char *host = hta_host_from_file_name(cases[i].path, &len);
        int same = cases[i].host ? host && len == strlen(cases[i].host) &&
                                       memcmp(host, cases[i].host, len) == 0
                                 : host == NULL;
        CHECK(same, "%s: host %.*s", cases[i].path, host ? (int)len : 6, host ? host : "(none)");
    }
}

/* The hypergeometric tail against sums done by hand: all 8 flagged ranks
 * of 32 on one node of 8 is 1 / C(32, 8); one flagged rank of 8 on a node
 * of 8 ranks of 32, 1 - C(24, 8) / C(32, 8) (fewer than one is certain). */
static void test_hypergeometric_tail(void)
{
    double all = hta_hypergeometric_tail(8, 8, 8, 32), one = hta_hypergeometric_tail(1, 8, 8, 32);
    CHECK(fabs(all * 10518300.0 - 1) < 1e-9, "P(8 of 8) = %.6g", all);
    CHECK(fabs(one - (1 - 735471.0 / 10518300.0)) < 1e-12, "P(>= 1) = %.12g", one);
    CHECK(hta_hypergeometric_tail(0, 8, 8, 32) == 1.0, "P(>= 0) = 1");
}

/* A kernel's median is taken per place, not per name: "gemm" runs twice
 * a step, 100 us then 500 us on ranks 0 and 1; rank 2's first is 300 us,
 * its second 500.  Per place the medians are 100 and 500 us on every
 * rank; one median per name (400, over the six launches) would put rank
 * 0's second launch 100 us above it. */
static void test_kernel_medians_per_place(void)
{
    hta_tableset set = {0};
    hta_table *t = hta_tableset_table(&set, &hta_kernel_runs_table);
    hta_table *d = hta_tableset_table(&set, &hta_kernel_durations_table);
    hta_table *names = hta_tableset_table(&set, &hta_path_names_table);
    static const int64_t dur[3][2] = {{100000, 500000}, {100000, 500000}, {300000, 500000}};
    for (int64_t rank = 0; t && d && names && rank < 3; rank++) {
        for (int64_t id = 0; id < 5; id++) { /* the rank's names, "gemm" its 4th */
            hta_row_builder row = hta_table_add_row(names);
            hta_row_put_i64(&row, rank);
            hta_row_put_i64(&row, id);
            hta_row_put_str(&row, id == 4 ? "gemm" : "other");
            CHECK(hta_row_done(&row) == 0, "name row");
        }
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, rank);
        hta_row_put_i64(&row, 7);                        /* step */
        hta_row_put_i64(&row, 4 * ((int64_t)1 << 32) + 2); /* name id 4, 2 launches */
        CHECK(hta_row_done(&row) == 0, "run row");
        row = hta_table_add_row(d);
        hta_row_put_i64(&row, rank);
        for (int place = 0; place < HTA_KERNEL_DURATIONS_PER_ROW; place++)
            hta_row_put_i64(&row, place < 2 ? dur[rank][place] : 0);
        CHECK(hta_row_done(&row) == 0, "durations row");
    }
    hta_processes alone = {.me = HTA_ROOT, .n = 1, .mpi = 0};
    hta_kernel_median *m = NULL;
    size_t n = 0;
    CHECK(t && d && hta_kernel_medians_exchange(&alone, t, d, names, &m, &n) == 0, "exchange");
    CHECK(n == 6, "one median per launch: %zu", n);
    for (size_t i = 0; i < n; i++) {
        const hta_kernel_median *x = &m[i];
        CHECK(x->rank == (int64_t)(i / 2) && x->step == 7 && x->name_id == 4 &&
                  x->place == (int64_t)(i % 2),
              "launch %zu in (rank, step, name, place) order", i);
        CHECK(x->median == (x->place ? 500000.0 : 100000.0), "rank %lld place %lld: median %g",
              (long long)x->rank, (long long)x->place, x->median);
    }
    free(m);
    hta_tableset_free(&set);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: %s TRACES HTA_TRACEGEN\n", argv[0]);
        return 2;
    }
    char dir[] = "/tmp/hta-crossrank-units.XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    CHECK(generate(argv[2], dir) == 0, "hta-tracegen ran");
    hta_settings s;
    hta_settings_defaults(&s);
    s.run.quiet = 1;
    s.run.threads = 1;
    test_alone_finds_the_straggler(dir, &s);
    test_entry_keeps_what_stays(dir, &s);
    test_alone_pairs_the_pipeline(argv[2], &s);
    test_host_from_file_name();
    test_hypergeometric_tail();
    test_kernel_medians_per_place();
    char command[4200];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    CHECK(system(command) == 0, "cleaned up");
    return unit_finish();
}
