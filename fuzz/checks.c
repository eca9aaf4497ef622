/* checks.c: what every fuzz target checks (see checks.h). */
#include "checks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hta_fuzz_require(int condition, const char *what)
{
    if (condition)
        return;
    fprintf(stderr, "fuzz invariant violated: %s\n", what);
    abort();
}

static int same_strings(const hta_strtab *a, const hta_strtab *b)
{
    if (a->count != b->count)
        return 0;
    for (uint32_t i = 0; i < a->count; i++)
        if (a->lengths[i] != b->lengths[i] ||
            memcmp(a->strings[i], b->strings[i], a->lengths[i]) != 0)
            return 0;
    return 1;
}

int hta_fuzz_same_trace(const hta_trace *a, const hta_trace *b)
{
    return a->n_events == b->n_events && a->n_extras == b->n_extras &&
           (a->n_events == 0 ||
            memcmp(a->events, b->events, a->n_events * sizeof *a->events) == 0) &&
           (a->n_extras == 0 ||
            memcmp(a->extras, b->extras, a->n_extras * sizeof *a->extras) == 0) &&
           same_strings(&a->names, &b->names) && same_strings(&a->categories, &b->categories) &&
           a->rank == b->rank && a->world_size == b->world_size && a->json_bytes == b->json_bytes &&
           a->skipped_events == b->skipped_events && a->fractional_ts == b->fractional_ts;
}
