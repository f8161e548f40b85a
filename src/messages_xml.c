/* The normalized message list -> <thread> XML, the reference's
 * messagesToXml layout (seed 002): iteration="0" on every event, ids
 * counting only the lines written, call_id linking tool_input and
 * tool_output. */
#include <string.h>

#include "agentwire/xml.h"
#include "internal/errors.h"
#include "internal/messages.h"
#include "internal/strmap.h"
#include "internal/utf8.h"

#define PUT(out, lit) aw_buf_append((out), (lit), sizeof(lit) - 1)

static const aw_text unknown_name = {"unknown", 7};

/* The UTF-8 length of a JavaScript whitespace or line terminator at p
 * (what String.prototype.trimStart removes), or 0. */
static size_t js_space(const unsigned char *p, size_t n) {
    if (p[0] == ' ' || (p[0] >= 0x09 && p[0] <= 0x0D)) return 1;
    if (n >= 2 && p[0] == 0xC2 && p[1] == 0xA0) return 2; /* U+00A0 */
    if (n < 3) return 0;
    unsigned cp = ((unsigned)(p[0] & 0x0F) << 12) | ((unsigned)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    if ((p[0] & 0xF0) != 0xE0 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
        cp == 0x205F || cp == 0x3000 || cp == 0xFEFF)
        return 3;
    return 0;
}

bool aw__msg_is_thread(aw_text text, size_t *start) {
    const unsigned char *p = (const unsigned char *)text.ptr;
    size_t i = 0, k;
    while (i < text.len && (k = js_space(p + i, text.len - i))) i += k;
    if (text.len - i < 8 || memcmp(p + i, "<thread>", 8) != 0) return false;
    if (start) *start = i;
    return true;
}

/* "\n  <event type="TYPE" id="N"" */
static int open_event(aw_buf *out, const char *type, size_t id) {
    int rc = PUT(out, "\n  <event type=\"");
    rc |= aw_buf_append_str(out, type);
    rc |= aw_buf_printf(out, "\" id=\"%zu\"", id);
    return rc;
}

static int attr(aw_buf *out, const char *open, size_t open_len, aw_text v) {
    int rc = aw_buf_append(out, open, open_len);
    rc |= aw_xml_escape(out, v.ptr ? v.ptr : "", v.len, 0);
    rc |= aw_buf_putc(out, '"');
    return rc;
}

#define ATTR(out, name, v) attr((out), " " name "=\"", sizeof(name) + 2, (v))

static int body(aw_buf *out, const char *s, size_t n, unsigned flags) {
    int rc = aw_buf_putc(out, '>');
    rc |= aw_xml_escape(out, s, n, flags);
    rc |= PUT(out, "</event>");
    return rc;
}

static int plain_line(aw__msg_xml *w, const char *type, aw_text text) {
    int rc = open_event(w->out, type, w->id++);
    rc |= PUT(w->out, " iteration=\"0\"");
    rc |= body(w->out, text.ptr, text.len, w->flags);
    return rc ? AW_ENOMEM : 0;
}

static int tool_input(aw__msg_xml *w, const aw__msg_call *c) {
    aw_buf_clear(&w->scratch);
    if (aw__msg_write_args(c, w->opts->alloc, &w->scratch, NULL)) return AW_ENOMEM;
    int rc = open_event(w->out, "tool_input", w->id++);
    rc |= ATTR(w->out, "name", c->name);
    rc |= ATTR(w->out, "call_id", c->id);
    rc |= PUT(w->out, " iteration=\"0\"");
    rc |= body(w->out, w->scratch.data ? w->scratch.data : "", w->scratch.len, w->flags);
    return rc ? AW_ENOMEM : 0;
}

/* A failed result says so: status="error" (the reference writes "success"
 * for every result, so a model reads a failure as a success). */
static int tool_output(aw__msg_xml *w, const aw__msg *m) {
    aw_text name = unknown_name;
    if (m->tool_name.ptr) name = m->tool_name;
    else if (m->call_id.len) aw__strmap_get(&w->names, m->call_id, &name);
    int rc = open_event(w->out, "tool_output", w->id++);
    rc |= ATTR(w->out, "name", name);
    rc |= ATTR(w->out, "call_id", m->call_id);
    rc |= m->failed ? PUT(w->out, " status=\"error\" iteration=\"0\"") : PUT(w->out, " status=\"success\" iteration=\"0\"");
    rc |= body(w->out, m->text.ptr, m->text.len, w->flags);
    return rc ? AW_ENOMEM : 0;
}

static int write_message(aw__msg_xml *w, const aw__msg_list *l, const aw__msg *m, aw_error *err) {
    int rc = 0;
    size_t start;
    switch (m->role) {
    case AW__MSG_SYSTEM: rc = plain_line(w, "system", m->text); break;
    case AW__MSG_USER:
        /* a thread serialized earlier, among other messages: its events
         * join this thread instead of being escaped into one line */
        if (aw__msg_is_thread(m->text, &start)) {
            size_t len = w->out->len, id = w->id;
            rc = aw__msg_splice(m, start, w->opts, &w->id, w->out, err);
            if (rc == 0 || rc == AW_ENOMEM) return rc;
            /* text that only starts like a thread (users type "<thread>"):
             * a human line, as the reference writes every message */
            w->out->len = len;
            w->out->data[len] = '\0';
            w->id = id;
        }
        rc = plain_line(w, "human", m->text);
        break;
    case AW__MSG_ASSISTANT:
        if (m->text.len) rc = plain_line(w, "ai", m->text);
        for (size_t k = 0; k < m->ncalls && !rc; k++) rc = tool_input(w, &l->calls[m->first_call + k]);
        break;
    case AW__MSG_TOOL: rc = tool_output(w, m); break;
    }
    if (rc) return aw__error_set(err, rc, "%s", aw_strerror(rc));
    return 0;
}

void aw__msg_xml_init(aw__msg_xml *w, const aw_messages_options *opts, aw_buf *out) {
    memset(w, 0, sizeof *w);
    w->opts = opts;
    w->flags = opts->strip_ansi ? AW_XML_STRIP_ANSI : 0;
    w->out = out;
    aw__strmap_init(&w->names, opts->alloc);
    aw__arena_init(&w->keep, opts->alloc);
    aw_buf_init(&w->scratch, opts->alloc);
}

void aw__msg_xml_free(aw__msg_xml *w) {
    aw__strmap_free(&w->names);
    aw__arena_free(&w->keep);
    aw_buf_free(&w->scratch);
}

static int keep(aw__msg_xml *w, aw_text *t) {
    char *p = aw__arena_alloc(&w->keep, t->len ? t->len : 1);
    if (!p) return AW_ENOMEM;
    memcpy(p, t->ptr, t->len);
    t->ptr = p;
    return 0;
}

int aw__msg_xml_names(aw__msg_xml *w, const aw__msg_list *l, bool copy) {
    /* a result may come before its call, and a later call with the same id
     * wins, as with the reference's Map; calls without an id (or with "")
     * are not in it, as `if (tc.id)` skips them */
    for (size_t i = 0; i < l->ncalls; i++) {
        aw_text id = l->calls[i].id, name = l->calls[i].name;
        if (!id.len) continue;
        if (copy && (keep(w, &id) || keep(w, &name))) return AW_ENOMEM;
        if (aw__strmap_set(&w->names, id, name)) return AW_ENOMEM;
    }
    return 0;
}

int aw__msg_xml_lines(aw__msg_xml *w, const aw__msg_list *l, aw_error *err) {
    int rc = 0;
    for (size_t i = 0; i < l->count && !rc; i++) rc = write_message(w, l, &l->items[i], err);
    return rc;
}

int aw__msg_write_xml(const aw__msg_list *l, const aw_messages_options *opts, aw_buf *out,
                      aw_error *err) {
    /* the reference's pass-through: one user message that already is a
     * thread (the agent's xml context mode) goes out unchanged */
    if (l->count == 1 && l->items[0].role == AW__MSG_USER && aw__msg_is_thread(l->items[0].text, NULL)) {
        /* unchanged but for what is not UTF-8: a lone "\ud800" in the JSON
         * is one U+FFFD, as the escaper writes it everywhere else */
        if (aw__utf8_scrub(out, l->items[0].text.ptr, l->items[0].text.len, 1))
            return aw__error_set(err, AW_ENOMEM, "out of memory");
        return 0;
    }
    aw__msg_xml w;
    aw__msg_xml_init(&w, opts, out);
    int rc = aw__msg_xml_names(&w, l, false);
    if (rc || PUT(out, "<thread>")) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) rc = aw__msg_xml_lines(&w, l, err);
    if (!rc && PUT(out, "\n</thread>")) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    aw__msg_xml_free(&w);
    return rc;
}
