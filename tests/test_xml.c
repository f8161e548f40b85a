/* XML escaping: every version of the escaper (byte at a time, SSE2, AVX2:
 * those this CPU has) against a plain reference written from the rules,
 * over random strings mixing what takes each path: plain runs long and
 * short, markup, controls, ANSI sequences, valid and invalid UTF-8,
 * surrogates, U+FFFE/U+FFFF, NUL, at every start offset and block end a
 * caller may give. Also checks that a span never writes past the room its
 * contract asks for, and never reads past the string (ASan: the strings
 * are exact-size heap blocks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "testutil.h"
#include "internal/xml.h"

#define FFFD "\xEF\xBF\xBD"

/* ---- the reference ---------------------------------------------------------------- */

static size_t ref_ansi_len(const unsigned char *s, size_t i, size_t n) {
    size_t j = i + 1;
    if (j >= n) return 1;
    if (s[j] == '[') {
        j++;
        while (j < n && s[j] >= 0x20 && s[j] <= 0x3F) j++;
        if (j < n && s[j] >= 0x40 && s[j] <= 0x7E) j++;
        return j - i;
    }
    if (s[j] == ']') {
        for (j++; j < n; j++) {
            if (s[j] == 0x07) return j + 1 - i;
            if (s[j] == 0x1B && j + 1 < n && s[j + 1] == '\\') return j + 2 - i;
        }
        return j - i;
    }
    return (s[j] >= 0x40 && s[j] <= 0x5F) ? 2 : 1;
}

static int is_cont(const unsigned char *s, size_t i, size_t n) { return i < n && (s[i] & 0xC0) == 0x80; }

/* Bytes of the valid UTF-8 sequence at s[i] (surrogate forms included,
 * as the JSON reader stores lone surrogates), or 0. */
static size_t ref_seq_len(const unsigned char *s, size_t i, size_t n) {
    unsigned c = s[i];
    if (c >= 0xC2 && c <= 0xDF) return is_cont(s, i + 1, n) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!is_cont(s, i + 1, n) || !is_cont(s, i + 2, n)) return 0;
        return (c == 0xE0 && s[i + 1] < 0xA0) ? 0 : 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!is_cont(s, i + 1, n) || !is_cont(s, i + 2, n) || !is_cont(s, i + 3, n)) return 0;
        if (c == 0xF0 && s[i + 1] < 0x90) return 0;
        if (c == 0xF4 && s[i + 1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

static void ref_escape(aw_buf *out, const unsigned char *s, size_t n, unsigned flags) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        const char *ent = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&quot;"
                        : c == '\'' ? "&apos;" : NULL;
        if (ent) {
            aw_buf_append_str(out, ent);
            i++;
        } else if (c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c < 0x80)) {
            aw_buf_putc(out, (char)c);
            i++;
        } else if (c == 0x1B && (flags & AW_XML_STRIP_ANSI)) {
            i += ref_ansi_len(s, i, n);
        } else if (c < 0x80) {
            aw_buf_append_str(out, FFFD);
            i++;
        } else {
            size_t len = ref_seq_len(s, i, n);
            if (len == 0) { /* one U+FFFD per maximal subpart */
                aw_buf_append_str(out, FFFD);
                i += aw_test_utf8_subpart(s + i, n - i);
                continue;
            }
            int surrogate = c == 0xED && s[i + 1] >= 0xA0;
            int nonchar = c == 0xEF && s[i + 1] == 0xBF && s[i + 2] >= 0xBE;
            if (surrogate || nonchar) aw_buf_append_str(out, FFFD);
            else aw_buf_append(out, s + i, len);
            i += len;
        }
    }
}

/* ---- random strings ------------------------------------------------------------------- */

typedef aw_test_rng rng;


