/* settings/command_line.h: the command line into settings
 * (settings/settings.h declares every option; docs/hta-mpi.1 documents
 * them).  Library code: libhta's hta_command_parse is this. */
#ifndef HTA_COMMAND_LINE_H
#define HTA_COMMAND_LINE_H

#include <stdio.h>

#include "settings/settings.h"
#include "util/error.h"

typedef enum hta_cli_action {
    HTA_CLI_RUN,
    HTA_CLI_HELP,
    HTA_CLI_VERSION,
    HTA_CLI_USAGE_ERROR,
} hta_cli_action;

/* Fills s (fresh, or emptied by hta_settings_free) with the defaults,
 * then from argv; the inputs are borrowed from argv. */
hta_cli_action hta_parse_options(int argc, char **argv, hta_settings *s, hta_error *err);
void hta_print_usage(FILE *out);

#endif
