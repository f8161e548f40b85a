/* Validating an element tree against a contract, and mapping it to JSON. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal/contract.h"
#include "internal/errors.h"
#include "internal/json.h"
#include "internal/utf8.h"

static const char *const code_names[] = {
    NULL, "malformed", "limit", "wrong_root", "missing_element", "too_many", "missing_attribute",
    "bad_value", "empty_text", "text_too_long", "too_many_items", "unknown_element",
    "unknown_attribute", "unexpected_text", "not_found",
};

const char *aw_contract_code_name(aw_contract_code code) {
    return (code > 0 && (size_t)code < sizeof code_names / sizeof code_names[0]) ? code_names[code] : NULL;
}

static void trim(const char **s, size_t *n) {
    const char *p = *s;
    size_t len = *n;
    while (len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++, len--;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n' || p[len - 1] == '\r')) len--;
    *s = p;
    *n = len;
}

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define SHORT_DECIMALS_EXACT 1
#else
#define SHORT_DECIMALS_EXACT 0
#endif

/* The value strtod gives for a number of at most 19 digits whose digits,
 * read as an integer m, stay below 2^53, with k of them after the point:
 * m and 10^k (k <= 19) are exact doubles, and one IEEE division rounds
 * m / 10^k correctly, which is what strtod returns. Returns 0 when the
 * number is not of that kind (or when double arithmetic may carry excess
 * precision), and the caller asks strtod. Saves most of the cost of
 * numbers such as confidence="0.95". */
static int short_decimal(uint64_t m, size_t digits, size_t frac, int negative, double *out) {
    static const double powers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
                                     1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19};
    if (!SHORT_DECIMALS_EXACT || digits > 19 || m > ((uint64_t)1 << 53)) return 0;
    double d = (double)m / powers[frac];
    *out = negative ? -d : d;
    return 1;
}

/* Strict number syntax: [+-]digits[.digits] (decimal) or [+-]digits.
 * Fixed: up to 511 characters (was 63), so that every number parse
 * returns can be built back: written without an exponent, a double takes
 * at most 328 characters, and 63 nines read as 1e63, 64 digits long. */
static int number_text(const char *s, size_t n, int allow_point, double *out) {
    char tmp[512];
    if (n == 0 || n >= sizeof tmp) return 0;
    size_t i = 0, digits = 0, frac = 0;
    uint64_t m = 0; /* the digits as an integer, while there are at most 19 */
    if (s[i] == '+' || s[i] == '-') i++;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++)
        if (digits < 19) m = m * 10 + (uint64_t)(s[i] - '0');
    if (allow_point && i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++, frac++)
            if (digits < 19) m = m * 10 + (uint64_t)(s[i] - '0');
    }
    if (i != n || digits == 0) return 0;
    if (short_decimal(m, digits, frac, s[0] == '-', out)) return 1;
    memcpy(tmp, s[0] == '+' ? s + 1 : s, s[0] == '+' ? n - 1 : n);
    tmp[s[0] == '+' ? n - 1 : n] = '\0';
    /* write into a copy with room for the terminator aw__json_strtod uses */
    *out = aw__json_strtod(tmp, strlen(tmp));
    /* a number too large for a double is not one (JSON cannot hold it);
     * found by fuzz_contract_validate once longer numbers were allowed */
    return isfinite(*out) ? 1 : 0;
}

/* Items of a comma-separated list, each trimmed; empty items are not
 * counted (a trailing comma is harmless). */
static size_t list_items(const char *s, size_t n) {
    size_t count = 0, i = 0;
    while (i <= n) {
        const char *comma = memchr(s + i, ',', n - i);
        size_t end = comma ? (size_t)(comma - s) : n;
        const char *item = s + i;
        size_t len = end - i;
        trim(&item, &len);
        if (len) count++;
        if (!comma) break;
        i = end + 1;
    }
    return count;
}

/* Check a value against its type: 0, or an aw_contract_code with a message
 * in msg. *number receives an integer's or a decimal's value. */
