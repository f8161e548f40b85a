/* The dialect readers and the recovery filter (issue 18), case by case:
 * each dialect's forms, arguments typed by the schema, the modes, what is
 * never a call (undeclared tools in bare forms, code spans, fences of
 * other languages, mentions, placeholders, dialects not switched on),
 * feedback in each dialect's own form, the visible text, the order of
 * events around our own tags, and the bound that keeps the filter linear.
 * Every case is also run in chunks of 1 and 7 bytes: the same events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "internal/transport_extract.h"
#include "transport_harness.h"

static const char tools_json[] =
    "[{\"name\":\"get_weather\",\"input_schema\":{\"type\":\"object\",\"properties\":{"
    "\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\"},"
    "\"units\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]},\"when\":{\"type\":[\"integer\",\"null\"]}}}},"
    "{\"name\":\"f\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
    "\"b\":{\"type\":\"object\"},\"c\":{\"type\":\"array\"},\"d\":{\"type\":\"boolean\"},\"e\":{\"type\":\"number\"},"
    "\"s\":{\"type\":\"string\"},\"n\":{\"type\":\"null\"}}}},"
    "{\"name\":\"search\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}}]";

static aw_transport *session(unsigned dialects, aw_transport_mode mode) {
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(tools_json, sizeof tools_json - 1, NULL, &doc, &err), 0);
    aw_transport *t = th_session_with(aw_json_doc_root(doc), mode, dialects, &err);
    assert_non_null(t);
    aw_json_doc_free(doc);
    return t;
}

/* The records (calls, rejections, feedback) and the visible text of one
 * reply, checked to be the same in chunks of 1 and 7 bytes. */
typedef struct result {
    char records[8192];
    char visible[4096];
    size_t calls, rejected;
} result;

static void run(unsigned dialects, aw_transport_mode mode, const char *reply, result *out) {
    aw_transport *t = session(dialects, mode);
    size_t n = strlen(reply);
    th_trace whole;
    th_trace_init(&whole, false);
    assert_int_equal(th_run(t, 1, reply, n, NULL, 0, "stop", NULL, &whole), 0);
    static const size_t sizes[] = {1, 7};
    for (int k = 0; k < 2; k++) {
        th_trace cut;
        th_trace_init(&cut, false);
        assert_int_equal(th_run(t, 1, reply, n, &sizes[k], 1, "stop", NULL, &cut), 0);
        assert_int_equal(cut.out.len, whole.out.len);
        assert_memory_equal(cut.out.data, whole.out.data, whole.out.len);
        assert_int_equal(cut.visible.len, whole.visible.len);
        if (whole.visible.len) assert_memory_equal(cut.visible.data, whole.visible.data, whole.visible.len);
        th_trace_free(&cut);
    }
    snprintf(out->records, sizeof out->records, "%s", whole.out.data ? whole.out.data : "");
    snprintf(out->visible, sizeof out->visible, "%s", whole.visible.data ? whole.visible.data : "");
    out->calls = whole.counts[AW_X_CALL];
    out->rejected = whole.counts[AW_X_REJECTED];
    th_trace_free(&whole);
    aw_transport_free(t);
}

static void expect_contains(const char *hay, const char *needle) {
    if (!strstr(hay, needle)) {
        print_error("expected to find %s in:\n%s\n", needle, hay);
        fail();
    }
}

/* ---- names --------------------------------------------------------------------- */

static void test_names(void **state) {
    (void)state;
    static const char *const names[] = {"hermes", "function_calls", "fenced",  "granite", "qwen3_coder",
                                        "llama3", "pythonic",       "mistral", "deepseek", "glm45",
                                        "kimi_k2", "minimax",       "harmony"};
    unsigned all = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        unsigned f = aw_dialect_flag(names[i], strlen(names[i]));
        assert_true(f != 0 && (f & (f - 1)) == 0);
        assert_string_equal(aw_dialect_name(f), names[i]);
        all |= f;
    }
    assert_int_equal(all, AW_DIALECT_AUTO);
    assert_int_equal(aw_dialect_flag("auto", 4), AW_DIALECT_AUTO);
    assert_int_equal(aw_dialect_flag("hermes2", 7), 0);
    assert_int_equal(aw_dialect_flag(NULL, 0), 0);
    assert_null(aw_dialect_name(0));
}

/* ---- each dialect's forms ------------------------------------------------------------ */

