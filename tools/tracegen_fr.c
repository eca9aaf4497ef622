/*
 * tracegen_fr.c -- hta-tracegen's Flight Recorder job (hta-tracegen
 * --flight-recorder -o DIR [--encoding torch|pickle2..pickle5|json]
 * [--ring N] [--missing R]): the NCCL Flight Recorder dumps of a hung job
 * of 8 ranks, DIR/nccl_trace_rank_R, and the hang's findings beside them
 * (DIR.fr_truth.json).
 *
 * DESIGN
 *  Six process groups (pg id g, named "g" as torch names them), one
 *  fault each at its end, so that each finding is known by construction:
 *   - 0 default_pg, ranks 0..7, all-reduce [[4096]] x 6: rank 0 never
 *     enqueues the 6th (the culprit is the first rank: a reader biased to
 *     the first dump it reads blames everyone else);
 *   - 1 tp0, ranks 0..3, all-gather [[256 s]] -> [[1024 s]] x 6: rank 2
 *     skips the 4th, so its entry at seq s >= 4 is the others' s + 1;
 *   - 2 tp1, ranks 4..7, all-reduce [[8192]] x 5: rank 6's 5th is [[2048]];
 *   - 3 dp_even, ranks 0,2,4,6, all-reduce [[1024]] x 6, three faults:
 *     rank 6 runs a reduce-scatter at 4, rank 4 BFloat16 at 5 (both
 *     complete), and rank 2 never enqueues the 6th;
 *   - 4 dp_odd, ranks 1,3,5,7, all-reduce [[512]] x 3: every member
 *     started the 3rd and none completed it (the network, not a rank);
 *   - 5 pp, ranks 1 and 5, point to point in the last round: rank 1 sends
 *     to rank 5 twice (p2p_seq_id 1, 2) and rank 5 posts the first
 *     receive only, so the second send waits for one that never comes.
 *  Collectives before a group's last complete; at the last, the members
 *  that enqueued it started it; after a skip the rest stay scheduled.
 *  Each rank records in rounds: round s enqueues seq s of each of its
 *  groups in order, so the newest entries are the faults.  --ring N keeps
 *  each rank's last N entries (the ring wrapped: the early ones "not
 *  recorded"); N >= 9 keeps every fault, so the findings do not change.
 *  --missing R writes no dump for rank R: each of its groups gains a
 *  dump_missing finding and loses R from its waiting ranks, and the stuck
 *  group cannot tell a stuck network from R never joining (undecided).
 *
 *  The encodings: torch's own pickler (default), Python's pickle at
 *  protocol 2..5 (tracegen_pickle.h), or the JSON form torch writes
 *  (keys sorted, pg_status numbers as text, 0 for a time not discovered,
 *  no frames).
 */
#define _POSIX_C_SOURCE 200809L

#include "tracegen_fr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracegen_common.h"
#include "tracegen_pickle.h"

#define WORLD 8
#define N_GROUPS 6
#define P2P_GROUP 5
#define MAX_ENTRIES 64
#define BASE_NS INT64_C(1700000000000000000)

typedef struct {
    const char *desc;
    int members[WORLD], n_members;
    int last_seq;
} fr_group;

static const fr_group GROUPS[N_GROUPS] = {
    {"default_pg", {0, 1, 2, 3, 4, 5, 6, 7}, 8, 6},
    {"tp0", {0, 1, 2, 3}, 4, 6},
    {"tp1", {4, 5, 6, 7}, 4, 5},
    {"dp_even", {0, 2, 4, 6}, 4, 6},
    {"dp_odd", {1, 3, 5, 7}, 4, 3},
    {"pp", {1, 5}, 2, 0},
};

enum { SCHEDULED, STARTED, COMPLETED };

typedef struct {
    int pg, seq, round, state;   /* seq: the p2p_seq_id of a point-to-point entry */
    int is_p2p;
    const char *op, *dtype;
    int64_t in_elems, out_elems;
    int64_t record_id;
} fr_entry;

typedef struct {
    fr_entry e[MAX_ENTRIES];
    int n, first;              /* first: the oldest entry the ring keeps */
    int last_enqueued[N_GROUPS], last_started[N_GROUPS], last_completed[N_GROUPS];
} fr_rank;