static int check_value(const c_value *v, const char *s, size_t n, char *msg, size_t size, double *number) {
    double d = 0;
    switch (v->type) {
    case CT_STRING:
        break;
    case CT_INTEGER:
        if (!number_text(s, n, 0, &d)) {
            snprintf(msg, size, "must be an integer, not \"%.*s\"", (int)(n > 40 ? 40 : n), s);
            return AW_CONTRACT_BAD_VALUE;
        }
        goto range;
    case CT_DECIMAL:
        if (!number_text(s, n, 1, &d)) {
            snprintf(msg, size, "must be a decimal number, not \"%.*s\"", (int)(n > 40 ? 40 : n), s);
            return AW_CONTRACT_BAD_VALUE;
        }
    range:
        if ((v->has_min && d < v->min) || (v->has_max && d > v->max)) {
            char lo[40] = "", hi[40] = "";
            if (v->has_min) lo[aw__js_number_string(v->min, lo)] = '\0';
            if (v->has_max) hi[aw__js_number_string(v->max, hi)] = '\0';
            if (v->has_min && v->has_max)
                snprintf(msg, size, "must be from %s to %s, not %.*s", lo, hi, (int)(n > 40 ? 40 : n), s);
            else if (v->has_min)
                snprintf(msg, size, "must be at least %s, not %.*s", lo, (int)(n > 40 ? 40 : n), s);
            else
                snprintf(msg, size, "must be at most %s, not %.*s", hi, (int)(n > 40 ? 40 : n), s);
            return AW_CONTRACT_BAD_VALUE;
        }
        *number = d;
        break;
    case CT_BOOLEAN:
        if (!((n == 4 && !memcmp(s, "true", 4)) || (n == 5 && !memcmp(s, "false", 5)))) {
            snprintf(msg, size, "must be \"true\" or \"false\", not \"%.*s\"", (int)(n > 40 ? 40 : n), s);
            return AW_CONTRACT_BAD_VALUE;
        }
        break;
    case CT_ENUM: {
        for (size_t i = 0; i < v->nvalues; i++)
            if (strlen(v->values[i]) == n && !memcmp(v->values[i], s, n)) return 0;
        snprintf(msg, size, "must be one of the listed values, not \"%.*s\"", (int)(n > 40 ? 40 : n), s);
        return AW_CONTRACT_BAD_VALUE;
    }
    case CT_LIST: {
        size_t items = list_items(s, n);
        if (v->max_items && items > v->max_items) {
            snprintf(msg, size, "has %zu items; at most %zu are allowed", items, v->max_items);
            return AW_CONTRACT_TOO_MANY_ITEMS;
        }
        break;
    }
    }
    if (v->max_length) {
        size_t chars = aw__utf8_count(s, n);
        if (chars > v->max_length) {
            snprintf(msg, size, "is %zu characters long; at most %zu are allowed", chars, v->max_length);
            return AW_CONTRACT_TEXT_TOO_LONG;
        }
    }
    return 0;
}

/* ---- JSON values ------------------------------------------------------------ */

/* The typed result is built in place in the document's arena while the
 * checker walks the tree (parse only): the sizes of objects and arrays are
 * known from the tree, and the keys (the contract's names, all different,
 * none an array index: contract_load.c) need none of the checks
 * aw_json_object_set makes. The strings already live in the document's
 * arena (aw__contract_tree), so a string value points at them. */

static int string_value(aw_json_doc *doc, const char *s, size_t n, aw_json_value *out) {
    memset(out, 0, sizeof *out);
    out->type = AW_JSON_STRING;
    if (s[n] != '\0') { /* a trimmed part of a value: copy it */
        char *p = aw__arena_alloc(&doc->arena, n + 1);
        if (!p) return -1;
        memcpy(p, s, n);
        p[n] = '\0';
        s = p;
    }
    out->u.str.ptr = s;
    out->u.str.len = n;
    return 0;
}

/* As aw_json_new_number makes it, without a value of its own in the arena:
 * the double, and its exact integer when it has one. */
static void number_value(double d, aw_json_value *out) {
    memset(out, 0, sizeof *out);
    out->type = AW_JSON_NUMBER;
    out->u.num.d = d;
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d) {
        out->flags = AW_JSON_F_INT;
        out->u.num.i = (int64_t)d;
    }
}

