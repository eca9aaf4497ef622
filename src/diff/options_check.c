/* options_check.c: options two results files were analysed with (see
 * diff/options_check.h).  Each attribute is named with the command-line
 * option that sets it, since that is what the user would change. */
#include "diff/options_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text options (the step and sequence patterns, the reader) are compared
 * as text, the others as numbers. */
static const struct {
    const char *attribute, *option;
    int is_text;
} OPTIONS[] = {
    {"bins", "--bins", 0},
    {"round_like_hta", "--round-like-hta", 0},
    {"include_last_step", "--include-last-step", 0},
    {"consecutive_kernel_delay_us", "--consecutive-kernel-delay", 0},
    {"runtime_cutoff_us", "--runtime-cutoff", 0},
    {"launch_delay_cutoff_us", "--launch-delay-cutoff", 0},
    {"num_kernels", "--num-kernels", 0},
    {"duration_ratio", "--duration-ratio", 0},
    {"z_outlier", "--z-outlier", 0},
    {"z_likely", "--z-likely", 0},
    {"robust_z", "--robust-z", 0},
    {"min_effect", "--min-effect", 0},
    {"gap_threshold_us", "--gap-threshold", 0},
    {"min_pattern_len", "--min-pattern-len", 0},
    {"sequence_top", "--sequence-top", 0},
    {"step_regex", "--step-regex", 1},
    {"sequence_op", "--sequence-op", 1},
    {"input_format", "--input-format", 1},
};

/* The option's value in rf as the note shows it ('text', a number), or
 * "unrecorded" for a file written before the option existed; a long
 * pattern is cut to fit the line. */
#define VALUE_TEXT_MAX 48

static void describe_option(const hta_results_file *rf, size_t i, char out[VALUE_TEXT_MAX])
{
    snprintf(out, VALUE_TEXT_MAX, "unrecorded");
    if (OPTIONS[i].is_text) {
        char *text = hta_results_attr_string(rf, OPTIONS[i].attribute);
        if (text)
            snprintf(out, VALUE_TEXT_MAX, "'%s'", text);
        free(text);
    } else {
        double v;
        if (hta_results_attr_number(rf, OPTIONS[i].attribute, &v) == 0)
            snprintf(out, VALUE_TEXT_MAX, "%.15g", v);
    }
}

size_t hta_diff_option_differences(const hta_diff_input *base, const hta_diff_input *new_,
                                   char (*lines)[HTA_DIFF_NOTE_MAX], size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof OPTIONS / sizeof *OPTIONS; i++) {
        char b[VALUE_TEXT_MAX], v[VALUE_TEXT_MAX];
        describe_option(&base->file, i, b);
        describe_option(&new_->file, i, v);
        if (strcmp(b, v) == 0)
            continue;
        if (n < max)
            snprintf(lines[n], HTA_DIFF_NOTE_MAX,
                     "BASE and NEW were analysed with different %s (%s and %s)",
                     OPTIONS[i].option, b, v);
        n++;
    }
    return n;
}
