/* settings.c: hta_settings, the options of the public interface, set by
 * their command-line names through the command line's own parser, so that
 * a name, a value's syntax and a default mean the same in both. */
#include "api/settings.h"

#include <stdlib.h>
#include <string.h>

hta_settings *hta_settings_new(void)
{
    hta_settings *s = calloc(1, sizeof *s);
    if (s)
        hta_options_defaults(&s->opt);
    return s;
}

void hta_settings_destroy(hta_settings *s)
{
    if (!s)
        return;
    hta_options_free(&s->opt);
    for (size_t i = 0; i < s->n_copies; i++)
        free(s->copies[i]);
    free(s->copies);
    free(s);
}

/* A copy of value that lives as long as s. */
static const char *keep_copy(hta_settings *s, const char *value)
{
    char **grown = realloc(s->copies, (s->n_copies + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->copies = grown;
    char *copy = strdup(value);
    if (copy)
        s->copies[s->n_copies++] = copy;
    return copy;
}

int hta_settings_set(hta_settings *s, const char *name, const char *value, hta_error *err)
{
    const char *kept = value ? keep_copy(s, value) : NULL;
    if (value && !kept)
        return hta_fail(err, "out of memory");
    return hta_options_set(&s->opt, name, kept, err);
}

int hta_settings_takes_value(const char *name)
{
    return hta_options_takes_value(name);
}

const hta_options *hta_settings_options(const hta_settings *s, hta_options *defaults)
{
    if (s)
        return &s->opt;
    hta_options_defaults(defaults);
    return defaults;
}
