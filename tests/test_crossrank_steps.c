/* test_crossrank_steps.c: the cross-rank step table (crossrank/steps.h)
 * says what its steps do.
 *
 * Declared: every step has the one function its place calls (or is a
 * join); what it reads, writes and frees names real specs and columns;
 * every writer of what a step reads runs before it (or is the step), a
 * table filled column by column is read column by column after its
 * fillers, and a freed table is scratch the step reads and no later step
 * reads; a join appends a scratch table of its table's columns.
 *
 * Observed: the steps are run one by one, as hta_crossrank runs them on a
 * process alone, on jobs that take every step (generated: collectives
 * with a straggler over two nodes with a clock offset, a pipeline, a
 * mixture of experts, a delay passed on; real: the multi-rank sets in
 * TRACES), with --critical-path; each table's rows are fingerprinted
 * column by column before and after each step, and every table a step
 * adds, changes or removes must be declared as such; only a join adds
 * rows to a written table that was there before the step. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crossrank/steps.h"
#include "run/analyse_file.h"
#include "run/ranks.h"
#include "unit.h"

/* ---- the declarations ---------------------------------------------------- */

static int same_io(const hta_crossrank_io *a, const hta_crossrank_io *b)
{
    if (strcmp(a->spec->name, b->spec->name) != 0)
        return 0;
    return a->column == b->column || (a->column && b->column && !strcmp(a->column, b->column));
}

/* Whether list holds spec (whole, column NULL) or spec's column. */
static int lists(const hta_crossrank_io *list, const char *spec, const char *column)
{
    for (; list->spec; list++)
        if (!strcmp(list->spec->name, spec) &&
            (column ? list->column && !strcmp(list->column, column) : !list->column))
            return 1;
    return 0;
}

static int has_column(const hta_table_spec *spec, const char *column)
{
    for (size_t c = 0; spec->columns && c < spec->n_columns; c++)
        if (!strcmp(spec->columns[c].name, column))
            return 1;
    return 0;
}

static void check_io_names(const hta_crossrank_step *s, const hta_crossrank_io *list)
{
    CHECK(list != NULL, "%s: a list (NONE when empty)", s->name);
    for (; list && list->spec; list++)
        CHECK(!list->column || has_column(list->spec, list->column), "%s: %s has no column %s",
              s->name, list->spec->name, list->column);
}

/* A whole read must follow every whole writer; a column read also
 * every filler of that column. */
static int must_precede(const hta_crossrank_io *write, const hta_crossrank_io *read)
{
    if (strcmp(write->spec->name, read->spec->name) != 0)
        return 0;
    return !write->column || (read->column && same_io(write, read));
}

static void check_order(size_t i)
{
    const hta_crossrank_step *s = &hta_crossrank_steps[i];
    for (const hta_crossrank_io *r = s->reads; r->spec; r++)
        for (size_t j = i + 1; j < hta_n_crossrank_steps; j++)
            for (const hta_crossrank_io *w = hta_crossrank_steps[j].writes; w->spec; w++)
                CHECK(!must_precede(w, r), "%s reads %s%s%s before %s writes it", s->name,
                      r->spec->name, r->column ? "." : "", r->column ? r->column : "",
                      hta_crossrank_steps[j].name);
}

static void check_frees(size_t i)
{
    const hta_crossrank_step *s = &hta_crossrank_steps[i];
    for (const hta_crossrank_io *f = s->frees; f->spec; f++) {
        CHECK(f->spec->flags & HTA_TABLE_SCRATCH, "%s frees %s, which is written", s->name,
              f->spec->name);
        CHECK(lists(s->reads, f->spec->name, NULL), "%s frees %s without reading it", s->name,
              f->spec->name);
        for (size_t j = i + 1; j < hta_n_crossrank_steps; j++)
            CHECK(!lists(hta_crossrank_steps[j].reads, f->spec->name, NULL),
                  "%s reads %s after %s freed it", hta_crossrank_steps[j].name, f->spec->name,
                  s->name);
    }
}

/* A join's part: scratch, of into's columns, written by one step before
 * and read by the join alone. */
static void check_join(size_t i)
{
    const hta_crossrank_step *s = &hta_crossrank_steps[i];
    const hta_table_spec *part = s->part, *into = s->into;
    CHECK(part && into && (part->flags & HTA_TABLE_SCRATCH) && !(into->flags & HTA_TABLE_SCRATCH),
          "%s: joins a scratch table to a written one", s->name);
    if (!part || !into)
        return;
    int same = part->n_columns == into->n_columns;
    for (size_t c = 0; same && c < into->n_columns; c++)
        same = !strcmp(part->columns[c].name, into->columns[c].name) &&
               part->columns[c].type == into->columns[c].type;
    CHECK(same, "%s: %s has the columns of %s", s->name, part->name, into->name);
    size_t writers = 0, readers = 0;
    for (size_t j = 0; j < hta_n_crossrank_steps; j++) {
        writers += lists(hta_crossrank_steps[j].writes, part->name, NULL) && j < i;
        readers += lists(hta_crossrank_steps[j].reads, part->name, NULL);
    }
    CHECK(writers == 1 && readers == 1, "%s: %s written by one step before, read by the join",
          s->name, part->name);
}

