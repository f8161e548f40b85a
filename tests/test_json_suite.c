/* The JSON reader against JSONTestSuite's parsing files, from the copy in
 * tests/vectors/JSONTestSuite (so a clone anywhere has them; see the README
 * there), which test_copy_is_current compares with the reference in
 * ../shared/conformance/JSONTestSuite whenever that is present:
 *
 *   y_*.json  must be accepted; each is also written back compactly and the
 *             output must parse again to an equal value.
 *   n_*.json  must be rejected with a code, a message and a position.
 *   i_*.json  implementation-defined; agentwire's decision for each group is
 *             the table below, and it is asserted file by file.
 *
 * The counts of each kind are asserted so a missing or emptied directory
 * fails instead of passing quietly.
 *
 * Decisions for the i_ files (RFC 8259 where it decides, JSON.parse where
 * RFC 8259 leaves the choice to the implementation):
 *
 * | group                              | files                                   | result            |
 * |------------------------------------|-----------------------------------------|-------------------|
 * | numbers too large / too small for  | i_number_* (10)                         | accepted: ±inf or |
 * | a double (huge exponents, long     |                                         | 0 as JSON.parse;  |
 * | integers)                          |                                         | text kept exactly |
 * | lone or mis-ordered surrogate      | i_string_1st_surrogate_but_2nd_missing, | accepted: each    |
 * | escapes ("\ud800", "\udfaa",       | *_incomplete_surrogate*, *_invalid_     | lone half kept as |
 * | "\udd1e\ud834")                    | lonely_surrogate, *_invalid_surrogate,  | its 3-byte form   |
 * |                                    | *_inverted_surrogates_U+1D11E,          | and written back  |
 * |                                    | *_lone_second_surrogate,                | as "\udxxx"       |
 * |                                    | *_1st_valid_surrogate_2nd_invalid,      |                   |
 * |                                    | i_object_key_lone_2nd_surrogate         |                   |
 * | raw bytes inside a string that are | *_UTF-8_invalid_sequence, *_invalid_    | rejected,         |
 * | not UTF-8 (overlong, surrogate     | utf-8, *_iso_latin_1, *_lone_utf8_      | AW_EUTF8          |
 * | ED A0 80, above U+10FFFF, stray or | continuation_byte, *_not_in_unicode_    |                   |
 * | truncated sequences, Latin-1)      | range, *_overlong_sequence_* (3),       |                   |
 * |                                    | *_truncated-utf-8, *_UTF8_surrogate_    |                   |
 * |                                    | U+D800                                  |                   |
 * | UTF-16 documents                   | i_string_utf16BE_no_BOM, i_string_      | rejected,         |
 * |                                    | utf16LE_no_BOM, i_string_UTF-16LE_with_ | AW_ESYNTAX: the   |
 * |                                    | BOM                                     | first bad byte is |
 * |                                    |                                         | outside a string  |
 * |                                    |                                         | (a NUL, or FF),   |
 * |                                    |                                         | where any byte    |
 * |                                    |                                         | that starts no    |
 * |                                    |                                         | token is a syntax |
 * |                                    |                                         | error             |
 * | UTF-8 BOM before the value         | i_structure_UTF-8_BOM_empty_object      | rejected          |
 * |                                    |                                         | (AW_ESYNTAX, as   |
 * |                                    |                                         | JSON.parse);      |
 * |                                    |                                         | accepted with     |
 * |                                    |                                         | allow_bom         |
 * | 500 nested arrays                  | i_structure_500_nested_arrays           | accepted (limit   |
 * |                                    |                                         | is 1000)          |
 *
 * n_structure_100000_opening_arrays.json fails with AW_ELIMIT at the
 * 1001st '[' (default max_depth 1000); the max_depth option is checked on
 * its own below. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
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

#define SUITE_Y 95
#define SUITE_N 188
#define SUITE_I 35

/* ---- the directory ----------------------------------------------------- */

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int cmp_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char suite_dir[4096];

static DIR *open_suite(void) {
    snprintf(suite_dir, sizeof suite_dir, "%s/tests/vectors/JSONTestSuite", AW_SOURCE_DIR);
    return opendir(suite_dir);
}

