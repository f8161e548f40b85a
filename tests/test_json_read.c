/* The strict JSON reader: error messages and positions, string decoding
 * (escapes, surrogates, NUL), numbers (text, double, exact int64), duplicate
 * keys as JSON.parse and JSON.stringify see them, truncated and hostile
 * input, a 50 MB string, the depth limit, and allocation failures in the
 * reader and in the writer. */
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
#include "testutil.h"
#include "failalloc.h"

/* ---- helpers --------------------------------------------------------------- */

static aw_json_doc *parse_n(const char *text, size_t len) {
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, len, NULL, &d, &err))
        fail_msg("rejected at %zu:%zu: %s\n  input: %.*s", err.line, err.column, err.message, (int)len, text);
    assert_non_null(d);
    return d;
}

static aw_json_doc *parse_ok(const char *text) { return parse_n(text, strlen(text)); }

/* Parse text and compare the compact output with want. */
static void round_trip(const char *text, const char *want) {
    aw_json_doc *d = parse_ok(text);
    char *out = aw_test_write_json(aw_json_doc_root(d), 0, NULL);
    if (strcmp(out, want)) fail_msg("%s\n  written: %s\n  wanted:  %s", text, out, want);
    free(out);
    aw_json_doc_free(d);
}

/* The input is copied to a block of exactly len bytes so that ASan catches
 * a read past the end. */
static void expect_error_n(const char *text, size_t len, int code, size_t line, size_t column, const char *message) {
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    if (len) memcpy(copy, text, len);
    aw_json_doc *d = (aw_json_doc *)1;
    aw_error err;
    memset(&err, 0x55, sizeof err);
    int rc = aw_json_parse(copy, len, NULL, &d, &err);
    if (rc != code || err.code != code || (line && err.line != line) || (column && err.column != column) ||
        (message && strcmp(err.message, message) != 0))
        fail_msg("input %.*s\n  got %d (err.code %d) at %zu:%zu \"%s\"\n  wanted %d at %zu:%zu \"%s\"", (int)len, text,
                 rc, err.code, err.line, err.column, err.message, code, line, column, message ? message : "(any)");
    assert_null(d);
    assert_true(err.offset <= len);
    assert_true(err.message[0] != '\0');
    free(copy);
}

static void expect_error(const char *text, int code, size_t line, size_t column, const char *message) {
    expect_error_n(text, strlen(text), code, line, column, message);
}

/* ---- errors: messages and positions --------------------------------------- */

static void test_error_messages(void **state) {
    (void)state;
    aw_json_doc *d = NULL;
    aw_error err;
    const char *t = "{\"a\":1 \"b\":2}";
    assert_int_equal(aw_json_parse(t, strlen(t), NULL, &d, &err), AW_ESYNTAX);
    assert_null(d);
    assert_int_equal(err.code, AW_ESYNTAX);
    assert_string_equal(err.message, "unexpected '\"': expected ',' or '}' after an object member");
    assert_int_equal(err.offset, 7);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 8);

    expect_error("[1 2]", AW_ESYNTAX, 1, 4, "unexpected '2': expected ',' or ']' after an array element");
    expect_error("[1,]", AW_ESYNTAX, 1, 4, "trailing comma before ']'");
    expect_error("{\"a\":1,}", AW_ESYNTAX, 1, 8, "trailing comma before '}'");
    expect_error("[,1]", AW_ESYNTAX, 1, 2, "unexpected ',': expected a value");
    expect_error("{,}", AW_ESYNTAX, 1, 2, "unexpected ',': expected a string key");
    expect_error("{1:2}", AW_ESYNTAX, 1, 2, "unexpected '1': expected a string key");
    expect_error("{'a':2}", AW_ESYNTAX, 1, 2, "unexpected ''': expected a string key");
    expect_error("{\"a\"}", AW_ESYNTAX, 1, 5, "unexpected '}': expected ':' after an object key");
    expect_error("{\"a\" 1}", AW_ESYNTAX, 1, 6, "unexpected '1': expected ':' after an object key");
    expect_error("{\"a\":}", AW_ESYNTAX, 1, 6, "unexpected '}': expected a value");
    expect_error("[1}", AW_ESYNTAX, 1, 3, "unexpected '}': expected ',' or ']' after an array element");
    expect_error("{\"a\":1]", AW_ESYNTAX, 1, 7, "unexpected ']': expected ',' or '}' after an object member");
    expect_error("]", AW_ESYNTAX, 1, 1, "unexpected ']': expected a value");
    expect_error("tru", AW_ESYNTAX, 1, 1, "unexpected 't': expected a value");
    expect_error("True", AW_ESYNTAX, 1, 1, "unexpected 'T': expected a value");
    expect_error("nul", AW_ESYNTAX, 1, 1, "unexpected 'n': expected a value");
    expect_error("undefined", AW_ESYNTAX, 1, 1, "unexpected 'u': expected a value");
    expect_error("[NaN]", AW_ESYNTAX, 1, 2, "unexpected 'N': expected a value");
    expect_error("-", AW_ESYNTAX, 1, 2, "expected a digit after '-'");
    expect_error("-x", AW_ESYNTAX, 1, 2, "expected a digit after '-'");
    expect_error("+1", AW_ESYNTAX, 1, 1, "unexpected '+': expected a value");
    expect_error(".5", AW_ESYNTAX, 1, 1, "unexpected '.': expected a value");
    expect_error("01", AW_ESYNTAX, 1, 1, "leading zeros are not allowed in numbers");
    expect_error("[-012]", AW_ESYNTAX, 1, 3, "leading zeros are not allowed in numbers");
    expect_error("1.", AW_ESYNTAX, 1, 3, "expected a digit after the decimal point");
    expect_error("1.e5", AW_ESYNTAX, 1, 3, "expected a digit after the decimal point");
    expect_error("1e", AW_ESYNTAX, 1, 3, "expected a digit in the exponent");
    expect_error("1e+", AW_ESYNTAX, 1, 4, "expected a digit in the exponent");
    expect_error("0x10", AW_ESYNTAX, 1, 2, "unexpected 'x': unexpected data after the JSON value");
    expect_error("\"abc", AW_ESYNTAX, 1, 1, "unterminated string");
    expect_error("[\"a\\", AW_ESYNTAX, 1, 4, "unterminated string");
    expect_error("\"\\x\"", AW_ESYNTAX, 1, 2, "invalid escape sequence in string");
    expect_error("\"\\'\"", AW_ESYNTAX, 1, 2, "invalid escape sequence in string");
    expect_error("\"\\u12\"", AW_ESYNTAX, 1, 2, "invalid \\u escape: expected four hex digits");
    expect_error("\"\\u12G4\"", AW_ESYNTAX, 1, 2, "invalid \\u escape: expected four hex digits");
    expect_error("\"\\u12", AW_ESYNTAX, 1, 2, "invalid \\u escape: expected four hex digits");
    expect_error("\"\\U0041\"", AW_ESYNTAX, 1, 2, "invalid escape sequence in string");
    expect_error("\"a\tb\"", AW_ESYNTAX, 1, 3, "control character U+0009 in string must be escaped");
    expect_error("\"a\nb\"", AW_ESYNTAX, 1, 3, "control character U+000A in string must be escaped");
    expect_error("\"\x1f\"", AW_ESYNTAX, 1, 2, "control character U+001F in string must be escaped");
    expect_error("[\"ab\xFF" "c\"]", AW_EUTF8, 1, 5, "invalid UTF-8 byte 0xFF in string");
    expect_error("[\"\xC3\"]", AW_EUTF8, 1, 3, "invalid UTF-8 byte 0xC3 in string");
    expect_error("[\xC3\xA9]", AW_ESYNTAX, 1, 2, "unexpected byte 0xC3: expected a value");
    /* DEL is not a control character in JSON */
    round_trip("\"\x7f\"", "\"\x7f\"");
}

