/* Reading a whole list of events: JSON lines or one JSON array.
 *
 * Every JSON line is parsed into one shared arena, so a million events cost
 * a few large blocks, not a million documents. */
#include <string.h>

#include "agentwire/event.h"
#include "internal/errors.h"
#include "internal/json.h"

struct aw_event_list {
    const aw_allocator *alloc;
    aw_arena arena;
    aw_json_doc *doc; /* the array form */
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
    aw_json_doc_free(l->doc);
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

static int add_checked(aw_event_list *l, const aw_json_value *v, size_t line, size_t index,
                       aw_error *err) {
    aw_event ev;
    aw_error e;
    int rc = aw_event_from_json(v, &ev, &e);
    if (rc) {
        if (line) {
            /* the line travels in err->line; the message stays plain */
            aw__error_set(err, rc, "%s", e.message);
            if (err) err->line = line;
        } else {
            aw__error_set(err, rc, "event %zu: %s", index, e.message);
        }
        return rc;
    }
    rc = aw_event_list_add(l, &ev);
    if (rc) aw__error_set(err, rc, "out of memory");
    return rc;
}

static int parse_array(aw_event_list *l, const char *text, size_t len,
                       const aw_json_read_options *opts, aw_error *err) {
    int rc = aw_json_parse(text, len, opts, &l->doc, err);
    if (rc) return rc;
    const aw_json_value *root = aw_json_doc_root(l->doc);
    if (root->type != AW_JSON_ARRAY) return aw__error_set(err, AW_ETYPE, "expected an array of events");
    for (size_t i = 0; i < root->u.arr.count; i++)
        if ((rc = add_checked(l, &root->u.arr.items[i], 0, i, err))) return rc;
    return 0;
}

static int parse_lines(aw_event_list *l, const char *text, size_t len,
                       const aw_json_read_options *opts, aw_error *err) {
    aw__json_parser ps;
    aw__json_parser_init(&ps, opts);
    size_t line = 0, pos = 0;
    int rc = 0;
    while (pos < len && rc == 0) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len;
        size_t n = end - pos;
        line++;
        if (n && text[pos + n - 1] == '\r') n--;
        size_t k = 0;
        while (k < n && (text[pos + k] == ' ' || text[pos + k] == '\t' || text[pos + k] == '\r')) k++;
        if (k < n) {
            aw_json_value *root = aw__arena_alloc(&l->arena, sizeof *root);
            if (!root) {
                rc = aw__error_set(err, AW_ENOMEM, "out of memory");
                break;
            }
            rc = aw__json_parse_with(&ps, &l->arena, text + pos, n, root, err);
            if (rc) {
                if (err && rc != AW_ENOMEM) {
                    err->line = line;
                    err->offset += pos;
                }
                break;
            }
            rc = add_checked(l, root, line, 0, err);
        }
        pos = end + 1;
    }
    aw__json_parser_free(&ps);
    return rc;
}

int aw_event_list_parse(const char *text, size_t len, const aw_json_read_options *opts,
                        aw_event_list **out, aw_error *err) {
    if (!out || (!text && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    aw_event_list *l = aw_event_list_new(opts ? opts->alloc : NULL);
    if (!l) return aw__error_set(err, AW_ENOMEM, "out of memory");
    size_t i = 0;
    /* the BOM the reader will skip must not hide the '[' of the array form */
    if (opts && opts->allow_bom && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n')) i++;
    int rc = (i < len && text[i] == '[') ? parse_array(l, text, len, opts, err)
                                         : parse_lines(l, text, len, opts, err);
    if (rc) {
        aw_event_list_free(l);
        return rc;
    }
    *out = l;
    return 0;
}
