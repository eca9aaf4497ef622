/* test_utf8.c: UTF-8 validation and repair (src/util/utf8.c): long ASCII
 * names (checked 8 bytes at a time) with an invalid byte at every
 * position, and the standard's ill-formed sequences. */
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "util/utf8.h"

static void test_invalid_byte_anywhere(void)
{
    char s[40];
    memset(s, 'a', sizeof s - 1);
    s[sizeof s - 1] = '\0';
    CHECK(hta_utf8_valid(s), "ASCII is valid");
    for (size_t i = 0; i + 1 < sizeof s; i++) {
        s[i] = (char)0xFF;
        CHECK(!hta_utf8_valid(s), "0xFF at %zu is invalid", i);
        s[i] = (char)0xC3;     /* a lead byte without its continuation */
        CHECK(!hta_utf8_valid(s), "a cut sequence at %zu is invalid", i);
        char *fixed = hta_utf8_repair(s);
        CHECK(fixed && hta_utf8_valid(fixed), "repaired at %zu", i);
        free(fixed);
        s[i] = 'a';
    }
    strcpy(s + 20, "\xC3\xA9t\xC3\xA9");   /* "été" after 20 ASCII bytes */
    CHECK(hta_utf8_valid(s), "two-byte sequences after an ASCII run");
}

static void test_ill_formed_sequences(void)
{
    static const char *const bad[] = {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80",
                                      "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(!hta_utf8_valid(bad[i]), "sequence %zu is ill-formed", i);
    CHECK(hta_utf8_valid("\xF0\x9F\x98\x80 ok"), "a four-byte sequence");
    CHECK(hta_utf8_valid(""), "the empty string");
}

int main(int argc, char **argv)
{
    test_invalid_byte_anywhere();
    test_ill_formed_sequences();
    (void)argc;
    (void)argv;
    return unit_finish();
}
