/* The normalized message list -> the reference's plain prompt text
 * (messagesToPrompt): "[System]", "[User]", "[Assistant]" or "[Tool
 * Result]", a newline, the content; messages joined with "\n\n".
 *
 * The reference drops an assistant's tool calls from this form. Here they
 * follow the text as one fenced block, in the very shape
 * aw_messages_parse_tool_calls reads back:
 *
 *   ```json
 *   {"tool_calls":[{"id":"call_1","name":"read","args":{"path":"a"}}]}
 *   ```
 *
 * ("id" left out for a call without one; "args" is the JSON of the
 * arguments, or the original text as a JSON string when they are not JSON).
 * Text is written as it is, except that bytes that are not UTF-8 become
 * U+FFFD (aw__utf8_scrub: a lone surrogate is one, as in the XML form), so
 * the prompt is always valid UTF-8. */
#include <string.h>

#include "internal/errors.h"
#include "internal/messages.h"
#include "internal/utf8.h"

#define PUT(out, lit) aw_buf_append((out), (lit), sizeof(lit) - 1)

/* Text from the JSON input: a lone surrogate escape is one U+FFFD, as in
 * the XML form (aw_xml_escape); other invalid bytes one per maximal
 * subpart. */
static int put_utf8(aw_buf *out, const char *s, size_t n) { return aw__utf8_scrub(out, s, n, 1); }

static int put_calls(const aw__msg_list *l, const aw__msg *m, const aw_allocator *alloc, aw_buf *out,
                     aw_buf *scratch) {
    int rc = PUT(out, "```json\n{\"tool_calls\":[");
    for (size_t k = 0; k < m->ncalls && !rc; k++) {
        const aw__msg_call *c = &l->calls[m->first_call + k];
        if (k) rc |= aw_buf_putc(out, ',');
        rc |= aw_buf_putc(out, '{');
        if (c->id.ptr) {
            rc |= PUT(out, "\"id\":");
            rc |= aw_json_write_string(out, c->id.ptr, c->id.len);
            rc |= aw_buf_putc(out, ',');
        }
        rc |= PUT(out, "\"name\":");
        rc |= aw_json_write_string(out, c->name.ptr, c->name.len);
        rc |= PUT(out, ",\"args\":");
        if (rc) break;
        bool raw = false;
        aw_buf_clear(scratch);
        if (aw__msg_write_args(c, alloc, scratch, &raw)) return AW_ENOMEM;
        if (raw) rc |= aw_json_write_string(out, scratch->data, scratch->len);
        else rc |= aw_buf_append(out, scratch->data, scratch->len);
        rc |= aw_buf_putc(out, '}');
    }
    rc |= PUT(out, "]}\n```");
    return rc ? AW_ENOMEM : 0;
}

int aw__msg_text_blocks(const aw__msg_list *l, const aw_messages_options *opts, size_t *written, aw_buf *out,
                        aw_error *err) {
    static const char *const labels[] = {"[System]\n", "[User]\n", "[Assistant]\n", "[Tool Result]\n"};
    /* a failed result is marked, so the model does not read it as a success */
    static const char failed_label[] = "[Tool Result: error]\n";
    aw_buf scratch;
    aw_buf_init(&scratch, opts->alloc);
    int rc = 0;
    for (size_t i = 0; i < l->count && !rc; i++) {
        const aw__msg *m = &l->items[i];
        if ((*written)++) rc = PUT(out, "\n\n");
        if (!rc) rc = aw_buf_append_str(out, m->role == AW__MSG_TOOL && m->failed ? failed_label : labels[m->role]);
        if (!rc) rc = put_utf8(out, m->text.ptr, m->text.len);
        if (!rc && m->ncalls) {
            if (m->text.len) rc = aw_buf_putc(out, '\n');
            if (!rc) rc = put_calls(l, m, opts->alloc, out, &scratch);
        }
    }
    aw_buf_free(&scratch);
    if (rc) return aw__error_set(err, AW_ENOMEM, "out of memory");
    return 0;
}

int aw__msg_write_text(const aw__msg_list *l, const aw_messages_options *opts, aw_buf *out,
                       aw_error *err) {
    size_t written = 0;
    return aw__msg_text_blocks(l, opts, &written, out, err);
}