/* Sorted names of the files starting with prefix ("y_", "n_", "i_"). */
static names list_files(const char *prefix) {
    names ns = {NULL, 0, 0};
    DIR *d = open_suite();
    if (!d) fail_msg("cannot open %s", suite_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
        if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        if (ns.n == ns.cap) {
            ns.cap = ns.cap ? ns.cap * 2 : 64;
            ns.v = realloc(ns.v, ns.cap * sizeof *ns.v);
            assert_non_null(ns.v);
        }
        ns.v[ns.n] = strdup(e->d_name);
        assert_non_null(ns.v[ns.n]);
        ns.n++;
    }
    closedir(d);
    if (ns.n) qsort(ns.v, ns.n, sizeof *ns.v, cmp_name);
    return ns;
}

static void free_names(names *ns) {
    for (size_t i = 0; i < ns->n; i++) free(ns->v[i]);
    free(ns->v);
}

static char *read_case(const char *name, size_t *len) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", suite_dir, name);
    char *text = aw_test_read_file(path, len);
    if (!text) fail_msg("cannot read %s", path);
    return text;
}

/* Parse, and on success write back and parse the output again: it must be
 * accepted and equal to the first value. Returns the parse status. */
static int parse_case(const char *name, const char *text, size_t len, const aw_json_read_options *opts,
                      aw_error *err) {
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(text, len, opts, &doc, err);
    if (rc) {
        assert_null(doc);
        return rc;
    }
    assert_non_null(doc);
    const aw_json_value *root = aw_json_doc_root(doc);
    assert_non_null(root);
    for (int indent = 0; indent <= 2; indent += 2) {
        aw_buf out;
        aw_buf_init(&out, NULL);
        aw_json_write_options wo = {.indent = indent};
        aw_error werr;
        if (aw_json_write(root, &wo, &out, &werr)) fail_msg("%s: write: %s", name, werr.message);
        aw_json_doc *again = NULL;
        aw_error perr;
        if (aw_json_parse(out.data, out.len, NULL, &again, &perr))
            fail_msg("%s: written output does not parse (%s): %s", name, perr.message, out.data);
        if (!aw_json_equal(root, aw_json_doc_root(again))) fail_msg("%s: round trip changed the value", name);
        aw_json_doc_free(again);
        aw_buf_free(&out);
    }
    aw_json_doc_free(doc);
    return 0;
}

static void check_error(const char *name, int rc, const aw_error *err) {
    if (rc >= 0) fail_msg("%s: accepted", name);
    if (err->code != rc) fail_msg("%s: err.code %d, returned %d", name, err->code, rc);
    if (rc != AW_ESYNTAX && rc != AW_EUTF8 && rc != AW_ELIMIT)
        fail_msg("%s: unexpected code %d (%s)", name, rc, err->message);
    if (err->message[0] == '\0') fail_msg("%s: empty message", name);
    if (err->line < 1 || err->column < 1) fail_msg("%s: no position (%zu:%zu)", name, err->line, err->column);
}

/* ---- the copy ------------------------------------------------------------ */

/* The reference directory: the files may sit in JSONTestSuite/ itself or,
 * as in the upstream project, in JSONTestSuite/test_parsing/. */
static int reference_dir(char *dir, size_t size) {
    const char *subs[] = {"conformance/JSONTestSuite/test_parsing", "conformance/JSONTestSuite"};
    for (size_t k = 0; k < 2; k++) {
        snprintf(dir, size, "%s/%s", AW_SHARED_DIR, subs[k]);
        DIR *d = opendir(dir);
        if (d) {
            closedir(d);
            return 0;
        }
    }
    return -1;
}

/* Every y_, n_ and i_ file of the reference is in the copy with the same
 * bytes, and the copy has no others. */
