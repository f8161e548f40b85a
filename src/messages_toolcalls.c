/* Tool calls written in text, as the reference's parseToolCalls reads
 * them from a model's answer: fenced ```json blocks holding
 * {"tool_calls": [...]}.
 *
 * Fences are found line by line, as Markdown (CommonMark) finds them: a
 * line of three or more backticks (after any indentation) and an info
 * string opens a block, which a line of at least as many backticks and
 * nothing else closes. Only blocks whose info string is exactly "json" are
 * read; the others are skipped whole, so a ```json line inside a ```markdown
 * block is text, not a call. An opening fence that is never closed runs to
 * the end of the text, as in Markdown. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agentwire/messages.h"
#include "internal/errors.h"
#include "internal/strmap.h"
#include "internal/utf8.h"

typedef struct tc_parser {
    const char *text;
    size_t len;
    const aw_allocator *alloc;
    aw_json_doc *doc;
    aw_json_value *calls;  /* root members are set at the end: the builder */
    aw_json_value *errors; /* copies values, so these must be complete first */
    aw_strmap seen;        /* ids kept so far (keys in doc) */
    size_t kept;           /* calls kept so far */
    aw_buf visible;
    size_t copied;         /* text[0..copied) is already in visible */
} tc_parser;

static int blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

/* The line at pos: [pos, *end) without its '\n'; returns the next line's start. */
static size_t line_at(const tc_parser *p, size_t pos, size_t *end) {
    const char *nl = memchr(p->text + pos, '\n', p->len - pos);
    *end = nl ? (size_t)(nl - p->text) : p->len;
    return nl ? *end + 1 : p->len;
}

/* A fence line: the length of its backtick run (0 when the line is not a
 * fence), *tick the run's offset and [*info, *info_end) its info string
 * with blanks trimmed. An info string holding a backtick makes it no fence
 * (that is inline code), as in CommonMark. */
static size_t fence(const tc_parser *p, size_t pos, size_t end, size_t *tick, size_t *info,
                    size_t *info_end) {
    const char *s = p->text;
    while (pos < end && (s[pos] == ' ' || s[pos] == '\t')) pos++;
    size_t run = 0;
    while (pos + run < end && s[pos + run] == '`') run++;
    if (run < 3) return 0;
    *tick = pos;
    size_t i = pos + run, j = end;
    while (i < j && blank(s[i])) i++;
    while (j > i && blank(s[j - 1])) j--;
    if (memchr(s + i, '`', j - i)) return 0;
    *info = i;
    *info_end = j;
    return run;
}

/* The start of the line closing a fence of `run` backticks, searching from
 * pos; *after gets the start of the line after it. p->len when none. */
static size_t find_close(const tc_parser *p, size_t pos, size_t run, size_t *after) {
    while (pos < p->len) {
        size_t end, next = line_at(p, pos, &end), tick, info, info_end;
        size_t n = fence(p, pos, end, &tick, &info, &info_end);
        if (n >= run && info == info_end) {
            *after = next;
            return pos;
        }
        pos = next;
    }
    return p->len;
}

