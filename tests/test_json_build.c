/* The JSON builder: new values, object_set (JavaScript assignment order),
 * array_push, nested filling through the mutable look-ups, deep copy,
 * equality, the writer's output for built values, bad arguments, and
 * allocation failures. */
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

static void expect_written(const aw_json_value *v, const char *want) {
    char *out = aw_test_write_json(v, 0, NULL);
    if (strcmp(out, want)) fail_msg("written: %s\n wanted: %s", out, want);
    free(out);
}

static aw_json_doc *parse_ok(const char *text) {
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err)) fail_msg("bad fixture: %s", err.message);
    return d;
}

/* ---- a document built from scratch ----------------------------------------------- */

/* Builds {"name":"agentwire","version":1,"pi":3.14,"ok":true,"none":null,
 * "tags":["a","b"],"nested":{"x":[],"y":{"z":-2}}} with alloc; every step
 * checked. Returns 0 or AW_ENOMEM (doc freed). */
static int build_sample(const aw_allocator *alloc, aw_json_doc **out) {
    *out = NULL;
    aw_json_doc *d = aw_json_doc_new(alloc);
    if (!d) return AW_ENOMEM;
    int rc = AW_ENOMEM;
    aw_json_value *root = aw_json_new_object(d);
    if (!root) goto fail;
    if (aw_json_object_set_string(d, root, "name", "agentwire", 9)) goto fail;
    if (aw_json_object_set_int(d, root, "version", 1)) goto fail;
    if (aw_json_object_set_number(d, root, "pi", 3.14)) goto fail;
    if (aw_json_object_set_bool(d, root, "ok", true)) goto fail;
    if (aw_json_object_set_null(d, root, "none")) goto fail;
    aw_json_value *tags = aw_json_new_array(d);
    if (!tags) goto fail;
    aw_json_value *a = aw_json_new_string(d, "a", 1), *b = aw_json_new_string(d, "b", 1);
    if (!a || !b) goto fail;
    if (aw_json_array_push(d, tags, a) || aw_json_array_push(d, tags, b)) goto fail;
    if (aw_json_object_set(d, root, "tags", 4, tags)) goto fail;
    /* add empty containers first, then fill them through the look-ups */
    aw_json_value *nested = aw_json_new_object(d);
    if (!nested || aw_json_object_set(d, root, "nested", 6, nested)) goto fail;
    aw_json_value *n = aw_json_get_mut(root, "nested");
    aw_json_value *x = aw_json_new_array(d), *y = aw_json_new_object(d);
    if (!x || !y) goto fail;
    if (aw_json_object_set(d, n, "x", 1, x) || aw_json_object_set(d, n, "y", 1, y)) goto fail;
    if (aw_json_object_set_int(d, aw_json_get_mut(n, "y"), "z", -2)) goto fail;
    aw_json_doc_set_root(d, root);
    *out = d;
    return 0;
fail:
    aw_json_doc_free(d);
    return rc;
}

static const char sample_compact[] = "{\"name\":\"agentwire\",\"version\":1,\"pi\":3.14,\"ok\":true,\"none\":null,"
                                     "\"tags\":[\"a\",\"b\"],\"nested\":{\"x\":[],\"y\":{\"z\":-2}}}";

