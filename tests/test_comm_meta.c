/* test_comm_meta.c: the collective metadata the reader keeps
 * (model/comm_meta.h), on a hand-written trace whose answer is known:
 * which events get an entry, their fields, distributedInfo.pg_config, the
 * same result wherever the input buffer is cut, and the merge of parts. */
#include <string.h>

#include "model/comm_meta.h"
#include "parse/reader.h"
#include "unit.h"

static const char TRACE[] =
    "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 4, \"pg_config\": ["
    "{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"ranks\": [0, 1, 2, 3]},"
    "{\"pg_name\": \"5\", \"pg_desc\": \"tp\", \"ranks\": [0, 1]}]},"
    "\"traceEvents\": ["
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"ts\": 1, \"dur\": 2,"
    " \"args\": {\"External id\": 7, \"Sequence number\": 3}},"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"ts\": 10,"
    " \"dur\": 5, \"args\": {\"External id\": 42, \"Collective name\": \"allgather\","
    " \"In msg nelems\": 100, \"Out msg nelems\": 200, \"Group size\": 2,"
    " \"dtype\": \"BFloat16\", \"Process Group Name\": \"5\","
    " \"Process Group Description\": \"tp\", \"Process Group Ranks\": \"[0, 1]\","
    " \"Seq\": 9}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllGather\", \"ts\": 20,"
    " \"dur\": 4, \"args\": {\"External id\": 42, \"stream\": 13, \"correlation\": 5}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce\", \"ts\": 30,"
    " \"dur\": 4, \"args\": {\"stream\": 13, \"correlation\": 6,"
    " \"Collective name\": \"all\\u0072educe\", \"In msg nelems\": 8, \"dtype\": \"Float\","
    " \"Process Group Name\": \"0\"}},"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sgemm\", \"ts\": 40, \"dur\": 4,"
    " \"args\": {\"External id\": 43, \"stream\": 7}}"
    "]}";

static void check_trace(const hta_trace *t, size_t chunk)
{
    const hta_comm_set *s = &t->comm;
    CHECK(t->n_events == 5, "chunk %zu: events %zu", chunk, t->n_events);
    CHECK(s->n == 3, "chunk %zu: entries %zu (record_param_comms and two NCCL kernels)", chunk,
          s->n);
    if (s->n != 3)
        return;
    const hta_comm_meta *op = &s->items[0], *k1 = &s->items[1], *k2 = &s->items[2];
    CHECK(op->event == 1 && k1->event == 2 && k2->event == 3, "chunk %zu: events", chunk);
    CHECK(hta_comm_set_find(s, 2) == k1 && hta_comm_set_find(s, 4) == NULL, "find");
    CHECK(hta_comm_has_metadata(op) && !hta_comm_has_metadata(k1) &&
              hta_comm_has_metadata(k2), "chunk %zu: which have metadata", chunk);
    CHECK(op->external_id == 42 && k1->external_id == 42 && k2->external_id == -1,
          "chunk %zu: External id", chunk);
    CHECK(op->in_nelems == 100 && op->out_nelems == 200 && op->group_size == 2 && op->seq == 9,
          "chunk %zu: numbers", chunk);
    CHECK(strcmp(hta_comm_string(s, op->collective), "allgather") == 0 &&
              strcmp(hta_comm_string(s, op->dtype), "BFloat16") == 0 &&
              strcmp(hta_comm_string(s, op->pg_name), "5") == 0 &&
              strcmp(hta_comm_string(s, op->pg_desc), "tp") == 0 &&
              strcmp(hta_comm_string(s, op->pg_ranks), "[0, 1]") == 0,
          "chunk %zu: strings", chunk);
    CHECK(strcmp(hta_comm_string(s, k2->collective), "allreduce") == 0 &&
              k2->seq == -1 && k2->out_nelems == -1 && k2->pg_ranks == HTA_COMM_NO_STRING,
          "chunk %zu: escaped name, absent fields", chunk);
    CHECK(s->n_groups == 2, "chunk %zu: pg_config groups %zu", chunk, s->n_groups);
    if (s->n_groups == 2)
        CHECK(strcmp(hta_comm_string(s, s->groups[1].name), "5") == 0 &&
                  strcmp(hta_comm_string(s, s->groups[1].desc), "tp") == 0 &&
                  strcmp(hta_comm_string(s, s->groups[0].ranks), "[0, 1, 2, 3]") == 0,
              "chunk %zu: pg_config", chunk);
}

/* Every cut of the input buffer gives the same entries: strings of the
 * metadata outlive a refill. */
static void test_reader_keeps_the_metadata(void)
{
    size_t chunks[] = {0, 1, 2, 3, 7, 16, 61};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        hta_trace t;
        hta_error err = {0};
        int rc = hta_read_trace_memory(TRACE, strlen(TRACE), chunks[i], "comm", &t, &err);
        CHECK(rc == 0, "chunk %zu: parse: %s", chunks[i], err.text);
        if (rc == 0)
            check_trace(&t, chunks[i]);
        hta_trace_free(&t);
    }
}

static void test_append_shifts_events_and_reinterns(void)
{
    hta_comm_set a, b;
    hta_comm_set_init(&a);
    hta_comm_set_init(&b);
    uint32_t x = hta_strtab_intern(&a.strings, "x", 1);
    uint32_t y = hta_strtab_intern(&b.strings, "y", 1), bx = hta_strtab_intern(&b.strings, "x", 1);
    hta_comm_meta m = {.event = 3, .collective = x, .dtype = HTA_COMM_NO_STRING,
                       .pg_name = x, .pg_desc = HTA_COMM_NO_STRING,
                       .pg_ranks = HTA_COMM_NO_STRING, .in_split = HTA_COMM_NO_STRING,
                       .out_split = HTA_COMM_NO_STRING};
    CHECK(hta_comm_set_push(&a, &m) == 0, "push");
    m.event = 1;
    m.collective = y;
    m.pg_name = bx;
    CHECK(hta_comm_set_push(&b, &m) == 0, "push");
    CHECK(hta_comm_set_append(&a, &b, 10) == 0, "append");
    CHECK(a.n == 2 && a.items[1].event == 11, "event shifted: %zu",
          a.n == 2 ? a.items[1].event : 0);
    CHECK(a.n == 2 && strcmp(hta_comm_string(&a, a.items[1].collective), "y") == 0 &&
              a.items[1].pg_name == x,
          "strings re-interned");
    hta_comm_set_free(&a);
    hta_comm_set_free(&b);
}

static void test_dtype_sizes(void)
{
    CHECK(hta_dtype_size("Float") == 4 && hta_dtype_size("BFloat16") == 2 &&
              hta_dtype_size("Half") == 2 && hta_dtype_size("Long") == 8 &&
              hta_dtype_size("Double") == 8 && hta_dtype_size("Byte") == 1,
          "sizes");
    CHECK(hta_dtype_size("Unknown") == 0 && hta_dtype_size("") == 0, "unknown");
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_reader_keeps_the_metadata();
    test_append_shifts_events_and_reinterns();
    test_dtype_sizes();
    return unit_finish();
}
