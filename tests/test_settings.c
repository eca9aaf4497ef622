/* test_settings.c: the settings list (settings/settings.h) and what is
 * derived from it: the defaults a run uses, each kind of value parsed
 * from text by its option's name, the errors a user sees, the attributes
 * and the diff's comparisons, and the choice words the readers agree
 * with. */
#include <stdlib.h>
#include <string.h>

#include "parse/input_reader.h"
#include "parse/source.h"
#include "settings/settings.h"
#include "unit.h"

static void test_defaults_are_htas(void)
{
    hta_settings s;
    hta_settings_defaults(&s);
    CHECK(strcmp(s.output.path, "hta-results.h5") == 0, "output %s", s.output.path);
    CHECK(s.analysis.bins == 30 && s.analysis.num_kernels == 10, "bins %d, num-kernels %d",
          s.analysis.bins, s.analysis.num_kernels);
    CHECK(s.analysis.consecutive_kernel_delay_us == 30 && s.analysis.runtime_cutoff_us == 50 &&
              s.analysis.launch_delay_cutoff_us == 100 && s.analysis.duration_ratio == 0.8,
          "cutoffs");
    CHECK(s.analysis.gap_threshold_us == 1000 && s.analysis.min_pattern_len == 3 &&
              s.analysis.sequence_top == 10 && !s.analysis.sequence_op,
          "gaps and sequences");
    CHECK(s.crossrank.z_outlier == 3 && s.crossrank.z_likely == 2 &&
              s.crossrank.robust_z == 3.5 && s.crossrank.min_effect == 0.01,
          "thresholds");
    CHECK(!s.run.ranks.ranges && hta_rank_list_has(&s.run.ranks, 12345), "every rank kept");
    CHECK(s.read.input_format == HTA_INPUT_AUTO && s.read.inflater == HTA_INFLATER_AUTO &&
              !s.read.step_regex && !s.analysis.include_last_step && !s.output.force,
          "off unless given");
    CHECK(hta_settings_check(&s, NULL) == 0, "defaults pass the cross-option check");
}

static void set_ok(hta_settings *s, const char *name, const char *value)
{
    hta_error err = {{0}};
    CHECK(hta_settings_set(s, name, value, &err) == 0, "--%s %s: %s", name,
          value ? value : "(none)", err.text);
}

static void set_fails(const char *name, const char *value, const char *message)
{
    hta_settings s;
    hta_settings_defaults(&s);
    hta_error err = {{0}};
    CHECK(hta_settings_set(&s, name, value, &err) != 0, "--%s %s accepted", name, value);
    CHECK(strcmp(err.text, message) == 0, "--%s %s: '%s'", name, value, err.text);
    hta_settings_free(&s);
}

static void test_values_by_name(void)
{
    hta_settings s;
    hta_settings_defaults(&s);
    set_ok(&s, "bins", "60");
    set_ok(&s, "gap-threshold", "2.5");
    set_ok(&s, "input-format", "cupti-csv");
    set_ok(&s, "force", NULL);
    set_ok(&s, "detail", "1");
    set_ok(&s, "detail", "0");
    set_ok(&s, "sequence-op", "^aten::(mm|addmm)$");
    set_ok(&s, "ranks", "0-7,12");
    set_ok(&s, "output", "x.h5");
    CHECK(s.analysis.bins == 60 && s.analysis.gap_threshold_us == 2.5, "numbers");
    CHECK(s.read.input_format == HTA_INPUT_CUPTI_CSV, "input format %d", s.read.input_format);
    CHECK(s.output.force == 1 && s.analysis.detail == 0, "flags");
    CHECK(strcmp(s.analysis.sequence_op, "^aten::(mm|addmm)$") == 0, "regex kept");
    CHECK(strcmp(s.output.path, "x.h5") == 0, "text kept");
    CHECK(s.run.ranks.n == 2 && hta_rank_list_has(&s.run.ranks, 7) &&
              hta_rank_list_has(&s.run.ranks, 12) && !hta_rank_list_has(&s.run.ranks, 8),
          "ranks 0-7,12");
    set_ok(&s, "z-likely", "4");
    CHECK(hta_settings_check(&s, NULL) != 0, "--z-likely 4 above --z-outlier 3 refused");
    hta_settings_free(&s);
}

