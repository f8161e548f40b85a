/* aw_thread_encode_json: events as JSON text -> <thread> XML without
 * keeping the events. Its output and its errors must be those of
 * aw_event_list_parse followed by aw_thread_encode, whatever the order of
 * calls and results (a result before its call, ids reused for another
 * tool make it encode a second time); the memory it holds must not grow
 * with the input; every allocation failure must leave the buffer as it
 * was. (test_thread_encode.c compares the two paths on all of its cases
 * too.) */
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

/* ---- the reference: read the whole list, then encode it -------------------------- */

typedef struct outcome {
    int rc;
    aw_buf out;
    aw_error err;
} outcome;

static void by_list(const char *in, size_t len, const aw_json_read_options *ro, const aw_thread_options *o,
                    outcome *r) {
    aw_buf_init(&r->out, NULL);
    aw_error_clear(&r->err);
    aw_event_list *l = NULL;
    r->rc = aw_event_list_parse(in, len, ro, &l, &r->err);
    if (r->rc) return;
    r->rc = aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), o, &r->out, &r->err);
    aw_event_list_free(l);
}

static void by_json(const char *in, size_t len, const aw_json_read_options *ro, const aw_thread_options *o,
                    outcome *r) {
    aw_buf_init(&r->out, NULL);
    aw_error_clear(&r->err);
    r->rc = aw_thread_encode_json(in, len, ro, o, &r->out, &r->err);
}

/* Same status, same bytes, or the same error in every field. */
static void expect_same_with(const char *in, const aw_json_read_options *ro, const aw_thread_options *o) {
    outcome a, b;
    size_t len = strlen(in);
    by_list(in, len, ro, o, &a);
    by_json(in, len, ro, o, &b);
    if (a.rc != b.rc) fail_msg("status %d, want %d (%s / %s)", b.rc, a.rc, b.err.message, a.err.message);
    if (a.rc == 0) {
        if (a.out.len != b.out.len || memcmp(a.out.data, b.out.data, a.out.len) != 0)
            fail_msg("encode_json:\n%s\n---- want:\n%s", b.out.data, a.out.data);
    } else {
        assert_string_equal(b.err.message, a.err.message);
        assert_int_equal(b.err.code, a.err.code);
        assert_int_equal(b.err.line, a.err.line);
        assert_int_equal(b.err.column, a.err.column);
        assert_int_equal(b.err.offset, a.err.offset);
        assert_int_equal(b.out.len, 0);
    }
    aw_buf_free(&a.out);
    aw_buf_free(&b.out);
}

static void expect_same(const char *in) { expect_same_with(in, NULL, NULL); }

static void expect_xml(const char *in, const char *want) {
    expect_same(in);
    outcome r;
    by_json(in, strlen(in), NULL, NULL, &r);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out.data, want);
    aw_buf_free(&r.out);
}

#define CALL(name, id) "{\"type\":\"tool_call\",\"toolName\":\"" name "\",\"toolCallId\":\"" id "\",\"args\":{},\"timestamp\":1,\"iteration\":1}\n"
#define RESULT(id) "{\"type\":\"tool_result\",\"toolCallId\":\"" id "\",\"result\":\"r\",\"timestamp\":1,\"iteration\":1}\n"
#define TAG_IN(n, name) "\n  <event type=\"tool_input\" id=\"" #n "\" name=\"" name "\" iteration=\"1\">{}</event>"
#define TAG_OUT(n, name) "\n  <event type=\"tool_output\" id=\"" #n "\" name=\"" name "\" status=\"success\" iteration=\"1\">r</event>"

/* ---- names: what one pass cannot know -------------------------------------------- */

static void test_results_after_calls(void **state) {
    (void)state;
    /* the common order: one pass */
    expect_xml(CALL("a", "1") CALL("b", "2") RESULT("2") RESULT("1") RESULT("3"),
               "<thread>" TAG_IN(0, "a") TAG_IN(1, "b") TAG_OUT(2, "b") TAG_OUT(3, "a") TAG_OUT(4, "unknown")
               "\n</thread>");
    /* an id reused for the same tool changes no name */
    expect_xml(CALL("a", "1") RESULT("1") CALL("a", "1") RESULT("1"),
               "<thread>" TAG_IN(0, "a") TAG_OUT(1, "a") TAG_IN(2, "a") TAG_OUT(3, "a") "\n</thread>");
}

