/* The streaming JSON-lines reader: every chunking gives the same calls as
 * the whole input; blank lines, CRLF, a last line without a newline, lines
 * longer than any chunk, error positions by line, stopping, options, and
 * allocation failures. */
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

/* ---- a callback that logs what it sees -------------------------------------- */

typedef struct logger {
    aw_buf log;       /* one line of text per call */
    size_t calls;
    size_t stop_at;   /* return non-zero on this line (0: never) */
    bool offsets;     /* include err->offset in the log */
} logger;

static int log_fn(void *ctx, size_t line, const aw_json_value *root, const aw_error *err) {
    logger *lg = ctx;
    lg->calls++;
    if (root) {
        assert_null(err);
        assert_int_equal(aw_buf_printf(&lg->log, "%zu ok ", line), 0);
        assert_int_equal(aw_json_write(root, NULL, &lg->log, NULL), 0);
        assert_int_equal(aw_buf_putc(&lg->log, '\n'), 0);
    } else {
        assert_non_null(err);
        assert_true(err->code < 0);
        assert_int_equal(err->line, line);
        if (lg->offsets)
            aw_buf_printf(&lg->log, "%zu error %d %zu:%zu @%zu %s\n", line, err->code, err->line, err->column,
                          err->offset, err->message);
        else
            aw_buf_printf(&lg->log, "%zu error %d %zu:%zu %s\n", line, err->code, err->line, err->column,
                          err->message);
    }
    return lg->stop_at && line == lg->stop_at;
}

static void logger_init(logger *lg) {
    memset(lg, 0, sizeof *lg);
    aw_buf_init(&lg->log, NULL);
    aw_buf_append(&lg->log, "", 0);
}

/* Feed text in chunks of `chunk` bytes (0: whole) and return the log. *rc
 * gets the first non-zero status of feed/finish; *lines the line count. */
static char *run_chunked(const char *text, size_t len, size_t chunk, const aw_json_read_options *opts,
                         size_t stop_at, int *rc, size_t *lines) {
    logger lg;
    logger_init(&lg);
    lg.stop_at = stop_at;
    lg.offsets = true;
    aw_jsonl_reader *r = aw_jsonl_reader_new(opts);
    assert_non_null(r);
    aw_error err;
    int status = 0;
    if (chunk == 0) chunk = len ? len : 1;
    /* every chunk is its own exact-size copy, so ASan sees any read past it */
    for (size_t i = 0; i < len && status == 0; i += chunk) {
        size_t n = len - i < chunk ? len - i : chunk;
        char *c = malloc(n);
        assert_non_null(c);
        memcpy(c, text + i, n);
        status = aw_jsonl_feed(r, c, n, log_fn, &lg, &err);
        free(c);
    }
    if (status == 0) status = aw_jsonl_finish(r, log_fn, &lg, &err);
    if (status) assert_int_equal(err.code, status);
    if (rc) *rc = status;
    if (lines) *lines = aw_jsonl_line_count(r);
    aw_jsonl_reader_free(r);
    return lg.log.data;
}

/* The same log for the whole input and every chunk size 1..17 (and a few
 * bigger ones); returns the whole-input log. */
static char *run_all_chunkings(const char *text, size_t len, const aw_json_read_options *opts) {
    int rc;
    size_t lines;
    char *whole = run_chunked(text, len, 0, opts, 0, &rc, &lines);
    assert_int_equal(rc, 0);
    static const size_t extra[] = {31, 64, 100, 4096};
    for (size_t k = 1; k <= 17 + sizeof extra / sizeof extra[0]; k++) {
        size_t chunk = k <= 17 ? k : extra[k - 18];
        int rc2;
        size_t lines2;
        char *log = run_chunked(text, len, chunk, opts, 0, &rc2, &lines2);
        assert_int_equal(rc2, 0);
        assert_int_equal(lines2, lines);
        if (strcmp(log, whole)) fail_msg("chunk size %zu:\n%s\nwhole input:\n%s", chunk, log, whole);
        free(log);
    }
    return whole;
}

