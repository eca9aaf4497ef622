/* fr_dump_print: a Flight Recorder dump as parse/fr_dump.h reads it, printed
 * as JSON for tests/test_fr_reader.py to compare with Python's pickle.load
 * of the same bytes; a dump that fails prints its one-line error on stderr
 * and exits 1. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "parse/fr_dump.h"

static void text(const char *key, const char *s, const char *after)
{
    printf("\"%s\": \"", key);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    printf("\"%s", after);
}

static void entry(const hta_fr_entry *e)
{
    printf("{\"record_id\": %" PRId64 ", \"pg_id\": %" PRId64 ", \"collective_seq_id\": %" PRId64
           ", \"p2p_seq_id\": %" PRId64 ", \"op_id\": %" PRId64 ", ",
           e->record_id, e->pg_id, e->collective_seq_id, e->p2p_seq_id, e->op_id);
    text("pg_name", e->pg_name, ", ");
    text("pg_desc", e->pg_desc, ", ");
    text("profiling_name", e->profiling_name, ", ");
    printf("\"time_created_ns\": %" PRId64 ", \"time_started_ns\": %" PRId64
           ", \"time_completed_ns\": %" PRId64 ", \"timeout_ms\": %" PRId64 ", ",
           e->time_created_ns, e->time_started_ns, e->time_completed_ns, e->timeout_ms);
    if (isnan(e->duration_ms))
        printf("\"duration_ms\": null, ");
    else
        printf("\"duration_ms\": %.17g, ", e->duration_ms);
    printf("\"input_sizes\": %s, \"output_sizes\": %s, ", e->input_sizes, e->output_sizes);
    text("input_dtypes", e->input_dtypes, ", ");
    text("output_dtypes", e->output_dtypes, ", ");
    text("state", hta_fr_state_name(e->state), ", ");
    printf("\"is_p2p\": %s, \"retired\": %s, ", e->is_p2p ? "true" : "false",
           e->retired ? "true" : "false");
    text("thread_name", e->thread_name, ", ");
    text("thread_id", e->thread_id, ", ");
    printf("\"frames\": [");
    for (size_t i = 0; i < e->n_frames; i++) {
        printf("%s{", i ? ", " : "");
        text("name", e->frames[i].name, ", ");
        text("filename", e->frames[i].filename, ", ");
        printf("\"line\": %" PRId64 "}", e->frames[i].line);
    }
    printf("]}");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: fr_dump_print DUMP\n");
        return 2;
    }
    hta_fr_dump d;
    hta_error err;
    if (hta_fr_dump_read(argv[1], &d, &err)) {
        fprintf(stderr, "%s\n", err.text);
        return 1;
    }
    printf("{\"sniffed\": %d, ", hta_fr_dump_file_sniff(argv[1]));
    text("encoding", d.encoding == HTA_FR_JSON ? "json" : "pickle", ", ");
    printf("\"protocol\": %d, \"rank\": %" PRId64 ", ", d.pickle_protocol, d.rank);
    text("version", d.version, ", ");
    text("comm_lib_version", d.comm_lib_version, ", ");
    printf("\"groups\": [");
    for (size_t i = 0; i < d.n_groups; i++) {
        printf("%s{", i ? ", " : "");
        text("name", d.groups[i].name, ", ");
        text("desc", d.groups[i].desc, ", ");
        printf("\"ranks\": [");
        for (size_t k = 0; k < d.groups[i].n_ranks; k++)
            printf("%s%" PRId64, k ? ", " : "", d.groups[i].ranks[k]);
        printf("]}");
    }
    printf("], \"status\": [");
    for (size_t i = 0; i < d.n_status; i++)
        printf("%s{\"pg_id\": %" PRId64 ", \"last_enqueued\": %" PRId64
               ", \"last_started\": %" PRId64 ", \"last_completed\": %" PRId64 "}",
               i ? ", " : "", d.status[i].pg_id, d.status[i].last_enqueued,
               d.status[i].last_started, d.status[i].last_completed);
    printf("], \"entries\": [");
    for (size_t i = 0; i < d.n_entries; i++) {
        printf("%s", i ? ", " : "");
        entry(&d.entries[i]);
    }
    printf("]}\n");
    hta_fr_dump_free(&d);
    return 0;
}
