/*
 * hta-tracegen -- deterministic synthetic PyTorch profiler (Kineto) traces.
 *
 * The driver: one job shape per file, chosen by a flag in MODES (--tp,
 * --ops-truth, --critical-path-truth), each parsing its own arguments;
 * without one, the default DDP job (tracegen_ddp.c), whose command line is
 * parsed here.  A new job shape is a new file with an entry
 * `int tracegen_NAME_main(int argc, char **argv)` and a line in MODES.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracegen_chains.h"
#include "tracegen_device_sync.h"
#include "tracegen_common.h"
#include "tracegen_ddp.h"
#include "tracegen_delay.h"
#include "tracegen_fr.h"
#include "tracegen_flops.h"
#include "tracegen_graphs.h"
#include "tracegen_groups.h"
#include "tracegen_jitter.h"
#include "tracegen_moe.h"
#include "tracegen_nodes.h"
#include "tracegen_ops.h"
#include "tracegen_pipeline.h"

static const char USAGE[] =
    "Usage: hta-tracegen -o DIR [options]\n"
    "\n"
    "Write deterministic synthetic PyTorch profiler (Kineto) traces of a DDP\n"
    "training job, one file per rank: DIR/rank-<r>.json (or .json.gz).\n"
    "\n"
    "Options:\n"
    "  -o, --output DIR         output directory (created if missing)\n"
    "  --ranks N                number of rank files to write (default 4)\n"
    "  --first-rank R           first rank to write (default 0); the world size is\n"
    "                           R + N, so traces written in pieces agree\n"
    "  --size-mb S              approximate uncompressed size of each file in MB\n"
    "                           (10^6 bytes; default 1; fractions allowed)\n"
    "  --steps K                number of profiler steps (overrides --size-mb;\n"
    "                           by default derived from --size-mb, at least 3)\n"
    "  --straggler RANK:FACTOR  multiply RANK's compute time by FACTOR (0.5..10);\n"
    "                           repeatable; give the same list to every piece\n"
    "  --kernel-factor TEXT:F   compute kernels whose name contains TEXT run F times\n"
    "                           as long (0.1..10; the phase grows with them)\n"
    "  --rename-kernel TEXT=NAME  kernels whose name contains TEXT are named NAME\n"
    "  --ranks-per-node R       ranks r..r+R-1 on node r / R: files named\n"
    "                           DIR/node<k>_<pid>.<time>.pt.trace.json\n"
    "  --slow-node K:F          every rank of node K computes F times as long\n"
    "                           (0.5..10; repeatable; needs --ranks-per-node)\n"
    "  --clock-offset K:US      node K's clock reads US microseconds ahead (negative:\n"
    "                           behind; repeatable; needs --ranks-per-node)\n"
    "  --seed N                 random seed (default 1)\n"
    "  --gzip                   write gzip-compressed files\n"
    "  --compact                write JSON without any whitespace\n"
    "  --ops-truth              instead: traces of known ops, annotations, GPU gaps,\n"
    "                           sync calls and memory (only -o, --ranks, --steps),\n"
    "                           the answer in DIR.ops_truth.json\n"
    "  --critical-path-truth    instead: steps of known critical paths (a slow data\n"
    "                           loader, a sync after the step's kernel, tiny kernels\n"
    "                           each launched late; only -o, --ranks <= 32,\n"
    "                           --steps <= 50), the answer in\n"
    "                           DIR.critical_path_truth.json\n"
    "  --device-sync-truth      instead: steps that synchronise the device, whose\n"
    "                           Context Sync records cover GPU idle time (only -o,\n"
    "                           --ranks <= 32, --steps <= 50), the answer in\n"
    "                           DIR.device_sync_truth.json\n"
    "  --flops-truth            instead: GEMM, convolution and attention ops whose\n"
    "                           rates are closed forms (only -o, --ranks, --steps,\n"
    "                           --slow-rank R:F, --device NAME; see tracegen_flops.c)\n"
    "  --jitter-data-loading-truth, --jitter-compute-truth\n"
    "                           instead: steps whose time varies only in data\n"
    "                           loading, or only in one kernel (only -o, --ranks,\n"
    "                           --steps), the answer in DIR.jitter_truth.json\n"
    "  --delay-truth            instead: one rank delayed once before a collective,\n"
    "                           its delay passed on through a second one (only -o,\n"
    "                           --ranks (even, >= 4), --steps, --delay-us X: its\n"
    "                           length, default 1000, 0: none; --delay-in\n"
    "                           compute|data-loading: in its gemm, the default, or\n"
    "                           in a DataLoader range), the answer in\n"
    "                           DIR.delay_truth.json\n"
    "  --graphs G:N             instead: every step replays G CUDA graphs of N\n"
    "                           kernels (only -o, --ranks <= 32, --steps <= 50,\n"
    "                           --graph-drop K[:R]: every K-th replay unrecorded,\n"
    "                           on rank R only if given; --graph-short K[:R]:\n"
    "                           every K-th recorded replay lacks a kernel;\n"
    "                           --graph-sync: a device synchronize ends each\n"
    "                           step's launches),\n"
    "                           the answer in DIR.graphs_truth.json\n"
    "  --flight-recorder        instead: the NCCL Flight Recorder dumps of a hung\n"
    "                           job of 8 ranks, one fault per process group (only\n"
    "                           -o, --encoding torch|pickle2..pickle5|json, --ring N:\n"
    "                           each rank keeps its last N entries, --missing R: no\n"
    "                           dump of rank R), the answer in DIR.fr_truth.json\n"
    "  -h, --help               show this help and exit\n"
    "\n"
    "Each step runs 3 compute phases, each followed by an NCCL all-reduce; a rank\n"
    "waits at every all-reduce for the slowest rank (see the source for the exact\n"
    "timing model).\n";

typedef struct {
    int64_t rank;
    double factor;
} tg_straggler;

enum { MAX_STRAGGLER_ARGS = 256 };

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static void bad_value(const char *opt, const char *value)
{
    char detail[256];
    snprintf(detail, sizeof detail, "%s '%s'", opt, value);
    tg_fail("invalid value for ", detail);
}

/* --straggler RANK:FACTOR */
static tg_straggler parse_straggler(const char *value)
{
    const char *colon = strchr(value, ':');
    char rank_text[32];
    int64_t rank;
    double f;
    if (colon && (size_t)(colon - value) < sizeof rank_text) {
        memcpy(rank_text, value, (size_t)(colon - value));
        rank_text[colon - value] = '\0';
    }
    if (!colon || (size_t)(colon - value) >= sizeof rank_text)
        bad_value("--straggler", value);
    if (!parse_int(rank_text, 0, MAX_WORLD - 1, &rank) || !parse_double(colon + 1, &f) ||
        f < MIN_FACTOR || f > MAX_FACTOR) {
        char detail[160];
        snprintf(detail, sizeof detail, "'%.80s' (want RANK:FACTOR, FACTOR in 0.5..10)", value);
        tg_fail("invalid value for --straggler ", detail);
    }
    return (tg_straggler){rank, f};
}

