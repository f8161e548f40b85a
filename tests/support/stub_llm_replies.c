/* stub_llm's reply bodies: what OpenAI's Chat Completions, Anthropic's
 * Messages and OpenAI's Responses APIs send for a reply made of text,
 * reasoning, tool calls, usage and a stop reason, streamed as their event
 * streams (text and arguments cut into pieces of `piece` bytes) or whole. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_llm.h"

stub_api stub_api_of_path(const char *path, size_t len)
{
    static const struct {
        const char *suffix;
        stub_api api;
    } ends[] = {{"/chat/completions", STUB_OPENAI_CHAT},
                {"/messages", STUB_ANTHROPIC_MESSAGES},
                {"/responses", STUB_OPENAI_RESPONSES}};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t k = strlen(ends[i].suffix);
        if (len >= k && memcmp(path + len - k, ends[i].suffix, k) == 0)
            return ends[i].api;
    }
    return STUB_UNKNOWN;
}

void stub_body_init(stub_body *b)
{
    memset(b, 0, sizeof *b);
    aw_buf_init(&b->bytes, NULL);
}

void stub_body_free(stub_body *b)
{
    aw_buf_free(&b->bytes);
    free(b->event_ends);
}

/* ---- writing ------------------------------------------------------------------ */

/* The stub aborts on no memory: it is a test tool, and a half-written
 * reply would only hide the failure. */
static void must(int rc)
{
    if (rc) {
        fprintf(stderr, "stub_llm: out of memory\n");
        exit(2);
    }
}

static void put(aw_buf *b, const char *s) { must(aw_buf_append_str(b, s)); }
static void put_str(aw_buf *b, const char *p, size_t n) { must(aw_json_write_string(b, p, n)); }
static void put_int(aw_buf *b, long long v) { must(aw_buf_printf(b, "%lld", v)); }

static void end_event(stub_body *b)
{
    if (b->nevents == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->event_ends = realloc(b->event_ends, b->cap * sizeof *b->event_ends);
        if (!b->event_ends)
            must(-1);
    }
    b->event_ends[b->nevents++] = b->bytes.len;
}

/* ---- the reply a script line describes ------------------------------------------- */

typedef struct reply {
    const char *text;
    size_t text_len;
    const char *reasoning;
    size_t reasoning_len;
    const aw_json_value *calls;
    aw_buf *args; /* each call's arguments as JSON text */
    size_t ncalls;
    bool has_usage;
    long long in, out, cache_read, cache_write, reasoning_tokens;
    const char *stop;
    const char *model;
    size_t piece;
    char *big;
} reply;

static const char *str_or(const aw_json_value *o, const char *key, const char *dflt, size_t *len)
{
    const aw_json_value *v = aw_json_get(o, key);
    if (aw_json_is_string(v)) {
        if (len)
            *len = v->u.str.len;
        return v->u.str.ptr;
    }
    if (len)
        *len = dflt ? strlen(dflt) : 0;
    return dflt;
}

static long long int_or(const aw_json_value *o, const char *key, long long dflt)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_number(v) ? (long long)v->u.num.d : dflt;
}

