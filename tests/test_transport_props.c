/* Properties of the extractor: the same events for every chunking of every
 * test input; hostile input (invalid UTF-8, NUL, huge payloads, floods of
 * '<', deep nesting, huge attributes) handled without a crash and still
 * chunking-invariant; and every allocation failure reported cleanly with
 * nothing leaked.
 *
 * Traces (transport_harness.h) merge adjacent TEXT and adjacent PAYLOAD
 * deltas, whose split points may differ between chunkings; everything else
 * must be identical. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "internal/transport_extract.h"
#include "transport_harness.h"
#include "testutil.h"

/* A small deterministic generator, so failures repeat. */
static aw_test_rng rng_state = {0x9E3779B97F4A7C15ull};
static uint64_t rng(void) { return aw_test_next64(&rng_state); }

typedef struct input {
    const aw_json_value *spec;
    unsigned turn;
    const char *stop;
    const aw_json_value *native;
    const char *p;
    size_t n;
    const char *name;
} input;

static int same(const th_trace *a, const th_trace *b) {
    return a->out.len == b->out.len && (a->out.len == 0 || memcmp(a->out.data, b->out.data, a->out.len) == 0);
}

static void show_difference(const char *name, const char *how, const th_trace *want, const th_trace *got) {
    size_t i = 0, n = want->out.len < got->out.len ? want->out.len : got->out.len;
    while (i < n && want->out.data[i] == got->out.data[i]) i++;
    size_t from = i > 200 ? i - 200 : 0;
    printf("%s, %s: traces differ at byte %zu\n  whole: ...%.400s\n  cut:   ...%.400s\n", name, how, i,
           want->out.data ? want->out.data + from : "", got->out.data ? got->out.data + from : "");
}

/* Whole, then every chunk size from 1 to max_size, then `plans` random
 * cuttings: all traces must be the same. Returns the number of failures. */
static int check_invariance(aw_transport *t, const input *in, size_t max_size, int plans) {
    th_trace whole;
    th_trace_init(&whole, true);
    int rc = th_run(t, in->turn, in->p, in->n, NULL, 0, in->stop, in->native, &whole);
    assert_int_equal(rc, 0);
    assert_false(whole.failed);
    int failures = 0;
    for (size_t size = 1; size <= max_size && !failures; size++) {
        th_trace tr;
        th_trace_init(&tr, true);
        assert_int_equal(th_run(t, in->turn, in->p, in->n, &size, 1, in->stop, in->native, &tr), 0);
        if (!same(&whole, &tr)) {
            char how[64];
            snprintf(how, sizeof how, "chunks of %zu", size);
            show_difference(in->name, how, &whole, &tr);
            failures++;
        }
        th_trace_free(&tr);
    }
    size_t sizes[64];
    for (int k = 0; k < plans && !failures; k++) {
        size_t m = 1 + (size_t)(rng() % 63);
        for (size_t i = 0; i < m; i++) sizes[i] = (size_t)(rng() % (in->n < 40 ? in->n + 1 : 40));
        th_trace tr;
        th_trace_init(&tr, true);
        assert_int_equal(th_run(t, in->turn, in->p, in->n, sizes, m, in->stop, in->native, &tr), 0);
        if (!same(&whole, &tr)) {
            show_difference(in->name, "random cuts", &whole, &tr);
            failures++;
        }
        th_trace_free(&tr);
    }
    th_trace_free(&whole);
    return failures;
}

static aw_json_doc *load_cases(void) {
    aw_buf file;
    aw_buf_init(&file, NULL);
    assert_int_equal(th_read_file(AW_SOURCE_DIR "/tests/vectors/transport/extract_cases.json", &file), 0);
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(file.data, file.len, NULL, &doc, &err), 0);
    aw_buf_free(&file);
    return doc;
}

static input input_of(const aw_json_value *c) {
    const aw_json_value *reply = aw_json_get(c, "reply");
    input in = {aw_json_get(c, "spec"), (unsigned)th_num(c, "turn", 1), th_str(c, "stop", NULL),
                aw_json_get(c, "native"), reply->u.str.ptr, reply->u.str.len, th_str(c, "name", "?")};
    return in;
}

