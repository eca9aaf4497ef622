/* list_table_specs.c: prints every table spec (schema/table_list.h), one
 * line each: the name, the flags, then "column:type" per column, separated
 * by tabs; test_table_specs.py checks them against the documentation and
 * the sources. */
#include <stdio.h>

#include "schema/table_list.h"

static const char *const TYPES[] = {"i64", "f64", "str"};

int main(void)
{
    for (size_t i = 0; i < hta_table_spec_count(); i++) {
        const hta_table_spec *s = hta_table_spec_at(i);
        printf("%s\t%u", s->name, s->flags);
        for (size_t c = 0; c < s->n_columns; c++)
            printf("\t%s:%s", s->columns[c].name ? s->columns[c].name : "(null)",
                   TYPES[s->columns[c].type]);
        printf("\n");
        if (hta_table_spec_find(s->name) != s)
            return 1;
    }
    return hta_table_spec_find("no such table") != NULL;
}