static void test_build_and_write(void **state) {
    (void)state;
    aw_json_doc *d;
    assert_int_equal(build_sample(NULL, &d), 0);
    const aw_json_value *root = aw_json_doc_root(d);
    expect_written(root, sample_compact);
    char *out = aw_test_write_json(root, 2, NULL);
    assert_string_equal(out, "{\n  \"name\": \"agentwire\",\n  \"version\": 1,\n  \"pi\": 3.14,\n  \"ok\": true,\n"
                             "  \"none\": null,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"nested\": {\n"
                             "    \"x\": [],\n    \"y\": {\n      \"z\": -2\n    }\n  }\n}");
    free(out);
    /* the built value equals the parsed one, and reads the same way */
    aw_json_doc *p = parse_ok(sample_compact);
    assert_true(aw_json_equal(root, aw_json_doc_root(p)));
    aw_json_doc_free(p);
    assert_int_equal(aw_json_count(root), 7);
    assert_string_equal(aw_json_get(root, "name")->u.str.ptr, "agentwire");
    assert_int_equal(aw_json_get(root, "version")->u.num.i, 1);
    assert_true(aw_json_get(root, "version")->flags & AW_JSON_F_INT);
    assert_true(aw_json_get(root, "pi")->u.num.d == 3.14);
    assert_true(aw_json_is_null(aw_json_get(root, "none")));
    assert_string_equal(aw_json_at(aw_json_get(root, "tags"), 1)->u.str.ptr, "b");
    aw_json_doc_free(d);

    /* a fresh document has no root until one is set */
    d = aw_json_doc_new(NULL);
    assert_null(aw_json_doc_root(d));
    aw_json_value *v = aw_json_new_int(d, 5);
    aw_json_doc_set_root(d, v);
    assert_ptr_equal(aw_json_doc_root(d), v);
    aw_json_doc_set_root(NULL, v);
    aw_json_doc_free(d);
}