static void test_error_positions(void **state) {
    (void)state;
    /* lines counted across LF, CRLF (one break) and a lone CR */
    expect_error("{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}", AW_ESYNTAX, 3, 14, "trailing comma before ']'");
    expect_error("{\r\n  \"a\": 1,\r\n  \"b\": [1, 2,]\r\n}", AW_ESYNTAX, 3, 14, "trailing comma before ']'");
    expect_error("[1,\r2,\r\n3,\nx]", AW_ESYNTAX, 4, 1, NULL);
    expect_error("{\n\"a\": 1\n\"b\": 2}", AW_ESYNTAX, 3, 1, "unexpected '\"': expected ',' or '}' after an object member");
    /* columns count code points, not bytes */
    expect_error("[\"\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80\",x]", AW_ESYNTAX, 1, 8, NULL);
    aw_json_doc *d = NULL;
    aw_error err;
    const char *t = "[\"\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80\",x]";
    assert_int_equal(aw_json_parse(t, strlen(t), NULL, &d, &err), AW_ESYNTAX);
    assert_int_equal(err.offset, 13);
    /* a string cut off at the end points at its opening quote */
    expect_error("{\n  \"key\": \"value", AW_ESYNTAX, 2, 10, "unterminated string");
    /* the end of input is placed after the last byte */
    expect_error("[1,\n  2", AW_ESYNTAX, 2, 4, "unexpected end of input");
    expect_error("{\"a\":[\n\n", AW_ESYNTAX, 3, 1, "unexpected end of input");
    /* a long line: the column goes past 255 */
    char line[600];
    memset(line, ' ', sizeof line);
    line[0] = '[';
    line[500] = '}';
    line[501] = '\0';
    expect_error(line, AW_ESYNTAX, 1, 501, NULL);
}

static void test_empty_and_trailing(void **state) {
    (void)state;
    expect_error("", AW_ESYNTAX, 1, 1, "unexpected end of input");
    expect_error("   \n ", AW_ESYNTAX, 2, 2, "unexpected end of input");
    expect_error_n(NULL, 0, AW_ESYNTAX, 1, 1, "unexpected end of input");
    aw_json_doc *d = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(NULL, 3, NULL, &d, &err), AW_EINVAL);
    assert_null(d);
    assert_int_equal(aw_json_parse("1", 1, NULL, NULL, &err), AW_EINVAL);
    assert_int_equal(aw_json_parse("1", 1, NULL, NULL, NULL), AW_EINVAL);
    /* a NULL err is allowed */
    assert_int_equal(aw_json_parse("[", 1, NULL, &d, NULL), AW_ESYNTAX);
    assert_null(d);

    const char *msg = "unexpected data after the JSON value";
    char want[128];
    static const struct {
        const char *text;
        char c;
        size_t column;
    } cases[] = {
        {"[1] x", 'x', 5}, {"{}{}", '{', 3},    {"1 2", '2', 3},     {"nullx", 'x', 5},
        {"truex", 'x', 5}, {"[1]]", ']', 4},    {"\"a\"\"b\"", '"', 4}, {"0 0", '0', 3},
        {"1,", ',', 2},    {"{} // c", '/', 4}, {"[]\n,", ',', 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(want, sizeof want, "unexpected '%c': %s", cases[i].c, msg);
        expect_error(cases[i].text, AW_ESYNTAX, 0, cases[i].column, want);
    }
    /* whitespace is exactly space, tab, CR, LF */
    round_trip(" \t\r\n[ \t\r\n1 \t\r\n] \t\r\n", "[1]");
    expect_error("[1]\f", AW_ESYNTAX, 1, 4, "unexpected byte 0x0C: unexpected data after the JSON value");
    expect_error("\v[1]", AW_ESYNTAX, 1, 1, "unexpected byte 0x0B: expected a value");
    expect_error("[\xC2\xA0" "1]", AW_ESYNTAX, 1, 2, NULL);         /* NBSP */
    expect_error("[1,\xEF\xBB\xBF" "2]", AW_ESYNTAX, 1, 4, NULL);    /* BOM inside */
    expect_error("[1]\xE2\x80\xA8", AW_ESYNTAX, 1, 4, NULL);         /* U+2028 */
}

/* ---- strings ---------------------------------------------------------------- */

