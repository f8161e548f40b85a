/* The prompt of the command-line providers (runtime/cli_prompt.c): the
 * same bytes aw_messages_encode writes for the same messages given as
 * OpenAI-shaped JSON, in both encodings; the xml context mode's <thread>
 * passed through alone, spliced among other messages with its prefill
 * last; every allocation failure handled. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/json.h"
#include "agentwire/messages.h"
#include "agentwire/provider.h"
#include "failalloc.h"
#include "internal/cli_provider.h"

/* An aw_text initializer, and the same as a value. */
#define TX(s) {(s), sizeof(s) - 1}
#define T(s) ((aw_text)TX(s))

/* The conversation of these tests, as the loop holds it... */
static const aw_chat_call first_calls[] = {
    {TX("call_1"), TX("list_dir"), TX("{\"path\":\"/tmp\"}")},
    {TX("call_2"), TX("stat"), TX("{\"path\": \"/tmp/a\"}")},
};
static const aw_chat_msg history[] = {
    {.role = AW_CHAT_USER, .content = TX("List the files in /tmp & say <hi> \xc3\xa9")},
    {.role = AW_CHAT_ASSISTANT, .content = TX("Let me look."), .calls = first_calls, .call_count = 2},
    {.role = AW_CHAT_TOOL, .content = TX("a\nb"), .call_id = TX("call_1"), .tool_name = TX("list_dir")},
    {.role = AW_CHAT_TOOL, .content = TX("error: no such file"), .call_id = TX("call_2"), .tool_name = TX("stat"),
     .is_error = true},
    {.role = AW_CHAT_ASSISTANT, .content = TX("Done: a, b.")},
};
static const aw_chat_msg notice[] = {{.role = AW_CHAT_USER, .content = TX("XML-NEXT: nonce abc")}};

/* ...and as OpenAI messages, written by hand. */
static const char history_json[] =
    "[{\"role\":\"system\",\"content\":\"You are terse.\"},"
    "{\"role\":\"user\",\"content\":\"List the files in /tmp & say <hi> \xc3\xa9\"},"
    "{\"role\":\"assistant\",\"content\":\"Let me look.\",\"tool_calls\":["
    "{\"id\":\"call_1\",\"type\":\"function\","
    "\"function\":{\"name\":\"list_dir\",\"arguments\":\"{\\\"path\\\":\\\"/tmp\\\"}\"}},"
    "{\"id\":\"call_2\",\"type\":\"function\","
    "\"function\":{\"name\":\"stat\",\"arguments\":\"{\\\"path\\\": \\\"/tmp/a\\\"}\"}}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"a\\nb\"},"
    "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"content\":\"error: no such file\"},"
    "{\"role\":\"assistant\",\"content\":\"Done: a, b.\"},"
    "{\"role\":\"user\",\"content\":\"XML-NEXT: nonce abc\"}]";

static const char thread_stable[] = "<thread>\n"
                                    "  <event type=\"human\" id=\"0\" iteration=\"1\">hi &amp; bye</event>\n"
                                    "  <event type=\"ai\" id=\"1\" iteration=\"1\">hello</event>";
static const char thread_close[] = "\n</thread>";
static const char prefill[] = "\nBased on the thread above, my next step is";

static aw_chat *make_history(const aw_allocator *a)
{
    aw_chat *c = aw_chat_new(a);
    if (!c)
        return NULL;
    for (size_t i = 0; i < sizeof history / sizeof *history; i++)
        if (aw_chat_append(c, &history[i])) {
            aw_chat_free(c);
            return NULL;
        }
    return c;
}

/* aw_messages_encode of a JSON text, NUL-terminated (malloc'd). */
static char *codec_encode(const char *json, size_t len, aw_messages_encoding enc, size_t *out_len)
{
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(json, len, NULL, &doc, &err), 0);
    aw_buf out;
    aw_buf_init(&out, NULL);
    aw_messages_options opts = {.format = AW_MESSAGES_OPENAI, .encoding = enc};
    if (aw_messages_encode(aw_json_doc_root(doc), &opts, &out, &err))
        fail_msg("codec: %s", err.message);
    aw_json_doc_free(doc);
    *out_len = out.len;
    return aw_buf_detach(&out, out_len);
}

static void build(const aw_model_request *req, aw_prompt_encoding enc, aw_buf *out)
{
    aw_buf_init(out, NULL);
    aw_error err;
    if (aw_cli_prompt(req, enc, NULL, out, &err))
        fail_msg("prompt: %s", err.message);
}

static void assert_same(const aw_buf *got, const char *want, size_t want_len)
{
    assert_int_equal(got->len, want_len);
    assert_memory_equal(got->data, want, want_len);
}