static int list_value(aw_json_doc *doc, const char *s, size_t n, aw_json_value *out) {
    memset(out, 0, sizeof *out);
    out->type = AW_JSON_ARRAY;
    size_t count = 0;
    for (size_t i = 0; i <= n;) { /* count first: the items go in one array of that size */
        const char *comma = memchr(s + i, ',', n - i);
        size_t end = comma ? (size_t)(comma - s) : n;
        const char *item = s + i;
        size_t len = end - i;
        trim(&item, &len);
        count += len != 0;
        if (!comma) break;
        i = end + 1;
    }
    if (!count) return 0;
    aw_json_value *items = aw__arena_alloc(&doc->arena, count * sizeof *items);
    if (!items) return -1;
    out->u.arr.items = items;
    out->u.arr.cap = count;
    for (size_t i = 0; i <= n;) {
        const char *comma = memchr(s + i, ',', n - i);
        size_t end = comma ? (size_t)(comma - s) : n;
        const char *item = s + i;
        size_t len = end - i;
        trim(&item, &len);
        if (len && string_value(doc, item, len, &items[out->u.arr.count++])) return -1;
        if (!comma) break;
        i = end + 1;
    }
    return 0;
}

/* number: the value check_value found for an integer or a decimal. */
static int typed(aw_json_doc *doc, const c_value *v, const char *s, size_t n, double number, aw_json_value *out) {
    /* Fixed: empty optional text of an integer, decimal, boolean or enum
     * element (attributes cannot be empty and valid) is null; it used to
     * come out as "" for numbers and enums and as false for booleans, a
     * value the model never wrote. */
    if (n == 0 && v->type != CT_STRING && v->type != CT_LIST) {
        memset(out, 0, sizeof *out);
        out->type = AW_JSON_NULL;
        return 0;
    }
    switch (v->type) {
    case CT_INTEGER:
    case CT_DECIMAL: number_value(number, out); return 0;
    case CT_BOOLEAN:
        memset(out, 0, sizeof *out);
        out->type = AW_JSON_BOOL;
        out->u.b = n == 4 && !memcmp(s, "true", 4);
        return 0;
    case CT_LIST: return list_value(doc, s, n, out);
    default: return string_value(doc, s, n, out);
    }
}

/* ---- validation ----------------------------------------------------------- */

typedef struct checker {
    const aw_contract_options *opts;
    aw_contract_issue *issues;
    size_t count, cap;
    size_t limit; /* stop after this many (parse: 1) */
    const aw_allocator *alloc;
    x_tree *tree;     /* its nodes get their line and column at the first issue */
    aw_json_doc *doc; /* parse: the typed result is built here as the checker goes */
    /* parse: the keys copied into doc so far, by the contract name they
     * copy (a small direct-mapped cache: most names once per document) */
    struct {
        const char *name, *copy;
    } keys[32];
    int oom;
} checker;

static int set_key(checker *k, aw_json_member *m, const char *name, size_t len) {
    size_t slot = ((uintptr_t)name >> 3) % (sizeof k->keys / sizeof k->keys[0]);
    if (k->keys[slot].name != name) {
        char *copy = aw__arena_alloc(&k->doc->arena, len + 1);
        if (!copy) return -1;
        memcpy(copy, name, len + 1);
        k->keys[slot].name = name;
        k->keys[slot].copy = copy;
    }
    m->key = k->keys[slot].copy;
    m->key_len = len;
    return 0;
}

/* Where the checker is: one frame per element on the way down from the
 * root. An issue's path is written from these only when there is an
 * issue: "/llmResponse/analysis/subject[2]", the index given for elements
 * allowed more than once. */
typedef struct frame {
    const struct frame *parent;
    const c_elem *spec;
    size_t index; /* 1-based, among the siblings of its name */
} frame;

/* A path kept to 255 characters, the size of aw_contract_issue.path. */
typedef struct path_buf {
    char s[256];
    size_t len;
} path_buf;

static void path_add(path_buf *p, const char *s, size_t n) {
    size_t room = sizeof p->s - 1 - p->len;
    if (n > room) n = room;
    memcpy(p->s + p->len, s, n);
    p->len += n;
    p->s[p->len] = '\0';
}

static void path_add_index(path_buf *p, size_t idx) {
    char digits[24];
    size_t n = sizeof digits;
    digits[--n] = ']';
    do {
        digits[--n] = (char)('0' + idx % 10);
        idx /= 10;
    } while (idx);
    digits[--n] = '[';
    path_add(p, digits + n, sizeof digits - n);
}

static void path_of(const frame *f, path_buf *p) {
    if (!f) return;
    path_of(f->parent, p);
    path_add(p, "/", 1);
    path_add(p, f->spec->name, f->spec->name_len);
    if (f->spec->max != 1) path_add_index(p, f->index);
}

/* An issue at the element of frame at (NULL: the document), or at its
 * attribute or child step, sep being "/@" or "/", when step is not NULL. */
