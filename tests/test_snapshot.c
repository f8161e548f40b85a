/* Slim snapshots: truncation, redaction, omitted tool results, presets,
 * timing, step numbering, restore, hostile input, allocation failures. */
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

static aw_json_doc *parse(const char *text) {
    aw_json_doc *d = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &d, &err)) fail_msg("bad fixture: %s", err.message);
    return d;
}

/* slim `state` with cfg and return the compact JSON of the snapshot */
static char *slim_json(const char *state, const aw_slim_config *cfg) {
    aw_json_doc *in = parse(state), *out = NULL;
    aw_error err;
    if (aw_snapshot_slim(aw_json_doc_root(in), cfg, NULL, &out, &err)) fail_msg("slim: %s", err.message);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(out), NULL, &b, NULL), 0);
    aw_json_doc_free(in);
    aw_json_doc_free(out);
    return b.data;
}

static const char *field_json(const char *snapshot, const char *key, char *buf, size_t size) {
    aw_json_doc *d = parse(snapshot);
    aw_buf b;
    aw_buf_init(&b, NULL);
    const aw_json_value *v = aw_json_get(aw_json_doc_root(d), key);
    assert_non_null(v);
    assert_int_equal(aw_json_write(v, NULL, &b, NULL), 0);
    snprintf(buf, size, "%s", b.data);
    aw_buf_free(&b);
    aw_json_doc_free(d);
    return buf;
}

#define BASE                                                                                                   \
    "\"agent_id\":\"a-1\",\"status\":\"in_progress\",\"usage\":{\"prompt\":3,\"completion\":4,\"total\":7},"     \
    "\"execution\":{\"started_at\":\"2026-01-16T11:00:00+01:00\",\"updated_at\":\"2026-01-16T10:05:00.250Z\","   \
    "\"cumulative_seconds\":45.2}"

static void test_truncation_and_defaults(void **state) {
    (void)state;
    aw_slim_config cfg;
    assert_int_equal(aw_slim_preset("standard", &cfg), 0);
    cfg.max_content_length = 4;
    char *s = slim_json("{" BASE ",\"messages\":[{\"content\":\"0123456789\"},{\"role\":\"tool\",\"content\":\"abcd\"}]}", &cfg);
    char buf[512];
    assert_string_equal(field_json(s, "messages", buf, sizeof buf),
                        "[{\"role\":\"user\",\"content\":\"0123...\",\"metadata\":{}},"
                        "{\"role\":\"tool\",\"content\":\"abcd\",\"metadata\":{}}]");
    assert_string_equal(field_json(s, "execution", buf, sizeof buf),
                        "{\"started_at\":\"2026-01-16T10:00:00Z\",\"updated_at\":\"2026-01-16T10:05:00Z\",\"cumulative_seconds\":45.2}");
    assert_string_equal(field_json(s, "parent_agent_id", buf, sizeof buf), "null");
    assert_string_equal(field_json(s, "last_continuation", buf, sizeof buf), "null");
    assert_string_equal(field_json(s, "metadata", buf, sizeof buf), "{}");
    free(s);
}

/* Every cut point through multi-byte characters keeps whole characters. */
static void test_multibyte_boundaries(void **state) {
    (void)state;
    const char *text = "aé日😀b"; /* 1 + 2 + 3 + 4 + 1 bytes */
    const char *want[] = {"...", "a...", "aé...", "aé日...", "aé日😀...", "aé日😀b", "aé日😀b"};
    for (long n = 0; n <= 6; n++) {
        aw_slim_config cfg;
        aw_slim_preset("standard", &cfg);
        cfg.max_content_length = n;
        char st[512];
        snprintf(st, sizeof st, "{" BASE ",\"messages\":[{\"role\":\"user\",\"content\":\"%s\"}]}", text);
        char *s = slim_json(st, &cfg);
        aw_json_doc *d = parse(s);
        const aw_json_value *c = aw_json_get(aw_json_at(aw_json_get(aw_json_doc_root(d), "messages"), 0), "content");
        assert_non_null(c);
        assert_int_equal(c->u.str.len, strlen(want[n]));
        assert_memory_equal(c->u.str.ptr, want[n], c->u.str.len);
        aw_json_doc_free(d);
        free(s);
    }
}

