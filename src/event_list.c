/* Reading a whole list of events: JSON lines or one JSON array.
 *
 * Every JSON line is parsed into one shared arena, so a million events cost
 * a few large blocks, not a million documents. */
#include <string.h>

#include "agentwire/event.h"
#include "internal/errors.h"
#include "internal/event.h"
#include "internal/json.h"
#include "internal/utf8.h"

struct aw_event_list {
    const aw_allocator *alloc;
    aw_arena arena;
    const char *copy; /* the array form: the parser's copy of the text */
    aw_event *items;
    size_t count, cap;
};

aw_event_list *aw_event_list_new(const aw_allocator *alloc) {
    aw_event_list *l = aw_malloc(alloc, sizeof *l);
    if (!l) return NULL;
    memset(l, 0, sizeof *l);
    l->alloc = alloc;
    aw__arena_init(&l->arena, alloc);
    return l;
}

void aw_event_list_free(aw_event_list *l) {
    if (!l) return;
    aw__arena_free(&l->arena);
    aw_free(l->alloc, l->items);
    aw_free(l->alloc, l);
}

int aw_event_list_add(aw_event_list *l, const aw_event *ev) {
    if (!l || !ev) return AW_EINVAL;
    if (l->count == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        aw_event *items = aw_realloc(l->alloc, l->items, cap * sizeof *items);
        if (!items) return AW_ENOMEM;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->count++] = *ev;
    return 0;
}

size_t aw_event_list_count(const aw_event_list *l) { return l ? l->count : 0; }
const aw_event *aw_event_list_items(const aw_event_list *l) { return l ? l->items : NULL; }

/* An event from the array form. Its errors name the event's index (from
 * 0, as the array's) and its place in text: the key named, or for a
 * missing field the event's first key. */
static int add_item(aw_event_list *l, const aw__json_parser *ps, const char *text, size_t len,
                    const aw_json_value *v, size_t index, aw_error *err) {
    aw_event ev;
    aw_error e;
    const char *key;
    int rc = aw__event_check(v, &ev, &e, &key);
    if (rc) {
        aw__error_set(err, rc, "event %zu: %s", index, e.message);
        if (!key && v->type == AW_JSON_OBJECT && v->u.obj.count) key = v->u.obj.members[0].key;
        if (key) aw__error_locate(err, text, len, (size_t)(key - ps->copy) - 1);
        return rc;
    }
    rc = aw_event_list_add(l, &ev);
    if (rc) aw__error_set(err, rc, "out of memory");
    return rc;
}

/* The array is parsed into the list's arena, with a parser of our own so
 * that errors found after the parse can name their place in text. */
static int parse_array(aw_event_list *l, const char *text, size_t len,
                       const aw_json_read_options *opts, aw_error *err) {
    aw__json_parser ps;
    aw__json_parser_init(&ps, opts);
    aw_json_value *root = aw__arena_alloc(&l->arena, sizeof *root);
    int rc = root ? aw__json_parse_with(&ps, &l->arena, text, len, root, err)
                  : aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc && root->type != AW_JSON_ARRAY) rc = aw__error_set(err, AW_ETYPE, "expected an array of events");
    for (size_t i = 0; !rc && i < root->u.arr.count; i++)
        rc = add_item(l, &ps, text, len, &root->u.arr.items[i], i, err);
    l->copy = ps.copy;
    aw__json_parser_free(&ps);
    return rc;
}

/* ---- JSON lines ---------------------------------------------------------- */