static aw_model_request history_request(aw_chat *chat)
{
    aw_model_request req = {.system = T("You are terse."), .history = chat, .ephemeral = notice, .ephemeral_count = 1};
    return req;
}

/* The history request's prompt in enc, checked against the codec's
 * encoding of the same messages; the caller frees got. */
static void history_prompt(aw_prompt_encoding enc, aw_messages_encoding codec_enc, aw_buf *got)
{
    aw_chat *chat = make_history(NULL);
    aw_model_request req = history_request(chat);
    build(&req, enc, got);
    size_t want_len;
    char *want = codec_encode(history_json, sizeof history_json - 1, codec_enc, &want_len);
    assert_same(got, want, want_len);
    free(want);
    aw_chat_free(chat);
}

static void test_history_as_xml_is_the_codecs(void **state)
{
    (void)state;
    aw_buf got;
    history_prompt(AW_PROMPT_XML, AW_MESSAGES_XML, &got);
    /* Not two empty documents: the calls, their names and the escaping. */
    assert_non_null(strstr(got.data, "<event type=\"system\" id=\"0\" iteration=\"0\">You are terse.</event>"));
    assert_non_null(strstr(got.data, "name=\"list_dir\" call_id=\"call_1\" status=\"success\" iteration=\"0\">a\nb<"));
    assert_non_null(strstr(got.data, "say &lt;hi&gt; \xc3\xa9</event>"));
    assert_non_null(strstr(got.data, ">XML-NEXT: nonce abc</event>\n</thread>"));
    aw_buf_free(&got);
}

static void test_history_as_text_is_the_codecs(void **state)
{
    (void)state;
    aw_buf got;
    history_prompt(AW_PROMPT_TEXT, AW_MESSAGES_TEXT, &got);
    assert_true(strncmp(got.data, "[System]\nYou are terse.\n\n[User]\n", 32) == 0);
    assert_non_null(strstr(got.data, "\"name\":\"list_dir\""));
    aw_buf_free(&got);
}

static void test_thread_alone_passes_through(void **state)
{
    (void)state;
    aw_buf tail;
    aw_buf_init(&tail, NULL);
    aw_buf_append_str(&tail, thread_close);
    aw_buf_append_str(&tail, prefill);
    aw_model_request req = {.thread_stable = T(thread_stable), .thread_tail = {tail.data, tail.len}};
    aw_buf got;
    build(&req, AW_PROMPT_XML, &got);
    aw_buf want;
    aw_buf_init(&want, NULL);
    aw_buf_append_str(&want, thread_stable);
    aw_buf_append(&want, tail.data, tail.len);
    assert_same(&got, want.data, want.len);
    aw_buf_free(&got);
    aw_buf_free(&want);
    aw_buf_free(&tail);
}

/* The request of the xml context mode: system, the thread, the notice. */
static aw_model_request thread_request(aw_buf *tail)
{
    aw_buf_init(tail, NULL);
    aw_buf_append_str(tail, thread_close);
    aw_buf_append_str(tail, prefill);
    aw_model_request req = {.system = T("You are terse."),
                            .thread_stable = T(thread_stable),
                            .thread_tail = {tail->data, tail->len},
                            .ephemeral = notice,
                            .ephemeral_count = 1};
    return req;
}

/* [system, the thread as a user message, the notice] as JSON text. */
static char *thread_list_json(bool with_prefill, size_t *len)
{
    aw_json_doc *doc = aw_json_doc_new(NULL);
    aw_json_value *list = aw_json_new_array(doc);
    const char *roles[] = {"system", "user", "user"};
    aw_buf thread;
    aw_buf_init(&thread, NULL);
    aw_buf_append_str(&thread, thread_stable);
    aw_buf_append_str(&thread, thread_close);
    if (with_prefill)
        aw_buf_append_str(&thread, prefill);
    aw_text contents[] = {T("You are terse."), {thread.data, thread.len}, T("XML-NEXT: nonce abc")};
    for (int i = 0; i < 3; i++) {
        aw_json_value *m = aw_json_new_object(doc);
        aw_json_object_set_string(doc, m, "role", roles[i], strlen(roles[i]));
        aw_json_object_set_string(doc, m, "content", contents[i].ptr, contents[i].len);
        aw_json_array_push(doc, list, m);
    }
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_json_write(list, NULL, &out, NULL), 0);
    aw_json_doc_free(doc);
    aw_buf_free(&thread);
    return aw_buf_detach(&out, len);
}

/* The xml context mode's request built in enc (got), and the codec's
 * encoding of [system, the thread with or without its prefill, the
 * notice] (want). */