static void test_copy_is_current(void **state) {
    (void)state;
    char ref[4096];
    if (reference_dir(ref, sizeof ref)) {
        print_message("no reference suite under %s; the copy is used as it is\n", AW_SHARED_DIR);
        skip();
    }
    const char *prefixes[] = {"y_", "n_", "i_"};
    for (size_t k = 0; k < 3; k++) {
        names mine = list_files(prefixes[k]); /* the copy's, in suite_dir */
        DIR *d = opendir(ref);
        assert_non_null(d);
        size_t seen = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t nl = strlen(e->d_name);
            if (strncmp(e->d_name, prefixes[k], 2) != 0 || nl < 5 || strcmp(e->d_name + nl - 5, ".json") != 0)
                continue;
            seen++;
            size_t rl = 0, cl = 0;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", ref, e->d_name);
            char *theirs = aw_test_read_file(path, &rl);
            snprintf(path, sizeof path, "%s/%s", suite_dir, e->d_name);
            char *ours = aw_test_read_file(path, &cl);
            if (!theirs) fail_msg("cannot read %s/%s", ref, e->d_name);
            if (!ours) fail_msg("%s is missing from the copy in %s", e->d_name, suite_dir);
            if (rl != cl || memcmp(theirs, ours, rl) != 0) fail_msg("%s differs from the reference", e->d_name);
            free(theirs);
            free(ours);
        }
        closedir(d);
        if (seen != mine.n) fail_msg("%s files: %zu in the reference, %zu in the copy", prefixes[k], seen, mine.n);
        free_names(&mine);
    }
}

/* ---- y_ ------------------------------------------------------------------ */

static void test_y_accepted(void **state) {
    (void)state;
    names ns = list_files("y_");
    assert_int_equal(ns.n, SUITE_Y);
    for (size_t i = 0; i < ns.n; i++) {
        size_t len;
        char *text = read_case(ns.v[i], &len);
        aw_error err;
        int rc = parse_case(ns.v[i], text, len, NULL, &err);
        if (rc) fail_msg("%s: rejected at %zu:%zu: %s", ns.v[i], err.line, err.column, err.message);
        free(text);
    }
    free_names(&ns);
}

/* ---- n_ ------------------------------------------------------------------ */

static void test_n_rejected(void **state) {
    (void)state;
    names ns = list_files("n_");
    assert_int_equal(ns.n, SUITE_N);
    int limited = 0;
    for (size_t i = 0; i < ns.n; i++) {
        size_t len;
        char *text = read_case(ns.v[i], &len);
        aw_error err;
        memset(&err, 0, sizeof err);
        int rc = parse_case(ns.v[i], text, len, NULL, &err);
        check_error(ns.v[i], rc, &err);
        if (strcmp(ns.v[i], "n_structure_100000_opening_arrays.json") == 0) {
            assert_int_equal(rc, AW_ELIMIT);
            assert_int_equal(err.line, 1);
            assert_int_equal(err.column, AW_JSON_DEFAULT_MAX_DEPTH + 1);
            assert_int_equal(err.offset, AW_JSON_DEFAULT_MAX_DEPTH);
            limited++;
        } else if (strcmp(ns.v[i], "n_structure_open_array_object.json") == 0) {
            /* [{"":[{"":... 50,000 times: refused at the limit too, before
             * reading on to the missing end */
            assert_int_equal(rc, AW_ELIMIT);
            limited++;
        } else {
            /* nothing else in the suite is deep enough to hit the limit */
            assert_int_not_equal(rc, AW_ELIMIT);
        }
        free(text);
    }
    assert_int_equal(limited, 2);
    free_names(&ns);
}

