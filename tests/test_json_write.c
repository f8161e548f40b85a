/* The JSON writer against JavaScript: the vectors of
 * tests/vectors/json/writer.jsonl (made by gen_writer_vectors.js with node:
 * JSON.stringify(JSON.parse(input)) and its indent 2 and 4 forms) byte for
 * byte; the string and number writers against a plain reference; builder
 * values, indentation limits, buffer handling, deep documents; and every
 * allocation failure while writing. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"
#include "testutil.h"

#ifndef AW_SOURCE_DIR
#define AW_SOURCE_DIR "."
#endif

#define VECTORS AW_SOURCE_DIR "/tests/vectors/json/writer.jsonl"

static aw_json_doc *parse(const char *text) {
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err))
        fail_msg("bad fixture at %zu:%zu: %s", err.line, err.column, err.message);
    return d;
}

static void check_text(const char *json, int indent, const char *want) {
    aw_json_doc *d = parse(json);
    size_t n;
    char *got = aw_test_write_json(aw_json_doc_root(d), indent, &n);
    if (n != strlen(want) || memcmp(got, want, n) != 0)
        fail_msg("%s (indent %d)\n  want: %s\n  got:  %s", json, indent, want, got);
    free(got);
    aw_json_doc_free(d);
}

/* ---- the vectors ---------------------------------------------------------------- */

/* Print up to 160 bytes around the first difference. */
static void show_diff(const char *name, const char *form, const char *want, size_t wn, const char *got,
                      size_t gn) {
    size_t i = 0;
    while (i < wn && i < gn && want[i] == got[i]) i++;
    size_t from = i > 60 ? i - 60 : 0;
    print_error("MISMATCH %s (%s): lengths want %zu got %zu, first difference at byte %zu\n", name, form, wn, gn,
                i);
    print_error("  want: ...%.*s...\n", (int)((wn - from) < 160 ? wn - from : 160), want + from);
    print_error("  got:  ...%.*s...\n", (int)((gn - from) < 160 ? gn - from : 160), got + from);
}

static void test_vectors(void **state) {
    (void)state;
    size_t len = 0;
    char *all = aw_test_read_file(VECTORS, &len);
    if (!all) fail_msg("cannot read %s", VECTORS);
    size_t ran = 0, failed = 0, line = 0;
    static const char *forms[3] = {"compact", "indent2", "indent4"};
    static const int indents[3] = {0, 2, 4};
    for (char *p = all, *end = all + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        line++;
        if (n == 0) {
            p += 1;
            continue;
        }
        aw_json_doc *rec = NULL;
        aw_error err;
        if (aw_json_parse(p, n, NULL, &rec, &err)) fail_msg("%s:%zu: %s", VECTORS, line, err.message);
        const aw_json_value *r = aw_json_doc_root(rec);
        const aw_json_value *name = aw_json_get(r, "name"), *input = aw_json_get(r, "input");
        assert_true(aw_json_is_string(name) && aw_json_is_string(input));
        aw_json_doc *doc = NULL;
        if (aw_json_parse(input->u.str.ptr, input->u.str.len, NULL, &doc, &err)) {
            print_error("MISMATCH %s: input refused at %zu:%zu: %s\n", name->u.str.ptr, err.line, err.column,
                        err.message);
            failed++;
        } else {
            for (int k = 0; k < 3; k++) {
                const aw_json_value *want = aw_json_get(r, forms[k]);
                assert_true(aw_json_is_string(want));
                size_t gn;
                char *got = aw_test_write_json(aw_json_doc_root(doc), indents[k], &gn);
                if (gn != want->u.str.len || memcmp(got, want->u.str.ptr, gn) != 0) {
                    show_diff(name->u.str.ptr, forms[k], want->u.str.ptr, want->u.str.len, got, gn);
                    failed++;
                }
                free(got);
            }
        }
        aw_json_doc_free(doc);
        aw_json_doc_free(rec);
        ran++;
        p += n + 1;
    }
    free(all);
    print_message("%zu writer vectors, %zu mismatches\n", ran, failed);
    assert_int_equal(failed, 0);
    assert_true(ran >= 500);
}

/* ---- strings: the SIMD and block paths against a byte-at-a-time reference ---- */

static aw_test_rng rng_state;
static uint64_t rng(void) { return aw_test_next64(&rng_state); }