static int is_member(int g, int r)
{
    for (int i = 0; i < GROUPS[g].n_members; i++)
        if (GROUPS[g].members[i] == r)
            return 1;
    return 0;
}

/* What rank r enqueues as seq s of group g; 0 when it enqueues nothing. */
static int collective(int g, int r, int s, fr_entry *e)
{
    const fr_group *G = &GROUPS[g];
    if (!is_member(g, r) || s > G->last_seq)
        return 0;
    int content = s;   /* the others' seq whose collective this is */
    *e = (fr_entry){.pg = g, .seq = s, .round = s, .op = "nccl:all_reduce", .dtype = "Float"};
    if ((g == 0 && r == 0 && s == 6) || (g == 3 && r == 2 && s == 6))
        return 0;                                   /* never joined */
    if (g == 1 && r == 2) {
        if (s == 6)
            return 0;                               /* one short after its skip */
        content = s >= 4 ? s + 1 : s;
    }
    int64_t n = g == 0 ? 4096 : g == 2 ? 8192 : g == 3 ? 1024 : 512;
    e->in_elems = e->out_elems = n;
    if (g == 1) {
        e->op = "nccl:all_gather";
        e->in_elems = 256 * content;
        e->out_elems = 1024 * content;
    }
    if (g == 2 && r == 6 && s == 5)
        e->in_elems = e->out_elems = 2048;
    if (g == 3 && r == 6 && s == 4) {
        e->op = "nccl:reduce_scatter";
        e->out_elems = 256;
    }
    if (g == 3 && r == 4 && s == 5)
        e->dtype = "BFloat16";
    e->state = s < G->last_seq ? COMPLETED : STARTED;
    if (g == 1 && s >= 4)
        e->state = s == 4 ? STARTED : SCHEDULED;
    if (g == 3 && s == 4)
        e->state = COMPLETED;
    return 1;
}

static void build_rank(fr_rank *k, int r, int ring)
{
    memset(k, 0, sizeof *k);
    for (int g = 0; g < N_GROUPS; g++)
        k->last_enqueued[g] = k->last_started[g] = k->last_completed[g] = -1;
    for (int s = 1; s <= 6; s++)
        for (int g = 0; g < N_GROUPS; g++) {
            fr_entry e;
            if (!collective(g, r, s, &e))
                continue;
            e.record_id = k->n;
            k->e[k->n++] = e;
            k->last_enqueued[g] = s;
            if (e.state >= STARTED)
                k->last_started[g] = s;
            if (e.state == COMPLETED)
                k->last_completed[g] = s;
        }
    /* The pipeline pair: rank 1 sends to rank 5 twice; rank 5 posts the
     * first receive only, so the second send waits for it. */
    for (int s = 1; s <= 2 && (r == 1 || (r == 5 && s == 1)); s++) {
        fr_entry e = {.pg = P2P_GROUP, .seq = s, .round = 6, .is_p2p = 1,
                      .op = r == 1 ? "nccl:send 0->1" : "nccl:recv 1<-0", .dtype = "Float",
                      .in_elems = 1024, .out_elems = 1024,
                      .state = s == 1 ? COMPLETED : STARTED, .record_id = k->n};
        k->e[k->n++] = e;
    }
    k->first = ring > 0 && k->n > ring ? k->n - ring : 0;
}

static int64_t created_ns(const fr_entry *e, int r)
{
    return BASE_NS + (int64_t)e->round * 1000000 + e->pg * 10000 + r * 10;
}

static const char *const STATES[] = {"scheduled", "started", "completed"};

/* ---- pickle ------------------------------------------------------------- */

static void pk_sizes(tg_pickle *p, int64_t elems)
{
    tg_pk_list_begin(p, 1);
    tg_pk_list_begin(p, 1);
    tg_pk_int(p, elems);
    tg_pk_list_end(p);
    tg_pk_list_end(p);
}

static void pk_dtypes(tg_pickle *p, const char *dtype)
{
    tg_pk_list_begin(p, 1);
    tg_pk_str(p, dtype);
    tg_pk_list_end(p);
}