/* Every chunking of every vector gives the same trace. */
static void test_every_chunking_of_every_vector(void **state) {
    (void)state;
    aw_json_doc *doc = load_cases();
    const aw_json_value *cases = aw_json_doc_root(doc);
    int failures = 0;
    for (size_t i = 0; i < aw_json_count(cases); i++) {
        input in = input_of(aw_json_at(cases, i));
        aw_error err;
        aw_transport *t = th_transport(in.spec, NULL, &err);
        assert_non_null(t);
        failures += check_invariance(t, &in, 64, 32);
        aw_transport_free(t);
    }
    aw_json_doc_free(doc);
    assert_int_equal(failures, 0);
}

/* ---- hostile input ---------------------------------------------------------- */

#define FINAL_OPEN "<ai-agent-1a2b3c4d-FINAL tool=\"agent__final_report\" status=\"success\" format=\"markdown\">"
#define FINAL_CLOSE "</ai-agent-1a2b3c4d-FINAL>"
#define CALL_OPEN "<ai-agent-1a2b3c4d-0001 tool=\"search\">"
#define CALL_CLOSE "</ai-agent-1a2b3c4d-0001>"

static aw_transport *xml_session(const char *dialects_json) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (dialects_json) assert_int_equal(aw_json_parse(dialects_json, strlen(dialects_json), NULL, &doc, &err), 0);
    aw_transport *t = th_transport(doc ? aw_json_doc_root(doc) : NULL, NULL, &err);
    aw_json_doc_free(doc);
    assert_non_null(t);
    return t;
}

/* ---- the short-chunk fast path ----------------------------------------------- */

/* A chunk of up to 64 bytes that holds no byte changing the scanner's
 * state skips the state machine (the fast path of aw_extractor_feed);
 * longer chunks and the whole reply go through it. These replies, all
 * longer than that, put every state the fast path decides on at every
 * chunk boundary: text; payload before its first content byte, plain,
 * with bytes held for a possible closing tag, inside CDATA with "]" or
 * "]]" pending, JSON inside and outside strings with an escape pending; a
 * reasoning block. Cut at every size from 1 to 64 and at random, they must
 * give the trace of the whole reply. */
static void test_fast_path_agrees_with_state_machine(void **state) {
    (void)state;
    static const char *const replies[] = {
        /* text, with '<' that starts nothing, starts a tag, or might */
        "Plain text long enough to pass the short-chunk limit of the extractor, "
        "then 3 < 4, a <b>bold</b> word, <ai-agent-x and <thi and </ai-agent-1a2b3c4d-0001> as text. "
        "The end <",
        /* plain payload: blank before content, '<' inside, near-closing tags */
        "intro " FINAL_OPEN " \n\t # Report\n\nwhere a < b and <br> and </ai-agent-1a2b3c4d-FINA and "
        "</ai-agent-1a2b3c4d-FINALX> and </ai-agent-1a2b3c4d-FINAL  \n> outro text after it",
        /* CDATA: ']' and ']]' pending across boundaries, a false end, text after the section */
        "a " FINAL_OPEN "  <![CDATA[ one ] two ]] three ]]] four ]]x ]>] ]]<five> "
        "</ai-agent-1a2b3c4d-FINAL> six ]]> after the section <x> " FINAL_CLOSE " b",
        /* CDATA opener that breaks off: payload */
        "a " FINAL_OPEN "<![CDAT not a section, and more payload to be long enough" FINAL_CLOSE " b",
        /* JSON: blank before content, closing tag and '<' inside strings, escapes of every kind */
        "call " CALL_OPEN " \n {\"query\": \"a \\\" </ai-agent-1a2b3c4d-0001> \\\\ \\\\\\\" x\\\\\", "
        "\"n\": [1, 2, {\"k\": \"v<\"}], \"e\": \"\\u00e9\\n\\/\"} " CALL_CLOSE " after",
        /* a JSON payload cut off inside a string */
        "call " CALL_OPEN "{\"query\": \"an unterminated string with \\\" and \\\\ and </ai-agent-1a2b3c4d-0001>",
        /* progress (JSON) and a reasoning block holding a tag */
        "<think> I could write <ai-agent-1a2b3c4d-0002 tool=\"search\">{\"query\": \"x\"}</ai-agent-1a2b3c4d-0002> "
        "but will not </think> <ai-agent-1a2b3c4d-PROGRESS tool=\"agent__progress_report\">"
        "{\"progress\": \"half way < there\"}</ai-agent-1a2b3c4d-PROGRESS> done",
        /* a closing tag in a JSON string, decided at once and after blanks: content, then the end */
        "call " CALL_OPEN "{\"query\": \"a " CALL_CLOSE " b\" , \"k\": [\"" CALL_CLOSE "\"  ]}" CALL_CLOSE
        " between " CALL_OPEN "{\"query\": \"left open" CALL_CLOSE "\nthe rest, with \"quotes\" in it " FINAL_OPEN
        "report" FINAL_CLOSE " end",
        /* a tag rejected as it opens, a valid one inside it, an unclosed tool tag, a broken opening tag */
        "<ai-agent-deadbeef-0001 tool=\"search\">{\"query\": \"x\"} " CALL_OPEN "{\"query\": \"in\"}" CALL_CLOSE
        " <ai-agent-1a2b3c4d-0002 tool=\"search\">{\"query\": \"never closed\"} <ai-agent-1a2b3c4d-0003 tool=\"fetch "
        "<ai-agent-1a2b3c4d-0004 tool=\"fetch\">{\"url\": \"u\"}</ai-agent-1a2b3c4d-0004> done",
        /* hermes: JSON payload of another dialect */
        ("<tool_call> {\"name\": \"search\", \"arguments\": {\"query\": \"in a <tool_call> \\\"string\\\"\"}} </tool_call> "
         "and text after the call"),
    };
    static const char *const stops[] = {"stop", "length"};
    aw_transport *t = xml_session("{\"dialects\": [\"hermes\"]}");
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        assert_true(strlen(replies[i]) > 64);
        for (size_t s = 0; s < 2; s++) {
            char name[48];
            snprintf(name, sizeof name, "fast path reply %zu, stop %s", i, stops[s]);
            input in = {NULL, 1, stops[s], NULL, replies[i], strlen(replies[i]), name};
            assert_int_equal(check_invariance(t, &in, 64, 64), 0);
        }
    }
    aw_transport_free(t);
}

