/* cpu_context.c: decoding the CPU contexts (see model/cpu_context.h). */
#include "model/cpu_context.h"

#include <stdlib.h>
#include <string.h>

/* pid, tid, Input Dims, Input type, Concrete Inputs */
#define N_FIELDS 5

/* A whole number written as text, or -1. */
static int64_t whole_number(const char *s, size_t len)
{
    if (len == 0 || len > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* Splits a key in place into its fields (a missing one is empty) and
 * returns the length of its pid and tid part. */
static size_t split_key(char *key, size_t len, char *field[N_FIELDS])
{
    size_t f = 0, prefix = len;
    field[0] = key;
    for (size_t i = 0; i < len && f < N_FIELDS - 1; i++)
        if (key[i] == HTA_CONTEXT_SEPARATOR) {
            if (f == 1)
                prefix = i;
            key[i] = '\0';
            field[++f] = key + i + 1;
        }
    for (size_t k = f + 1; k < N_FIELDS; k++)
        field[k] = key + len;  /* the NUL at the end */
    return prefix;
}

/* Drops the whitespace outside strings of a JSON text, in place. */
static void squeeze_json_text(char *text)
{
    size_t n = 0;
    int in_string = 0, escaped = 0;
    for (const char *p = text; *p; p++) {
        char c = *p;
        if (in_string) {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            continue;
        } else {
            in_string = c == '"';
        }
        text[n++] = c;
    }
    text[n] = '\0';
}

int hta_cpu_contexts_build(hta_cpu_contexts *c, const hta_trace *t)
{
    const hta_strtab *keys = &t->cpu_contexts;
    memset(c, 0, sizeof *c);
    size_t total = 1;          /* the unknown context's empty texts */
    for (uint32_t k = 0; k < keys->count; k++)
        total += (size_t)keys->lengths[k] + 1;
    c->of = malloc(((size_t)keys->count + 1) * sizeof *c->of);
    c->text = malloc(total);
    hta_strtab threads;
    hta_strtab_init(&threads);
    int rc = c->of && c->text ? 0 : -1;
    char *at = c->text;        /* ends at the NUL the unknown context's texts share */
    for (uint32_t k = 0; rc == 0 && k < keys->count; k++) {
        size_t len = keys->lengths[k];
        memcpy(at, keys->strings[k], len + 1);
        char *field[N_FIELDS];
        size_t prefix = split_key(at, len, field);
        /* The pid and tid fields, rejoined, name the thread. */
        uint32_t thread = hta_strtab_intern(&threads, keys->strings[k], prefix);
        rc = thread == UINT32_MAX ? -1 : 0;
        squeeze_json_text(field[2]);
        squeeze_json_text(field[3]);
        c->of[k] = (hta_cpu_context){thread, whole_number(field[1], strlen(field[1])),
                                     field[2], field[3], field[4]};
        at += len + 1;
    }
    c->n = keys->count;
    c->n_threads = threads.count + 1;
    if (rc == 0) {
        *at = '\0';
        c->of[c->n] = (hta_cpu_context){threads.count, -1, at, at, at};
    }
    hta_strtab_free(&threads);
    if (rc)
        hta_cpu_contexts_free(c);
    return rc;
}

void hta_cpu_contexts_free(hta_cpu_contexts *c)
{
    free(c->of);
    free(c->text);
    memset(c, 0, sizeof *c);
}