/* A few n_ files with the exact reason, to pin down the messages users see. */
static void test_n_reasons(void **state) {
    (void)state;
    static const struct {
        const char *file;
        int code;
        size_t line, column;
        const char *message;
    } cases[] = {
        {"n_array_extra_comma.json", AW_ESYNTAX, 1, 5, "trailing comma before ']'"},
        {"n_object_trailing_comma.json", AW_ESYNTAX, 1, 9, "trailing comma before '}'"},
        {"n_number_-01.json", AW_ESYNTAX, 1, 3, "leading zeros are not allowed in numbers"},
        {"n_string_unescaped_tab.json", AW_ESYNTAX, 1, 3, "control character U+0009 in string must be escaped"},
        {"n_string_escape_x.json", AW_ESYNTAX, 1, 3, "invalid escape sequence in string"},
        {"n_structure_no_data.json", AW_ESYNTAX, 1, 1, "unexpected end of input"},
        {"n_array_1_true_without_comma.json", AW_ESYNTAX, 1, 4,
         "unexpected 't': expected ',' or ']' after an array element"},
        {"n_structure_null-byte-outside-string.json", AW_ESYNTAX, 1, 2, "unexpected NUL byte: expected a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        names ns = list_files("n_"); /* sets suite_dir */
        free_names(&ns);
        size_t len;
        char *text = read_case(cases[i].file, &len);
        aw_json_doc *doc = NULL;
        aw_error err;
        int rc = aw_json_parse(text, len, NULL, &doc, &err);
        if (rc != cases[i].code || err.line != cases[i].line || err.column != cases[i].column ||
            strcmp(err.message, cases[i].message) != 0)
            fail_msg("%s: got %d at %zu:%zu \"%s\"", cases[i].file, rc, err.line, err.column, err.message);
        assert_null(doc);
        free(text);
    }
}

/* ---- i_ ------------------------------------------------------------------ */

typedef enum ikind { I_NUMBER, I_SURROGATE, I_BAD_UTF8, I_UTF16, I_BOM, I_NESTED } ikind;

static const struct {
    const char *file;
    ikind kind;
} i_cases[SUITE_I] = {
    {"i_number_double_huge_neg_exp.json", I_NUMBER},
    {"i_number_huge_exp.json", I_NUMBER},
    {"i_number_neg_int_huge_exp.json", I_NUMBER},
    {"i_number_pos_double_huge_exp.json", I_NUMBER},
    {"i_number_real_neg_overflow.json", I_NUMBER},
    {"i_number_real_pos_overflow.json", I_NUMBER},
    {"i_number_real_underflow.json", I_NUMBER},
    {"i_number_too_big_neg_int.json", I_NUMBER},
    {"i_number_too_big_pos_int.json", I_NUMBER},
    {"i_number_very_big_negative_int.json", I_NUMBER},
    {"i_object_key_lone_2nd_surrogate.json", I_SURROGATE},
    {"i_string_1st_surrogate_but_2nd_missing.json", I_SURROGATE},
    {"i_string_1st_valid_surrogate_2nd_invalid.json", I_SURROGATE},
    {"i_string_UTF-16LE_with_BOM.json", I_UTF16},
    {"i_string_UTF-8_invalid_sequence.json", I_BAD_UTF8},
    {"i_string_UTF8_surrogate_U+D800.json", I_BAD_UTF8},
    {"i_string_incomplete_surrogate_and_escape_valid.json", I_SURROGATE},
    {"i_string_incomplete_surrogate_pair.json", I_SURROGATE},
    {"i_string_incomplete_surrogates_escape_valid.json", I_SURROGATE},
    {"i_string_invalid_lonely_surrogate.json", I_SURROGATE},
    {"i_string_invalid_surrogate.json", I_SURROGATE},
    {"i_string_invalid_utf-8.json", I_BAD_UTF8},
    {"i_string_inverted_surrogates_U+1D11E.json", I_SURROGATE},
    {"i_string_iso_latin_1.json", I_BAD_UTF8},
    {"i_string_lone_second_surrogate.json", I_SURROGATE},
    {"i_string_lone_utf8_continuation_byte.json", I_BAD_UTF8},
    {"i_string_not_in_unicode_range.json", I_BAD_UTF8},
    {"i_string_overlong_sequence_2_bytes.json", I_BAD_UTF8},
    {"i_string_overlong_sequence_6_bytes.json", I_BAD_UTF8},
    {"i_string_overlong_sequence_6_bytes_null.json", I_BAD_UTF8},
    {"i_string_truncated-utf-8.json", I_BAD_UTF8},
    {"i_string_utf16BE_no_BOM.json", I_UTF16},
    {"i_string_utf16LE_no_BOM.json", I_UTF16},
    {"i_structure_500_nested_arrays.json", I_NESTED},
    {"i_structure_UTF-8_BOM_empty_object.json", I_BOM},
};

/* The exact value each accepted number file gives, as JSON.parse sees it,
 * and how aw_json_write prints it (JSON.stringify). */
static const struct {
    const char *file;
    double d;
    const char *written;
} i_numbers[] = {
    {"i_number_double_huge_neg_exp.json", 0.0, "[0]"},
    {"i_number_huge_exp.json", INFINITY, "[null]"},
    {"i_number_neg_int_huge_exp.json", -INFINITY, "[null]"},
    {"i_number_pos_double_huge_exp.json", INFINITY, "[null]"},
    {"i_number_real_neg_overflow.json", -INFINITY, "[null]"},
    {"i_number_real_pos_overflow.json", INFINITY, "[null]"},
    {"i_number_real_underflow.json", 0.0, "[0]"},
    {"i_number_too_big_neg_int.json", -123123123123123123123123123123.0, "[-1.2312312312312312e+29]"},
    {"i_number_too_big_pos_int.json", 1e20, "[100000000000000000000]"},
    {"i_number_very_big_negative_int.json", -237462374673276894279832749832423479823246327846.0,
     "[-2.374623746732769e+47]"},
};

/* What aw_json_write gives for the strings of the surrogate files. */
static const struct {
    const char *file;
    const char *written;
} i_surrogates[] = {
    {"i_object_key_lone_2nd_surrogate.json", "{\"\\udfaa\":0}"},
    {"i_string_1st_surrogate_but_2nd_missing.json", "[\"\\udada\"]"},
    {"i_string_1st_valid_surrogate_2nd_invalid.json", "[\"\\ud888\xE1\x88\xB4\"]"},
    {"i_string_incomplete_surrogate_and_escape_valid.json", "[\"\\ud800\\n\"]"},
    {"i_string_incomplete_surrogate_pair.json", "[\"\\udd1ea\"]"},
    {"i_string_incomplete_surrogates_escape_valid.json", "[\"\\ud800\\ud800\\n\"]"},
    {"i_string_invalid_lonely_surrogate.json", "[\"\\ud800\"]"},
    {"i_string_invalid_surrogate.json", "[\"\\ud800abc\"]"},
    {"i_string_inverted_surrogates_U+1D11E.json", "[\"\\udd1e\\ud834\"]"},
    {"i_string_lone_second_surrogate.json", "[\"\\udfaa\"]"},
};

static char *write_compact(const aw_json_value *v) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(v, NULL, &b, NULL), 0);
    return b.data;
}

