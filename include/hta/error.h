/* hta/error.h: errors as values.
 *
 * Every fallible function takes an hta_error* (which may be NULL) and
 * returns nonzero, or NULL, on failure after filling it with one
 * human-readable line that names the file involved (and the byte offset
 * for a parse error).  libhta never prints. */
#ifndef HTA_PUBLIC_ERROR_H
#define HTA_PUBLIC_ERROR_H

#define HTA_ERROR_MAX 512

typedef struct hta_error {
    char text[HTA_ERROR_MAX];
} hta_error;

/* How a run ended, as the command's exit code (README, "Exit codes"). */
typedef enum hta_exit_code {
    HTA_EXIT_OK = 0,
    HTA_EXIT_SOME_FAILED = 1,
    HTA_EXIT_USAGE = 2,
    HTA_EXIT_INTERNAL = 3,
} hta_exit_code;

#endif
