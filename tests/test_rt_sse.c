/* The Server-Sent Events reader: the format's rules (line ends, comments,
 * multi-line data, event/id/retry, the byte order mark), every chunking
 * of a stream giving the same events as the whole, the limits against a
 * hostile stream with the byte they name, the end of a stream, a handler
 * that stops, and allocation failures. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/buf.h"
#include "failalloc.h"
#include "internal/sse.h"
#include "testutil.h"

/* Every event and unknown field written as one line of text, to compare. */
typedef struct record {
    aw_buf out;
    int stop_after; /* stop at this event (1-based); 0: never */
    int events;
} record;

static int on_event(void *ctx, const aw_sse_event *ev)
{
    record *r = ctx;
    r->events++;
    aw_buf_printf(&r->out, "E@%llu type=%.*s id=%.*s retry=%lld data=", (unsigned long long)ev->offset,
                  (int)ev->type.len, ev->type.ptr, (int)ev->id.len, ev->id.ptr, (long long)ev->retry_ms);
    aw_buf_append(&r->out, ev->data.ptr, ev->data.len);
    aw_buf_putc(&r->out, '\n');
    return r->stop_after && r->events >= r->stop_after;
}

static int on_other(void *ctx, aw_text field, aw_text value, uint64_t offset)
{
    record *r = ctx;
    aw_buf_printf(&r->out, "F@%llu %.*s=%.*s\n", (unsigned long long)offset, (int)field.len, field.ptr,
                  (int)value.len, value.ptr);
    return 0;
}

static const aw_sse_handlers handlers = {on_event, on_other};

/* Feed text in the given chunk sizes (cycled; NULL: whole), then finish.
 * Returns the record text (malloc'd) and the final status in *rc. */
static char *run_chunks(const char *text, size_t len, const size_t *sizes, size_t nsizes, int *rc, aw_error *err)
{
    record rec = {0};
    aw_buf_init(&rec.out, NULL);
    aw_sse_reader r;
    aw_sse_init(&r, NULL, 0, 0, &handlers, &rec);
    size_t pos = 0, k = 0;
    *rc = 0;
    while (pos < len && *rc == 0) {
        size_t n = sizes ? sizes[k++ % nsizes] : len;
        if (n > len - pos)
            n = len - pos;
        *rc = aw_sse_feed(&r, text + pos, n, err);
        pos += n;
    }
    if (*rc == 0)
        *rc = aw_sse_finish(&r, err);
    aw_sse_release(&r);
    aw_buf_putc(&rec.out, 0);
    char *s = strdup(rec.out.data);
    aw_buf_free(&rec.out);
    return s;
}

static char *run_whole(const char *text, int *rc)
{
    aw_error err;
    return run_chunks(text, strlen(text), NULL, 0, rc, &err);
}

static void test_format_rules(void **state)
{
    (void)state;
    int rc;
    char *got = run_whole(": a comment\n"
                          "data: one\n\n"
                          "event: delta\n"
                          "data:two\n"
                          "data:  three\n"
                          "id: 7\n"
                          "retry: 1500\n\n"
                          "data\n\n"          /* a field with no colon: data with an empty value */
                          "event: dropped\n\n" /* no data: not dispatched */
                          "data: after\n\n",
                          &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "E@12 type= id= retry=-1 data=one\n"
                             "E@23 type=delta id=7 retry=1500 data=two\n three\n"
                             "E@77 type= id=7 retry=1500 data=\n"
                             "E@99 type= id=7 retry=1500 data=after\n");
    free(got);
}

static void test_line_ends_and_bom(void **state)
{
    (void)state;
    int rc;
    char *got = run_whole("\xEF\xBB\xBF"
                          "data: a\r\ndata: b\rdata: c\n\r\n"
                          "data: d\r\r",
                          &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "E@3 type= id= retry=-1 data=a\nb\nc\nE@30 type= id= retry=-1 data=d\n");
    free(got);
}