static int add_error(tc_parser *p, size_t offset, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int add_error(tc_parser *p, size_t offset, const char *fmt, ...) {
    char msg[AW_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw_error at;
    aw__error_locate(&at, p->text, p->len, offset);
    aw_json_value *e = aw_json_new_object(p->doc);
    if (!e) return AW_ENOMEM;
    int rc = aw_json_object_set_int(p->doc, e, "offset", (int64_t)at.offset);
    if (!rc) rc = aw_json_object_set_int(p->doc, e, "line", (int64_t)at.line);
    if (!rc) rc = aw_json_object_set_int(p->doc, e, "column", (int64_t)at.column);
    if (!rc) rc = aw_json_object_set_string(p->doc, e, "message", msg, strlen(msg));
    if (!rc) rc = aw_json_array_push(p->doc, p->errors, e);
    return rc;
}

/* One entry of a tool_calls array: kept, dropped as a duplicate, or
 * reported (at the block's fence, `at`). */
static int add_call(tc_parser *p, const aw_json_value *entry, size_t i, size_t base, size_t at) {
    if (!aw_json_is_object(entry)) return add_error(p, at, "tool_calls[%zu] must be an object", i);
    const aw_json_value *name = aw_json_get(entry, "name");
    /* "arguments" (the OpenAI spelling) is read when "args" is absent */
    const char *args_key = aw_json_get(entry, "args") || !aw_json_get(entry, "arguments") ? "args" : "arguments";
    const aw_json_value *args = aw_json_get(entry, args_key);
    const aw_json_value *id = aw_json_get(entry, "id");
    if (!name) return add_error(p, at, "tool_calls[%zu]: 'name' is missing", i);
    if (!aw_json_is_string(name)) return add_error(p, at, "tool_calls[%zu]: 'name' must be a string", i);
    if (args && !aw_json_is_null(args) && !aw_json_is_object(args))
        return add_error(p, at, "tool_calls[%zu]: '%s' must be an object", i, args_key);
    if (id && !aw_json_is_null(id) && !aw_json_is_string(id))
        return add_error(p, at, "tool_calls[%zu]: 'id' must be a string", i);

    aw_json_value *idv;
    if (aw_json_is_string(id)) {
        idv = aw_json_new_string(p->doc, id->u.str.ptr, id->u.str.len);
    } else { /* the reference's numbering: calls kept before this block + position in it */
        char made[40];
        int n = snprintf(made, sizeof made, "call_%zu", base + i);
        idv = aw_json_new_string(p->doc, made, (size_t)n);
    }
    if (!idv) return AW_ENOMEM;
    aw_text key = {idv->u.str.ptr, idv->u.str.len}, old;
    if (aw__strmap_get(&p->seen, key, &old)) return 0; /* a later duplicate: dropped */
    if (aw__strmap_set(&p->seen, key, key)) return AW_ENOMEM;

    /* copies: the block's own document is freed after it is read */
    aw_json_value *call = aw_json_new_object(p->doc);
    aw_json_value *namev = aw_json_new_string(p->doc, name->u.str.ptr, name->u.str.len);
    aw_json_value *argv = aw_json_is_object(args) ? aw_json_copy(p->doc, args) : aw_json_new_object(p->doc);
    if (!call || !namev || !argv) return AW_ENOMEM;
    int rc = aw_json_object_set(p->doc, call, "id", 2, idv);
    if (!rc) rc = aw_json_object_set(p->doc, call, "name", 4, namev);
    if (!rc) rc = aw_json_object_set(p->doc, call, "args", 4, argv);
    if (!rc) rc = aw_json_array_push(p->doc, p->calls, call);
    if (!rc) p->kept++;
    return rc;
}

/* The block whose fence starts at `open` (backticks at `tick`), content
 * [from, to), next line after its closing fence at `after`. */
static int read_block(tc_parser *p, size_t open, size_t tick, size_t from, size_t to, size_t after) {
    aw_json_read_options ro = {p->alloc, 0, false};
    aw_json_doc *block = NULL;
    aw_error perr;
    int rc = aw_json_parse(p->text + from, to - from, &ro, &block, &perr);
    if (rc == AW_ENOMEM) return rc;
    if (rc) return add_error(p, from + perr.offset, "%s", perr.message); /* kept in the text */
    const aw_json_value *calls = aw_json_get(aw_json_doc_root(block), "tool_calls");
    if (!calls) goto done; /* some other JSON: just text */
    if (!aw_json_is_array(calls)) {
        rc = add_error(p, tick, "'tool_calls' must be an array");
        goto done;
    }
    size_t base = p->kept;
    for (size_t i = 0; i < calls->u.arr.count && !rc; i++) rc = add_call(p, &calls->u.arr.items[i], i, base, tick);
    /* a tool-call block: out of the visible text, fences and one newline */
    if (!rc) rc = aw__utf8_scrub(&p->visible, p->text + p->copied, open - p->copied, 0);
    if (!rc) p->copied = after;
done:
    aw_json_doc_free(block);
    return rc;
}

static int scan(tc_parser *p) {
    size_t pos = 0;
    while (pos < p->len) {
        size_t end, next = line_at(p, pos, &end), tick, info, info_end;
        size_t run = fence(p, pos, end, &tick, &info, &info_end);
        if (!run) {
            pos = next;
            continue;
        }
        size_t after = p->len;
        size_t close = find_close(p, next, run, &after);
        int is_json = info_end - info == 4 && memcmp(p->text + info, "json", 4) == 0;
        if (close == p->len) /* never closed: the rest is the block's */
            return is_json ? add_error(p, tick, "```json block is not closed") : 0;
        if (is_json) {
            int rc = read_block(p, pos, tick, next, close, after);
            if (rc) return rc;
        }
        pos = after;
    }
    return 0;
}

int aw_messages_parse_tool_calls(const char *text, size_t len, const aw_allocator *alloc,
                                 aw_json_doc **out, aw_error *err) {
    if (!out || (!text && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    tc_parser p;
    memset(&p, 0, sizeof p);
    p.text = text ? text : "";
    p.len = len;
    p.alloc = alloc;
    aw__strmap_init(&p.seen, alloc);
    aw_buf_init(&p.visible, alloc);
    int rc = AW_ENOMEM;
    p.doc = aw_json_doc_new(alloc);
    aw_json_value *root = NULL, *visible = NULL;
    if (p.doc) {
        p.calls = aw_json_new_array(p.doc);
        p.errors = aw_json_new_array(p.doc);
        root = aw_json_new_object(p.doc);
        rc = p.calls && p.errors && root ? scan(&p) : AW_ENOMEM;
    }
    /* the visible text is raw bytes of a reply: made valid UTF-8 here, one
     * U+FFFD per maximal subpart (slices end at line starts, never inside a
     * character) */
    if (!rc) rc = aw__utf8_scrub(&p.visible, p.text + p.copied, p.len - p.copied, 0);
    if (!rc) visible = aw_json_new_string(p.doc, p.visible.data ? p.visible.data : "", p.visible.len);
    if (!rc && !visible) rc = AW_ENOMEM;
    if (!rc) rc = aw_json_object_set(p.doc, root, "tool_calls", 10, p.calls);
    if (!rc) rc = aw_json_object_set(p.doc, root, "text", 4, visible);
    if (!rc) rc = aw_json_object_set(p.doc, root, "errors", 6, p.errors);
    aw__strmap_free(&p.seen);
    aw_buf_free(&p.visible);
    if (rc) {
        aw_json_doc_free(p.doc);
        return aw__error_set(err, rc, "%s", aw_strerror(rc));
    }
    aw_json_doc_set_root(p.doc, root);
    *out = p.doc;
    return 0;
}
