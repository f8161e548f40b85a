/* Tool calls written in fenced ```json blocks (the reference's
 * parseToolCalls), as aw_messages_parse_tool_calls reads them. */
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

/* The result document as compact JSON (caller frees). */
static char *parse_n(const char *text, size_t len) {
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_messages_parse_tool_calls(text, len, NULL, &doc, &err);
    if (rc) fail_msg("parse_tool_calls failed: %s", err.message);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(doc), NULL, &b, NULL), 0);
    aw_json_doc_free(doc);
    size_t n;
    char *s = aw_buf_detach(&b, &n);
    assert_non_null(s);
    return s;
}

static void expect_n(const char *text, size_t len, const char *want) {
    char *got = parse_n(text, len);
    assert_string_equal(got, want);
    aw_free(NULL, got);
}

static void expect(const char *text, const char *want) { expect_n(text, strlen(text), want); }

static void one_block(void **state) {
    (void)state;
    expect("I'll read it.\n\n```json\n{\"tool_calls\": [{\"name\": \"read\", \"args\": {\"path\": \"a.txt\"}, \"id\": \"c1\"}]}\n```\nThen answer.",
           "{\"tool_calls\":[{\"id\":\"c1\",\"name\":\"read\",\"args\":{\"path\":\"a.txt\"}}],"
           "\"text\":\"I'll read it.\\n\\nThen answer.\",\"errors\":[]}");
}

static void nothing_to_find(void **state) {
    (void)state;
    expect("", "{\"tool_calls\":[],\"text\":\"\",\"errors\":[]}");
    expect_n(NULL, 0, "{\"tool_calls\":[],\"text\":\"\",\"errors\":[]}");
    expect("just text with ``` inline ``` and {\"tool_calls\": []}",
           "{\"tool_calls\":[],\"text\":\"just text with ``` inline ``` and {\\\"tool_calls\\\": []}\",\"errors\":[]}");
}

static void defaults(void **state) {
    (void)state;
    /* args {} and id call_<index> when absent or null */
    expect("```json\n{\"tool_calls\":[{\"name\":\"a\"},{\"name\":\"b\",\"args\":null,\"id\":null},"
           "{\"name\":\"c\",\"id\":\"mine\"}]}\n```",
           "{\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"a\",\"args\":{}},{\"id\":\"call_1\",\"name\":\"b\",\"args\":{}},"
           "{\"id\":\"mine\",\"name\":\"c\",\"args\":{}}],\"text\":\"\",\"errors\":[]}");
}

static void duplicates_and_numbering(void **state) {
    (void)state;
    /* the reference's numbering: calls kept before the block + position
     * in it. Block 1 keeps x and call_1 (0 + 1). Block 2 (base 2) drops x
     * and keeps d as call_3. Block 3 (base 3) names e call_3, taken, so
     * dropped; drops x; keeps g as call_5. */
    expect("```json\n{\"tool_calls\":[{\"name\":\"a\",\"id\":\"x\"},{\"name\":\"b\"}]}\n```\n"
           "```json\n{\"tool_calls\":[{\"name\":\"c\",\"id\":\"x\"},{\"name\":\"d\"}]}\n```\n"
           "```json\n{\"tool_calls\":[{\"name\":\"e\"},{\"name\":\"f\",\"id\":\"x\"},{\"name\":\"g\"}]}\n```\n",
           "{\"tool_calls\":[{\"id\":\"x\",\"name\":\"a\",\"args\":{}},{\"id\":\"call_1\",\"name\":\"b\",\"args\":{}},"
           "{\"id\":\"call_3\",\"name\":\"d\",\"args\":{}},{\"id\":\"call_5\",\"name\":\"g\",\"args\":{}}],"
           "\"text\":\"\",\"errors\":[]}");
}

static void several_blocks_and_text_between(void **state) {
    (void)state;
    expect("A\n```json\n{\"tool_calls\":[{\"name\":\"one\"}]}\n```\nB\n\n```json\n{\"tool_calls\":[{\"name\":\"two\","
           "\"args\":{\"n\":[1,2]}}]}\n```\nC",
           "{\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"one\",\"args\":{}},{\"id\":\"call_1\",\"name\":\"two\","
           "\"args\":{\"n\":[1,2]}}],\"text\":\"A\\nB\\n\\nC\",\"errors\":[]}");
}

static void bad_block_kept_and_reported(void **state) {
    (void)state;
    /* the JSON error's own position, in the whole text */
    expect("Line one\n```json\n{\"tool_calls\": [\n  {\"name\": 'x'}\n]}\n```\nafter",
           "{\"tool_calls\":[],\"text\":\"Line one\\n```json\\n{\\\"tool_calls\\\": [\\n  {\\\"name\\\": 'x'}\\n]}\\n```\\nafter\","
           "\"errors\":[{\"offset\":45,\"line\":4,\"column\":12,\"message\":\"unexpected ''': expected a value\"}]}");
}

