/* hta/settings.h: the options of an analysis, by their command-line names.
 *
 * A settings object starts with every default of `hta-mpi` (docs/hta-mpi.1)
 * and is changed one option at a time by its long name without the dashes
 * ("bins", "round-like-hta"), with the value as the command line would
 * give it; an option without a value (a flag) takes NULL, "" or "1".
 * Options that only concern the MPI run (output file, progress) are
 * accepted and ignored by hta_analyse_trace. */
#ifndef HTA_PUBLIC_SETTINGS_H
#define HTA_PUBLIC_SETTINGS_H

#include "hta/api.h"
#include "hta/error.h"

typedef struct hta_settings hta_settings;

/* Every option at its default; NULL when out of memory. */
HTA_API hta_settings *hta_settings_new(void);
HTA_API void hta_settings_destroy(hta_settings *s);

/* Sets one option; -1 with err naming the option when the name is unknown
 * or the value is not one it takes.  The value is copied.  An option the
 * command line takes more than once ("what-if") adds the value to those
 * set before. */
HTA_API int hta_settings_set(hta_settings *s, const char *name, const char *value,
                             hta_error *err);

/* 1 when the option takes a value, 0 for a flag, -1 for an unknown name. */
HTA_API int hta_settings_takes_value(const char *name);

#endif