/* Length of a well-formed UTF-8 sequence at p (not surrogates), else 0. */
static size_t ref_seq(const unsigned char *p, size_t n) {
    if (p[0] < 0x80) return 1;
    size_t k = p[0] >= 0xC2 && p[0] <= 0xDF ? 2 : p[0] >= 0xE0 && p[0] <= 0xEF ? 3 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;
    if (!k || n < k) return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    uint32_t cp = k == 2 ? (p[0] & 0x1Fu) : k == 3 ? (p[0] & 0x0Fu) : (p[0] & 0x07u);
    for (size_t i = 1; i < k; i++) cp = cp << 6 | (p[i] & 0x3Fu);
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    return k;
}

/* Surrogate code point of a 3-byte generalized form at p, else 0. */
static uint32_t ref_surrogate(const unsigned char *p, size_t n) {
    if (n < 3 || p[0] != 0xED || p[1] < 0xA0 || p[1] > 0xBF || (p[2] & 0xC0) != 0x80) return 0;
    return 0xD000u | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3Fu);
}

/* The JSON.stringify policy written the slow, obvious way: a surrogate's
 * 3-byte form is a lone surrogate, escaped (or U+FFFD when replace_lone),
 * two in a row two lone ones (never joined: the reader joins escaped
 * pairs, so a row of forms is CESU-8, which is not UTF-8); other bytes that
 * are not UTF-8 are U+FFFD per maximal subpart. */
static void ref_escape(aw_buf *o, const unsigned char *s, size_t n, int replace_lone) {
    aw_buf_putc(o, '"');
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        size_t k = ref_seq(s + i, n - i);
        uint32_t hi = ref_surrogate(s + i, n - i);
        if (c == '"' || c == '\\') {
            aw_buf_putc(o, '\\');
            aw_buf_putc(o, (char)c);
            i++;
        } else if (c < 0x20) {
            const char *sh = c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
            if (sh) aw_buf_append_str(o, sh);
            else aw_buf_printf(o, "\\u%04x", c);
            i++;
        } else if (k) {
            aw_buf_append(o, s + i, k);
            i += k;
        } else if (hi) {
            if (replace_lone) aw_buf_append_str(o, "\xEF\xBF\xBD");
            else aw_buf_printf(o, "\\u%04x", (unsigned)hi);
            i += 3;
        } else {
            aw_buf_append_str(o, "\xEF\xBF\xBD"); /* each maximal subpart that is not UTF-8 */
            i += aw_test_utf8_subpart(s + i, n - i);
        }
    }
    aw_buf_putc(o, '"');
}

static void check_string(const char *s, size_t n, const char *want) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write_string(&b, s, n), 0);
    if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
        fail_msg("string of %zu bytes\n  want: %s\n  got:  %s", n, want, b.data);
    aw_buf_free(&b);
}