static void check_decoded(const char *json, const char *bytes, size_t n) {
    aw_json_doc *d = parse_ok(json);
    const aw_json_value *v = aw_json_doc_root(d);
    assert_true(aw_json_is_string(v));
    if (v->u.str.len != n || memcmp(v->u.str.ptr, bytes, n) != 0)
        fail_msg("%s decoded to %zu bytes, wanted %zu", json, v->u.str.len, n);
    assert_int_equal(v->u.str.ptr[n], '\0');
    aw_json_doc_free(d);
}
#define EXPECT_STRING(json, lit) check_decoded(json, lit, sizeof(lit) - 1)

static void test_string_escapes(void **state) {
    (void)state;
    EXPECT_STRING("\"\"", "");
    EXPECT_STRING("\"plain\"", "plain");
    EXPECT_STRING("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t");
    EXPECT_STRING("\"\\u0041\\u00e9\\u00E9\"", "A\xC3\xA9\xC3\xA9");
    EXPECT_STRING("\"\\u65e5\\u672C\"", "\xE6\x97\xA5\xE6\x9C\xAC");
    EXPECT_STRING("\"\\u007f\\u0080\\u07ff\\u0800\\uffff\"", "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF");
    /* surrogate pairs join into one 4-byte character, any hex case */
    EXPECT_STRING("\"\\ud83d\\ude00\"", "\xF0\x9F\x98\x80");
    EXPECT_STRING("\"\\uD83D\\uDE00\"", "\xF0\x9F\x98\x80");
    EXPECT_STRING("\"\\ud800\\udc00\\udbff\\udfff\"", "\xF0\x90\x80\x80\xF4\x8F\xBF\xBF");
    EXPECT_STRING("\"x\\uD834\\uDD1Ey\"", "x\xF0\x9D\x84\x9Ey");
    /* raw UTF-8 is kept as it is */
    EXPECT_STRING("\"\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF\"", "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF");
    /* escapes mixed with long plain runs (the vector path) */
    EXPECT_STRING("\"0123456789abcdef0123456789abcdef\\n0123456789abcdef0123456789abcdef\\u0041\"",
                  "0123456789abcdef0123456789abcdef\n0123456789abcdef0123456789abcdefA");
    round_trip("\"\\u0041\\/\\ud83d\\ude00\\u2028\\u001f\\u007f\"", "\"A/\xF0\x9F\x98\x80\xE2\x80\xA8\\u001f\x7F\"");

    /* the caller's text is never changed (decoding works on a copy) */
    char text[] = "{\"k\\n\":\"a\\u0041\\ud83d\\ude00\"}";
    char orig[sizeof text];
    memcpy(orig, text, sizeof text);
    aw_json_doc *d = parse_n(text, strlen(text));
    assert_memory_equal(text, orig, sizeof text);
    const aw_json_value *v = aw_json_get(aw_json_doc_root(d), "k\n");
    assert_non_null(v);
    assert_int_equal(v->u.str.len, 6);
    aw_json_doc_free(d);
}

static void test_lone_surrogates(void **state) {
    (void)state;
    /* kept in the 3-byte generalized form, written back as the escape */
    EXPECT_STRING("\"\\ud800\"", "\xED\xA0\x80");
    EXPECT_STRING("\"\\udc00\"", "\xED\xB0\x80");
    EXPECT_STRING("\"\\uDFFF\"", "\xED\xBF\xBF");
    EXPECT_STRING("\"\\ud800\\u0041\"", "\xED\xA0\x80" "A");
    EXPECT_STRING("\"\\ud800\\ud800\"", "\xED\xA0\x80\xED\xA0\x80");
    EXPECT_STRING("\"\\udc00\\ud800\"", "\xED\xB0\x80\xED\xA0\x80");
    EXPECT_STRING("\"\\ud800x\"", "\xED\xA0\x80x");
    EXPECT_STRING("\"\\ud800\\n\"", "\xED\xA0\x80\n");
    round_trip("\"\\ud800\"", "\"\\ud800\"");
    round_trip("[\"\\uDBFF\", \"a\\udc00b\"]", "[\"\\udbff\",\"a\\udc00b\"]");
    round_trip("{\"\\ud800\":\"\\udfff\\ud800\"}", "{\"\\ud800\":\"\\udfff\\ud800\"}");
    round_trip("\"\\ud83d\\ude00\\ud83d\"", "\"\xF0\x9F\x98\x80\\ud83d\"");
    /* a high surrogate followed by a bad escape is still an error */
    expect_error("\"\\ud800\\u12\"", AW_ESYNTAX, 1, 8, "invalid \\u escape: expected four hex digits");
    expect_error("\"\\ud800\\x\"", AW_ESYNTAX, 1, 8, "invalid escape sequence in string");
    /* the raw 3-byte form is not UTF-8 and is refused in input */
    expect_error("\"\xED\xA0\x80\"", AW_EUTF8, 1, 2, "invalid UTF-8 byte 0xED in string");
    /* aw_json_write_string directly */
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write_string(&b, "\xED\xA0\x80" "a\xED\xBF\xBF", 7), 0);
    assert_string_equal(b.data, "\"\\ud800a\\udfff\"");
    aw_buf_free(&b);
}

static void test_nul_bytes(void **state) {
    (void)state;
    EXPECT_STRING("\"a\\u0000b\"", "a\0b");
    EXPECT_STRING("\"\\u0000\"", "\0");
    round_trip("\"a\\u0000b\"", "\"a\\u0000b\"");
    aw_json_doc *d = parse_ok("{\"a\\u0000b\":1,\"a\":2}");
    const aw_json_value *root = aw_json_doc_root(d);
    const aw_json_value *v = aw_json_getn(root, "a\0b", 3);
    assert_non_null(v);
    assert_int_equal(v->u.num.i, 1);
    assert_int_equal(aw_json_get(root, "a")->u.num.i, 2);
    assert_int_equal(root->u.obj.members[0].key_len, 3);
    char *out = aw_test_write_json(root, 0, NULL);
    assert_string_equal(out, "{\"a\\u0000b\":1,\"a\":2}");
    free(out);
    aw_json_doc_free(d);

    /* raw NUL bytes are refused inside strings and between tokens */
    expect_error_n("\"a\0b\"", 5, AW_ESYNTAX, 1, 3, "control character U+0000 in string must be escaped");
    expect_error_n("[1,\0" "2]", 6, AW_ESYNTAX, 1, 4, "unexpected NUL byte: expected a value");
    expect_error_n("\0", 1, AW_ESYNTAX, 1, 1, "unexpected NUL byte: expected a value");
    expect_error_n("[1]\0", 4, AW_ESYNTAX, 1, 4, "unexpected NUL byte: unexpected data after the JSON value");
    expect_error_n("{\"a\"\0:1}", 8, AW_ESYNTAX, 1, 5, "unexpected NUL byte: expected ':' after an object key");
    expect_error_n("nu\0l", 4, AW_ESYNTAX, 1, 1, "unexpected 'n': expected a value");
    expect_error_n("12\0", 3, AW_ESYNTAX, 1, 3, "unexpected NUL byte: unexpected data after the JSON value");
    /* the length is the truth: text after len is not read */
    d = parse_n("[1]garbage", 3);
    aw_json_doc_free(d);
}

