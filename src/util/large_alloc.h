/* util/large_alloc.h: allocation of the arrays that grow with a trace.
 *
 * A 1 GB trace's event array and the analyses' series and sort buffers are
 * hundreds of megabytes of fresh memory per trace; faulting it in 4 KB at a
 * time is a large share of the analysis time.  These
 * calls behave as malloc and realloc (free the result with free),
 * and also ask the kernel to back the block with 2 MB transparent huge
 * pages (MADV_HUGEPAGE: honoured where THP is "madvise" or "always",
 * ignored elsewhere), which glibc does not do for its own mappings unless
 * told at process start-up.  A new block starts on a huge page boundary
 * (see large_alloc.c). */
#ifndef HTA_LARGE_ALLOC_H
#define HTA_LARGE_ALLOC_H

#include <stddef.h>

void *hta_large_malloc(size_t bytes);
void *hta_large_realloc(void *block, size_t bytes);

/* As hta_large_malloc, for an array that is filled once and lives as long
 * as its trace (the parse's event array): aligned from 2 MB on, not 4. */
void *hta_large_reserve(size_t bytes);

/* Makes a buffer's pages resident before it is written, in one call: where
 * page faults are dear (virtual machines) that costs much less than
 * faulting them in one by one.  For buffers that will be
 * filled; best effort (kernels before 5.14 ignore it). */
void hta_populate(void *block, size_t bytes);

/* Zeroed memory for a table that is written sparsely (untouched pages cost
 * nothing); free it with hta_large_zeroed_free and the same size. */
void *hta_large_zeroed(size_t bytes);
void hta_large_zeroed_free(void *block, size_t bytes);

#endif
