/* options_check.c: options two results files were analysed with (see
 * diff/options_check.h).  Each attribute is named with the command-line
 * option that sets it, since that is what the user would change. */
#include "diff/options_check.h"

#include <stdio.h>

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
};

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
    return n;
}
