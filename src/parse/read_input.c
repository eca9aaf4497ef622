/* read_input.c: the reader for each input format (see parse/read_input.h). */
#include "parse/read_input.h"

#include "parse/cupti_csv.h"
#include "parse/nsys_sqlite.h"
#include "parse/split_parse.h"

int hta_read_trace_file(const char *path, const hta_read_options *options, hta_trace *out,
                        hta_error *err)
{
    hta_deadline limit = hta_deadline_from(options ? options->timeout_seconds : 0);
    if (options && options->threads > 1) {
        hta_split_result split = hta_read_trace_split(path, options, &limit, out, err);
        if (split != HTA_SPLIT_SERIAL)
            return split == HTA_SPLIT_DONE ? 0 : -1;
    }
    return hta_read_trace_serial(path, options, &limit, out, err);
}

int hta_read_input(const char *path, hta_input_format format, const hta_read_options *options,
                   const char *step_regex, hta_trace *out, hta_input_format *used,
                   hta_error *notes, hta_error *err)
{
    *used = format == HTA_INPUT_AUTO ? hta_input_format_of(path) : format;
    notes->text[0] = '\0';
    hta_builder_options how = {.timeout_seconds = options ? options->timeout_seconds : 0,
                               .step_regex = step_regex};
    char export_path[4096];
    if (*used == HTA_INPUT_NSYS_SQLITE &&
        hta_device_entry_parse(path, export_path, sizeof export_path, &how.device)) {
        how.one_device = 1;
        path = export_path;    /* errors name the export; /ranks names the entry */
    }
    switch (*used) {
    case HTA_INPUT_NSYS_SQLITE: return hta_read_nsys_sqlite(path, &how, out, notes, err);
    case HTA_INPUT_CUPTI_CSV: return hta_read_cupti_csv(path, &how, out, notes, err);
    default: return hta_read_trace_file(path, options, out, err);
    }
}