static void piece(rng *r, aw_buf *b, int density) {
    static const char *const pieces[] = {
        "&", "<", ">", "\"", "'", "\t", "\n", "\r\n", "\x01", "\x1F", "\x7F",
        "\x1B[31m", "\x1B[0m", "\x1B[1;2;3", "\x1B]0;title\x07", "\x1B]8;;http://x\x1B\\", "\x1B]unterminated",
        "\x1B", "\x1B" "A", "\x1B" "(", "é", "日本語", "\xF0\x9F\x98\x80", "\xED\xA0\x80", "\xED\xBF\xBF",
        "\xEF\xBF\xBE", "\xEF\xBF\xBF", "\xEF\xBF\xBD", "\xC2\x85", "\x80", "\xC0\xAF", "\xC3", "\xE2\x82",
        "\xF0\x9F\x98", "\xF5\x80\x80\x80", "\xFF", "\xE0\x80\x80", "\xF0\x80\x80\x80", "\xF4\x90\x80\x80",
    };
    /* plain text: short words, or runs past the 128-byte copies and the
     * 1 KB chunks */
    if (aw_test_below(r, 100) >= (uint32_t)density) {
        static const uint32_t runs[] = {1, 5, 20, 63, 64, 65, 127, 128, 129, 300, 1100};
        uint32_t len = aw_test_below(r, 4) ? 1 + aw_test_below(r, 12) : runs[aw_test_below(r, 11)];
        for (uint32_t k = 0; k < len; k++) aw_buf_putc(b, (char)("abcdefgh ,.;:(){}[]/=+-*"[aw_test_below(r, 24)]));
        return;
    }
    if (aw_test_below(r, 16) == 0) { /* a run of non-ASCII longer than 32 bytes */
        for (int k = 0; k < 15; k++) aw_buf_append_str(b, "中");
        return;
    }
    if (aw_test_below(r, 40) == 0) {
        aw_buf_putc(b, '\0');
        return;
    }
    aw_buf_append_str(b, pieces[aw_test_below(r, sizeof pieces / sizeof pieces[0])]);
}

static void gen_string(rng *r, aw_buf *b) {
    static const uint32_t sizes[] = {0, 1, 15, 16, 17, 63, 64, 127, 128, 129, 191, 192, 300, 1100, 2200, 5000};
    aw_buf_clear(b);
    uint32_t target = aw_test_below(r, 3) ? sizes[aw_test_below(r, 16)] : aw_test_below(r, 6000);
    int density = (int)aw_test_below(r, 101);
    while (b->len < target) piece(r, b, density);
}

/* ---- the spans, as aw_xml_escape drives them ------------------------------------------- */

#define GUARD 64

/* Escape s with isa, one span per block of `block` bytes, each written
 * into memory of exactly the room its contract asks for (plus guards). */
static void escape_in_blocks(aw__xml_isa isa, const char *s, size_t n, size_t start, size_t block,
                             unsigned flags, aw_buf *out) {
    size_t i = start;
    while (i < n) {
        size_t end = n - i > block ? i + block : n;
        size_t room = AW__XML_ESCAPE_ROOM(end - i);
        unsigned char *mem = malloc(room + 2 * GUARD);
        assert_non_null(mem);
        memset(mem, 0xA5, room + 2 * GUARD);
        char *o = (char *)mem + GUARD;
        size_t before = i;
        char *stop = aw__xml_escape_span_isa(isa, o, s, &i, end, n, flags);
        assert_true(i >= end && i <= n && i > before);
        assert_true(stop >= o && (size_t)(stop - o) <= room);
        for (size_t g = 0; g < GUARD; g++) {
            assert_int_equal(mem[g], 0xA5);
            assert_int_equal(mem[GUARD + room + g], 0xA5);
        }
        aw_buf_append(out, o, (size_t)(stop - o));
        free(mem);
    }
}

static const char *const isa_names[] = {"scalar", "SSE2", "AVX2"};