static void test_scalars(void **state) {
    (void)state;
    aw_json_doc *d = aw_json_doc_new(NULL);
    assert_non_null(d);
    static const struct {
        double d;
        const char *want;
        bool is_int;
    } nums[] = {
        {0.0, "0", true},
        {-0.0, "0", true},
        {1.0, "1", true},
        {-7.0, "-7", true},
        {0.1, "0.1", false},
        {1.5, "1.5", false},
        {0.1 + 0.2, "0.30000000000000004", false},
        {1e21, "1e+21", false},
        {1e20, "100000000000000000000", false}, /* above INT64_MAX */
        {1e-7, "1e-7", false},
        {123456789.125, "123456789.125", false},
        {9007199254740992.0, "9007199254740992", true},
        {1e300, "1e+300", false},
        {-5e-324, "-5e-324", false},
        {INFINITY, "null", false},
        {-INFINITY, "null", false},
        {NAN, "null", false},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        aw_json_value *v = aw_json_new_number(d, nums[i].d);
        assert_non_null(v);
        assert_true(aw_json_is_number(v));
        if (((v->flags & AW_JSON_F_INT) != 0) != nums[i].is_int) fail_msg("%s: int flag", nums[i].want);
        if (nums[i].is_int) assert_true((double)v->u.num.i == nums[i].d);
        expect_written(v, nums[i].want);
    }
    /* integers: exact in the value, written as JavaScript prints the Number */
    static const struct {
        int64_t i;
        const char *want;
    } ints[] = {
        {0, "0"},
        {-1, "-1"},
        {9007199254740991LL, "9007199254740991"},
        {-9007199254740991LL, "-9007199254740991"},
        {9007199254740993LL, "9007199254740992"},
        {INT64_MAX, "9223372036854776000"},
        {INT64_MIN, "-9223372036854776000"},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        aw_json_value *v = aw_json_new_int(d, ints[i].i);
        assert_non_null(v);
        assert_true(v->flags & AW_JSON_F_INT);
        assert_true(v->u.num.i == ints[i].i);
        assert_true(v->u.num.d == (double)ints[i].i);
        expect_written(v, ints[i].want);
    }
    expect_written(aw_json_new_null(d), "null");
    expect_written(aw_json_new_bool(d, true), "true");
    expect_written(aw_json_new_bool(d, false), "false");

    /* strings: bytes copied with their length, escaped as JSON.stringify does */
    char src[] = "a\"b\\c\n\x01\x7f\0z";
    aw_json_value *s = aw_json_new_string(d, src, sizeof src - 1);
    assert_non_null(s);
    src[0] = 'X'; /* a copy, not a reference */
    assert_int_equal(s->u.str.len, 10);
    assert_int_equal(s->u.str.ptr[10], 0);
    expect_written(s, "\"a\\\"b\\\\c\\n\\u0001\x7f\\u0000z\"");
    expect_written(aw_json_new_string(d, "", 0), "\"\"");
    expect_written(aw_json_new_string(d, NULL, 0), "\"\"");
    assert_null(aw_json_new_string(d, NULL, 3));
    /* a lone surrogate kept in its 3-byte form is written as an escape; bytes
     * that are not UTF-8 become U+FFFD */
    expect_written(aw_json_new_string(d, "\xED\xA0\x80", 3), "\"\\ud800\"");
    expect_written(aw_json_new_string(d, "a\xFF" "b\xC3", 4), "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
    expect_written(aw_json_new_string(d, "\xE2\x80\xA8\xF0\x9F\x98\x80", 7), "\"\xE2\x80\xA8\xF0\x9F\x98\x80\"");
    aw_json_doc_free(d);
}

/* ---- objects: assignment semantics --------------------------------------------------- */

static void test_object_set(void **state) {
    (void)state;
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *o = aw_json_new_object(d);
    expect_written(o, "{}");
    assert_int_equal(aw_json_object_set_int(d, o, "a", 1), 0);
    assert_int_equal(aw_json_object_set_int(d, o, "b", 2), 0);
    /* an existing key keeps its place and takes the new value */
    assert_int_equal(aw_json_object_set_string(d, o, "a", "three", 5), 0);
    assert_int_equal(aw_json_count(o), 2);
    expect_written(o, "{\"a\":\"three\",\"b\":2}");
    /* keys are copied, may hold NUL, and may be empty */
    char key[] = "k\0ey";
    aw_json_value *t = aw_json_new_bool(d, true);
    assert_int_equal(aw_json_object_set(d, o, key, 4, t), 0);
    key[0] = 'X';
    assert_non_null(aw_json_getn(o, "k\0ey", 4));
    assert_int_equal(aw_json_object_set_null(d, o, ""), 0);
    expect_written(o, "{\"a\":\"three\",\"b\":2,\"k\\u0000ey\":true,\"\":null}");
    /* array-index keys are written first in ascending order, as JavaScript
     * orders an object's own keys */
    aw_json_value *ix = aw_json_new_object(d);
    assert_int_equal(aw_json_object_set_int(d, ix, "b", 1), 0);
    assert_int_equal(aw_json_object_set_int(d, ix, "10", 2), 0);
    assert_int_equal(aw_json_object_set_int(d, ix, "2", 3), 0);
    assert_int_equal(aw_json_object_set_int(d, ix, "02", 4), 0);
    assert_int_equal(aw_json_object_set_int(d, ix, "2", 5), 0);
    assert_true(ix->flags & AW_JSON_F_INDEXKEYS);
    expect_written(ix, "{\"2\":5,\"10\":2,\"b\":1,\"02\":4}");
    /* many keys, each set twice: still one member per key, in first order */
    aw_json_value *many = aw_json_new_object(d);
    char k[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 500; i++) {
            snprintf(k, sizeof k, "key%d", i);
            assert_int_equal(aw_json_object_set_int(d, many, k, pass * 1000 + i), 0);
        }
    assert_int_equal(aw_json_count(many), 500);
    assert_int_equal(aw_json_get(many, "key0")->u.num.i, 1000);
    assert_int_equal(aw_json_get(many, "key499")->u.num.i, 1499);
    assert_string_equal(many->u.obj.members[499].key, "key499");
    /* setting a member to the value of another member of the same object */
    assert_int_equal(aw_json_object_set(d, o, "copy", 4, aw_json_get(o, "b")), 0);
    assert_int_equal(aw_json_get(o, "copy")->u.num.i, 2);
    aw_json_doc_free(d);
}

/* ---- arrays and nesting ------------------------------------------------------------------- */

static void test_arrays_and_nesting(void **state) {
    (void)state;
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *arr = aw_json_new_array(d);
    expect_written(arr, "[]");
    for (int i = 0; i < 10000; i++) assert_int_equal(aw_json_array_push(d, arr, aw_json_new_int(d, i)), 0);
    assert_int_equal(aw_json_count(arr), 10000);
    assert_int_equal(aw_json_at(arr, 9999)->u.num.i, 9999);
    char *out = aw_test_write_json(arr, 0, NULL);
    assert_memory_equal(out, "[0,1,2,3,", 9);
    assert_string_equal(out + strlen(out) - 11, ",9998,9999]");
    free(out);

    /* push is a struct copy: a container filled after pushing is reached
     * through at_mut, as the header says */
    aw_json_value *outer = aw_json_new_array(d);
    aw_json_value *inner = aw_json_new_array(d);
    assert_int_equal(aw_json_array_push(d, outer, inner), 0);
    assert_int_equal(aw_json_array_push(d, aw_json_at_mut(outer, 0), aw_json_new_string(d, "in", 2)), 0);
    expect_written(outer, "[[\"in\"]]");
    /* the copy pushed earlier does not see the original's later growth */
    assert_int_equal(aw_json_array_push(d, inner, aw_json_new_null(d)), 0);
    expect_written(outer, "[[\"in\"]]");
    expect_written(inner, "[null]");

    /* a value pushed twice is two entries */
    aw_json_value *twice = aw_json_new_array(d);
    aw_json_value *one = aw_json_new_int(d, 1);
    assert_int_equal(aw_json_array_push(d, twice, one), 0);
    assert_int_equal(aw_json_array_push(d, twice, one), 0);
    expect_written(twice, "[1,1]");

    /* 200 levels built by filling through the look-ups */
    aw_json_value *root = aw_json_new_object(d);
    aw_json_value *cur = root;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(aw_json_object_set(d, cur, "a", 1, aw_json_new_array(d)), 0);
        aw_json_value *a = aw_json_get_mut(cur, "a");
        assert_int_equal(aw_json_array_push(d, a, aw_json_new_object(d)), 0);
        cur = aw_json_at_mut(a, 0);
    }
    assert_int_equal(aw_json_object_set_int(d, cur, "end", 1), 0);
    out = aw_test_write_json(root, 0, NULL);
    assert_int_equal(strlen(out), 100 * strlen("{\"a\":[") + strlen("{\"end\":1}") + 100 * 2);
    /* and it parses back equal */
    aw_json_doc *p = parse_ok(out);
    assert_true(aw_json_equal(root, aw_json_doc_root(p)));
    aw_json_doc_free(p);
    free(out);
    aw_json_doc_free(d);
}

