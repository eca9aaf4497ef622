/* parse/fr_dump.h: one rank's PyTorch NCCL Flight Recorder dump.
 *
 * On a collective's timeout each rank writes its ring buffer of recent
 * collectives to <prefix><rank> (TORCH_FR_DUMP_TEMP_FILE): a pickle of a
 * dict (torch's own pickler, or Python's when a tool rewrote it), or the
 * same content as JSON.  This reads either into the struct below, keyed as
 * torch's FlightRecorder writes them: version, pg_config (per group: name,
 * desc, ranks), pg_status (per pg id: the last enqueued, started and
 * completed collective), comm_lib_version and entries.  A dump names no
 * rank of its own (fr_trace takes it from the file name); a "rank" key, where
 * a writer adds one, wins over the name.
 *
 * Dumps of format major version 2 are read; the fields they lack
 * (thread_name before 2.2, pg_status before 2.3, ...) read as absent. */
#ifndef HTA_FR_DUMP_H
#define HTA_FR_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* The /ranks input_format of a dump.  A dump fills no trace model, so it
 * is no row of the trace readers' table (parse/input_reader.h): a run
 * recognises it by its content alone. */
#define HTA_FR_INPUT_FORMAT "flight-recorder"

typedef enum hta_fr_state {
    HTA_FR_SCHEDULED = 0,
    HTA_FR_STARTED = 1,
    HTA_FR_COMPLETED = 2,
} hta_fr_state;

/* "scheduled", "started", "completed". */
const char *hta_fr_state_name(hta_fr_state state);

typedef struct hta_fr_frame {
    char *name, *filename;   /* owned */
    int64_t line;
} hta_fr_frame;

/* One collective or point-to-point operation as the rank enqueued it. */
typedef struct hta_fr_entry {
    int64_t record_id, pg_id, collective_seq_id, p2p_seq_id, op_id;
    char *pg_name, *pg_desc;      /* process_group: (name, desc) */
    char *profiling_name;         /* "nccl:all_reduce", "nccl:recv 0<-1" */
    int64_t time_created_ns;
    int64_t time_started_ns;      /* time_discovered_started_ns; -1: none */
    int64_t time_completed_ns;    /* time_discovered_completed_ns; -1: none */
    double duration_ms;           /* NAN unless TORCH_NCCL_ENABLE_TIMING */
    int64_t timeout_ms;           /* -1: not written */
    /* Shapes as Python prints the lists ("[[1024], [8, 4]]") and dtypes
     * joined by commas ("Float,Float"): compared whole across ranks. */
    char *input_sizes, *output_sizes, *input_dtypes, *output_dtypes;
    hta_fr_state state;
    bool is_p2p, retired;
    char *thread_name, *thread_id;   /* "" when not written */
    hta_fr_frame *frames;            /* innermost first; none in JSON dumps */
    size_t n_frames;
} hta_fr_entry;

/* One process group as pg_config lists it. */
typedef struct hta_fr_group {
    char *name, *desc;            /* owned */
    int64_t *ranks;               /* the global ranks of its members, as listed */
    size_t n_ranks;
} hta_fr_group;

/* pg_status of one pg id: sequence numbers as the rank's process group
 * counted them (-1: the key was absent). */
typedef struct hta_fr_pg_status {
    int64_t pg_id;
    int64_t last_enqueued, last_started, last_completed;
} hta_fr_pg_status;

typedef enum hta_fr_encoding {
    HTA_FR_PICKLE = 0,
    HTA_FR_JSON = 1,
} hta_fr_encoding;

typedef struct hta_fr_dump {
    hta_fr_encoding encoding;
    int pickle_protocol;          /* 2..5; 0 for JSON */
    char *version;                /* "2.10" */
    char *comm_lib_version;       /* "" when not written */
    int64_t rank;                 /* the dump's "rank" key, else -1 */
    hta_fr_group *groups;
    size_t n_groups;
    hta_fr_pg_status *status;
    size_t n_status;
    hta_fr_entry *entries;        /* in the order recorded, oldest first */
    size_t n_entries;
} hta_fr_dump;

/* 1 when the first bytes of a file (head[0, n)) look like a dump: a pickle
 * of protocol 2..5 naming a dump's keys, or a JSON object naming an
 * entry's or the dump's own keys and none of a Kineto trace's. */
int hta_fr_dump_sniff(const unsigned char *head, size_t n);

/* 1 when the file at path looks like a dump (by its first bytes). */
int hta_fr_dump_file_sniff(const char *path);

/* Reads a dump held in bytes[0, len) (name: for errors) into out.  On
 * error out is empty and err is one line naming the file, and for a parse
 * error the byte offset and the opcode. */
int hta_fr_dump_parse(const unsigned char *bytes, size_t len, const char *name,
                      hta_fr_dump *out, hta_error *err);

/* Reads the dump at path. */
int hta_fr_dump_read(const char *path, hta_fr_dump *out, hta_error *err);

void hta_fr_dump_free(hta_fr_dump *dump);

#endif