/* ---- numbers ------------------------------------------------------------------ */

typedef struct numcase {
    const char *text;
    double d;
    bool is_int;
    int64_t i;
    const char *written; /* JSON.stringify(JSON.parse(text)) */
} numcase;

static void test_numbers(void **state) {
    (void)state;
    static const numcase cases[] = {
        {"0", 0.0, true, 0, "0"},
        {"-0", -0.0, true, 0, "0"},
        {"-0.0", -0.0, true, 0, "0"},
        {"0e5", 0.0, true, 0, "0"},
        {"1", 1.0, true, 1, "1"},
        {"-1", -1.0, true, -1, "-1"},
        {"1.0", 1.0, true, 1, "1"},
        {"1e2", 100.0, true, 100, "100"},
        {"1E+2", 100.0, true, 100, "100"},
        {"1.5e3", 1500.0, true, 1500, "1500"},
        {"100e-2", 1.0, true, 1, "1"},
        {"12.5e-1", 1.25, false, 0, "1.25"},
        {"0.1", 0.1, false, 0, "0.1"},
        {"0.30000000000000004", 0.30000000000000004, false, 0, "0.30000000000000004"},
        {"123456789.123456789", 123456789.123456789, false, 0, "123456789.12345679"},
        {"9007199254740991", 9007199254740991.0, true, 9007199254740991LL, "9007199254740991"},
        {"9007199254740993", 9007199254740992.0, true, 9007199254740993LL, "9007199254740992"},
        {"-9007199254740993", -9007199254740992.0, true, -9007199254740993LL, "-9007199254740992"},
        {"9223372036854775807", 9223372036854775807.0, true, INT64_MAX, "9223372036854776000"},
        {"-9223372036854775808", -9223372036854775808.0, true, INT64_MIN, "-9223372036854776000"},
        {"9223372036854775808", 9223372036854775808.0, false, 0, "9223372036854776000"},
        {"-9223372036854775809", -9223372036854775809.0, false, 0, "-9223372036854776000"},
        {"1e19", 1e19, false, 0, "10000000000000000000"},
        {"1e21", 1e21, false, 0, "1e+21"},
        {"123456789012345678901234567890", 123456789012345678901234567890.0, false, 0, "1.2345678901234568e+29"},
        {"0.000001", 0.000001, false, 0, "0.000001"},
        {"0.0000001", 1e-7, false, 0, "1e-7"},
        {"-1.5e-7", -1.5e-7, false, 0, "-1.5e-7"},
        {"5e-324", 5e-324, false, 0, "5e-324"},
        {"4.9e-324", 5e-324, false, 0, "5e-324"},
        {"2.2250738585072014e-308", 2.2250738585072014e-308, false, 0, "2.2250738585072014e-308"},
        {"1.7976931348623157e308", 1.7976931348623157e308, false, 0, "1.7976931348623157e+308"},
        {"1e400", INFINITY, false, 0, "null"},
        {"-1e400", -INFINITY, false, 0, "null"},
        {"1e-400", 0.0, false, 0, "0"},
        {"-1e-400", -0.0, false, 0, "0"},
        {"1e99999999999999999999", INFINITY, false, 0, "null"},
        {"1e-99999999999999999999", 0.0, false, 0, "0"},
        {"10000000000000000000000000000000000000000e-40", 1.0, true, 1, "1"},
        {"0.00000000000000000000000000000000000000001e41", 1.0, false, 0, "1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const numcase *c = &cases[k];
        /* inside an array, so the number is followed by something */
        char buf[256];
        snprintf(buf, sizeof buf, "[%s]", c->text);
        for (int wrapped = 0; wrapped < 2; wrapped++) {
            aw_json_doc *d = parse_ok(wrapped ? buf : c->text);
            const aw_json_value *root = aw_json_doc_root(d);
            const aw_json_value *v = wrapped ? aw_json_at(root, 0) : root;
            assert_true(aw_json_is_number(v));
            /* the text as written */
            if (v->num_len != strlen(c->text) || memcmp(v->u.num.text, c->text, v->num_len) != 0)
                fail_msg("%s: text %.*s", c->text, (int)v->num_len, v->u.num.text);
            if (!(v->u.num.d == c->d && signbit(v->u.num.d) == signbit(c->d)))
                fail_msg("%s: d %.17g, wanted %.17g", c->text, v->u.num.d, c->d);
            if (((v->flags & AW_JSON_F_INT) != 0) != c->is_int) fail_msg("%s: int flag %d", c->text, v->flags);
            if (c->is_int && v->u.num.i != c->i) fail_msg("%s: i %lld", c->text, (long long)v->u.num.i);
            char *out = aw_test_write_json(root, 0, NULL);
            char want[256];
            snprintf(want, sizeof want, wrapped ? "[%s]" : "%s", c->written);
            if (strcmp(out, want)) fail_msg("%s: written %s, wanted %s", c->text, out, want);
            free(out);
            aw_json_doc_free(d);
        }
    }

    /* a 2000-digit literal is kept whole; its value overflows */
    size_t n = 2000;
    char *big = malloc(n + 3);
    assert_non_null(big);
    big[0] = '[';
    big[1] = '7';
    memset(big + 2, '0', n - 1);
    big[n + 1] = ']';
    big[n + 2] = '\0';
    aw_json_doc *d = parse_ok(big);
    const aw_json_value *v = aw_json_at(aw_json_doc_root(d), 0);
    assert_int_equal(v->num_len, n);
    assert_memory_equal(v->u.num.text, big + 1, n);
    assert_true(isinf(v->u.num.d));
    assert_false(v->flags & AW_JSON_F_INT);
    aw_json_doc_free(d);
    /* and 0.000...0001 with 2000 zeros underflows to 0 */
    big[1] = '0';
    big[2] = '.';
    big[n] = '1';
    d = parse_ok(big);
    v = aw_json_at(aw_json_doc_root(d), 0);
    assert_true(v->u.num.d == 0.0);
    aw_json_doc_free(d);
    free(big);

    /* the text is NUL-free and the double is the same in any array position */
    d = parse_ok("[1.5,-2,3e1]");
    assert_true(aw_json_at(aw_json_doc_root(d), 2)->u.num.d == 30.0);
    assert_int_equal(aw_json_at(aw_json_doc_root(d), 1)->u.num.i, -2);
    aw_json_doc_free(d);
}

/* ---- duplicate and index keys ---------------------------------------------------- */

static void test_duplicate_keys(void **state) {
    (void)state;
    aw_json_doc *d = parse_ok("{\"a\":1,\"b\":2,\"a\":3}");
    const aw_json_value *o = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(o), 3); /* every member kept, in order */
    assert_string_equal(o->u.obj.members[0].key, "a");
    assert_string_equal(o->u.obj.members[1].key, "b");
    assert_string_equal(o->u.obj.members[2].key, "a");
    assert_int_equal(o->u.obj.members[0].value.u.num.i, 1);
    assert_true(o->flags & AW_JSON_F_DUPKEYS);
    assert_int_equal(aw_json_get(o, "a")->u.num.i, 3); /* the last wins */
    char *out = aw_test_write_json(o, 0, NULL);
    assert_string_equal(out, "{\"a\":3,\"b\":2}"); /* at the place of the first */
    free(out);
    out = aw_test_write_json(o, 2, NULL);
    assert_string_equal(out, "{\n  \"a\": 3,\n  \"b\": 2\n}");
    free(out);
    /* equal to the object JSON.parse would make */
    aw_json_doc *e = parse_ok("{\"b\":2,\"a\":3}");
    assert_true(aw_json_equal(o, aw_json_doc_root(e)));
    aw_json_doc_free(e);
    e = parse_ok("{\"a\":1,\"b\":2}");
    assert_false(aw_json_equal(o, aw_json_doc_root(e)));
    aw_json_doc_free(e);
    aw_json_doc_free(d);

    round_trip("{\"a\":{\"x\":1},\"a\":[2]}", "{\"a\":[2]}");
    round_trip("{\"a\":1,\"a\":2,\"a\":3}", "{\"a\":3}");
    round_trip("{\"\":1,\"b\":0,\"\":2}", "{\"\":2,\"b\":0}");
    /* array-index keys first, ascending, as JavaScript orders them */
    round_trip("{\"b\":1,\"2\":2,\"1\":3,\"01\":4,\"-1\":5,\"4294967295\":6,\"4294967294\":7}",
               "{\"1\":3,\"2\":2,\"4294967294\":7,\"b\":1,\"01\":4,\"-1\":5,\"4294967295\":6}");
    round_trip("{\"1\":1,\"a\":2,\"1\":3,\"0\":0}", "{\"0\":0,\"1\":3,\"a\":2}");
    /* nested objects each get their own order */
    round_trip("[{\"k\":1,\"k\":2},{\"z\":{\"9\":1,\"x\":2,\"x\":3}}]", "[{\"k\":2},{\"z\":{\"9\":1,\"x\":3}}]");

    /* a large object (hashed duplicate check) */
    char buf[8192];
    size_t o2 = 0;
    o2 += (size_t)snprintf(buf + o2, sizeof buf - o2, "{");
    for (int i = 0; i < 200; i++) o2 += (size_t)snprintf(buf + o2, sizeof buf - o2, "\"k%d\":%d,", i, i);
    o2 += (size_t)snprintf(buf + o2, sizeof buf - o2, "\"k50\":\"dup\"}");
    d = parse_ok(buf);
    o = aw_json_doc_root(d);
    assert_int_equal(aw_json_count(o), 201);
    assert_true(o->flags & AW_JSON_F_DUPKEYS);
    assert_string_equal(aw_json_get(o, "k50")->u.str.ptr, "dup");
    out = aw_test_write_json(o, 0, NULL);
    assert_non_null(strstr(out, ",\"k49\":49,\"k50\":\"dup\",\"k51\":51,"));
    assert_null(strstr(out, "\"k50\":50"));
    assert_int_equal(out[strlen(out) - 2], '9'); /* ends with "k199":199} */
    free(out);
    aw_json_doc_free(d);
    /* and one without duplicates has no flag */
    buf[o2 - 13] = '}';
    buf[o2 - 12] = '\0';
    d = parse_ok(buf);
    assert_false(aw_json_doc_root(d)->flags & AW_JSON_F_DUPKEYS);
    assert_int_equal(aw_json_count(aw_json_doc_root(d)), 200);
    aw_json_doc_free(d);
}

