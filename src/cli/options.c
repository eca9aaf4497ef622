/* options.c: command-line parsing (docs/hta-mpi.1).
 *
 * Parsing never touches MPI or the file system, so --help, --version and
 * usage errors answer at once on every process. */
#include "cli/options.h"

#include "parse/input_format.h"
#include "parse/source.h"

#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hta_options_defaults(hta_options *o)
{
    memset(o, 0, sizeof *o);
    o->consecutive_kernel_delay_us = 30;
    o->runtime_cutoff_us = 50;
    o->launch_delay_cutoff_us = 100;
    o->num_kernels = 10;
    o->duration_ratio = 0.8;
    o->bins = 30;
    o->min_pattern_len = 3;
    o->sequence_top = 10;
    o->gap_threshold_us = 1000;
    o->z_outlier = 3;
    o->z_likely = 2;
    o->robust_z = 3.5;
    o->min_effect = 0.01;
    o->output = "hta-results.h5";
}

int hta_options_wants_rank(const hta_options *o, int64_t rank)
{
    if (!o->ranks)
        return 1;
    for (size_t i = 0; i < o->n_ranks; i++)
        if (rank >= o->ranks[i].first && rank <= o->ranks[i].last)
            return 1;
    return 0;
}

void hta_options_free(hta_options *o)
{
    free(o->ranks);
    free((char *)o->command_line);
    o->ranks = NULL;
    o->command_line = NULL;
}

enum {
    OPT_INCLUDE_LAST_STEP = 256, OPT_CKD, OPT_RUNTIME_CUTOFF, OPT_LAUNCH_DELAY_CUTOFF,
    OPT_NUM_KERNELS, OPT_DURATION_RATIO, OPT_BINS, OPT_Z_OUTLIER, OPT_Z_LIKELY,
    OPT_ROBUST_Z, OPT_MIN_EFFECT, OPT_RANKS, OPT_RECURSIVE, OPT_FORCE, OPT_DETAIL,
    OPT_VERSION, OPT_ROUND_LIKE_HTA, OPT_TIMEOUT_PER_TRACE, OPT_INFLATER, OPT_THREADS,
    OPT_SEQUENCE_OP, OPT_MIN_PATTERN_LEN, OPT_SEQUENCE_TOP, OPT_GAP_THRESHOLD,
    OPT_CRITICAL_PATH, OPT_WRITE_TRACES,
    OPT_INPUT_FORMAT, OPT_STEP_REGEX, OPT_MERGE_DEVICES, OPT_GPU_SPEC,
};

static const struct option LONG_OPTIONS[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, OPT_FORCE},
    {"recursive", no_argument, NULL, OPT_RECURSIVE},
    {"include-last-step", no_argument, NULL, OPT_INCLUDE_LAST_STEP},
    {"round-like-hta", no_argument, NULL, OPT_ROUND_LIKE_HTA},
    {"consecutive-kernel-delay", required_argument, NULL, OPT_CKD},
    {"runtime-cutoff", required_argument, NULL, OPT_RUNTIME_CUTOFF},
    {"launch-delay-cutoff", required_argument, NULL, OPT_LAUNCH_DELAY_CUTOFF},
    {"num-kernels", required_argument, NULL, OPT_NUM_KERNELS},
    {"duration-ratio", required_argument, NULL, OPT_DURATION_RATIO},
    {"bins", required_argument, NULL, OPT_BINS},
    {"sequence-op", required_argument, NULL, OPT_SEQUENCE_OP},
    {"min-pattern-len", required_argument, NULL, OPT_MIN_PATTERN_LEN},
    {"sequence-top", required_argument, NULL, OPT_SEQUENCE_TOP},
    {"gap-threshold", required_argument, NULL, OPT_GAP_THRESHOLD},
    {"z-outlier", required_argument, NULL, OPT_Z_OUTLIER},
    {"z-likely", required_argument, NULL, OPT_Z_LIKELY},
    {"robust-z", required_argument, NULL, OPT_ROBUST_Z},
    {"min-effect", required_argument, NULL, OPT_MIN_EFFECT},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"detail", no_argument, NULL, OPT_DETAIL},
    {"critical-path", no_argument, NULL, OPT_CRITICAL_PATH},
    {"write-traces", required_argument, NULL, OPT_WRITE_TRACES},
    {"gpu-spec", required_argument, NULL, OPT_GPU_SPEC},
    {"timeout-per-trace", required_argument, NULL, OPT_TIMEOUT_PER_TRACE},
    {"inflater", required_argument, NULL, OPT_INFLATER},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"input-format", required_argument, NULL, OPT_INPUT_FORMAT},
    {"step-regex", required_argument, NULL, OPT_STEP_REGEX},
    {"merge-devices", no_argument, NULL, OPT_MERGE_DEVICES},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