typedef struct form_case {
    unsigned dialect;
    const char *name; /* the calls' dialect */
    const char *reply;
    const char *call; /* the call record's tool and args, as the trace writes them */
} form_case;

static const form_case forms[] = {
    {AW_DIALECT_HERMES, "hermes", "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>",
     "\"tool\":\"search\",\"args\":{\"query\":\"x\"}"},
    {AW_DIALECT_HERMES, "hermes", "<tool_call>{\"name\": \"search\", \"arguments\": \"{\\\"query\\\": \\\"s\\\"}\"}</tool_call>",
     "\"tool\":\"search\",\"args\":{\"query\":\"s\"}"},
    {AW_DIALECT_HERMES, "hermes", "<tool_call>[{\"name\": \"search\", \"arguments\": {\"query\": \"l\"}}]</tool_call>",
     "\"tool\":\"search\",\"args\":{\"query\":\"l\"}"},
    {AW_DIALECT_QWEN3_CODER, "qwen3_coder",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Paris\",\"days\":3}"},
    {AW_DIALECT_QWEN3_CODER, "qwen3_coder", "<function=get_weather>\n<parameter=city>\nRome\n</function>\n</tool_call>",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Rome\"}"},
    {AW_DIALECT_QWEN3_CODER, "qwen3_coder", "Checking.\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Oslo\"}"},
    {AW_DIALECT_GLM45, "glm45", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lima</arg_value>\n</tool_call>",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Lima\"}"},
    {AW_DIALECT_GLM45, "glm45", "<tool_call>get_weather<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>",
     "\"tool\":\"get_weather\",\"args\":{\"days\":2}"},
    {AW_DIALECT_GRANITE, "granite", "<|tool_call|>[{\"name\": \"search\", \"arguments\": {\"query\": \"g\"}}]",
     "\"tool\":\"search\",\"args\":{\"query\":\"g\"}"},
    {AW_DIALECT_LLAMA3, "llama3", "{\"name\": \"search\", \"parameters\": {\"query\": \"j\"}}",
     "\"tool\":\"search\",\"args\":{\"query\":\"j\"}"},
    {AW_DIALECT_LLAMA3, "llama3", "<|python_tag|>{\"name\": \"search\", \"parameters\": {\"query\": \"p\"}}<|eom_id|>",
     "\"tool\":\"search\",\"args\":{\"query\":\"p\"}"},
    {AW_DIALECT_LLAMA3, "llama3", "[{\"name\": \"search\", \"arguments\": {\"query\": \"list\"}}]",
     "\"tool\":\"search\",\"args\":{\"query\":\"list\"}"},
    {AW_DIALECT_LLAMA3, "llama3", "<function=get_weather>{\"city\": \"Bern\", \"days\": \"4\"}</function>",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Bern\",\"days\":4}"},
    {AW_DIALECT_PYTHONIC, "pythonic", "[get_weather(city='Nice', days=2, units=None)]",
     "\"tool\":\"get_weather\",\"args\":{\"city\":\"Nice\",\"days\":2,\"units\":null}"},
    {AW_DIALECT_MISTRAL, "mistral", "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {\"query\": \"m\"}}]",
     "\"tool\":\"search\",\"args\":{\"query\":\"m\"}"},
    {AW_DIALECT_MISTRAL, "mistral", "[TOOL_CALLS]search[ARGS]{\"query\": \"args\"}",
     "\"tool\":\"search\",\"args\":{\"query\":\"args\"}"},
    {AW_DIALECT_MISTRAL, "mistral", "[TOOL_CALLS]search[CALL_ID]a1b2c3d4e[ARGS]{\"query\": \"id\"}",
     "\"tool\":\"search\",\"args\":{\"query\":\"id\"}"},
    {AW_DIALECT_DEEPSEEK, "deepseek",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"query\": \"d\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "\"tool\":\"search\",\"args\":{\"query\":\"d\"}"},
    {AW_DIALECT_KIMI_K2, "kimi_k2",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>{\"query\": \"k\"}"
     "<|tool_call_end|><|tool_calls_section_end|>",
     "\"tool\":\"search\",\"args\":{\"query\":\"k\"}"},
    {AW_DIALECT_MINIMAX, "minimax",
     "<minimax:tool_call>\n<invoke name=\"f\">\n<parameter name=\"c\">[1, 2]</parameter>\n</invoke>\n</minimax:tool_call>",
     "\"tool\":\"f\",\"args\":{\"c\":[1,2]}"},
    {AW_DIALECT_FUNCTION_CALLS, "function_calls",
     "<function_calls>\n<invoke name=\"search\">\n<parameter name=\"query\">fc</parameter>\n</invoke>\n</function_calls>",
     "\"tool\":\"search\",\"args\":{\"query\":\"fc\"}"},
    {AW_DIALECT_FUNCTION_CALLS, "function_calls", "<invoke name='search'><parameter name=\"query\">bare</parameter></invoke>",
     "\"tool\":\"search\",\"args\":{\"query\":\"bare\"}"},
    {AW_DIALECT_HARMONY, "harmony",
     "<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\":\"h\"}<|call|>",
     "\"tool\":\"search\",\"args\":{\"query\":\"h\"}"},
    {AW_DIALECT_HARMONY, "harmony", "<|channel|>commentary to=functions.searchjson<|message|>{\"query\":\"glued\"}",
     "\"tool\":\"search\",\"args\":{\"query\":\"glued\"}"},
    {AW_DIALECT_FENCED, "fenced", "Calling:\n```json\n{\"name\": \"search\", \"arguments\": {\"query\": \"f\"}}\n```\n",
     "\"tool\":\"search\",\"args\":{\"query\":\"f\"}"},
    {AW_DIALECT_FENCED, "fenced", "```\n{\"tool_calls\": [{\"name\": \"search\", \"args\": {\"query\": \"t\"}}]}\n```",
     "\"tool\":\"search\",\"args\":{\"query\":\"t\"}"},
};

static void test_each_dialect_reads_its_forms(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        const form_case *c = &forms[i];
        unsigned sets[] = {c->dialect, AW_DIALECT_AUTO};
        for (int s = 0; s < 2; s++) {
            result r;
            run(sets[s], AW_TRANSPORT_NATIVE, c->reply, &r);
            if (r.calls != 1 || r.rejected) {
                print_error("case %zu (%s): %zu calls, %zu rejected:\n%s\n", i, c->name, r.calls, r.rejected, r.records);
                fail();
            }
            expect_contains(r.records, c->call);
            char dialect[64];
            snprintf(dialect, sizeof dialect, "\"source\":\"recovered\"");
            expect_contains(r.records, dialect);
            /* the markup is not shown */
            assert_null(strstr(r.visible, "search"));
            assert_null(strstr(r.visible, "get_weather"));
        }
    }
}

