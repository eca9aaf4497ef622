/* settings/settings.h: everything a run can be told, declared once.
 *
 * HTA_SETTINGS is the one list of options (an X-macro, as libuv's
 * UV_ERRNO_MAP): each entry names the stage that reads it, and from it
 * come the field of that stage's struct, its default, the long option,
 * how its value is parsed, the line of --help, the results-file attribute
 * that records it and whether `hta-mpi diff` compares it.  Adding an
 * option is one entry here (and its paragraph in docs/hta-mpi.1).
 *
 * Each stage gets only its own struct: an analysis reads
 * hta_analysis_settings, the cross-rank statistics
 * hta_crossrank_settings; the run and the results file, which serve every
 * stage, see the whole hta_settings.  This room includes only util/ (and
 * its public header, include/hta/settings.h), so every folder may include
 * it.
 *
 * struct hta_settings is also libhta's settings handle (hta/settings.h,
 * whose hta_settings_set sets an option by its long name): values given
 * as text are copied, so a library caller's strings need not outlive the
 * call; hta_settings_free releases them. */
#ifndef HTA_SETTINGS_H
#define HTA_SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hta/settings.h"
#include "settings/input_formats.h"
#include "util/error.h"

/* One entry: STAGE(field, kind, "long-option", short, default, min, words,
 *                  "METAVAR", "help", "attribute", diff)
 *   kind     how the value is parsed and stored (HTA_SETTING_TYPE_kind):
 *            flag (no value), int and number (at least min), text,
 *            texts (text given once or more: the values in their order,
 *            each after a ';'), regex (POSIX extended, checked), choice
 *            (one of words, stored as its index; NULL for the other
 *            kinds) and ranks (a list such as 0-7,12)
 *   short    the one-letter option, or 0
 *   help     its --help text after the option, lines split by \n
 *   attribute  the results file's root attribute recording it, or NULL
 *   diff     where the diff's note on a difference comes among the
 *            others (1 first), 0 = not compared
 * The order is --help's. */