/* The two frames of an entry: the c10d call, shared by every entry of that
 * op (memoised by identity, as torch writes them), and the training step. */
typedef struct {
    uint32_t memo[2 * N_GROUPS + 2];
    int written[2 * N_GROUPS + 2];
} frame_memo;

static void pk_frame(tg_pickle *p, frame_memo *m, int id, const char *name,
                     const char *file, int line)
{
    if (m->written[id]) {
        tg_pk_get(p, m->memo[id]);
        return;
    }
    tg_pk_dict_begin(p, 3);
    tg_pk_str(p, "name");
    tg_pk_str(p, name);
    tg_pk_str(p, "filename");
    tg_pk_str(p, file);
    tg_pk_str(p, "line");
    tg_pk_int(p, line);
    tg_pk_dict_end(p);
    m->memo[id] = tg_pk_last(p);
    m->written[id] = 1;
}

static void pk_frames(tg_pickle *p, frame_memo *m, const fr_entry *e)
{
    int gather = !strcmp(e->op, "nccl:all_gather");
    int scatter = !strcmp(e->op, "nccl:reduce_scatter");
    tg_pk_list_begin(p, 2);
    if (e->is_p2p) {
        int recv = !strncmp(e->op, "nccl:recv", 9);
        pk_frame(p, m, 3 + N_GROUPS + recv, recv ? "recv" : "send",
                 "torch/distributed/distributed_c10d.py", recv ? 2410 : 2364);
    } else
        pk_frame(p, m, gather ? 0 : scatter ? 1 : 2,
                 gather ? "all_gather_into_tensor" : scatter ? "reduce_scatter_tensor"
                        : "all_reduce",
                 "torch/distributed/distributed_c10d.py", gather ? 3838 : scatter ? 4290 : 2696);
    pk_frame(p, m, 3 + e->pg, "train_step", "train.py", 40 + 10 * e->pg);
    tg_pk_list_end(p);
}

static void pk_key_int(tg_pickle *p, const char *key, int64_t v)
{
    tg_pk_str(p, key);
    tg_pk_int(p, v);
}

static void pk_key_str(tg_pickle *p, const char *key, const char *v)
{
    tg_pk_str(p, key);
    tg_pk_str(p, v);
}

static void pk_entry(tg_pickle *p, frame_memo *m, const fr_entry *e, int r)
{
    char name[8];
    snprintf(name, sizeof name, "%d", e->pg);
    int64_t t = created_ns(e, r);
    tg_pk_dict_begin(p, 21 + (e->state == COMPLETED));
    tg_pk_str(p, "frames");
    pk_frames(p, m, e);
    pk_key_int(p, "record_id", e->record_id);
    pk_key_int(p, "pg_id", e->pg);
    tg_pk_str(p, "process_group");
    tg_pk_str(p, name);
    tg_pk_str(p, GROUPS[e->pg].desc);
    tg_pk_tuple2(p);
    pk_key_str(p, "thread_name", "pt_main_thread");
    pk_key_str(p, "thread_id", "140213560456000");
    pk_key_int(p, "collective_seq_id", e->is_p2p ? 0 : e->seq);
    pk_key_int(p, "p2p_seq_id", e->is_p2p ? e->seq : 0);
    pk_key_int(p, "op_id", e->seq);
    pk_key_str(p, "profiling_name", e->op);
    pk_key_int(p, "time_created_ns", t);
    if (e->state == COMPLETED) {
        tg_pk_str(p, "duration_ms");
        tg_pk_float(p, 0.25 + 0.125 * e->pg);
    }
    tg_pk_str(p, "input_sizes");
    pk_sizes(p, e->in_elems);
    tg_pk_str(p, "input_dtypes");
    pk_dtypes(p, e->dtype);
    tg_pk_str(p, "output_sizes");
    pk_sizes(p, e->out_elems);
    tg_pk_str(p, "output_dtypes");
    pk_dtypes(p, e->dtype);
    pk_key_str(p, "state", STATES[e->state]);
    tg_pk_str(p, "time_discovered_started_ns");
    if (e->state >= STARTED)
        tg_pk_int(p, t + 100000);
    else
        tg_pk_none(p);
    tg_pk_str(p, "time_discovered_completed_ns");
    if (e->state == COMPLETED)
        tg_pk_int(p, t + 600000);
    else
        tg_pk_none(p);
    tg_pk_str(p, "retired");
    tg_pk_bool(p, e->state == COMPLETED);
    pk_key_int(p, "timeout_ms", 600000);
    tg_pk_str(p, "is_p2p");
    tg_pk_bool(p, e->is_p2p);
    tg_pk_dict_end(p);
}

