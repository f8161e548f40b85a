/* aw_messages_encode_json, the streamed encoder: the same bytes (or the
 * same error) as aw_json_parse then aw_messages_encode, on every vector, in
 * both encodings and every shape; output in blocks; errors placed in the
 * text; syntax between items checked; a refused write; allocation failure. */
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

typedef struct sink {
    aw_buf out;
    size_t calls;
    size_t refuse_at; /* refuse the N-th block (1-based); 0: never */
} sink;

static int to_sink(void *ctx, const char *p, size_t n) {
    sink *s = ctx;
    if (++s->calls == s->refuse_at) return 1;
    return aw_buf_append(&s->out, p, n);
}

/* Both ways on json; the same rc, bytes or message. */
static void same_both_ways(const char *json, size_t len, aw_messages_format fmt, aw_messages_encoding enc) {
    aw_messages_options o = {fmt, enc, len % 2 == 0, NULL};
    aw_buf whole;
    aw_buf_init(&whole, NULL);
    aw_error we, se;
    aw_json_doc *doc = NULL;
    int wrc = aw_json_parse(json, len, NULL, &doc, &we);
    if (!wrc) wrc = aw_messages_encode(aw_json_doc_root(doc), &o, &whole, &we);
    aw_json_doc_free(doc);
    sink s;
    memset(&s, 0, sizeof s);
    aw_buf_init(&s.out, NULL);
    int src = aw_messages_encode_json(json, len, &o, to_sink, &s, &se);
    if (wrc != src) fail_msg("whole %d (%s), stream %d (%s) on %.200s", wrc, we.message, src, se.message, json);
    if (wrc) {
        assert_string_equal(we.message, se.message);
        assert_int_equal(s.out.len, 0); /* errors are found before anything is written */
    } else if (whole.len != s.out.len || (whole.len && memcmp(whole.data, s.out.data, whole.len))) {
        fail_msg("stream output differs on %.200s", json);
    }
    aw_buf_free(&whole);
    aw_buf_free(&s.out);
}

static void all_ways(const char *json) {
    static const aw_messages_format fmts[] = {AW_MESSAGES_AUTO, AW_MESSAGES_OPENAI, AW_MESSAGES_ANTHROPIC,
                                              AW_MESSAGES_LANGCHAIN};
    for (size_t f = 0; f < 4; f++) {
        same_both_ways(json, strlen(json), fmts[f], AW_MESSAGES_XML);
        same_both_ways(json, strlen(json), fmts[f], AW_MESSAGES_TEXT);
    }
}

static void vectors_both_ways(void **state) {
    (void)state;
    static const char *const files[] = {"openai.json", "anthropic.json", "langchain.json", "splice.json",
                                        "passthrough.json", "parts.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/vectors/messages/%s", AW_SOURCE_DIR, files[i]);
        char *json = aw_test_read_file(path, NULL);
        assert_non_null(json);
        all_ways(json);
        free(json);
    }
}

static void shapes_and_edges(void **state) {
    (void)state;
    static const char *const cases[] = {
        "[]", " [ ] ", "[{\"role\":\"user\",\"content\":\"<thread>\\n</thread>\"}]",
        "[{\"role\":\"user\",\"content\":\"a\"}]",
        "[{\"role\":\"tool\",\"tool_call_id\":\"c\",\"content\":\"r\"},{\"role\":\"assistant\",\"content\":null,"
        "\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"late\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"function\":{\"name\":\"later\",\"arguments\":\"[1]\"}}]}]",
        "[{\"role\":\"user\",\"content\":\"x\"}, {\"type\":\"human\",\"content\":\"lc\"}]",
        "[{\"role\":\"user\",\"content\":\"a ]} \\\" [{\"},\n  {\"role\":\"assistant\",\"content\":\"b\"}]",
        "{\"system\":\"s\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":\"b\"}]}",
        /* errors: in an item, between items, after the array */
        "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":5}]",
        "[{\"role\":\"user\",\"content\":\"a\"} {\"role\":\"user\"}]",
        "[{\"role\":\"user\",\"content\":\"a\"},]",
        "[{\"role\":\"user\",\"content\":\"a\"}] x",
        "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\"}",
        "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b}]",
        "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\"]]",
        "[1, 2]", "[\"a\",\"b\"]", "[null,{}]", "[", "", "\xEF\xBB\xBF[]",
        "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"\\ud800 \\u00e9\"}]",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) all_ways(cases[i]);
}