static void test_access(void **state) {
    (void)state;
    aw_json_doc *d = parse_ok("{\"s\":\"x\",\"n\":1,\"t\":true,\"f\":false,\"z\":null,\"a\":[1,2],\"o\":{}}");
    const aw_json_value *r = aw_json_doc_root(d);
    assert_int_equal(aw_json_type_of(r), AW_JSON_OBJECT);
    assert_true(aw_json_is_string(aw_json_get(r, "s")));
    assert_true(aw_json_is_number(aw_json_get(r, "n")));
    assert_true(aw_json_is_bool(aw_json_get(r, "t")) && aw_json_get(r, "t")->u.b);
    assert_true(aw_json_is_bool(aw_json_get(r, "f")) && !aw_json_get(r, "f")->u.b);
    assert_true(aw_json_is_null(aw_json_get(r, "z")));
    assert_true(aw_json_is_array(aw_json_get(r, "a")));
    assert_true(aw_json_is_object(aw_json_get(r, "o")));
    assert_null(aw_json_get(r, "missing"));
    assert_null(aw_json_get(r, NULL));
    assert_null(aw_json_get(aw_json_get(r, "a"), "0"));
    assert_null(aw_json_at(r, 0));
    assert_null(aw_json_at(aw_json_get(r, "a"), 2));
    assert_int_equal(aw_json_at(aw_json_get(r, "a"), 1)->u.num.i, 2);
    assert_int_equal(aw_json_count(r), 7);
    assert_int_equal(aw_json_count(aw_json_get(r, "s")), 0);
    assert_int_equal(aw_json_count(aw_json_get(r, "o")), 0);
    assert_int_equal(aw_json_count(NULL), 0);
    assert_int_equal(aw_json_type_of(NULL), AW_JSON_NULL);
    assert_false(aw_json_is_null(NULL));
    assert_null(aw_json_doc_root(NULL));
    aw_json_doc_free(NULL);
    aw_json_doc_free(d);
}