/* ---- the documents ------------------------------------------------------------------ */

static const char doc_main[] =
    "{\"type\":\"message\",\"text\":\"h\xC3\xA9llo \\u00e9 \xF0\x9F\x98\x80\",\"n\":[1,2.5,-3e2]}\n" /* 1 */
    "\n"                                                                                         /* 2 */
    "[1, 2,]\n"                                                                                  /* 3: bad */
    "  \t \n"                                                                                    /* 4 */
    "\"str\"\r\n"                                                                                /* 5 */
    "{\"x\": {\"y\": [true, false, null]}, \"x\": 2}\r\n"                                        /* 6 */
    "  42  \n"                                                                                   /* 7 */
    "\r\n"                                                                                       /* 8 */
    "{\"bad\": }\n"                                                                              /* 9: bad */
    "[\"\xC3\xA9\xE6\x97\xA5\", x]\r\n"                                                          /* 10: bad */
    "{\"last\": \"no newline\"}";                                                                /* 11 */

static const char want_main[] =
    "1 ok {\"type\":\"message\",\"text\":\"h\xC3\xA9llo \xC3\xA9 \xF0\x9F\x98\x80\",\"n\":[1,2.5,-300]}\n"
    "3 error -3 3:7 @71 trailing comma before ']'\n"
    "5 ok \"str\"\n"
    "6 ok {\"x\":2}\n"
    "7 ok 42\n"
    "9 error -3 9:9 @145 unexpected '}': expected a value\n"
    "10 error -3 10:8 @157 unexpected 'x': expected a value\n"
    "11 ok {\"last\":\"no newline\"}\n";

static void test_chunkings(void **state) {
    (void)state;
    char *log = run_all_chunkings(doc_main, sizeof doc_main - 1, NULL);
    if (strcmp(log, want_main)) fail_msg("got:\n%s\nwanted:\n%s", log, want_main);
    free(log);
    int rc;
    size_t lines;
    log = run_chunked(doc_main, sizeof doc_main - 1, 3, NULL, 0, &rc, &lines);
    assert_int_equal(lines, 11);
    free(log);

    /* the same text with a final newline: the same calls, the same count */
    char with_nl[sizeof doc_main + 1];
    memcpy(with_nl, doc_main, sizeof doc_main - 1);
    with_nl[sizeof doc_main - 1] = '\n';
    log = run_all_chunkings(with_nl, sizeof doc_main, NULL);
    assert_string_equal(log, want_main);
    free(log);
    log = run_chunked(with_nl, sizeof doc_main, 5, NULL, 0, &rc, &lines);
    assert_int_equal(lines, 11);
    free(log);
}

static void test_blank_and_line_ends(void **state) {
    (void)state;
    int rc;
    size_t lines;
    char *log;
    /* nothing at all */
    log = run_chunked("", 0, 0, NULL, 0, &rc, &lines);
    assert_int_equal(rc, 0);
    assert_int_equal(lines, 0);
    assert_string_equal(log, "");
    free(log);
    /* only blank lines of every kind: counted, never reported */
    static const char blanks[] = "\n\r\n \n\t\r\n  \t  \r\n\r\n   ";
    free(run_all_chunkings(blanks, sizeof blanks - 1, NULL));
    log = run_chunked(blanks, sizeof blanks - 1, 2, NULL, 0, &rc, &lines);
    assert_string_equal(log, "");
    assert_int_equal(lines, 7);
    free(log);
    /* a last line of only "\r" is blank too */
    log = run_chunked("1\n\r", 3, 1, NULL, 0, &rc, &lines);
    assert_string_equal(log, "1 ok 1\n");
    assert_int_equal(lines, 2);
    free(log);
    /* CR inside a line is JSON whitespace; "\r\r\n" leaves one CR to it */
    static const char crs[] = "[1,\r2]\n[3]\r\r\n{\"a\":\r\n1}\n";
    log = run_all_chunkings(crs, sizeof crs - 1, NULL);
    assert_string_equal(log, "1 ok [1,2]\n2 ok [3]\n3 error -3 3:6 @18 unexpected end of input\n"
                             "4 error -3 4:2 @21 unexpected '}': unexpected data after the JSON value\n");
    free(log);
    /* a line of one value without a newline, and a lone value after blanks */
    log = run_all_chunkings("true", 4, NULL);
    assert_string_equal(log, "1 ok true\n");
    free(log);
    log = run_all_chunkings("\n\n  null  ", 10, NULL);
    assert_string_equal(log, "3 ok null\n");
    free(log);
}

