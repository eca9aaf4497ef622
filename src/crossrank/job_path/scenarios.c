/* scenarios.c: the what-if scenarios of --what-if (see
 * crossrank/job_path/scenarios.h; docs/definitions.md, What-if).
 *
 * A spec is KIND[:RANKS][:F]: median:RANKS, compute:RANKS:F, network:F,
 * no-data-loading:RANKS, no-launch-delay:RANKS; RANKS is "all", a list
 * of ranks and ranges (4,5 or 4-7), "stragglers" or "node:HOST".  The
 * last two name ranks only the cross-rank stage knows, which sets them
 * (hta_scenario_set_ranks) before the replay.  The text is kept
 * verbatim, for the rows of /what_if. */
#define _POSIX_C_SOURCE 200809L
#include "crossrank/job_path/scenarios.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crossrank/compare/stragglers.h"

static const struct {
    const char *name;
    hta_scenario_kind kind;
    int takes_ranks, takes_factor;
} KINDS[] = {
    {"median", HTA_SCENARIO_MEDIAN, 1, 0},
    {"compute", HTA_SCENARIO_COMPUTE, 1, 1},
    {"network", HTA_SCENARIO_NETWORK, 0, 1},
    {"no-data-loading", HTA_SCENARIO_NO_DATA_LOADING, 1, 0},
    {"no-launch-delay", HTA_SCENARIO_NO_LAUNCH_DELAY, 1, 0},
};

void hta_scenarios_free(hta_scenario *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++) {
        free(s[i].first);
        free(s[i].last);
        free(s[i].text);
        free(s[i].ranks);
        free(s[i].steps);
        free(s[i].step_first);
        free(s[i].step_last);
    }
    free(s);
}

static int parse_rank(const char *p, char **end, int64_t *v)
{
    errno = 0;
    long long x = strtoll(p, end, 10);
    if (*end == p || errno || x < 0)
        return -1;
    *v = x;
    return 0;
}

/* A list of numbers and ranges separated by ',' into first[i]..last[i],
 * *n of them; -1 when bad or out of memory. */