static void test_id_and_retry_rules(void **state)
{
    (void)state;
    int rc;
    /* An id holding NUL is ignored; retry must be all digits; unknown
     * fields go to on_other with their offsets. */
    const char text[] = "id: 1\nretry: 12x\ndata: a\n\nid: b\0c\nerror: {\"x\":1}\ndata: b\n\n";
    aw_error err;
    char *got = run_chunks(text, sizeof text - 1, NULL, 0, &rc, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "E@0 type= id=1 retry=-1 data=a\n"
                             "F@34 error={\"x\":1}\n"
                             "E@26 type= id=1 retry=-1 data=b\n");
    free(got);
}

/* A stream using every rule, fed in every way it can be cut. */
static const char mixed[] = "\xEF\xBB\xBF: keep-alive\r\n"
                            "event: message_start\r\ndata: {\"a\":1}\r\n\r\n"
                            "data: x\rdata: y\r\r"
                            "id: 42\nretry: 30\nevent: e\ndata\ndata:  spaced \n\n"
                            "other: thing\n:comment\ndata: \xC3\xA9t\xC3\xA9\n\n"
                            "data: last\n";

static void test_every_chunking_equals_whole(void **state)
{
    (void)state;
    size_t len = sizeof mixed - 1;
    int rc;
    aw_error err;
    char *whole = run_chunks(mixed, len, NULL, 0, &rc, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(whole, "data=last"));
    for (size_t size = 1; size <= len; size++) {
        char *got = run_chunks(mixed, len, &size, 1, &rc, &err);
        assert_int_equal(rc, 0);
        assert_string_equal(got, whole);
        free(got);
    }
    /* every cut into two and three pieces */
    for (size_t a = 1; a < len; a++) {
        size_t two[2] = {a, len};
        char *got = run_chunks(mixed, len, two, 2, &rc, &err);
        assert_string_equal(got, whole);
        free(got);
        for (size_t b = 1; a + b < len; b += 3) {
            size_t three[3] = {a, b, len};
            got = run_chunks(mixed, len, three, 3, &rc, &err);
            assert_string_equal(got, whole);
            free(got);
        }
    }
    /* random sizes from a fixed seed */
    aw_test_rng rng = {7};
    for (int round = 0; round < 500; round++) {
        size_t sizes[16];
        for (int i = 0; i < 16; i++)
            sizes[i] = 1 + aw_test_below(&rng, 9);
        char *got = run_chunks(mixed, len, sizes, 16, &rc, &err);
        assert_string_equal(got, whole);
        free(got);
    }
    free(whole);
}

static void test_line_limit_names_the_byte(void **state)
{
    (void)state;
    aw_sse_reader r;
    record rec = {0};
    aw_buf_init(&rec.out, NULL);
    aw_sse_init(&r, NULL, 16, 0, &handlers, &rec);
    aw_error err;
    assert_int_equal(aw_sse_feed(&r, "data: ok\n\n", 10, &err), 0);
    /* a line that never ends, fed in small pieces: refused once past the
     * limit, not when the stream ends */
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = aw_sse_feed(&r, "data: xxxx", 10, &err);
    assert_int_equal(rc, AW_ELIMIT);
    assert_string_equal(err.message, "an event-stream line longer than 16 bytes at byte 10");
    assert_int_equal(err.offset, 10);
    /* sticky */
    aw_error again;
    assert_int_equal(aw_sse_feed(&r, "\n\n", 2, &again), AW_ELIMIT);
    assert_string_equal(again.message, err.message);
    aw_sse_release(&r);

    /* the same line whole in one chunk */
    aw_sse_init(&r, NULL, 16, 0, &handlers, &rec);
    assert_int_equal(aw_sse_feed(&r, "data: 0123456789abcdef\n", 23, &err), AW_ELIMIT);
    assert_int_equal(err.offset, 0);
    aw_sse_release(&r);
    aw_buf_free(&rec.out);
}

static void test_event_limit(void **state)
{
    (void)state;
    aw_sse_reader r;
    aw_sse_init(&r, NULL, 64, 40, &handlers, NULL);
    aw_error err;
    int rc = 0;
    for (int i = 0; i < 20 && rc == 0; i++)
        rc = aw_sse_feed(&r, ": c\ndata: 0123456789\n", 21, &err);
    assert_int_equal(rc, AW_ELIMIT);
    assert_string_equal(err.message, "an event longer than 40 bytes at byte 4");
    aw_sse_release(&r);
}

