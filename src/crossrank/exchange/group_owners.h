/* crossrank/exchange/group_owners.h: rows sent to the process that owns
 * their process group.
 *
 * A group's owner is the hash of its name (util/name_hash.h) modulo the
 * processes: the same on every process with no exchange to agree on it,
 * and the groups spread evenly.  The owner then holds every member's rows
 * of its groups and compares them alone (the Flight Recorder dumps' hang
 * diagnosis, crossrank/compare/hang_diagnosis.h). */
#ifndef HTA_GROUP_OWNERS_H
#define HTA_GROUP_OWNERS_H

#include <stddef.h>

#include "crossrank/exchange/processes.h"
#include "table/table.h"
#include "util/error.h"

/* A table whose rows go to their group's owner, and its group column
 * (a string). */
typedef struct hta_group_keyed {
    const hta_table_spec *spec;
    size_t group_column;
} hta_group_keyed;

/* The process that owns group, of n. */
int hta_group_owner(const char *group, int n);

/* Every process: the rows of in's keyed tables (none: nothing sent) to
 * their groups' owners; out receives the rows of the groups this process
 * owns, from every process in process order.  -1 on every process when
 * any failed. */
int hta_send_to_group_owners(const hta_processes *pr, const hta_tableset *in,
                             const hta_group_keyed *keyed, size_t n_keyed, hta_tableset *out,
                             hta_error *err);

#endif
