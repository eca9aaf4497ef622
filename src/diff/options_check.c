/* options_check.c: options two results files were analysed with (see
 * diff/options_check.h): those of the settings list with a diff position,
 * in that order.  Each attribute is named with the command-line option
 * that sets it, since that is what the user would change; text options
 * (patterns, the reader) are compared as text, the others as numbers. */
#include "diff/options_check.h"

#include "settings/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The option's value in rf as the note shows it ('text', a number), or
 * "unrecorded" for a file written before the option existed; a long
 * pattern is cut to fit the line. */
#define VALUE_TEXT_MAX 48

static void describe_option(const hta_results_file *rf, const hta_setting *e,
                            char out[VALUE_TEXT_MAX])
{
    snprintf(out, VALUE_TEXT_MAX, "unrecorded");
    if (hta_setting_records_text(e)) {
        char *text = hta_results_attr_string(rf, e->attribute);
        if (text)
            snprintf(out, VALUE_TEXT_MAX, "'%s'", text);
        free(text);
    } else {
        double v;
        if (hta_results_attr_number(rf, e->attribute, &v) == 0)
            snprintf(out, VALUE_TEXT_MAX, "%.15g", v);
    }
}

/* The setting compared at this position, NULL past the last. */
static const hta_setting *compared_at(int position)
{
    for (size_t i = 0; i < hta_n_settings; i++)
        if (hta_setting_list[i].diff == position)
            return &hta_setting_list[i];
    return NULL;
}

size_t hta_diff_option_differences(const hta_diff_input *base, const hta_diff_input *new_,
                                   char (*lines)[HTA_DIFF_NOTE_MAX], size_t max)
{
    size_t n = 0;
    for (int position = 1;; position++) {
        const hta_setting *e = compared_at(position);
        if (!e)
            return n;
        char b[VALUE_TEXT_MAX], v[VALUE_TEXT_MAX];
        describe_option(&base->file, e, b);
        describe_option(&new_->file, e, v);
        if (strcmp(b, v) == 0)
            continue;
        if (n < max)
            snprintf(lines[n], HTA_DIFF_NOTE_MAX,
                     "BASE and NEW were analysed with different --%s (%s and %s)", e->name, b,
                     v);
        n++;
    }
}