/* 64-byte lines, so a big reply is easy to check at the receiving end. */
static const char big_line[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+\n";

static int reply_read(reply *r, const aw_json_value *line, const char *model, char *err, size_t errn)
{
    memset(r, 0, sizeof *r);
    r->text = str_or(line, "text", "", &r->text_len);
    r->reasoning = str_or(line, "reasoning", "", &r->reasoning_len);
    r->model = str_or(line, "model", model && *model ? model : "stub-model", NULL);
    r->piece = (size_t)int_or(line, "piece", 16);
    long long mb = int_or(line, "big_mb", 0);
    if (mb > 0) {
        size_t n = (size_t)mb << 20;
        r->big = malloc(n);
        if (!r->big)
            must(-1);
        for (size_t i = 0; i < n; i += 64)
            memcpy(r->big + i, big_line, 64);
        r->text = r->big;
        r->text_len = n;
        r->piece = (size_t)int_or(line, "piece", 4096);
    }
    if (r->piece == 0)
        r->piece = 16;
    r->calls = aw_json_get(line, "tool_calls");
    if (r->calls && !aw_json_is_array(r->calls)) {
        snprintf(err, errn, "\"tool_calls\" must be an array");
        return -1;
    }
    r->ncalls = aw_json_count(r->calls);
    r->args = calloc(r->ncalls ? r->ncalls : 1, sizeof *r->args);
    if (!r->args)
        must(-1);
    for (size_t i = 0; i < r->ncalls; i++) {
        const aw_json_value *c = aw_json_at(r->calls, i), *a = aw_json_get(c, "arguments");
        aw_buf_init(&r->args[i], NULL);
        if (aw_json_is_string(a))
            must(aw_buf_append(&r->args[i], a->u.str.ptr, a->u.str.len));
        else if (a)
            must(aw_json_write(a, NULL, &r->args[i], NULL));
        else
            put(&r->args[i], "{}");
    }
    const aw_json_value *u = aw_json_get(line, "usage");
    if (aw_json_is_object(u)) {
        r->has_usage = true;
        r->in = int_or(u, "input_tokens", 0);
        r->out = int_or(u, "output_tokens", 0);
        r->cache_read = int_or(u, "cache_read_tokens", 0);
        r->cache_write = int_or(u, "cache_write_tokens", 0);
        r->reasoning_tokens = int_or(u, "reasoning_tokens", 0);
    }
    r->stop = str_or(line, "stop_reason", NULL, NULL);
    return 0;
}

static void reply_free(reply *r)
{
    for (size_t i = 0; i < r->ncalls; i++)
        aw_buf_free(&r->args[i]);
    free(r->args);
    free(r->big);
}

static const char *call_field(const reply *r, size_t i, const char *key, const char *dflt, size_t *len)
{
    return str_or(aw_json_at(r->calls, i), key, dflt, len);
}

/* The length of the next piece of p[0..n): at most `piece` bytes, never
 * cutting a UTF-8 character (one longer than a piece is a piece). */
static size_t piece_len(const char *p, size_t n, size_t piece)
{
    if (n <= piece)
        return n;
    size_t k = piece;
    while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80)
        k--;
    if (k == 0) /* one character longer than a piece: the whole character */
        for (k = piece; k < n && ((unsigned char)p[k] & 0xC0) == 0x80; k++)
            ;
    return k;
}

#define FOR_PIECES(p, n, size, at, len)                                                                          \
    for (size_t at = 0, len = 0; at < (n) && ((len = piece_len((p) + at, (n) - at, (size))), 1); at += len)

/* ---- OpenAI Chat Completions ----------------------------------------------------- */