static void test_string_edges(void **state) {
    (void)state;
    check_string("", 0, "\"\"");
    check_string("a\0b", 3, "\"a\\u0000b\"");
    check_string("\x1f\x7f", 2, "\"\\u001f\x7f\"");
    /* bytes that are not UTF-8: one U+FFFD per maximal subpart (the
     * Unicode Standard's practice, ch. 3): a byte that starts nothing is
     * one, a sequence cut short is one */
    check_string("\xff", 1, "\"\xEF\xBF\xBD\"");
    check_string("a\x80z", 3, "\"a\xEF\xBF\xBDz\"");
    check_string("\xC0\x80", 2, "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");               /* overlong NUL */
    check_string("\xE0\x80\xAF", 3, "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""); /* overlong / */
    check_string("\xF4\x90\x80\x80", 4,
                  "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\""); /* above U+10FFFF */
    check_string("\xF5", 1, "\"\xEF\xBF\xBD\"");
    check_string("\xC3", 1, "\"\xEF\xBF\xBD\"");                       /* cut at the end */
    check_string("\xE2\x82" "a", 3, "\"\xEF\xBF\xBD" "a\"");             /* cut before a: one */
    check_string("\xF0\x9F\x98" "a", 4, "\"\xEF\xBF\xBD" "a\"");         /* three bytes of four: one */
    check_string("\xF0\x9F\xF0\x9F\x98\x80", 6, "\"\xEF\xBF\xBD\xF0\x9F\x98\x80\"");
    /* surrogates in their 3-byte forms: lone ones escaped */
    check_string("\xED\xA0\x80", 3, "\"\\ud800\"");
    check_string("\xED\xBF\xBF", 3, "\"\\udfff\"");
    check_string("\xED\xB0\x80\xED\xA0\x80", 6, "\"\\udc00\\ud800\"");    /* low then high: two lone */
    check_string("\xED\xA0\x80\xED\xA0\x80", 6, "\"\\ud800\\ud800\"");
    check_string("\xED\xA0\xBD", 2, "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");       /* cut short: not a surrogate form */
    /* a high form then a low form (CESU-8) is two lone surrogates, never
     * the astral character: the reader joins escaped pairs itself */
    check_string("\xED\xA0\xBD\xED\xB8\x80", 6, "\"\\ud83d\\ude00\"");
    check_string("x\xED\xAF\xBF\xED\xBF\xBFy", 8, "\"x\\udbff\\udfffy\"");
    /* as U+FFFD when asked: output strict consumers take as Unicode */
    aw_json_write_options wo = {.replace_lone_surrogates = true};
    aw_buf r;
    aw_buf_init(&r, NULL);
    assert_int_equal(aw_json_write_string_opts(&r, "a\xED\xA0\x80\xED\xA0\xBD\xED\xB8\x80" "b\xE2\x82", 13, &wo), 0);
    assert_string_equal(r.data, "\"a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
    aw_buf_clear(&r);
    /* and through aw_json_write, keys too */
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *o = aw_json_new_object(d);
    assert_int_equal(aw_json_object_set_string(d, o, "k\xED\xB0\x80", "\xED\xA0\x80", 3), 0);
    assert_int_equal(aw_json_write(o, &wo, &r, NULL), 0);
    assert_string_equal(r.data, "{\"k\xEF\xBF\xBD\":\"\xEF\xBF\xBD\"}");
    aw_buf_clear(&r);
    assert_int_equal(aw_json_write(o, NULL, &r, NULL), 0);
    assert_string_equal(r.data, "{\"k\\udc00\":\"\\ud800\"}");
    aw_json_doc_free(d);
    aw_buf_free(&r);
    /* appends, keeps what was there */
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "x=");
    assert_int_equal(aw_json_write_string(&b, "\"", 1), 0);
    assert_string_equal(b.data, "x=\"\\\"\"");
    aw_buf_free(&b);
}

/* Random byte strings of every kind, at every alignment around the 16-byte
 * vectors and the 4 KiB blocks, against ref_escape. */
static void test_string_reference(void **state) {
    (void)state;
    rng_state.s = 42;
    static const char *pieces[] = {"\"", "\\", "\n", "\x01", "\x1f", " ", "/", "\x7f", "\xC3\xA9", "\xE2\x80\xA8",
                                   "\xEF\xBF\xBF", "\xF0\x9F\x98\x80", "\xED\xA0\x80", "\xED\xBF\xBF",
                                   "\xED\xA0\xBD\xED\xB8\x80", "\xff", "\x80", "\xC3", "\xE2\x82", "\xF0\x9F\x98",
                                   "\xED\xB0\x80\xED\xA0\x80"};
    size_t npieces = sizeof pieces / sizeof *pieces;
    unsigned char *s = malloc(20000);
    assert_non_null(s);
    for (int round = 0; round < 1500; round++) {
        size_t n = 0, target;
        uint64_t r = rng();
        target = round < 200 ? (size_t)round : (r % 4 == 0) ? 4080 + r % 40 : (r % 4 == 1) ? 8180 + r % 30 : r % 600;
        unsigned density = (unsigned)(rng() % 64); /* out of 64: how often a special piece comes */
        while (n < target) {
            if ((rng() & 63) < density) {
                const char *p = pieces[rng() % npieces];
                size_t k = strlen(p);
                memcpy(s + n, p, k);
                n += k;
            } else {
                s[n++] = (unsigned char)('a' + rng() % 26);
            }
        }
        aw_buf got, want;
        aw_buf_init(&got, NULL);
        aw_buf_init(&want, NULL);
        /* every other round with lone surrogates as U+FFFD */
        int replace_lone = round & 1;
        aw_json_write_options wo = {.replace_lone_surrogates = replace_lone};
        assert_int_equal(aw_json_write_string_opts(&got, (const char *)s, n, &wo), 0);
        ref_escape(&want, s, n, replace_lone);
        if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
            size_t i = 0;
            while (i < got.len && i < want.len && got.data[i] == want.data[i]) i++;
            fail_msg("round %d (%zu bytes): output differs at byte %zu", round, n, i);
        }
        aw_buf_free(&got);
        aw_buf_free(&want);
    }
    free(s);
}

/* ---- numbers ------------------------------------------------------------------------ */

