/* api/settings.h: what an hta_settings handle holds (hta/settings.h).
 *
 * The run's own hta_options, plus the copies of the string values it
 * borrows: a library caller's strings need not outlive the call that set
 * them, as argv's do for the command. */
#ifndef HTA_API_SETTINGS_H
#define HTA_API_SETTINGS_H

#include "cli/options.h"
#include "hta/settings.h"

struct hta_settings {
    hta_options opt;
    char **copies;             /* owned: every value given to hta_settings_set */
    size_t n_copies;
};

/* The options of s, or the defaults when s is NULL (into *defaults). */
const hta_options *hta_settings_options(const hta_settings *s, hta_options *defaults);

#endif