static void test_declarations(void)
{
    CHECK(hta_n_crossrank_steps > 1 &&
              hta_crossrank_steps[0].where == HTA_CROSSRANK_ALL_PROCESSES,
          "the matching among the processes comes first");
    for (size_t i = 0; i < hta_n_crossrank_steps; i++) {
        const hta_crossrank_step *s = &hta_crossrank_steps[i];
        int functions = !!s->everywhere + !!s->root + !!s->root_fixed + !!s->root_nodes + !!s->into;
        CHECK(functions == 1 && (s->where == HTA_CROSSRANK_ALL_PROCESSES) == !!s->everywhere,
              "%s: one function, for where it runs", s->name);
        if (s->into || s->part)
            check_join(i);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(hta_crossrank_steps[j].name, s->name) != 0, "%s: named twice", s->name);
        check_io_names(s, s->reads);
        check_io_names(s, s->writes);
        check_io_names(s, s->frees);
        if (s->reads && s->writes && s->frees) {
            check_order(i);
            check_frees(i);
        }
    }
}

/* ---- what the steps do ---------------------------------------------------- */

/* A table as a step found it: its rows, and one hash per column. */
typedef struct table_print {
    char name[128];
    unsigned flags;
    size_t n_rows, n_columns;
    uint64_t column[64];
} table_print;

typedef struct set_print {
    table_print *tables;
    size_t n;
} set_print;

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return h;
}

static table_print print_table(const hta_table *t)
{
    table_print p = {.flags = t->flags, .n_rows = t->n_rows, .n_columns = t->n_columns};
    snprintf(p.name, sizeof p.name, "%s", t->name);
    for (size_t c = 0; c < t->n_columns && c < 64; c++) {
        uint64_t h = 14695981039346656037u;
        for (size_t r = 0; r < t->n_rows; r++) {
            const hta_cell *cell = &hta_table_row(t, r)[c];
            h = t->columns[c].type == HTA_COL_STR
                    ? hash_bytes(h, cell->s, strlen(cell->s) + 1)
                    : hash_bytes(h, &cell->i, sizeof cell->i);
        }
        p.column[c] = h;
    }
    return p;
}

/* The prints of every table of the sets (NULL ones skipped). */
static set_print print_sets(hta_tableset *const *sets, size_t n_sets)
{
    set_print p = {0};
    for (size_t k = 0; k < n_sets; k++)
        p.n += sets[k] ? sets[k]->n_tables : 0;
    p.tables = calloc(p.n ? p.n : 1, sizeof *p.tables);
    size_t at = 0;
    for (size_t k = 0; k < n_sets; k++)
        for (size_t i = 0; sets[k] && i < sets[k]->n_tables; i++)
            p.tables[at++] = print_table(sets[k]->tables[i]);
    return p;
}

static const table_print *find_print(const set_print *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (!strcmp(p->tables[i].name, name))
            return &p->tables[i];
    return NULL;
}

/* Whether every column of a changed table the step changed is one it
 * declares filling. */
static int fills_only_declared(const hta_crossrank_step *s, const hta_table_spec *spec,
                               const table_print *before, const table_print *after)
{
    if (!spec || before->n_rows != after->n_rows || before->n_columns != after->n_columns)
        return 0;
    for (size_t c = 0; c < after->n_columns && c < 64; c++)
        if (before->column[c] != after->column[c] &&
            !lists(s->writes, spec->name, spec->columns[c].name))
            return 0;
    return 1;
}

static const hta_table_spec *spec_named(const char *name)
{
    for (size_t i = 0; i < hta_n_crossrank_steps; i++)
        for (const hta_crossrank_io *w = hta_crossrank_steps[i].writes; w->spec; w++)
            if (!strcmp(w->spec->name, name))
                return w->spec;
    return NULL;
}

static void compare_prints(const char *job, const hta_crossrank_step *s, const set_print *before,
                           const set_print *after)
{
    for (size_t i = 0; i < after->n; i++) {
        const table_print *a = &after->tables[i], *b = find_print(before, a->name);
        if (b && !memcmp(b->column, a->column, sizeof a->column) && b->n_rows == a->n_rows)
            continue;
        int declared = lists(s->writes, a->name, NULL) ||
                       (b && fills_only_declared(s, spec_named(a->name), b, a));
        CHECK(declared, "%s: step %s %s %s without declaring it", job, s->name,
              b ? "changes" : "adds", a->name);
        CHECK(!b || s->into || (a->flags & HTA_TABLE_SCRATCH) || a->n_rows <= b->n_rows,
              "%s: step %s adds rows to %s, which an earlier producer made", job, s->name,
              a->name);
    }
    for (size_t i = 0; i < before->n; i++)
        CHECK(find_print(after, before->tables[i].name) ||
                  lists(s->frees, before->tables[i].name, NULL),
              "%s: step %s removes %s without declaring it", job, s->name,
              before->tables[i].name);
}