static int groups_of(int r, int *out)
{
    int n = 0;
    for (int g = 0; g < N_GROUPS; g++)
        if (is_member(g, r))
            out[n++] = g;
    return n;
}

static void ranks_text(int g, char *out, size_t cap)
{
    size_t at = 0;
    at += (size_t)snprintf(out + at, cap - at, "[");
    for (int i = 0; i < GROUPS[g].n_members; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%d", i ? ", " : "", GROUPS[g].members[i]);
    snprintf(out + at, cap - at, "]");
}

static void write_pickle(const fr_rank *k, int r, int style, const char *path)
{
    tg_pickle *p = tg_pk_new(style);
    frame_memo m = {{0}, {0}};
    tg_pk_dict_begin(p, 5);
    pk_key_str(p, "version", "2.10");
    tg_pk_str(p, "pg_config");
    tg_pk_dict_begin(p, N_GROUPS);
    for (int g = 0; g < N_GROUPS; g++) {
        char name[8], ranks[64];
        snprintf(name, sizeof name, "%d", g);
        ranks_text(g, ranks, sizeof ranks);
        tg_pk_str(p, name);
        tg_pk_dict_begin(p, 3);
        pk_key_str(p, "name", name);
        pk_key_str(p, "desc", GROUPS[g].desc);
        pk_key_str(p, "ranks", ranks);
        tg_pk_dict_end(p);
    }
    tg_pk_dict_end(p);
    pk_key_str(p, "comm_lib_version", "2.21.5");
    tg_pk_str(p, "pg_status");
    int mine[N_GROUPS], n = groups_of(r, mine);
    tg_pk_dict_begin(p, (size_t)n);
    for (int i = 0; i < n; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", mine[i]);
        tg_pk_str(p, id);
        tg_pk_dict_begin(p, 3);
        pk_key_int(p, "last_enqueued_collective", k->last_enqueued[mine[i]]);
        pk_key_int(p, "last_started_collective", k->last_started[mine[i]]);
        pk_key_int(p, "last_completed_collective", k->last_completed[mine[i]]);
        tg_pk_dict_end(p);
    }
    tg_pk_dict_end(p);
    tg_pk_str(p, "entries");
    tg_pk_list_begin(p, (size_t)(k->n - k->first));
    for (int i = k->first; i < k->n; i++) {
        pk_entry(p, &m, &k->e[i], r);
        tg_pk_commit(p);
    }
    tg_pk_list_end(p);
    tg_pk_dict_end(p);
    tg_pk_finish(p, path);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_entry(FILE *f, const fr_entry *e, int r)
{
    int64_t t = created_ns(e, r);
    fprintf(f, "{\"collective_seq_id\":%d,", e->is_p2p ? 0 : e->seq);
    if (e->state == COMPLETED)
        fprintf(f, "\"duration_ms\":%.17g,", 0.25 + 0.125 * e->pg);
    fprintf(f,
            "\"input_dtypes\":[\"%s\"],\"input_sizes\":[[%" PRId64 "]],\"is_p2p\":%s,"
            "\"op_id\":%d,\"output_dtypes\":[\"%s\"],\"output_sizes\":[[%" PRId64 "]],"
            "\"p2p_seq_id\":%d,\"pg_id\":%d,\"process_group\":[\"%d\",\"%s\"],"
            "\"profiling_name\":\"%s\",\"record_id\":%" PRId64 ",\"retired\":%s,"
            "\"state\":\"%s\",\"thread_id\":\"140213560456000\","
            "\"thread_name\":\"pt_main_thread\",\"time_created_ns\":%" PRId64 ","
            "\"time_discovered_completed_ns\":%" PRId64 ","
            "\"time_discovered_started_ns\":%" PRId64 ",\"timeout_ms\":600000}",
            e->dtype, e->in_elems, e->is_p2p ? "true" : "false", e->seq, e->dtype, e->out_elems,
            e->is_p2p ? e->seq : 0, e->pg, e->pg,
            GROUPS[e->pg].desc, e->op, e->record_id, e->state == COMPLETED ? "true" : "false",
            STATES[e->state], t, e->state == COMPLETED ? t + 600000 : 0,
            e->state >= STARTED ? t + 100000 : 0);
}

static void write_json(const fr_rank *k, int r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        tg_fail("cannot write ", path);
    fputs("{\"comm_lib_version\":\"2.21.5\",\"entries\":[", f);
    for (int i = k->first; i < k->n; i++) {
        if (i > k->first)
            fputc(',', f);
        json_entry(f, &k->e[i], r);
    }
    fputs("],\"pg_config\":{", f);
    for (int g = 0; g < N_GROUPS; g++) {
        char ranks[64];
        ranks_text(g, ranks, sizeof ranks);
        fprintf(f, "%s\"%d\":{\"desc\":\"%s\",\"name\":\"%d\",\"ranks\":\"%s\"}", g ? "," : "",
                g, GROUPS[g].desc, g, ranks);
    }
    fputs("},\"pg_status\":{", f);
    int mine[N_GROUPS], n = groups_of(r, mine);
    for (int i = 0; i < n; i++) {
        int g = mine[i];
        fprintf(f,
                "%s\"%d\":{\"last_completed_collective\":\"%d\","
                "\"last_enqueued_collective\":\"%d\",\"last_started_collective\":\"%d\"}",
                i ? "," : "", g, k->last_completed[g], k->last_enqueued[g], k->last_started[g]);
    }
    fputs("},\"version\":\"2.10\"}", f);
    if (fclose(f))
        tg_fail("write failed: ", path);
}

/* ---- the truth ---------------------------------------------------------- */

typedef struct {
    const char *kind;
    int pg, seq;
    const char *op;
    int culprits[WORLD], n_culprits;
} fr_finding;

static const fr_finding FINDINGS[] = {
    {"not_joined", 0, 6, "nccl:all_reduce", {0}, 1},
    {"skipped", 1, 4, "nccl:all_gather", {2}, 1},
    {"size_mismatch", 2, 5, "nccl:all_reduce", {6}, 1},
    {"op_mismatch", 3, 4, "nccl:all_reduce", {6}, 1},
    {"dtype_mismatch", 3, 5, "nccl:all_reduce", {4}, 1},
    {"not_joined", 3, 6, "nccl:all_reduce", {2}, 1},
    {"stuck", 4, 3, "nccl:all_reduce", {0}, 0},
    {"p2p_not_joined", P2P_GROUP, 2, "nccl:send 0->1", {5}, 1},
};

/* The members blocked in the finding's collective: those whose entry at
 * its seq is not completed, less its culprits and the rank without a dump. */
static void write_waiting(FILE *t, const fr_finding *f, const fr_rank *ranks, int missing)
{
    int first = 1;
    fputc('"', t);
    for (int i = 0; i < GROUPS[f->pg].n_members; i++) {
        int r = GROUPS[f->pg].members[i], culprit = 0;
        for (int c = 0; c < f->n_culprits; c++)
            culprit |= f->culprits[c] == r;
        int blocked = 0;
        for (int j = 0; j < ranks[r].n; j++)
            blocked |= ranks[r].e[j].pg == f->pg && ranks[r].e[j].seq == f->seq &&
                       ranks[r].e[j].state != COMPLETED;
        if (!culprit && blocked && r != missing) {
            fprintf(t, "%s%d", first ? "" : ",", r);
            first = 0;
        }
    }
    fputc('"', t);
}

static void write_truth(const char *dir, const fr_rank *ranks, int missing, int ring)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.fr_truth.json", dir);
    FILE *t = fopen(path, "w");
    if (!t)
        tg_fail("cannot write ", path);
    fprintf(t, "{\"world\": %d, \"missing\": %d, \"ring\": %d, \"ranks\": {", WORLD, missing, ring);
    for (int r = 0, first = 1; r < WORLD; r++) {
        if (r == missing)
            continue;
        const fr_rank *k = &ranks[r];
        fprintf(t, "%s\n  \"%d\": {\"entries\": %d, \"first_record\": %d, \"last_record\": %d, "
                   "\"wrapped\": %s}", first ? "" : ",", r, k->n - k->first, k->first, k->n - 1,
                k->first > 0 ? "true" : "false");
        first = 0;
    }
    fputs("},\n \"findings\": [", t);
    int first = 1;
    for (size_t i = 0; i < sizeof FINDINGS / sizeof FINDINGS[0]; i++) {
        const fr_finding *f = &FINDINGS[i];
        const char *kind = f->kind;
        if (!strcmp(kind, "stuck") && missing >= 0 && is_member(f->pg, missing))
            kind = "undecided";
        fprintf(t, "%s\n  {\"kind\": \"%s\", \"group\": \"%d\", \"seq\": %d, \"op\": \"%s\", "
                   "\"culprit_ranks\": \"", first ? "" : ",", kind, f->pg, f->seq, f->op);
        for (int c = 0; c < f->n_culprits; c++)
            fprintf(t, "%s%d", c ? "," : "", f->culprits[c]);
        fputs("\", \"waiting_ranks\": ", t);
        write_waiting(t, f, ranks, missing);
        fputc('}', t);
        first = 0;
    }
    for (int g = 0; g < N_GROUPS; g++)
        if (missing >= 0 && is_member(g, missing))
            fprintf(t, ",\n  {\"kind\": \"dump_missing\", \"group\": \"%d\", \"seq\": -1, "
                       "\"op\": \"\", \"culprit_ranks\": \"%d\", \"waiting_ranks\": \"\"}",
                    g, missing);
    fputs("\n]}\n", t);
    if (fclose(t))
        tg_fail("write failed: ", path);
}

/* ---- the command -------------------------------------------------------- */

static int parse_encoding(const char *s)
{
    if (s && !strcmp(s, "torch"))
        return 0;
    if (s && !strcmp(s, "json"))
        return -1;
    if (s && !strncmp(s, "pickle", 6) && s[6] >= '2' && s[6] <= '5' && !s[7])
        return s[6] - '0';
    tg_fail("--encoding takes torch, pickle2..pickle5 or json, not ", s ? s : "nothing");
    return 0;
}

static int parse_rank(const char *s)
{
    char *end;
    long r = s ? strtol(s, &end, 10) : -1;
    if (!s || end == s || *end || r < 0 || r >= WORLD)
        tg_fail("--missing takes a rank 0..7, not ", s ? s : "nothing");
    return (int)r;
}

int tracegen_fr_main(int argc, char **argv)
{
    const char *dir = NULL;
    int style = 0, ring = 0, missing = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--flight-recorder"))
            continue;
        if (!strcmp(a, "-o") || !strcmp(a, "--output"))
            dir = v;
        else if (!strcmp(a, "--encoding"))
            style = parse_encoding(v);
        else if (!strcmp(a, "--ring"))
            ring = (int)tg_json_count(a, v, MAX_ENTRIES);
        else if (!strcmp(a, "--missing"))
            missing = parse_rank(v);
        else
            tg_fail("--flight-recorder takes only -o DIR, --encoding E, --ring N, --missing R: ",
                    a);
        i++;
    }
    if (!dir)
        tg_fail("--flight-recorder needs -o DIR", NULL);
    if (mkdir(dir, 0777) && errno != EEXIST)
        tg_fail("cannot create ", dir);
    fr_rank *ranks = tg_calloc(WORLD, sizeof *ranks);
    for (int r = 0; r < WORLD; r++) {
        build_rank(&ranks[r], r, ring);
        if (r == missing)
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/nccl_trace_rank_%d", dir, r);
        if (style < 0)
            write_json(&ranks[r], r, path);
        else
            write_pickle(&ranks[r], r, style, path);
    }
    write_truth(dir, ranks, missing, ring);
    free(ranks);
    return 0;
}