/* ---- copy and equality ---------------------------------------------------------------------- */

static void test_copy(void **state) {
    (void)state;
    static const char text[] = "{\"a\":[1,2.50,{\"b\":\"x\\u0000y\"}],\"n\":9007199254740993,\"a\":{\"1\":true,\"0\":null},"
                               "\"s\":\"\\ud800\",\"e\":{},\"f\":[],\"big\":1e400}";
    aw_json_doc *src = parse_ok(text);
    char *want = aw_test_write_json(aw_json_doc_root(src), 0, NULL);
    assert_string_equal(want, "{\"a\":{\"0\":null,\"1\":true},\"n\":9007199254740992,\"s\":\"\\ud800\",\"e\":{},\"f\":[],"
                              "\"big\":null}");
    aw_json_doc *dst = aw_json_doc_new(NULL);
    aw_json_value *c = aw_json_copy(dst, aw_json_doc_root(src));
    assert_non_null(c);
    assert_true(aw_json_equal(c, aw_json_doc_root(src)));
    aw_json_doc_free(src); /* the copy owns everything it needs */
    expect_written(c, want);
    /* number text, exact integer and duplicate members come along */
    const aw_json_value *n = aw_json_get(c, "n");
    assert_int_equal(n->num_len, 16);
    assert_memory_equal(n->u.num.text, "9007199254740993", 16);
    assert_true(n->u.num.i == 9007199254740993LL);
    assert_int_equal(aw_json_count(c), 7);
    assert_true(c->flags & AW_JSON_F_DUPKEYS);
    assert_true(aw_json_is_object(aw_json_get(c, "a"))); /* the last of the two "a" */
    /* a copy is independent: changing it leaves the original alone */
    aw_json_value *c2 = aw_json_copy(dst, c);
    assert_int_equal(aw_json_object_set_int(dst, c2, "n", 1), 0);
    assert_int_equal(aw_json_object_set_int(dst, aw_json_get_mut(c2, "a"), "2", 2), 0);
    expect_written(c, want);
    expect_written(c2, "{\"a\":{\"0\":null,\"1\":true,\"2\":2},\"n\":1,\"s\":\"\\ud800\",\"e\":{},\"f\":[],\"big\":null}");
    assert_false(aw_json_equal(c, c2));
    /* copying scalars and built values, into the same document */
    aw_json_value *s = aw_json_copy(dst, aw_json_new_string(dst, "abc", 3));
    expect_written(s, "\"abc\"");
    aw_json_value *num = aw_json_copy(dst, aw_json_new_number(dst, 0.5));
    expect_written(num, "0.5");
    assert_null(aw_json_copy(dst, NULL));
    assert_null(aw_json_copy(NULL, c));
    aw_json_doc_free(dst);
    free(want);
}