void hta_print_usage(FILE *out)
{
    fprintf(out,
        "Usage: mpirun -n N hta-mpi [options] TRACE_DIR | TRACE_FILE...\n"
        "       hta-mpi diff [options] BASE.h5 NEW.h5  (compare two runs; see diff --help)\n"
        "Analyse PyTorch profiler (Kineto) traces, Nsight Systems SQLite exports or\n"
        "CUPTI CSV folders, one per rank, in parallel.\n"
        "Options without a value are off unless given.\n"
        "\n"
        "  -o, --output FILE               results file (default hta-results.h5)\n"
        "      --force                     overwrite an existing results file\n"
        "      --recursive                 descend into subdirectories\n"
        "      --input-format F            auto, kineto, nsys-sqlite or cupti-csv: how\n"
        "                                  to read the inputs (default auto: by content;\n"
        "                                  a directory holding kernel.csv is one trace)\n"
        "      --merge-devices             an Nsight export holding several GPUs is one\n"
        "                                  rank (default: one rank per GPU)\n"
        "      --ranks LIST                analyse only these ranks, e.g. 0-7,12 (default all)\n"
        "      --include-last-step         keep the last profiler step (default: dropped)\n"
        "      --step-regex RE             NVTX ranges (Nsight) and user_annotation.csv\n"
        "                                  records matching RE (POSIX extended) are\n"
        "                                  profiler steps (default: ProfilerStep#N only)\n"
        "      --round-like-hta            round fractional timestamps to whole us as HTA\n"
        "                                  does (start up, end down); default keeps ns\n"
        "      --consecutive-kernel-delay US  idle gap below which it is kernel_wait\n"
        "                                  (default 30)\n"
        "      --runtime-cutoff US         launch runtime cutoff (default 50)\n"
        "      --launch-delay-cutoff US    launch delay cutoff (default 100)\n"
        "      --num-kernels N             kernels per type in the top view (default 10)\n"
        "      --duration-ratio R          cumulative share kept in the top view\n"
        "                                  (default 0.8)\n"
        "      --bins N                    timeline bins (default 30)\n"
        "      --sequence-op REGEX         count the kernel sequences of the shallowest ops\n"
        "                                  whose name matches (default: every top-level op)\n"
        "      --min-pattern-len N         kernels a sequence needs (default 3)\n"
        "      --sequence-top N            kernel sequences kept per rank (default 10)\n"
        "      --gap-threshold US          GPU idle gaps at least this long are listed\n"
        "                                  with their cause (default 1000)\n"
        "      --gpu-spec FILE             peak TFLOPS and memory bandwidth of the GPU\n"
        "                                  (TraceLens's architecture JSON) for /op_perf\n"
        "                                  (default: the built-in table)\n"
        "      --z-outlier Z               |z| for an outlier (default 3)\n"
        "      --z-likely Z                |z| for a likely outlier (default 2)\n"
        "      --robust-z Z                |robust z| for a robust outlier (default 3.5)\n"
        "      --min-effect F              ignore differences below F x |median|\n"
        "                                  (default 0.01)\n"
        "      --detail                    also write per-event tables under /detail\n"
        "      --critical-path             also write /critical_path: HTA's critical\n"
        "                                  path of every step (see README for its cost)\n"
        "      --write-traces DIR          write each analysed trace into DIR with its\n"
        "                                  critical path and counter tracks added\n"
        "                                  (default: none written)\n"
        "      --inflater NAME             gzip library: auto (ISA-L when built with it),\n"
        "                                  zlib or isal (default auto)\n"
        "      --threads N                 threads for one large trace: parsing a plain\n"
        "                                  .json, and the analyses; 0 = the CPUs this\n"
        "                                  process may run on / the processes sharing\n"
        "                                  them (default 0)\n"
        "      --timeout-per-trace S       give up on a trace after S seconds and record it\n"
        "                                  as failed; the run goes on (default: no limit)\n"
        "  -q, --quiet                     no summary on stdout, no progress on stderr\n"
        "  -v, --verbose                   one line per trace on stderr\n"
        "  -h, --help                      this help\n"
        "      --version                   print the version\n"
        "\n"
        "Exit status: 0 all traces analysed, 1 some traces failed (results written),\n"
        "2 usage error or nothing to do, 3 internal or MPI failure.\n");
}