#define HTA_SETTINGS(READ, ANALYSIS, CROSSRANK, RUN, OUTPUT)                                     \
    OUTPUT(path, text, "output", 'o', "hta-results.h5", 0, NULL, "FILE",                         \
           "results file (default hta-results.h5)", NULL, 0)                                     \
    OUTPUT(force, flag, "force", 0, 0, 0, NULL, NULL,                                            \
           "overwrite an existing results file", NULL, 0)                                        \
    READ(recursive, flag, "recursive", 0, 0, 0, NULL, NULL,                                      \
         "descend into subdirectories", NULL, 0)                                                 \
    READ(input_format, choice, "input-format", 0, 0, 0, HTA_INPUT_FORMAT_WORDS, "F",             \
         "how to read the inputs (default auto: by\n"                                            \
         "content; a directory holding kernel.csv is one\n"                                      \
         "trace), or one of:" HTA_INPUT_FORMAT_LIST, "input_format", 18)                         \
    READ(merge_devices, flag, "merge-devices", 0, 0, 0, NULL, NULL,                              \
         "a file holding several GPUs (Nsight, rocpd,\n"                                         \
         "rocprofv3 JSON) is one rank (default: one rank\n"                                      \
         "per GPU)", "merge_devices", 0)                                                         \
    RUN(ranks, ranks, "ranks", 0, {0}, 0, NULL, "LIST",                                          \
        "analyse only these ranks, e.g. 0-7,12 (default all)", NULL, 0)                          \
    ANALYSIS(include_last_step, flag, "include-last-step", 0, 0, 0, NULL, NULL,                  \
             "keep the last profiler step (default: dropped)", "include_last_step", 3)           \
    READ(step_regex, regex, "step-regex", 0, NULL, 0, NULL, "RE",                                \
         "NVTX ranges (Nsight) and user_annotation.csv\n"                                        \
         "records matching RE (POSIX extended) are\n"                                            \
         "profiler steps (default: ProfilerStep#N only)", "step_regex", 16)                      \
    ANALYSIS(round_like_hta, flag, "round-like-hta", 0, 0, 0, NULL, NULL,                        \
             "round fractional timestamps to whole us as HTA\n"                                  \
             "does (start up, end down); default keeps ns", "round_like_hta", 2)                 \
    ANALYSIS(consecutive_kernel_delay_us, number, "consecutive-kernel-delay", 0, 30, 0, NULL,    \
             "US", "idle gap below which it is kernel_wait\n(default 30)",                       \
             "consecutive_kernel_delay_us", 4)                                                   \
    ANALYSIS(runtime_cutoff_us, number, "runtime-cutoff", 0, 50, 0, NULL, "US",                  \
             "launch runtime cutoff (default 50)", "runtime_cutoff_us", 5)                       \
    ANALYSIS(launch_delay_cutoff_us, number, "launch-delay-cutoff", 0, 100, 0, NULL, "US",       \
             "launch delay cutoff (default 100)", "launch_delay_cutoff_us", 6)                   \
    ANALYSIS(num_kernels, int, "num-kernels", 0, 10, 1, NULL, "N",                               \
             "kernels per type in the top view (default 10)", "num_kernels", 7)                  \
    ANALYSIS(duration_ratio, number, "duration-ratio", 0, 0.8, 0, NULL, "R",                     \
             "cumulative share kept in the top view\n(default 0.8)", "duration_ratio", 8)        \
    ANALYSIS(bins, int, "bins", 0, 30, 1, NULL, "N", "timeline bins (default 30)", "bins", 1)    \
    ANALYSIS(sequence_op, regex, "sequence-op", 0, NULL, 0, NULL, "REGEX",                       \
             "count the kernel sequences of the shallowest ops\n"                                \
             "whose name matches (default: every top-level op)", "sequence_op", 17)              \
    ANALYSIS(min_pattern_len, int, "min-pattern-len", 0, 3, 1, NULL, "N",                        \
             "kernels a sequence needs (default 3)", "min_pattern_len", 14)                      \
    ANALYSIS(sequence_top, int, "sequence-top", 0, 10, 1, NULL, "N",                             \
             "kernel sequences kept per rank (default 10)", "sequence_top", 15)                  \
    ANALYSIS(gap_threshold_us, number, "gap-threshold", 0, 1000, 0, NULL, "US",                  \
             "GPU idle gaps at least this long are listed\n"                                     \
             "with their cause (default 1000)", "gap_threshold_us", 13)                          \
    ANALYSIS(gpu_spec, text, "gpu-spec", 0, NULL, 0, NULL, "FILE",                              \
             "peak TFLOPS and memory bandwidth of the GPU\n"                                     \
             "(TraceLens's architecture JSON) for /op_perf\n"                                    \
             "(default: the built-in table)", "gpu_spec", 19)                                    \
    CROSSRANK(z_outlier, number, "z-outlier", 0, 3, 0, NULL, "Z",                                \
              "|z| for an outlier (default 3)", "z_outlier", 9)                                  \
    CROSSRANK(z_likely, number, "z-likely", 0, 2, 0, NULL, "Z",                                  \
              "|z| for a likely outlier (default 2)", "z_likely", 10)                            \
    CROSSRANK(robust_z, number, "robust-z", 0, 3.5, 0, NULL, "Z",                                \
              "|robust z| for a robust outlier (default 3.5)", "robust_z", 11)                   \
    CROSSRANK(min_effect, number, "min-effect", 0, 0.01, 0, NULL, "F",                           \
              "ignore differences below F x |median|\n(default 0.01)", "min_effect", 12)         \
    CROSSRANK(microbatches, int, "microbatches", 0, 0, 0, NULL, "M",                             \
              "microbatches per step for the pipeline bubble\n"                                   \
              "1F1B expects (default 0: the most recvs from\n"                                   \
              "one peer in the step)", "microbatches", 0)                                         \
    CROSSRANK(gpus_per_node, int, "gpus-per-node", 0, 0, 0, NULL, "N",                           \
              "ranks r..r+N-1 (r a multiple of N) share a\n"                                     \
              "node (default 0: the host each trace records,\n"                                  \
              "/ranks.host)", "gpus_per_node", 0)                                                 \
    CROSSRANK(hostfile, text, "hostfile", 0, NULL, 0, NULL, "FILE",                              \
              "the nodes in rank order, one a line: HOST\n"                                     \
              "[slots=N] (Open MPI's hostfile; N ranks each,\n"                                 \
              "default 1), for /nodes and the clocks (default\n"                                \
              "none)", "hostfile", 0)                                                           \
    CROSSRANK(align_clocks, choice, "align-clocks", 0, 0, 0, HTA_WORDS("auto", "on", "off"),     \
              "WHEN", "take each host's clock offset, measured on the\n"                          \
              "collectives, out before the waits: auto (when\n"                                  \
              "above its noise), on or off (default auto)", "align_clocks", 0)                   \
    ANALYSIS(detail, flag, "detail", 0, 0, 0, NULL, NULL,                                        \
             "also write per-event tables under /detail", NULL, 0)                               \
    ANALYSIS(critical_path, flag, "critical-path", 0, 0, 0, NULL, NULL,                          \
             "also write /critical_path: HTA's critical\n"                                       \
             "path of every step (see README for its cost)", NULL, 0)                            \
    ANALYSIS(replay, flag, "replay", 0, 0, 0, NULL, NULL,                                        \
             "replay the job's dependency graph for /what_if:\n"                                 \
             "each step as measured and under each scenario\n"                                   \
             "(implies --critical-path; see README for its\n"                                    \
             "cost)", "replay_steps", 0)                                                         \
    CROSSRANK(what_if, texts, "what-if", 0, NULL, 0, NULL, "SPEC",                            \
              "a scenario to replay, once per scenario:\n"                                        \
              "median:RANKS, compute:RANKS:F, network:F,\n"                                       \
              "no-data-loading:RANKS, no-launch-delay:RANKS\n"                                    \
              "(RANKS e.g. 4,5 or 4-7, all, stragglers or\n"                                      \
              "node:HOST), with --replay (default: the\n"                                         \
              "costliest delays' ranks and the stragglers)", "what_if_specs", 0)                 \
    OUTPUT(write_traces, text, "write-traces", 0, NULL, 0, NULL, "DIR",                          \
           "write each analysed trace into DIR with its\n"                                       \
           "critical path and counter tracks added\n"                                            \
           "(default: none written)", NULL, 0)                                                   \
    READ(inflater, choice, "inflater", 0, 0, 0, HTA_WORDS("auto", "zlib", "isal"), "NAME",      \
         "gzip library: auto (ISA-L when built with it),\n"                                      \
         "zlib or isal (default auto)", NULL, 0)                                                 \
    RUN(threads, int, "threads", 0, 0, 0, NULL, "N",                                             \
        "threads for one large trace: parsing a plain\n"                                         \
        ".json, and the analyses; 0 = the CPUs this\n"                                           \
        "process may run on / the processes sharing\n"                                           \
        "them (default 0)", NULL, 0)                                                             \
    RUN(timeout_per_trace, number, "timeout-per-trace", 0, 0, 0, NULL, "S",                      \
        "give up on a trace after S seconds and record it\n"                                     \
        "as failed; the run goes on (default: no limit)", NULL, 0)                               \
    RUN(quiet, flag, "quiet", 'q', 0, 0, NULL, NULL,                                             \
        "no summary on stdout, no progress on stderr", NULL, 0)                                  \
    RUN(verbose, flag, "verbose", 'v', 0, 0, NULL, NULL, "one line per trace on stderr", NULL, 0)