static void add_issue(checker *k, aw_contract_code code, const frame *where, const char *sep, const char *step,
                      const x_node *at, const char *fmt, const char *detail) {
    if (k->oom || k->count >= k->limit) return;
    if (k->count == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 8;
        aw_contract_issue *p = aw_realloc(k->alloc, k->issues, cap * sizeof *p);
        if (!p) {
            k->oom = 1;
            return;
        }
        k->issues = p;
        k->cap = cap;
    }
    aw_contract_issue *is = &k->issues[k->count++];
    memset(is, 0, sizeof *is);
    is->code = code;
    path_buf path = {"", 0};
    path_of(where, &path);
    if (step) {
        path_add(&path, sep, strlen(sep));
        path_add(&path, step, strlen(step));
    }
    memcpy(is->path, path.s, path.len + 1);
    if (at && !at->line) aw__contract_tree_locate(k->tree);
    is->line = at ? at->line : 1;
    is->column = at ? at->column : 1;
    snprintf(is->message, sizeof is->message, fmt, detail);
}

static void check_attrs(checker *k, const c_elem *spec, const x_node *node, const frame *path,
                        aw_json_member *out) {
    char msg[200];
    for (size_t i = 0; i < spec->nattrs; i++) {
        const c_attr *a = &spec->attrs[i];
        const char *v = node->values[i].s;
        size_t vn = node->values[i].len;
        if (!v) {
            if (a->required)
                add_issue(k, AW_CONTRACT_MISSING_ATTRIBUTE, path, "/@", a->name, node, "required attribute %s is missing",
                          a->name);
            continue;
        }
        double number = 0;
        int code = 0;
        if (a->v.type != CT_STRING) trim(&v, &vn);
        if (a->v.type != CT_STRING || a->v.max_length) /* a plain string needs no look */
            code = check_value(&a->v, v, vn, msg, sizeof msg, &number);
        if (code) {
            add_issue(k, (aw_contract_code)code, path, "/@", a->name, node, "%s", msg);
        } else if (out) {
            if (set_key(k, out, a->name, a->name_len) || typed(k->doc, &a->v, v, vn, number, &out->value))
                k->oom = 1;
            out++;
        }
    }
    for (size_t i = 0; i < node->nunknown; i++) /* kept in strict mode only */
        add_issue(k, AW_CONTRACT_UNKNOWN_ATTRIBUTE, path, "/@", node->unknown[i], node,
                  "attribute %s is not part of the contract", node->unknown[i]);
}

/* node->text is already trimmed (contract_doc.c). out: where its typed
 * value goes, or NULL. */
static void check_text(checker *k, const c_elem *spec, const x_node *node, const frame *path, aw_json_value *out) {
    char msg[200];
    double number = 0;
    if (spec->has_text) {
        if (!node->text_len) {
            if (spec->text_required) {
                add_issue(k, AW_CONTRACT_EMPTY_TEXT, path, NULL, NULL, node, "%s must not be empty", spec->name);
                return;
            }
        } else {
            int code = check_value(&spec->text, node->text, node->text_len, msg, sizeof msg, &number);
            if (code) {
                add_issue(k, (aw_contract_code)code, path, NULL, NULL, node, "text %s", msg);
                return;
            }
        }
    } else if (node->text_len && k->opts && k->opts->strict) {
        add_issue(k, AW_CONTRACT_UNEXPECTED_TEXT, path, NULL, NULL, node, "%s takes no text of its own", spec->name);
    }
    if (out && typed(k->doc, &spec->text, node->text, node->text_len, number, out)) k->oom = 1;
}

/* The object an element with attributes or children maps to: the
 * attributes present, then each declared child in the contract's order
 * (an array when it may occur more than once, even empty; left out when it
 * may occur once and does not), then the element's own text as "#text".
 * Sizes its members and arrays from the tree, sets the children's keys,
 * and leaves in slot[j] the member of declared child j. */
