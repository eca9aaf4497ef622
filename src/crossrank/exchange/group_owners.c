/* group_owners.c: rows to their group's owner (see
 * crossrank/exchange/group_owners.h). */
#include "crossrank/exchange/group_owners.h"

#include <stdlib.h>

#include "util/name_hash.h"

int hta_group_owner(const char *group, int n)
{
    return n > 1 ? (int)(hta_name_hash(group) % n) : 0;
}

int hta_send_to_group_owners(const hta_processes *pr, const hta_tableset *in,
                             const hta_group_keyed *keyed, size_t n_keyed, hta_tableset *out,
                             hta_error *err)
{
    hta_tableset *parts = calloc((size_t)pr->n, sizeof *parts);
    int failed = !parts;
    for (size_t k = 0; !failed && k < n_keyed; k++) {
        const hta_table *t = hta_tableset_find(in, keyed[k].spec->name);
        for (size_t r = 0; !failed && t && r < t->n_rows; r++) {
            const char *group = hta_table_row(t, r)[keyed[k].group_column].s;
            hta_table *part = hta_tableset_table(&parts[hta_group_owner(group, pr->n)],
                                                 keyed[k].spec);
            failed = !part || hta_table_copy_row(part, t, r) != 0;
        }
    }
    if (hta_processes_any(pr, failed)) {
        for (int q = 0; parts && q < pr->n; q++)
            hta_tableset_free(&parts[q]);
        free(parts);
        return hta_fail(err, "out of memory sending rows to their groups' owners");
    }
    int rc = hta_processes_exchange_tables(pr, parts, out, err);
    free(parts);
    return rc;
}
