/* The corpus of real replies in other dialects (issue 18,
 * tests/vectors/dialects/): every reply read with every dialect on
 * ("auto", native mode), whole and in chunks of 1 and 7 bytes.
 *
 * Counted and printed: the calls recovered exactly (name, and arguments
 * JSON-equal) against the calls the corpus says the model meant; the
 * malformed calls reported against those it expects; on the negative
 * corpus, the false calls (and any rejection). Required: at least 95 % of
 * the calls, no false call, five replies or more in each dialect, the same
 * events at every chunking, no call markup left in the visible text of a
 * reply whose calls were read, and the negative replies shown whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "transport_harness.h"

static const char *const families[] = {"hermes",   "qwen3_coder", "glm45",   "granite",        "llama3",
                                       "pythonic", "mistral",     "deepseek", "kimi_k2",       "minimax",
                                       "function_calls", "harmony", "fenced"};

/* The markup of calls: none of it may stay visible in a reply whose
 * calls were read. */
static const char *const markup[] = {"<tool_call>", "</tool_call>", "<function=", "<parameter=", "<arg_key>",
                                     "<|tool_call|>", "[TOOL_CALLS]", "tool▁call", "<|tool_call_begin|>",
                                     "<invoke", "<minimax:tool_call>", "to=functions.", "```json",
                                     "<|python_tag|>", ".call("};

static aw_json_doc *load(const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/tests/vectors/dialects/%s.json", AW_SOURCE_DIR, name);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(th_read_file(path, &b), 0);
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(b.data, b.len, NULL, &doc, &err), 0);
    aw_buf_free(&b);
    assert_true(aw_json_is_array(aw_json_doc_root(doc)));
    return doc;
}

static aw_transport *session(const aw_json_value *tools) {
    aw_error err;
    aw_transport *t = th_session_with(tools, AW_TRANSPORT_NATIVE, AW_DIALECT_AUTO, &err);
    assert_non_null(t);
    return t;
}

typedef struct tally {
    size_t replies, want, exact, rejected, want_rejected, extra;
} tally;

/* Read one reply at three chunkings; the traces must agree. The whole
 * run's records go to *calls (a JSON array of {tool, args} records) and
 * *rejected, its visible text to *visible. */
static void read_reply(const aw_transport *t, const char *id, const char *p, size_t n, aw_json_doc **records,
                       aw_buf *visible) {
    static const size_t one = 1, seven = 7;
    th_trace whole, cut;
    th_trace_init(&whole, true);
    assert_int_equal(th_run(t, 1, p, n, NULL, 0, "stop", NULL, &whole), 0);
    const size_t *sizes[] = {&one, &seven};
    for (int k = 0; k < 2; k++) {
        th_trace_init(&cut, true);
        assert_int_equal(th_run(t, 1, p, n, sizes[k], 1, "stop", NULL, &cut), 0);
        if (cut.out.len != whole.out.len || memcmp(cut.out.data, whole.out.data, cut.out.len)) {
            print_error("%s: the events in chunks of %zu differ from the whole reply's:\n%s\n---\n%s\n", id,
                        *sizes[k], whole.out.data, cut.out.data);
            fail();
        }
        th_trace_free(&cut);
    }
    /* the records, as a JSON array */
    aw_buf arr;
    aw_buf_init(&arr, NULL);
    assert_int_equal(aw_buf_putc(&arr, '['), 0);
    const char *line = whole.out.data ? whole.out.data : "";
    int first = 1;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (!first) assert_int_equal(aw_buf_putc(&arr, ','), 0);
        assert_int_equal(aw_buf_append(&arr, line, len), 0);
        first = 0;
        line += len + (nl ? 1 : 0);
    }
    assert_int_equal(aw_buf_putc(&arr, ']'), 0);
    aw_error err;
    assert_int_equal(aw_json_parse(arr.data, arr.len, NULL, records, &err), 0);
    aw_buf_free(&arr);
    assert_int_equal(aw_buf_append(visible, whole.visible.data ? whole.visible.data : "", whole.visible.len), 0);
    th_trace_free(&whole);
}

static const char *kind_of(const aw_json_value *rec) {
    const aw_json_value *k = aw_json_get(rec, "kind");
    return aw_json_is_string(k) ? k->u.str.ptr : "";
}

