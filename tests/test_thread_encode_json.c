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
#include "internal/thread.h"
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

/* The streaming encoder's blocks, gathered. */
typedef struct gathered {
    aw_buf all;
    size_t blocks, largest;
    size_t refuse_after; /* refuse the block after this many (0: never) */
} gathered;

static int gather(void *ctx, const char *data, size_t n) {
    gathered *g = ctx;
    if (g->refuse_after && g->blocks == g->refuse_after) return 1;
    assert_true(n > 0);
    g->blocks++;
    if (n > g->largest) g->largest = n;
    return aw_buf_append(&g->all, data, n);
}

static void by_stream(const char *in, size_t len, const aw_json_read_options *ro, const aw_thread_options *o,
                      outcome *r) {
    gathered g = {{0}, 0, 0, 0};
    aw_buf_init(&g.all, NULL);
    aw_error_clear(&r->err);
    aw_thread_stream_options so = {gather, &g, NULL, NULL};
    r->rc = aw_thread_encode_json_stream(in, len, ro, o, &so, &r->err);
    r->out = g.all;
}

/* Same status, same bytes, or the same error in every field: the list
 * path, the buffer path and the streaming path. */
static void expect_same_with(const char *in, const aw_json_read_options *ro, const aw_thread_options *o) {
    outcome a, b, c;
    size_t len = strlen(in);
    by_list(in, len, ro, o, &a);
    by_json(in, len, ro, o, &b);
    by_stream(in, len, ro, o, &c);
    if (a.rc != c.rc) fail_msg("stream: status %d, want %d (%s / %s)", c.rc, a.rc, c.err.message, a.err.message);
    if (a.rc == 0) {
        if (a.out.len != c.out.len || memcmp(a.out.data, c.out.data, a.out.len) != 0)
            fail_msg("stream:\n%s\n---- want:\n%s", c.out.data, a.out.data);
    } else {
        assert_string_equal(c.err.message, a.err.message);
        assert_int_equal(c.err.code, a.err.code);
        assert_int_equal(c.err.line, a.err.line);
        assert_int_equal(c.err.column, a.err.column);
        assert_int_equal(c.err.offset, a.err.offset);
        assert_int_equal(c.out.len, 0); /* less than a block came before the error */
    }
    aw_buf_free(&c.out);
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
    /* the type spelled with escapes is still a tool_call: the streaming
     * encoder's scan for calls must not miss it */
    expect_xml(RESULT("1") "{\"type\":\"tool\\u005fcall\",\"toolName\":\"esc\",\"toolCallId\":\"1\",\"args\":{},"
               "\"iteration\":1}\n"
               RESULT("2") "{\"type\":\"\\u0074ool_call\",\"toolName\":\"esc2\",\"toolCallId\":\"2\",\"args\":{},"
               "\"iteration\":1}\n",
               "<thread>" TAG_OUT(0, "esc") TAG_IN(1, "esc") TAG_OUT(2, "esc2") TAG_IN(3, "esc2") "\n</thread>");
    /* a line the scan picks that is no tool_call, and one that does not
     * parse: passed over while looking for calls, reported in its turn */
    expect_same(RESULT("1") "{\"type\":\"message\",\"role\":\"user\",\"content\":\"tool_call \\u0061\",\"iteration\":1}\n"
                CALL("a", "1"));
    expect_same(RESULT("1") "{\"type\":\"tool_call\",\"toolName\":\"a\",\"toolCallId\":\"1\",\"args\":{},\n" CALL("a", "1"));
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

/* 4000 events of about 2 KB: 8 MB of input, results naming calls from far
 * back, so the map is in use. */
static void big_input(aw_buf *in_out) {
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
    *in_out = in;
}

static void test_memory_of_one_line(void **state) {
    (void)state;
    aw_buf in;
    big_input(&in);
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

    /* streamed: the output is no longer the caller's buffer but the
     * encoder's block, and the memory stays that of a line and a block */
    gathered g = {{0}, 0, 0, 0};
    aw_buf_init(&g.all, NULL);
    aw_thread_stream_options so = {gather, &g, NULL, NULL};
    pa.peak = 0;
    assert_int_equal(aw_thread_encode_json_stream(in.data, in.len, &ro, &o, &so, NULL), 0);
    assert_int_equal(pa.live, 0);
    if (pa.peak > 1024 * 1024) fail_msg("streaming: peak %zu bytes for %zu bytes of input", pa.peak, in.len);
    assert_int_equal(g.all.len, want.len);
    assert_memory_equal(g.all.data, want.data, want.len);
    /* handed on in blocks as produced, none much over the block size */
    assert_true(g.blocks >= want.len / AW__THREAD_BLOCK);
    assert_true(g.largest < AW__THREAD_BLOCK + 16 * 1024);
    aw_buf_free(&g.all);
    aw_buf_free(&want);
    aw_buf_free(&out);
    aw_buf_free(&in);
}

/* ---- streaming: what is handed on, and when it stops ------------------------------ */

static void test_stream_stops(void **state) {
    (void)state;
    aw_buf in;
    big_input(&in);
    outcome whole;
    by_json(in.data, in.len, NULL, NULL, &whole);
    assert_int_equal(whole.rc, 0);

    /* a sink that refuses its third block: AW_ESTOP, and no block after */
    gathered g = {{0}, 0, 0, 2};
    aw_buf_init(&g.all, NULL);
    aw_thread_stream_options so = {gather, &g, NULL, NULL};
    aw_error err;
    assert_int_equal(aw_thread_encode_json_stream(in.data, in.len, NULL, NULL, &so, &err), AW_ESTOP);
    assert_int_equal(err.code, AW_ESTOP);
    assert_int_equal(g.blocks, 2);
    assert_memory_equal(g.all.data, whole.out.data, g.all.len);
    aw_buf_free(&g.all);

    /* a bad line late in the input: the error names it, and what was
     * handed on before it is the start of the thread the good lines give */
    aw_buf_append_str(&in, "{\"type\":\"message\",\"role\":\"robot\",\"content\":\"x\",\"iteration\":1}\n");
    aw_buf_append_str(&in, RESULT("1"));
    outcome streamed, listed;
    by_stream(in.data, in.len, NULL, NULL, &streamed);
    by_list(in.data, in.len, NULL, NULL, &listed);
    assert_int_equal(streamed.rc, AW_ETYPE);
    assert_string_equal(streamed.err.message, listed.err.message);
    assert_int_equal(streamed.err.line, listed.err.line);
    assert_int_equal(streamed.err.column, listed.err.column);
    assert_true(streamed.out.len > 0 && streamed.out.len < whole.out.len);
    assert_memory_equal(streamed.out.data, whole.out.data, streamed.out.len);
    aw_buf_free(&streamed.out);
    aw_buf_free(&listed.out);
    aw_buf_free(&whole.out);

    /* arguments */
    assert_int_equal(aw_thread_encode_json_stream(NULL, 1, NULL, NULL, &so, &err), AW_EINVAL);
    assert_int_equal(aw_thread_encode_json_stream("", 0, NULL, NULL, NULL, &err), AW_EINVAL);
    aw_thread_stream_options no_sink = {NULL, NULL, NULL, NULL};
    assert_int_equal(aw_thread_encode_json_stream("", 0, NULL, NULL, &no_sink, &err), AW_EINVAL);
    aw_buf_free(&in);
}

/* ---- events of a type the format does not know ------------------------------------- */

typedef struct unknown_log {
    int calls, reject_at;
    size_t line[4], column[4], offset[4];
    char message[4][AW_ERROR_MESSAGE_MAX];
} unknown_log;

static int log_unknown(void *ctx, const aw_event *ev, const aw_error *where) {
    unknown_log *u = ctx;
    assert_int_equal(ev->kind, AW_EVENT_OTHER);
    assert_int_equal(where->code, AW_ETYPE);
    if (u->calls < 4) {
        u->line[u->calls] = where->line;
        u->column[u->calls] = where->column;
        u->offset[u->calls] = where->offset;
        snprintf(u->message[u->calls], sizeof u->message[0], "%s", where->message);
    }
    return ++u->calls == u->reject_at;
}

static void test_unknown_types(void **state) {
    (void)state;
    /* line 2 and 4; "é" before the type counts as one column */
    const char *lines = "{\"type\":\"plan\"}\n"
                        "{\"type\":\"human\",\"content\":\"hi\"}\n"
                        "\n"
                        "{\"é\":1,\"type\":\"custom\\u0007x\"}\n" CALL("a", "1");
    unknown_log u = {0};
    gathered g = {{0}, 0, 0, 0};
    aw_buf_init(&g.all, NULL);
    aw_thread_stream_options so = {gather, &g, log_unknown, &u};
    aw_error err;
    assert_int_equal(aw_thread_encode_json_stream(lines, strlen(lines), NULL, NULL, &so, &err), 0);
    assert_int_equal(u.calls, 2);
    assert_int_equal(u.line[0], 2);
    assert_int_equal(u.column[0], 9); /* the opening quote of "human" */
    assert_int_equal(u.offset[0], strlen("{\"type\":\"plan\"}\n{\"type\":"));
    assert_string_equal(u.message[0], "event type 'human' is not one the thread format knows");
    assert_int_equal(u.line[1], 4);
    assert_int_equal(u.column[1], 15);
    assert_string_equal(u.message[1], "event type 'custom?x' is not one the thread format knows");
    /* not written, but their ids used up */
    assert_string_equal(g.all.data, "<thread>" TAG_IN(3, "a") "\n</thread>");
    aw_buf_free(&g.all);

    /* rejected: AW_ETYPE with the place, nothing handed on */
    unknown_log strict = {0, 1, {0}, {0}, {0}, {{0}}};
    aw_buf_init(&g.all, NULL);
    so.on_unknown_ctx = &strict;
    assert_int_equal(aw_thread_encode_json_stream(lines, strlen(lines), NULL, NULL, &so, &err), AW_ETYPE);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 9);
    assert_string_equal(err.message, "event type 'human' is not one the thread format knows");
    assert_int_equal(g.all.len, 0);

    /* the array form: places in the whole text */
    const char *array = "[{\"type\":\"plan\"},\n  {\"type\":\"mystery\"}]";
    unknown_log v = {0};
    so.on_unknown_ctx = &v;
    assert_int_equal(aw_thread_encode_json_stream(array, strlen(array), NULL, NULL, &so, &err), 0);
    assert_int_equal(v.calls, 1);
    assert_int_equal(v.line[0], 2);
    assert_int_equal(v.column[0], 11);
    assert_string_equal(g.all.data, "<thread>\n</thread>");
    aw_buf_free(&g.all);
}

