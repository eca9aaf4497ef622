/* kernels.c: libhta's example.  Reads one trace, analyses it in this
 * process and prints its kernels with the most GPU time, one per line:
 *
 *   kernels TRACE [N] [--option[=value]...]
 *   name <TAB> kernel type <TAB> count <TAB> total us
 *
 * Options are hta-mpi's long options (man hta-mpi).  Build it against an
 * installed libhta:
 *   cc kernels.c $(pkg-config --cflags --libs hta) -o kernels
 * or with CMake (CMakeLists.txt here): find_package(hta), hta::hta. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hta/hta.h>

/* "--name=value" or "--name" into the settings. */
static int apply_option(hta_settings *s, const char *arg, hta_error *err)
{
    char name[128];
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    if (strncmp(arg, "--", 2) != 0 || len - 2 >= sizeof name) {
        snprintf(err->text, sizeof err->text, "%s: expected --name or --name=value", arg);
        return -1;
    }
    memcpy(name, arg + 2, len - 2);
    name[len - 2] = '\0';
    return hta_settings_set(s, name, eq ? eq + 1 : NULL, err);
}

/* Row indices of the table ordered by the double column col, largest
 * first (ties: the table's order). */
static size_t *largest_first(const hta_table *t, size_t col)
{
    size_t n = hta_table_row_count(t);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    for (size_t i = 0; order && i < n; i++) {
        size_t j = i;
        double v = hta_table_f64(t, i, col);
        for (; j > 0 && hta_table_f64(t, order[j - 1], col) < v; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    return order;
}

static int print_top_kernels(const hta_table *kernels, size_t top)
{
    long name = hta_table_column_index(kernels, "name");
    long type = hta_table_column_index(kernels, "kernel_type");
    long count = hta_table_column_index(kernels, "count");
    long sum = hta_table_column_index(kernels, "sum_us");
    if (name < 0 || type < 0 || count < 0 || sum < 0) {
        fprintf(stderr, "kernels: the kernels table lacks a column this example reads\n");
        return 1;
    }
    size_t *order = largest_first(kernels, (size_t)sum);
    if (!order)
        return 1;
    for (size_t i = 0; i < top && i < hta_table_row_count(kernels); i++) {
        size_t r = order[i];
        printf("%s\t%s\t%lld\t%.17g\n", hta_table_str(kernels, r, (size_t)name),
               hta_table_str(kernels, r, (size_t)type),
               (long long)hta_table_i64(kernels, r, (size_t)count),
               hta_table_f64(kernels, r, (size_t)sum));
    }
    free(order);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: kernels TRACE [N] [--option[=value]...]  (libhta %s)\n",
                hta_version());
        return 2;
    }
    size_t top = 10;
    int first_option = 2;
    if (argc > 2 && strncmp(argv[2], "--", 2) != 0) {
        top = strtoul(argv[2], NULL, 10);
        first_option = 3;
    }
    hta_error err = {{0}};
    hta_settings *settings = hta_settings_new();
    if (!settings)
        return 1;
    for (int i = first_option; i < argc; i++)
        if (apply_option(settings, argv[i], &err)) {
            fprintf(stderr, "kernels: %s\n", err.text);
            hta_settings_destroy(settings);
            return 2;
        }
    hta_tableset *tables = hta_analyse_trace(argv[1], settings, &err);
    hta_settings_destroy(settings);
    if (!tables) {
        fprintf(stderr, "kernels: %s\n", err.text);
        return 1;
    }
    const hta_table *kernels = hta_tableset_get(tables, "kernels");
    int rc = kernels ? print_top_kernels(kernels, top) : 1;
    hta_tableset_destroy(tables);
    return rc;
}