static void test_result_before_call(void **state) {
    (void)state;
    expect_xml(RESULT("1") CALL("late", "1"), "<thread>" TAG_OUT(0, "late") TAG_IN(1, "late") "\n</thread>");
    /* a result with no call yet, then a call named "unknown" */
    expect_xml(RESULT("1") CALL("unknown", "1") RESULT("1"),
               "<thread>" TAG_OUT(0, "unknown") TAG_IN(1, "unknown") TAG_OUT(2, "unknown") "\n</thread>");
    /* many results before their calls, mixed with ordinary ones */
    expect_xml(CALL("a", "1") RESULT("1") RESULT("2") RESULT("3") CALL("b", "2") RESULT("2") CALL("c", "3"),
               "<thread>" TAG_IN(0, "a") TAG_OUT(1, "a") TAG_OUT(2, "b") TAG_OUT(3, "c") TAG_IN(4, "b")
               TAG_OUT(5, "b") TAG_IN(6, "c") "\n</thread>");
}

static void test_id_reused_for_another_tool(void **state) {
    (void)state;
    /* the last call with an id names every result of that id */
    expect_xml(CALL("first", "d") RESULT("d") CALL("second", "d") RESULT("d"),
               "<thread>" TAG_IN(0, "first") TAG_OUT(1, "second") TAG_IN(2, "second") TAG_OUT(3, "second")
               "\n</thread>");
    /* renamed before any result asked: still one pass, same bytes */
    expect_xml(CALL("first", "d") CALL("second", "d") RESULT("d"),
               "<thread>" TAG_IN(0, "first") TAG_IN(1, "second") TAG_OUT(2, "second") "\n</thread>");
    /* renamed and renamed back: the last call's name */
    expect_xml(CALL("x", "d") RESULT("d") CALL("y", "d") CALL("x", "d"),
               "<thread>" TAG_IN(0, "x") TAG_OUT(1, "x") TAG_IN(2, "y") TAG_IN(3, "x") "\n</thread>");
    /* names and ids with escapes, NUL and empty strings are compared as bytes */
    expect_same(CALL("a\\u0000b", "\\u0000") RESULT("\\u0000") RESULT("") CALL("", "") CALL("a\\u0000c", "\\u0000"));
}

/* ---- the same errors -------------------------------------------------------------- */

static void test_same_errors(void **state) {
    (void)state;
    static const char *const inputs[] = {
        /* JSON syntax, with line and column; after blank and CRLF lines */
        CALL("a", "1") "\n\r\n  \t\n{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\",}\n" RESULT("1"),
        CALL("a", "1") "{\"type\":\"message\"\n",
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"\\ud800\\q\",\"timestamp\":1,\"iteration\":0}",
        "\xEF\xBB\xBF" CALL("a", "1"),
        /* a missing or mistyped field, naming the line */
        RESULT("1") "{\"type\":\"tool_call\",\"toolCallId\":\"x\",\"args\":{},\"timestamp\":1,\"iteration\":1}\n",
        CALL("a", "1") CALL("a", "1") "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"x\",\"args\":[],"
        "\"timestamp\":1,\"iteration\":1}\n",
        "{\"type\":\"summary\",\"summary\":\"s\",\"summarizedIterations\":[1,\"2\"],\"timestamp\":1,\"iteration\":1}",
        "{}\n",
        "7\n",
        "{\"type\":3}",
        /* an error after a result that needed its call: the error wins */
        RESULT("1") CALL("a", "1") "{\"type\":\"error\",\"error\":\"e\",\"timestamp\":1,\"iteration\":1}\n",
        /* the array form */
        "[" "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":0}," "{\"type\":\"message\"}" "]",
        "  \n[1]",
        "[{\"type\":\"plan\",\"timestamp\":1,\"iteration\":0}",
        "[] x",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) expect_same(inputs[i]);
}

