/* The MCP stdio framing: lines in any chunking, JSON-RPC messages sorted
 * by kind, lines that are not JSON-RPC and lines over the limit reported
 * with the id they answered (found by the skim, even last in a 100 MB
 * line) without holding such a line, allocation failures. */
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
#include "internal/mcp_reader.h"

/* Each message as one short line: "KIND id method|problem". */
typedef struct seen {
    aw_buf text;
    int count;
} seen;

static const char *kind_name(mcp_msg_kind k)
{
    switch (k) {
    case MCP_MSG_REQUEST: return "request";
    case MCP_MSG_NOTIFICATION: return "notification";
    case MCP_MSG_RESULT: return "result";
    case MCP_MSG_ERROR: return "error";
    case MCP_MSG_INVALID: return "invalid";
    case MCP_MSG_OVERSIZED: return "oversized";
    }
    return "?";
}

static int record(void *ctx, const mcp_msg *m)
{
    seen *s = ctx;
    s->count++;
    aw_buf_printf(&s->text, "%s", kind_name(m->kind));
    if (m->has_int_id)
        aw_buf_printf(&s->text, " id=%lld", (long long)m->int_id);
    if (m->method.len)
        aw_buf_printf(&s->text, " %.*s", (int)m->method.len, m->method.ptr);
    if (m->kind == MCP_MSG_ERROR)
        aw_buf_printf(&s->text, " %lld:%.*s", (long long)m->error_code, (int)m->error_message.len, m->error_message.ptr);
    if (m->kind == MCP_MSG_OVERSIZED)
        aw_buf_printf(&s->text, " bytes=%llu", (unsigned long long)m->bytes);
    if (m->kind == MCP_MSG_INVALID)
        aw_buf_printf(&s->text, " (%s)", m->problem);
    aw_buf_putc(&s->text, '\n');
    return 0;
}

static char *read_in_chunks(const char *input, size_t len, size_t chunk, size_t max_line)
{
    mcp_reader *r = mcp_reader_new(NULL, max_line);
    assert_non_null(r);
    seen s = {0};
    aw_buf_init(&s.text, NULL);
    for (size_t off = 0; off < len; off += chunk)
        assert_int_equal(mcp_reader_feed(r, input + off, len - off < chunk ? len - off : chunk, record, &s), 0);
    mcp_reader_free(r);
    aw_buf_putc(&s.text, 0);
    return aw_buf_detach(&s.text, NULL);
}