static void test_end_of_stream(void **state)
{
    (void)state;
    int rc;
    aw_error err;
    const char cut[] = "data: a\n\ndata: par";
    char *got = run_chunks(cut, sizeof cut - 1, NULL, 0, &rc, &err);
    assert_int_equal(rc, AW_ESYNTAX);
    assert_string_equal(err.message, "the stream ended inside a line at byte 9");
    assert_string_equal(got, "E@0 type= id= retry=-1 data=a\n");
    free(got);
    /* a last event without its blank line is still delivered */
    got = run_whole("data: a\n\ndata: b\n", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "E@0 type= id= retry=-1 data=a\nE@9 type= id= retry=-1 data=b\n");
    free(got);
    /* an empty stream and a stream of comments hold nothing */
    got = run_whole("", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "");
    free(got);
    got = run_whole(":a\n:b\n\n\n", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(got, "");
    free(got);
}

static void test_handler_stops(void **state)
{
    (void)state;
    record rec = {0};
    aw_buf_init(&rec.out, NULL);
    rec.stop_after = 2;
    aw_sse_reader r;
    aw_sse_init(&r, NULL, 0, 0, &handlers, &rec);
    aw_error err;
    assert_int_equal(aw_sse_feed(&r, "data: 1\n\ndata: 2\n\ndata: 3\n\n", 27, &err), AW_ESTOP);
    assert_int_equal(rec.events, 2);
    assert_int_equal(aw_sse_feed(&r, "data: 4\n\n", 9, &err), AW_ESTOP);
    assert_int_equal(rec.events, 2);
    aw_sse_release(&r);
    aw_buf_free(&rec.out);
}

/* A long line split over a thousand chunks is carried whole to its end. */
static void test_long_line_over_many_chunks(void **state)
{
    (void)state;
    aw_sse_reader r;
    record rec = {0};
    aw_buf_init(&rec.out, NULL);
    aw_sse_init(&r, NULL, 0, 0, &handlers, &rec);
    aw_error err;
    char piece[1000];
    memset(piece, 'x', sizeof piece);
    assert_int_equal(aw_sse_feed(&r, "data: ", 6, &err), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(aw_sse_feed(&r, piece, sizeof piece, &err), 0);
    assert_int_equal(r.line.len, 6 + 1000 * 1000);
    assert_int_equal(aw_sse_feed(&r, "\n\n", 2, &err), 0);
    assert_int_equal(rec.events, 1);
    assert_int_equal(rec.out.len, strlen("E@0 type= id= retry=-1 data=") + 1000 * 1000 + 1);
    aw_sse_release(&r);
    aw_buf_free(&rec.out);
}

static int alloc_run(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    record rec = {0};
    aw_buf_init(&rec.out, NULL);
    aw_sse_reader r;
    aw_sse_init(&r, a, 0, 0, &handlers, &rec);
    aw_error err;
    int rc = 0;
    /* split so the carry buffer is used as well as the in-place path */
    for (size_t pos = 0; pos < sizeof mixed - 1 && rc == 0; pos += 7) {
        size_t n = sizeof mixed - 1 - pos < 7 ? sizeof mixed - 1 - pos : 7;
        rc = aw_sse_feed(&r, mixed + pos, n, &err);
    }
    if (rc == 0)
        rc = aw_sse_finish(&r, &err);
    aw_sse_release(&r);
    aw_buf_free(&rec.out);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(alloc_run, NULL, 0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_rules),
        cmocka_unit_test(test_line_ends_and_bom),
        cmocka_unit_test(test_id_and_retry_rules),
        cmocka_unit_test(test_every_chunking_equals_whole),
        cmocka_unit_test(test_line_limit_names_the_byte),
        cmocka_unit_test(test_event_limit),
        cmocka_unit_test(test_end_of_stream),
        cmocka_unit_test(test_handler_stops),
        cmocka_unit_test(test_long_line_over_many_chunks),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