static void test_redaction_and_omission(void **state) {
    (void)state;
    aw_slim_config cfg;
    aw_slim_preset("standard", &cfg);
    cfg.redact_tool_args = true;
    cfg.include_tool_results = false;
    char *s = slim_json("{" BASE ",\"messages\":["
                        "{\"role\":\"assistant\",\"content\":\"x\",\"_metadata\":{\"tool_calls\":["
                        "{\"id\":\"c1\",\"function\":{\"name\":\"search\",\"arguments\":\"{}\"}},"
                        "{\"id\":\"c2\",\"name\":\"read\",\"arguments\":{\"p\":1}},{\"arguments\":{}}]}},"
                        "{\"role\":\"tool\",\"content\":\"secret\",\"metadata\":{\"tool_call_id\":\"c1\",\"tool_name\":\"search\"}}]}",
                        &cfg);
    char buf[1024];
    assert_string_equal(field_json(s, "messages", buf, sizeof buf),
                        "[{\"role\":\"assistant\",\"content\":\"x\",\"metadata\":{\"tool_calls\":["
                        "{\"id\":\"c1\",\"name\":\"search\"},{\"id\":\"c2\",\"name\":\"read\"},{\"id\":null,\"name\":\"unknown\"}]}},"
                        "{\"role\":\"tool\",\"content\":\"[tool result omitted]\",\"metadata\":{\"tool_call_id\":\"c1\",\"tool_name\":\"search\"}}]");
    free(s);
}

static void test_presets(void **state) {
    (void)state;
    aw_slim_config c;
    assert_int_equal(aw_slim_preset("minimal", &c), 0);
    assert_int_equal(c.max_messages, 20);
    assert_int_equal(c.max_steps, 0);
    assert_int_equal(c.max_content_length, 500);
    assert_false(c.include_tool_results);
    assert_false(c.include_steps);
    assert_int_equal(aw_slim_preset("standard", &c), 0);
    assert_int_equal(c.max_messages, 50);
    assert_int_equal(c.max_steps, 20);
    assert_int_equal(c.max_content_length, 2000);
    assert_true(c.include_tool_results && c.include_steps && !c.include_continuation_trace && !c.redact_tool_args);
    assert_int_equal(aw_slim_preset("full", &c), 0);
    assert_int_equal(c.max_messages, 100);
    assert_int_equal(c.max_steps, 50);
    assert_int_equal(c.max_content_length, 5000);
    assert_true(c.include_continuation_trace);
    assert_int_equal(aw_slim_preset("huge", &c), -1);
}

static void test_steps_keep_numbers(void **state) {
    (void)state;
    aw_slim_config cfg;
    aw_slim_preset("full", &cfg);
    cfg.max_steps = 2;
    cfg.max_messages = 1;
    char *s = slim_json("{" BASE ",\"messages\":[{\"content\":\"a\"},{\"content\":\"b\"}],\"steps\":["
                        "{\"type\":\"tool_execution\"},{\"type\":\"tool_execution\",\"errors\":[1,2],\"tool_calls\":[{\"id\":\"t\",\"name\":\"n\"}]},"
                        "{\"type\":\"final\",\"finish_reason\":\"stop\",\"usage\":{\"total\":9},\"duration_ms\":1.5}],"
                        "\"last_continuation\":{\"should_continue\":false,\"stop_reason\":\"completed\",\"resolved_by\":\"X\",\"extra\":1}}",
                        &cfg);
    char buf[1024];
    assert_string_equal(field_json(s, "steps", buf, sizeof buf),
                        "[{\"step_number\":2,\"type\":\"tool_execution\",\"has_tool_calls\":true,\"finish_reason\":null,\"errors\":2,"
                        "\"usage\":{\"total\":0},\"duration_ms\":null,\"tool_calls\":[{\"id\":\"t\",\"name\":\"n\"}]},"
                        "{\"step_number\":3,\"type\":\"final\",\"has_tool_calls\":false,\"finish_reason\":\"stop\",\"errors\":0,"
                        "\"usage\":{\"total\":9},\"duration_ms\":1.5,\"tool_calls\":[]}]");
    assert_string_equal(field_json(s, "step_count", buf, sizeof buf), "3");
    assert_string_equal(field_json(s, "messages", buf, sizeof buf), "[{\"role\":\"user\",\"content\":\"b\",\"metadata\":{}}]");
    assert_string_equal(field_json(s, "last_continuation", buf, sizeof buf),
                        "{\"should_continue\":false,\"stop_reason\":\"completed\",\"resolved_by\":\"X\"}");
    free(s);
    cfg.max_messages = 0; /* <= 0 keeps none */
    s = slim_json("{" BASE ",\"messages\":[{\"content\":\"a\"}]}", &cfg);
    assert_string_equal(field_json(s, "messages", buf, sizeof buf), "[]");
    free(s);
}