static void test_invalid_utf8_and_nul(void **state) {
    (void)state;
    static const char reply[] =
        "\xff\xfe text \0 with NUL \xc3" FINAL_OPEN "a\0b\xed\xa0\x80\xf4\x90\x80\x80 c\xe2\x82" FINAL_CLOSE "\x80 tail"
        CALL_OPEN "{\"query\": \"\xff\0\"}" CALL_CLOSE
        "<ai-agent-1a2b3c4d-0002 tool=\"se\xffrch\">{\"query\": 1}</ai-agent-1a2b3c4d-0002>"
        "<ai-agent-1a2b3c4d-\xff\x00 tool=\"search\">{}</ai-agent-1a2b3c4d-\xff\x00>";
    input in = {NULL, 1, "stop", NULL, reply, sizeof reply - 1, "invalid UTF-8 and NUL"};
    aw_transport *t = xml_session(NULL);
    assert_int_equal(check_invariance(t, &in, 64, 32), 0);
    th_trace tr;
    th_trace_init(&tr, false);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &tr), 0);
    assert_int_equal(tr.counts[AW_X_FINAL], 1);
    /* the report keeps its bytes as they came (they are the caller's to judge) */
    const char *want = "\"content\":\"a\\u0000b";
    bool found = false;
    for (size_t i = 0; !found && i + strlen(want) <= tr.out.len; i++) found = !memcmp(tr.out.data + i, want, strlen(want));
    assert_true(found);
    th_trace_free(&tr);
    aw_transport_free(t);
}