/* A lone CR in a line does not end it: the column of an error after it is
 * counted from the start of the JSON line. */
static void test_lone_cr_column(void **state) {
    (void)state;
    static const char text[] = "[1]\n[1,\r}\n";
    char *log = run_all_chunkings(text, sizeof text - 1, NULL);
    assert_string_equal(log, "1 ok [1]\n2 error -3 2:5 @8 unexpected '}': expected a value\n");
    free(log);
}

static void test_errors_by_line(void **state) {
    (void)state;
    /* bad line 3 is reported as line 3, with its column, and reading goes on */
    static const char text[] = "{\"a\":1}\n{\"b\":2}\n{\"c\":3 \"d\":4}\n{\"e\":5}\n";
    char *log = run_all_chunkings(text, sizeof text - 1, NULL);
    assert_string_equal(log, "1 ok {\"a\":1}\n2 ok {\"b\":2}\n"
                             "3 error -3 3:8 @23 unexpected '\"': expected ',' or '}' after an object member\n"
                             "4 ok {\"e\":5}\n");
    free(log);
    /* every kind of line error: syntax, UTF-8, NUL, depth, two values */
    static const char bad[] = "[\"\xFF\"]\n\"a\0b\"\n[[[[[[1]]]]]]\n1 2\n{\"ok\":true}\n\"unterminated\n";
    aw_json_read_options o = {.max_depth = 5};
    log = run_all_chunkings(bad, sizeof bad - 1, &o);
    assert_string_equal(log, "1 error -4 1:3 @2 invalid UTF-8 byte 0xFF in string\n"
                             "2 error -3 2:3 @8 control character U+0000 in string must be escaped\n"
                             "3 error -5 3:6 @17 nesting deeper than 5 levels\n"
                             "4 error -3 4:3 @28 unexpected '2': unexpected data after the JSON value\n"
                             "5 ok {\"ok\":true}\n"
                             "6 error -3 6:1 @42 unterminated string\n");
    free(log);
    /* a BOM is a stray byte unless allowed */
    static const char bom[] = "\xEF\xBB\xBF{\"a\":1}\n[2]\n";
    log = run_all_chunkings(bom, sizeof bom - 1, NULL);
    assert_string_equal(log, "1 error -3 1:1 @0 unexpected byte 0xEF: expected a value\n2 ok [2]\n");
    free(log);
    aw_json_read_options ob = {.allow_bom = true};
    log = run_all_chunkings(bom, sizeof bom - 1, &ob);
    assert_string_equal(log, "1 ok {\"a\":1}\n2 ok [2]\n");
    free(log);
}