static void thread_prompt(aw_prompt_encoding enc, bool with_prefill, aw_buf *got, aw_buf *want)
{
    aw_buf tail;
    aw_model_request req = thread_request(&tail);
    build(&req, enc, got);
    size_t json_len, want_len;
    char *json = thread_list_json(with_prefill, &json_len);
    char *codec = codec_encode(json, json_len, enc == AW_PROMPT_TEXT ? AW_MESSAGES_TEXT : AW_MESSAGES_XML, &want_len);
    aw_buf_init(want, NULL);
    aw_buf_append(want, codec, want_len);
    free(json);
    free(codec);
    aw_buf_free(&tail);
}

static void test_thread_among_messages_is_spliced_with_the_prefill_last(void **state)
{
    (void)state;
    aw_buf got, want;
    thread_prompt(AW_PROMPT_XML, false, &got, &want);
    aw_buf_append_str(&want, prefill);
    assert_same(&got, want.data, want.len);
    /* One thread: the system prompt, the thread's events, the notice. */
    assert_true(strncmp(got.data, "<thread>\n  <event type=\"system\" id=\"0\"", 38) == 0);
    assert_non_null(strstr(got.data, "<event type=\"human\" id=\"1\" iteration=\"1\">hi &amp; bye</event>"));
    assert_non_null(strstr(got.data, "nonce abc</event>\n</thread>\nBased on the thread above, my next step is"));
    assert_null(strstr(got.data + 8, "<thread>"));
    aw_buf_free(&want);
    aw_buf_free(&got);
}

static void test_thread_in_the_text_form_is_a_user_message(void **state)
{
    (void)state;
    aw_buf got, want;
    thread_prompt(AW_PROMPT_TEXT, true, &got, &want);
    assert_same(&got, want.data, want.len);
    assert_non_null(strstr(got.data, "[User]\n<thread>\n"));
    aw_buf_free(&want);
    aw_buf_free(&got);
}

/* A thread that does not decode, among other messages, is the user's text
 * (as the reference encodes it): escaped into a human event, not an error. */
static void test_thread_that_does_not_decode_is_text(void **state)
{
    (void)state;
    aw_model_request req = {.system = T("s"), .thread_stable = T("<thread><event type=\"human\">x"),
                            .thread_tail = T("\n</thread>")};
    aw_buf out;
    aw_buf_init(&out, NULL);
    aw_error err;
    assert_int_equal(aw_cli_prompt(&req, AW_PROMPT_XML, NULL, &out, &err), 0);
    assert_non_null(strstr(out.data, "<event type=\"human\" id=\"1\" iteration=\"0\">&lt;thread&gt;&lt;event"));
    aw_buf_free(&out);
}

/* ---- allocation failures ----------------------------------------------------- */

typedef struct sweep {
    aw_model_request req;
    const char *want;
    size_t want_len;
    aw_prompt_encoding enc;
} sweep;

static int build_under(const aw_allocator *a, void *ctx)
{
    sweep *s = ctx;
    aw_buf out;
    aw_buf_init(&out, a);
    aw_error err;
    int rc = aw_cli_prompt(&s->req, s->enc, a, &out, &err);
    if (rc == 0) {
        assert_int_equal(out.len, s->want_len);
        assert_memory_equal(out.data, s->want, s->want_len);
    } else {
        assert_int_equal(rc, err.code);
        assert_int_equal(out.len, 0);
    }
    aw_buf_free(&out);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    aw_chat *chat = make_history(NULL);
    aw_buf tail;
    aw_model_request thread_req = thread_request(&tail);
    sweep cases[] = {
        {history_request(chat), NULL, 0, AW_PROMPT_XML},
        {history_request(chat), NULL, 0, AW_PROMPT_TEXT},
        {thread_req, NULL, 0, AW_PROMPT_XML},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        aw_buf want;
        build(&cases[i].req, cases[i].enc, &want);
        cases[i].want = want.data;
        cases[i].want_len = want.len;
        long calls = aw_failalloc_run(build_under, &cases[i], 0);
        assert_true(calls > 10);
        aw_buf_free(&want);
    }
    aw_buf_free(&tail);
    aw_chat_free(chat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_as_xml_is_the_codecs),
        cmocka_unit_test(test_history_as_text_is_the_codecs),
        cmocka_unit_test(test_thread_alone_passes_through),
        cmocka_unit_test(test_thread_among_messages_is_spliced_with_the_prefill_last),
        cmocka_unit_test(test_thread_in_the_text_form_is_a_user_message),
        cmocka_unit_test(test_thread_that_does_not_decode_is_text),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