/* The dialect's name travels with the call; the source says the mode. */
static void test_modes(void **state) {
    (void)state;
    static const char reply[] = "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}</tool_call>";
    aw_transport_mode modes[] = {AW_TRANSPORT_NATIVE, AW_TRANSPORT_XML_FINAL, AW_TRANSPORT_XML};
    const char *sources[] = {"recovered", "recovered", "hermes"};
    for (int m = 0; m < 3; m++) {
        aw_transport *t = session(AW_DIALECT_AUTO, modes[m]);
        aw_extractor *x = aw_extractor_new(t, 1);
        struct {
            const char *source, *dialect;
            int n;
        } seen = {0};
        aw_x_fn fn = NULL;
        (void)fn;
        th_trace tr;
        th_trace_init(&tr, false);
        assert_int_equal(aw_extractor_feed(x, reply, sizeof reply - 1, th_on_event, &tr, NULL), 0);
        assert_int_equal(aw_extractor_finish(x, "stop", th_on_event, &tr, NULL), 0);
        assert_int_equal(tr.counts[AW_X_CALL], 1);
        char want[64];
        snprintf(want, sizeof want, "\"source\":\"%s\"", sources[m]);
        expect_contains(tr.out.data, want);
        (void)seen;
        th_trace_free(&tr);
        aw_extractor_free(x);
        aw_transport_free(t);
    }
}

static const char *dialect_of_call;
static int capture_dialect(void *ctx, const aw_x_event *ev) {
    (void)ctx;
    if (ev->kind == AW_X_CALL) dialect_of_call = ev->call->dialect;
    return 0;
}

static void test_call_names_its_dialect(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        aw_transport *t = session(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE);
        aw_extractor *x = aw_extractor_new(t, 1);
        dialect_of_call = NULL;
        assert_int_equal(aw_extractor_feed(x, forms[i].reply, strlen(forms[i].reply), capture_dialect, NULL, NULL), 0);
        assert_int_equal(aw_extractor_finish(x, "stop", capture_dialect, NULL, NULL), 0);
        assert_non_null(dialect_of_call);
        assert_string_equal(dialect_of_call, forms[i].name);
        aw_extractor_free(x);
        aw_transport_free(t);
    }
}