int aw__event_input_is_array(const char *text, size_t len, const aw_json_read_options *opts) {
    size_t i = 0;
    /* the BOM the reader will skip must not hide the '[' of the array form */
    if (opts && opts->allow_bom && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    return i < len && text[i] == '[';
}

void aw__event_lines_init(aw__event_lines *r, const char *text, size_t len, const aw_json_read_options *opts) {
    aw__json_parser_init(&r->parser, opts);
    r->text = text;
    r->len = len;
    r->pos = 0;
    r->line = 0;
}

void aw__event_lines_free(aw__event_lines *r) { aw__json_parser_free(&r->parser); }

/* Offset in a parsed text of the problem in an event read from it: the
 * opening quote of the key named (copy: the parser's copy of the text), or
 * the first non-blank byte, where the event's object starts. */
static size_t event_problem_offset(const char *copy, const char *text, size_t n, const char *key) {
    if (key) return (size_t)(key - copy) - 1;
    size_t k = 0;
    while (k < n && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n')) k++;
    return k;
}

void aw__event_lines_locate(const aw__event_lines *r, const char *p, aw_error *err) {
    if (!err) return;
    size_t off = (size_t)(p - r->parser.copy);
    if (off > r->line_len) off = r->line_len;
    err->offset = r->line_start + off;
    err->line = r->line;
    err->column = aw__utf8_count(r->text + r->line_start, off) + 1;
}

void aw__event_list_locate(const aw_event_list *l, const char *text, size_t len, const char *p, aw_error *err) {
    if (l->copy) aw__error_locate(err, text, len, (size_t)(p - l->copy));
}

int aw__event_lines_read(aw__event_lines *r, aw_arena *arena, size_t start, size_t n, aw_event *ev, aw_error *err) {
    r->line_start = start;
    r->line_len = n;
    aw_json_value *root = aw__arena_alloc(arena, sizeof *root);
    if (!root) return aw__error_set(err, AW_ENOMEM, "out of memory");
    int rc = aw__json_parse_with(&r->parser, arena, r->text + start, n, root, err);
    if (rc) {
        if (err && rc != AW_ENOMEM) {
            err->line = r->line;
            err->offset += start;
        }
        return rc;
    }
    aw_error e;
    const char *key;
    rc = aw__event_check(root, ev, &e, &key);
    if (rc) {
        /* the place travels in err's position; the message stays plain */
        aw__error_set(err, rc, "%s", e.message);
        aw__event_lines_locate(r, r->parser.copy + event_problem_offset(r->parser.copy, r->text + start, n, key), err);
    }
    return rc;
}

int aw__event_lines_next(aw__event_lines *r, aw_arena *arena, aw_event *ev, aw_error *err) {
    const char *text = r->text;
    while (r->pos < r->len) {
        size_t pos = r->pos;
        const char *nl = memchr(text + pos, '\n', r->len - pos);
        size_t end = nl ? (size_t)(nl - text) : r->len;
        size_t n = end - pos;
        r->line++;
        r->pos = end + 1;
        if (n && text[pos + n - 1] == '\r') n--;
        size_t k = 0;
        while (k < n && (text[pos + k] == ' ' || text[pos + k] == '\t' || text[pos + k] == '\r')) k++;
        if (k == n) continue; /* blank */
        int rc = aw__event_lines_read(r, arena, pos, n, ev, err);
        return rc ? rc : 1;
    }
    return 0;
}

/* Every line goes into the list's one arena: the events point into it. */
static int parse_lines(aw_event_list *l, const char *text, size_t len,
                       const aw_json_read_options *opts, aw_error *err) {
    aw__event_lines r;
    aw__event_lines_init(&r, text, len, opts);
    aw_event ev;
    int rc;
    while ((rc = aw__event_lines_next(&r, &l->arena, &ev, err)) == 1) {
        rc = aw_event_list_add(l, &ev);
        if (rc) {
            aw__error_set(err, rc, "out of memory");
            break;
        }
    }
    aw__event_lines_free(&r);
    return rc;
}

int aw_event_list_parse(const char *text, size_t len, const aw_json_read_options *opts,
                        aw_event_list **out, aw_error *err) {
    if (!out || (!text && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    aw_event_list *l = aw_event_list_new(opts ? opts->alloc : NULL);
    if (!l) return aw__error_set(err, AW_ENOMEM, "out of memory");
    int rc = aw__event_input_is_array(text, len, opts) ? parse_array(l, text, len, opts, err)
                                                       : parse_lines(l, text, len, opts, err);
    if (rc) {
        aw_event_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
}