static int parse_double(const char *name, const char *text, double min, double *out,
                        hta_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min))
        return hta_fail(err, "--%s: expected a number >= %g, got '%s'", name, min, text);
    *out = v;
    return 0;
}

static int parse_int(const char *name, const char *text, long min, int *out, hta_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 1000000000L)
        return hta_fail(err, "--%s: expected an integer >= %ld, got '%s'", name, min, text);
    *out = (int)v;
    return 0;
}

static int parse_rank_list(const char *text, hta_options *o, hta_error *err)
{
    free(o->ranks);
    o->ranks = NULL;
    o->n_ranks = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long long first = strtoll(p, &end, 10), last = first;
        if (end == p || first < 0)
            return hta_fail(err, "--ranks: bad list '%s' (expected e.g. 0-7,12)", text);
        p = end;
        if (*p == '-') {
            last = strtoll(p + 1, &end, 10);
            if (end == p + 1 || last < first)
                return hta_fail(err, "--ranks: bad range in '%s'", text);
            p = end;
        }
        hta_rank_range *r = realloc(o->ranks, (o->n_ranks + 1) * sizeof *r);
        if (!r)
            return hta_fail(err, "out of memory");
        o->ranks = r;
        o->ranks[o->n_ranks++] = (hta_rank_range){first, last};
        if (*p == ',')
            p++;
        else if (*p)
            return hta_fail(err, "--ranks: bad list '%s' (expected e.g. 0-7,12)", text);
    }
    if (!o->n_ranks)
        return hta_fail(err, "--ranks: empty list");
    return 0;
}

static int parse_inflater(const char *text, hta_options *o, hta_error *err)
{
    static const char *const names[] = {"auto", "zlib", "isal"};
    for (int i = 0; i < 3; i++)
        if (strcmp(text, names[i]) == 0) {
            if (!hta_inflater_available((hta_inflater)i))
                return hta_fail(err, "--inflater isal: this build has no ISA-L (libisal-dev)");
            o->inflater = i;
            return 0;
        }
    return hta_fail(err, "--inflater: expected auto, zlib or isal, got '%s'", text);
}

