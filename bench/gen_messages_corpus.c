#define _POSIX_C_SOURCE 200809L /* getline */
/* gen_messages_corpus: a large OpenAI-shape chat history for the messages
 * benchmark (bench/run_messages.sh), made from a thread corpus of
 * bench/gen_thread_corpus.c, so both benchmarks measure the same content:
 *
 *   gen_messages_corpus EVENTS.jsonl OUT.json
 *
 * Each agent event becomes what a chat-completions client would have sent:
 * a user or system message its {role, content}; an assistant message an
 * assistant message, which the tool calls right after it join as
 * "tool_calls" [{"id", "type": "function", "function": {"name",
 * "arguments": JSON text}}] (calls with no assistant text before them get
 * one with content null); a tool result a {"role": "tool", "tool_call_id",
 * "content"} message whose content is the result's text (JSON text when the
 * result is a JSON value). Events the chat shape has no place for (errors,
 * approvals, plans, completions, summaries) are left out. The output is one
 * JSON array, one message per line. With the escape-dense thread corpus
 * this is a coding agent's history: JSON arguments holding source code,
 * JSON, HTML, diffs and shell output as tool results, prose between. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

typedef struct conv {
    FILE *out;
    aw_json_doc *msg;      /* the message being built, not yet written */
    aw_json_value *calls;  /* its tool_calls, when it is an assistant message */
    size_t written;
    aw_buf line;
} conv;

static void die(const char *what) {
    fprintf(stderr, "gen_messages_corpus: %s\n", what);
    exit(1);
}

static void flush(conv *c) {
    if (!c->msg) return;
    aw_buf_clear(&c->line);
    if (aw_json_write(aw_json_doc_root(c->msg), NULL, &c->line, NULL)) die("out of memory");
    fputs(c->written++ ? ",\n" : "[\n", c->out);
    fwrite(c->line.data, 1, c->line.len, c->out);
    aw_json_doc_free(c->msg);
    c->msg = NULL;
    c->calls = NULL;
}

static aw_json_value *start(conv *c, const char *role) {
    flush(c);
    c->msg = aw_json_doc_new(NULL);
    aw_json_value *o = c->msg ? aw_json_new_object(c->msg) : NULL;
    if (!o || aw_json_object_set_string(c->msg, o, "role", role, strlen(role))) die("out of memory");
    aw_json_doc_set_root(c->msg, o);
    return o;
}

static const aw_json_value *get(const aw_json_value *ev, const char *key) { return aw_json_get(ev, key); }

/* The value as text: a string itself, anything else its compact JSON. */
static void text_of(const aw_json_value *v, aw_buf *b) {
    aw_buf_clear(b);
    if (aw_json_is_string(v)) aw_buf_append(b, v->u.str.ptr, v->u.str.len);
    else if (v) aw_json_write(v, NULL, b, NULL);
    aw_buf_putc(b, '\0');
    b->len--;
}

static void event(conv *c, const aw_json_value *ev, aw_buf *tmp) {
    const aw_json_value *type = get(ev, "type");
    if (!aw_json_is_string(type)) return;
    const char *t = type->u.str.ptr;
    if (!strcmp(t, "message")) {
        const aw_json_value *role = get(ev, "role");
        aw_json_value *o = start(c, aw_json_is_string(role) ? role->u.str.ptr : "user");
        text_of(get(ev, "content"), tmp);
        if (aw_json_object_set_string(c->msg, o, "content", tmp->data, tmp->len)) die("out of memory");
    } else if (!strcmp(t, "tool_call")) {
        if (!c->msg || !c->calls) {
            const aw_json_value *role = c->msg ? get(aw_json_doc_root(c->msg), "role") : NULL;
            bool assistant = aw_json_is_string(role) && !strcmp(role->u.str.ptr, "assistant");
            aw_json_value *o = assistant ? (aw_json_value *)aw_json_doc_root(c->msg) : start(c, "assistant");
            if (!assistant && aw_json_object_set(c->msg, o, "content", 7, aw_json_new_null(c->msg))) die("out of memory");
            if (aw_json_object_set(c->msg, o, "tool_calls", 10, aw_json_new_array(c->msg))) die("out of memory");
            c->calls = (aw_json_value *)get(o, "tool_calls");
        }
        aw_json_value *call = aw_json_new_object(c->msg), *fn = aw_json_new_object(c->msg);
        text_of(get(ev, "toolCallId"), tmp);
        if (!call || !fn || aw_json_object_set_string(c->msg, call, "id", tmp->data, tmp->len) ||
            aw_json_object_set_string(c->msg, call, "type", "function", 8))
            die("out of memory");
        text_of(get(ev, "toolName"), tmp);
        if (aw_json_object_set_string(c->msg, fn, "name", tmp->data, tmp->len)) die("out of memory");
        aw_buf_clear(tmp);
        if (aw_json_write(get(ev, "args"), NULL, tmp, NULL) ||
            aw_json_object_set_string(c->msg, fn, "arguments", tmp->data, tmp->len) ||
            aw_json_object_set(c->msg, call, "function", 8, fn) || aw_json_array_push(c->msg, c->calls, call))
            die("out of memory");
        /* the builder copies values: find the array again for the next call */
        c->calls = (aw_json_value *)get(aw_json_doc_root(c->msg), "tool_calls");
    } else if (!strcmp(t, "tool_result")) {
        aw_json_value *o = start(c, "tool");
        text_of(get(ev, "toolCallId"), tmp);
        if (aw_json_object_set_string(c->msg, o, "tool_call_id", tmp->data, tmp->len)) die("out of memory");
        text_of(get(ev, "result"), tmp);
        if (aw_json_object_set_string(c->msg, o, "content", tmp->data, tmp->len)) die("out of memory");
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: gen_messages_corpus EVENTS.jsonl OUT.json\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    conv c = {fopen(argv[2], "wb"), NULL, NULL, 0, {0}};
    if (!in || !c.out) die("cannot open the files");
    aw_buf_init(&c.line, NULL);
    aw_buf tmp;
    aw_buf_init(&tmp, NULL);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, in)) > 0) {
        aw_json_doc *doc = NULL;
        if (aw_json_parse(line, (size_t)n, NULL, &doc, NULL)) die("a line of the thread corpus is not JSON");
        event(&c, aw_json_doc_root(doc), &tmp);
        aw_json_doc_free(doc);
    }
    flush(&c);
    fputs(c.written ? "\n]\n" : "[]\n", c.out);
    printf("messages %zu\n", c.written);
    free(line);
    aw_buf_free(&tmp);
    aw_buf_free(&c.line);
    fclose(in);
    return fclose(c.out) ? 1 : 0;
}