static void test_options_and_forms(void **state) {
    (void)state;
    /* the array form gives the lines' output */
    expect_same("[" "{\"type\":\"message\",\"role\":\"user\",\"content\":\"<hi>\",\"timestamp\":1,\"iteration\":0},"
                "{\"type\":\"tool_result\",\"toolCallId\":\"1\",\"result\":{\"k\":[1,2]},\"timestamp\":1,\"iteration\":0},"
                "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"1\",\"args\":{},\"timestamp\":1,\"iteration\":0}"
                "]");
    expect_same("");
    expect_same("\n\n  \r\n");
    expect_same("[]");
    /* a BOM, when allowed; the depth limit */
    aw_json_read_options bom = {NULL, 0, true};
    expect_same_with("\xEF\xBB\xBF" CALL("a", "1") RESULT("1"), &bom, NULL);
    expect_same_with("\xEF\xBB\xBF[" "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":0}]", &bom, NULL);
    aw_json_read_options shallow = {NULL, 2, false};
    expect_same_with("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"1\",\"args\":{\"a\":{}},\"timestamp\":1,"
                     "\"iteration\":0}",
                     &shallow, NULL);
    /* prefill and strip-ansi, also when the names needed a second pass */
    aw_thread_options o = {"go on:", 6, true, NULL};
    expect_same_with(RESULT("1") "{\"type\":\"message\",\"role\":\"user\",\"content\":\"\\u001b[31mred\\u001b[0m\","
                     "\"timestamp\":1,\"iteration\":0}\n" CALL("a", "1"),
                     NULL, &o);
    expect_same_with("", NULL, &o);
    /* appending to a buffer that holds something already */
    aw_buf out;
    aw_buf_init(&out, NULL);
    aw_buf_append(&out, "KEEP", 4);
    assert_int_equal(aw_thread_encode_json(RESULT("1") CALL("a", "1"), strlen(RESULT("1") CALL("a", "1")), NULL,
                                           NULL, &out, NULL),
                     0);
    assert_string_equal(out.data, "KEEP<thread>" TAG_OUT(0, "a") TAG_IN(1, "a") "\n</thread>");
    /* an error leaves it as it was */
    assert_int_equal(aw_thread_encode_json("{}", 2, NULL, NULL, &out, NULL), AW_ETYPE);
    assert_int_equal(out.len, 4 + strlen("<thread>" TAG_OUT(0, "a") TAG_IN(1, "a") "\n</thread>"));
    aw_buf_free(&out);
    /* arguments */
    aw_error err;
    assert_int_equal(aw_thread_encode_json(NULL, 3, NULL, NULL, &out, &err), AW_EINVAL);
    assert_int_equal(aw_thread_encode_json("", 0, NULL, NULL, NULL, &err), AW_EINVAL);
    assert_int_equal(aw_thread_encode_json(NULL, 0, NULL, NULL, &out, &err), 0);
    assert_string_equal(out.data, "<thread>\n</thread>");
    aw_buf_free(&out);
}

/* ---- memory: that of one line, not of the input ------------------------------------ */

typedef struct peak_alloc {
    aw_allocator base;
    size_t live, peak;
} peak_alloc;

/* blocks carry their size in a 16-byte header */
static void *pk_realloc(void *ctx, void *p, size_t size) {
    peak_alloc *a = ctx;
    size_t old = 0;
    char *h = p ? (char *)p - 16 : NULL;
    if (h) memcpy(&old, h, sizeof old);
    h = realloc(h, size + 16);
    if (!h) return NULL;
    memcpy(h, &size, sizeof size);
    a->live += size - old;
    if (a->live > a->peak) a->peak = a->live;
    return h + 16;
}

static void *pk_malloc(void *ctx, size_t size) { return pk_realloc(ctx, NULL, size); }

static void pk_free(void *ctx, void *p) {
    peak_alloc *a = ctx;
    size_t old;
    memcpy(&old, (char *)p - 16, sizeof old);
    a->live -= old;
    free((char *)p - 16);
}