static bool eq(const char *a, const char *b) {
    aw_json_doc *x = parse_ok(a), *y = parse_ok(b);
    bool r = aw_json_equal(aw_json_doc_root(x), aw_json_doc_root(y));
    /* equality is symmetric */
    assert_true(r == aw_json_equal(aw_json_doc_root(y), aw_json_doc_root(x)));
    aw_json_doc_free(x);
    aw_json_doc_free(y);
    return r;
}

static void test_equal(void **state) {
    (void)state;
    assert_true(eq("1", "1.0"));
    assert_true(eq("100", "1e2"));
    assert_true(eq("0", "-0"));
    assert_true(eq("9007199254740993", "9007199254740992")); /* the same double */
    assert_true(eq("1e400", "2e400"));
    assert_false(eq("1", "2"));
    assert_false(eq("1", "\"1\""));
    assert_false(eq("null", "false"));
    assert_false(eq("true", "false"));
    assert_true(eq("\"a\\u0000b\"", "\"a\\u0000b\""));
    assert_false(eq("\"a\\u0000b\"", "\"a\\u0000c\""));
    assert_false(eq("\"a\"", "\"a\\u0000\""));
    assert_true(eq("[1,[2,{}]]", "[1,[2,{}]]"));
    assert_false(eq("[1,2]", "[2,1]"));
    assert_false(eq("[1]", "[1,1]"));
    assert_true(eq("{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}"));
    assert_false(eq("{\"a\":1,\"b\":2}", "{\"a\":1}"));
    assert_false(eq("{\"a\":1}", "{\"b\":1}"));
    assert_true(eq("{\"a\":1,\"a\":2}", "{\"a\":2}"));
    assert_false(eq("{\"a\":1,\"a\":2}", "{\"a\":1}"));
    assert_true(eq("{\"a\":1,\"b\":0,\"a\":2}", "{\"b\":0,\"a\":2,\"b\":0}"));
    assert_false(eq("{\"a\":1,\"a\":2}", "{\"a\":2,\"b\":2}"));
    assert_false(eq("{}", "[]"));
    assert_true(aw_json_equal(NULL, NULL));
    aw_json_doc *x = parse_ok("1");
    assert_false(aw_json_equal(aw_json_doc_root(x), NULL));
    assert_false(aw_json_equal(NULL, aw_json_doc_root(x)));
    aw_json_doc_free(x);
    /* a built object equals a parsed one with the same members */
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *o = aw_json_new_object(d);
    aw_json_object_set_int(d, o, "b", 2);
    aw_json_object_set_number(d, o, "a", 1.0);
    x = parse_ok("{\"a\":1,\"b\":2}");
    assert_true(aw_json_equal(o, aw_json_doc_root(x)));
    aw_json_doc_free(x);
    aw_json_doc_free(d);
}