/* ---- arguments typed by the schema ------------------------------------------------------ */

static void test_string_arguments_typed_by_schema(void **state) {
    (void)state;
    result r;
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "<tool_call>\n<function=f>\n<parameter=a>\n5\n</parameter>\n<parameter=b>{\"x\": [1]}</parameter>\n"
        "<parameter=c>[1, \"2\"]</parameter>\n<parameter=d>true</parameter>\n<parameter=e>2.5</parameter>\n"
        "<parameter=s>5</parameter>\n<parameter=n>null</parameter>\n<parameter=other>7</parameter>\n</function>\n</tool_call>",
        &r);
    expect_contains(r.records, "\"args\":{\"a\":5,\"b\":{\"x\":[1]},\"c\":[1,\"2\"],\"d\":true,\"e\":2.5,\"s\":\"5\","
                               "\"n\":null,\"other\":\"7\"}");
    /* what does not fit the type stays the string, and validation judges
     * it: the call is rejected as invalid_arguments, naming each value */
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "<tool_call>f<arg_key>a</arg_key><arg_value>5.5</arg_value><arg_key>d</arg_key><arg_value>yes</arg_value>"
        "<arg_key>b</arg_key><arg_value>[1]</arg_value></tool_call>",
        &r);
    assert_int_equal(r.calls, 0);
    expect_contains(r.records, "\"reason\":\"invalid_arguments\"");
    expect_contains(r.records, "/a: expected integer, got string \\\"5.5\\\"");
    expect_contains(r.records, "/d: expected boolean, got string \\\"yes\\\"");
    expect_contains(r.records, "/b: expected object, got string \\\"[1]\\\"");
    /* unions of types: anyOf and a list of type names */
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"units\">null</parameter>"
        "<parameter name=\"when\">12</parameter><parameter name=\"days\">\n3\n</parameter></invoke></minimax:tool_call>",
        &r);
    expect_contains(r.records, "\"args\":{\"units\":\"null\",\"when\":12,\"days\":3}");
    /* Python literals */
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE, "[f(a=1_000, b={'k': (1, 2)}, d=False, s='it\\'s', e=-1.5e3)]", &r);
    expect_contains(r.records, "\"args\":{\"a\":1000,\"b\":{\"k\":[1,2]},\"d\":false,\"s\":\"it's\",\"e\":-1500}");
}

/* ---- never calls ----------------------------------------------------------------------------- */

static void test_never_calls(void **state) {
    (void)state;
    static const char *const replies[] = {
        /* inline code spans, one and two backticks */
        "Write `<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}</tool_call>` to call.",
        "Use ``[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {}}]`` and ``<function=search>``.",
        /* fences of other languages */
        "```python\n[get_weather(city='Paris')]\n```",
        "~~~xml\n<tool_call>\n<function=search>\n<parameter=query>\nx\n</parameter>\n</function>\n</tool_call>\n~~~",
        "```text\n<|tool_call|>[{\"name\": \"search\", \"arguments\": {}}]\n```",
        /* a mention in prose */
        "To call a tool, write <tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}</tool_call> in your reply.",
        "The <minimax:tool_call><invoke name=\"search\"></invoke></minimax:tool_call> block is what MiniMax writes.",
        /* placeholders */
        "<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>",
        "[TOOL_CALLS][{...}]",
        /* markers in prose, data in JSON, brackets that are links */
        "Mistral models prefix calls with [TOOL_CALLS] and the server strips it.",
        "{\"name\": \"Alice\", \"age\": 30}",
        "{\"name\": \"undeclared\", \"arguments\": {\"a\": 1}}",
        "[the docs](https://example.org) and [get_weather(city=x)]",
        "[undeclared(a=1)]",
        "```json\n{\"name\": \"Alice\", \"arguments\": \"none\"}\n```",
        "<|channel|>analysis<|message|>thinking<|end|><|start|>assistant<|channel|>final<|message|>Hello.",
        "Here is the result: {\"name\": \"search\", \"parameters\": {\"query\": \"x\"}} as JSON.",
    };
    for (size_t i = 0; i < sizeof replies / sizeof replies[0]; i++) {
        result r;
        run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE, replies[i], &r);
        if (r.calls || r.rejected || strcmp(r.visible, replies[i])) {
            print_error("reply %zu: %zu calls, %zu rejected, visible:\n%s\nrecords:\n%s\n", i, r.calls, r.rejected,
                        r.visible, r.records);
            fail();
        }
    }
}

