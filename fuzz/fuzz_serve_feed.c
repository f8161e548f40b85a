/* Fuzz the envelopes agentwire serve makes from stored rows (what a
 * database hands back, whatever was written into it) and the resume
 * points clients send. The input: a first line, an SSE id as a client's
 * Last-Event-ID ("12", "12.3", or anything); the rest, a JSON array of
 * steps as aw_store_steps gives them. The id may be refused and the JSON
 * may not parse; neither may crash or leak. Every envelope handed over
 * must be an object with a type and a payload, with ids that never go
 * back, and the cursor must only move forward. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/serve_impl.h"

typedef struct check {
    aw__serve_summary *sum;
    int64_t last_seq;
    unsigned last_part; /* 0: the whole event */
} check;

static int take(void *ctx, const char *id, const aw_json_value *env)
{
    check *c = ctx;
    if (!aw_json_is_string(aw_json_get(env, "type")) || !aw_json_is_object(aw_json_get(env, "payload")))
        abort();
    aw__serve_cursor at;
    if (aw__serve_cursor_parse(id, &at))
        abort(); /* an id the server sends, it must take back */
    int64_t seq = at.part ? at.part_seq : at.after;
    unsigned part = at.part ? at.part : 1000000;
    if (seq < c->last_seq || (seq == c->last_seq && part <= c->last_part))
        abort();
    c->last_seq = seq;
    c->last_part = part;
    return aw__serve_summary_add(c->sum, id, env);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *p = (const char *)data, *nl = memchr(p, '\n', size);
    if (!nl || (size_t)(nl - p) > 64)
        return 0;
    char id[65];
    memcpy(id, p, (size_t)(nl - p));
    id[nl - p] = 0;
    aw__serve_cursor cur = {0, 0, 0};
    aw__serve_cursor_parse(id, &cur);
    aw_json_doc *steps = NULL, *out = aw_json_doc_new(NULL);
    if (aw_json_parse(nl + 1, size - (size_t)(nl + 1 - p), NULL, &steps, NULL) || !out) {
        aw_json_doc_free(out);
        return 0;
    }
    aw__serve_summary sum;
    check c = {&sum, -1, 0};
    aw__serve_cursor before = cur;
    aw_error err;
    if (!aw__serve_summary_init(&sum, out) &&
        !aw__serve_feed(aw_json_doc_root(steps), "s", &cur, NULL, take, &c, &err) && cur.after < before.after)
        abort();
    aw__serve_accounting_summary(out, aw_json_get(aw_json_at(aw_json_doc_root(steps), 0), "accounting"));
    aw_json_doc_free(steps);
    aw_json_doc_free(out);
    return 0;
}