static void check_number(double d, const char *want) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write_number(&b, d), 0);
    if (strcmp(b.data, want) != 0) fail_msg("%.17g: want %s, got %s", d, want, b.data);
    aw_buf_free(&b);
}

static void test_number_edges(void **state) {
    (void)state;
    check_number(NAN, "null");
    check_number(-NAN, "null");
    check_number(INFINITY, "null");
    check_number(-INFINITY, "null");
    check_number(-0.0, "0");
    check_number(0.0, "0");
    check_number(1e21, "1e+21");
    check_number(1e-7, "1e-7");
    check_number(1.5e-7, "1.5e-7");
    check_number(1e-6, "0.000001");
    check_number(100, "100");
    check_number(0.1 + 0.2, "0.30000000000000004");
    check_number(5e-324, "5e-324");
    check_number(-DBL_MAX, "-1.7976931348623157e+308");
    check_number(DBL_MIN, "2.2250738585072014e-308");
    check_number(123456789012345680000.0, "123456789012345680000");
    check_number(1.2345678901234568e+29, "1.2345678901234568e+29");
    check_number(9007199254740993.0, "9007199254740992");
    check_number(18446744073709551616.0, "18446744073709552000");
}

/* Any double written and read back is the same double, in a form JSON reads. */
static void test_number_round_trip(void **state) {
    (void)state;
    rng_state.s = 7;
    char tmp[64];
    for (int i = 0; i < 60000; i++) {
        uint64_t bits = rng();
        if (i % 4 == 1) bits &= 0x800FFFFFFFFFFFFFull; /* subnormals */
        if (i % 4 == 2) bits = (bits & 0x801FFFFFFFFFFFFFull) | ((uint64_t)(1000 + rng() % 100) << 52);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d)) continue;
        aw_buf b;
        aw_buf_init(&b, NULL);
        assert_int_equal(aw_json_write_number(&b, d), 0);
        assert_true(b.len < sizeof tmp);
        memcpy(tmp, b.data, b.len + 1);
        aw_buf_free(&b);
        aw_json_doc *doc = NULL;
        if (aw_json_parse(tmp, strlen(tmp), NULL, &doc, NULL)) fail_msg("%.17g written as %s: not JSON", d, tmp);
        double back = aw_json_doc_root(doc)->u.num.d;
        aw_json_doc_free(doc);
        if (back != d && !(d == 0 && back == 0)) fail_msg("%.17g written as %s reads back as %.17g", d, tmp, back);
    }
}

/* ---- values the reader never makes: builder documents ------------------------------ */

static void check_built(const aw_json_value *v, int indent, const char *want) {
    size_t n;
    char *got = aw_test_write_json(v, indent, &n);
    if (n != strlen(want) || memcmp(got, want, n) != 0) fail_msg("want %s\n  got  %s", want, got);
    free(got);
}

static void test_builder_values(void **state) {
    (void)state;
    aw_json_doc *d = aw_json_doc_new(NULL);
    assert_non_null(d);
    check_built(aw_json_new_number(d, NAN), 0, "null");
    check_built(aw_json_new_number(d, -INFINITY), 0, "null");
    check_built(aw_json_new_number(d, -0.0), 0, "0");
    check_built(aw_json_new_number(d, 0.1), 0, "0.1");
    check_built(aw_json_new_int(d, INT64_MAX), 0, "9223372036854776000");
    check_built(aw_json_new_int(d, INT64_MIN), 0, "-9223372036854776000");
    check_built(aw_json_new_int(d, 9007199254740993LL), 0, "9007199254740992");
    check_built(aw_json_new_int(d, -9007199254740991LL), 0, "-9007199254740991");
    check_built(aw_json_new_string(d, "a\0\xED\xA0\x80", 5), 0, "\"a\\u0000\\ud800\"");

    /* obj[key] = v: index keys first, a key set again keeps its place */
    aw_json_value *o = aw_json_new_object(d);
    assert_non_null(o);
    assert_int_equal(aw_json_object_set_int(d, o, "b", 1), 0);
    assert_int_equal(aw_json_object_set_int(d, o, "10", 2), 0);
    assert_int_equal(aw_json_object_set_int(d, o, "a", 3), 0);
    assert_int_equal(aw_json_object_set_int(d, o, "2", 4), 0);
    assert_int_equal(aw_json_object_set_null(d, o, "b"), 0);
    assert_int_equal(aw_json_object_set_bool(d, o, "4294967295", true), 0);
    assert_int_equal(aw_json_object_set_number(d, o, "4294967294", 1e21), 0);
    check_built(o, 0, "{\"2\":4,\"10\":2,\"4294967294\":1e+21,\"b\":null,\"a\":3,\"4294967295\":true}");
    check_built(o, 1, "{\n \"2\": 4,\n \"10\": 2,\n \"4294967294\": 1e+21,\n \"b\": null,\n \"a\": 3,\n \"4294967295\": true\n}");

    aw_json_value *arr = aw_json_new_array(d);
    aw_json_value *inner = aw_json_new_object(d);
    assert_non_null(arr);
    assert_non_null(inner);
    assert_int_equal(aw_json_array_push(d, arr, inner), 0);
    assert_int_equal(aw_json_array_push(d, arr, aw_json_new_array(d)), 0);
    check_built(arr, 2, "[\n  {},\n  []\n]");
    assert_int_equal(aw_json_object_set_string(d, aw_json_at_mut(arr, 0), "1", "x", 1), 0);
    assert_int_equal(aw_json_object_set_string(d, aw_json_at_mut(arr, 0), "0", "y", 1), 0);
    check_built(arr, 0, "[{\"0\":\"y\",\"1\":\"x\"},[]]");
    aw_json_doc_free(d);
}

