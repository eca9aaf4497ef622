/* command_line.c: the command line into settings (docs/hta-mpi.1).
 *
 * getopt_long's table is built from the settings list, so an option
 * declared there is parsed here without more; only --help and --version,
 * which are answers rather than settings, are the command line's own.
 * Parsing never touches MPI or the file system, so --help, --version and
 * usage errors answer at once on every process. */
#include "settings/command_line.h"

#include "hta/error.h" /* the exit codes */

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_HELP = 'h', OPT_VERSION = 255, OPT_FIRST_SETTING = 256 };

void hta_print_usage(FILE *out)
{
    fprintf(out,
        "Usage: mpirun -n N hta-mpi [options] TRACE_DIR | TRACE_FILE...\n"
        "       hta-mpi diff [options] BASE.h5 NEW.h5  (compare two runs; see diff --help)\n"
        "Analyse PyTorch profiler (Kineto) traces, Nsight Systems SQLite exports or\n"
        "CUPTI CSV folders, one per rank, in parallel.\n"
        "Options without a value are off unless given.\n"
        "\n");
    hta_settings_print_help(out);
    fprintf(out,
        "  -h, --help                      this help\n"
        "      --version                   print the version\n"
        "\n"
        "Exit status: %d all traces analysed, %d some traces failed (results written),\n"
        "%d usage error or nothing to do, %d internal or MPI failure.\n",
        HTA_EXIT_OK, HTA_EXIT_SOME_FAILED, HTA_EXIT_USAGE, HTA_EXIT_INTERNAL);
}

/* getopt_long's options and short-option string from the settings list;
 * a setting's option returns OPT_FIRST_SETTING + its index, or its letter. */
typedef struct option_table {
    struct option *options;
    char shorts[64];
} option_table;

static int build_option_table(option_table *t)
{
    t->options = calloc(hta_n_settings + 3, sizeof *t->options);
    if (!t->options)
        return -1;
    size_t n_short = 0;
    for (size_t i = 0; i < hta_n_settings; i++) {
        const hta_setting *e = &hta_setting_list[i];
        int takes_value = e->kind != HTA_SETTING_flag;
        t->options[i] = (struct option){e->name, takes_value ? required_argument : no_argument,
                                        NULL, e->short_name ? e->short_name
                                                            : OPT_FIRST_SETTING + (int)i};
        if (e->short_name && n_short + 3 < sizeof t->shorts) {
            t->shorts[n_short++] = e->short_name;
            if (takes_value)
                t->shorts[n_short++] = ':';
        }
    }
    t->options[hta_n_settings] = (struct option){"help", no_argument, NULL, OPT_HELP};
    t->options[hta_n_settings + 1] = (struct option){"version", no_argument, NULL, OPT_VERSION};
    t->shorts[n_short++] = 'h';
    t->shorts[n_short] = '\0';
    return 0;
}

static size_t setting_of(int c)
{
    if (c >= OPT_FIRST_SETTING)
        return (size_t)(c - OPT_FIRST_SETTING);
    for (size_t i = 0; i < hta_n_settings; i++)
        if (hta_setting_list[i].short_name == c)
            return i;
    return hta_n_settings;
}

static char *join_arguments(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (int i = 0; i < argc; i++) {
        strcat(s, argv[i]);
        if (i + 1 < argc)
            strcat(s, " ");
    }
    return s;
}

/* The options up to the inputs; HTA_CLI_RUN when all were settings. */
static hta_cli_action parse_settings(int argc, char **argv, const option_table *t,
                                     hta_settings *s, hta_error *err)
{
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, t->shorts, t->options, NULL)) != -1) {
        if (c == OPT_HELP)
            return HTA_CLI_HELP;
        if (c == OPT_VERSION)
            return HTA_CLI_VERSION;
        if (c == '?' || c == ':') {
            hta_fail(err, "%s: %s (see --help)", argv[optind - 1],
                     c == ':' ? "missing value" : "unknown option");
            return HTA_CLI_USAGE_ERROR;
        }
        size_t i = setting_of(c);
        if (i == hta_n_settings) {
            hta_fail(err, "unknown option (see --help)");
            return HTA_CLI_USAGE_ERROR;
        }
        if (hta_settings_set_at(s, i, optarg, err))
            return HTA_CLI_USAGE_ERROR;
    }
    return HTA_CLI_RUN;
}

hta_cli_action hta_parse_options(int argc, char **argv, hta_settings *s, hta_error *err)
{
    hta_settings_defaults(s);
    option_table t;
    if (build_option_table(&t)) {
        hta_fail(err, "out of memory");
        return HTA_CLI_USAGE_ERROR;
    }
    hta_cli_action action = parse_settings(argc, argv, &t, s, err);
    free(t.options);
    if (action != HTA_CLI_RUN)
        return action;
    if (hta_settings_check(s, err))
        return HTA_CLI_USAGE_ERROR;
    s->run.inputs = argv + optind;
    s->run.n_inputs = (size_t)(argc - optind);
    if (s->run.n_inputs == 0) {
        hta_fail(err, "no trace directory or file given (see --help)");
        return HTA_CLI_USAGE_ERROR;
    }
    s->output.command_line = join_arguments(argc, argv);
    return HTA_CLI_RUN;
}