static void test_errors_name_the_option(void)
{
    set_fails("bins", "0", "--bins: expected an integer >= 1, got '0'");
    set_fails("min-effect", "-1", "--min-effect: expected a number >= 0, got '-1'");
    set_fails("input-format", "json",
              "--input-format: expected auto, kineto, nsys-sqlite, cupti-csv, rocprof-json, rocpd "
              "or rocprof-csv, got 'json'");
    set_fails("inflater", "gzip", "--inflater: expected auto, zlib or isal, got 'gzip'");
    set_fails("ranks", "3-1", "--ranks: bad range in '3-1'");
    set_fails("force", "yes", "--force takes no value, got 'yes'");
    set_fails("bins", NULL, "--bins: missing value");
    set_fails("no-such-option", "1", "--no-such-option: unknown option");
    hta_settings s;
    hta_settings_defaults(&s);
    hta_error err = {{0}};
    CHECK(hta_settings_set(&s, "step-regex", "(unclosed", &err) != 0 &&
              strncmp(err.text, "--step-regex: '(unclosed': ", 27) == 0,
          "bad regex: %s", err.text);
}

/* The choice words are the readers' names, index for index. */
static void test_choices_match_the_readers(void)
{
    hta_settings s;
    hta_settings_defaults(&s);
    for (int f = HTA_INPUT_AUTO; f < HTA_INPUT_N_FORMATS; f++) {
        set_ok(&s, "input-format", hta_input_format_name((hta_input_format)f));
        CHECK(s.read.input_format == f, "input format %d", f);
    }
    set_ok(&s, "inflater", "zlib");
    CHECK(s.read.inflater == HTA_INFLATER_ZLIB, "zlib is %d", s.read.inflater);
    if (hta_inflater_available(HTA_INFLATER_ISAL)) {
        set_ok(&s, "inflater", "isal");
        CHECK(s.read.inflater == HTA_INFLATER_ISAL, "isal is %d", s.read.inflater);
    }
}

/* Names and attributes unique, diff positions 1..n each once and recorded. */
static void test_list_is_consistent(void)
{
    int compared = 0;
    for (size_t i = 0; i < hta_n_settings; i++) {
        const hta_setting *e = &hta_setting_list[i];
        CHECK(e->help && e->help[0], "--%s has help", e->name);
        CHECK((e->kind == HTA_SETTING_flag) == !e->metavar, "--%s: a value iff a metavar",
              e->name);
        CHECK(!e->diff || e->attribute, "--%s compared but not recorded", e->name);
        compared += e->diff != 0;
        for (size_t j = 0; j < i; j++) {
            const hta_setting *o = &hta_setting_list[j];
            CHECK(strcmp(e->name, o->name) != 0, "--%s twice", e->name);
            CHECK(!e->attribute || !o->attribute || strcmp(e->attribute, o->attribute) != 0,
                  "attribute %s twice", e->attribute);
            CHECK(!e->diff || e->diff != o->diff, "diff position %d twice", e->diff);
        }
    }
    for (size_t i = 0; i < hta_n_settings; i++)
        CHECK(hta_setting_list[i].diff <= compared, "--%s: diff position %d of %d",
              hta_setting_list[i].name, hta_setting_list[i].diff, compared);
}

/* The values the results file records, with their types. */
static void test_recorded_values(void)
{
    hta_settings s;
    hta_settings_defaults(&s);
    set_ok(&s, "input-format", "nsys-sqlite");
    set_ok(&s, "round-like-hta", NULL);
    int seen = 0;
    for (size_t i = 0; i < hta_n_settings; i++) {
        const char *name = hta_setting_list[i].attribute;
        if (!name)
            continue;
        hta_setting_value v = hta_settings_value(&s, i);
        CHECK((v.type == HTA_VALUE_TEXT) == hta_setting_records_text(&hta_setting_list[i]),
              "%s: text or number", name);
        if (strcmp(name, "input_format") == 0)
            seen += v.type == HTA_VALUE_TEXT && strcmp(v.text, "nsys-sqlite") == 0;
        if (strcmp(name, "step_regex") == 0)
            seen += v.type == HTA_VALUE_TEXT && strcmp(v.text, "") == 0;
        if (strcmp(name, "round_like_hta") == 0)
            seen += v.type == HTA_VALUE_INT && v.i == 1;
        if (strcmp(name, "duration_ratio") == 0)
            seen += v.type == HTA_VALUE_NUMBER && v.number == 0.8;
        if (strcmp(name, "bins") == 0)
            seen += v.type == HTA_VALUE_INT && v.i == 30;
    }
    CHECK(seen == 5, "%d of 5 attributes as expected", seen);
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    test_defaults_are_htas();
    test_values_by_name();
    test_errors_name_the_option();
    test_choices_match_the_readers();
    test_list_is_consistent();
    test_recorded_values();
    return unit_finish();
}