/* A line longer than any chunk and than any buffer the reader starts with. */
static void test_long_line(void **state) {
    (void)state;
    size_t big = 1u << 20;
    size_t len = big + 64;
    char *text = malloc(len);
    assert_non_null(text);
    size_t o = (size_t)snprintf(text, len, "[1]\n{\"big\":\"");
    memset(text + o, 'x', big);
    size_t escapes = 0; /* each: 4 bytes, 3 characters, 2 decoded characters */
    for (size_t i = 1000; i < big; i += 4096, escapes++) memcpy(text + o + i, "\\n\xC3\xA9", 4);
    o += big;
    o += (size_t)snprintf(text + o, len - o, "\"}\r\n[2]\n");
    static const size_t chunks[] = {0, 1, 7, 17, 4096, 65536, 1000000};
    char *first = NULL;
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        int rc;
        size_t lines;
        char *log = run_chunked(text, o, chunks[k], NULL, 0, &rc, &lines);
        assert_int_equal(rc, 0);
        assert_int_equal(lines, 3);
        if (!first) {
            first = log;
            continue;
        }
        if (strcmp(log, first)) fail_msg("chunk size %zu differs", chunks[k]);
        free(log);
    }
    /* the long value came through whole */
    assert_memory_equal(first, "1 ok [1]\n2 ok {\"big\":\"", 22);
    assert_int_equal(strlen(first), 9 + 13 + big + 2 + 1 + 9);
    assert_string_equal(first + strlen(first) - 9, "3 ok [2]\n");
    free(first);

    /* and a long bad line reports its column in characters: {"big":"...", */
    assert_int_equal(text[o - 7], '}');
    text[o - 7] = ',';
    char *log = run_chunked(text, o, 13, NULL, 0, NULL, NULL);
    char want[128];
    snprintf(want, sizeof want, "2 error -3 2:%zu @%zu unexpected end of input\n", 8 + big - escapes + 2 + 1,
             (size_t)4 + 8 + big + 2);
    if (!strstr(log, want)) fail_msg("%s not in %.*s", want, 200, log);
    free(log);
    free(text);
}

static void test_stop(void **state) {
    (void)state;
    static const char text[] = "1\n2\n\n4\nbad\n6\n";
    for (size_t chunk = 0; chunk <= 7; chunk++) {
        int rc;
        char *log = run_chunked(text, sizeof text - 1, chunk, NULL, 4, &rc, NULL);
        assert_int_equal(rc, AW_ESTOP);
        assert_string_equal(log, "1 ok 1\n2 ok 2\n4 ok 4\n");
        free(log);
        /* a callback may stop on an error line too */
        log = run_chunked(text, sizeof text - 1, chunk, NULL, 5, &rc, NULL);
        assert_int_equal(rc, AW_ESTOP);
        assert_string_equal(log, "1 ok 1\n2 ok 2\n4 ok 4\n5 error -3 5:1 @7 unexpected 'b': expected a value\n");
        free(log);
    }
    /* stopping on the last line, reached by finish */
    int rc;
    char *log = run_chunked("1\n2", 3, 0, NULL, 2, &rc, NULL);
    assert_int_equal(rc, AW_ESTOP);
    free(log);
    aw_jsonl_reader *r = aw_jsonl_reader_new(NULL);
    logger lg;
    logger_init(&lg);
    lg.stop_at = 1;
    aw_error err;
    assert_int_equal(aw_jsonl_feed(r, "[1]\n[2]\n", 8, log_fn, &lg, &err), AW_ESTOP);
    assert_int_equal(err.code, AW_ESTOP);
    assert_string_equal(err.message, "stopped by the callback at line 1");
    assert_int_equal(lg.calls, 1);
    aw_jsonl_reader_free(r);
    aw_buf_free(&lg.log);
}

static void test_arguments(void **state) {
    (void)state;
    aw_jsonl_reader *r = aw_jsonl_reader_new(NULL);
    assert_non_null(r);
    logger lg;
    logger_init(&lg);
    aw_error err;
    assert_int_equal(aw_jsonl_feed(NULL, "1\n", 2, log_fn, &lg, &err), AW_EINVAL);
    assert_int_equal(aw_jsonl_feed(r, "1\n", 2, NULL, &lg, &err), AW_EINVAL);
    assert_int_equal(aw_jsonl_feed(r, NULL, 2, log_fn, &lg, &err), AW_EINVAL);
    assert_int_equal(aw_jsonl_feed(r, NULL, 0, log_fn, &lg, &err), 0);
    assert_int_equal(aw_jsonl_finish(NULL, log_fn, &lg, &err), AW_EINVAL);
    assert_int_equal(aw_jsonl_finish(r, NULL, &lg, &err), AW_EINVAL);
    /* a NULL err is allowed */
    assert_int_equal(aw_jsonl_feed(r, "[1", 2, log_fn, &lg, NULL), 0);
    assert_int_equal(aw_jsonl_feed(r, "]\n{}", 4, log_fn, &lg, NULL), 0);
    assert_int_equal(aw_jsonl_finish(r, log_fn, &lg, NULL), 0);
    /* finish twice is harmless */
    assert_int_equal(aw_jsonl_finish(r, log_fn, &lg, NULL), 0);
    assert_string_equal(lg.log.data, "1 ok [1]\n2 ok {}\n");
    assert_int_equal(aw_jsonl_line_count(r), 2);
    assert_int_equal(aw_jsonl_line_count(NULL), 0);
    aw_jsonl_reader_free(r);
    aw_jsonl_reader_free(NULL);
    aw_buf_free(&lg.log);
}