static void test_restore_fixed_point(void **state) {
    (void)state;
    static const char *const presets[] = {"minimal", "standard", "full"};
    const char *st = "{" BASE ",\"messages\":[{\"role\":\"user\",\"content\":\"0123456789012345678901234567890123456789\"},"
                     "{\"role\":\"tool\",\"content\":\"r\",\"metadata\":{\"tool_call_id\":\"c\"}}],"
                     "\"steps\":[{\"type\":\"final\"}],\"metadata\":{\"k\":\"v\"}}";
    for (int p = 0; p < 3; p++) {
        aw_slim_config cfg;
        aw_slim_preset(presets[p], &cfg);
        cfg.max_content_length = 10;
        char *s1 = slim_json(st, &cfg);
        aw_json_doc *d1 = parse(s1), *r = NULL, *s2 = NULL;
        aw_error err;
        assert_int_equal(aw_snapshot_restore(aw_json_doc_root(d1), NULL, &r, &err), 0);
        const aw_json_value *steps = aw_json_get(aw_json_doc_root(r), "steps");
        assert_non_null(steps);
        assert_int_equal(aw_json_count(steps), 0); /* steps are not restored */
        assert_int_equal(aw_snapshot_slim(aw_json_doc_root(r), &cfg, NULL, &s2, &err), 0);
        aw_buf b;
        aw_buf_init(&b, NULL);
        aw_json_write(aw_json_doc_root(s2), NULL, &b, NULL);
        /* equal to the first snapshot once its steps are emptied */
        aw_json_doc *want = parse(s1);
        aw_json_value *wsteps = aw_json_get_mut((aw_json_value *)aw_json_doc_root(want), "steps");
        wsteps->u.arr.count = 0;
        aw_buf wb;
        aw_buf_init(&wb, NULL);
        aw_json_write(aw_json_doc_root(want), NULL, &wb, NULL);
        assert_string_equal(b.data, wb.data);
        aw_buf_free(&b);
        aw_buf_free(&wb);
        aw_json_doc_free(want);
        aw_json_doc_free(s2);
        aw_json_doc_free(r);
        aw_json_doc_free(d1);
        free(s1);
    }
}

static void expect_error(const char *state_json, const char *fragment) {
    aw_json_doc *in = parse(state_json), *out = NULL;
    aw_error err;
    int rc = aw_snapshot_slim(aw_json_doc_root(in), NULL, NULL, &out, &err);
    assert_int_equal(rc, AW_ETYPE);
    assert_null(out);
    if (!strstr(err.message, fragment)) fail_msg("'%s' does not mention '%s'", err.message, fragment);
    aw_json_doc_free(in);
}

static void test_hostile(void **state) {
    (void)state;
    expect_error("[]", "JSON object");
    expect_error("{\"status\":\"x\"}", "agent_id");
    expect_error("{\"agent_id\":1,\"status\":\"x\"}", "agent_id");
    expect_error("{" BASE ",\"messages\":{}}", "messages");
    expect_error("{" BASE ",\"messages\":[{\"role\":5}]}", "messages[0].role");
    expect_error("{" BASE ",\"messages\":[1,2,{\"metadata\":3}]}", "messages[0]");
    expect_error("{\"agent_id\":\"a\",\"status\":\"s\",\"execution\":{\"started_at\":\"yesterday\"}}", "started_at");
    expect_error("{\"agent_id\":\"a\",\"status\":\"s\",\"usage\":{\"total\":\"7\"}}", "usage.total");
    /* invalid UTF-8 in content: cut by characters, written as U+FFFD */
    aw_slim_config cfg;
    aw_slim_preset("standard", &cfg);
    cfg.max_content_length = 2;
    aw_json_doc *in = aw_json_doc_new(NULL);
    aw_json_value *root = aw_json_new_object(in);
    aw_json_object_set_string(in, root, "agent_id", "a", 1);
    aw_json_object_set_string(in, root, "status", "s", 1);
    aw_json_value *msgs = aw_json_new_array(in), *m = aw_json_new_object(in);
    aw_json_object_set_string(in, m, "content", "\xff\xfe\xfdz", 4);
    aw_json_array_push(in, msgs, m);
    aw_json_object_set(in, root, "messages", 8, msgs);
    aw_json_doc *out = NULL;
    aw_error err;
    assert_int_equal(aw_snapshot_slim(root, &cfg, NULL, &out, &err), 0);
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_json_write(aw_json_get(aw_json_at(aw_json_get(aw_json_doc_root(out), "messages"), 0), "content"), NULL, &b, NULL);
    assert_string_equal(b.data, "\"\xef\xbf\xbd\xef\xbf\xbd...\"");
    aw_buf_free(&b);
    aw_json_doc_free(out);
    aw_json_doc_free(in);
}

