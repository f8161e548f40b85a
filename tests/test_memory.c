/* A conversation's memory (seed 004): subjects merged by name when marked
 * isNew="false", keywords under 0.6 dropped, at most 20 subjects and 50
 * keywords, most recent first, the summary folded; the <llmQuery> built
 * from it validates against the built-in contract. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/contract.h"
#include "agentwire/memory.h"
#include "failalloc.h"

static aw_json_doc *parse(const char *text)
{
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err))
        fail_msg("%s: %s", text, err.message);
    return d;
}

static void add(aw_memory *m, const char *reply)
{
    aw_json_doc *d = parse(reply);
    aw_error err;
    if (aw_memory_add(m, aw_json_doc_root(d), &err))
        fail_msg("add: %s", err.message);
    aw_json_doc_free(d);
}

static const char *str(const aw_json_value *o, const char *key) { return aw_json_get(o, key)->u.str.ptr; }

static void test_merge_and_drop(void **state)
{
    (void)state;
    aw_memory *m = aw_memory_new(NULL);
    add(m, "{\"response\": \"r\", \"analysis\": {\"subject\": [{\"name\": \"College Savings\", \"description\": \"saving\","
           " \"isNew\": true, \"keyword\": [{\"term\": \"529-plan\", \"confidence\": 0.95},"
           " {\"term\": \"maybe\", \"confidence\": 0.59}]}], \"summaryUpdate\": \"First.\"}}");
    add(m, "{\"response\": \"r\", \"analysis\": {\"subject\": [{\"name\": \"college_savings\", \"description\": \"more\","
           " \"isNew\": false, \"keyword\": [{\"term\": \"Tuition\", \"confidence\": 0.6}]},"
           " {\"name\": \"taxes\", \"description\": \"tax\", \"isNew\": true, \"keyword\": []}],"
           " \"summaryUpdate\": \"  Second.  \"}}");
    aw_json_doc *d = NULL;
    assert_int_equal(aw_memory_json(m, &d), 0);
    const aw_json_value *root = aw_json_doc_root(d);
    const aw_json_value *subs = aw_json_get(root, "subjects"), *kws = aw_json_get(root, "keywords");
    assert_int_equal(aw_json_count(subs), 2); /* merged, not a second entry */
    assert_string_equal(str(aw_json_at(subs, 0), "name"), "college-savings");
    assert_string_equal(str(aw_json_at(subs, 0), "description"), "more");
    assert_string_equal(str(aw_json_at(subs, 1), "name"), "taxes");
    assert_int_equal(aw_json_count(kws), 2); /* 0.59 dropped, 0.6 kept */
    assert_string_equal(str(aw_json_at(kws, 0), "term"), "tuition");
    assert_string_equal(str(aw_json_at(kws, 0), "subject"), "college-savings");
    assert_string_equal(str(aw_json_at(kws, 1), "term"), "529-plan");
    assert_string_equal(str(root, "summary"), "First. Second.");
    assert_int_equal(aw_memory_exchanges(m), 2);
    aw_json_doc_free(d);
    aw_memory_free(m);
}

static void test_caps_and_order(void **state)
{
    (void)state;
    aw_memory *m = aw_memory_new(NULL);
    char reply[512];
    for (int i = 1; i <= 25; i++) {
        snprintf(reply, sizeof reply,
                 "{\"response\": \"r\", \"analysis\": {\"subject\": [{\"name\": \"s%d\", \"description\": \"d\","
                 " \"isNew\": true, \"keyword\": [{\"term\": \"k%da\", \"confidence\": 0.9},"
                 " {\"term\": \"k%db\", \"confidence\": 0.8}, {\"term\": \"k%dc\", \"confidence\": 0.7}]}],"
                 " \"summaryUpdate\": \"\"}}",
                 i, i, i, i);
        add(m, reply);
    }
    /* s3 comes back: it becomes the most recent */
    add(m, "{\"response\": \"r\", \"analysis\": {\"subject\": [{\"name\": \"s3\", \"description\": \"again\", \"isNew\": false,"
           " \"keyword\": [{\"term\": \"k3a\", \"confidence\": 0.7}]}], \"summaryUpdate\": \"x\"}}");
    aw_json_doc *q = NULL;
    assert_int_equal(aw_memory_query(m, "topic-1", 52, "How?", &q), 0);
    const aw_json_value *ctx = aw_json_get(aw_json_doc_root(q), "context");
    const aw_json_value *subs = aw_json_get(ctx, "activeSubjects"), *kws = aw_json_get(ctx, "recentKeywords");
    assert_int_equal(aw_json_count(subs), 20);
    assert_int_equal(aw_json_count(kws), 50);
    assert_string_equal(aw_json_at(subs, 0)->u.str.ptr, "s3");
    assert_string_equal(aw_json_at(subs, 1)->u.str.ptr, "s25");
    assert_string_equal(aw_json_at(subs, 19)->u.str.ptr, "s7");
    assert_string_equal(aw_json_at(kws, 0)->u.str.ptr, "k3a");
    assert_string_equal(aw_json_at(kws, 1)->u.str.ptr, "k25a");
    assert_string_equal(aw_json_at(kws, 3)->u.str.ptr, "k25c");
    assert_string_equal(str(aw_json_doc_root(q), "userMessage"), "How?");
    assert_string_equal(str(ctx, "topicId"), "topic-1");
    assert_int_equal((int)aw_json_get(ctx, "messageCount")->u.num.d, 52);
    /* the query is a valid <llmQuery> */
    aw_contract *c = NULL;
    aw_error err;
    assert_int_equal(aw_contract_builtin("llmQuery", NULL, &c, &err), 0);
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    if (aw_contract_build(c, aw_json_doc_root(q), &xml, &err))
        fail_msg("build: %s", err.message);
    assert_non_null(strstr(xml.data, "<activeSubjects>s3, s25, s24"));
    aw_buf_free(&xml);
    aw_contract_free(c);
    aw_json_doc_free(q);
    aw_memory_free(m);
}

