/* diff_command.c: the `hta-mpi diff` command line (see diff/diff_command.h).
 *
 * Inputs are checked before anything is compared, and the output before
 * the inputs are read, so every usage or input error costs nothing and
 * ends in one line on stderr naming the file and the reason. */
#include "diff/diff_command.h"

#include "diff/collective_diff.h"
#include "diff/diff_summary.h"
#include "diff/diff_writer.h"
#include "diff/kernel_diff.h"
#include "diff/options_check.h"
#include "diff/rank_metric_diff.h"
#include "diff/tail_diff.h"
#include "hta/error.h" /* the exit codes */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_MIN_CHANGE 0.05
#define DEFAULT_TOP 10
#define MAX_OPTION_NOTES 16

typedef struct diff_options {
    const char *base, *new_, *output;
    int force, quiet, top;
    double min_change;
    char *command_line;        /* owned */
} diff_options;

static void print_usage(FILE *out)
{
    fprintf(out,
        "Usage: hta-mpi diff [options] BASE.h5 NEW.h5\n"
        "Compare two hta-mpi results files: kernels added, removed, slower and faster\n"
        "(over all ranks and per rank), every per-rank metric, the longest events of\n"
        "each activity category, and collectives when both files have them.\n"
        "\n"
        "  -o, --output FILE     diff file to write (default hta-diff.h5)\n"
        "      --force           overwrite an existing diff file\n"
        "      --min-change F    a kernel whose total time changed by at most F is\n"
        "                        unchanged: a fraction (0.05) or a percentage (5%%)\n"
        "                        (default 5%%)\n"
        "      --top N           regressions, improvements, kernels and ranks listed in\n"
        "                        the summary (default 10)\n"
        "  -q, --quiet           no summary on stdout\n"
        "  -h, --help            this help\n"
        "\n"
        "Exit status: 0 compared, 2 usage error or an input that is not a results\n"
        "file this hta-mpi reads, 3 the diff file could not be written.\n");
}

static int parse_min_change(const char *text, double *out, hta_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    int percent = *end == '%';
    if (errno || end == text || end[percent] != '\0' || !(v >= 0))
        return hta_fail(err, "--min-change: expected a fraction (0.05) or a percentage (5%%), "
                             "got '%s'", text);
    *out = percent ? v / 100 : v;
    return 0;
}

static int parse_top(const char *text, int *out, hta_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > 1000000)
        return hta_fail(err, "--top: expected an integer >= 0, got '%s'", text);
    *out = (int)v;
    return 0;
}

static char *join_arguments(int argc, char **argv)
{
    size_t len = sizeof "hta-mpi";
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = malloc(len);
    if (!s)
        return NULL;
    strcpy(s, "hta-mpi");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

enum { OPT_FORCE = 256, OPT_MIN_CHANGE, OPT_TOP };

/* 0 run, 1 help shown, -1 usage error in err. */
static int parse(int argc, char **argv, diff_options *o, hta_error *err)
{
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, OPT_FORCE},
        {"min-change", required_argument, NULL, OPT_MIN_CHANGE},
        {"top", required_argument, NULL, OPT_TOP},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (diff_options){.output = "hta-diff.h5", .top = DEFAULT_TOP,
                        .min_change = DEFAULT_MIN_CHANGE};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case OPT_FORCE: o->force = 1; break;
        case OPT_MIN_CHANGE:
            if (parse_min_change(optarg, &o->min_change, err))
                return -1;
            break;
        case OPT_TOP:
            if (parse_top(optarg, &o->top, err))
                return -1;
            break;
        case 'q': o->quiet = 1; break;
        case 'h': return 1;
        default:
            return hta_fail(err, "%s: %s (see hta-mpi diff --help)", argv[optind - 1],
                            c == ':' ? "missing value" : "unknown option");
        }
    }
    if (argc - optind != 2)
        return hta_fail(err, "expected two results files, BASE.h5 NEW.h5 (see hta-mpi "
                             "diff --help)");
    o->base = argv[optind];
    o->new_ = argv[optind + 1];
    if (!o->force && access(o->output, F_OK) == 0)
        return hta_fail(err, "%s: already exists (use --force to overwrite)", o->output);
    if (!(o->command_line = join_arguments(argc, argv)))
        return hta_fail(err, "out of memory");
    return 0;
}

static int compare(const hta_diff_input *b, const hta_diff_input *n, double min_change,
                   hta_tableset *out, hta_error *err)
{
    if (hta_diff_kernels(b, n, min_change, out, err) || hta_diff_rank_metrics(b, n, out, err) ||
        hta_diff_tails(b, n, out, err) || hta_diff_collectives(b, n, out, err))
        return -1;
    return 0;
}

static void warn_about_differences(const hta_diff_input *b, const hta_diff_input *n)
{
    char notes[MAX_OPTION_NOTES][HTA_DIFF_NOTE_MAX];
    size_t count = hta_diff_option_differences(b, n, notes, MAX_OPTION_NOTES);
    for (size_t i = 0; i < count && i < MAX_OPTION_NOTES; i++)
        fprintf(stderr, "hta-mpi diff: warning: %s\n", notes[i]);
    if (b->file.schema_version != n->file.schema_version)
        fprintf(stderr,
                "hta-mpi diff: warning: BASE has schema version %lld and NEW %lld: tables whose "
                "meaning changed between them are compared as they are (docs/definitions.md, "
                "\"Schema versions\")\n",
                (long long)b->file.schema_version, (long long)n->file.schema_version);
}

static int compare_and_write(const diff_options *o, const hta_diff_input *base,
                             const hta_diff_input *new_, const char *version)
{
    hta_error err = {{0}};
    hta_tableset tables = {0};
    int code = HTA_EXIT_OK;
    if (compare(base, new_, o->min_change, &tables, &err)) {
        fprintf(stderr, "hta-mpi diff: %s\n", err.text);
        code = HTA_EXIT_USAGE;
    } else {
        warn_about_differences(base, new_);
        hta_diff_provenance p = {version, o->command_line, o->min_change};
        if (hta_diff_write(o->output, &tables, base, new_, &p, &err)) {
            fprintf(stderr, "hta-mpi diff: %s\n", err.text);
            code = HTA_EXIT_INTERNAL;
        } else if (!o->quiet) {
            hta_diff_print_summary(stdout, &tables, base, new_, o->top, o->min_change);
            printf("\nDiff written to %s\n", o->output);
        }
    }
    hta_tableset_free(&tables);
    return code;
}

static int run(const diff_options *o, const char *version)
{
    hta_error err = {{0}};
    hta_diff_input base, new_;
    if (hta_diff_input_load(o->base, &base, &err)) {
        fprintf(stderr, "hta-mpi diff: %s\n", err.text);
        return HTA_EXIT_USAGE;
    }
    if (hta_diff_input_load(o->new_, &new_, &err)) {
        fprintf(stderr, "hta-mpi diff: %s\n", err.text);
        hta_diff_input_free(&base);
        return HTA_EXIT_USAGE;
    }
    int code = compare_and_write(o, &base, &new_, version);
    hta_diff_input_free(&base);
    hta_diff_input_free(&new_);
    return code;
}

int hta_diff_main(int argc, char **argv, const char *version)
{
    diff_options o;
    hta_error err = {{0}};
    int parsed = parse(argc, argv, &o, &err);
    if (parsed == 1) {
        print_usage(stdout);
        return HTA_EXIT_OK;
    }
    if (parsed) {
        fprintf(stderr, "hta-mpi diff: %s\n", err.text);
        return HTA_EXIT_USAGE;
    }
    int code = run(&o, version);
    free(o.command_line);
    return code;
}