/* Deep documents: a value nested deeper than the reader's default limit
 * (read with a larger max_depth) can be copied, compared and written. Copy
 * and equality used to recurse per level and ran out of C stack (ASan:
 * stack-overflow in equal_depth below 100000 levels, in copy_into below
 * 60000) before their 100000-level guard. */
static char *deep_array(size_t depth, char inner) {
    char *s = malloc(2 * depth + 2);
    assert_non_null(s);
    memset(s, '[', depth);
    s[depth] = inner;
    memset(s + depth + 1, ']', depth);
    s[2 * depth + 1] = '\0';
    return s;
}

static void test_deep_values(void **state) {
    (void)state;
    size_t depth = 200000;
    char *s = deep_array(depth, '1');
    aw_json_read_options o = {.max_depth = depth};
    aw_json_doc *src = NULL, *other = NULL;
    assert_int_equal(aw_json_parse(s, strlen(s), &o, &src, NULL), 0);
    s[depth] = '2';
    assert_int_equal(aw_json_parse(s, strlen(s), &o, &other, NULL), 0);
    assert_false(aw_json_equal(aw_json_doc_root(src), aw_json_doc_root(other)));
    s[depth] = '1';
    assert_true(aw_json_equal(aw_json_doc_root(src), aw_json_doc_root(src)));
    aw_json_doc *dst = aw_json_doc_new(NULL);
    aw_json_value *c = aw_json_copy(dst, aw_json_doc_root(src));
    assert_non_null(c);
    assert_true(aw_json_equal(c, aw_json_doc_root(src)));
    assert_false(aw_json_equal(c, aw_json_doc_root(other)));
    char *out = aw_test_write_json(c, 0, NULL);
    assert_string_equal(out, s);
    free(out);
    aw_json_doc_free(dst);
    aw_json_doc_free(other);
    aw_json_doc_free(src);
    free(s);

    /* mixed objects and arrays, 100000 levels */
    aw_buf t;
    aw_buf_init(&t, NULL);
    for (int i = 0; i < 50000; i++) aw_buf_append_str(&t, "{\"k\":[");
    aw_buf_append_str(&t, "\"end\"");
    for (int i = 0; i < 50000; i++) aw_buf_append_str(&t, "]}");
    aw_json_read_options o2 = {.max_depth = 100000};
    assert_int_equal(aw_json_parse(t.data, t.len, &o2, &src, NULL), 0);
    dst = aw_json_doc_new(NULL);
    c = aw_json_copy(dst, aw_json_doc_root(src));
    assert_non_null(c);
    assert_true(aw_json_equal(aw_json_doc_root(src), c));
    out = aw_test_write_json(c, 0, NULL);
    assert_string_equal(out, t.data);
    free(out);
    aw_json_doc_free(dst);
    aw_json_doc_free(src);
    aw_buf_free(&t);
}

static void test_bad_arguments(void **state) {
    (void)state;
    aw_json_doc *d = aw_json_doc_new(NULL);
    aw_json_value *arr = aw_json_new_array(d), *obj = aw_json_new_object(d), *one = aw_json_new_int(d, 1);
    assert_int_equal(aw_json_array_push(d, obj, one), AW_EINVAL);
    assert_int_equal(aw_json_array_push(d, one, one), AW_EINVAL);
    assert_int_equal(aw_json_array_push(NULL, arr, one), AW_EINVAL);
    assert_int_equal(aw_json_array_push(d, NULL, one), AW_EINVAL);
    assert_int_equal(aw_json_array_push(d, arr, NULL), AW_EINVAL);
    assert_int_equal(aw_json_object_set(d, arr, "k", 1, one), AW_EINVAL);
    assert_int_equal(aw_json_object_set(d, obj, NULL, 0, one), AW_EINVAL);
    assert_int_equal(aw_json_object_set(d, obj, "k", 1, NULL), AW_EINVAL);
    assert_int_equal(aw_json_object_set(NULL, obj, "k", 1, one), AW_EINVAL);
    assert_int_equal(aw_json_object_set_int(d, arr, "k", 1), AW_EINVAL);
    assert_int_equal(aw_json_count(arr), 0);
    assert_int_equal(aw_json_count(obj), 0);
    assert_null(aw_json_new_null(NULL));
    assert_null(aw_json_new_bool(NULL, true));
    assert_null(aw_json_new_number(NULL, 1));
    assert_null(aw_json_new_int(NULL, 1));
    assert_null(aw_json_new_string(NULL, "a", 1));
    assert_null(aw_json_new_array(NULL));
    assert_null(aw_json_new_object(NULL));
    assert_null(aw_json_get_mut(arr, "k"));
    assert_null(aw_json_at_mut(obj, 0));
    assert_null(aw_json_at_mut(arr, 0));
    aw_json_doc_free(d);
}