/* 10,000 messages, most trimmed away */
/* A step's error count given as a number beyond int64 (found by
 * fuzz_snapshot: the conversion was undefined behaviour) saturates. */
static void test_error_count_range(void **state) {
    (void)state;
    aw_slim_config cfg;
    aw_slim_preset("standard", &cfg);
    char *s = slim_json("{" BASE ",\"messages\":[],\"steps\":[{\"errors\":5.55e142},{\"errors\":-1e400},"
                        "{\"errors\":2.9},{\"errors\":-9223372036854775808}]}",
                        &cfg);
    char buf[512];
    field_json(s, "steps", buf, sizeof buf);
    /* written as JavaScript prints those integers */
    const char *want[] = {"\"errors\":9223372036854776000,", "\"errors\":-9223372036854776000,",
                          "\"errors\":2,"};
    for (size_t i = 0; i < 3; i++)
        if (!strstr(buf, want[i])) fail_msg("%s not in %s", want[i], buf);
    free(s);
}

static void test_huge_state(void **state) {
    (void)state;
    aw_buf st;
    aw_buf_init(&st, NULL);
    aw_buf_append_str(&st, "{" BASE ",\"messages\":[");
    for (int i = 0; i < 10000; i++) aw_buf_printf(&st, "%s{\"role\":\"user\",\"content\":\"message %d\"}", i ? "," : "", i);
    aw_buf_append_str(&st, "]}");
    aw_json_doc *in = NULL, *out = NULL;
    assert_int_equal(aw_json_parse(st.data, st.len, NULL, &in, NULL), 0);
    assert_int_equal(aw_snapshot_slim(aw_json_doc_root(in), NULL, NULL, &out, NULL), 0);
    const aw_json_value *msgs = aw_json_get(aw_json_doc_root(out), "messages");
    assert_int_equal(aw_json_count(msgs), 50);
    const aw_json_value *first = aw_json_get(aw_json_at(msgs, 0), "content");
    assert_string_equal(first->u.str.ptr, "message 9950");
    aw_json_doc_free(out);
    aw_json_doc_free(in);
    aw_buf_free(&st);
}

typedef struct sweep {
    aw_json_doc *state;
} sweep;

static int slim_restore_with(const aw_allocator *a, void *ctx) {
    sweep *s = ctx;
    aw_slim_config cfg;
    aw_slim_preset("full", &cfg);
    cfg.redact_tool_args = true;
    cfg.max_content_length = 3;
    aw_json_doc *snap = NULL, *back = NULL;
    int rc = aw_snapshot_slim(aw_json_doc_root(s->state), &cfg, a, &snap, NULL);
    if (!rc) rc = aw_snapshot_restore(aw_json_doc_root(snap), a, &back, NULL);
    aw_json_doc_free(back);
    aw_json_doc_free(snap);
    return rc;
}

static void test_allocation_failures(void **state) {
    (void)state;
    /* a 20,000-byte metadata string makes the snapshot's and the restored
     * state's arenas grow past their first blocks, so failures also hit
     * the middle of slimming and restoring */
    static char text[21000];
    int n = snprintf(text, sizeof text,
                     "{" BASE ",\"messages\":[{\"role\":\"assistant\",\"content\":\"hello\",\"metadata\":{\"tool_calls\":[{\"id\":\"c\",\"name\":\"n\"}]}}],"
                     "\"steps\":[{\"type\":\"final\",\"tool_calls\":[{\"id\":\"c\",\"name\":\"n\"}]}],"
                     "\"last_continuation\":{\"should_continue\":true},\"metadata\":{\"k\":[1,2],\"blob\":\"");
    memset(text + n, 'x', 20000);
    memcpy(text + n + 20000, "\"}}", 4);
    sweep s = {parse(text)};
    long calls = aw_failalloc_run(slim_restore_with, &s, 0);
    assert_true(calls > 5);
    aw_json_doc_free(s.state);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncation_and_defaults), cmocka_unit_test(test_multibyte_boundaries),
        cmocka_unit_test(test_redaction_and_omission),  cmocka_unit_test(test_presets),
        cmocka_unit_test(test_steps_keep_numbers),       cmocka_unit_test(test_restore_fixed_point),
        cmocka_unit_test(test_hostile),                  cmocka_unit_test(test_huge_state),
        cmocka_unit_test(test_allocation_failures),       cmocka_unit_test(test_error_count_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