/* Match the calls read against the calls meant (as a multiset). */
static void count_calls(const aw_json_value *want, const aw_json_value *records, tally *t, const char *id) {
    size_t got_n = 0;
    unsigned char used[512] = {0};
    for (size_t i = 0; i < aw_json_count(records); i++) {
        const aw_json_value *r = aw_json_at(records, i);
        if (!strcmp(kind_of(r), "call")) got_n++;
        if (!strcmp(kind_of(r), "rejected")) t->rejected++;
    }
    for (size_t w = 0; w < aw_json_count(want); w++) {
        const aw_json_value *c = aw_json_at(want, w);
        const aw_json_value *name = aw_json_get(c, "name"), *args = aw_json_get(c, "arguments");
        t->want++;
        int found = 0;
        for (size_t i = 0; i < aw_json_count(records) && i < sizeof used && !found; i++) {
            const aw_json_value *r = aw_json_at(records, i);
            if (used[i] || strcmp(kind_of(r), "call")) continue;
            if (aw_json_equal(aw_json_get(r, "tool"), name) && aw_json_equal(aw_json_get(r, "args"), args)) {
                used[i] = 1;
                found = 1;
            }
        }
        if (found) t->exact++;
        else print_message("  missed in %s: %s\n", id, aw_json_get(c, "name")->u.str.ptr);
    }
    if (got_n > aw_json_count(want)) t->extra += got_n - aw_json_count(want);
}

static void test_corpus(void **state) {
    (void)state;
    tally all = {0};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        aw_json_doc *doc = load(families[f]);
        const aw_json_value *vecs = aw_json_doc_root(doc);
        tally fam = {0};
        for (size_t i = 0; i < aw_json_count(vecs); i++) {
            const aw_json_value *v = aw_json_at(vecs, i);
            const aw_json_value *reply = aw_json_get(v, "reply");
            char id[160];
            snprintf(id, sizeof id, "%s/%s", families[f], aw_json_get(v, "id")->u.str.ptr);
            assert_true(aw_json_is_string(aw_json_get(v, "source")));
            aw_transport *t = session(aw_json_get(v, "tools"));
            aw_json_doc *records = NULL;
            aw_buf visible;
            aw_buf_init(&visible, NULL);
            read_reply(t, id, reply->u.str.ptr, reply->u.str.len, &records, &visible);
            fam.replies++;
            const aw_json_value *rj = aw_json_get(v, "rejected");
            fam.want_rejected += rj ? (size_t)rj->u.num.d : 0;
            count_calls(aw_json_get(v, "calls"), aw_json_doc_root(records), &fam, id);
            /* the markup of what was read is not shown */
            for (size_t m = 0; visible.len && m < sizeof markup / sizeof markup[0]; m++) {
                if (!strstr(visible.data, markup[m])) continue;
                print_error("%s: the visible text still shows %s:\n%s\n", id, markup[m], visible.data);
                fail();
            }
            aw_buf_free(&visible);
            aw_json_doc_free(records);
            aw_transport_free(t);
        }
        print_message("dialect corpus: %-14s %2zu replies, %2zu/%2zu calls recovered exactly, %zu/%zu malformed "
                      "reported, %zu extra\n",
                      families[f], fam.replies, fam.exact, fam.want, fam.rejected, fam.want_rejected, fam.extra);
        assert_true(fam.replies >= 5);
        assert_int_equal(fam.rejected, fam.want_rejected);
        all.replies += fam.replies;
        all.want += fam.want;
        all.exact += fam.exact;
        all.rejected += fam.rejected;
        all.want_rejected += fam.want_rejected;
        all.extra += fam.extra;
        aw_json_doc_free(doc);
    }
    double pct = 100.0 * (double)all.exact / (double)all.want;
    print_message("dialect corpus: %zu replies in %zu dialects, %zu/%zu calls recovered exactly (%.1f %%), "
                  "%zu calls not meant\n",
                  all.replies, sizeof families / sizeof families[0], all.exact, all.want, pct, all.extra);
    assert_true(pct >= 95.0);
    assert_int_equal(all.extra, 0);
}

/* Every reply of every dialect, one after the other in one reply: an
 * unclosed or malformed call in one dialect must not swallow the calls
 * after it (each declared tool under its first schema). */
