/* split_parse.c: one plain trace parsed by several threads (see
 * parse/split_parse.h).
 *
 * The file is cut into byte ranges (plan_parts), which `threads` threads
 * take in file order as they come free: part 0 (the head) and parts 1..
 * (spans), each into its own hta_trace with its own string tables, reading
 * with pread (not mmap, whose file pages would count in the resident
 * size).  After the join the chain is checked: every span must start
 * exactly where its predecessor stopped, up to the span that saw the event
 * array close; spans after that one lie beyond the array and are dropped,
 * and the tail (the top level after the array) is parsed serially.  Only
 * then are the parts merged in file order, with names, categories, CPU contexts and
 * extras renumbered so that ids come out in first-seen order, as a serial
 * parse assigns them.  Anything else (a guess inside a string, a parse
 * error) makes the caller parse serially; only running out of time is
 * reported from here, since a retry would start with the budget spent. */
#include "parse/split_parse.h"

#include "parse/source.h"
#include "util/large_alloc.h"
#include "util/thread_jobs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct worker {
    const char *path;
    const hta_deadline *limit;
    hta_part part;
    hta_trace trace;           /* owned when rc == 0 */
    int rc;
    hta_error err;             /* reported only for a timeout; any other
                                  failure is reparsed serially */
} worker;

static void parse_part(void *parts, int k)
{
    worker *w = &((worker *)parts)[k];
    w->rc = hta_read_part(w->path, w->limit, &w->part, &w->trace, &w->err);
}

static int is_gzip(int fd)
{
    unsigned char first[2];
    return hta_is_gzip_magic(first, (long)pread(fd, first, sizeof first, 0));
}

/* More parts than this only cost memory and start-up. */
#define MAX_PARTS 64

/* A part costs its start (its file, buffer, event array and string
 * tables) and the merge of its strings: a 64th of a small file's even
 * share would cost more than it evens out. */
#define MIN_PART_BYTES (1u << 20)

/* Cuts the file into parts that threads take in order as they come free,
 * so that a slower core or a costlier stretch of the file does not leave
 * the others waiting (on a virtual machine one core can be much slower
 * than another).  The head takes 80% of an even
 * share, since only its events are not copied when the parts are merged;
 * each later part half of what remains per thread, down to a 64th of an
 * even share, so that the last parts are small enough to even out the
 * finish (the thread that takes the last part keeps the others idle for
 * up to its length); in a small file down to a 16th or MIN_PART_BYTES,
 * whichever is smaller.  Returns the number of parts. */
static int plan_parts(worker *w, int threads, uint64_t size)
{
    uint64_t even = size / (uint64_t)threads;
    uint64_t least = even / 16 < MIN_PART_BYTES ? even / 16 : MIN_PART_BYTES;
    uint64_t smallest = even / 64 > least ? even / 64 : least > 0 ? least : 1;
    uint64_t start = 0, len = threads > 1 ? even - even / 5 : size;
    int n = 0;
    for (int last = 0; !last; n++) {
        uint64_t rest = size - start;
        last = n + 1 == MAX_PARTS || len >= rest || rest - len < smallest;
        w[n].part = (hta_part){.kind = n ? HTA_PART_SPAN : HTA_PART_HEAD,
                               .from = start, .stop_at = last ? UINT64_MAX : start + len};
        start += len;
        len = size - start > 0 ? (size - start) / (2 * (uint64_t)threads) : 0;
        len = len > smallest ? len : smallest;
    }
    return n;
}

/* Index of the last part the parse needs (the one that ended the array or
 * the document), or -1 when some span did not start exactly where its
 * predecessor stopped, or a needed part failed. */
static int last_needed_part(const worker *w, int n)
{
    for (int k = 0; k < n; k++) {
        if (w[k].rc)
            return -1;
        if (k > 0 && (w[k].part.end == HTA_PART_NO_BOUNDARY ||
                      w[k].part.first_event != w[k - 1].part.end_offset))
            return -1;
        if (w[k].part.end != HTA_PART_STOPPED)
            return k;
    }
    return -1;
}

/* Interns every string of `from` into `into` in id order; map[id] is the
 * new id.  In id order, strings new to `into` get ids in the order the
 * part first saw them, which is the order a serial parse would. */
static uint32_t *merge_strings(hta_strtab *into, const hta_strtab *from)
{
    uint32_t *map = malloc(((size_t)from->count + 1) * sizeof *map);
    if (!map)
        return NULL;
    for (uint32_t id = 0; id < from->count; id++) {
        map[id] = hta_strtab_intern(into, from->strings[id], from->lengths[id]);
        if (map[id] == UINT32_MAX) {
            free(map);
            return NULL;
        }
    }
    return map;
}

/* Events moved per step of move_events: 2.5 MiB. */
#define MOVE_BLOCK_EVENTS (64u << 10)

