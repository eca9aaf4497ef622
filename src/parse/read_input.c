/* read_input.c: the reader for each input format (see hta/read_input.h). */
#include "hta/read_input.h"

#include "hta/cupti_csv.h"
#include "hta/nsys_sqlite.h"

int hta_read_input(const char *path, hta_input_format format, const hta_read_options *options,
                   hta_trace *out, hta_input_format *used, hta_error *missing, hta_error *err)
{
    *used = format == HTA_INPUT_AUTO ? hta_input_format_of(path) : format;
    missing->text[0] = '\0';
    double timeout = options ? options->timeout_seconds : 0;
    switch (*used) {
    case HTA_INPUT_NSYS_SQLITE: return hta_read_nsys_sqlite(path, timeout, out, missing, err);
    case HTA_INPUT_CUPTI_CSV: return hta_read_cupti_csv(path, timeout, out, missing, err);
    default: return hta_read_trace_file(path, options, out, err);
    }
}