static void check_i_accepted(const char *name, const char *text, size_t len, ikind kind) {
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_json_parse(text, len, NULL, &doc, &err);
    if (rc) fail_msg("%s: rejected (%s at %zu:%zu), the decision is to accept", name, err.message, err.line,
                     err.column);
    const aw_json_value *root = aw_json_doc_root(doc);
    char *out = write_compact(root);
    if (kind == I_NUMBER) {
        const aw_json_value *n = aw_json_at(root, 0);
        assert_true(aw_json_is_number(n));
        /* the literal is kept as written, whatever its double became */
        assert_int_equal(n->num_len, len - 2);
        assert_memory_equal(n->u.num.text, text + 1, n->num_len);
        bool found = false;
        for (size_t i = 0; i < sizeof i_numbers / sizeof i_numbers[0]; i++) {
            if (strcmp(i_numbers[i].file, name)) continue;
            found = true;
            if (n->u.num.d != i_numbers[i].d) fail_msg("%s: value %.17g", name, n->u.num.d);
            if (strcmp(out, i_numbers[i].written)) fail_msg("%s: written %s", name, out);
        }
        assert_true(found);
        /* none of them fits an int64 */
        assert_false(n->flags & AW_JSON_F_INT);
    } else if (kind == I_SURROGATE) {
        bool found = false;
        for (size_t i = 0; i < sizeof i_surrogates / sizeof i_surrogates[0]; i++) {
            if (strcmp(i_surrogates[i].file, name)) continue;
            found = true;
            if (strcmp(out, i_surrogates[i].written)) fail_msg("%s: written %s", name, out);
        }
        assert_true(found);
        /* and the written form reads back to the same code units */
        aw_json_doc *again = NULL;
        assert_int_equal(aw_json_parse(out, strlen(out), NULL, &again, NULL), 0);
        assert_true(aw_json_equal(root, aw_json_doc_root(again)));
        aw_json_doc_free(again);
    } else if (kind == I_NESTED) {
        size_t depth = 0;
        const aw_json_value *v = root;
        while (aw_json_is_array(v)) {
            depth++;
            v = aw_json_at(v, 0);
        }
        assert_int_equal(depth, 500);
    }
    free(out);
    aw_json_doc_free(doc);
}