/* Moves part's events to dst (room for all of them), renumbered, last block
 * first, shrinking part's array behind the copy so that a part and its
 * merged copy are never both resident.  The array ends one event long:
 * freeing a large one would raise glibc's dynamic mmap threshold, keeping
 * later large allocations on the heap, where their freed pages stay
 * resident. */
static void move_events(hta_event *dst, hta_trace *part, const uint32_t *names,
                        const uint32_t *cats, const uint32_t *contexts)
{
    size_t n = part->n_events;
    while (n > 0) {
        size_t from = n > MOVE_BLOCK_EVENTS ? n - MOVE_BLOCK_EVENTS : 0;
        for (size_t i = from; i < n; i++) {
            hta_event e = part->events[i];
            e.name = names[e.name];
            e.cat = (uint16_t)cats[e.cat];
            if (!hta_event_is_gpu(&e))
                e.stream = contexts[e.stream];
            dst[i] = e;
        }
        n = from;
        hta_event *shrunk = hta_large_realloc(part->events, (n ? n : 1) * sizeof *shrunk);
        if (shrunk) {          /* else the larger array stays: harmless */
            part->events = shrunk;
            part->cap_events = n ? n : 1;
        }
    }
    part->n_events = 0;
}

/* Appends part's extras to into's (room reserved), their events placed
 * after into's. */
static void append_extras(hta_trace *into, const hta_trace *part)
{
    for (size_t i = 0; i < part->n_extras; i++) {
        hta_event_extra x = part->extras[i];
        x.event += into->n_events;
        into->extras[into->n_extras++] = x;
    }
}

/* Appends part's range-profiler ranges and their counters to into's,
 * renumbered (counter names interned anew): 0, or -1 when out of memory. */
static int append_ranges(hta_trace *into, const hta_trace *part, const uint32_t *names)
{
    for (size_t i = 0; i < part->n_ranges; i++) {
        hta_profiler_range r = part->ranges[i];
        size_t first = into->n_range_counters;
        for (uint32_t c = 0; c < r.n_counters; c++) {
            const hta_range_counter *x = &part->range_counters[r.first_counter + c];
            if (hta_trace_push_range_counter(into, hta_strtab_get(&part->counter_names, x->counter),
                                             part->counter_names.lengths[x->counter], x->value))
                return -1;
        }
        r.name = names[r.name];
        r.first_counter = (uint32_t)first;
        if (hta_trace_add_range(into, r))
            return -1;
    }
    return 0;
}

/* A part's events on their way into the merged array, at `at`. */
typedef struct part_move {
    hta_trace *part;
    size_t at;
    uint32_t *names, *cats, *contexts; /* owned: the part's ids -> the merged ids */
} part_move;

/* Merges part's strings, extras and counts into into and gives its events
 * their place after into's, reserved; the move fills it.  0, or -1 when
 * out of memory. */
static int place_part(hta_trace *into, hta_trace *part, part_move *move)
{
    *move = (part_move){.part = part, .at = into->n_events,
                        .names = merge_strings(&into->names, &part->names),
                        .cats = merge_strings(&into->categories, &part->categories),
                        .contexts = merge_strings(&into->cpu_contexts, &part->cpu_contexts)};
    if (!move->names || !move->cats || !move->contexts ||
        into->categories.count > UINT16_MAX + 1u ||
        hta_trace_reserve(into, part->n_events, part->n_extras) ||
        hta_comm_set_append(&into->comm, &part->comm, into->n_events))
        return -1;
    append_extras(into, part);
    if (hta_memory_samples_append(&into->memory, &part->memory) ||
        append_ranges(into, part, move->names))
        return -1;
    into->n_events += part->n_events;
    into->skipped_events += part->skipped_events;
    into->fractional_ts |= part->fractional_ts;
    if (part->rank >= 0)
        into->rank = part->rank;
    if (part->world_size >= 0)
        into->world_size = part->world_size;
    if (part->device_name[0])
        memcpy(into->device_name, part->device_name, sizeof into->device_name);
    into->json_bytes = part->json_bytes;   /* the last part's end is the file's */
    return 0;
}

static void free_move(part_move *move)
{
    free(move->names);
    free(move->cats);
    free(move->contexts);
}

/* The parts placed in into, whose events move_part moves. */
typedef struct placed_parts {
    hta_trace *into;
    part_move *moves;
} placed_parts;

static void move_part(void *placed, int k)
{
    placed_parts *p = placed;
    part_move *m = &p->moves[k];
    if (m->part->n_events > 0) /* into->events may still be NULL */
        move_events(p->into->events + m->at, m->part, m->names, m->cats, m->contexts);
}

