/* parse/read_input.h: one trace input through the reader its format needs.
 *
 * The run's only entry to the readers: the input's content decides its
 * reader (or --input-format forces it), from the table of
 * parse/input_reader.h, and that reader fills the trace model. */
#ifndef HTA_READ_INPUT_H
#define HTA_READ_INPUT_H

#include "util/error.h"
#include "parse/input_reader.h"
#include "parse/reader.h"
#include "model/trace.h"

/* Reads a .json or .json.gz Kineto file into out (initialised by the
 * callee): a plain file as parts on options->threads threads
 * (parse/split_parse.h) when that is worth it and succeeds, else as one
 * stream, with one deadline for both.  On error out is freed and err
 * names path and offset. */
int hta_read_trace_file(const char *path, const hta_read_options *options, hta_trace *out,
                        hta_error *err);

/* Reads path into out with the reader of `format` (HTA_INPUT_AUTO: by the
 * input's content); *used receives the format read.  step_regex (NULL:
 * none) names the user annotations that are steps, for the SQLite and CSV
 * readers.  `notes` receives one line about what the input lacks for some
 * analysis, or "". */
int hta_read_input(const char *path, hta_input_format format, const hta_read_options *options,
                   const char *step_regex, hta_trace *out, hta_input_format *used,
                   hta_error *notes, hta_error *err);

#endif
