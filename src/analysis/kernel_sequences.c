/* kernel_sequences.c: frequent GPU kernel sequences of CPU ops
 * ("kernel_sequences", docs/definitions.md, CPU ops; HTA's
 * get_frequent_cuda_kernel_sequences, for every rank).
 *
 * A root op is, with --sequence-op REGEX, an op whose name matches, at the
 * smallest op depth any matching op has on the rank (HTA's rule); without
 * it, every top-level op.  A root with at least --min-pattern-len GPU
 * events under it (its own and its descendants', model/op_walk.h) gives the
 * pattern: its name, then its GPU events' names in start order, joined by
 * "|" as HTA joins them.  Per pattern: count, GPU time (the events'
 * summed durations) and CPU time (the roots' summed durations), summed
 * over its occurrences.  The --sequence-top most frequent patterns per
 * rank are kept, by count, then pattern text (HTA's order).  Patterns are
 * told apart by their name ids, so a pattern costs its length in 4-byte
 * ids until the text of the kept ones is built.  The op breakdown's walk
 * (analysis/ops.c) visits the ops for it. */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/kernel_sequences.h"

#include "model/op_walk.h"
#include "util/buf.h"
#include "util/grow.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const hta_column COLUMNS[HTA_KERNEL_SEQUENCES_N_COLUMNS] = {
    [HTA_KERNEL_SEQUENCES_RANK] = {"rank", HTA_COL_I64},
    [HTA_KERNEL_SEQUENCES_NAME] = {"name", HTA_COL_STR},
    [HTA_KERNEL_SEQUENCES_OP] = {"op", HTA_COL_STR},
    [HTA_KERNEL_SEQUENCES_N_KERNELS] = {"n_kernels", HTA_COL_I64},
    [HTA_KERNEL_SEQUENCES_COUNT] = {"count", HTA_COL_I64},
    [HTA_KERNEL_SEQUENCES_GPU_TIME_US] = {"gpu_time_us", HTA_COL_F64},
    [HTA_KERNEL_SEQUENCES_CPU_TIME_US] = {"cpu_time_us", HTA_COL_F64},
};
const hta_table_spec hta_kernel_sequences_table = {
    "kernel_sequences", COLUMNS, HTA_KERNEL_SEQUENCES_N_COLUMNS,
    HTA_TABLE_PER_RANK | HTA_TABLE_GATHERED};

typedef struct pattern {
    uint32_t depth, op, n_kernels;
    int64_t count, gpu_ns, cpu_ns;
    char *text;                /* owned, for the kept ones */
} pattern;

typedef struct timed_name {
    int64_t ts;
    size_t order;
    uint32_t name;
} timed_name;

typedef struct run {
    const hta_rank_view *view;
    const hta_analysis_settings *opt;
    regex_t re;
    int has_re;
    unsigned char *matches;    /* per name id: 0 unknown, 1 no, 2 yes */
    uint32_t min_depth;        /* of the matching ops */
    hta_strtab keys;           /* depth, op name, kernel names, as uint32 */
    pattern *patterns;         /* by key id */
    size_t cap_patterns;
    timed_name *scratch;
    size_t cap_scratch;
    hta_buf key;
} run;

static int is_root_candidate(run *r, const hta_op_visit *v)
{
    if (!r->has_re)
        return v->depth == 0;
    unsigned char *m = &r->matches[v->op->name];
    if (!*m)
        *m = regexec(&r->re, hta_event_name(r->view->trace, v->op), 0, NULL, 0) == 0 ? 2 : 1;
    return *m == 2;
}