/* ---- truncated input ---------------------------------------------------------- */

static const char sample[] =
    "{\r\n"
    "  \"id\": \"evt-1\", \"n\": -12.5e+3, \"i\": 9007199254740993,\n"
    "  \"ok\": true, \"no\": false, \"none\": null,\n"
    "  \"text\": \"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80 \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 \\ud800\",\n"
    "  \"list\": [1, [2, [3, {\"deep\": [[]]}]], {}, [], \"\", 0, -0, 1E-2],\n"
    "  \"\\u006b\": {\"a\": 1, \"a\": 2, \"1\": 0}\n"
    "}";

static void test_truncated_prefixes(void **state) {
    (void)state;
    size_t len = sizeof sample - 1;
    aw_json_doc *d = parse_n(sample, len);
    aw_json_doc_free(d);
    for (size_t n = 0; n < len; n++) {
        char *copy = malloc(n ? n : 1);
        assert_non_null(copy);
        memcpy(copy, sample, n);
        aw_json_doc *out = NULL;
        aw_error err;
        int rc = aw_json_parse(copy, n, NULL, &out, &err);
        /* cut inside a multi-byte character, the last bytes are not UTF-8 */
        if (rc != AW_ESYNTAX && rc != AW_EUTF8) fail_msg("prefix of %zu bytes: returned %d", n, rc);
        assert_null(out);
        assert_int_equal(err.code, rc);
        assert_true(err.offset <= n);
        assert_true(err.line >= 1 && err.line <= 7);
        assert_true(err.column >= 1);
        free(copy);
    }
    /* every suffix too: only the whole text and its whitespace-led tails that
     * start at a value can parse; nothing crashes */
    for (size_t k = 1; k < len; k++) {
        size_t n = len - k;
        char *copy = malloc(n);
        assert_non_null(copy);
        memcpy(copy, sample + k, n);
        aw_json_doc *out = NULL;
        int rc = aw_json_parse(copy, n, NULL, &out, NULL);
        if (rc == 0) aw_json_doc_free(out);
        else assert_true(rc == AW_ESYNTAX || rc == AW_EUTF8);
        free(copy);
    }
}

/* ---- a 50 MB string ---------------------------------------------------------------- */

static void test_huge_string(void **state) {
    (void)state;
    /* one block as written in JSON, as decoded, and as aw_json_write prints it */
    static const char block_in[] = "plain text run, \xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80 \\n\\t\\\"\\u00e9\\ud83d\\ude00\\u0001/";
    static const char block_dec[] = "plain text run, \xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80 \n\t\"\xC3\xA9\xF0\x9F\x98\x80\x01/";
    static const char block_out[] = "plain text run, \xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80 \\n\\t\\\"\xC3\xA9\xF0\x9F\x98\x80\\u0001/";
    const size_t bi = sizeof block_in - 1, bd = sizeof block_dec - 1, bo = sizeof block_out - 1;
    const size_t plain = 25u << 20; /* 25 MB of one byte, then 25 MB of blocks */
    const size_t blocks = (25u << 20) / bi + 1;
    size_t len = 2 + plain + blocks * bi;
    char *text = malloc(len);
    assert_non_null(text);
    text[0] = '"';
    memset(text + 1, 'x', plain);
    for (size_t i = 0; i < blocks; i++) memcpy(text + 1 + plain + i * bi, block_in, bi);
    text[len - 1] = '"';
    assert_true(len > 50u << 20);

    aw_json_doc *d = parse_n(text, len);
    free(text);
    const aw_json_value *v = aw_json_doc_root(d);
    assert_true(aw_json_is_string(v));
    assert_int_equal(v->u.str.len, plain + blocks * bd);
    for (size_t i = 0; i < plain; i += 4093) assert_int_equal(v->u.str.ptr[i], 'x');
    const char *dec = v->u.str.ptr + plain;
    for (size_t i = 0; i < blocks; i++)
        if (memcmp(dec + i * bd, block_dec, bd)) fail_msg("block %zu decoded wrong", i);
    assert_int_equal(v->u.str.ptr[v->u.str.len], '\0');

    char *out = aw_test_write_json(v, 0, NULL);
    size_t olen = strlen(out);
    assert_int_equal(olen, 2 + plain + blocks * bo);
    for (size_t i = 0; i < blocks; i++)
        if (memcmp(out + 1 + plain + i * bo, block_out, bo)) fail_msg("block %zu written wrong", i);
    free(out);
    aw_json_doc_free(d);
}

/* ---- nesting ----------------------------------------------------------------------- */