/* ---- options, buffers, errors --------------------------------------------------------- */

static void test_indent_limits(void **state) {
    (void)state;
    const char *doc = "{\"a\":[1,{}],\"b\":{\"c\":[]}}";
    check_text(doc, 0, "{\"a\":[1,{}],\"b\":{\"c\":[]}}");
    check_text(doc, -5, "{\"a\":[1,{}],\"b\":{\"c\":[]}}"); /* as JSON.stringify(v, null, -5) */
    check_text(doc, 1, "{\n \"a\": [\n  1,\n  {}\n ],\n \"b\": {\n  \"c\": []\n }\n}");
    const char *ten = "[\n          1,\n          [\n                    2\n          ]\n]";
    check_text("[1,[2]]", 10, ten);
    check_text("[1,[2]]", 11, ten); /* clamped to 10 */
    check_text("[1,[2]]", 1000000, ten);
    check_text("1", 4, "1");
    check_text("\"a\"", 4, "\"a\"");
    check_text("[]", 4, "[]");
    check_text("{}", 4, "{}");

    /* NULL options: compact */
    aw_json_doc *d = parse("[1, 2]");
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &b, NULL), 0);
    assert_string_equal(b.data, "[1,2]");
    /* appends */
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, &b, NULL), 0);
    assert_string_equal(b.data, "[1,2][1,2]");
    /* NULL arguments */
    aw_error err;
    assert_int_equal(aw_json_write(NULL, NULL, &b, &err), AW_EINVAL);
    assert_int_equal(err.code, AW_EINVAL);
    assert_int_equal(aw_json_write(aw_json_doc_root(d), NULL, NULL, &err), AW_EINVAL);
    assert_string_equal(b.data, "[1,2][1,2]");
    /* a value of no known type: refused, buffer as it was */
    aw_json_value bad;
    memset(&bad, 0, sizeof bad);
    bad.type = 77;
    assert_int_equal(aw_json_write(&bad, NULL, &b, &err), AW_EINVAL);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.data, "[1,2][1,2]");
    aw_json_value arr;
    memset(&arr, 0, sizeof arr);
    arr.type = AW_JSON_ARRAY;
    arr.u.arr.items = &bad;
    arr.u.arr.count = 1;
    assert_int_equal(aw_json_write(&arr, NULL, &b, &err), AW_EINVAL);
    assert_string_equal(b.data, "[1,2][1,2]");
    aw_buf_free(&b);
    aw_json_doc_free(d);
}

