/* settings/input_formats.h: the names of the trace formats hta-mpi reads.
 *
 * One line per format, X(ID, "name"): the name is the --input-format word
 * and the /ranks input_format column.  From this list come the format ids
 * (hta_input_format), the option's words and its --help line; each
 * format's reader (suffixes, content test, reading, fuzz harness) is its
 * row in parse/input_reader.c, which this room cannot see: the option
 * needs only the names.  Adding a reader: docs/design.md, "Add an input
 * reader". */
#ifndef HTA_INPUT_FORMATS_H
#define HTA_INPUT_FORMATS_H

#define HTA_INPUT_FORMATS(X)                                                                     \
    X(KINETO, "kineto")                                                                          \
    X(NSYS_SQLITE, "nsys-sqlite")                                                                \
    X(CUPTI_CSV, "cupti-csv")                                                                    \
    X(ROCPROF_JSON, "rocprof-json")                                                              \
    X(ROCPD, "rocpd")                                                                            \
    X(ROCPROF_CSV, "rocprof-csv")

#define HTA_INPUT_FORMAT_ID(id, name) HTA_INPUT_##id,
typedef enum hta_input_format {
    HTA_INPUT_AUTO = 0,        /* decided per input, by its content */
    HTA_INPUT_FORMATS(HTA_INPUT_FORMAT_ID)
    HTA_INPUT_N_FORMATS
} hta_input_format;
#undef HTA_INPUT_FORMAT_ID

/* --input-format's words, "auto" first, in the order of the ids. */
#define HTA_INPUT_FORMAT_WORD(id, name) name,
#define HTA_INPUT_FORMAT_WORDS                                                                     \
    ((const char *const[]){"auto", HTA_INPUT_FORMATS(HTA_INPUT_FORMAT_WORD) NULL})

/* The names after "auto" in --help, each after a space. */
#define HTA_INPUT_FORMAT_SPACED(id, name) " " name
#define HTA_INPUT_FORMAT_LIST HTA_INPUT_FORMATS(HTA_INPUT_FORMAT_SPACED)

#endif
