/* YAML text -> a tree of positioned nodes (internal/yaml_tree.h), from
 * libyaml's events, without recursion. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "internal/rt_util.h"
#include "internal/yaml_tree.h"

#define DEFAULT_MAX_DEPTH 64
#define DEFAULT_MAX_NODES 100000

/* A collection being read: its node and the children so far. */
typedef struct frame {
    aw_yaml_node *node;
    aw_yaml_node **kids;
    size_t nkids, cap;
} frame;

typedef struct reader {
    const char *text;
    size_t len;
    const aw_allocator *alloc;
    aw_arena *arena;
    size_t line_offset, max_depth, max_nodes, nodes;
    frame *stack;
    size_t depth, cap;
    aw_yaml_node *root;
    bool have_document;
    aw_error *err;
    /* Where the last position asked for lies: libyaml counts characters
     * and takes a lone CR (and NEL, LS, PS) for a line break; positions
     * are given as editors show them, lines ended by LF only. Events come
     * in the text's order, so walking on from the last one is linear. */
    size_t at_char, at_byte, at_line, at_column;
} reader;

/* ---- errors ------------------------------------------------------------------ */

static int fail_at(reader *r, int code, size_t line, size_t column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static int fail_at(reader *r, int code, size_t line, size_t column, const char *fmt, ...)
{
    if (!r->err)
        return code;
    char msg[AW_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    aw_rt_error(r->err, code, "%s", msg);
    r->err->line = line;
    r->err->column = column;
    return code;
}

/* The line and column (1-based, in characters) of libyaml's mark. */
static void position(reader *r, const yaml_mark_t *m, size_t *line, size_t *column)
{
    if (m->index < r->at_char) {
        r->at_char = r->at_byte = 0;
        r->at_line = r->at_column = 1;
    }
    while (r->at_char < m->index && r->at_byte < r->len) {
        unsigned char c = (unsigned char)r->text[r->at_byte];
        size_t width = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
        if (c == '\n') {
            r->at_line++;
            r->at_column = 1;
        } else {
            r->at_column++;
        }
        r->at_byte += width <= r->len - r->at_byte ? width : r->len - r->at_byte;
        r->at_char++;
    }
    *line = r->at_line + r->line_offset;
    *column = r->at_column;
}

/* libyaml's reader reports a byte offset, not a mark: count the lines and
 * characters before it. */
static void offset_position(const reader *r, size_t offset, size_t *line, size_t *column)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < offset && i < r->len; i++) {
        if (r->text[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)r->text[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l + r->line_offset;
    *column = c;
}

/* What the usual mistakes of hand-written frontmatter look like to libyaml,
 * and what to do about them. */
static const char *hint_for(const char *problem)
{
    if (!problem)
        return "";
    if (strstr(problem, "mapping values are not allowed"))
        return "; a value with ': ' in it must be quoted (\"...\")";
    if (strstr(problem, "cannot start any token"))
        return "; a value starting with @, ` or a tab must be quoted";
    if (strstr(problem, "could not find expected ':'"))
        return "; each line of the frontmatter is KEY: VALUE (quote a value that spans lines)";
    return "";
}

static int parser_error(reader *r, const yaml_parser_t *p)
{
    size_t line, column;
    if (p->error == YAML_MEMORY_ERROR)
        return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
    if (p->error == YAML_READER_ERROR) {
        offset_position(r, p->problem_offset, &line, &column);
        return fail_at(r, AW_ESYNTAX, line, column, "YAML: %s", p->problem ? p->problem : "unreadable text");
    }
    size_t context_line = 0, context_column = 0;
    if (p->context)
        position(r, &p->context_mark, &context_line, &context_column);
    position(r, &p->problem_mark, &line, &column);
    if (p->context && (context_line != line || context_column != column))
        return fail_at(r, AW_ESYNTAX, line, column, "YAML: %s (%s at line %zu, column %zu)%s",
                       p->problem ? p->problem : "malformed", p->context, context_line, context_column,
                       hint_for(p->problem));
    return fail_at(r, AW_ESYNTAX, line, column, "YAML: %s%s", p->problem ? p->problem : "malformed",
                   hint_for(p->problem));
}

/* ---- scalars ------------------------------------------------------------------- */

static bool is_any(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (!strcmp(s, *words))
            return true;
    return false;
}

static bool all_digits(const char *s, const char *set)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr(set, *s))
            return false;
    return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_float_text(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    size_t whole = strspn(s, "0123456789");
    s += whole;
    size_t frac = 0;
    if (*s == '.') {
        s++;
        frac = strspn(s, "0123456789");
        s += frac;
    }
    if (!whole && !frac)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        size_t exp = strspn(s, "0123456789");
        if (!exp)
            return false;
        s += exp;
    }
    return *s == 0;
}

static bool parse_int(const char *s, aw_yaml_node *n)
{
    int base = 10;
    const char *digits = s;
    if (!strncmp(s, "0o", 2) && all_digits(s + 2, "01234567")) {
        base = 8;
        digits = s + 2;
    } else if (!strncmp(s, "0x", 2) && all_digits(s + 2, "0123456789abcdefABCDEF")) {
        base = 16;
        digits = s + 2;
    } else {
        const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
        if (!all_digits(d, "0123456789"))
            return false;
    }
    errno = 0;
    char *end;
    long long v = strtoll(digits, &end, base);
    n->type = AW_YAML_INT;
    if (errno == ERANGE) {
        /* too large for 64 bits: a float, as JSON would hold it */
        n->type = AW_YAML_FLOAT;
        n->d = strtod(s, NULL);
        return true;
    }
    n->i = v;
    n->d = (double)v;
    return true;
}

/* The core schema's reading of a plain scalar. */
static void type_plain(aw_yaml_node *n)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", NULL};
    static const char *const falses[] = {"false", "False", "FALSE", NULL};
    static const char *const infs[] = {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", NULL};
    static const char *const ninfs[] = {"-.inf", "-.Inf", "-.INF", NULL};
    static const char *const nans[] = {".nan", ".NaN", ".NAN", NULL};
    const char *s = n->text;
    n->type = AW_YAML_STRING;
    if (strlen(s) != n->len)
        return; /* a NUL inside: only a string can hold it */
    if (is_any(s, nulls)) {
        n->type = AW_YAML_NULL;
    } else if (is_any(s, trues) || is_any(s, falses)) {
        n->type = AW_YAML_BOOL;
        n->b = s[0] == 't' || s[0] == 'T';
    } else if (parse_int(s, n)) {
        return;
    } else if (is_float_text(s)) {
        n->type = AW_YAML_FLOAT;
        n->d = strtod(s, NULL);
    } else if (is_any(s, infs) || is_any(s, ninfs)) {
        n->type = AW_YAML_FLOAT;
        n->d = is_any(s, ninfs) ? -INFINITY : INFINITY;
    } else if (is_any(s, nans)) {
        n->type = AW_YAML_FLOAT;
        n->d = NAN;
    }
}

/* A scalar's type from its tag and style; nonzero (err set) for a tag we
 * do not know or a value its tag does not fit. */
static int type_scalar(reader *r, aw_yaml_node *n, const yaml_event_t *ev)
{
    const char *tag = (const char *)ev->data.scalar.tag;
    if (!tag) {
        if (ev->data.scalar.plain_implicit)
            type_plain(n);
        else
            n->type = AW_YAML_STRING;
        return 0;
    }
    if (!strcmp(tag, "!") || !strcmp(tag, YAML_STR_TAG)) {
        n->type = AW_YAML_STRING;
        return 0;
    }
    static const char *const typed[] = {YAML_INT_TAG, YAML_FLOAT_TAG, YAML_BOOL_TAG, YAML_NULL_TAG, NULL};
    if (!is_any(tag, typed))
        return fail_at(r, AW_ESYNTAX, n->line, n->column, "YAML: the tag '%s' is not supported here", tag);
    type_plain(n);
    bool fits = (!strcmp(tag, YAML_INT_TAG) && n->type == AW_YAML_INT) ||
                (!strcmp(tag, YAML_FLOAT_TAG) && (n->type == AW_YAML_FLOAT || n->type == AW_YAML_INT)) ||
                (!strcmp(tag, YAML_BOOL_TAG) && n->type == AW_YAML_BOOL) ||
                (!strcmp(tag, YAML_NULL_TAG) && n->type == AW_YAML_NULL);
    if (!fits)
        return fail_at(r, AW_ETYPE, n->line, n->column, "YAML: '%s' is not a value of the tag '%s'", n->text, tag);
    if (!strcmp(tag, YAML_FLOAT_TAG))
        n->type = AW_YAML_FLOAT;
    return 0;
}

/* ---- the tree --------------------------------------------------------------------- */

static aw_yaml_node *new_node(reader *r, aw_yaml_kind kind, const yaml_mark_t *m)
{
    size_t line, column;
    position(r, m, &line, &column);
    if (++r->nodes > r->max_nodes) {
        fail_at(r, AW_ELIMIT, line, column, "YAML: more than %zu values", r->max_nodes);
        return NULL;
    }
    aw_yaml_node *n = aw_arena_alloc(r->arena, sizeof *n);
    if (!n) {
        aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->line = line;
    n->column = column;
    return n;
}

/* Hang a finished node on the collection being read (or make it the root). */
static int attach(reader *r, aw_yaml_node *n)
{
    if (r->depth == 0) {
        r->root = n;
        return 0;
    }
    frame *f = &r->stack[r->depth - 1];
    if (f->node->kind == AW_YAML_MAPPING && f->nkids % 2 == 0 && n->kind != AW_YAML_SCALAR)
        return fail_at(r, AW_ESYNTAX, n->line, n->column, "YAML: a key must be a plain value, not %s",
                       aw_yaml_describe(n));
    if (f->nkids == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        aw_yaml_node **k = aw_realloc(r->alloc, f->kids, cap * sizeof *k);
        if (!k)
            return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
        f->kids = k;
        f->cap = cap;
    }
    f->kids[f->nkids++] = n;
    return 0;
}

static int open_collection(reader *r, aw_yaml_kind kind, const yaml_mark_t *m)
{
    if (r->depth >= r->max_depth) {
        size_t line, column;
        position(r, m, &line, &column);
        return fail_at(r, AW_ELIMIT, line, column, "YAML: nested deeper than %zu levels", r->max_depth);
    }
    aw_yaml_node *n = new_node(r, kind, m);
    if (!n)
        return r->err ? r->err->code : AW_ENOMEM;
    if (r->depth == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        frame *s = aw_realloc(r->alloc, r->stack, cap * sizeof *s);
        if (!s)
            return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
        r->stack = s;
        r->cap = cap;
    }
    r->stack[r->depth++] = (frame){n, NULL, 0, 0};
    return 0;
}

typedef struct key_ref {
    const aw_yaml_node *key;
} key_ref;

static int compare_keys(const void *a, const void *b)
{
    const aw_yaml_node *x = ((const key_ref *)a)->key, *y = ((const key_ref *)b)->key;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->text, y->text, n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    /* equal keys in the order they were written */
    return x->line != y->line ? (x->line < y->line ? -1 : 1) : (x->column < y->column ? -1 : x->column > y->column);
}

/* A key written twice is an error naming both places (sorted, so a huge
 * mapping costs n log n, not n squared). */
static int check_duplicates(reader *r, const aw_yaml_node *map)
{
    size_t n = map->count / 2;
    if (n < 2)
        return 0;
    key_ref *keys = aw_malloc(r->alloc, n * sizeof *keys);
    if (!keys)
        return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
    for (size_t k = 0; k < n; k++)
        keys[k].key = map->items[2 * k];
    qsort(keys, n, sizeof *keys, compare_keys);
    int rc = 0;
    for (size_t k = 1; k < n && !rc; k++) {
        const aw_yaml_node *a = keys[k - 1].key, *b = keys[k].key;
        if (a->len == b->len && !memcmp(a->text, b->text, a->len))
            rc = fail_at(r, AW_ESYNTAX, b->line, b->column, "YAML: the key '%.*s' appears twice (first at line %zu, column %zu)",
                         (int)(a->len > 80 ? 80 : a->len), a->text, a->line, a->column);
    }
    aw_free(r->alloc, keys);
    return rc;
}

static int close_collection(reader *r)
{
    frame *f = &r->stack[r->depth - 1];
    aw_yaml_node *n = f->node;
    if (f->nkids) {
        n->items = aw_arena_alloc(r->arena, f->nkids * sizeof *n->items);
        if (!n->items)
            return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
        memcpy(n->items, f->kids, f->nkids * sizeof *n->items);
    }
    n->count = f->nkids;
    aw_free(r->alloc, f->kids);
    f->kids = NULL;
    r->depth--;
    if (n->kind == AW_YAML_MAPPING) {
        int rc = check_duplicates(r, n);
        if (rc)
            return rc;
    }
    return attach(r, n);
}

static int on_scalar(reader *r, const yaml_event_t *ev)
{
    aw_yaml_node *n = new_node(r, AW_YAML_SCALAR, &ev->start_mark);
    if (!n)
        return r->err ? r->err->code : AW_ENOMEM;
    n->len = ev->data.scalar.length;
    n->text = aw_arena_strndup(r->arena, (const char *)ev->data.scalar.value, n->len);
    if (!n->text)
        return aw_rt_error(r->err, AW_ENOMEM, "out of memory reading YAML");
    int rc = type_scalar(r, n, ev);
    return rc ? rc : attach(r, n);
}

static int on_event(reader *r, const yaml_event_t *ev)
{
    const yaml_mark_t *m = &ev->start_mark;
    size_t line, column;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        position(r, m, &line, &column);
        if (r->have_document)
            return fail_at(r, AW_ESYNTAX, line, column, "YAML: only one document is allowed here");
        r->have_document = true;
        return 0;
    case YAML_ALIAS_EVENT:
        position(r, m, &line, &column);
        return fail_at(r, AW_ESYNTAX, line, column, "YAML: aliases (*%s) are not supported: write the value out",
                       (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return on_scalar(r, ev);
    case YAML_SEQUENCE_START_EVENT:
        return open_collection(r, AW_YAML_SEQUENCE, m);
    case YAML_MAPPING_START_EVENT:
        return open_collection(r, AW_YAML_MAPPING, m);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return close_collection(r);
    default:
        return 0;
    }
}

int aw_yaml_read(const char *text, size_t len, const aw_yaml_options *opts, aw_arena *arena,
                 const aw_yaml_node **root, aw_error *err)
{
    aw_error_clear(err);
    *root = NULL;
    reader r;
    memset(&r, 0, sizeof r);
    r.text = text;
    r.len = len;
    r.alloc = arena->alloc;
    r.arena = arena;
    r.err = err;
    r.line_offset = opts ? opts->line_offset : 0;
    r.max_depth = opts && opts->max_depth ? opts->max_depth : DEFAULT_MAX_DEPTH;
    r.max_nodes = opts && opts->max_nodes ? opts->max_nodes : DEFAULT_MAX_NODES;
    r.at_line = r.at_column = 1;

    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return aw_rt_error(err, AW_ENOMEM, "out of memory reading YAML");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
    int rc = 0;
    for (bool done = false; !done && !rc;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = parser_error(&r, &p);
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&r, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    for (size_t i = 0; i < r.depth; i++)
        aw_free(r.alloc, r.stack[i].kids);
    aw_free(r.alloc, r.stack);
    if (!rc)
        *root = r.root;
    return rc;
}

/* ---- reading the tree ---------------------------------------------------------------- */

const aw_yaml_node *aw_yaml_get(const aw_yaml_node *map, const char *key)
{
    if (!map || map->kind != AW_YAML_MAPPING)
        return NULL;
    size_t n = strlen(key);
    for (size_t k = 0; k < map->count / 2; k++) {
        const aw_yaml_node *kn = map->items[2 * k];
        if (kn->len == n && !memcmp(kn->text, key, n))
            return map->items[2 * k + 1];
    }
    return NULL;
}

const char *aw_yaml_describe(const aw_yaml_node *n)
{
    if (!n)
        return "nothing";
    if (n->kind == AW_YAML_MAPPING)
        return "a mapping";
    if (n->kind == AW_YAML_SEQUENCE)
        return "a list";
    switch (n->type) {
    case AW_YAML_NULL:
        return "null";
    case AW_YAML_BOOL:
        return "true or false";
    case AW_YAML_INT:
    case AW_YAML_FLOAT:
        return "a number";
    default:
        return "a string";
    }
}

aw_json_value *aw_yaml_to_json(aw_json_doc *doc, const aw_yaml_node *n, bool scalars_as_text)
{
    if (n->kind == AW_YAML_SCALAR) {
        if (scalars_as_text)
            return aw_json_new_string(doc, n->text, n->len);
        switch (n->type) {
        case AW_YAML_NULL:
            return aw_json_new_null(doc);
        case AW_YAML_BOOL:
            return aw_json_new_bool(doc, n->b);
        case AW_YAML_INT:
            return aw_json_new_int(doc, n->i);
        case AW_YAML_FLOAT:
            return aw_json_new_number(doc, n->d);
        default:
            return aw_json_new_string(doc, n->text, n->len);
        }
    }
    /* The depth is bounded by the reader's max_depth, so recursing is safe. */
    aw_json_value *c = n->kind == AW_YAML_MAPPING ? aw_json_new_object(doc) : aw_json_new_array(doc);
    if (!c)
        return NULL;
    if (n->kind == AW_YAML_SEQUENCE) {
        for (size_t i = 0; i < n->count; i++) {
            aw_json_value *v = aw_yaml_to_json(doc, n->items[i], scalars_as_text);
            if (!v || aw_json_array_push(doc, c, v))
                return NULL;
        }
        return c;
    }
    for (size_t k = 0; k < n->count / 2; k++) {
        const aw_yaml_node *key = n->items[2 * k];
        aw_json_value *v = aw_yaml_to_json(doc, n->items[2 * k + 1], scalars_as_text);
        if (!v || aw_json_object_set(doc, c, key->text, key->len, v))
            return NULL;
    }
    return c;
}