static int parse_step_regex(const char *text, hta_options *o, hta_error *err)
{
    regex_t compiled;
    int rc = regcomp(&compiled, text, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[128];
        regerror(rc, &compiled, why, sizeof why);
        return hta_fail(err, "--step-regex: '%s': %s", text, why);
    }
    regfree(&compiled);
    o->step_regex = text;
    return 0;
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

/* Keeps a regular expression after checking that it compiles. */
static int parse_regex(const char *name, const char *text, const char **out, hta_error *err)
{
    regex_t re;
    if (regcomp(&re, text, REG_EXTENDED | REG_NOSUB) != 0)
        return hta_fail(err, "--%s: not a regular expression: %s", name, text);
    regfree(&re);
    *out = text;
    return 0;
}

static int apply_option(int c, const char *arg, hta_options *o, hta_error *err)
{
    switch (c) {
    case 'o': o->output = arg; return 0;
    case OPT_FORCE: o->force = 1; return 0;
    case OPT_RECURSIVE: o->recursive = 1; return 0;
    case OPT_INCLUDE_LAST_STEP: o->include_last_step = 1; return 0;
    case OPT_ROUND_LIKE_HTA: o->round_like_hta = 1; return 0;
    case OPT_CKD: return parse_double("consecutive-kernel-delay", arg, 0, &o->consecutive_kernel_delay_us, err);
    case OPT_RUNTIME_CUTOFF: return parse_double("runtime-cutoff", arg, 0, &o->runtime_cutoff_us, err);
    case OPT_LAUNCH_DELAY_CUTOFF: return parse_double("launch-delay-cutoff", arg, 0, &o->launch_delay_cutoff_us, err);
    case OPT_NUM_KERNELS: return parse_int("num-kernels", arg, 1, &o->num_kernels, err);
    case OPT_DURATION_RATIO: return parse_double("duration-ratio", arg, 0, &o->duration_ratio, err);
    case OPT_BINS: return parse_int("bins", arg, 1, &o->bins, err);
    case OPT_SEQUENCE_OP: return parse_regex("sequence-op", arg, &o->sequence_op, err);
    case OPT_MIN_PATTERN_LEN: return parse_int("min-pattern-len", arg, 1, &o->min_pattern_len, err);
    case OPT_SEQUENCE_TOP: return parse_int("sequence-top", arg, 1, &o->sequence_top, err);
    case OPT_GAP_THRESHOLD: return parse_double("gap-threshold", arg, 0, &o->gap_threshold_us, err);
    case OPT_Z_OUTLIER: return parse_double("z-outlier", arg, 0, &o->z_outlier, err);
    case OPT_Z_LIKELY: return parse_double("z-likely", arg, 0, &o->z_likely, err);
    case OPT_ROBUST_Z: return parse_double("robust-z", arg, 0, &o->robust_z, err);
    case OPT_MIN_EFFECT: return parse_double("min-effect", arg, 0, &o->min_effect, err);
    case OPT_RANKS: return parse_rank_list(arg, o, err);
    case OPT_DETAIL: o->detail = 1; return 0;
    case OPT_CRITICAL_PATH: o->critical_path = 1; return 0;
    case OPT_WRITE_TRACES: o->write_traces = arg; return 0;
    case OPT_GPU_SPEC: o->gpu_spec = arg; return 0;
    case OPT_TIMEOUT_PER_TRACE: return parse_double("timeout-per-trace", arg, 0, &o->timeout_per_trace, err);
    case OPT_INFLATER: return parse_inflater(arg, o, err);
    case OPT_THREADS: return parse_int("threads", arg, 0, &o->threads, err);
    case OPT_STEP_REGEX: return parse_step_regex(arg, o, err);
    case OPT_MERGE_DEVICES: o->merge_devices = 1; return 0;
    case OPT_INPUT_FORMAT:
        if ((o->input_format = hta_input_format_parse(arg)) < 0)
            return hta_fail(err, "--input-format: expected auto, kineto, nsys-sqlite or "
                                 "cupti-csv, got '%s'", arg);
        return 0;
    case 'q': o->quiet = 1; return 0;
    case 'v': o->verbose = 1; return 0;
    default: return hta_fail(err, "unknown option (see --help)");
    }
}

hta_cli_action hta_parse_options(int argc, char **argv, hta_options *o, hta_error *err)
{
    hta_options_defaults(o);
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:qvh", LONG_OPTIONS, NULL)) != -1) {
        if (c == 'h')
            return HTA_CLI_HELP;
        if (c == OPT_VERSION)
            return HTA_CLI_VERSION;
        if (c == '?' || c == ':') {
            hta_fail(err, "%s: %s (see --help)", argv[optind - 1],
                     c == ':' ? "missing value" : "unknown option");
            return HTA_CLI_USAGE_ERROR;
        }
        if (apply_option(c, optarg, o, err))
            return HTA_CLI_USAGE_ERROR;
    }
    if (o->z_likely > o->z_outlier) {
        hta_fail(err, "--z-likely (%g) must not exceed --z-outlier (%g)", o->z_likely, o->z_outlier);
        return HTA_CLI_USAGE_ERROR;
    }
    o->inputs = argv + optind;
    o->n_inputs = (size_t)(argc - optind);
    if (o->n_inputs == 0) {
        hta_fail(err, "no trace directory or file given (see --help)");
        return HTA_CLI_USAGE_ERROR;
    }
    o->command_line = join_arguments(argc, argv);
    return HTA_CLI_RUN;
}

/* The settable options: --help and --version are actions, not settings. */
static const struct option *settable_option(const char *name)
{
    for (const struct option *o = LONG_OPTIONS; o->name; o++)
        if (strcmp(o->name, name) == 0 && o->val != 'h' && o->val != OPT_VERSION)
            return o;
    return NULL;
}

int hta_options_takes_value(const char *name)
{
    const struct option *o = settable_option(name);
    return o ? o->has_arg == required_argument : -1;
}

int hta_options_set(hta_options *o, const char *name, const char *value, hta_error *err)
{
    const struct option *opt = settable_option(name);
    if (!opt)
        return hta_fail(err, "unknown option '%s'", name);
    if (opt->has_arg == required_argument && !value)
        return hta_fail(err, "--%s: missing value", name);
    if (opt->has_arg == no_argument && value && value[0] && strcmp(value, "1") != 0)
        return hta_fail(err, "--%s takes no value, got '%s'", name, value);
    return apply_option(opt->val, value, o, err);
}