static int object_layout(checker *k, const c_elem *spec, const x_node *node, size_t *slot, aw_json_value *out) {
    aw_json_doc *doc = k->doc;
    size_t nspec = spec->nchildren < 64 ? spec->nchildren : 64;
    memset(slot, 0, nspec * sizeof *slot);
    for (const x_node *ch = node->first; ch; ch = ch->next)
        if (ch->decl) slot[ch->decl - spec->children]++;
    size_t count = 0;
    for (size_t i = 0; i < spec->nattrs; i++) count += node->values[i].s != NULL;
    size_t first_child = count;
    for (size_t j = 0; j < nspec; j++) count += spec->children[j].max > 1 || slot[j];
    count += spec->has_text && node->text_len;
    aw_json_member *m = count ? aw__arena_alloc(&doc->arena, count * sizeof *m) : NULL;
    if (count && !m) return -1;
    memset(out, 0, sizeof *out);
    out->type = AW_JSON_OBJECT;
    out->u.obj.members = m;
    out->u.obj.count = out->u.obj.cap = count;
    size_t at = first_child;
    for (size_t j = 0; j < nspec; j++) {
        const c_elem *cs = &spec->children[j];
        size_t occurs = slot[j];
        if (cs->max <= 1 && !occurs) continue;
        if (set_key(k, &m[at], cs->name, cs->name_len)) return -1;
        aw_json_value *v = &m[at].value;
        memset(v, 0, sizeof *v);
        v->type = AW_JSON_ARRAY; /* a child allowed once replaces this with itself */
        if (cs->max > 1 && occurs) {
            if (!(v->u.arr.items = aw__arena_alloc(&doc->arena, occurs * sizeof *v->u.arr.items))) return -1;
            v->u.arr.cap = occurs;
        }
        slot[j] = at++;
    }
    if (spec->has_text && node->text_len && set_key(k, &m[at], "#text", 5)) return -1;
    return 0;
}

/* Check an element and what it holds; out (parse) receives its typed
 * value. Once an issue is found, parse stops (limit 1) and the half-built
 * result is dropped with its document. */
static void check_elem(checker *k, const c_elem *spec, const x_node *node, const frame *path, aw_json_value *out) {
    size_t slot[64]; /* declared child j: its member in out */
    aw_json_member *m = NULL;
    aw_json_value *text_out = out; /* an element with only text maps to its text */
    if (out && (spec->nattrs || spec->nchildren)) {
        if (object_layout(k, spec, node, slot, out)) {
            k->oom = 1;
            return;
        }
        m = out->u.obj.members;
        text_out = spec->has_text && node->text_len ? &m[out->u.obj.count - 1].value : NULL;
    }
    check_attrs(k, spec, node, path, m);
    check_text(k, spec, node, path, text_out);
    /* children: count by name, in document order */
    size_t counts[64];
    size_t nspec = spec->nchildren < 64 ? spec->nchildren : 64;
    memset(counts, 0, nspec * sizeof *counts);
    for (const x_node *ch = node->first; ch && !k->oom && k->count < k->limit; ch = ch->next) {
        if (!ch->decl) {
            if (k->opts && k->opts->strict)
                add_issue(k, AW_CONTRACT_UNKNOWN_ELEMENT, path, "/", ch->name, ch,
                          "element <%s> is not part of the contract", ch->name);
            continue;
        }
        const c_elem *cs = ch->decl; /* one of spec->children (contract_doc.c) */
        size_t j = (size_t)(cs - spec->children);
        size_t idx = ++counts[j];
        frame child = {path, cs, idx};
        if (idx <= cs->max) {
            aw_json_value *child_out = NULL;
            if (m) {
                aw_json_value *v = &m[slot[j]].value;
                child_out = cs->max > 1 ? &v->u.arr.items[v->u.arr.count++] : v;
            }
            check_elem(k, cs, ch, &child, child_out);
        } else if (idx == cs->max + 1) {
            char detail[160];
            snprintf(detail, sizeof detail, "<%s> appears more than %zu time%s in <%s>", cs->name, cs->max,
                     cs->max == 1 ? "" : "s", spec->name);
            add_issue(k, AW_CONTRACT_TOO_MANY, &child, NULL, NULL, ch, "%s", detail);
        }
    }
    for (size_t j = 0; j < nspec; j++) {
        const c_elem *cs = &spec->children[j];
        if (counts[j] < cs->min) {
            char detail[160];
            if (cs->min == 1) snprintf(detail, sizeof detail, "required element <%s> is missing", cs->name);
            else snprintf(detail, sizeof detail, "<%s> must appear at least %zu times", cs->name, cs->min);
            add_issue(k, AW_CONTRACT_MISSING_ELEMENT, path, "/", cs->name, node, "%s", detail);
        }
    }
}

/* Parse and check; with doc (parse), its strings go to doc's arena and
 * *result receives the typed value. The tree is the caller's to free. */