static void test_huge_payloads(void **state) {
    (void)state;
    aw_transport *t = xml_session(NULL);
    /* a 50 MB final report, whole and in 64 KiB chunks */
    size_t big = 50u << 20;
    aw_buf r;
    aw_buf_init(&r, NULL);
    assert_int_equal(aw_buf_append_str(&r, "intro " FINAL_OPEN), 0);
    assert_int_equal(aw_buf_reserve(&r, big + 64), 0);
    memset(r.data + r.len, 'x', big);
    for (size_t i = 0; i < big; i += 4096) r.data[r.len + i] = '<'; /* '<' that starts nothing */
    r.len += big;
    assert_int_equal(aw_buf_append_str(&r, FINAL_CLOSE " outro"), 0);
    size_t sizes[] = {0, 65536, 4093};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        th_trace tr;
        th_trace_init(&tr, false);
        assert_int_equal(th_run(t, 1, r.data, r.len, sizes[k] ? &sizes[k] : NULL, sizes[k] ? 1 : 0, "stop", NULL, &tr), 0);
        assert_int_equal(tr.counts[AW_X_FINAL], 1);
        assert_int_equal(tr.counts[AW_X_REJECTED], 0);
        assert_int_equal(tr.visible.len, strlen("intro  outro"));
        assert_true(tr.out.len > big);
        th_trace_free(&tr);
    }
    aw_buf_free(&r);

    /* a 1 MB JSON tool payload, fed one byte at a time */
    size_t mb = 1u << 20;
    aw_buf_init(&r, NULL);
    assert_int_equal(aw_buf_append_str(&r, CALL_OPEN "{\"query\": \""), 0);
    assert_int_equal(aw_buf_reserve(&r, mb + 64), 0);
    for (size_t i = 0; i < mb; i++) r.data[r.len + i] = "ab</>\\n"[i % 7]; /* a, b, <, /, >, and the escape \\n */
    r.len += mb;
    assert_int_equal(aw_buf_append_str(&r, "\"}" CALL_CLOSE), 0);
    input in = {NULL, 1, "stop", NULL, r.data, r.len, "1 MB tool payload"};
    th_trace whole, bytes;
    th_trace_init(&whole, true);
    th_trace_init(&bytes, true);
    size_t one = 1;
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &whole), 0);
    assert_int_equal(th_run(t, 1, in.p, in.n, &one, 1, "stop", NULL, &bytes), 0);
    assert_int_equal(whole.counts[AW_X_CALL], 1);
    assert_true(same(&whole, &bytes));
    th_trace_free(&whole);
    th_trace_free(&bytes);
    aw_buf_free(&r);
    aw_transport_free(t);
}

static void flood(aw_transport *t, const char *unit, size_t times, const char *name, bool expect_text) {
    size_t u = strlen(unit);
    aw_buf r;
    aw_buf_init(&r, NULL);
    for (size_t i = 0; i < times; i++) assert_int_equal(aw_buf_append(&r, unit, u), 0);
    input in = {NULL, 1, "stop", NULL, r.data, r.len, name};
    size_t sizes[] = {1, 3, 7, 64, 4096};
    th_trace whole;
    th_trace_init(&whole, true);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &whole), 0);
    if (expect_text) {
        assert_int_equal(whole.visible.len, r.len);
        assert_int_equal(whole.counts[AW_X_TAG_OPEN], 0);
    }
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        th_trace tr;
        th_trace_init(&tr, true);
        assert_int_equal(th_run(t, 1, in.p, in.n, &sizes[k], 1, "stop", NULL, &tr), 0);
        if (!same(&whole, &tr)) {
            show_difference(name, "flood", &whole, &tr);
            fail();
        }
        th_trace_free(&tr);
    }
    th_trace_free(&whole);
    aw_buf_free(&r);
}

static void test_floods(void **state) {
    (void)state;
    aw_transport *t = xml_session("{\"dialects\": [\"hermes\", \"function_calls\"]}");
    flood(t, "<", 100000, "100,000 '<'", true);
    flood(t, "<ai-agent-", 20000, "20,000 '<ai-agent-'", true);
    flood(t, "<ai-agent-1a2b3c4d-00", 20000, "20,000 '<ai-agent-1a2b3c4d-00'", true);
    flood(t, "<thin", 20000, "20,000 '<thin'", true);
    flood(t, "<tool_cal", 20000, "20,000 '<tool_cal'", true);
    flood(t, "</", 50000, "50,000 '</'", true);
    /* many tags: each is handled, in time linear in their number */
    flood(t, "<ai-agent-1a2b3c4d-0001 tool=\"search\">{}</ai-agent-1a2b3c4d-0001>", 5000, "5,000 tags", false);
    flood(t, "<think><ai-agent-1a2b3c4d-0001>", 5000, "nested think", false);
    /* a tag that never closes, with '<' inside its payload */
    aw_buf r;
    aw_buf_init(&r, NULL);
    assert_int_equal(aw_buf_append_str(&r, FINAL_OPEN), 0);
    for (int i = 0; i < 100000; i++) assert_int_equal(aw_buf_append(&r, "</ai-agent-1a2b3c4d-FINA", 24), 0);
    input in = {NULL, 1, "length", NULL, r.data, r.len, "unclosed FINAL full of near-closing tags"};
    assert_int_equal(check_invariance(t, &in, 8, 4), 0);
    aw_buf_free(&r);
    aw_transport_free(t);
}