static void check_i_rejected(const char *name, const char *text, size_t len, int want) {
    aw_json_doc *doc = NULL;
    aw_error err;
    memset(&err, 0, sizeof err);
    int rc = aw_json_parse(text, len, NULL, &doc, &err);
    if (rc != want)
        fail_msg("%s: returned %d (%s at %zu:%zu), the decision is %d", name, rc, err.message, err.line, err.column,
                 want);
    assert_null(doc);
    check_error(name, rc, &err);
}

static void test_i_decisions(void **state) {
    (void)state;
    names ns = list_files("i_");
    assert_int_equal(ns.n, SUITE_I);
    size_t per_kind[6] = {0};
    for (size_t i = 0; i < ns.n; i++) {
        /* every i_ file on disk has a decision in the table */
        size_t k = 0;
        while (k < SUITE_I && strcmp(i_cases[k].file, ns.v[i])) k++;
        if (k == SUITE_I) fail_msg("%s: no decision recorded for this file", ns.v[i]);
        ikind kind = i_cases[k].kind;
        per_kind[kind]++;
        size_t len;
        char *text = read_case(ns.v[i], &len);
        switch (kind) {
        case I_NUMBER:
        case I_SURROGATE:
        case I_NESTED: check_i_accepted(ns.v[i], text, len, kind); break;
        case I_BAD_UTF8: check_i_rejected(ns.v[i], text, len, AW_EUTF8); break;
        case I_UTF16: check_i_rejected(ns.v[i], text, len, AW_ESYNTAX); break;
        case I_BOM: {
            check_i_rejected(ns.v[i], text, len, AW_ESYNTAX);
            aw_json_read_options o = {.allow_bom = true};
            aw_json_doc *doc = NULL;
            assert_int_equal(aw_json_parse(text, len, &o, &doc, NULL), 0);
            assert_true(aw_json_is_object(aw_json_doc_root(doc)));
            assert_int_equal(aw_json_count(aw_json_doc_root(doc)), 0);
            aw_json_doc_free(doc);
            break;
        }
        }
        free(text);
    }
    assert_int_equal(per_kind[I_NUMBER], 10);
    assert_int_equal(per_kind[I_SURROGATE], 10);
    assert_int_equal(per_kind[I_BAD_UTF8], 10);
    assert_int_equal(per_kind[I_UTF16], 3);
    assert_int_equal(per_kind[I_BOM], 1);
    assert_int_equal(per_kind[I_NESTED], 1);
    free_names(&ns);
}

/* ---- around the suite: BOM and depth ------------------------------------ */

/* allow_bom accepts exactly one leading BOM, and only a whole one. */
static void test_bom_option(void **state) {
    (void)state;
    aw_json_read_options o = {.allow_bom = true};
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse("\xEF\xBB\xBF[1]", 6, &o, &doc, &err), 0);
    aw_json_doc_free(doc);
    assert_int_equal(aw_json_parse("\xEF\xBB\xBF\xEF\xBB\xBF[1]", 9, &o, &doc, &err), AW_ESYNTAX);
    assert_int_equal(aw_json_parse("\xEF\xBB[1]", 5, &o, &doc, &err), AW_ESYNTAX);
    assert_int_equal(aw_json_parse("\xEF\xBB\xBF", 3, &o, &doc, &err), AW_ESYNTAX);
    assert_string_equal(err.message, "unexpected end of input");
    /* a BOM after whitespace is not a BOM but a stray character */
    assert_int_equal(aw_json_parse(" \xEF\xBB\xBF[1]", 7, &o, &doc, &err), AW_ESYNTAX);
    assert_int_equal(aw_json_parse("\xEF\xBB\xBF[1]", 6, NULL, &doc, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.column, 1);
    assert_null(doc);
}

