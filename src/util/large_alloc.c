/* large_alloc.c: malloc and friends that advise huge pages for large
 * blocks (see hta/large_alloc.h). */
#include "hta/large_alloc.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE ((uintptr_t)4096)
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Blocks below two huge pages rarely hold a whole aligned one. */
#define SMALLEST_ADVISED (2 * HUGE_PAGE)

/* Advises the block's whole mapping, not only the huge pages inside it:
 * advice on part of a mapping splits it in the kernel, and glibc's
 * realloc can then no longer grow the block in place with mremap but
 * copies it whole at every growth.  A block this large is mapped on its
 * own (MMAP_THRESHOLD in main.c), from the page below it to its usable
 * end.  Best effort: the block is usable either way. */
static void *advise_huge_pages(void *block, size_t bytes)
{
    if (!block || bytes < SMALLEST_ADVISED)
        return block;
    uintptr_t start = (uintptr_t)block & ~(PAGE - 1);
    uintptr_t end = ((uintptr_t)block + malloc_usable_size(block) + PAGE - 1) & ~(PAGE - 1);
    (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
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