static void test_deep_nesting(void **state) {
    (void)state;
    aw_transport *t = xml_session("{\"format\": \"json\"}");
    aw_buf r;
    aw_buf_init(&r, NULL);
    assert_int_equal(aw_buf_append_str(&r, CALL_OPEN "{\"query\": "), 0);
    for (int i = 0; i < 100000; i++) assert_int_equal(aw_buf_putc(&r, '['), 0);
    for (int i = 0; i < 100000; i++) assert_int_equal(aw_buf_putc(&r, ']'), 0);
    assert_int_equal(aw_buf_append_str(&r, "}" CALL_CLOSE), 0);
    assert_int_equal(aw_buf_append_str(&r, "<ai-agent-1a2b3c4d-FINAL tool=\"agent__final_report\" status=\"success\" format=\"json\">"), 0);
    for (int i = 0; i < 100000; i++) assert_int_equal(aw_buf_append(&r, "{\"a\":", 5), 0);
    assert_int_equal(aw_buf_append_str(&r, FINAL_CLOSE), 0);
    input in = {NULL, 1, "stop", NULL, r.data, r.len, "deeply nested JSON"};
    th_trace tr;
    th_trace_init(&tr, false);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &tr), 0);
    /* whatever became of them, both tags were dealt with */
    assert_int_equal(tr.counts[AW_X_CALL] + tr.counts[AW_X_FINAL] + tr.counts[AW_X_REJECTED], 2);
    th_trace_free(&tr);
    size_t sizes[] = {1, 5, 4096};
    th_trace whole;
    th_trace_init(&whole, true);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &whole), 0);
    for (size_t k = 0; k < 3; k++) {
        th_trace_init(&tr, true);
        assert_int_equal(th_run(t, 1, in.p, in.n, &sizes[k], 1, "stop", NULL, &tr), 0);
        assert_true(same(&whole, &tr));
        th_trace_free(&tr);
    }
    th_trace_free(&whole);
    aw_buf_free(&r);
    aw_transport_free(t);
}

static void test_huge_attributes(void **state) {
    (void)state;
    aw_transport *t = xml_session(NULL);
    size_t mb = 1u << 20;
    aw_buf r;
    aw_buf_init(&r, NULL);
    /* a 1 MB tool name: not allowed; a 1 MB unknown attribute (with '>'
     * and the other quote inside) next to a good tool: a call */
    assert_int_equal(aw_buf_append_str(&r, "<ai-agent-1a2b3c4d-0001 tool=\""), 0);
    for (size_t i = 0; i < mb; i++) assert_int_equal(aw_buf_putc(&r, 'x'), 0);
    assert_int_equal(aw_buf_append_str(&r, "\">{\"query\": \"a\"}</ai-agent-1a2b3c4d-0001>"), 0);
    assert_int_equal(aw_buf_append_str(&r, "<ai-agent-1a2b3c4d-0002 note='"), 0);
    for (size_t i = 0; i < mb; i++) assert_int_equal(aw_buf_putc(&r, "a>\"&"[i % 4]), 0);
    assert_int_equal(aw_buf_append_str(&r, "' tool=\"search\">{\"query\": \"b\"}</ai-agent-1a2b3c4d-0002>"), 0);
    input in = {NULL, 1, "stop", NULL, r.data, r.len, "1 MB attributes"};
    th_trace tr;
    th_trace_init(&tr, false);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &tr), 0);
    assert_int_equal(tr.counts[AW_X_CALL], 1);
    assert_int_equal(tr.counts[AW_X_REJECTED], 1);
    th_trace_free(&tr);
    size_t sizes[] = {1, 7, 4096};
    th_trace whole;
    th_trace_init(&whole, true);
    assert_int_equal(th_run(t, 1, in.p, in.n, NULL, 0, "stop", NULL, &whole), 0);
    for (size_t k = 0; k < 3; k++) {
        th_trace_init(&tr, true);
        assert_int_equal(th_run(t, 1, in.p, in.n, &sizes[k], 1, "stop", NULL, &tr), 0);
        if (!same(&whole, &tr)) {
            show_difference(in.name, "chunks", &whole, &tr);
            fail();
        }
        th_trace_free(&tr);
    }
    th_trace_free(&whole);
    aw_buf_free(&r);
    aw_transport_free(t);
}