static const char session[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-11-25\"}}\n"
    "\n"
    "   \r\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":3,\"progress\":1}}\r\n"
    "{\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n"
    "not json\n"
    "{\"jsonrpc\":\"1.0\",\"id\":5,\"result\":{}}\n"
    "[{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}]\n"
    "{\"jsonrpc\":\"2.0\",\"id\":7}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"content\":[{\"type\":\"te\n"
    "{\"result\":{\"a\":{\"id\":99}},\"jsonrpc\":\"2.0\",\"id\":9}\n";

static const char expected[] =
    "result id=1\n"
    "notification notifications/progress\n"
    "request ping\n"
    "error id=4 -32602:bad\n"
    "invalid (not JSON: ";

static void test_messages_are_sorted_by_kind(void **state)
{
    (void)state;
    char *got = read_in_chunks(session, strlen(session), strlen(session), 0);
    assert_memory_equal(got, expected, strlen(expected));
    assert_non_null(strstr(got, "invalid id=5 (its \"jsonrpc\" member is not \"2.0\")\n"));
    assert_non_null(strstr(got, "invalid (a batch (JSON array); MCP messages are single objects)\n"));
    assert_non_null(strstr(got, "invalid id=7 (a response with neither \"result\" nor \"error\")\n"));
    /* a broken answer still names its request, found by the skim */
    assert_non_null(strstr(got, "invalid id=8 (not JSON: "));
    /* the top-level id, not the one nested in the result */
    assert_non_null(strstr(got, "result id=9\n"));
    free(got);
}

static void test_any_chunking_reads_the_same(void **state)
{
    (void)state;
    char *whole = read_in_chunks(session, strlen(session), strlen(session), 0);
    for (size_t chunk = 1; chunk <= 17; chunk++) {
        char *got = read_in_chunks(session, strlen(session), chunk, 0);
        assert_string_equal(got, whole);
        free(got);
    }
    free(whole);
}

static void test_long_line_is_skimmed_for_its_id(void **state)
{
    (void)state;
    /* 64-byte limit: the 300-byte answer is dropped, its id (last) found;
     * the short line after it reads as usual */
    aw_buf in;
    aw_buf_init(&in, NULL);
    aw_buf_append_str(&in, "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
    for (int i = 0; i < 300; i++)
        aw_buf_putc(&in, i % 7 == 0 ? ',' : 'x');
    aw_buf_append_str(&in, "\\\"id\\\":1\"}]},\"jsonrpc\":\"2.0\",\"id\":42}\n{\"jsonrpc\":\"2.0\",\"id\":43,\"result\":{}}\n");
    for (size_t chunk = 1; chunk <= 70; chunk += 23) {
        char *got = read_in_chunks(in.data, in.len, chunk, 64);
        char want[128];
        snprintf(want, sizeof want, "oversized id=42 bytes=%zu\nresult id=43\n", strchr(in.data, '\n') - in.data);
        assert_string_equal(got, want);
        free(got);
    }
    /* a string id, an id inside a string, no id: none is taken for ours */
    const char *others = "{\"id\":\"7\",\"result\":\"......................................................\"}\n"
                         "{\"result\":\"\\\"id\\\":5 ...............................................\"}\n";
    char *got = read_in_chunks(others, strlen(others), 5, 32);
    assert_string_equal(got, "oversized bytes=76\noversized bytes=69\n");
    free(got);
    aw_buf_free(&in);
}

/* An allocator that keeps the high-water mark of live bytes. */
typedef struct peak_alloc {
    aw_allocator base;
    size_t live, peak;
} peak_alloc;

static void *pk_malloc(void *ctx, size_t n)
{
    peak_alloc *p = ctx;
    size_t *b = malloc(n + sizeof(size_t));
    if (!b)
        return NULL;
    *b = n;
    p->live += n;
    if (p->live > p->peak)
        p->peak = p->live;
    return b + 1;
}
static void pk_free(void *ctx, void *ptr)
{
    peak_alloc *p = ctx;
    size_t *b = (size_t *)ptr - 1;
    p->live -= *b;
    free(b);
}
static void *pk_realloc(void *ctx, void *ptr, size_t n)
{
    if (!ptr)
        return pk_malloc(ctx, n);
    void *fresh = pk_malloc(ctx, n);
    if (!fresh)
        return NULL;
    size_t old = ((size_t *)ptr)[-1];
    memcpy(fresh, ptr, old < n ? old : n);
    pk_free(ctx, ptr);
    return fresh;
}

static void test_line_of_100_mb_is_never_held(void **state)
{
    (void)state;
    peak_alloc pa = {{pk_malloc, pk_realloc, pk_free, &pa}, 0, 0};
    size_t max_line = 1u << 20;
    mcp_reader *r = mcp_reader_new(&pa.base, max_line);
    seen s = {0};
    aw_buf_init(&s.text, NULL);
    const char *head = "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"";
    assert_int_equal(mcp_reader_feed(r, head, strlen(head), record, &s), 0);
    char *chunk = malloc(65536);
    memset(chunk, 'x', 65536);
    for (int i = 0; i < 1600; i++) /* 100 MiB */
        assert_int_equal(mcp_reader_feed(r, chunk, 65536, record, &s), 0);
    const char *tail = "\"}]},\"jsonrpc\":\"2.0\",\"id\":3}\n";
    assert_int_equal(mcp_reader_feed(r, tail, strlen(tail), record, &s), 0);
    free(chunk);
    assert_int_equal(s.count, 1);
    char want[96];
    snprintf(want, sizeof want, "oversized id=3 bytes=%zu\n", strlen(head) + 1600u * 65536u + strlen(tail) - 1);
    aw_buf_putc(&s.text, 0);
    assert_string_equal(s.text.data, want);
    /* at most the limit (and the buffer's growth) was ever held */
    assert_true(pa.peak < 2 * max_line + 4096);
    mcp_reader_free(r);
    assert_int_equal(pa.live, 0);
    aw_buf_free(&s.text);
}

static int stop_at_first(void *ctx, const mcp_msg *m)
{
    (void)m;
    (*(int *)ctx)++;
    return 1;
}

static void test_callback_can_stop_the_feed(void **state)
{
    (void)state;
    mcp_reader *r = mcp_reader_new(NULL, 0);
    int n = 0;
    assert_int_equal(mcp_reader_feed(r, session, strlen(session), stop_at_first, &n), AW_ESTOP);
    assert_int_equal(n, 1);
    mcp_reader_reset(r);
    mcp_reader_free(r);
}

static int read_under(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    mcp_reader *r = mcp_reader_new(a, 48);
    if (!r)
        return AW_ENOMEM;
    seen s = {0};
    aw_buf_init(&s.text, NULL); /* the record itself is not under test */
    int rc = 0;
    for (size_t off = 0; off < strlen(session); off += 7) {
        int frc = mcp_reader_feed(r, session + off, strlen(session) - off < 7 ? strlen(session) - off : 7, record, &s);
        if (frc)
            rc = frc;
    }
    mcp_reader_free(r);
    /* every line is reported, read or not (a line lost to memory is an invalid one) */
    if (!rc && (s.count != 10 || strstr(s.text.data, "out of memory")))
        rc = AW_ENOMEM;
    aw_buf_free(&s.text);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    aw_failalloc_run(read_under, NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_messages_are_sorted_by_kind),
        cmocka_unit_test(test_any_chunking_reads_the_same),
        cmocka_unit_test(test_long_line_is_skimmed_for_its_id),
        cmocka_unit_test(test_line_of_100_mb_is_never_held),
        cmocka_unit_test(test_callback_can_stop_the_feed),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
