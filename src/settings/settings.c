/* settings.c: HTA_SETTINGS as data, and what is derived from it (see
 * settings/settings.h): the defaults, one value set from its text, the
 * --help lines and the values the results file records.
 *
 * Parsing touches neither MPI nor the file system, so the command line's
 * errors answer at once on every process. */
#include "settings/settings.h"

#include <errno.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY(stage, field, kind, name, short_name, default_value, min, words, metavar, help,   \
              attribute, diff)                                                                 \
    {name, short_name, HTA_SETTING_##kind, offsetof(hta_settings, stage.field), min, words,    \
     metavar, help, attribute, diff},
#define READ_ENTRY(...) ENTRY(read, __VA_ARGS__)
#define ANALYSIS_ENTRY(...) ENTRY(analysis, __VA_ARGS__)
#define CROSSRANK_ENTRY(...) ENTRY(crossrank, __VA_ARGS__)
#define RUN_ENTRY(...) ENTRY(run, __VA_ARGS__)
#define OUTPUT_ENTRY(...) ENTRY(output, __VA_ARGS__)

const hta_setting hta_setting_list[] = {
    HTA_SETTINGS(READ_ENTRY, ANALYSIS_ENTRY, CROSSRANK_ENTRY, RUN_ENTRY, OUTPUT_ENTRY)
};
const size_t hta_n_settings = sizeof hta_setting_list / sizeof *hta_setting_list;

#define DEFAULT(stage, field, kind, name, short_name, default_value, ...)                      \
    s->stage.field = (HTA_SETTING_TYPE_##kind)default_value;
#define READ_DEFAULT(...) DEFAULT(read, __VA_ARGS__)
#define ANALYSIS_DEFAULT(...) DEFAULT(analysis, __VA_ARGS__)
#define CROSSRANK_DEFAULT(...) DEFAULT(crossrank, __VA_ARGS__)
#define RUN_DEFAULT(...) DEFAULT(run, __VA_ARGS__)
#define OUTPUT_DEFAULT(...) DEFAULT(output, __VA_ARGS__)

void hta_settings_defaults(hta_settings *s)
{
    memset(s, 0, sizeof *s);
    HTA_SETTINGS(READ_DEFAULT, ANALYSIS_DEFAULT, CROSSRANK_DEFAULT, RUN_DEFAULT, OUTPUT_DEFAULT)
}

void hta_settings_free(hta_settings *s)
{
    free(s->run.ranks.ranges);
    free((char *)s->output.command_line);
    for (size_t i = 0; i < s->n_copies; i++)
        free(s->copies[i]);
    free(s->copies);
    s->run.ranks = (hta_rank_list){0};
    s->output.command_line = NULL;
    s->copies = NULL;
    s->n_copies = 0;
}

const hta_settings *hta_settings_or_defaults(const hta_settings *s, hta_settings *defaults)
{
    if (s)
        return s;
    hta_settings_defaults(defaults);
    return defaults;
}

hta_settings *hta_settings_new(void)
{
    hta_settings *s = malloc(sizeof *s);
    if (s)
        hta_settings_defaults(s);
    return s;
}

void hta_settings_destroy(hta_settings *s)
{
    if (!s)
        return;
    hta_settings_free(s);
    free(s);
}

int hta_rank_list_has(const hta_rank_list *list, int64_t rank)
{
    if (!list->ranges)
        return 1;
    for (size_t i = 0; i < list->n; i++)
        if (rank >= list->ranges[i].first && rank <= list->ranges[i].last)
            return 1;
    return 0;
}

/* ---- one value from its text ---------------------------------------- */

static int parse_flag(const char *name, const char *text, int *out, hta_error *err)
{
    if (!text || !text[0] || strcmp(text, "1") == 0)
        *out = 1;
    else if (strcmp(text, "0") == 0)
        *out = 0;
    else
        return hta_fail(err, "--%s takes no value, got '%s'", name, text);
    return 0;
}

static int parse_number(const char *name, const char *text, double min, double *out,
                        hta_error *err)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= min))
        return hta_fail(err, "--%s: expected a number >= %g, got '%s'", name, min, text);
    *out = v;
    return 0;
}

static int parse_int(const char *name, const char *text, double min, int *out, hta_error *err)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < (long)min || v > 1000000000L)
        return hta_fail(err, "--%s: expected an integer >= %ld, got '%s'", name, (long)min,
                        text);
    *out = (int)v;
    return 0;
}