/* ---- the scan for lines that can be tool calls --------------------------------------- */

static void test_call_scan(void **state) {
    (void)state;
    /* every instruction set finds the same first place, in random text
     * made of the pieces that matter, at every alignment */
    static const char *const pieces[] = {"tool_call", "tool", "_c", "_", "c", "\\u0074", "\\u005F", "\\u0041",
                                         "\\u00", "\\", "u", "x", "\n", "tool_cal", "ool_call"};
    aw_test_rng rng = {42};
    char text[256];
    for (int round = 0; round < 20000; round++) {
        size_t n = 0, want_len = aw_test_below(&rng, 200);
        while (n < want_len) {
            const char *p = pieces[aw_test_below(&rng, sizeof pieces / sizeof pieces[0])];
            size_t k = strlen(p);
            if (n + k > sizeof text) break;
            memcpy(text + n, p, k);
            n += k;
        }
        size_t off = aw_test_below(&rng, 8);
        if (off > n) off = n;
        size_t want = aw__thread_scan_call(text + off, n - off, 0);
        assert_int_equal(aw__thread_scan_call(text + off, n - off, 1), want);
        assert_int_equal(aw__thread_scan_call(text + off, n - off, 2), want);
    }
    /* what it finds, and what it lets pass */
    assert_int_equal(aw__thread_scan_call("xx tool_call", 12, 2), 7);
    assert_int_equal(aw__thread_scan_call("tool\\u005fcall", 15, 2), 4);
    assert_int_equal(aw__thread_scan_call("\\u0063", 6, 2), 0);
    assert_int_equal(aw__thread_scan_call("aw_call \\u00e9 \\u0041 tool_cal", 31, 2), 31);
    assert_int_equal(aw__thread_scan_call("", 0, 2), 0);
}