/* Only the dialects switched on are read: the same tag holds three. */
static void test_only_enabled_dialects(void **state) {
    (void)state;
    static const char glm[] = "<tool_call>search<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>";
    static const char qwen[] = "<tool_call><function=search><parameter=query>x</parameter></function></tool_call>";
    result r;
    run(AW_DIALECT_HERMES, AW_TRANSPORT_NATIVE, glm, &r);
    assert_int_equal(r.calls + r.rejected, 0);
    assert_string_equal(r.visible, glm);
    run(AW_DIALECT_GLM45, AW_TRANSPORT_NATIVE, qwen, &r);
    assert_int_equal(r.calls + r.rejected, 0);
    assert_string_equal(r.visible, qwen);
    run(AW_DIALECT_GLM45, AW_TRANSPORT_NATIVE, glm, &r);
    assert_int_equal(r.calls, 1);
    run(AW_DIALECT_QWEN3_CODER, AW_TRANSPORT_NATIVE, qwen, &r);
    assert_int_equal(r.calls, 1);
    run(0, AW_TRANSPORT_NATIVE, qwen, &r);
    assert_int_equal(r.calls + r.rejected, 0);
    assert_string_equal(r.visible, qwen);
}

/* A tool that was not declared: an explicit call is rejected (never run);
 * a bare form is no call at all. */
static void test_undeclared_tools(void **state) {
    (void)state;
    result r;
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {\"path\": \"/\"}}</tool_call>", &r);
    assert_int_equal(r.calls, 0);
    assert_int_equal(r.rejected, 1);
    expect_contains(r.records, "\"reason\":\"tool_not_allowed\"");
    expect_contains(r.records, "Tool `rm_rf` is not available");
}

/* ---- malformed calls: feedback in the dialect's own form -------------------------------------------- */

static void test_malformed_feedback(void **state) {
    (void)state;
    static const struct {
        const char *reply, *reason, *says;
    } cases[] = {
        {"<tool_call>{\"name\": \"search\" \"arguments\" }}}</tool_call>", "invalid_json", "<tool_call>"},
        {"<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": ", "unclosed", "</tool_call>"},
        {"<tool_call>\n<function=search>\n<parameter=query=create</parameter>\n</function>\n</tool_call>",
         "malformed_call", "<parameter=NAME>VALUE</parameter>"},
        {"<tool_call>search<arg_key>query<arg_value>x</arg_value></tool_call>", "malformed_call",
         "<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>"},
        {"<|tool_call|>[{\"name\": \"search\", \"arguments\": {\"q", "unclosed", "<|tool_call|>"},
        {"[TOOL_CALLS][1, 2]", "invalid_json", "After [TOOL_CALLS] write [{"},
        {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>", "malformed_call",
         "<｜tool▁sep｜>"},
        {"<|tool_calls_section_begin|><|tool_call_begin|>functions.search.0<|tool_call_argument_begin|>{}<|tool_call_end|>"
         "<|tool_calls_section_end|>",
         "malformed_call", "functions.NAME:INDEX"},
        {"<minimax:tool_call><invoke><parameter name=\"q\">x</parameter></invoke></minimax:tool_call>", "malformed_call",
         "<minimax:tool_call><invoke name="},
        {"I'll read it.\n<function_calls>\n<invoke name=\"search\">", "unclosed", "</invoke>"},
        {"<|start|>assistant<|channel|>commentary to=functions.search <|constrain|>json<|message|>[1]<|call|>",
         "invalid_json", "<|constrain|>json<|message|>{...}"},
        {"[get_weather(city='Paris'), get_weather('Rome')]", "malformed_call", "[NAME(key=value, ...), ...]"},
        {"<|python_tag|>brave_search.call(\"weather\")", "malformed_call", "TOOL.call(name="},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r;
        run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE, cases[i].reply, &r);
        char reason[64];
        snprintf(reason, sizeof reason, "\"reason\":\"%s\"", cases[i].reason);
        if (!r.rejected || !strstr(r.records, reason) || !strstr(r.records, cases[i].says)) {
            print_error("case %zu: want %s saying %s, got:\n%s\n", i, cases[i].reason, cases[i].says, r.records);
            fail();
        }
        /* the model is told in the feedback, and nothing malformed runs */
        expect_contains(r.records, "\"kind\":\"feedback\"");
        if (i != 11) assert_int_equal(r.calls, 0);
    }
}

