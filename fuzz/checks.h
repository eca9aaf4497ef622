/* checks.h: the checks the fuzz targets share: an invariant that aborts
 * (the fuzzer's finding) and the equality of two reads of one input. */
#ifndef HTA_FUZZ_CHECKS_H
#define HTA_FUZZ_CHECKS_H

#include "model/trace.h"

/* Aborts, naming the invariant, unless condition holds. */
void hta_fuzz_require(int condition, const char *what);

/* Whether two traces are the same in everything a reader fills: events,
 * extras, strings, rank, sizes, counts. */
int hta_fuzz_same_trace(const hta_trace *a, const hta_trace *b);

#endif