static int parse_ranges(const char *text, int64_t **first, int64_t **last, size_t *n)
{
    *n = 0;
    free(*first);
    free(*last);
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    *first = malloc(cap * sizeof **first);
    *last = malloc(cap * sizeof **last);
    if (!*first || !*last)
        return -1;
    const char *p = text;
    for (;;) {
        char *end;
        int64_t a, b;
        if (parse_rank(p, &end, &a))
            return -1;
        b = a;
        if (*end == '-' && parse_rank(end + 1, &end, &b))
            return -1;
        if (b < a)
            return -1;
        (*first)[*n] = a;
        (*last)[(*n)++] = b;
        if (*end == 0)
            return 0;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

/* A list of ranks and ranges; -1 when bad or out of memory. */
static int parse_list(const char *text, hta_scenario *s)
{
    s->by = HTA_RANKS_LISTED;
    return parse_ranges(text, &s->first, &s->last, &s->n_ranges);
}

/* RANKS: a word, or a list; -1 when bad or out of memory. */
static int parse_ranks(const char *text, hta_scenario *s)
{
    if (strcmp(text, "all") == 0)
        s->by = HTA_RANKS_ALL;
    else if (strcmp(text, hta_stragglers_table.name) == 0) /* the ranks it flags */
        s->by = HTA_RANKS_STRAGGLERS;
    else if (strncmp(text, "node:", 5) == 0 && text[5])
        s->by = HTA_RANKS_NODE;
    else
        return parse_list(text, s);
    return 0;
}

int hta_scenario_set_ranks(hta_scenario *s, const char *list)
{
    char *copy = strdup(list);
    if (!copy)
        return -1;
    free(s->ranks);
    s->ranks = copy;
    if (strcmp(list, "none") == 0) {
        s->by = HTA_RANKS_NONE;
        return 0;
    }
    return parse_list(list, s);
}

int hta_scenario_set_steps(hta_scenario *s, const char *list)
{
    free(s->steps);
    s->steps = strdup(list);
    return s->steps ? parse_ranges(list, &s->step_first, &s->step_last, &s->n_step_ranges) : -1;
}

static int in_ranges(const int64_t *first, const int64_t *last, size_t n, int64_t v)
{
    for (size_t i = 0; i < n; i++)
        if (v >= first[i] && v <= last[i])
            return 1;
    return 0;
}

int hta_scenario_at_step(const hta_scenario *s, int64_t step)
{
    return !s->steps || in_ranges(s->step_first, s->step_last, s->n_step_ranges, step);
}

char *hta_ranks_text(const int64_t *ranks, size_t n)
{
    if (n == 0)
        return strdup("none");
    char *text = malloc(n * 42 + 1), *at = text;
    for (size_t i = 0, end; text && i < n; i = end) {
        for (end = i + 1; end < n && ranks[end] == ranks[end - 1] + 1;)
            end++;
        at += sprintf(at, i ? ",%lld" : "%lld", (long long)ranks[i]);
        if (end - i > 1)
            at += sprintf(at, "-%lld", (long long)ranks[end - 1]);
    }
    return text;
}

static int parse_factor(const char *text, double *f)
{
    char *end;
    errno = 0;
    *f = strtod(text, &end);
    return end == text || *end || errno || !(*f > 0) ? -1 : 0;
}

/* One spec (len bytes of text) into s; -1 when bad or out of memory. */
static int parse_spec(const char *text, size_t len, hta_scenario *s)
{
    *s = (hta_scenario){.by = HTA_RANKS_ALL, .factor = 1, .text = strndup(text, len)};
    if (!s->text)
        return -1;
    char *colon = strchr(s->text, ':');
    size_t name_len = colon ? (size_t)(colon - s->text) : strlen(s->text);
    for (size_t k = 0; k < sizeof KINDS / sizeof *KINDS; k++) {
        if (strlen(KINDS[k].name) != name_len || strncmp(KINDS[k].name, s->text, name_len))
            continue;
        s->kind = KINDS[k].kind;
        char *rest = colon ? colon + 1 : NULL;
        if (!rest)
            return -1;
        char *factor = KINDS[k].takes_ranks && KINDS[k].takes_factor ? strrchr(rest, ':')
                       : KINDS[k].takes_factor                       ? rest
                                                                     : NULL;
        if (factor && factor != rest)
            *factor++ = 0;
        if (KINDS[k].takes_factor && (!factor || parse_factor(factor, &s->factor)))
            return -1;
        s->ranks = strdup(KINDS[k].takes_ranks ? rest : "");
        if (!s->ranks || (KINDS[k].takes_ranks && parse_ranks(rest, s)))
            return -1;
        /* rest was cut at the factor: the text is the user's again. */
        free(s->text);
        s->text = strndup(text, len);
        return s->text ? 0 : -1;
    }
    return -1;
}

static int add_spec(const char *text, size_t len, hta_scenario *all, size_t *n, hta_error *err)
{
    hta_scenario *s = &all[(*n)++];
    if (parse_spec(text, len, s) == 0)
        return 0;
    return hta_fail(err, "--what-if: cannot read \"%.*s\" (median:RANKS, compute:RANKS:F, "
                         "network:F, no-data-loading:RANKS, no-launch-delay:RANKS; RANKS "
                         "e.g. 4,5 or 4-7, all, stragglers or node:HOST)",
                    (int)len, text);
}

int hta_scenarios_parse(const char *specs, hta_scenario **out, size_t *n, hta_error *err)
{
    const char *text = specs ? specs : "";
    size_t cap = 2;
    for (const char *p = text; *p; p++)
        cap += *p == ';';
    hta_scenario *all = calloc(cap, sizeof *all);
    *n = 0;
    *out = all;
    if (!all)
        return hta_fail(err, "out of memory reading --what-if");
    all[(*n)++] = (hta_scenario){.kind = HTA_SCENARIO_AS_MEASURED, .by = HTA_RANKS_NONE,
                                 .factor = 1, .text = strdup("as measured"), .ranks = strdup("")};
    if (!all[0].text || !all[0].ranks)
        return hta_fail(err, "out of memory reading --what-if");
    for (const char *p = text;;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && add_spec(p, len, all, n, err))
            return -1;
        if (!end)
            return 0;
        p = end + 1;
    }
}

int hta_scenario_covers(const hta_scenario *s, int64_t rank)
{
    return s->by == HTA_RANKS_ALL || in_ranges(s->first, s->last, s->n_ranges, rank);
}