static void test_memory_of_one_line(void **state) {
    (void)state;
    /* 4000 events of about 2 KB: 8 MB of input, results naming calls from
     * far back, so the map is in use */
    aw_buf in;
    aw_buf_init(&in, NULL);
    char prose[2001];
    for (int i = 0; i < 2000; i++) prose[i] = "abc <&> 'xyz"[i % 12];
    prose[2000] = '\0';
    for (int i = 0; i < 4000; i++) {
        if (i % 4 == 0)
            aw_buf_printf(&in, "{\"type\":\"tool_call\",\"toolName\":\"t%d\",\"toolCallId\":\"c%d\",\"args\":{},"
                               "\"timestamp\":1,\"iteration\":%d}\n", i, i, i);
        else if (i % 4 == 1)
            aw_buf_printf(&in, "{\"type\":\"tool_result\",\"toolCallId\":\"c%d\",\"result\":\"ok\",\"timestamp\":1,"
                               "\"iteration\":%d}\n", i - 1 - (i / 2 % 3) * 4, i);
        aw_buf_printf(&in, "{\"type\":\"message\",\"role\":\"user\",\"content\":\"");
        aw_buf_append(&in, prose, 1000);
        aw_buf_printf(&in, "\",\"timestamp\":1,\"iteration\":%d}\n", i);
    }
    peak_alloc pa = {{pk_malloc, pk_realloc, pk_free, NULL}, 0, 0};
    pa.base.ctx = &pa;
    aw_json_read_options ro = {&pa.base, 0, false};
    aw_thread_options o = {NULL, 0, false, &pa.base};
    aw_buf out;
    aw_buf_init(&out, NULL); /* the output is the caller's, not counted */
    assert_int_equal(aw_thread_encode_json(in.data, in.len, &ro, &o, &out, NULL), 0);
    assert_int_equal(pa.live, 0);
    /* a line's copy and values, the map of 1000 ids, a little scratch */
    if (pa.peak > 256 * 1024) fail_msg("peak %zu bytes for %zu bytes of input", pa.peak, in.len);
    /* the list path holds the whole input (this is what is measured) */
    aw_event_list *l = NULL;
    pa.peak = 0;
    assert_int_equal(aw_event_list_parse(in.data, in.len, &ro, &l, NULL), 0);
    assert_true(pa.peak > in.len);
    aw_buf want;
    aw_buf_init(&want, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), NULL, &want, NULL), 0);
    assert_int_equal(want.len, out.len);
    assert_memory_equal(want.data, out.data, out.len);
    aw_event_list_free(l);
    aw_buf_free(&want);
    aw_buf_free(&out);
    aw_buf_free(&in);
}

/* ---- allocation failures ------------------------------------------------------------- */

typedef struct sweep_ctx {
    const char *in;
    const char *want;
    size_t want_len;
} sweep_ctx;

static int encode_with_alloc(const aw_allocator *a, void *p) {
    sweep_ctx *s = p;
    aw_buf out;
    aw_buf_init(&out, a);
    int rc = aw_buf_append(&out, "KEEP", 4);
    if (rc) return rc;
    aw_json_read_options ro = {a, 0, false};
    aw_thread_options o = {"next:", 5, true, a};
    aw_error err;
    rc = aw_thread_encode_json(s->in, strlen(s->in), &ro, &o, &out, &err);
    aw_test_check_appended(&out, "KEEP", 4, rc, &err, s->want, s->want_len);
    aw_buf_free(&out);
    return rc;
}

static void sweep(const char *in) {
    outcome want;
    aw_thread_options o = {"next:", 5, true, NULL};
    by_list(in, strlen(in), NULL, &o, &want);
    assert_int_equal(want.rc, 0);
    sweep_ctx s = {in, want.out.data, want.out.len};
    assert_true(aw_failalloc_run(encode_with_alloc, &s, 0) > 2);
    aw_buf_free(&want.out);
}

static void test_allocation_failures(void **state) {
    (void)state;
    /* one pass */
    sweep(CALL("a", "1") RESULT("1") RESULT("2")
          "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"\\u001b[1mbold\\u001b[0m & more\","
          "\"timestamp\":1,\"iteration\":2}\n"
          "{\"type\":\"tool_result\",\"toolCallId\":\"1\",\"result\":[1,{\"x\":null}],\"timestamp\":1,\"iteration\":2}\n");
    /* two passes */
    sweep(RESULT("1") CALL("a", "1") CALL("b", "2") RESULT("2") CALL("c", "2"));
    /* the array form */
    sweep("[" "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"1\",\"args\":{\"q\":1},\"timestamp\":1,"
          "\"iteration\":0}]");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_results_after_calls),
        cmocka_unit_test(test_result_before_call),
        cmocka_unit_test(test_id_reused_for_another_tool),
        cmocka_unit_test(test_same_errors),
        cmocka_unit_test(test_options_and_forms),
        cmocka_unit_test(test_memory_of_one_line),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
