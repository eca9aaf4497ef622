/* test_trace_ranges.c: what the reader keeps for the critical path and
 * the CUPTI counters: a range-profiler trace's ranges and counters come
 * out the same from the serial and the split parse (renumbered names and
 * counter names), and a cuda_sync event's wait args are kept.
 *
 *   test_trace_ranges TRACES_DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "parse/split_parse.h"
#include "parse/read_input.h"
#include "parse/reader.h"
#include "model/trace.h"

static int failures;
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
            failures++;                                                   \
        }                                                                 \
    } while (0)

/* The only .json.gz file of dir, inflated into a temporary plain file. */
static int inflate_folder(const char *dir, char *plain, char *gz_path, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls %s/*.json.gz", dir);
    FILE *ls = popen(cmd, "r");
    if (!ls || !fgets(gz_path, (int)cap, ls))
        return -1;
    pclose(ls);
    gz_path[strcspn(gz_path, "\n")] = '\0';
    gzFile in = gzopen(gz_path, "rb");
    int fd = mkstemp(plain);
    if (!in || fd < 0)
        return -1;
    char buf[1 << 16];
    int n;
    while ((n = gzread(in, buf, sizeof buf)) > 0)
        if (write(fd, buf, (size_t)n) != n)
            return -1;
    gzclose(in);
    close(fd);
    return 0;
}

static void test_ranges_split_like_serial(const char *traces)
{
    char dir[512], gz[1024], plain[] = "/tmp/hta-ranges-XXXXXX";
    snprintf(dir, sizeof dir, "%s/hta/cupti_profiler", traces);
    CHECK(inflate_folder(dir, plain, gz, sizeof gz) == 0, "cannot inflate %s", dir);
    hta_trace serial, split;
    hta_error err = {{0}};
    CHECK(hta_read_trace_file(plain, NULL, &serial, &err) == 0, "%s", err.text);
    CHECK(serial.n_ranges == 77 && serial.n_range_counters == 77 * 9,
          "serial: %zu ranges, %zu counters", serial.n_ranges, serial.n_range_counters);
    hta_read_options threads = {.threads = 4, .split_min_bytes = 1};
    hta_deadline none = {0};
    CHECK(hta_read_trace_split(plain, &threads, &none, &split, &err) == 0,
          "the range-profiler trace did not split: %s", err.text);
    CHECK(split.n_ranges == serial.n_ranges && split.n_range_counters == serial.n_range_counters,
          "split: %zu ranges, %zu counters", split.n_ranges, split.n_range_counters);
    for (size_t i = 0; i < serial.n_ranges && i < split.n_ranges; i++) {
        const hta_profiler_range *a = &serial.ranges[i], *b = &split.ranges[i];
        CHECK(a->ts_ns == b->ts_ns && a->dur_ns == b->dur_ns && a->n_counters == b->n_counters &&
                  strcmp(hta_strtab_get(&serial.names, a->name),
                         hta_strtab_get(&split.names, b->name)) == 0,
              "range %zu differs", i);
        for (uint32_t c = 0; c < a->n_counters && c < b->n_counters; c++) {
            const hta_range_counter *x = &serial.range_counters[a->first_counter + c];
            const hta_range_counter *y = &split.range_counters[b->first_counter + c];
            CHECK(x->value == y->value &&
                      strcmp(hta_strtab_get(&serial.counter_names, x->counter),
                             hta_strtab_get(&split.counter_names, y->counter)) == 0,
                  "range %zu counter %u differs", i, c);
        }
    }
    const hta_profiler_range *first = &serial.ranges[0];
    int found = 0;
    for (uint32_t c = 0; c < first->n_counters; c++) {
        const hta_range_counter *x = &serial.range_counters[first->first_counter + c];
        if (strcmp(hta_strtab_get(&serial.counter_names, x->counter),
                   "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") == 0)
            found = x->value == 38731776.0;
    }
    CHECK(found, "the first range's ffma counter is not 38731776");
    hta_trace_free(&serial);
    hta_trace_free(&split);
    unlink(plain);
}

static void test_sync_wait_args(const char *traces)
{
    char path[1024];
    snprintf(path, sizeof path,
             "%s/hta/critical_path_event_sync_multi_stream/event_sync_trace.json.gz", traces);
    hta_trace t;
    hta_error err = {{0}};
    CHECK(hta_read_trace_file(path, NULL, &t, &err) == 0, "%s", err.text);
    int stream_wait = 0, event_sync_without = 0;
    for (size_t i = 0; i < t.n_events; i++) {
        const hta_event *e = &t.events[i];
        const char *name = hta_event_name(&t, e);
        if (strcmp(name, "Stream Wait Event") == 0) {
            const hta_event_extra *x =
                (e->flags & HTA_EVENT_HAS_WAIT) ? hta_trace_extra(&t, e) : NULL;
            stream_wait = x && x->wait_on_stream == 20 && x->wait_record_correlation == 1385;
        }
        /* The first Event Sync waits on record -1: nothing kept. */
        if (strcmp(name, "Event Sync") == 0 && hta_event_correlation(&t, e) == 24)
            event_sync_without = !(e->flags & HTA_EVENT_HAS_WAIT);
    }
    CHECK(stream_wait, "Stream Wait Event: wait_on_stream 20, record 1385 not kept");
    CHECK(event_sync_without, "an Event Sync waiting on no record keeps wait args");
    hta_trace_free(&t);
}

int main(int argc, char **argv)
{
    const char *traces = argc > 1 ? argv[1] : "../shared/traces";
    test_ranges_split_like_serial(traces);
    test_sync_wait_args(traces);
    if (failures)
        fprintf(stderr, "%d failed\n", failures);
    else
        printf("ok\n");
    return failures ? 1 : 0;
}