static void test_every_version_matches_reference(void **state) {
    (void)state;
    rng r = {0xE5CA9E5ULL};
    aw_buf text, want, got;
    aw_buf_init(&text, NULL);
    aw_buf_init(&want, NULL);
    aw_buf_init(&got, NULL);
    aw__xml_isa best = aw__xml_isa_best();
    static const size_t blocks[] = {1, 7, 64, 100, 1000, 4096, (size_t)-1 / 2};
    for (int t = 0; t < 3000; t++) {
        gen_string(&r, &text);
        /* an exact-size copy, so that reading past it is caught */
        size_t n = text.len;
        char *s = malloc(n ? n : 1);
        assert_non_null(s);
        if (n) memcpy(s, text.data, n);
        unsigned flags = aw_test_below(&r, 2) ? AW_XML_STRIP_ANSI : 0;
        size_t start = aw_test_below(&r, 4) ? 0 : aw_test_below(&r, (uint32_t)n + 1);
        size_t block = blocks[aw_test_below(&r, 7)];
        aw_buf_clear(&want);
        ref_escape(&want, (const unsigned char *)s + start, n - start, flags);
        for (int isa = AW__XML_SCALAR; isa <= (int)best; isa++) {
            aw_buf_clear(&got);
            escape_in_blocks((aw__xml_isa)isa, s, n, start, block, flags, &got);
            if (got.len != want.len || memcmp(got.data, want.data, want.len) != 0)
                fail_msg("case %d (%s, %zu bytes from %zu, blocks of %zu, flags %u): %zu bytes out, want %zu", t,
                         isa_names[isa], n, start, block, flags, got.len, want.len);
        }
        /* and the public function, from the start */
        aw_buf_clear(&want);
        ref_escape(&want, (const unsigned char *)s, n, flags);
        aw_buf_clear(&got);
        assert_int_equal(aw_xml_escape(&got, s, n, flags), 0);
        assert_int_equal(got.len, want.len);
        assert_memory_equal(got.data, want.data, want.len);
        free(s);
    }
    aw_buf_free(&text);
    aw_buf_free(&want);
    aw_buf_free(&got);
}

/* A few exact cases, so that the reference itself is checked. */
static void test_reference_cases(void **state) {
    (void)state;
    static const struct {
        const char *in;
        size_t n;
        unsigned flags;
        const char *want;
    } cases[] = {
#define CASE(in, flags, want) {in, sizeof(in) - 1, flags, want}
        CASE("a&b<c>d\"e'f", 0, "a&amp;b&lt;c&gt;d&quot;e&apos;f"),
        CASE("\t\n\r\x01\x7F", 0, "\t\n\r" FFFD "\x7F"),
        CASE("x\0y", 0, "x" FFFD "y"),
        CASE("\xED\xA0\x80|\xEF\xBF\xBE|\xEF\xBF\xBF|\xEF\xBF\xBD", 0, FFFD "|" FFFD "|" FFFD "|" FFFD),
        CASE("\xC3|\xE2\x82|\xF0\x9F\x98|\xC0\xAF", 0, FFFD "|" FFFD "|" FFFD "|" FFFD FFFD),
        /* a lone surrogate's form is one; CESU-8 two forms, two; a form cut
         * short is its maximal subparts (ED cannot go on with A0) */
        CASE("\xED\xA0\xBD\xED\xB8\x80|\xED\xA0|\xF4\x90\x80", 0, FFFD FFFD "|" FFFD FFFD "|" FFFD FFFD FFFD),
        CASE("\x1B[1;31mred\x1B[0m", AW_XML_STRIP_ANSI, "red"),
        CASE("\x1B[1;31mred", 0, FFFD "[1;31mred"),
        CASE("a\x1B]0;t\x07" "b\x1B]8;;u\x1B\\c", AW_XML_STRIP_ANSI, "abc"),
#undef CASE
    };
    aw__xml_isa best = aw__xml_isa_best();
    aw_buf out;
    aw_buf_init(&out, NULL);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        aw_buf_clear(&out);
        ref_escape(&out, (const unsigned char *)cases[k].in, cases[k].n, cases[k].flags);
        assert_string_equal(out.data, cases[k].want);
        for (int isa = AW__XML_SCALAR; isa <= (int)best; isa++) {
            aw_buf_clear(&out);
            escape_in_blocks((aw__xml_isa)isa, cases[k].in, cases[k].n, 0, 4096, cases[k].flags, &out);
            assert_string_equal(out.data, cases[k].want);
        }
    }
    aw_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_cases),
        cmocka_unit_test(test_every_version_matches_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