static void other_languages_untouched(void **state) {
    (void)state;
    const char *text = "```python\nprint(1)\n```\n"
                       "````markdown\n```json\n{\"tool_calls\":[{\"name\":\"inside\"}]}\n```\n````\n"
                       "```JSON\n{\"tool_calls\":[{\"name\":\"upper\"}]}\n```\n"
                       "```json5\n{\"tool_calls\":[{\"name\":\"five\"}]}\n```\n"
                       "```\n{\"tool_calls\":[{\"name\":\"bare\"}]}\n```\n";
    char *want = malloc(strlen(text) * 2 + 100);
    assert_non_null(want);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write_string(&b, text, strlen(text)), 0);
    sprintf(want, "{\"tool_calls\":[],\"text\":%s,\"errors\":[]}", b.data);
    expect(text, want);
    aw_buf_free(&b);
    free(want);
}

static void plain_json_is_text(void **state) {
    (void)state;
    expect("```json\n{\"answer\": 42}\n```\n",
           "{\"tool_calls\":[],\"text\":\"```json\\n{\\\"answer\\\": 42}\\n```\\n\",\"errors\":[]}");
}

static void fence_details(void **state) {
    (void)state;
    /* indentation, trailing blanks, CRLF (the newline after the closing
     * fence goes with the block), a longer fence closed only by as many */
    expect("a\r\n   ```json  \r\n{\"tool_calls\":[{\"name\":\"x\"}]}\r\n   ```\r\nb\r\n"
           "````json\n{\"tool_calls\":[{\"name\":\"y\"}]}\n```\n````\nc",
           "{\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"x\",\"args\":{}}],\"text\":\"a\\r\\nb\\r\\n"
           "````json\\n{\\\"tool_calls\\\":[{\\\"name\\\":\\\"y\\\"}]}\\n```\\n````\\nc\","
           "\"errors\":[{\"offset\":98,\"line\":8,\"column\":1,\"message\":\"unexpected '`': unexpected data after the JSON value\"}]}");
    /* a closing fence at the very end, without a newline */
    expect("x\n```json\n{\"tool_calls\":[{\"name\":\"z\"}]}\n```",
           "{\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"z\",\"args\":{}}],\"text\":\"x\\n\",\"errors\":[]}");
    /* "```json" with text after the info string is not a json block; a
     * backtick in the info string makes it no fence at all */
    expect("```json tool\n{\"tool_calls\":[{\"name\":\"z\"}]}\n```\n``` `json\n",
           "{\"tool_calls\":[],\"text\":\"```json tool\\n{\\\"tool_calls\\\":[{\\\"name\\\":\\\"z\\\"}]}\\n```\\n``` `json\\n\","
           "\"errors\":[]}");
}

static void unclosed_block(void **state) {
    (void)state;
    expect("ok\n```json\n{\"tool_calls\":[{\"name\":\"cut",
           "{\"tool_calls\":[],\"text\":\"ok\\n```json\\n{\\\"tool_calls\\\":[{\\\"name\\\":\\\"cut\","
           "\"errors\":[{\"offset\":3,\"line\":2,\"column\":1,\"message\":\"```json block is not closed\"}]}");
    /* an unclosed block of another language swallows the rest, silently */
    expect("```sh\nls\n```json\n{\"tool_calls\":[{\"name\":\"n\"}]}\n",
           "{\"tool_calls\":[],\"text\":\"```sh\\nls\\n```json\\n{\\\"tool_calls\\\":[{\\\"name\\\":\\\"n\\\"}]}\\n\",\"errors\":[]}");
}

static void bad_entries(void **state) {
    (void)state;
    /* a tool-call block is removed; entries breaking the rules are skipped
     * and reported at the fence */
    expect("x\n  ```json\n{\"tool_calls\":[7,{\"args\":{}},{\"name\":1},{\"name\":\"a\",\"args\":[1]},"
           "{\"name\":\"b\",\"id\":5},{\"name\":\"ok\"}]}\n```\n",
           "{\"tool_calls\":[{\"id\":\"call_5\",\"name\":\"ok\",\"args\":{}}],\"text\":\"x\\n\",\"errors\":["
           "{\"offset\":4,\"line\":2,\"column\":3,\"message\":\"tool_calls[0] must be an object\"},"
           "{\"offset\":4,\"line\":2,\"column\":3,\"message\":\"tool_calls[1]: 'name' is missing\"},"
           "{\"offset\":4,\"line\":2,\"column\":3,\"message\":\"tool_calls[2]: 'name' must be a string\"},"
           "{\"offset\":4,\"line\":2,\"column\":3,\"message\":\"tool_calls[3]: 'args' must be an object\"},"
           "{\"offset\":4,\"line\":2,\"column\":3,\"message\":\"tool_calls[4]: 'id' must be a string\"}]}");
    /* "tool_calls" that is not an array: kept, reported */
    expect("```json\n{\"tool_calls\":{}}\n```",
           "{\"tool_calls\":[],\"text\":\"```json\\n{\\\"tool_calls\\\":{}}\\n```\","
           "\"errors\":[{\"offset\":0,\"line\":1,\"column\":1,\"message\":\"'tool_calls' must be an array\"}]}");
    /* an empty block is not JSON */
    expect("```json\n```\n",
           "{\"tool_calls\":[],\"text\":\"```json\\n```\\n\",\"errors\":[{\"offset\":8,\"line\":2,\"column\":1,"
           "\"message\":\"unexpected end of input\"}]}");
}