/* A choice's words, in the order of their indices. */
#define HTA_WORDS(...) ((const char *const[]){__VA_ARGS__, NULL})

typedef struct hta_rank_range {
    int64_t first, last;
} hta_rank_range;

/* --ranks: the ranks kept; NULL ranges = every rank. */
typedef struct hta_rank_list {
    hta_rank_range *ranges;    /* owned */
    size_t n;
} hta_rank_list;

/* The C type each kind is stored as. */
#define HTA_SETTING_TYPE_flag int
#define HTA_SETTING_TYPE_int int
#define HTA_SETTING_TYPE_number double
#define HTA_SETTING_TYPE_text const char *
#define HTA_SETTING_TYPE_texts const char *
#define HTA_SETTING_TYPE_regex const char *
#define HTA_SETTING_TYPE_choice int
#define HTA_SETTING_TYPE_ranks hta_rank_list

#define HTA_SETTING_FIELD(field, kind, ...) HTA_SETTING_TYPE_##kind field;
#define HTA_SETTING_NONE(...)

/* How the inputs become traces: discovery and the readers. */
typedef struct hta_read_settings {
    HTA_SETTINGS(HTA_SETTING_FIELD, HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_NONE,
                 HTA_SETTING_NONE)
} hta_read_settings;

/* What one rank's analyses compute (the step filter and HTA's rounding
 * included, which shape every analysis). */