/* ---- the visible text and the order of events ------------------------------------------------------- */

static void test_visible_text_without_markup(void **state) {
    (void)state;
    result r;
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "Let me check.\n<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}\n</tool_call>\nDone, "
        "and `<tool_call>` is shown.",
        &r);
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.visible, "Let me check.\n\nDone, and `<tool_call>` is shown.");
    run(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE,
        "Before.\n```json\n{\"name\": \"search\", \"arguments\": {\"query\": \"f\"}}\n```\nAfter.", &r);
    assert_int_equal(r.calls, 1);
    assert_string_equal(r.visible, "Before.\n\nAfter.");
}

/* One of our tags settles what the filter holds first: the events keep
 * the order of the reply. */
static void test_our_tag_settles_a_candidate(void **state) {
    (void)state;
    result r;
    run(AW_DIALECT_AUTO, AW_TRANSPORT_XML,
        "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"a\"}} <ai-agent-" TH_NONCE
        "-0001 tool=\"search\">{\"query\": \"b\"}</ai-agent-" TH_NONCE "-0001>",
        &r);
    assert_int_equal(r.calls, 2);
    const char *first = strstr(r.records, "\"query\":\"a\"");
    const char *second = strstr(r.records, "\"query\":\"b\"");
    assert_non_null(first);
    assert_non_null(second);
    assert_true(first < second);
    expect_contains(r.records, "\"source\":\"hermes\"");
    expect_contains(r.records, "\"source\":\"xml\"");
}

/* ---- linear time ------------------------------------------------------------------------------------- */

/* Replies where candidates never close and overlap: the bytes the
 * readers scan stay within the budget (8 per byte of reply, plus 64 KiB),
 * whatever the chunking, and the events agree. Without the budget these
 * would cost the square of their length. */
static void test_scan_budget_keeps_time_linear(void **state) {
    (void)state;
    static const char *const units[] = {
        "\n{\"name\": \"search\", \"arguments\": {",
        "\n[search(query='",
        "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"",
        "[TOOL_CALLS][{\"name\": \"search\", \"arguments\": {",
        "<|tool_call|>[{\"a\": [",
        "<｜tool▁calls▁begin｜>x",
        "<|tool_calls_section_begin|>",
        "<minimax:tool_call><invoke name=\"search\">",
        "<|start|>assistant to=functions.search<|message|>{",
        "```json\n{\n",
    };
    aw_transport *t = session(AW_DIALECT_AUTO, AW_TRANSPORT_NATIVE);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        aw_buf reply;
        aw_buf_init(&reply, NULL);
        while (reply.len < 200000) assert_int_equal(aw_buf_append_str(&reply, units[u]), 0);
        static const size_t chunks[] = {0, 7};
        for (int c = 0; c < 2; c++) {
            aw_extractor *x = aw_extractor_new(t, 1);
            th_trace tr;
            th_trace_init(&tr, false);
            size_t step = chunks[c] ? chunks[c] : reply.len;
            for (size_t i = 0; i < reply.len; i += step) {
                size_t len = reply.len - i < step ? reply.len - i : step;
                assert_int_equal(aw_extractor_feed(x, reply.data + i, len, th_on_event, &tr, NULL), 0);
            }
            assert_int_equal(aw_extractor_finish(x, "stop", th_on_event, &tr, NULL), 0);
            size_t scanned = aw__recover_scanned(x);
            if (scanned > 8 * reply.len + 65536 + reply.len) {
                print_error("unit %zu: %zu bytes scanned for a reply of %zu\n", u, scanned, reply.len);
                fail();
            }
            assert_int_equal(tr.visible.len + 0 <= reply.len, 1);
            th_trace_free(&tr);
            aw_extractor_free(x);
        }
        aw_buf_free(&reply);
    }
    aw_transport_free(t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_each_dialect_reads_its_forms),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_call_names_its_dialect),
        cmocka_unit_test(test_string_arguments_typed_by_schema),
        cmocka_unit_test(test_never_calls),
        cmocka_unit_test(test_only_enabled_dialects),
        cmocka_unit_test(test_undeclared_tools),
        cmocka_unit_test(test_malformed_feedback),
        cmocka_unit_test(test_visible_text_without_markup),
        cmocka_unit_test(test_our_tag_settles_a_candidate),
        cmocka_unit_test(test_scan_budget_keeps_time_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