/* Tag names around the length limit of a held name: whether such a tag is
 * a tag or text, it must be the same whatever the chunking. */
static void test_long_tag_names(void **state) {
    (void)state;
    aw_transport *t = xml_session(NULL);
    for (size_t len = 240; len <= 270; len++) {
        static const char *const ends[] = {" tool=\"search\">{}", ">{}", "/>", "x"};
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
            aw_buf r;
            aw_buf_init(&r, NULL);
            assert_int_equal(aw_buf_append_str(&r, "a<ai-agent-1a2b3c4d-0001"), 0);
            for (size_t i = 22; i < len; i++) assert_int_equal(aw_buf_putc(&r, 'l'), 0);
            assert_int_equal(aw_buf_append_str(&r, ends[e]), 0);
            assert_int_equal(aw_buf_append_str(&r, "</ai-agent-1a2b3c4d-0001"), 0);
            for (size_t i = 22; i < len; i++) assert_int_equal(aw_buf_putc(&r, 'l'), 0);
            assert_int_equal(aw_buf_append_str(&r, ">b"), 0);
            char name[64];
            snprintf(name, sizeof name, "tag name of %zu bytes + '%s'", len, ends[e]);
            input in = {NULL, 1, "stop", NULL, r.data, r.len, name};
            assert_int_equal(check_invariance(t, &in, 40, 8), 0);
            aw_buf_free(&r);
        }
    }
    aw_transport_free(t);
}

/* Random bytes drawn from the pieces of the transport's syntax. */
static void test_random_soup(void **state) {
    (void)state;
    static const char *const pieces[] = {
        "<", ">", "/", "\"", "'", "=", " ", "\n", "{", "}", "[", "]", ":", ",", "\\", "x", "<![CDATA[", "]]>", "]",
        "<ai-agent-1a2b3c4d-", "</ai-agent-1a2b3c4d-", "0001", "0002", "FINAL", "PROGRESS", "deadbeef-",
        " tool=\"search\"", " tool='agent__final_report'", " status=\"success\"", " format=\"markdown\"",
        "<think>", "</think>", "<tool_call>", "</tool_call>", "{\"name\": \"search\", \"arguments\": {}}",
        "<function_calls><invoke name=\"search\">", "<parameter name=\"query\">", "</parameter></invoke></function_calls>",
        "{\"query\": \"", "\"}", "&amp;", "&#x3c;", "\xc3\xa9", "\xff", "```json\n", "\n```",
        "\\\"", "[\"", "\" ,", "\"x", "\xc2\xa0", "\xe3\x80\x80", "-1", "-00001", "<ai-agent-1a2b3c4d-0002 tool=search>",
        " status=\" Success \"", " format=\"MARKDOWN\""};
    size_t npieces = sizeof pieces / sizeof pieces[0];
    aw_transport *t = xml_session("{\"dialects\": [\"hermes\", \"function_calls\", \"fenced\"]}");
    static const char *const stops[] = {"stop", "length", NULL};
    for (int round = 0; round < 300; round++) {
        aw_buf r;
        aw_buf_init(&r, NULL);
        size_t count = 1 + (size_t)(rng() % 60);
        for (size_t i = 0; i < count; i++) assert_int_equal(aw_buf_append_str(&r, pieces[rng() % npieces]), 0);
        char name[32];
        snprintf(name, sizeof name, "soup %d", round);
        input in = {NULL, 1, stops[round % 3], NULL, r.data, r.len, name};
        assert_int_equal(check_invariance(t, &in, 16, 8), 0);
        aw_buf_free(&r);
    }
    aw_transport_free(t);
}

/* ---- re-reading stays linear ------------------------------------------------ */

/* The bytes read again (aw_extractor's `replayed`) while extracting the
 * reply in chunks of `chunk` (0: whole). */
static size_t replayed_by(const aw_transport *t, const char *p, size_t n, size_t chunk) {
    aw_extractor *x = aw_extractor_new(t, 1);
    assert_non_null(x);
    th_trace tr;
    th_trace_init(&tr, false);
    aw_error err;
    if (!chunk) chunk = n;
    for (size_t pos = 0; pos < n; pos += chunk)
        assert_int_equal(aw_extractor_feed(x, p + pos, n - pos < chunk ? n - pos : chunk, th_on_event, &tr, &err), 0);
    assert_int_equal(aw_extractor_finish(x, "stop", th_on_event, &tr, &err), 0);
    size_t replayed = x->replayed;
    aw_extractor_free(x);
    th_trace_free(&tr);
    return replayed;
}