typedef struct hta_analysis_settings {
    HTA_SETTINGS(HTA_SETTING_NONE, HTA_SETTING_FIELD, HTA_SETTING_NONE, HTA_SETTING_NONE,
                 HTA_SETTING_NONE)
} hta_analysis_settings;

/* The statistics over ranks on the root. */
typedef struct hta_crossrank_settings {
    HTA_SETTINGS(HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_FIELD, HTA_SETTING_NONE,
                 HTA_SETTING_NONE)
} hta_crossrank_settings;

/* The run over MPI: which inputs and ranks, threads, limits, chattiness. */
typedef struct hta_run_settings {
    HTA_SETTINGS(HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_FIELD,
                 HTA_SETTING_NONE)
    char **inputs;             /* the trace directories and files, borrowed */
    size_t n_inputs;
    uint64_t threaded_min_events; /* tests: a trace of this many events is
                                  analysed on threads; 0 = HTA_THREADED_MIN_EVENTS */
} hta_run_settings;

/* What is written: the results file, the traces written back. */
typedef struct hta_output_settings {
    HTA_SETTINGS(HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_NONE, HTA_SETTING_NONE,
                 HTA_SETTING_FIELD)
    const char *command_line;  /* owned (hta_settings_free); NULL = none */
} hta_output_settings;

struct hta_settings {
    hta_read_settings read;
    hta_analysis_settings analysis;
    hta_crossrank_settings crossrank;
    hta_run_settings run;
    hta_output_settings output;
    char **copies;             /* owned: the text values set, which the fields point into */
    size_t n_copies;
};

typedef enum hta_setting_kind {
    HTA_SETTING_flag,
    HTA_SETTING_int,
    HTA_SETTING_number,
    HTA_SETTING_text,
    HTA_SETTING_texts,
    HTA_SETTING_regex,
    HTA_SETTING_choice,
    HTA_SETTING_ranks,
} hta_setting_kind;

/* One entry of HTA_SETTINGS as data. */
typedef struct hta_setting {
    const char *name;          /* the long option, without "--" */
    char short_name;           /* 0 = none */
    hta_setting_kind kind;
    size_t offset;             /* of the field in hta_settings */
    double min;
    const char *const *words;  /* choice: the values, NULL-terminated */
    const char *metavar, *help;
    const char *attribute;     /* NULL = not recorded */
    int diff;                  /* 0 = not compared by the diff */
} hta_setting;

/* HTA_SETTINGS in its order. */
extern const hta_setting hta_setting_list[];
extern const size_t hta_n_settings;

/* Fills s, fresh or emptied by hta_settings_free, with the defaults
 * (docs/hta-mpi.1). */
void hta_settings_defaults(hta_settings *s);
/* Releases what s owns (the copies, the rank list, the command line). */
void hta_settings_free(hta_settings *s);
/* s, or the defaults (into *defaults) when s is NULL. */
const hta_settings *hta_settings_or_defaults(const hta_settings *s, hta_settings *defaults);

/* hta_settings_set (hta/settings.h) sets the option named
 * "long-option-name" from its value as text, as given on the command
 * line (a flag takes NULL, "" or "1" to set it and "0" to clear it); it
 * fails with one line naming the option.  The same for
 * hta_setting_list[index]: */
int hta_settings_set_at(hta_settings *s, size_t index, const char *value, hta_error *err);

/* The rules between options (--z-likely at most --z-outlier); call once
 * every option is set. */
int hta_settings_check(const hta_settings *s, hta_error *err);

/* Prints --help's line for every option, in the list's order. */
void hta_settings_print_help(FILE *out);

/* The value of hta_setting_list[index] in s, as its results-file
 * attribute holds it: an integer (flag, int), a number, or text (text,
 * regex and choice; an unset text is ""). */
typedef struct hta_setting_value {
    enum { HTA_VALUE_INT, HTA_VALUE_NUMBER, HTA_VALUE_TEXT } type;
    int64_t i;
    double number;
    const char *text;
} hta_setting_value;
hta_setting_value hta_settings_value(const hta_settings *s, size_t index);

/* 1 when e's attribute holds text, 0 when a number. */
int hta_setting_records_text(const hta_setting *e);

/* 1 when list keeps rank (every rank when no list was given). */
int hta_rank_list_has(const hta_rank_list *list, int64_t rank);

#endif
