/* large_alloc.c: malloc and friends that advise huge pages for large
 * blocks (see hta/large_alloc.h). */
#include "hta/large_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Blocks below two huge pages rarely hold a whole aligned one. */
#define SMALLEST_ADVISED (2 * HUGE_PAGE)

/* Advises the whole huge pages inside the block; best effort, since the
 * block is usable either way. */
static void *advise_huge_pages(void *block, size_t bytes)
{
    if (!block || bytes < SMALLEST_ADVISED)
        return block;
    uintptr_t first = ((uintptr_t)block + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t)block + bytes) & ~(HUGE_PAGE - 1);
    if (end > first)
        (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
    return block;
}

void *hta_large_malloc(size_t bytes)
{
    return advise_huge_pages(malloc(bytes), bytes);
}

void *hta_large_calloc(size_t count, size_t size)
{
    return advise_huge_pages(calloc(count, size), count * size);
}

void *hta_large_realloc(void *block, size_t bytes)
{
    return advise_huge_pages(realloc(block, bytes), bytes);
}