static void errors_placed(void **state) {
    (void)state;
    const char *json = "[\n  {\"role\":\"user\",\"content\":\"\xC3\xA9\"},\n  {\"role\":5}\n]";
    sink s;
    memset(&s, 0, sizeof s);
    aw_buf_init(&s.out, NULL);
    aw_error err;
    assert_int_equal(aw_messages_encode_json(json, strlen(json), NULL, to_sink, &s, &err), AW_ETYPE);
    assert_string_equal(err.message, "message 1: 'role' must be a string");
    assert_int_equal(err.line, 3);
    assert_int_equal(err.column, 3);
    assert_int_equal(err.offset, (size_t)(strstr(json, "{\"role\":5") - json));
    json = "[{\"role\":\"user\",\"content\":\"a\"},\n {\"role\":\"user\",\"content\":tru}]";
    assert_int_equal(aw_messages_encode_json(json, strlen(json), NULL, to_sink, &s, &err), AW_ESYNTAX);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 27);
    json = "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},\n  {\"role\":\"robot\"}]}";
    assert_int_equal(aw_messages_encode_json(json, strlen(json), NULL, to_sink, &s, &err), AW_EVALID);
    assert_int_equal(err.line, 2);
    assert_int_equal(err.column, 3);
    assert_int_equal(s.out.len, 0);
    aw_buf_free(&s.out);
    assert_int_equal(aw_messages_encode_json("[]", 2, NULL, NULL, NULL, &err), AW_EINVAL);
}

/* Many messages: several blocks, a refused block stops it. */
static void blocks_and_refusal(void **state) {
    (void)state;
    aw_buf json;
    aw_buf_init(&json, NULL);
    aw_buf_append_str(&json, "[");
    for (int i = 0; i < 4000; i++) {
        if (i) aw_buf_putc(&json, ',');
        aw_buf_printf(&json, "{\"role\":\"assistant\",\"content\":\"step %d <a href=\\\"x\\\">&</a> %0200d\","
                             "\"tool_calls\":[{\"id\":\"c%d\",\"function\":{\"name\":\"t%d\",\"arguments\":\"{\\\"q\\\": [1, 2]}\"}}]},"
                             "{\"role\":\"tool\",\"tool_call_id\":\"c%d\",\"content\":\"done\"}",
                      i, i, i, i % 7, i);
    }
    aw_buf_append_str(&json, "]");
    same_both_ways(json.data, json.len, AW_MESSAGES_AUTO, AW_MESSAGES_XML);
    same_both_ways(json.data, json.len, AW_MESSAGES_AUTO, AW_MESSAGES_TEXT);
    sink s;
    memset(&s, 0, sizeof s);
    aw_buf_init(&s.out, NULL);
    aw_error err;
    assert_int_equal(aw_messages_encode_json(json.data, json.len, NULL, to_sink, &s, &err), 0);
    assert_true(s.calls >= 4); /* handed on in blocks as produced */
    size_t blocks = s.calls;
    aw_buf_clear(&s.out);
    s.calls = 0;
    s.refuse_at = 2;
    assert_int_equal(aw_messages_encode_json(json.data, json.len, NULL, to_sink, &s, &err), AW_ESTOP);
    assert_int_equal(s.calls, 2);
    assert_true(blocks > 2);
    aw_buf_free(&s.out);
    aw_buf_free(&json);
}

typedef struct sweep_case {
    const char *json;
    aw_messages_encoding enc;
} sweep_case;

static int stream_with(const aw_allocator *a, void *ctx) {
    const sweep_case *c = ctx;
    aw_messages_options o = {AW_MESSAGES_AUTO, c->enc, false, a};
    sink s;
    memset(&s, 0, sizeof s);
    aw_buf_init(&s.out, NULL);
    aw_error err;
    int rc = aw_messages_encode_json(c->json, strlen(c->json), &o, to_sink, &s, &err);
    aw_buf_free(&s.out);
    return rc;
}

static void allocation_failures(void **state) {
    (void)state;
    static const char *const files[] = {"openai.json", "splice.json", "passthrough.json", "parts.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/vectors/messages/%s", AW_SOURCE_DIR, files[i]);
        char *json = aw_test_read_file(path, NULL);
        assert_non_null(json);
        for (int enc = 0; enc < 2; enc++) {
            sweep_case c = {json, enc ? AW_MESSAGES_TEXT : AW_MESSAGES_XML};
            assert_true(aw_failalloc_run(stream_with, &c, 0) > 0);
        }
        free(json);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(vectors_both_ways),  cmocka_unit_test(shapes_and_edges),
        cmocka_unit_test(errors_placed),      cmocka_unit_test(blocks_and_refusal),
        cmocka_unit_test(allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