/* Every file of dir (sorted), analysed as one rank each. */
static int analyse_dir(const char *dir, const hta_settings *s, hta_tableset *set)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort), rc = n < 0 ? -1 : 0;
    int64_t index = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
        if (rc == 0 && names[i]->d_name[0] != '.' && strstr(names[i]->d_name, ".md") == NULL &&
            stat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = hta_analyse_file(path, (uint64_t)st.st_size, index++, 0, s, set);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* The steps of hta_crossrank one by one on a process alone, as
 * hta_crossrank_alone prepares them, each watched. */
static void watch_steps(const char *job, const char *dir, const hta_settings *s)
{
    hta_tableset all = {0}, exchanged = {0}, in_place = {0}, kept = {0};
    hta_rank_map map = {0};
    hta_error err = {{0}};
    size_t n_valid = 0;
    int64_t *valid = NULL, *nodes = NULL;
    int rc = analyse_dir(dir, s, &all) || hta_resolve_ranks(&all, &s->run.ranks, &map, &err) ||
             hta_rank_map_find_nodes(&map, &all, &s->crossrank, &err) ||
             !(valid = hta_rank_map_kept_ranks(&map, &n_valid)) ||
             hta_rank_map_kept_nodes(&map, valid, n_valid, &nodes) ||
             hta_tableset_take(&all, HTA_TABLE_EXCHANGED, &exchanged);
    CHECK(rc == 0, "%s: analysed and ranks resolved: %s", job, err.text);
    hta_processes alone = {.me = HTA_ROOT, .n = 1, .mpi = 0};
    hta_crossrank_tables t = {.all = &all, .exchanged = &exchanged, .valid = valid,
                              .valid_node = nodes, .n_valid = n_valid, .hosts = &map.hosts,
                              .in_place = &in_place,
                              .kept = &kept};
    hta_tableset *sets[] = {&all, &exchanged, &in_place, &kept};
    for (size_t i = 0; rc == 0 && i < hta_n_crossrank_steps; i++) {
        const hta_crossrank_step *step = &hta_crossrank_steps[i];
        set_print before = print_sets(sets, 4);
        rc = hta_crossrank_step_run(step, &alone, &t, &s->crossrank, &err);
        CHECK(rc == 0, "%s: step %s: %s", job, step->name, err.text);
        set_print after = print_sets(sets, 4);
        compare_prints(job, step, &before, &after);
        free(before.tables);
        free(after.tables);
    }
    free(valid);
    free(nodes);
    hta_rank_map_free(&map);
    for (size_t k = 0; k < 4; k++)
        hta_tableset_free(sets[k]);
}

static void watch_generated(const char *tracegen, const char *name, const char *options,
                            const hta_settings *s)
{
    char dir[] = "/tmp/hta-crossrank-steps.XXXXXX", command[8600];
    CHECK(mkdtemp(dir) != NULL, "temporary directory");
    snprintf(command, sizeof command, "'%s' %s -o '%s' >/dev/null", tracegen, options, dir);
    CHECK(system(command) == 0, "%s: hta-tracegen ran", name);
    watch_steps(name, dir, s);
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    CHECK(system(command) == 0, "cleaned up");
}

static void watch_real(const char *traces, const char *set, const hta_settings *s)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", traces, set);
    watch_steps(set, dir, s);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: %s TRACES HTA_TRACEGEN\n", argv[0]);
        return 2;
    }
    test_declarations();
    hta_settings s;
    hta_settings_defaults(&s);
    s.run.quiet = 1;
    s.run.threads = 1;
    s.analysis.critical_path = 1;
    watch_generated(argv[2], "collectives over nodes",
                    "--ranks 4 --size-mb 0.2 --straggler 2:1.5 --ranks-per-node 2 "
                    "--clock-offset 1:500",
                    &s);
    watch_generated(argv[2], "pipeline", "--pp 4 --microbatches 3 --steps 2", &s);
    watch_generated(argv[2], "mixture of experts", "--moe", &s);
    watch_generated(argv[2], "delay passed on", "--delay-truth --ranks 4 --steps 3", &s);
    const char *traces = unit_real_traces(argc, argv);
    if (traces) {
        watch_real(traces, "real_multirank/param_dlrm_8rank", &s);
        watch_real(traces, "nsys_multinode/fs24_nccl_ring_4rank_2node/traces", &s);
        watch_real(traces, "nsys_multinode/fs24_nccl_tree_9rank_missing_rank1/traces", &s);
        watch_real(traces, "hta/trace_filter", &s);
    }
    return unit_finish();
}