static size_t count_byte(const char *p, size_t n, char c) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += p[i] == c;
    return k;
}

static void repeat(aw_buf *r, const char *unit, size_t times) {
    aw_buf_clear(r);
    for (size_t i = 0; i < times; i++) assert_int_equal(aw_buf_append_str(r, unit), 0);
}

/* A closing tag inside a JSON string that turns out to be the end has
 * the bytes after it read again: at most CLOSE_LOOKBACK of them, once per
 * tag, and each tag needs a '<' of its own. So what is read again grows
 * with the reply, never faster: four times the reply, four times the
 * bytes, and never more than CLOSE_LOOKBACK per '<'. The units are made
 * to re-read as much as they can: strings left open (so the slots stay
 * free), tags cut inside the rest of a cut tag, nine levels deep, and
 * rests as long as the look-back allows. */
static void test_rereading_is_linear(void **state) {
    (void)state;
    aw_buf nested, longest;
    aw_buf_init(&nested, NULL);
    aw_buf_init(&longest, NULL);
    for (int s = 1; s <= 10; s++) {
        char tag[160];
        snprintf(tag, sizeof tag, "<ai-agent-1a2b3c4d-%04d tool=search>[\\\"</ai-agent-1a2b3c4d-%04d>", s, s);
        assert_int_equal(aw_buf_append_str(&nested, tag), 0);
    }
    assert_int_equal(aw_buf_append_str(&nested, "\"x "), 0);
    assert_int_equal(aw_buf_append_str(&longest, CALL_OPEN "[\"a" CALL_CLOSE), 0);
    for (size_t i = 0; i < CLOSE_LOOKBACK - 40; i++) assert_int_equal(aw_buf_putc(&longest, 'x'), 0);
    assert_int_equal(aw_buf_append_str(&longest, "\"z "), 0);
    struct {
        const char *text;
    } units[] = {
        {CALL_OPEN "[\"hello" CALL_CLOSE "\nDone. " FINAL_OPEN "x" FINAL_CLOSE}, /* the reply, looped */
        {nested.data},
        {longest.data},
    };
    aw_transport *t = xml_session(NULL);
    aw_buf r;
    aw_buf_init(&r, NULL);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        size_t unit = strlen(units[u].text);
        repeat(&r, units[u].text, 50);
        size_t small = replayed_by(t, r.data, r.len, 0);
        assert_true(small >= 50); /* every unit re-reads */
        assert_true(small <= count_byte(r.data, r.len, '<') * CLOSE_LOOKBACK);
        assert_int_equal(replayed_by(t, r.data, r.len, 1), small);
        assert_int_equal(replayed_by(t, r.data, r.len, 7), small);
        repeat(&r, units[u].text, 200);
        size_t large = replayed_by(t, r.data, r.len, 0);
        assert_true(large <= count_byte(r.data, r.len, '<') * CLOSE_LOOKBACK);
        /* four times the reply: four times the bytes, give or take one unit's */
        if (large + unit < 4 * small || large > 4 * small + unit) {
            printf("unit %zu: %zu bytes read again for 50 units, %zu for 200\n", u, small, large);
            fail();
        }
    }
    aw_transport_free(t);

    /* Tags in slots of their own, each cut inside the string of the one
     * before, with no quote to decide them: only the end of the reply
     * could, and it is beyond the look-back of all but the last. Read
     * again from each closing tag to the end, they would cost the square
     * of their number; bounded, nothing is read again however many. */
    t = xml_session("{\"max_calls\": 1000}");
    size_t first = 0;
    for (int m = 250; m <= 1000; m *= 4) {
        aw_buf_clear(&r);
        for (int s = 1; s <= m; s++) {
            char tag[160];
            snprintf(tag, sizeof tag, "<ai-agent-1a2b3c4d-%04d tool=search>[\\\"</ai-agent-1a2b3c4d-%04d>", s, s);
            assert_int_equal(aw_buf_append_str(&r, tag), 0);
        }
        size_t got = replayed_by(t, r.data, r.len, 0);
        assert_true(got <= CLOSE_LOOKBACK);
        if (m == 250) first = got;
        else assert_int_equal(got, first);
    }
    aw_buf_free(&r);
    aw_buf_free(&nested);
    aw_buf_free(&longest);
    aw_transport_free(t);
}