enum {
    OPT_RANKS = 256,
    OPT_FIRST_RANK,
    OPT_SIZE_MB,
    OPT_STEPS,
    OPT_STRAGGLER,
    OPT_SEED,
    OPT_GZIP,
    OPT_COMPACT,
    OPT_KERNEL_FACTOR,
    OPT_RENAME_KERNEL,
    OPT_RANKS_PER_NODE,
    OPT_SLOW_NODE,
    OPT_CLOCK_OFFSET,
};

static const struct option LONG_OPTIONS[] = {
    {"output", required_argument, NULL, 'o'},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"first-rank", required_argument, NULL, OPT_FIRST_RANK},
    {"size-mb", required_argument, NULL, OPT_SIZE_MB},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"straggler", required_argument, NULL, OPT_STRAGGLER},
    {"seed", required_argument, NULL, OPT_SEED},
    {"gzip", no_argument, NULL, OPT_GZIP},
    {"compact", no_argument, NULL, OPT_COMPACT},
    {"kernel-factor", required_argument, NULL, OPT_KERNEL_FACTOR},
    {"rename-kernel", required_argument, NULL, OPT_RENAME_KERNEL},
    {"ranks-per-node", required_argument, NULL, OPT_RANKS_PER_NODE},
    {"slow-node", required_argument, NULL, OPT_SLOW_NODE},
    {"clock-offset", required_argument, NULL, OPT_CLOCK_OFFSET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void parse_args(tg_ddp_options *c, int argc, char **argv)
{
    tg_straggler straggler[MAX_STRAGGLER_ARGS];
    const char *slow_node[MAX_STRAGGLER_ARGS], *clock_offset[MAX_STRAGGLER_ARGS];
    int nstraggler = 0, nslow_node = 0, nclock_offset = 0;
    c->ranks = 4;
    c->first_rank = 0;
    c->size_mb = 1.0;
    c->seed = 1;
    opterr = 0;                /* the messages are ours */
    for (;;) {
        int index = -1;
        int opt = getopt_long(argc, argv, ":o:h", LONG_OPTIONS, &index);
        if (opt == -1)
            break;
        const char *value = optarg;
        switch (opt) {
        case 'h':
            fputs(USAGE, stdout);
            exit(0);
        case OPT_GZIP:
            c->gzip = true;
            break;
        case OPT_COMPACT:
            c->compact = true;
            break;
        case 'o':
            if (!*value)
                bad_value(index < 0 ? "-o" : "--output", value);
            c->outdir = value;
            break;
        case OPT_RANKS:
            if (!parse_int(value, 1, MAX_WORLD, &c->ranks))
                bad_value("--ranks", value);
            break;
        case OPT_FIRST_RANK:
            if (!parse_int(value, 0, MAX_WORLD - 1, &c->first_rank))
                bad_value("--first-rank", value);
            break;
        case OPT_SIZE_MB:
            if (!parse_double(value, &c->size_mb) || c->size_mb <= 0 || c->size_mb > 1e6)
                bad_value("--size-mb", value);
            break;
        case OPT_SEED: {
            char *end;
            errno = 0;
            c->seed = strtoull(value, &end, 10);
            if (errno || end == value || *end || value[0] == '-')
                bad_value("--seed", value);
            break;
        }
        case OPT_STEPS:
            if (!parse_int(value, 1, 100000000, &c->steps_opt))
                bad_value("--steps", value);
            break;
        case OPT_KERNEL_FACTOR: {
            const char *colon = strrchr(value, ':');
            if (!colon || colon == value || !parse_double(colon + 1, &c->slow_factor) ||
                c->slow_factor < 0.1 || c->slow_factor > 10)
                bad_value("--kernel-factor", value);
            free((char *)c->slow_match);
            c->slow_match = strndup(value, (size_t)(colon - value));
            break;
        }
        case OPT_RENAME_KERNEL: {
            const char *eq = strchr(value, '=');
            if (!eq || eq == value || !eq[1] || strpbrk(eq + 1, "\"\\"))
                bad_value("--rename-kernel", value);
            free((char *)c->rename_match);
            c->rename_match = strndup(value, (size_t)(eq - value));
            c->rename_to = eq + 1;
            break;
        }
        case OPT_RANKS_PER_NODE:
            if (!parse_int(value, 1, MAX_WORLD, &c->ranks_per_node))
                bad_value("--ranks-per-node", value);
            break;
        case OPT_SLOW_NODE:
            if (nslow_node >= MAX_STRAGGLER_ARGS)
                tg_fail("too many --slow-node options", NULL);
            slow_node[nslow_node++] = value;
            break;
        case OPT_CLOCK_OFFSET:
            if (nclock_offset >= MAX_STRAGGLER_ARGS)
                tg_fail("too many --clock-offset options", NULL);
            clock_offset[nclock_offset++] = value;
            break;
        case OPT_STRAGGLER:
            if (nstraggler >= MAX_STRAGGLER_ARGS)
                tg_fail("too many --straggler options", NULL);
            straggler[nstraggler++] = parse_straggler(value);
            break;
        case ':':
            tg_fail("missing value for ", argv[optind - 1]);
            break;
        default:
            tg_fail("unknown option: ", argv[optind - 1]);
        }
    }
    if (optind < argc)
        tg_fail("unknown option: ", argv[optind]);
    if (!c->outdir)
        tg_fail("missing -o DIR (see --help)", NULL);
    c->world = c->first_rank + c->ranks;
    if (c->world > MAX_WORLD)
        tg_fail("world size (first-rank + ranks) exceeds 1000000", NULL);
    c->factor = tg_calloc((size_t)c->world, sizeof *c->factor);
    for (int64_t r = 0; r < c->world; r++)
        c->factor[r] = 1.0;
    for (int i = 0; i < nstraggler; i++) {
        if (straggler[i].rank >= c->world) {
            char detail[96];
            snprintf(detail, sizeof detail, "%" PRId64 " is outside the world size %" PRId64,
                     straggler[i].rank, c->world);
            tg_fail("straggler rank ", detail);
        }
        c->factor[straggler[i].rank] = straggler[i].factor;
    }
    for (int i = 0; i < nslow_node; i++)
        tg_nodes_slow(c->factor, c->world, c->ranks_per_node, slow_node[i]);
    c->clock_offset_us = tg_calloc((size_t)c->world, sizeof *c->clock_offset_us);
    for (int i = 0; i < nclock_offset; i++)
        tg_nodes_clock_offset(c->clock_offset_us, c->world, c->ranks_per_node, clock_offset[i]);
}

/* The job shapes other than the default, each entered when its flag is
 * among the arguments (the first in this order wins). */
static const struct {
    const char *flag;
    int (*main)(int argc, char **argv);
} MODES[] = {
    {"--tp", tracegen_groups_main},
    {"--pp", tracegen_pipeline_main},
    {"--moe", tracegen_moe_main},
    {"--ops-truth", tracegen_ops_main},
    {"--critical-path-truth", tracegen_chains_main},
    {"--device-sync-truth", tracegen_device_sync_main},
    {"--flops-truth", tracegen_flops_main},
    {"--graphs", tracegen_graphs_main},
    {"--jitter-data-loading-truth", tracegen_jitter_main},
    {"--delay-truth", tracegen_delay_main},
    {"--flight-recorder", tracegen_fr_main},
    {"--jitter-compute-truth", tracegen_jitter_main},
};

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        for (size_t m = 0; m < sizeof MODES / sizeof MODES[0]; m++)
            if (!strcmp(argv[i], MODES[m].flag))
                return MODES[m].main(argc, argv);
    tg_ddp_options opt = {0};
    parse_args(&opt, argc, argv);
    tracegen_ddp_write(&opt);
    free(opt.factor);
    free(opt.clock_offset_us);
    free((char *)opt.slow_match);
    free((char *)opt.rename_match);
    return 0;
}