static int run_check(const aw_contract *c, const char *xml, size_t len, const aw_contract_options *opts,
                     size_t limit, aw_json_doc *doc, aw_json_value **result, x_tree *tree, checker *k) {
    memset(k, 0, sizeof *k);
    k->opts = opts;
    k->limit = limit;
    k->alloc = opts ? opts->alloc : NULL;
    k->tree = tree;
    k->doc = doc;
    aw_contract_issue issue;
    int rc = aw__contract_tree(xml, len, opts, &c->root, doc ? &doc->arena : NULL, tree, &issue);
    if (rc == AW_ENOMEM) return rc;
    if (rc) { /* the tree's issues have no path */
        add_issue(k, issue.code, NULL, NULL, NULL, NULL, "%s", issue.message);
        if (k->count) {
            k->issues[0].line = issue.line;
            k->issues[0].column = issue.column;
        }
        return k->oom ? AW_ENOMEM : AW_EVALID;
    }
    frame root = {NULL, &c->root, 1};
    if (!tree->root->decl) {
        char detail[200];
        snprintf(detail, sizeof detail, "the root element must be <%s>, not <%.80s>", c->root.name, tree->root->name);
        add_issue(k, AW_CONTRACT_WRONG_ROOT, &root, NULL, NULL, tree->root, "%s", detail);
    } else {
        aw_json_value *value = doc ? aw__arena_alloc(&doc->arena, sizeof *value) : NULL;
        if (doc && !value) return AW_ENOMEM;
        check_elem(k, &c->root, tree->root, &root, value);
        if (result) *result = value;
    }
    if (k->oom) return AW_ENOMEM;
    return k->count ? AW_EVALID : 0;
}

/* The first issue as the error, in the form the command prints each issue
 * of validate ("code: /path: message", the path left out when it is the
 * document's), so validate and parse name one fault the same way. */
static void first_issue(const aw_contract_issue *is, aw_error *err) {
    aw__error_set(err, AW_EVALID, "%s: %s%s%s", aw_contract_code_name(is->code), is->path, is->path[0] ? ": " : "",
                  is->message);
    if (err) {
        err->line = is->line;
        err->column = is->column;
    }
}

int aw_contract_validate(const aw_contract *c, const char *xml, size_t len,
                         const aw_contract_options *opts, aw_contract_issue **issues,
                         size_t *issue_count, aw_error *err) {
    if (!c || (!xml && len) || !issues || !issue_count) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *issues = NULL;
    *issue_count = 0;
    x_tree tree;
    checker k;
    int rc = run_check(c, xml ? xml : "", len, opts, SIZE_MAX, NULL, NULL, &tree, &k);
    aw__contract_tree_free(&tree); /* safe after a failed parse too */
    if (rc == AW_ENOMEM) {
        aw_free(k.alloc, k.issues);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    if (rc) {
        *issues = k.issues;
        *issue_count = k.count;
        first_issue(&k.issues[0], err);
        return AW_EVALID;
    }
    aw_free(k.alloc, k.issues);
    return 0;
}

int aw_contract_parse(const aw_contract *c, const char *xml, size_t len,
                      const aw_contract_options *opts, aw_json_doc **out, aw_error *err) {
    if (!c || (!xml && len) || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    /* The result's arena receives the tree's strings and the JSON built
     * around them: start it in one block of what a reply needs (its
     * strings, at most the document, and the values around them). */
    aw_json_doc *doc = aw_json_doc_new(opts ? opts->alloc : NULL);
    size_t guess = 2 * len + 4096;
    if (!doc || aw__arena_reserve(&doc->arena, guess < (1u << 20) ? guess : (1u << 20))) {
        aw_json_doc_free(doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    x_tree tree;
    checker k;
    aw_json_value *root = NULL;
    int rc = run_check(c, xml ? xml : "", len, opts, 1, doc, &root, &tree, &k);
    aw__contract_tree_free(&tree);
    if (rc) {
        if (rc == AW_EVALID && k.count) {
            first_issue(&k.issues[0], err);
        } else {
            aw__error_set(err, AW_ENOMEM, "out of memory");
        }
        aw_free(k.alloc, k.issues);
        aw_json_doc_free(doc);
        return rc;
    }
    aw_free(k.alloc, k.issues);
    aw_json_doc_set_root(doc, root);
    *out = doc;
    return 0;
}