static void test_deep_nesting(void **state) {
    (void)state;
    size_t depth = 1001;
    char *s = malloc(2 * depth + 1);
    assert_non_null(s);
    for (size_t i = 0; i < depth; i++) {
        s[i] = '[';
        s[2 * depth - 1 - i] = ']';
    }
    s[2 * depth] = '\0';
    expect_error(s, AW_ELIMIT, 1, 1001, "nesting deeper than 1000 levels");
    /* 1000 levels parse, and are written back without recursion */
    aw_json_doc *d = parse_n(s + 1, 2 * depth - 2);
    char *out = aw_test_write_json(aw_json_doc_root(d), 0, NULL);
    assert_memory_equal(out, s + 1, 2 * depth - 2);
    free(out);
    out = aw_test_write_json(aw_json_doc_root(d), 1, NULL);
    /* brackets, two line breaks per non-empty level, and 2k+1 spaces of
     * indentation for level k */
    assert_int_equal(strlen(out), 2 * 1000 + 2 * 999 + 999 * 999);
    free(out);
    aw_json_doc_free(d);
    free(s);
    /* an unclosed 100000-level prefix is refused at the limit, not at the end */
    s = malloc(100001);
    assert_non_null(s);
    memset(s, '[', 100000);
    s[100000] = '\0';
    expect_error(s, AW_ELIMIT, 1, 1001, NULL);
    memset(s, '{', 100000);
    expect_error(s, AW_ESYNTAX, 1, 2, "unexpected '{': expected a string key");
    free(s);
}

/* ---- allocation failures -------------------------------------------------------------- */

static void make_docs(size_t *count, const char ***out) {
    /* the documents the sweeps use: small, many members (hashed keys), many
     * items (scratch growth), deep (frame growth), long strings (big arena
     * blocks), duplicates and index keys (writer orders) */
    static const char *fixed[] = {
        "{\"a\":1,\"b\":[true,false,null],\"c\":\"x\\u00e9\\ud83d\\ude00\\ud800\",\"d\":-1.5e300}",
        "{\"a\":1,\"b\":2,\"a\":{\"9\":[1],\"x\":{},\"1\":\"y\",\"x\":[]}}",
        "[]",
        "\"just a string\"",
    };
    static char big[4][40000];
    size_t o = 0;
    /* 300 members with a duplicate and index keys */
    o = (size_t)snprintf(big[0], sizeof big[0], "{");
    for (int i = 0; i < 300; i++) o += (size_t)snprintf(big[0] + o, sizeof big[0] - o, "\"%s%d\":[%d,{\"k\":%d}],", i % 7 ? "key" : "", i, i, i);
    snprintf(big[0] + o, sizeof big[0] - o, "\"key1\":\"last\"}");
    /* 2000 items */
    o = (size_t)snprintf(big[1], sizeof big[1], "[");
    for (int i = 0; i < 2000; i++) o += (size_t)snprintf(big[1] + o, sizeof big[1] - o, "%s%d", i ? "," : "", i * 7);
    snprintf(big[1] + o, sizeof big[1] - o, "]");
    /* 300 levels of arrays and objects */
    o = 0;
    for (int i = 0; i < 150; i++) o += (size_t)snprintf(big[2] + o, sizeof big[2] - o, "[{\"k%d\":", i);
    o += (size_t)snprintf(big[2] + o, sizeof big[2] - o, "0");
    for (int i = 0; i < 150; i++) o += (size_t)snprintf(big[2] + o, sizeof big[2] - o, "}]");
    /* a 30 KB string with escapes */
    o = (size_t)snprintf(big[3], sizeof big[3], "[\"");
    for (int i = 0; i < 3000; i++) o += (size_t)snprintf(big[3] + o, sizeof big[3] - o, "ab\\n\xC3\xA9\\u0041");
    snprintf(big[3] + o, sizeof big[3] - o, "\",1]");
    static const char *all[8];
    for (int i = 0; i < 4; i++) all[i] = fixed[i];
    for (int i = 0; i < 4; i++) all[4 + i] = big[i];
    *count = 8;
    *out = all;
}

typedef struct sweep_ctx {
    const char *text;
    size_t len;
    int want;              /* the status of a parse that does not run out of memory */
    const aw_json_value *value; /* for the writer sweep */
    int indent;
    const char *expect;    /* the writer's output with no failure */
    bool allow_bom;
} sweep_ctx;

static int parse_fn(const aw_allocator *a, void *ctx) {
    sweep_ctx *c = ctx;
    aw_json_read_options o = {.alloc = a, .allow_bom = c->allow_bom};
    aw_json_doc *d = NULL;
    aw_error err;
    int rc = aw_json_parse(c->text, c->len, &o, &d, &err);
    if (rc == AW_ENOMEM) {
        assert_null(d);
        assert_int_equal(err.code, AW_ENOMEM);
        return rc;
    }
    if (rc != c->want) fail_msg("parse under allocation failures returned %d (%s)", rc, err.message);
    if (rc) {
        assert_null(d);
        return 0;
    }
    /* the document is whole: write it with the same allocator */
    aw_buf b;
    aw_buf_init(&b, a);
    rc = aw_json_write(aw_json_doc_root(d), NULL, &b, &err);
    aw_buf_free(&b);
    aw_json_doc_free(d);
    return rc;
}

static int write_fn(const aw_allocator *a, void *ctx) {
    sweep_ctx *c = ctx;
    aw_buf b;
    aw_buf_init(&b, a);
    if (aw_buf_append(&b, "prefix", 6)) return AW_ENOMEM;
    aw_json_write_options o = {.indent = c->indent};
    aw_error err;
    int rc = aw_json_write(c->value, &o, &b, &err);
    if (rc) {
        assert_int_equal(rc, AW_ENOMEM);
        assert_int_equal(err.code, AW_ENOMEM);
        /* the buffer is left as it was */
        assert_int_equal(b.len, 6);
        assert_string_equal(b.data, "prefix");
    } else {
        assert_string_equal(b.data + 6, c->expect);
    }
    aw_buf_free(&b);
    return rc;
}

static void test_alloc_failures_reader(void **state) {
    (void)state;
    size_t count;
    const char **docs;
    make_docs(&count, &docs);
    for (size_t i = 0; i < count; i++) {
        sweep_ctx c = {docs[i], strlen(docs[i]), 0, NULL, 0, NULL, false};
        long calls = aw_failalloc_run(parse_fn, &c, 0);
        assert_true(calls > 0);
    }
    /* failures on the way to a syntax error, a depth error, a BOM */
    static const struct {
        const char *text;
        int want;
        bool bom;
    } bad[] = {
        {"{\"a\":[1,2,{\"b\":3}] \"c\":1}", AW_ESYNTAX, false},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1,", AW_ESYNTAX, false},
        {"[\"\xFF\"]", AW_EUTF8, false},
        {"\xEF\xBB\xBF{\"a\":[1]}", 0, true},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sweep_ctx c = {bad[i].text, strlen(bad[i].text), bad[i].want, NULL, 0, NULL, bad[i].bom};
        aw_failalloc_run(parse_fn, &c, 0);
    }
    char *deep = malloc(3000);
    assert_non_null(deep);
    memset(deep, '[', 2000);
    deep[2000] = '\0';
    sweep_ctx c = {deep, 2000, AW_ELIMIT, NULL, 0, NULL, false};
    aw_failalloc_run(parse_fn, &c, 0);
    free(deep);
}

