/* The append-only thread writer: the document in the caller's buffer is
 * always complete; adding an event cuts the closing tail, writes one line,
 * and puts the tail back, so each append costs what the event costs. */
#include <string.h>

#include "internal/arena.h"
#include "internal/errors.h"
#include "internal/strmap.h"
#include "internal/thread.h"

struct aw_thread_writer {
    aw_thread_options opts;
    const aw_allocator *alloc;
    aw_arena arena;    /* copies of ids and names: events may not outlive append */
    aw_strmap names;
    aw_buf scratch;
    aw_buf tail;       /* "\n</thread>" plus the prefill */
    size_t count;
    int started;
};

aw_thread_writer *aw_thread_writer_new(const aw_thread_options *opts) {
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    aw_thread_writer *w = aw_malloc(alloc, sizeof *w);
    if (!w) return NULL;
    memset(w, 0, sizeof *w);
    if (opts) w->opts = *opts;
    w->alloc = alloc;
    aw__arena_init(&w->arena, alloc);
    aw__strmap_init(&w->names, alloc);
    aw_buf_init(&w->scratch, alloc);
    aw_buf_init(&w->tail, alloc);
    int rc = aw_buf_append(&w->tail, "\n</thread>", 10);
    if (!rc && w->opts.prefill && w->opts.prefill_len) {
        rc = aw_buf_putc(&w->tail, '\n');
        if (!rc) rc = aw_buf_append(&w->tail, w->opts.prefill, w->opts.prefill_len);
    }
    w->opts.prefill = NULL; /* the tail holds our own copy */
    if (rc) {
        aw_thread_writer_free(w);
        return NULL;
    }
    return w;
}

void aw_thread_writer_free(aw_thread_writer *w) {
    if (!w) return;
    aw__arena_free(&w->arena);
    aw__strmap_free(&w->names);
    aw_buf_free(&w->scratch);
    aw_buf_free(&w->tail);
    aw_free(w->alloc, w);
}

size_t aw_thread_writer_count(const aw_thread_writer *w) { return w ? w->count : 0; }

int aw_thread_writer_start(aw_thread_writer *w, aw_buf *out) {
    if (!w || !out) return AW_EINVAL;
    size_t start = out->len;
    if (aw_buf_append(out, "<thread>", 8) || aw_buf_append(out, w->tail.data, w->tail.len)) {
        out->len = start;
        if (out->data) out->data[start] = '\0';
        return AW_ENOMEM;
    }
    w->started = 1;
    return 0;
}

static int remember(aw_thread_writer *w, aw_text id, aw_text name) {
    char *k = aw__arena_alloc(&w->arena, id.len + name.len + 1);
    if (!k) return AW_ENOMEM;
    memcpy(k, id.ptr, id.len);
    memcpy(k + id.len, name.ptr, name.len);
    aw_text key = {k, id.len}, val = {k + id.len, name.len};
    return aw__strmap_set(&w->names, key, val);
}

int aw_thread_writer_append(aw_thread_writer *w, const aw_event *ev, aw_buf *out, aw_error *err) {
    if (!w || !ev || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!w->started || out->len < w->tail.len ||
        memcmp(out->data + out->len - w->tail.len, w->tail.data, w->tail.len) != 0)
        return aw__error_set(err, AW_EINVAL, "the buffer does not end with the thread this writer started");
    size_t id = w->count;
    if (!aw__thread_is_written(ev->kind)) {
        w->count++;
        return 0;
    }
    if (ev->kind == AW_EVENT_TOOL_CALL && remember(w, ev->tool_call_id, ev->tool_name))
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    aw_text name = {"unknown", 7};
    if (ev->kind == AW_EVENT_TOOL_RESULT) aw__strmap_get(&w->names, ev->tool_call_id, &name);
    size_t cut = out->len - w->tail.len;
    out->len = cut;
    int rc = aw_buf_append(out, "\n  ", 3);
    if (!rc) rc = aw__thread_event(ev, id, name, &w->opts, out, &w->scratch);
    if (rc) out->len = cut; /* put the document back as it was */
    int rc2 = aw_buf_append(out, w->tail.data, w->tail.len); /* fits: it was there before */
    if (rc || rc2) return aw__error_set(err, AW_ENOMEM, "out of memory");
    w->count++;
    return 0;
}