static char *nested(size_t depth, const char *open, const char *inner, const char *close) {
    size_t lo = strlen(open), li = strlen(inner), lc = strlen(close);
    char *s = malloc(depth * (lo + lc) + li + 1);
    assert_non_null(s);
    char *p = s;
    for (size_t i = 0; i < depth; i++, p += lo) memcpy(p, open, lo);
    memcpy(p, inner, li);
    p += li;
    for (size_t i = 0; i < depth; i++, p += lc) memcpy(p, close, lc);
    *p = '\0';
    return s;
}

static int parse_depth(const char *s, size_t max_depth, aw_error *err) {
    aw_json_read_options o = {.max_depth = max_depth};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(s, strlen(s), &o, &doc, err);
    aw_json_doc_free(doc);
    return rc;
}

static void test_depth_limit(void **state) {
    (void)state;
    aw_error err;
    /* max_depth 5: five levels of either kind pass, six fail at the sixth opener */
    char *a5 = nested(5, "[", "1", "]"), *a6 = nested(6, "[", "1", "]");
    char *o5 = nested(5, "{\"k\":", "1", "}"), *o6 = nested(6, "{\"k\":", "1", "}");
    char *m6 = nested(2, "[{\"k\":", "[[]]", "}]"); /* [{"k":[{"k":[[]]}]}] */
    assert_int_equal(parse_depth(a5, 5, &err), 0);
    assert_int_equal(parse_depth(o5, 5, &err), 0);
    assert_int_equal(parse_depth(a6, 5, &err), AW_ELIMIT);
    assert_int_equal(err.column, 6);
    assert_string_equal(err.message, "nesting deeper than 5 levels");
    assert_int_equal(parse_depth(o6, 5, &err), AW_ELIMIT);
    assert_int_equal(err.column, 6 * 5 - 4);
    /* the empty container innermost still counts as a level */
    assert_int_equal(parse_depth(m6, 5, &err), AW_ELIMIT);
    assert_int_equal(parse_depth(m6, 6, &err), 0);
    /* a scalar inside does not count */
    assert_int_equal(parse_depth("[[[[[\"x\"]]]]]", 5, &err), 0);
    assert_int_equal(parse_depth("[[[[[[]]]]]]", 5, &err), AW_ELIMIT);
    assert_int_equal(parse_depth("[[[[[[]]]]]]", 6, &err), 0);
    /* depth is nesting, not the number of containers: many siblings are fine */
    assert_int_equal(parse_depth("[[],[],{},[[]],{\"a\":[]}]", 3, &err), 0);
    assert_int_equal(parse_depth("[1]", 1, &err), 0);
    assert_int_equal(parse_depth("[[1]]", 1, &err), AW_ELIMIT);
    assert_int_equal(parse_depth("1", 1, &err), 0);
    free(a5);
    free(a6);
    free(o5);
    free(o6);
    free(m6);

    /* the default: 1000 levels pass, 1001 fail; 0 means the default */
    char *d1000 = nested(1000, "[", "", "]"), *d1001 = nested(1001, "[", "", "]");
    assert_int_equal(parse_depth(d1000, 0, &err), 0);
    assert_int_equal(parse_depth(d1001, 0, &err), AW_ELIMIT);
    assert_int_equal(err.column, 1001);
    assert_int_equal(parse_depth(d1001, 1001, &err), 0);
    free(d1000);
    free(d1001);

    /* a much larger limit on request, with no recursion in the reader */
    char *deep = nested(200000, "[", "", "]");
    assert_int_equal(parse_depth(deep, 300000, &err), 0);
    assert_int_equal(parse_depth(deep, 0, &err), AW_ELIMIT);
    free(deep);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_y_accepted),     cmocka_unit_test(test_n_rejected),
        cmocka_unit_test(test_n_reasons),      cmocka_unit_test(test_i_decisions),
        cmocka_unit_test(test_bom_option),     cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_copy_is_current),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