/* ---- allocation failures ---------------------------------------------------- */

/* Fail each allocation in turn (once, then from there on): every run either
 * succeeds with the very trace of a run without failures, or returns
 * AW_ENOMEM; nothing leaks. */
static void sweep(const input *in, bool sticky, size_t chunk) {
    aw_error err;
    aw_transport *ref = th_transport(in->spec, NULL, &err);
    assert_non_null(ref);
    th_trace want;
    th_trace_init(&want, true);
    assert_int_equal(th_run(ref, in->turn, in->p, in->n, chunk ? &chunk : NULL, chunk ? 1 : 0, in->stop, in->native, &want), 0);
    aw_transport_free(ref);
    for (long fail_at = 1;; fail_at++) {
        aw_failalloc fa;
        aw_failalloc_init(&fa, fail_at);
        fa.sticky = sticky;
        aw_transport *t = th_transport(in->spec, aw_failalloc_allocator(&fa), &err);
        th_trace tr;
        th_trace_init(&tr, true);
        int rc = t ? th_run(t, in->turn, in->p, in->n, chunk ? &chunk : NULL, chunk ? 1 : 0, in->stop, in->native, &tr)
                   : AW_ENOMEM;
        aw_transport_free(t);
        if (fa.live != 0) fail_msg("%s: %ld blocks leaked when allocation %ld failed", in->name, fa.live, fail_at);
        if (rc != 0 && rc != AW_ENOMEM) fail_msg("%s: allocation %ld failed: rc %d", in->name, fail_at, rc);
        if (rc == 0 && !same(&want, &tr)) {
            show_difference(in->name, "an allocation failed but the run succeeded", &want, &tr);
            fail();
        }
        if (rc == AW_ENOMEM) assert_true(fa.failed);
        th_trace_free(&tr);
        if (!fa.failed) break; /* the whole run made fewer allocations */
    }
    th_trace_free(&want);
}

static void test_allocation_failures(void **state) {
    (void)state;
    aw_json_doc *doc = load_cases();
    const aw_json_value *cases = aw_json_doc_root(doc);
    static const char *const chosen[] = {"several_tags_one_chunk", "format_json_object", "format_slack_messages_object",
                                         "think_block_example_tags", "cdata_final", "native_calls_ignored_in_xml",
                                         "native_calls_kept_in_xml_final", "hermes", "function_calls",
                                         "unclosed_final_length_markdown", "unclosed_opening_tag", "tool_payload_not_json",
                                         "dead_slot_turn2", "format_json_repaired", "fenced_args",
                                         "rejected_open_prose_mention", "json_string_open_closing_tag_was_the_end",
                                         "json_string_open_cut_rest_ends_in_another_tag", "tool_tag_unclosed_before_next_tag",
                                         "opening_tag_broken_by_lt", "json_string_open_rejected_names_the_string",
                                         "wrapper_status_unicode_blanks"};
    size_t done = 0;
    for (size_t i = 0; i < aw_json_count(cases); i++) {
        const aw_json_value *c = aw_json_at(cases, i);
        const char *name = th_str(c, "name", "");
        bool pick = false;
        for (size_t k = 0; k < sizeof chosen / sizeof chosen[0]; k++) pick |= !strcmp(name, chosen[k]);
        if (!pick) continue;
        input in = input_of(c);
        sweep(&in, false, 0);
        sweep(&in, true, 0);
        sweep(&in, false, 3);
        done++;
    }
    assert_int_equal(done, sizeof chosen / sizeof chosen[0]);
    aw_json_doc_free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_chunking_of_every_vector),
        cmocka_unit_test(test_fast_path_agrees_with_state_machine),
        cmocka_unit_test(test_invalid_utf8_and_nul),
        cmocka_unit_test(test_huge_payloads),
        cmocka_unit_test(test_floods),
        cmocka_unit_test(test_deep_nesting),
        cmocka_unit_test(test_huge_attributes),
        cmocka_unit_test(test_long_tag_names),
        cmocka_unit_test(test_random_soup),
        cmocka_unit_test(test_rereading_is_linear),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
