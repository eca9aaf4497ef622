/* options_check.c: options two results files were analysed with (see
 * diff/options_check.h).  Each attribute is named with the command-line
 * option that sets it, since that is what the user would change. */
#include "diff/options_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *attribute, *option;
} OPTIONS[] = {
    {"bins", "--bins"},
    {"round_like_hta", "--round-like-hta"},
    {"include_last_step", "--include-last-step"},
    {"consecutive_kernel_delay_us", "--consecutive-kernel-delay"},
    {"runtime_cutoff_us", "--runtime-cutoff"},
    {"launch_delay_cutoff_us", "--launch-delay-cutoff"},
    {"num_kernels", "--num-kernels"},
    {"duration_ratio", "--duration-ratio"},
    {"z_outlier", "--z-outlier"},
    {"z_likely", "--z-likely"},
    {"robust_z", "--robust-z"},
    {"min_effect", "--min-effect"},
    {"gap_threshold_us", "--gap-threshold"},
    {"min_pattern_len", "--min-pattern-len"},
    {"sequence_top", "--sequence-top"},
};

/* Options given as text: the step and sequence patterns, the reader. */
static const struct {
    const char *attribute, *option;
} TEXT_OPTIONS[] = {
    {"step_regex", "--step-regex"},
    {"sequence_op", "--sequence-op"},
    {"input_format", "--input-format"},
};

/* A quoted text option for a note, or "unrecorded" for a file written
 * before the option existed. */
static void describe_text(char *out, size_t size, const char *value)
{
    if (value)
        snprintf(out, size, "'%s'", value);
    else
        snprintf(out, size, "unrecorded");
}

static size_t text_option_differences(const hta_diff_input *base, const hta_diff_input *new_,
                                      char (*lines)[HTA_DIFF_NOTE_MAX], size_t max, size_t n)
{
    for (size_t i = 0; i < sizeof TEXT_OPTIONS / sizeof *TEXT_OPTIONS; i++) {
        char *b = hta_results_attr_string(&base->file, TEXT_OPTIONS[i].attribute);
        char *v = hta_results_attr_string(&new_->file, TEXT_OPTIONS[i].attribute);
        int same = (!b && !v) || (b && v && strcmp(b, v) == 0);
        if (!same && n < max) {
            char bt[48], nt[48]; /* a long pattern is cut to fit the line */
            describe_text(bt, sizeof bt, b);
            describe_text(nt, sizeof nt, v);
            snprintf(lines[n], HTA_DIFF_NOTE_MAX,
                     "BASE and NEW were analysed with different %s (%s and %s)",
                     TEXT_OPTIONS[i].option, bt, nt);
        }
        n += !same;
        free(b);
        free(v);
    }
    return n;
}

size_t hta_diff_option_differences(const hta_diff_input *base, const hta_diff_input *new_,
                                   char (*lines)[HTA_DIFF_NOTE_MAX], size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof OPTIONS / sizeof *OPTIONS; i++) {
        double b, v;
        int has_b = hta_results_attr_number(&base->file, OPTIONS[i].attribute, &b) == 0;
        int has_n = hta_results_attr_number(&new_->file, OPTIONS[i].attribute, &v) == 0;
        if (has_b == has_n && (!has_b || b == v))
            continue;
        if (n < max) {
            char bt[32] = "unrecorded", nt[32] = "unrecorded";
            if (has_b)
                snprintf(bt, sizeof bt, "%g", b);
            if (has_n)
                snprintf(nt, sizeof nt, "%g", v);
            snprintf(lines[n], HTA_DIFF_NOTE_MAX,
                     "BASE and NEW were analysed with different %s (%s and %s)",
                     OPTIONS[i].option, bt, nt);
        }
        n++;
    }
    return text_option_differences(base, new_, lines, max, n);
}