/* Depth costs no stack: 100,000 levels compact, 2,000 indented. */
static void test_deep(void **state) {
    (void)state;
    for (int pass = 0; pass < 2; pass++) {
        size_t depth = pass ? 2000 : 100000;
        aw_buf in;
        aw_buf_init(&in, NULL);
        for (size_t i = 0; i < depth; i++) aw_buf_append_str(&in, i % 2 ? "{\"k\":" : "[");
        aw_buf_append_str(&in, "null");
        for (size_t i = depth; i-- > 0;) aw_buf_putc(&in, i % 2 ? '}' : ']');
        aw_json_read_options ro = {NULL, depth + 1, false};
        aw_json_doc *d = NULL;
        aw_error err;
        if (aw_json_parse(in.data, in.len, &ro, &d, &err)) fail_msg("%s", err.message);
        size_t n;
        char *out = aw_test_write_json(aw_json_doc_root(d), pass ? 3 : 0, &n);
        if (!pass) {
            assert_int_equal(n, in.len);
            assert_memory_equal(out, in.data, n);
        } else {
            /* line i (from 0) is indented 3*i; count the lines and check a few */
            size_t lines = 1;
            for (size_t i = 0; i < n; i++) lines += out[i] == '\n';
            assert_int_equal(lines, 2 * depth + 1);
            const char *head = "[\n   {\n      \"k\": [\n         {\n", *tail = "\n      ]\n   }\n]";
            assert_memory_equal(out, head, strlen(head));
            assert_memory_equal(out + n - strlen(tail), tail, strlen(tail));
        }
        free(out);
        aw_json_doc_free(d);
        aw_buf_free(&in);
    }
}

/* ---- allocation failures ------------------------------------------------------------- */

typedef struct sweep {
    aw_json_doc *doc;
    const char *text;
    int indent;
} sweep;

/* Write into a buffer that uses the failing allocator: on failure, AW_ENOMEM
 * and the buffer holds exactly what it held before. */
static int write_with(const aw_allocator *a, void *ctx) {
    sweep *s = ctx;
    aw_buf b;
    aw_buf_init(&b, a);
    int rc = aw_buf_append_str(&b, "prefix:");
    if (rc) return rc;
    aw_json_write_options o = {.indent = s->indent};
    aw_error err;
    rc = aw_json_write(aw_json_doc_root(s->doc), &o, &b, &err);
    size_t want_len = 0;
    char *want = rc ? NULL : aw_test_write_json(aw_json_doc_root(s->doc), s->indent, &want_len);
    aw_test_check_appended(&b, "prefix:", 7, rc, &err, want, want_len);
    free(want);
    aw_buf_free(&b);
    return rc;
}

/* Parse and write, both with the failing allocator. */
static int parse_write_with(const aw_allocator *a, void *ctx) {
    sweep *s = ctx;
    aw_json_read_options ro = {a, 0, false};
    aw_json_doc *d = NULL;
    int rc = aw_json_parse(s->text, strlen(s->text), &ro, &d, NULL);
    if (rc) return rc;
    aw_buf b;
    aw_buf_init(&b, a);
    aw_json_write_options o = {.indent = s->indent};
    rc = aw_json_write(aw_json_doc_root(d), &o, &b, NULL);
    aw_buf_free(&b);
    aw_json_doc_free(d);
    return rc;
}

static void test_allocation_failures(void **state) {
    (void)state;
    /* index keys and duplicates (an order per object), more than 16 members,
     * nesting past the writer's first stack, a long string */
    aw_buf t;
    aw_buf_init(&t, NULL);
    aw_buf_append_str(&t, "{\"b\":1,\"10\":[1,2],\"a\":{\"2\":0,\"1\":1,\"2\":2},\"b\":\"x\",\"w\":{");
    for (int i = 0; i < 40; i++) aw_buf_printf(&t, "%s\"k%d\":%d", i ? "," : "", i % 25, i);
    aw_buf_append_str(&t, "},\"deep\":");
    for (int i = 0; i < 40; i++) aw_buf_append_str(&t, i % 2 ? "{\"1\":0,\"0\":" : "[");
    aw_buf_append_str(&t, "\"");
    for (int i = 0; i < 600; i++) aw_buf_append_str(&t, "caf\xC3\xA9\\n\\ud800 ");
    aw_buf_append_str(&t, "\"");
    for (int i = 40; i-- > 0;) aw_buf_putc(&t, i % 2 ? '}' : ']');
    aw_buf_append_str(&t, ",\"n\":[0.1,1e21,-0,5e-324,1e400]}");
    for (int indent = 0; indent <= 4; indent += 4) {
        sweep s = {parse(t.data), t.data, indent};
        long calls = aw_failalloc_run(write_with, &s, 0);
        assert_true(calls > 10);
        calls = aw_failalloc_run(parse_write_with, &s, 0);
        assert_true(calls > 10);
        aw_json_doc_free(s.doc);
    }
    aw_buf_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),         cmocka_unit_test(test_string_edges),
        cmocka_unit_test(test_string_reference), cmocka_unit_test(test_number_edges),
        cmocka_unit_test(test_number_round_trip), cmocka_unit_test(test_builder_values),
        cmocka_unit_test(test_indent_limits),    cmocka_unit_test(test_deep),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
