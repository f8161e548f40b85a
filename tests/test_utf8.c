/* Bytes made valid UTF-8: aw_utf8_scrub, the maximal subparts it replaces
 * (held to a reference written from the Unicode Standard's definition, over
 * every sequence of up to three bytes of the interesting values), the
 * policy for strings out of the JSON reader, and allocation failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agentwire/utf8.h"
#include "failalloc.h"
#include "internal/utf8.h"
#include "testutil.h"

#define FFFD "\xEF\xBF\xBD"

static void expect_scrub(const char *in, size_t n, const char *want, size_t want_len) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_utf8_scrub(&b, in, n), 0);
    if (b.len != want_len || memcmp(b.data ? b.data : "", want, b.len) != 0)
        fail_msg("scrub of %zu bytes: got '%.*s', want '%s'", n, (int)b.len, b.data ? b.data : "", want);
    assert_int_equal(aw_utf8_is_valid(b.data ? b.data : "", b.len), 1);
    aw_buf_free(&b);
}

#define SCRUB(lit, want) expect_scrub(lit, sizeof(lit) - 1, want, sizeof(want) - 1)

/* The examples of the Unicode Standard (chapter 3, table 3-8 and the text
 * around it) and the cases issue 17 names. */
static void test_scrub_cases(void **state) {
    (void)state;
    SCRUB("", "");
    SCRUB("plain caf\xC3\xA9 \xF0\x9F\x98\x80", "plain caf\xC3\xA9 \xF0\x9F\x98\x80");
    /* table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 */
    SCRUB("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", "a" FFFD FFFD FFFD "b" FFFD "c" FFFD FFFD "d");
    SCRUB("hi \xED\xA7\xB7 there", "hi " FFFD FFFD FFFD " there"); /* a lone surrogate's bytes */
    SCRUB("\xED\xA0\xBD\xED\xB8\x80", FFFD FFFD FFFD FFFD FFFD FFFD);  /* CESU-8: never the astral character */
    SCRUB("\xE2\x82", FFFD);                                          /* cut short at the end */
    SCRUB("\xE2\x82z", FFFD "z");
    SCRUB("\xF0\x9F\x98", FFFD);
    SCRUB("\xF0\x9F\x98\xF0\x9F\x98\x80", FFFD "\xF0\x9F\x98\x80");
    SCRUB("\xC0\xAF", FFFD FFFD);                /* overlong: C0 starts nothing */
    SCRUB("\xE0\x80\xAF", FFFD FFFD FFFD);       /* E0 cannot go on with 80 */
    SCRUB("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* above U+10FFFF */
    SCRUB("\xF5\xFF\xFE", FFFD FFFD FFFD);
    SCRUB("a\0b", "a\0b");
    assert_int_equal(aw_utf8_is_valid("\xED\x9F\xBF", 3), 1); /* U+D7FF */
    assert_int_equal(aw_utf8_is_valid("\xED\xA0\x80", 3), 0);
    assert_int_equal(aw_utf8_is_valid(NULL, 0), 1);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_utf8_scrub(NULL, "a", 1), AW_EINVAL);
    assert_int_equal(aw_utf8_scrub(&b, NULL, 1), AW_EINVAL);
    aw_buf_free(&b);
}

/* Every sequence of one to three bytes drawn from values around every
 * boundary of the well-formed ranges, followed by 'z', against the
 * reference: the scrubbed text has one U+FFFD per reference subpart. */
static void test_subparts_exhaustive(void **state) {
    (void)state;
    static const unsigned char v[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                                      0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    size_t nv = sizeof v;
    size_t cases = 0;
    for (size_t len = 1; len <= 4; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++) total *= nv;
        for (size_t idx = 0; idx < total; idx++) {
            unsigned char s[5];
            size_t x = idx;
            for (size_t k = 0; k < len; k++) {
                s[k] = v[x % nv];
                x /= nv;
            }
            s[len] = 'z';
            size_t n = len + 1;
            /* the want, from the reference */
            aw_buf want, got;
            aw_buf_init(&want, NULL);
            aw_buf_init(&got, NULL);
            for (size_t i = 0; i < n;) {
                size_t ok = aw__utf8_seq_len(s + i, n - i);
                if (ok) {
                    aw_buf_append(&want, s + i, ok);
                    i += ok;
                } else {
                    aw_buf_append(&want, FFFD, 3);
                    i += aw_test_utf8_subpart(s + i, n - i);
                }
            }
            assert_int_equal(aw_utf8_scrub(&got, (const char *)s, n), 0);
            if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0)
                fail_msg("bytes %02X %02X %02X %02X (%zu): scrub differs from the reference", s[0], s[1], s[2], s[3],
                         len);
            aw_buf_free(&want);
            aw_buf_free(&got);
            cases++;
        }
    }
    assert_true(cases > 390000);
}

/* Strings from the JSON reader: a surrogate's 3-byte form is one lone
 * "\udxxx" escape, so one U+FFFD; raw bytes count it three. */
static void test_decoded_policy(void **state) {
    (void)state;
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw__utf8_scrub(&b, "a\xED\xA0\x80" "b\xED\xA0\xBD\xED\xB8\x80\xE2\x82", 13, 1), 0);
    assert_string_equal(b.data, "a" FFFD "b" FFFD FFFD FFFD);
    aw_buf_clear(&b);
    assert_int_equal(aw__utf8_scrub(&b, "a\xED\xA0\x80" "b", 5, 0), 0);
    assert_string_equal(b.data, "a" FFFD FFFD FFFD "b");
    aw_buf_free(&b);
    assert_int_equal(aw__utf8_invalid_len((const unsigned char *)"\xED\xA0\x80", 3), 3);
    assert_int_equal(aw__utf8_invalid_len((const unsigned char *)"\xED\xA0", 2), 1);
    assert_int_equal(aw__utf8_subpart_len((const unsigned char *)"\xED\xA0\x80", 3), 1);
    assert_int_equal(aw_test_utf8_subpart((const unsigned char *)"\xED\xA0\x80", 3), 1);
    assert_int_equal(aw_test_utf8_subpart((const unsigned char *)"\xF0\x9F\x98", 3), 3);
}

static int scrub_with(const aw_allocator *a, void *ctx) {
    (void)ctx;
    aw_buf b;
    aw_buf_init(&b, a);
    static const char in[] = "ok \xE2\x82 then a long tail of text to grow the buffer more than once "
                             "\xF0\x9F\x98\x80\xED\xA0\x80 and more text after it, more than before";
    int rc = aw_utf8_scrub(&b, "", 0);
    for (int i = 0; i < 8 && !rc; i++) rc = aw_utf8_scrub(&b, in, sizeof in - 1);
    if (!rc && !aw_utf8_is_valid(b.data, b.len)) rc = AW_EUTF8;
    aw_buf_free(&b);
    return rc;
}

static void test_alloc_failures(void **state) {
    (void)state;
    assert_true(aw_failalloc_run(scrub_with, NULL, 0) > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrub_cases),
        cmocka_unit_test(test_subparts_exhaustive),
        cmocka_unit_test(test_decoded_policy),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
