/* value_counts.c: integer value counts and their summary (see
 * numerics/value_counts.h). */
#include "numerics/value_counts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Makes counts[index] exist, doubling the array; -1 when out of memory. */
static int reach(size_t **counts, size_t *len, size_t index)
{
    if (index < *len)
        return 0;
    size_t grown = *len ? *len : 16;
    while (grown <= index)
        grown *= 2;
    size_t *p = realloc(*counts, grown * sizeof *p);
    if (!p)
        return -1;
    memset(p + *len, 0, (grown - *len) * sizeof *p);
    *counts = p;
    *len = grown;
    return 0;
}

int hta_value_counts_add(hta_value_counts *c, int64_t v)
{
    size_t **counts = v >= 0 ? &c->at_least_zero : &c->below_zero;
    size_t *len = v >= 0 ? &c->n_at_least_zero : &c->n_below_zero;
    size_t index = v >= 0 ? (size_t)v : (size_t)(-(v + 1));
    if (reach(counts, len, index))
        return -1;
    (*counts)[index]++;
    c->total++;
    return 0;
}

void hta_value_counts_free(hta_value_counts *c)
{
    free(c->at_least_zero);
    free(c->below_zero);
    memset(c, 0, sizeof *c);
}

/* The distinct values in ascending order: from the most negative. */
typedef struct ascending {
    const hta_value_counts *c;
    size_t below, at_least;    /* next positions in each array */
} ascending;

/* The next value that occurs and how often; 0 when none is left. */
static size_t next_value(ascending *a, int64_t *v)
{
    while (a->below > 0) {
        size_t i = --a->below;
        if (a->c->below_zero[i]) {
            *v = -(int64_t)i - 1;
            return a->c->below_zero[i];
        }
    }
    for (; a->at_least < a->c->n_at_least_zero; a->at_least++) {
        if (a->c->at_least_zero[a->at_least]) {
            *v = (int64_t)a->at_least;
            return a->c->at_least_zero[a->at_least++];
        }
    }
    return 0;
}

static ascending first_value(const hta_value_counts *c)
{
    return (ascending){c, c->n_below_zero, 0};
}

/* The value at position k of the sorted values (k < total). */
static double value_at(const hta_value_counts *c, size_t k)
{
    ascending a = first_value(c);
    int64_t v = 0;
    for (size_t seen = 0, n; (n = next_value(&a, &v)) > 0 && seen + n <= k;)
        seen += n;
    return (double)v;
}

static double quantile(const hta_value_counts *c, double q)
{
    size_t lo;
    double frac;
    hta_quantile_position(c->total, q, &lo, &frac);
    if (lo + 1 >= c->total)
        return value_at(c, c->total - 1);
    return hta_quantile_between(value_at(c, lo), value_at(c, lo + 1), frac);
}

void hta_value_counts_summarize(const hta_value_counts *c, hta_summary *out)
{
    size_t n = c->total;
    double sum = 0, squares = 0;
    int64_t v;
    ascending a = first_value(c);
    for (size_t k; (k = next_value(&a, &v)) > 0;)
        for (size_t i = 0; i < k; i++)
            sum += (double)v;
    out->count = n;
    out->mean = n ? sum / (double)n : NAN;
    a = first_value(c);
    for (size_t k; (k = next_value(&a, &v)) > 0;)
        for (size_t i = 0; i < k; i++)
            squares += ((double)v - out->mean) * ((double)v - out->mean);
    out->std = n == 1 ? NAN : hta_std_from_squares(squares, n);
    out->min = n ? value_at(c, 0) : NAN;
    out->max = n ? value_at(c, n - 1) : NAN;
    out->p25 = n ? quantile(c, 0.25) : NAN;
    out->p50 = n ? quantile(c, 0.50) : NAN;
    out->p75 = n ? quantile(c, 0.75) : NAN;
}