static void test_corpus_in_one_reply(void **state) {
    (void)state;
    aw_buf reply;
    aw_buf_init(&reply, NULL);
    aw_json_doc *all = aw_json_doc_new(NULL);
    aw_json_value *tools = aw_json_new_array(all), *want = aw_json_new_array(all);
    assert_non_null(tools);
    assert_non_null(want);
    size_t want_rejected = 0;
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        aw_json_doc *doc = load(families[f]);
        const aw_json_value *vecs = aw_json_doc_root(doc);
        for (size_t i = 0; i < aw_json_count(vecs); i++) {
            const aw_json_value *v = aw_json_at(vecs, i);
            const aw_json_value *r = aw_json_get(v, "reply"), *ts = aw_json_get(v, "tools"), *cs = aw_json_get(v, "calls");
            if (reply.len) assert_int_equal(aw_buf_append_str(&reply, "\n\n"), 0);
            assert_int_equal(aw_buf_append(&reply, r->u.str.ptr, r->u.str.len), 0);
            for (size_t k = 0; k < aw_json_count(ts); k++) {
                const aw_json_value *name = aw_json_get(aw_json_at(ts, k), "name");
                int known = 0;
                for (size_t j = 0; j < aw_json_count(tools) && !known; j++)
                    known = aw_json_equal(aw_json_get(aw_json_at(tools, j), "name"), name);
                if (!known) assert_int_equal(aw_json_array_push(all, tools, aw_json_copy(all, aw_json_at(ts, k))), 0);
            }
            for (size_t k = 0; k < aw_json_count(cs); k++)
                assert_int_equal(aw_json_array_push(all, want, aw_json_copy(all, aw_json_at(cs, k))), 0);
            const aw_json_value *rj = aw_json_get(v, "rejected");
            want_rejected += rj ? (size_t)rj->u.num.d : 0;
        }
        aw_json_doc_free(doc);
    }
    aw_transport *t = session(tools);
    aw_json_doc *records = NULL;
    aw_buf visible;
    aw_buf_init(&visible, NULL);
    read_reply(t, "the corpus in one reply", reply.data, reply.len, &records, &visible);
    tally all_t = {0};
    count_calls(want, aw_json_doc_root(records), &all_t, "the corpus in one reply");
    double pct = 100.0 * (double)all_t.exact / (double)all_t.want;
    print_message("dialect corpus: in one reply of %zu bytes, %zu/%zu calls recovered exactly (%.1f %%), %zu/%zu "
                  "malformed reported, %zu extra\n",
                  reply.len, all_t.exact, all_t.want, pct, all_t.rejected, want_rejected, all_t.extra);
    assert_true(pct >= 95.0);
    assert_int_equal(all_t.rejected, want_rejected);
    aw_buf_free(&visible);
    aw_json_doc_free(records);
    aw_transport_free(t);
    aw_json_doc_free(all);
    aw_buf_free(&reply);
}

static void test_negative_corpus(void **state) {
    (void)state;
    aw_json_doc *doc = load("negative");
    const aw_json_value *vecs = aw_json_doc_root(doc);
    size_t false_calls = 0, rejections = 0;
    for (size_t i = 0; i < aw_json_count(vecs); i++) {
        const aw_json_value *v = aw_json_at(vecs, i);
        const aw_json_value *reply = aw_json_get(v, "reply");
        char id[160];
        snprintf(id, sizeof id, "negative/%s", aw_json_get(v, "id")->u.str.ptr);
        aw_transport *t = session(aw_json_get(v, "tools"));
        aw_json_doc *records = NULL;
        aw_buf visible;
        aw_buf_init(&visible, NULL);
        read_reply(t, id, reply->u.str.ptr, reply->u.str.len, &records, &visible);
        const aw_json_value *recs = aw_json_doc_root(records);
        for (size_t k = 0; k < aw_json_count(recs); k++) {
            const char *kind = kind_of(aw_json_at(recs, k));
            if (!strcmp(kind, "call")) {
                false_calls++;
                print_error("%s: a false call to %s\n", id, aw_json_get(aw_json_at(recs, k), "tool")->u.str.ptr);
            }
            if (!strcmp(kind, "rejected")) {
                rejections++;
                print_error("%s: rejected: %s\n", id, aw_json_get(aw_json_at(recs, k), "message")->u.str.ptr);
            }
        }
        /* shown whole, byte for byte */
        assert_int_equal(visible.len, reply->u.str.len);
        assert_memory_equal(visible.data, reply->u.str.ptr, visible.len);
        aw_buf_free(&visible);
        aw_json_doc_free(records);
        aw_transport_free(t);
    }
    print_message("dialect corpus: negative %zu replies, %zu false calls, %zu rejections\n", aw_json_count(vecs),
                  false_calls, rejections);
    assert_int_equal(false_calls, 0);
    assert_int_equal(rejections, 0);
    assert_true(aw_json_count(vecs) >= 10);
    aw_json_doc_free(doc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
        cmocka_unit_test(test_corpus_in_one_reply),
        cmocka_unit_test(test_negative_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