static int compare_timed(const void *a, const void *b)
{
    const timed_name *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* The pattern's key in r->key: depth, op name, kernel names by start. */
static int build_key(run *r, const hta_op_visit *v)
{
    if (v->n_gpu > r->cap_scratch) {
        timed_name *grown = realloc(r->scratch, v->n_gpu * sizeof *grown);
        if (!grown)
            return -1;
        r->scratch = grown;
        r->cap_scratch = v->n_gpu;
    }
    for (size_t i = 0; i < v->n_gpu; i++)
        r->scratch[i] = (timed_name){v->gpu[i].gpu->ts_ns, i, v->gpu[i].gpu->name};
    qsort(r->scratch, v->n_gpu, sizeof *r->scratch, compare_timed);
    r->key.len = 0;
    int rc = hta_buf_put_u32(&r->key, v->depth) | hta_buf_put_u32(&r->key, v->op->name);
    for (size_t i = 0; rc == 0 && i < v->n_gpu; i++)
        rc = hta_buf_put_u32(&r->key, r->scratch[i].name);
    return rc ? -1 : 0;
}

static pattern *pattern_of(run *r, const hta_op_visit *v)
{
    uint32_t before = r->keys.count;
    uint32_t id = hta_strtab_intern(&r->keys, r->key.data, r->key.len);
    if (id == UINT32_MAX)
        return NULL;
    if (hta_grow_array((void **)&r->patterns, &r->cap_patterns, (size_t)id + 1,
                       sizeof *r->patterns))
        return NULL;
    if (id == before)
        r->patterns[id] = (pattern){v->depth, v->op->name, (uint32_t)v->n_gpu, 0, 0, 0, NULL};
    return &r->patterns[id];
}

static int visit_op(void *ctx, const hta_op_visit *v)
{
    run *r = ctx;
    if (!is_root_candidate(r, v))
        return 0;
    r->min_depth = v->depth < r->min_depth ? v->depth : r->min_depth;
    if (v->n_gpu < (size_t)r->opt->min_pattern_len)
        return 0;
    if (build_key(r, v))
        return -1;
    pattern *p = pattern_of(r, v);
    if (!p)
        return -1;
    p->count++;
    p->cpu_ns += v->op->dur_ns;
    for (size_t i = 0; i < v->n_gpu; i++)
        p->gpu_ns += v->gpu[i].gpu->dur_ns;
    return 0;
}

/* The pattern's text, from its key. */
static int build_text(run *r, uint32_t id)
{
    const hta_strtab *names = &r->view->trace->names;
    const char *key = hta_strtab_get(&r->keys, id);
    size_t n = r->keys.lengths[id] / sizeof(uint32_t);
    hta_buf text = {0};
    int rc = 0;
    for (size_t i = 1; rc == 0 && i < n; i++) {
        uint32_t name;
        memcpy(&name, key + i * sizeof name, sizeof name);
        const char *s = hta_strtab_get(names, name);
        rc = (i > 1 && hta_buf_putc(&text, '|')) || hta_buf_append(&text, s, strlen(s));
    }
    r->patterns[id].text = rc ? NULL : text.data ? text.data : strdup("");
    if (rc || !r->patterns[id].text) {
        hta_buf_free(&text);
        return -1;
    }
    return 0;
}

static int compare_patterns(const void *a, const void *b)
{
    const pattern *x = *(const pattern *const *)a, *y = *(const pattern *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->text, y->text);
}

static int put_rows(run *r, hta_table *t)
{
    size_t n = r->keys.count, kept = 0;
    pattern **order = malloc((n ? n : 1) * sizeof *order);
    int rc = order ? 0 : -1;
    for (uint32_t id = 0; rc == 0 && id < n; id++) {
        if (r->patterns[id].depth != r->min_depth)
            continue;
        rc = build_text(r, id);
        order[kept++] = &r->patterns[id];
    }
    if (rc == 0)
        qsort(order, kept, sizeof *order, compare_patterns);
    for (size_t i = 0; rc == 0 && i < kept && i < (size_t)r->opt->sequence_top; i++) {
        const pattern *p = order[i];
        hta_row_builder row = hta_table_add_row(t);
        hta_row_put_i64(&row, r->view->rank_key);
        hta_row_put_str(&row, p->text);
        hta_row_put_str(&row, hta_strtab_get(&r->view->trace->names, p->op));
        hta_row_put_i64(&row, p->n_kernels);
        hta_row_put_i64(&row, p->count);
        hta_row_put_f64(&row, hta_ns_to_us(p->gpu_ns));
        hta_row_put_f64(&row, hta_ns_to_us(p->cpu_ns));
        rc = hta_row_done(&row);
    }
    free(order);
    return rc;
}

static void free_run(run *r)
{
    for (uint32_t id = 0; id < r->keys.count; id++)
        free(r->patterns[id].text);
    if (r->has_re)
        regfree(&r->re);
    free(r->matches);
    hta_strtab_free(&r->keys);
    free(r->patterns);
    free(r->scratch);
    hta_buf_free(&r->key);
}

hta_sequences *hta_sequences_start(const hta_rank_view *v, const hta_analysis_settings *opt)
{
    run *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    *r = (run){.view = v, .opt = opt, .min_depth = UINT32_MAX};
    hta_strtab_init(&r->keys);
    int rc = 0;
    if (opt->sequence_op) {
        rc = regcomp(&r->re, opt->sequence_op, REG_EXTENDED | REG_NOSUB) ? -1 : 0;
        r->has_re = rc == 0;
    }
    if (rc == 0)
        rc = (r->matches = calloc((size_t)v->trace->names.count + 1, 1)) ? 0 : -1;
    if (rc) {
        hta_sequences_free((hta_sequences *)r);
        return NULL;
    }
    return (hta_sequences *)r;
}

int hta_sequences_visit(void *sequences, const hta_op_visit *visit)
{
    return visit_op(sequences, visit);
}

int hta_sequences_finish(hta_sequences *s, hta_tableset *out)
{
    hta_table *t = hta_tableset_table(out, &hta_kernel_sequences_table);
    return t ? put_rows((run *)s, t) : -1;
}

void hta_sequences_free(hta_sequences *s)
{
    if (!s)
        return;
    free_run((run *)s);
    free(s);
}