/* A copy of text that lives as long as s. */
static const char *keep_copy(hta_settings *s, const char *text)
{
    char **grown = realloc(s->copies, (s->n_copies + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->copies = grown;
    char *copy = strdup(text);
    if (copy)
        s->copies[s->n_copies++] = copy;
    return copy;
}

static int parse_text(hta_settings *s, const char *text, const char **out, hta_error *err)
{
    const char *kept = keep_copy(s, text);
    if (!kept)
        return hta_fail(err, "out of memory");
    *out = kept;
    return 0;
}

/* Adds text after the values given before, separated by ';'. */
static int parse_texts(hta_settings *s, const char *text, const char **out, hta_error *err)
{
    if (!*out)
        return parse_text(s, text, out, err);
    size_t before = strlen(*out), len = before + 1 + strlen(text) + 1;
    char *joined = malloc(len);
    if (!joined)
        return hta_fail(err, "out of memory");
    snprintf(joined, len, "%s;%s", *out, text);
    int rc = parse_text(s, joined, out, err);
    free(joined);
    return rc;
}

/* Keeps a POSIX extended regular expression after checking it compiles. */
static int parse_regex(hta_settings *s, const char *name, const char *text, const char **out,
                       hta_error *err)
{
    regex_t compiled;
    int rc = regcomp(&compiled, text, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        char why[128];
        regerror(rc, &compiled, why, sizeof why);
        return hta_fail(err, "--%s: '%s': %s", name, text, why);
    }
    regfree(&compiled);
    return parse_text(s, text, out, err);
}

/* Choice words this build cannot honour, and why. */
static const struct {
    const char *option, *word, *why;
} UNAVAILABLE[] = {
#ifndef HTA_HAVE_ISAL
    {"inflater", "isal", "this build has no ISA-L (libisal-dev)"},
#endif
    {NULL, NULL, NULL},
};

static int word_is_unavailable(const char *name, const char *text, hta_error *err)
{
    for (size_t i = 0; UNAVAILABLE[i].option; i++)
        if (strcmp(name, UNAVAILABLE[i].option) == 0 && strcmp(text, UNAVAILABLE[i].word) == 0)
            return hta_fail(err, "--%s %s: %s", name, text, UNAVAILABLE[i].why);
    return 0;
}

/* words as the error names them: "a, b or c". */
static void list_words(const char *const *words, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; words[i] && n < cap; i++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i == 0 ? "" : words[i + 1] ? ", " : " or ",
                              words[i]);
}

static int parse_choice(const char *name, const char *const *words, const char *text, int *out,
                        hta_error *err)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(words[i], text) == 0) {
            if (word_is_unavailable(name, text, err))
                return -1;
            *out = i;
            return 0;
        }
    char expected[128];
    list_words(words, expected, sizeof expected);
    return hta_fail(err, "--%s: expected %s, got '%s'", name, expected, text);
}

static int add_range(hta_rank_list *list, int64_t first, int64_t last)
{
    hta_rank_range *r = realloc(list->ranges, (list->n + 1) * sizeof *r);
    if (!r)
        return -1;
    list->ranges = r;
    list->ranges[list->n++] = (hta_rank_range){first, last};
    return 0;
}

static int parse_ranks(const char *text, hta_rank_list *list, hta_error *err)
{
    free(list->ranges);
    *list = (hta_rank_list){0};
    const char *p = text;
    while (*p) {
        char *end;
        long long first = strtoll(p, &end, 10), last = first;
        if (end == p || first < 0)
            return hta_fail(err, "--ranks: bad list '%s' (expected e.g. 0-7,12)", text);
        p = end;
        if (*p == '-') {
            last = strtoll(p + 1, &end, 10);
            if (end == p + 1 || last < first)
                return hta_fail(err, "--ranks: bad range in '%s'", text);
            p = end;
        }
        if (add_range(list, first, last))
            return hta_fail(err, "out of memory");
        if (*p == ',')
            p++;
        else if (*p)
            return hta_fail(err, "--ranks: bad list '%s' (expected e.g. 0-7,12)", text);
    }
    if (!list->n)
        return hta_fail(err, "--ranks: empty list");
    return 0;
}

