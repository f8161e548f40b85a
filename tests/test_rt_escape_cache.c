/* The escaped form of a growing text: grown by random pieces (cut inside
 * characters, with bytes that are not UTF-8, surrogate forms, controls and
 * quotes), the cached escape plus the escape of the rest always equals
 * escaping the whole at once; a text that is not the old one grown is
 * escaped afresh; allocation failures leave it usable. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/json.h"
#include "failalloc.h"
#include "internal/escape_cache.h"
#include "testutil.h"

/* Pieces the text is made of: whole characters of every length, their
 * first bytes alone, stray continuation bytes, escapes. */
static const char *const pieces[] = {
    "a", "<tag attr=\"v\">", "\\", "\"", "\n", "\t", "\x01", "\x7f", "\xC3\xA9", "\xE2\x98\x83", "\xF0\x9F\x98\x80",
    "\xC3", "\xE2\x98", "\xF0\x9F", "\xF0\x9F\x98", "\x80", "\xBF\xBF", "\xED\xA0\x80", "\xED\xB0\x80", "\xFF", "\xC0\xAF",
    "\xE0\x80", "\xF4\x90\x80\x80", "\xE2\x80\xA8", "&amp;", " ",
};

static void escape_whole(const char *p, size_t n, aw_buf *out)
{
    aw_buf_clear(out);
    assert_int_equal(aw_json_escape_append(out, p, n), 0);
}

static void test_growing_equals_whole(void **state)
{
    (void)state;
    aw_test_rng rng = {2024};
    aw_buf text, got, want;
    aw_buf_init(&text, NULL);
    aw_buf_init(&got, NULL);
    aw_buf_init(&want, NULL);
    for (int run = 0; run < 300; run++) {
        aw_escape_cache c;
        aw_escape_cache_init(&c, NULL);
        aw_buf_clear(&text);
        for (int step = 0; step < 40; step++) {
            int k = 1 + (int)aw_test_below(&rng, 4);
            for (int i = 0; i < k; i++)
                aw_buf_append_str(&text, pieces[aw_test_below(&rng, sizeof pieces / sizeof *pieces)]);
            assert_int_equal(aw_escape_cache_update(&c, text.data, text.len), 0);
            assert_true(c.done <= text.len && text.len - c.done <= 3);
            /* cached + the escape of the rest with a tail after it */
            const char *tail = aw_test_below(&rng, 2) ? "\x98\x83</thread>" : "</thread>";
            aw_buf rest;
            aw_buf_init(&rest, NULL);
            aw_buf_append(&rest, text.data + c.done, text.len - c.done);
            aw_buf_append_str(&rest, tail);
            aw_buf_clear(&got);
            aw_buf_append(&got, c.escaped.data, c.escaped.len);
            assert_int_equal(aw_json_escape_append(&got, rest.data, rest.len), 0);
            aw_buf whole;
            aw_buf_init(&whole, NULL);
            aw_buf_append(&whole, text.data, text.len);
            aw_buf_append_str(&whole, tail);
            escape_whole(whole.data, whole.len, &want);
            if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
                size_t d = 0;
                while (d < got.len && d < want.len && got.data[d] == want.data[d])
                    d++;
                fail_msg("run %d step %d: the grown escape differs from the whole at byte %zu (%zu of %zu cached)",
                         run, step, d, c.done, text.len);
            }
            aw_buf_free(&whole);
            aw_buf_free(&rest);
        }
        aw_escape_cache_release(&c);
    }
    aw_buf_free(&text);
    aw_buf_free(&got);
    aw_buf_free(&want);
}

static void test_other_text_starts_over(void **state)
{
    (void)state;
    aw_escape_cache c;
    aw_escape_cache_init(&c, NULL);
    assert_int_equal(aw_escape_cache_update(&c, "<thread>one \"two\"", 17), 0);
    assert_string_equal(c.escaped.data, "<thread>one \\\"two\\\"");
    /* the same length, other bytes at the end: not the old text grown */
    assert_int_equal(aw_escape_cache_update(&c, "<thread>one \"TWO\" three", 23), 0);
    assert_string_equal(c.escaped.data, "<thread>one \\\"TWO\\\" three");
    /* shorter */
    assert_int_equal(aw_escape_cache_update(&c, "<thread>", 8), 0);
    assert_string_equal(c.escaped.data, "<thread>");
    /* other first bytes */
    assert_int_equal(aw_escape_cache_update(&c, "<THREAD>x", 9), 0);
    assert_string_equal(c.escaped.data, "<THREAD>x");
    aw_escape_cache_release(&c);
}

static int alloc_run(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_escape_cache c;
    aw_escape_cache_init(&c, a);
    const char text[] = "<thread>\n\"quoted\" \xE2\x98\x83 and more text to grow the buffer past its first size....";
    int rc = 0;
    for (size_t n = 10; n <= sizeof text - 1 && rc == 0; n += 13)
        rc = aw_escape_cache_update(&c, text, n);
    if (rc == 0)
        rc = aw_escape_cache_update(&c, text, sizeof text - 1);
    if (rc == 0 && (c.done != sizeof text - 1 || !strstr(c.escaped.data, "\\\"quoted\\\"")))
        rc = AW_EINVAL;
    aw_escape_cache_release(&c);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(alloc_run, NULL, 0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_growing_equals_whole),
        cmocka_unit_test(test_other_text_starts_over),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