static void test_summary_is_bounded(void **state)
{
    (void)state;
    aw_memory *m = aw_memory_new(NULL);
    char reply[400];
    for (int i = 0; i < 100; i++) {
        snprintf(reply, sizeof reply,
                 "{\"response\": \"r\", \"analysis\": {\"summaryUpdate\": \"Exchange %d talked about things at some "
                 "length.\"}}",
                 i);
        add(m, reply);
    }
    aw_json_doc *d = NULL;
    assert_int_equal(aw_memory_json(m, &d), 0);
    const char *sum = str(aw_json_doc_root(d), "summary");
    assert_true(strlen(sum) <= AW_MEMORY_MAX_SUMMARY);
    assert_true(strncmp(sum, "Exchange ", 9) == 0); /* starts at a sentence */
    assert_non_null(strstr(sum, "Exchange 99 talked"));
    assert_null(strstr(sum, "Exchange 1 talked"));
    aw_json_doc_free(d);
    aw_memory_free(m);
}

static void test_malformed_analysis(void **state)
{
    (void)state;
    aw_memory *m = aw_memory_new(NULL);
    aw_json_doc *d = parse("{\"analysis\": {\"subject\": [{\"description\": \"no name\"}]}}");
    aw_error err;
    assert_int_equal(aw_memory_add(m, aw_json_doc_root(d), &err), AW_ETYPE);
    aw_json_doc_free(d);
    d = parse("{\"analysis\": {\"subject\": [{\"name\": \"a\", \"keyword\": [{\"term\": \"t\", \"confidence\": \"hi\"}]}]}}");
    assert_int_equal(aw_memory_add(m, aw_json_doc_root(d), &err), AW_ETYPE);
    aw_json_doc_free(d);
    assert_int_equal(aw_memory_exchanges(m), 0); /* nothing half-added */
    aw_memory_free(m);
}

static int sweep(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_memory *m = aw_memory_new(a);
    if (!m)
        return AW_ENOMEM;
    aw_json_doc *d = NULL;
    aw_json_read_options ro = {.alloc = a};
    const char *r = "{\"analysis\": {\"subject\": [{\"name\": \"A b\", \"description\": \"d\", \"isNew\": true,"
                    " \"keyword\": [{\"term\": \"x\", \"confidence\": 0.9}]}], \"summaryUpdate\": \"s\"}}";
    int rc = aw_json_parse(r, strlen(r), &ro, &d, NULL);
    for (int i = 0; i < 3 && !rc; i++)
        rc = aw_memory_add(m, aw_json_doc_root(d), NULL);
    aw_json_doc_free(d);
    aw_json_doc *out = NULL;
    if (!rc && !(rc = aw_memory_json(m, &out)))
        aw_json_doc_free(out);
    if (!rc && !(rc = aw_memory_query(m, "t", 2, "m", &out)))
        aw_json_doc_free(out);
    aw_memory_free(m);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(sweep, NULL, 0) > 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_and_drop),
        cmocka_unit_test(test_caps_and_order),
        cmocka_unit_test(test_summary_is_bounded),
        cmocka_unit_test(test_malformed_analysis),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
