/* large_alloc.c: malloc and friends that advise huge pages for large
 * blocks (see util/large_alloc.h). */
#include "util/large_alloc.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE ((uintptr_t)4096)
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Blocks below two huge pages rarely hold a whole aligned one. */
#define SMALLEST_ADVISED (2 * HUGE_PAGE)

/* Advises the block's whole mapping, not only the huge pages inside it,
 * for blocks that grow: advice on part of a mapping splits it in the
 * kernel, and glibc's realloc can then no longer grow the block in place
 * with mremap but copies it whole at every growth.  A block this large is
 * mapped on its own (MMAP_THRESHOLD in main.c), from the page below it to
 * its usable end.  Best effort: the block is usable either way. */
static void *advise_whole_mapping(void *block, size_t bytes)
{
    if (!block || bytes < SMALLEST_ADVISED)
        return block;
    uintptr_t start = (uintptr_t)block & ~(PAGE - 1);
    uintptr_t end = ((uintptr_t)block + malloc_usable_size(block) + PAGE - 1) & ~(PAGE - 1);
    (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    return block;
}

/* A new block starts on a huge page boundary, and only the huge pages
 * wholly inside it are advised.  Otherwise the part before the first
 * boundary, up to 2 MB, is faulted in 4 KB at a time, and advising the
 * mapping's slack after the block would back its last partial huge page
 * whole, memory the block never uses.  Growing
 * the block re-advises the whole mapping first (hta_large_realloc). */
static void *aligned_block(size_t bytes, size_t smallest)
{
    void *block = NULL;
    if (bytes < smallest || posix_memalign(&block, HUGE_PAGE, bytes) != 0)
        return advise_whole_mapping(malloc(bytes), bytes);
    (void)madvise(block, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
    return block;
}

void *hta_large_malloc(size_t bytes)
{
    return aligned_block(bytes, SMALLEST_ADVISED);
}

/* From one huge page on: such an array's pages are always fresh, where
 * below the mmap threshold (MMAP_THRESHOLD in main.c) an analysis's
 * scratch reuses the heap pages another one freed, which aligning would
 * forgo. */
void *hta_large_reserve(size_t bytes)
{
    return aligned_block(bytes, HUGE_PAGE);
}

/* Mapped directly, not through calloc: glibc's own mapping would start
 * just past a page boundary, and up to 2 MB at each end of a sparsely
 * written table (a correlation index) would fault 4 KB at a time.  Fresh
 * mappings are zero, so no page is touched here.  Small blocks come from
 * calloc, to reuse the heap's pages from one small trace to the next. */
void *hta_large_zeroed(size_t bytes)
{
    if (bytes < SMALLEST_ADVISED)
        return calloc(bytes ? bytes : 1, 1);
    size_t length = (bytes + PAGE - 1) & ~(PAGE - 1);
    char *mapped = mmap(NULL, length + HUGE_PAGE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
        return NULL;
    char *block = (char *)(((uintptr_t)mapped + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
    if (block > mapped)
        munmap(mapped, (size_t)(block - mapped));
    munmap(block + length, (size_t)(mapped + HUGE_PAGE - block));
    (void)madvise(block, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
    return block;
}

void hta_large_zeroed_free(void *block, size_t bytes)
{
    if (!block || bytes < SMALLEST_ADVISED)
        free(block);
    else
        munmap(block, (bytes + PAGE - 1) & ~(PAGE - 1));
}

/* The whole mapping is advised before realloc too: a block from
 * hta_large_malloc is advised in part, which splits its mapping. */
void *hta_large_realloc(void *block, size_t bytes)
{
    if (!block)
        return hta_large_malloc(bytes);
    advise_whole_mapping(block, malloc_usable_size(block));
    return advise_whole_mapping(realloc(block, bytes), bytes);
}

/* The start and end pages may hold other blocks too: making them resident
 * changes nothing of theirs. */
void hta_populate(void *block, size_t bytes)
{
    if (!block || !bytes)
        return;
    uintptr_t start = (uintptr_t)block & ~(PAGE - 1);
    uintptr_t end = ((uintptr_t)block + bytes + PAGE - 1) & ~(PAGE - 1);
    (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
