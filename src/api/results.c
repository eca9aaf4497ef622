/* results.c: a results file read back (hta/results.h) through the reader
 * `hta-mpi diff` uses (diff/results_reader.h).  The handle keeps every
 * table it has read, so a table lives as long as the open file. */
#include "hta/results.h"

#include <stdlib.h>

#include "diff/results_reader.h"

typedef struct hta_results_handle {
    hta_results_file file;     /* first: the public handle points here */
    hta_tableset read;         /* owned: the tables read so far */
} hta_results_handle;

hta_results_file *hta_results_file_open(const char *path, hta_error *err)
{
    hta_results_handle *h = calloc(1, sizeof *h);
    if (!h) {
        hta_fail(err, "%s: out of memory", path);
        return NULL;
    }
    if (hta_results_open(path, &h->file, err)) {
        free(h);
        return NULL;
    }
    return &h->file;
}

void hta_results_file_close(hta_results_file *rf)
{
    if (!rf)
        return;
    hta_results_handle *h = (hta_results_handle *)rf;
    hta_results_close(&h->file);
    hta_tableset_free(&h->read);
    free(h);
}

int hta_results_file_has_table(const hta_results_file *rf, const char *name)
{
    return hta_results_has(rf, name);
}

const hta_table *hta_results_file_table(hta_results_file *rf, const char *name,
                                        hta_error *err)
{
    hta_results_handle *h = (hta_results_handle *)rf;
    const hta_table *t = hta_tableset_find(&h->read, name);
    if (t)
        return t;
    if (hta_results_read_table(&h->file, name, &h->read, err))
        return NULL;
    t = hta_tableset_find(&h->read, name);
    if (!t)
        hta_fail(err, "%s: no table '%s'", h->file.path, name);
    return t;
}
