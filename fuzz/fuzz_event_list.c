/* Fuzz the event reader (JSON lines or a JSON array of events) and the
 * encoder behind it: every accepted list must encode, the whole encoder and
 * the append writer must agree when results follow their calls, and the
 * XML must decode. The line-by-line encoder (aw_thread_encode_json) and the
 * one that hands its output on in blocks (aw_thread_encode_json_stream,
 * which looks for the calls first) must give the same bytes, or the same
 * error, as reading the list and encoding it. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/thread.h"

static void same_error(const aw_error *a, const aw_error *b) {
    if (a->code != b->code || a->line != b->line || a->column != b->column || a->offset != b->offset ||
        strcmp(a->message, b->message) != 0)
        abort();
}

static int gather(void *ctx, const char *data, size_t n) { return aw_buf_append(ctx, data, n); }

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    aw_event_list *list = NULL;
    aw_error err, err2;
    aw_thread_options opts = {"prefill", 7, (size % 2) == 0, NULL};
    aw_buf streamed;
    aw_buf_init(&streamed, NULL);
    int streamed_rc = aw_thread_encode_json((const char *)data, size, NULL, &opts, &streamed, &err2);
    aw_buf blocks;
    aw_buf_init(&blocks, NULL);
    aw_error err3;
    aw_thread_stream_options so = {gather, &blocks, NULL, NULL};
    int blocks_rc = aw_thread_encode_json_stream((const char *)data, size, NULL, &opts, &so, &err3);
    if (aw_event_list_parse((const char *)data, size, NULL, &list, &err)) {
        if (err.code == 0 || err.message[0] == '\0') abort();
        if (streamed_rc == 0 || streamed.len != 0) abort();
        same_error(&err, &err2);
        if (blocks_rc == 0) abort();
        same_error(&err, &err3);
        aw_buf_free(&streamed);
        aw_buf_free(&blocks);
        return 0;
    }
    const aw_event *evs = aw_event_list_items(list);
    size_t n = aw_event_list_count(list);
    /* one line: where the streaming encoder's skim is sure, it reads the
     * parser's tool_call (or none) */
    aw_text id, name;
    int skim = memchr(data, '\n', size) ? -1 : aw__thread_skim_call((const char *)data, size, 0, &id, &name);
    if (skim >= 0 && n == 1) {
        if ((evs[0].kind == AW_EVENT_TOOL_CALL) != (skim == 1)) abort();
        if (skim == 1 && (id.len != evs[0].tool_call_id.len || name.len != evs[0].tool_name.len ||
                          memcmp(id.ptr, evs[0].tool_call_id.ptr, id.len) != 0 ||
                          memcmp(name.ptr, evs[0].tool_name.ptr, name.len) != 0))
            abort();
    }
    aw_buf whole;
    aw_buf_init(&whole, NULL);
    if (aw_thread_encode(evs, n, &opts, &whole, &err)) abort();
    if (streamed_rc || streamed.len != whole.len || memcmp(streamed.data, whole.data, whole.len) != 0) abort();
    if (blocks_rc || blocks.len != whole.len || memcmp(blocks.data, whole.data, whole.len) != 0) abort();
    aw_buf_free(&streamed);
    aw_buf_free(&blocks);

    aw_json_doc *decoded = NULL;
    /* the prefill follows the document; cut it off before decoding */
    if (aw_thread_decode(whole.data, whole.len - 8, NULL, &decoded, &err)) abort();
    aw_json_doc_free(decoded);

    aw_thread_writer *w = aw_thread_writer_new(&opts);
    if (!w) abort();
    aw_buf app;
    aw_buf_init(&app, NULL);
    if (aw_thread_writer_start(w, &app)) abort();
    for (size_t i = 0; i < n; i++)
        if (aw_thread_writer_append(w, &evs[i], &app, &err)) abort();
    /* equal unless some result precedes its call (documented difference) */
    int ordered = 1;
    for (size_t i = 0; i < n && ordered; i++) {
        if (evs[i].kind != AW_EVENT_TOOL_RESULT) continue;
        int seen_before = 0, seen_at_all = 0;
        for (size_t j = 0; j < n; j++)
            if (evs[j].kind == AW_EVENT_TOOL_CALL && evs[j].tool_call_id.len == evs[i].tool_call_id.len &&
                memcmp(evs[j].tool_call_id.ptr, evs[i].tool_call_id.ptr, evs[i].tool_call_id.len) == 0) {
                seen_at_all = 1;
                if (j < i) seen_before = 1;
                else ordered = 0; /* a later call with the same id renames it */
            }
        if (seen_at_all && !seen_before) ordered = 0;
    }
    if (ordered && (app.len != whole.len || memcmp(app.data, whole.data, app.len) != 0)) abort();
    aw_buf_free(&app);
    aw_thread_writer_free(w);
    aw_buf_free(&whole);
    aw_event_list_free(list);
    return 0;
}