/* ---- allocation failures ------------------------------------------------------------- */

typedef struct sweep {
    const char *text;
    size_t len;
    size_t chunk;
    const char *want; /* the log when nothing fails */
} sweep;

static int sweep_fn(const aw_allocator *a, void *ctx) {
    sweep *s = ctx;
    aw_json_read_options o = {.alloc = a};
    aw_jsonl_reader *r = aw_jsonl_reader_new(&o);
    if (!r) return AW_ENOMEM;
    logger lg;
    logger_init(&lg);
    lg.offsets = true;
    aw_error err;
    int rc = 0;
    for (size_t i = 0; i < s->len && rc == 0; i += s->chunk) {
        size_t n = s->len - i < s->chunk ? s->len - i : s->chunk;
        rc = aw_jsonl_feed(r, s->text + i, n, log_fn, &lg, &err);
    }
    if (rc == 0) rc = aw_jsonl_finish(r, log_fn, &lg, &err);
    if (rc) {
        assert_int_equal(rc, AW_ENOMEM);
        assert_int_equal(err.code, AW_ENOMEM);
    } else if (strcmp(lg.log.data, s->want)) {
        fail_msg("log differs:\n%s", lg.log.data);
    }
    aw_jsonl_reader_free(r);
    aw_buf_free(&lg.log);
    return rc;
}

static void test_alloc_failures(void **state) {
    (void)state;
    /* a document with a long line, many members and deep lines, so buffers,
     * arena blocks and parser stacks all grow */
    aw_buf text;
    aw_buf_init(&text, NULL);
    aw_buf_append(&text, doc_main, sizeof doc_main - 1);
    aw_buf_append_str(&text, "\n{");
    for (int i = 0; i < 100; i++) aw_buf_printf(&text, "%s\"k%d\":[%d]", i ? "," : "", i, i);
    aw_buf_append_str(&text, "}\n");
    for (int i = 0; i < 80; i++) aw_buf_append_str(&text, "[{\"a\":");
    aw_buf_append_str(&text, "0");
    for (int i = 0; i < 80; i++) aw_buf_append_str(&text, "}]");
    aw_buf_append_str(&text, "\n\"");
    for (int i = 0; i < 2000; i++) aw_buf_append_str(&text, "long line ");
    aw_buf_append_str(&text, "\"\n[1]");
    static const size_t chunks[] = {1, 5, 64, 100000};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        int rc;
        char *want = run_chunked(text.data, text.len, chunks[k], NULL, 0, &rc, NULL);
        assert_int_equal(rc, 0);
        sweep s = {text.data, text.len, chunks[k], want};
        long calls = aw_failalloc_run(sweep_fn, &s, 0);
        assert_true(calls > 3);
        free(want);
    }
    aw_buf_free(&text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chunkings),      cmocka_unit_test(test_blank_and_line_ends),
        cmocka_unit_test(test_lone_cr_column), cmocka_unit_test(test_errors_by_line),
        cmocka_unit_test(test_long_line),      cmocka_unit_test(test_stop),
        cmocka_unit_test(test_arguments),      cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