/* Appends part's events (consuming them) and extras to into, renumbered. */
static int append_part(hta_trace *into, hta_trace *part)
{
    part_move move;
    int rc = place_part(into, part, &move);
    if (rc == 0)
        move_part(&(placed_parts){into, &move}, 0);
    free_move(&move);
    return rc;
}

/* Merges parts 1..last into part 0's trace, freeing each: 0, or 1 when
 * out of memory.  Their strings and extras are merged in order; their
 * events, the bulk, are copied on `threads` threads, each part into its
 * place, reserved beforehand. */
static int merge_parts(worker *w, int last, int threads)
{
    size_t extra = 0;
    for (int k = 1; k <= last; k++)
        extra += w[k].trace.n_events;
    part_move *moves = calloc((size_t)last + 1, sizeof *moves);
    /* Reserved once: pages untouched until filled, and no place moves. */
    int rc = !moves || hta_trace_reserve(&w[0].trace, extra, 0);
    int placed = 0;
    while (rc == 0 && placed < last) {
        rc = place_part(&w[0].trace, &w[placed + 1].trace, &moves[placed]);
        placed++;
    }
    if (rc == 0)
        hta_run_tasks(move_part, &(placed_parts){&w[0].trace, moves}, last, threads);
    for (int k = 0; k < placed; k++)
        free_move(&moves[k]);
    free(moves);
    for (int k = 1; k <= last; k++) {
        hta_trace_free(&w[k].trace);
        w[k].rc = -1;          /* nothing left to free */
    }
    return rc ? 1 : 0;
}

/* Parses the top level after the event array (from is past its ']') into
 * the head's trace. */
static hta_split_result read_tail(worker *head, uint64_t from, hta_error *err)
{
    hta_part tail = {.kind = HTA_PART_TAIL, .from = from, .bare_array = head->part.bare_array};
    hta_trace rest;
    if (hta_read_part(head->path, head->limit, &tail, &rest, err))
        return tail.end == HTA_PART_TIMED_OUT ? HTA_SPLIT_TIMED_OUT : HTA_SPLIT_SERIAL;
    hta_split_result rc = append_part(&head->trace, &rest) ? HTA_SPLIT_SERIAL : HTA_SPLIT_DONE;
    hta_trace_free(&rest);
    return rc;
}

/* The error of the first part that ran out of time, or NULL. */
static const hta_error *timeout_error(const worker *w, int n)
{
    for (int k = 0; k < n; k++)
        if (w[k].rc && w[k].part.end == HTA_PART_TIMED_OUT)
            return &w[k].err;
    return NULL;
}

static hta_split_result split_file(const char *path, int threads, uint64_t size,
                                   const hta_deadline *limit, hta_trace *out, hta_error *err)
{
    worker *w = calloc(MAX_PARTS, sizeof *w);
    if (!w)
        return HTA_SPLIT_SERIAL;
    for (int k = 0; k < MAX_PARTS; k++)
        w[k] = (worker){.path = path, .limit = limit};
    int n = plan_parts(w, threads < MAX_PARTS ? threads : MAX_PARTS, size);
    hta_run_tasks(parse_part, w, n, threads);
    int last = last_needed_part(w, n);
    hta_split_result rc = last < 0 || merge_parts(w, last, threads) ? HTA_SPLIT_SERIAL
                                                                     : HTA_SPLIT_DONE;
    if (rc == HTA_SPLIT_DONE && w[last].part.end != HTA_PART_DOCUMENT_END)
        rc = read_tail(&w[0], w[last].part.end_offset, err);
    const hta_error *timeout = rc == HTA_SPLIT_SERIAL ? timeout_error(w, n) : NULL;
    if (timeout) {
        *err = *timeout;
        rc = HTA_SPLIT_TIMED_OUT;
    }
    for (int k = 1; k < n; k++)
        if (w[k].rc == 0)
            hta_trace_free(&w[k].trace);
    if (rc == HTA_SPLIT_DONE)
        *out = w[0].trace;
    else if (w[0].rc == 0)
        hta_trace_free(&w[0].trace);
    if (rc == HTA_SPLIT_TIMED_OUT)
        hta_trace_init(out);
    free(w);
    return rc;
}

hta_split_result hta_read_trace_split(const char *path, const hta_read_options *options,
                                      const hta_deadline *limit, hta_trace *out,
                                      hta_error *err)
{
    uint64_t min_bytes = options->split_min_bytes ? options->split_min_bytes
                                                  : HTA_SPLIT_MIN_BYTES;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return HTA_SPLIT_SERIAL;
    struct stat st;
    int splittable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                     (uint64_t)st.st_size >= min_bytes && !is_gzip(fd);
    close(fd);
    if (!splittable)
        return HTA_SPLIT_SERIAL;
    return split_file(path, options->threads, (uint64_t)st.st_size, limit, out, err);
}