/* The skim of a candidate line: where it is sure, the parser's reading. */
static void expect_skim(const char *line, int want, const char *id, const char *name) {
    aw_text got_id = {0}, got_name = {0};
    int rc = aw__thread_skim_call(line, strlen(line), 1, &got_id, &got_name);
    if (rc != want) fail_msg("skim %d, want %d: %s", rc, want, line);
    if (rc == 1) {
        if (got_id.len != strlen(id) || memcmp(got_id.ptr, id, got_id.len) != 0) fail_msg("id of %s", line);
        if (got_name.len != strlen(name) || memcmp(got_name.ptr, name, got_name.len) != 0) fail_msg("name of %s", line);
    }
    if (rc < 0) return;
    /* the parser agrees on every line the skim is sure of that is an event */
    aw_event_list *l = NULL;
    aw_json_read_options bom = {NULL, 0, true};
    if (aw_event_list_parse(line, strlen(line), &bom, &l, NULL) == 0) {
        const aw_event *ev = aw_event_list_items(l);
        assert_int_equal(ev->kind == AW_EVENT_TOOL_CALL, rc == 1);
        aw_event_list_free(l);
    } else {
        assert_int_equal(rc, 0); /* or not a tool_call the encoder could write */
    }
}

static void test_call_skim(void **state) {
    (void)state;
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1}", 1, "c", "t");
    /* keys in any order, white space, nested look-alikes skipped */
    expect_skim(" { \"args\" : {\"type\":\"x\",\"toolCallId\":[\"}\"]} , \"toolCallId\":\"c\\\"\" ,"
                "\"iteration\":1,\"toolName\":\"t\",\"type\":\"tool_call\" } ", -1, NULL, NULL);
    expect_skim("{\"args\":{\"q\":\"a \\\" } ] \\\\\"},\"toolCallId\":\"c\",\"iteration\":1,\"toolName\":\"t\","
                "\"type\":\"tool_call\"}", 1, "c", "t");
    /* the last member of a name wins, also after the other two were seen */
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1,"
                "\"toolCallId\":\"d\"}", 1, "d", "t");
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1,"
                "\"type\":\"plan\"}", 0, NULL, NULL);
    /* a name spelled with escapes after the three: left to the parser */
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1,"
                "\"tool\\u0043allId\":\"d\"}", -1, NULL, NULL);
    /* escapes in the values that matter: the parser decides */
    expect_skim("{\"type\":\"tool\\u005fcall\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{}}", -1, NULL, NULL);
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t\\n\",\"toolCallId\":\"c\",\"args\":{}}", -1, NULL, NULL);
    /* not a tool_call, or not a valid one */
    expect_skim("{\"type\":\"message\",\"role\":\"user\",\"content\":\"tool_call\",\"iteration\":1}", 0, NULL, NULL);
    expect_skim("{\"type\":\"tool_call\",\"toolName\":7,\"toolCallId\":\"c\",\"args\":{}}", 0, NULL, NULL);
    expect_skim("{\"type\":\"tool_call\",\"toolCallId\":\"c\",\"args\":{}}", 0, NULL, NULL);
    expect_skim("{}", 0, NULL, NULL);
    expect_skim("{\"type\":5}", 0, NULL, NULL);
    /* a BOM (allowed here), structures that do not close */
    expect_skim("\xEF\xBB\xBF{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{},\"iteration\":1}", 1,
                "c", "t");
    expect_skim("[\"tool_call\"]", -1, NULL, NULL);
    expect_skim("{\"type\":\"tool_call\",\"args\":{\"a\":[1,2", -1, NULL, NULL);
    expect_skim("{\"type\":\"tool_call\",\"toolName\":\"t", -1, NULL, NULL);
    expect_skim("{\"type\" \"tool_call\"}", -1, NULL, NULL);
    expect_skim("", -1, NULL, NULL);
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
    if (rc) return rc;
    /* streamed: every failure is a clean error; success, the same bytes */
    gathered g = {{0}, 0, 0, 0};
    aw_buf_init(&g.all, NULL);
    aw_thread_stream_options so = {gather, &g, NULL, NULL};
    rc = aw_thread_encode_json_stream(s->in, strlen(s->in), &ro, &o, &so, &err);
    if (rc) assert_int_equal(rc, AW_ENOMEM);
    else assert_true(g.all.len == s->want_len && memcmp(g.all.data, s->want, s->want_len) == 0);
    aw_buf_free(&g.all);
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
        cmocka_unit_test(test_stream_stops),
        cmocka_unit_test(test_unknown_types),
        cmocka_unit_test(test_call_scan),
        cmocka_unit_test(test_call_skim),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