/* ---- allocation failures ---------------------------------------------------------------- */

static int build_fn(const aw_allocator *a, void *ctx) {
    (void)ctx;
    aw_json_doc *d;
    int rc = build_sample(a, &d);
    if (rc) return rc;
    /* and grow past the first arena blocks */
    aw_json_value *root = aw_json_get_mut((aw_json_value *)aw_json_doc_root(d), "tags");
    for (int i = 0; i < 300 && rc == 0; i++) {
        aw_json_value *s = aw_json_new_string(d, "a longer string to fill arena blocks", 36);
        rc = s ? aw_json_array_push(d, root, s) : AW_ENOMEM;
    }
    if (rc == 0) {
        aw_buf b;
        aw_buf_init(&b, a);
        rc = aw_json_write(aw_json_doc_root(d), NULL, &b, NULL);
        if (rc == 0) assert_memory_equal(b.data, "{\"name\":\"agentwire\",\"version\":1,", 32);
        aw_buf_free(&b);
    }
    aw_json_doc_free(d);
    return rc;
}

static int copy_fn(const aw_allocator *a, void *ctx) {
    const aw_json_value *src = ctx;
    aw_json_doc *d = aw_json_doc_new(a);
    if (!d) return AW_ENOMEM;
    aw_json_value *c = aw_json_copy(d, src);
    int rc = c ? 0 : AW_ENOMEM;
    if (c) assert_true(aw_json_equal(c, src));
    aw_json_doc_free(d);
    return rc;
}

static void test_alloc_failures(void **state) {
    (void)state;
    long calls = aw_failalloc_run(build_fn, NULL, 0);
    assert_true(calls > 3);
    /* copying a large parsed document */
    aw_buf text;
    aw_buf_init(&text, NULL);
    aw_buf_append_str(&text, "{\"list\":[");
    for (int i = 0; i < 2000; i++) aw_buf_printf(&text, "%s{\"id\":%d,\"name\":\"item %d\",\"tags\":[\"x\",\"y\"]}", i ? "," : "", i, i);
    aw_buf_append_str(&text, "],\"a\":1,\"a\":2}");
    aw_json_doc *src = parse_ok(text.data);
    calls = aw_failalloc_run(copy_fn, (void *)aw_json_doc_root(src), 0);
    assert_true(calls > 3);
    aw_json_doc_free(src);
    aw_buf_free(&text);
    /* and a deep one, whose copy stack outgrows its first block */
    aw_buf_init(&text, NULL);
    for (int i = 0; i < 300; i++) aw_buf_append_str(&text, "[{\"k\":");
    aw_buf_append_str(&text, "[1,2]");
    for (int i = 0; i < 300; i++) aw_buf_append_str(&text, "}]");
    src = parse_ok(text.data);
    calls = aw_failalloc_run(copy_fn, (void *)aw_json_doc_root(src), 0);
    assert_true(calls > 3);
    aw_json_doc_free(src);
    aw_buf_free(&text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_write), cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_object_set),      cmocka_unit_test(test_arrays_and_nesting),
        cmocka_unit_test(test_copy),            cmocka_unit_test(test_equal),
        cmocka_unit_test(test_deep_values),     cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
