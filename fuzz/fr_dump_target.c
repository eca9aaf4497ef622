/* fr_dump_target.c: the Flight Recorder dump target (see targets.h).
 *
 * The bytes are a dump in either encoding, read from memory as a run reads
 * a file.  A dump that reads must hold every string the struct promises
 * and states in range; one that does not must say so in one line that
 * names the input. */
#include "targets.h"

#include <string.h>

#include "parse/fr_dump.h"
#include "checks.h"

#define NAME "fuzz-dump"

static void check_entry(const hta_fr_entry *e)
{
    hta_fuzz_require(e->pg_name && e->pg_desc && e->profiling_name && e->input_sizes &&
                     e->output_sizes && e->input_dtypes && e->output_dtypes && e->thread_name &&
                     e->thread_id, "every string of an entry is set");
    hta_fuzz_require(e->state <= HTA_FR_COMPLETED, "a known state");
    for (size_t i = 0; i < e->n_frames; i++)
        hta_fuzz_require(e->frames[i].name && e->frames[i].filename, "a frame's strings set");
}

int hta_fuzz_fr_dump(const uint8_t *data, size_t size)
{
    hta_fr_dump d;
    hta_error err = {{0}};
    if (hta_fr_dump_parse(data, size, NAME, &d, &err)) {
        hta_fuzz_require(!strncmp(err.text, NAME ": ", strlen(NAME) + 2),
                         "the error names the input");
        hta_fuzz_require(!strchr(err.text, '\n'), "the error is one line");
        hta_fuzz_require(d.n_entries == 0 && d.entries == NULL, "nothing kept after an error");
        return 0;
    }
    hta_fuzz_require(d.version && d.comm_lib_version, "version strings set");
    for (size_t i = 0; i < d.n_entries; i++)
        check_entry(&d.entries[i]);
    for (size_t i = 0; i < d.n_groups; i++)
        hta_fuzz_require(d.groups[i].name && d.groups[i].desc, "a group's strings set");
    hta_fr_dump_free(&d);
    return 0;
}
