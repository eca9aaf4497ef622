/* model/type_unions.h: the view's GPU events of each kernel type as merged
 * intervals (definitions section 4): every analysis that combines types
 * reads these instead of merging the events again.  Of the union of all
 * types only its span and covered time are kept, all that is read of it. */
#ifndef HTA_TYPE_UNIONS_H
#define HTA_TYPE_UNIONS_H

#include <stddef.h>
#include <stdint.h>

#include "model/interval.h"
#include "model/trace.h"

typedef struct hta_type_unions {
    hta_interval *storage;     /* owned, the lists back to back */
    const hta_interval *of[HTA_KT_OTHER + 1]; /* indexed by hta_kernel_type */
    size_t n[HTA_KT_OTHER + 1];
    int64_t all_start, all_end; /* first GPU start, latest GPU end */
    int64_t all_length;        /* time the union of all covers */
} hta_type_unions;

/* Merges sorted GPU events by type (part of building the view); -1 when
 * out of memory. */
int hta_type_unions_build(hta_type_unions *u, const hta_event *const *gpu, size_t n_gpu);
void hta_type_unions_free(hta_type_unions *u);

#endif