int hta_settings_set_at(hta_settings *s, size_t index, const char *value, hta_error *err)
{
    const hta_setting *e = &hta_setting_list[index];
    void *field = (char *)s + e->offset;
    if (e->kind == HTA_SETTING_flag)
        return parse_flag(e->name, value, field, err);
    if (!value)
        return hta_fail(err, "--%s: missing value", e->name);
    switch (e->kind) {
    case HTA_SETTING_int: return parse_int(e->name, value, e->min, field, err);
    case HTA_SETTING_number: return parse_number(e->name, value, e->min, field, err);
    case HTA_SETTING_text: return parse_text(s, value, field, err);
    case HTA_SETTING_texts: return parse_texts(s, value, field, err);
    case HTA_SETTING_regex: return parse_regex(s, e->name, value, field, err);
    case HTA_SETTING_choice: return parse_choice(e->name, e->words, value, field, err);
    case HTA_SETTING_ranks: return parse_ranks(value, field, err);
    default: return hta_fail(err, "--%s: no parser for its kind", e->name);
    }
}

static size_t setting_named(const char *name)
{
    size_t i = 0;
    while (i < hta_n_settings && strcmp(hta_setting_list[i].name, name) != 0)
        i++;
    return i;
}

int hta_settings_set(hta_settings *s, const char *name, const char *value, hta_error *err)
{
    size_t i = setting_named(name);
    return i < hta_n_settings ? hta_settings_set_at(s, i, value, err)
                              : hta_fail(err, "--%s: unknown option", name);
}

int hta_settings_takes_value(const char *name)
{
    size_t i = setting_named(name);
    return i < hta_n_settings ? hta_setting_list[i].kind != HTA_SETTING_flag : -1;
}

int hta_settings_check(const hta_settings *s, hta_error *err)
{
    const hta_crossrank_settings *c = &s->crossrank;
    if (c->z_likely > c->z_outlier)
        return hta_fail(err, "--z-likely (%g) must not exceed --z-outlier (%g)", c->z_likely,
                        c->z_outlier);
    return 0;
}

/* ---- --help ---------------------------------------------------------- */

/* The column where an option's text starts. */
#define HELP_COLUMN 34

void hta_settings_print_help(FILE *out)
{
    for (size_t i = 0; i < hta_n_settings; i++) {
        const hta_setting *e = &hta_setting_list[i];
        char head[64];
        int n = snprintf(head, sizeof head, "  %c%c%c --%s%s%s", e->short_name ? '-' : ' ',
                         e->short_name ? e->short_name : ' ', e->short_name ? ',' : ' ',
                         e->name, e->metavar ? " " : "", e->metavar ? e->metavar : "");
        fprintf(out, "%s%*s", head, n + 2 > HELP_COLUMN ? 2 : HELP_COLUMN - n, "");
        for (const char *line = e->help; *line;) {
            size_t len = strcspn(line, "\n");
            fprintf(out, "%.*s\n", (int)len, line);
            line += len;
            if (*line == '\n') {
                line++;
                fprintf(out, "%*s", HELP_COLUMN, "");
            }
        }
    }
}

/* ---- the values the results file records ------------------------------ */

int hta_setting_records_text(const hta_setting *e)
{
    return e->kind == HTA_SETTING_text || e->kind == HTA_SETTING_texts ||
           e->kind == HTA_SETTING_regex || e->kind == HTA_SETTING_choice;
}

hta_setting_value hta_settings_value(const hta_settings *s, size_t index)
{
    const hta_setting *e = &hta_setting_list[index];
    const void *field = (const char *)s + e->offset;
    hta_setting_value v = {.type = HTA_VALUE_TEXT, .text = ""};
    switch (e->kind) {
    case HTA_SETTING_flag:
    case HTA_SETTING_int:
        v = (hta_setting_value){.type = HTA_VALUE_INT, .i = *(const int *)field};
        break;
    case HTA_SETTING_number:
        v = (hta_setting_value){.type = HTA_VALUE_NUMBER, .number = *(const double *)field};
        break;
    case HTA_SETTING_text:
    case HTA_SETTING_texts:
    case HTA_SETTING_regex:
        if (*(const char *const *)field)
            v.text = *(const char *const *)field;
        break;
    case HTA_SETTING_choice:
        v.text = e->words[*(const int *)field];
        break;
    case HTA_SETTING_ranks:
        break;
    }
    return v;
}