static void test_alloc_failures_writer(void **state) {
    (void)state;
    size_t count;
    const char **docs;
    make_docs(&count, &docs);
    for (size_t i = 0; i < count; i++) {
        aw_json_doc *d = parse_ok(docs[i]);
        for (int indent = 0; indent <= 4; indent += 4) {
            char *expect = aw_test_write_json(aw_json_doc_root(d), indent, NULL);
            sweep_ctx c = {NULL, 0, 0, aw_json_doc_root(d), indent, expect, false};
            long calls = aw_failalloc_run(write_fn, &c, 0);
            assert_true(calls > 0);
            free(expect);
        }
        aw_json_doc_free(d);
    }
}

/* ---- writer options touched by reading ---------------------------------------------- */

static void test_indent(void **state) {
    (void)state;
    aw_json_doc *d = parse_ok("{\"a\":[1,{\"b\":null}],\"c\":{},\"d\":[]}");
    const aw_json_value *r = aw_json_doc_root(d);
    char *out = aw_test_write_json(r, 2, NULL);
    assert_string_equal(out, "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {},\n  \"d\": []\n}");
    free(out);
    /* clamped to 0..10 as JSON.stringify clamps */
    char *ten = aw_test_write_json(r, 10, NULL), *big = aw_test_write_json(r, 99, NULL),
         *neg = aw_test_write_json(r, -3, NULL), *zero = aw_test_write_json(r, 0, NULL);
    assert_string_equal(ten, big);
    assert_string_equal(neg, zero);
    assert_string_equal(zero, "{\"a\":[1,{\"b\":null}],\"c\":{},\"d\":[]}");
    free(ten);
    free(big);
    free(neg);
    free(zero);
    /* writing appends */
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_buf_append(&b, "x=", 2), 0);
    assert_int_equal(aw_json_write(aw_json_get(r, "a"), NULL, &b, NULL), 0);
    assert_string_equal(b.data, "x=[1,{\"b\":null}]");
    aw_error err;
    assert_int_equal(aw_json_write(NULL, NULL, &b, &err), AW_EINVAL);
    assert_int_equal(aw_json_write(r, NULL, NULL, &err), AW_EINVAL);
    aw_buf_free(&b);
    aw_json_doc_free(d);
}

/* A length no buffer can have is refused before anything is read or
 * reserved (the up-front reservation adds half the length again, which
 * once could wrap around SIZE_MAX). */
static void test_impossible_length_refused(void **state) {
    (void)state;
    static const char text[] = "{}";
    size_t lens[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 3 * 2 + 1, SIZE_MAX / 2 + SIZE_MAX / 4};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        aw_json_doc *doc = (aw_json_doc *)1;
        aw_error err;
        assert_int_equal(aw_json_parse(text, lens[i], NULL, &doc, &err), AW_ELIMIT);
        assert_null(doc);
    }
}

/* Numbers of 1 to 24 digits before and after the point, with leading
 * zeros after it, inside containers and followed by each byte that may end
 * a number there: digits are gathered 8 bytes at a time, so the byte after
 * the last digit falls at every place of the word. Against strtod. */
static void test_number_digit_runs(void **state) {
    (void)state;
    static const char *const forms[] = {"[%s]", "[%s,%s]", "{\"k\":%s}", "[%s ,%s\t]", "[%s\r\n]", "%s"};
    char text[64], json[160];
    for (int int_digits = 0; int_digits <= 24; int_digits++)
        for (int frac_digits = -1; frac_digits <= 24; frac_digits++)
            for (int zeros = 0; zeros <= 10; zeros += 5) {
                size_t o = 0;
                if ((int_digits + frac_digits) % 3 == 0) text[o++] = '-';
                if (int_digits == 0) text[o++] = '0';
                for (int j = 0; j < int_digits; j++) text[o++] = (char)('1' + (j * 7 + frac_digits + 1) % 9);
                if (frac_digits >= 0) {
                    text[o++] = '.';
                    for (int j = 0; j < zeros; j++) text[o++] = '0';
                    for (int j = 0; j <= frac_digits; j++) text[o++] = (char)('0' + (j * 3 + int_digits) % 10);
                }
                text[o] = 0;
                double want = strtod(text, NULL);
                for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
                    int n = snprintf(json, sizeof json, forms[f], text, text);
                    aw_json_doc *doc = NULL;
                    aw_error err;
                    if (aw_json_parse(json, (size_t)n, NULL, &doc, &err)) fail_msg("%s: %s", json, err.message);
                    const aw_json_value *root = aw_json_doc_root(doc);
                    const aw_json_value *v = aw_json_is_object(root)  ? &root->u.obj.members[0].value
                                             : aw_json_is_array(root) ? aw_json_at(root, 0)
                                                                      : root;
                    if (memcmp(&v->u.num.d, &want, sizeof want) || v->num_len != o)
                        fail_msg("%s: %.17g, strtod %.17g", json, v->u.num.d, want);
                    if (frac_digits < 0 && o <= 18 && (!(v->flags & AW_JSON_F_INT) || (double)v->u.num.i != want))
                        fail_msg("%s: not the exact integer", json);
                    aw_json_doc_free(doc);
                }
            }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_messages),
        cmocka_unit_test(test_number_digit_runs),
        cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_empty_and_trailing),
        cmocka_unit_test(test_string_escapes),
        cmocka_unit_test(test_lone_surrogates),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_access),
        cmocka_unit_test(test_truncated_prefixes),
        cmocka_unit_test(test_huge_string),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_indent),
        cmocka_unit_test(test_alloc_failures_reader),
        cmocka_unit_test(test_alloc_failures_writer),
        cmocka_unit_test(test_impossible_length_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