static void hostile_bytes(void **state) {
    (void)state;
    /* NUL and invalid UTF-8 outside blocks are kept (the JSON writer shows
     * bad bytes as U+FFFD); inside a block they make it not JSON */
    static const char text[] = "a\0b\xff\n```json\n{\"tool_calls\":[{\"name\":\"\xc3\"}]}\n```\n```json\n"
                               "{\"tool_calls\":[{\"name\":\"n\\u0000\"}]}\n```\n";
    char *got = parse_n(text, sizeof text - 1);
    assert_string_equal(got, "{\"tool_calls\":[{\"id\":\"call_0\",\"name\":\"n\\u0000\",\"args\":{}}],"
                             "\"text\":\"a\\u0000b\xEF\xBF\xBD\\n```json\\n{\\\"tool_calls\\\":[{\\\"name\\\":\\\"\xEF\xBF\xBD\\\"}]}\\n```\\n\","
                             "\"errors\":[{\"offset\":37,\"line\":3,\"column\":25,\"message\":\"invalid UTF-8 byte 0xC3 in string\"}]}");
    aw_free(NULL, got);
}

static void deep_block(void **state) {
    (void)state;
    /* nesting past the reader's limit is a parse error, reported */
    enum { DEPTH = 5000 };
    char *text = malloc(2 * DEPTH + 64);
    assert_non_null(text);
    size_t n = (size_t)sprintf(text, "```json\n{\"tool_calls\":[{\"name\":\"f\",\"args\":{\"a\":");
    for (int i = 0; i < DEPTH; i++) text[n++] = '[';
    for (int i = 0; i < DEPTH; i++) text[n++] = ']';
    n += (size_t)sprintf(text + n, "}}]}\n```\n");
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_messages_parse_tool_calls(text, n, NULL, &doc, NULL), 0);
    const aw_json_value *root = aw_json_doc_root(doc);
    assert_int_equal(aw_json_count(aw_json_get(root, "tool_calls")), 0);
    assert_int_equal(aw_json_count(aw_json_get(root, "errors")), 1);
    aw_json_doc_free(doc);
    free(text);
}

static void bad_arguments(void **state) {
    (void)state;
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_messages_parse_tool_calls("x", 1, NULL, NULL, &err), AW_EINVAL);
    assert_int_equal(aw_messages_parse_tool_calls(NULL, 3, NULL, &doc, &err), AW_EINVAL);
    assert_null(doc);
}

typedef struct sweep_case {
    const char *text;
    size_t len;
    const char *want;
} sweep_case;

static int parse_with(const aw_allocator *a, void *ctx) {
    sweep_case *c = ctx;
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_messages_parse_tool_calls(c->text, c->len, a, &doc, &err);
    if (rc) {
        assert_int_equal(rc, AW_ENOMEM);
        assert_int_equal(err.code, AW_ENOMEM);
        assert_null(doc);
        return rc;
    }
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(doc), NULL, &b, NULL), 0);
    assert_string_equal(b.data, c->want);
    aw_buf_free(&b);
    aw_json_doc_free(doc);
    return 0;
}

static void allocation_failures(void **state) {
    (void)state;
    size_t len;
    char *text = aw_test_read_file(AW_SOURCE_DIR "/tests/vectors/messages/toolcalls.md", &len);
    assert_non_null(text);
    char *want = parse_n(text, len);
    sweep_case c = {text, len, want};
    assert_true(aw_failalloc_run(parse_with, &c, 0) > 0);
    aw_free(NULL, want);
    free(text);
}

static void vector(void **state) {
    (void)state;
    size_t len, want_len;
    char *text = aw_test_read_file(AW_SOURCE_DIR "/tests/vectors/messages/toolcalls.md", &len);
    char *want = aw_test_read_file(AW_SOURCE_DIR "/tests/vectors/messages/toolcalls.json", &want_len);
    assert_non_null(text);
    assert_non_null(want);
    assert_true(want_len > 0 && want[want_len - 1] == '\n');
    want[want_len - 1] = '\0';
    expect_n(text, len, want);
    free(text);
    free(want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_block),
        cmocka_unit_test(nothing_to_find),
        cmocka_unit_test(defaults),
        cmocka_unit_test(duplicates_and_numbering),
        cmocka_unit_test(several_blocks_and_text_between),
        cmocka_unit_test(bad_block_kept_and_reported),
        cmocka_unit_test(other_languages_untouched),
        cmocka_unit_test(plain_json_is_text),
        cmocka_unit_test(fence_details),
        cmocka_unit_test(unclosed_block),
        cmocka_unit_test(bad_entries),
        cmocka_unit_test(hostile_bytes),
        cmocka_unit_test(deep_block),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(vector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
