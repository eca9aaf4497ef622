/* hta/cli.h: the command line of hta-mpi. */
#ifndef HTA_CLI_H
#define HTA_CLI_H

#include <stdio.h>

#include "util/error.h"
#include "cli/options.h"

typedef enum hta_cli_action {
    HTA_CLI_RUN,
    HTA_CLI_HELP,
    HTA_CLI_VERSION,
    HTA_CLI_USAGE_ERROR,
} hta_cli_action;

/* Exit codes (interface.md). */
enum {
    HTA_EXIT_OK = 0,
    HTA_EXIT_SOME_FAILED = 1,
    HTA_EXIT_USAGE = 2,
    HTA_EXIT_INTERNAL = 3,
};

hta_cli_action hta_parse_options(int argc, char **argv, hta_options *o, hta_error *err);
void hta_options_free(hta_options *o);
void hta_print_usage(FILE *out);

#endif