static void chat_chunk_open(aw_buf *b, const reply *r)
{
    put(b, "data: {\"id\":\"chatcmpl-stub\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":");
    put_str(b, r->model, strlen(r->model));
    put(b, ",\"choices\":[{\"index\":0,\"delta\":");
}

static void chat_chunk_close(stub_body *b, const char *finish)
{
    put(&b->bytes, ",\"finish_reason\":");
    if (finish)
        put_str(&b->bytes, finish, strlen(finish));
    else
        put(&b->bytes, "null");
    put(&b->bytes, "}]}\n\n");
    end_event(b);
}

static void chat_usage(aw_buf *b, const reply *r)
{
    put(b, "{\"prompt_tokens\":");
    put_int(b, r->in);
    put(b, ",\"completion_tokens\":");
    put_int(b, r->out);
    put(b, ",\"total_tokens\":");
    put_int(b, r->in + r->out);
    put(b, ",\"prompt_tokens_details\":{\"cached_tokens\":");
    put_int(b, r->cache_read);
    put(b, "},\"completion_tokens_details\":{\"reasoning_tokens\":");
    put_int(b, r->reasoning_tokens);
    put(b, "}}");
}

static const char *chat_stop(const reply *r) { return r->stop ? r->stop : r->ncalls ? "tool_calls" : "stop"; }

static void chat_stream(stub_body *b, const reply *r)
{
    aw_buf *o = &b->bytes;
    chat_chunk_open(o, r);
    put(o, "{\"role\":\"assistant\",\"content\":\"\"}");
    chat_chunk_close(b, NULL);
    FOR_PIECES(r->reasoning, r->reasoning_len, r->piece, at, n) {
        chat_chunk_open(o, r);
        put(o, "{\"reasoning_content\":");
        put_str(o, r->reasoning + at, n);
        put(o, "}");
        chat_chunk_close(b, NULL);
    }
    FOR_PIECES(r->text, r->text_len, r->piece, at, n) {
        chat_chunk_open(o, r);
        put(o, "{\"content\":");
        put_str(o, r->text + at, n);
        put(o, "}");
        chat_chunk_close(b, NULL);
    }
    for (size_t i = 0; i < r->ncalls; i++) {
        size_t idl, namel;
        const char *id = call_field(r, i, "id", "call_stub", &idl);
        const char *name = call_field(r, i, "name", "tool", &namel);
        chat_chunk_open(o, r);
        put(o, "{\"tool_calls\":[{\"index\":");
        put_int(o, (long long)i);
        put(o, ",\"id\":");
        put_str(o, id, idl);
        put(o, ",\"type\":\"function\",\"function\":{\"name\":");
        put_str(o, name, namel);
        put(o, ",\"arguments\":\"\"}}]}");
        chat_chunk_close(b, NULL);
        FOR_PIECES(r->args[i].data, r->args[i].len, r->piece, at, n) {
            chat_chunk_open(o, r);
            put(o, "{\"tool_calls\":[{\"index\":");
            put_int(o, (long long)i);
            put(o, ",\"function\":{\"arguments\":");
            put_str(o, r->args[i].data + at, n);
            put(o, "}}]}");
            chat_chunk_close(b, NULL);
        }
    }
    chat_chunk_open(o, r);
    put(o, "{}");
    chat_chunk_close(b, chat_stop(r));
    if (r->has_usage) {
        put(o, "data: {\"id\":\"chatcmpl-stub\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":");
        put_str(o, r->model, strlen(r->model));
        put(o, ",\"choices\":[],\"usage\":");
        chat_usage(o, r);
        put(o, "}\n\n");
        end_event(b);
    }
    put(o, "data: [DONE]\n\n");
    end_event(b);
}

static void chat_whole(stub_body *b, const reply *r)
{
    aw_buf *o = &b->bytes;
    put(o, "{\"id\":\"chatcmpl-stub\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":");
    put_str(o, r->model, strlen(r->model));
    put(o, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
    if (r->text_len || !r->ncalls)
        put_str(o, r->text, r->text_len);
    else
        put(o, "null");
    if (r->reasoning_len) {
        put(o, ",\"reasoning_content\":");
        put_str(o, r->reasoning, r->reasoning_len);
    }
    if (r->ncalls) {
        put(o, ",\"tool_calls\":[");
        for (size_t i = 0; i < r->ncalls; i++) {
            size_t idl, namel;
            const char *id = call_field(r, i, "id", "call_stub", &idl);
            const char *name = call_field(r, i, "name", "tool", &namel);
            put(o, i ? ",{\"id\":" : "{\"id\":");
            put_str(o, id, idl);
            put(o, ",\"type\":\"function\",\"function\":{\"name\":");
            put_str(o, name, namel);
            put(o, ",\"arguments\":");
            put_str(o, r->args[i].data, r->args[i].len);
            put(o, "}}");
        }
        put(o, "]");
    }
    put(o, "},\"finish_reason\":");
    put_str(o, chat_stop(r), strlen(chat_stop(r)));
    put(o, "}]");
    if (r->has_usage) {
        put(o, ",\"usage\":");
        chat_usage(o, r);
    }
    put(o, "}");
}

/* ---- Anthropic Messages ------------------------------------------------------------- */

static void msg_event(stub_body *b, const char *type)
{
    put(&b->bytes, "event: ");
    put(&b->bytes, type);
    put(&b->bytes, "\ndata: {\"type\":\"");
    put(&b->bytes, type);
    put(&b->bytes, "\"");
}

static void msg_event_end(stub_body *b)
{
    put(&b->bytes, "}\n\n");
    end_event(b);
}

static const char *msg_stop(const reply *r) { return r->stop ? r->stop : r->ncalls ? "tool_use" : "end_turn"; }

static void msg_usage(aw_buf *o, const reply *r, long long out)
{
    put(o, "{\"input_tokens\":");
    put_int(o, r->in);
    put(o, ",\"cache_creation_input_tokens\":");
    put_int(o, r->cache_write);
    put(o, ",\"cache_read_input_tokens\":");
    put_int(o, r->cache_read);
    put(o, ",\"output_tokens\":");
    put_int(o, out);
    put(o, "}");
}

static void msg_block_start(stub_body *b, size_t index, const char *block)
{
    msg_event(b, "content_block_start");
    put(&b->bytes, ",\"index\":");
    put_int(&b->bytes, (long long)index);
    put(&b->bytes, ",\"content_block\":");
    put(&b->bytes, block);
}

static void msg_delta(stub_body *b, size_t index, const char *type, const char *field, const char *p, size_t n)
{
    msg_event(b, "content_block_delta");
    put(&b->bytes, ",\"index\":");
    put_int(&b->bytes, (long long)index);
    put(&b->bytes, ",\"delta\":{\"type\":\"");
    put(&b->bytes, type);
    put(&b->bytes, "\",\"");
    put(&b->bytes, field);
    put(&b->bytes, "\":");
    put_str(&b->bytes, p, n);
    put(&b->bytes, "}");
    msg_event_end(b);
}

static void msg_block_stop(stub_body *b, size_t index)
{
    msg_event(b, "content_block_stop");
    put(&b->bytes, ",\"index\":");
    put_int(&b->bytes, (long long)index);
    msg_event_end(b);
}

static void msg_stream(stub_body *b, const reply *r)
{
    aw_buf *o = &b->bytes;
    msg_event(b, "message_start");
    put(o, ",\"message\":{\"id\":\"msg_stub\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    put_str(o, r->model, strlen(r->model));
    put(o, ",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
    msg_usage(o, r, 1);
    put(o, "}");
    msg_event_end(b);
    msg_event(b, "ping");
    msg_event_end(b);
    size_t index = 0;
    if (r->reasoning_len) {
        msg_block_start(b, index, "{\"type\":\"thinking\",\"thinking\":\"\"}");
        msg_event_end(b);
        FOR_PIECES(r->reasoning, r->reasoning_len, r->piece, at, n)
            msg_delta(b, index, "thinking_delta", "thinking", r->reasoning + at, n);
        msg_delta(b, index, "signature_delta", "signature", "c3R1Yg==", 8);
        msg_block_stop(b, index++);
    }
    if (r->text_len) {
        msg_block_start(b, index, "{\"type\":\"text\",\"text\":\"\"}");
        msg_event_end(b);
        FOR_PIECES(r->text, r->text_len, r->piece, at, n)
            msg_delta(b, index, "text_delta", "text", r->text + at, n);
        msg_block_stop(b, index++);
    }
    for (size_t i = 0; i < r->ncalls; i++, index++) {
        size_t idl, namel;
        const char *id = call_field(r, i, "id", "toolu_stub", &idl);
        const char *name = call_field(r, i, "name", "tool", &namel);
        msg_block_start(b, index, "{\"type\":\"tool_use\",\"id\":");
        put_str(o, id, idl);
        put(o, ",\"name\":");
        put_str(o, name, namel);
        put(o, ",\"input\":{}}");
        msg_event_end(b);
        FOR_PIECES(r->args[i].data, r->args[i].len, r->piece, at, n)
            msg_delta(b, index, "input_json_delta", "partial_json", r->args[i].data + at, n);
        msg_block_stop(b, index);
    }
    msg_event(b, "message_delta");
    put(o, ",\"delta\":{\"stop_reason\":");
    put_str(o, msg_stop(r), strlen(msg_stop(r)));
    put(o, ",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
    put_int(o, r->out);
    put(o, "}");
    msg_event_end(b);
    msg_event(b, "message_stop");
    msg_event_end(b);
}

static void msg_whole(stub_body *b, const reply *r)
{
    aw_buf *o = &b->bytes;
    put(o, "{\"id\":\"msg_stub\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    put_str(o, r->model, strlen(r->model));
    put(o, ",\"content\":[");
    bool first = true;
    if (r->reasoning_len) {
        put(o, "{\"type\":\"thinking\",\"thinking\":");
        put_str(o, r->reasoning, r->reasoning_len);
        put(o, ",\"signature\":\"c3R1Yg==\"}");
        first = false;
    }
    if (r->text_len) {
        put(o, first ? "{\"type\":\"text\",\"text\":" : ",{\"type\":\"text\",\"text\":");
        put_str(o, r->text, r->text_len);
        put(o, "}");
        first = false;
    }
    for (size_t i = 0; i < r->ncalls; i++) {
        size_t idl, namel;
        const char *id = call_field(r, i, "id", "toolu_stub", &idl);
        const char *name = call_field(r, i, "name", "tool", &namel);
        put(o, first ? "{\"type\":\"tool_use\",\"id\":" : ",{\"type\":\"tool_use\",\"id\":");
        put_str(o, id, idl);
        put(o, ",\"name\":");
        put_str(o, name, namel);
        put(o, ",\"input\":");
        must(aw_buf_append(o, r->args[i].data, r->args[i].len));
        put(o, "}");
        first = false;
    }
    put(o, "],\"stop_reason\":");
    put_str(o, msg_stop(r), strlen(msg_stop(r)));
    put(o, ",\"stop_sequence\":null,\"usage\":");
    msg_usage(o, r, r->out);
    put(o, "}");
}

/* ---- OpenAI Responses (what the codex CLI speaks) --------------------------------------- */

static void resp_event(stub_body *b, const char *type, size_t *seq)
{
    put(&b->bytes, "event: ");
    put(&b->bytes, type);
    put(&b->bytes, "\ndata: {\"type\":\"");
    put(&b->bytes, type);
    put(&b->bytes, "\",\"sequence_number\":");
    put_int(&b->bytes, (long long)(*seq)++);
}

static void resp_message_item(aw_buf *o, const reply *r, bool done)
{
    put(o, "{\"id\":\"msg_stub\",\"type\":\"message\",\"status\":");
    put(o, done ? "\"completed\"" : "\"in_progress\"");
    put(o, ",\"role\":\"assistant\",\"content\":[");
    if (done) {
        put(o, "{\"type\":\"output_text\",\"text\":");
        put_str(o, r->text, r->text_len);
        put(o, ",\"annotations\":[]}");
    }
    put(o, "]}");
}

static void resp_call_item(aw_buf *o, const reply *r, size_t i, bool done)
{
    size_t idl, namel;
    const char *id = call_field(r, i, "id", "call_stub", &idl);
    const char *name = call_field(r, i, "name", "tool", &namel);
    put(o, "{\"id\":\"fc_stub_");
    put_int(o, (long long)i);
    put(o, "\",\"type\":\"function_call\",\"status\":");
    put(o, done ? "\"completed\"" : "\"in_progress\"");
    put(o, ",\"call_id\":");
    put_str(o, id, idl);
    put(o, ",\"name\":");
    put_str(o, name, namel);
    put(o, ",\"arguments\":");
    if (done)
        put_str(o, r->args[i].data, r->args[i].len);
    else
        put(o, "\"\"");
    put(o, "}");
}

static void resp_object(aw_buf *o, const reply *r, const char *status)
{
    put(o, "{\"id\":\"resp_stub\",\"object\":\"response\",\"created_at\":1700000000,\"status\":\"");
    put(o, status);
    put(o, "\",\"model\":");
    put_str(o, r->model, strlen(r->model));
    put(o, ",\"output\":[");
    bool done = strcmp(status, "in_progress") != 0;
    size_t items = 0;
    if (done && r->text_len) {
        resp_message_item(o, r, true);
        items++;
    }
    for (size_t i = 0; done && i < r->ncalls; i++, items++) {
        if (items)
            put(o, ",");
        resp_call_item(o, r, i, true);
    }
    put(o, "]");
    if (done && r->has_usage) {
        put(o, ",\"usage\":{\"input_tokens\":");
        put_int(o, r->in);
        put(o, ",\"input_tokens_details\":{\"cached_tokens\":");
        put_int(o, r->cache_read);
        put(o, "},\"output_tokens\":");
        put_int(o, r->out);
        put(o, ",\"output_tokens_details\":{\"reasoning_tokens\":");
        put_int(o, r->reasoning_tokens);
        put(o, "},\"total_tokens\":");
        put_int(o, r->in + r->out);
        put(o, "}");
    }
    put(o, "}");
}

static void resp_stream(stub_body *b, const reply *r)
{
    aw_buf *o = &b->bytes;
    size_t seq = 0, out_index = 0;
    resp_event(b, "response.created", &seq);
    put(o, ",\"response\":");
    resp_object(o, r, "in_progress");
    msg_event_end(b);
    resp_event(b, "response.in_progress", &seq);
    put(o, ",\"response\":");
    resp_object(o, r, "in_progress");
    msg_event_end(b);
    if (r->text_len) {
        resp_event(b, "response.output_item.added", &seq);
        put(o, ",\"output_index\":0,\"item\":");
        resp_message_item(o, r, false);
        msg_event_end(b);
        resp_event(b, "response.content_part.added", &seq);
        put(o, ",\"item_id\":\"msg_stub\",\"output_index\":0,\"content_index\":0,"
               "\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}");
        msg_event_end(b);
        FOR_PIECES(r->text, r->text_len, r->piece, at, n) {
            resp_event(b, "response.output_text.delta", &seq);
            put(o, ",\"item_id\":\"msg_stub\",\"output_index\":0,\"content_index\":0,\"delta\":");
            put_str(o, r->text + at, n);
            msg_event_end(b);
        }
        resp_event(b, "response.output_text.done", &seq);
        put(o, ",\"item_id\":\"msg_stub\",\"output_index\":0,\"content_index\":0,\"text\":");
        put_str(o, r->text, r->text_len);
        msg_event_end(b);
        resp_event(b, "response.content_part.done", &seq);
        put(o, ",\"item_id\":\"msg_stub\",\"output_index\":0,\"content_index\":0,"
               "\"part\":{\"type\":\"output_text\",\"text\":");
        put_str(o, r->text, r->text_len);
        put(o, ",\"annotations\":[]}");
        msg_event_end(b);
        resp_event(b, "response.output_item.done", &seq);
        put(o, ",\"output_index\":0,\"item\":");
        resp_message_item(o, r, true);
        msg_event_end(b);
        out_index++;
    }
    for (size_t i = 0; i < r->ncalls; i++, out_index++) {
        resp_event(b, "response.output_item.added", &seq);
        put(o, ",\"output_index\":");
        put_int(o, (long long)out_index);
        put(o, ",\"item\":");
        resp_call_item(o, r, i, false);
        msg_event_end(b);
        FOR_PIECES(r->args[i].data, r->args[i].len, r->piece, at, n) {
            resp_event(b, "response.function_call_arguments.delta", &seq);
            put(o, ",\"item_id\":\"fc_stub_");
            put_int(o, (long long)i);
            put(o, "\",\"output_index\":");
            put_int(o, (long long)out_index);
            put(o, ",\"delta\":");
            put_str(o, r->args[i].data + at, n);
            msg_event_end(b);
        }
        resp_event(b, "response.function_call_arguments.done", &seq);
        put(o, ",\"item_id\":\"fc_stub_");
        put_int(o, (long long)i);
        put(o, "\",\"output_index\":");
        put_int(o, (long long)out_index);
        put(o, ",\"arguments\":");
        put_str(o, r->args[i].data, r->args[i].len);
        msg_event_end(b);
        resp_event(b, "response.output_item.done", &seq);
        put(o, ",\"output_index\":");
        put_int(o, (long long)out_index);
        put(o, ",\"item\":");
        resp_call_item(o, r, i, true);
        msg_event_end(b);
    }
    resp_event(b, "response.completed", &seq);
    put(o, ",\"response\":");
    resp_object(o, r, r->stop ? r->stop : "completed");
    msg_event_end(b);
}

/* ---- entry points ---------------------------------------------------------------------- */

int stub_reply_body(stub_api api, const aw_json_value *line, const char *model, bool stream, stub_body *out,
                    char *err, size_t errn)
{
    reply r;
    if (reply_read(&r, line, model, err, errn)) {
        reply_free(&r);
        return -1;
    }
    switch (api) {
    case STUB_OPENAI_CHAT:
        stream ? chat_stream(out, &r) : chat_whole(out, &r);
        break;
    case STUB_ANTHROPIC_MESSAGES:
        stream ? msg_stream(out, &r) : msg_whole(out, &r);
        break;
    case STUB_OPENAI_RESPONSES:
        if (stream)
            resp_stream(out, &r);
        else
            resp_object(&out->bytes, &r, r.stop ? r.stop : "completed");
        break;
    default:
        snprintf(err, errn, "no reply format for this endpoint");
        reply_free(&r);
        return -1;
    }
    reply_free(&r);
    return 0;
}

static const char *default_error_type(stub_api api, int status)
{
    if (api == STUB_ANTHROPIC_MESSAGES) {
        switch (status) {
        case 400: return "invalid_request_error";
        case 401: return "authentication_error";
        case 403: return "permission_error";
        case 404: return "not_found_error";
        case 429: return "rate_limit_error";
        case 529: return "overloaded_error";
        default: return "api_error";
        }
    }
    switch (status) {
    case 401: return "invalid_request_error";
    case 429: return "rate_limit_exceeded";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

int stub_error_body(stub_api api, int status, const aw_json_value *line, aw_buf *out)
{
    const aw_json_value *e = aw_json_get(line, "error");
    size_t ml, tl;
    const char *msg = str_or(e, "message", "stub error", &ml);
    if (aw_json_is_string(e)) {
        msg = e->u.str.ptr;
        ml = e->u.str.len;
    }
    const char *type = str_or(e, "type", default_error_type(api, status), &tl);
    if (api == STUB_ANTHROPIC_MESSAGES) {
        put(out, "{\"type\":\"error\",\"error\":{\"type\":");
        put_str(out, type, tl);
        put(out, ",\"message\":");
        put_str(out, msg, ml);
        put(out, "}}");
    } else {
        put(out, "{\"error\":{\"message\":");
        put_str(out, msg, ml);
        put(out, ",\"type\":");
        put_str(out, type, tl);
        put(out, ",\"param\":null,\"code\":null}}");
    }
    return 0;
}
