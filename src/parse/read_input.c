/* read_input.c: an input through its reader (see parse/read_input.h). */
#include "parse/read_input.h"

#include "parse/device_entry.h"
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
    const hta_input_reader *reader = format == HTA_INPUT_AUTO ? hta_input_reader_of(path)
                                                              : hta_input_reader_get(format);
    *used = reader->format;
    notes->text[0] = '\0';
    hta_input_call call = {.options = options,
                           .how = {.timeout_seconds = options ? options->timeout_seconds : 0,
                                   .step_regex = step_regex}};
    char file_path[4096];
    if (reader->devices &&
        hta_device_entry_parse(path, file_path, sizeof file_path, &call.how.device)) {
        call.how.one_device = 1;
        path = file_path;    /* errors name the file; /ranks names the entry */
    }
    return reader->read(path, &call, out, notes, err);
}
