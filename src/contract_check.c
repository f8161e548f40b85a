/* Validating an element tree against a contract, and mapping it to JSON. */
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

void aw__contract_trim(const char **s, size_t *n) {
    const char *p = *s;
    size_t len = *n;
    while (len && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++, len--;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n' || p[len - 1] == '\r')) len--;
    *s = p;
    *n = len;
}

/* Strict number syntax: [+-]digits[.digits] (decimal) or [+-]digits.
 * Fixed: up to 511 characters (was 63), so that every number parse
 * returns can be built back: written without an exponent, a double takes
 * at most 328 characters, and 63 nines read as 1e63, 64 digits long. */
static int number_text(const char *s, size_t n, int allow_point, double *out) {
    char tmp[512];
    if (n == 0 || n >= sizeof tmp) return 0;
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-') i++;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    if (allow_point && i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++, digits++;
    }
    if (i != n || digits == 0) return 0;
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
        aw__contract_trim(&item, &len);
        if (len) count++;
        if (!comma) break;
        i = end + 1;
    }
    return count;
}

int aw__contract_check_value(const c_value *v, const char *s, size_t n, char *msg, size_t size) {
    double d;
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

/* ---- validation ----------------------------------------------------------- */

typedef struct checker {
    const aw_contract_options *opts;
    aw_contract_issue *issues;
    size_t count, cap;
    size_t limit; /* stop after this many (parse: 1) */
    const aw_allocator *alloc;
    int oom;
} checker;

static void add_issue(checker *k, aw_contract_code code, const char *path, const x_node *at,
                      const char *fmt, const char *detail) {
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
    snprintf(is->path, sizeof is->path, "%s", path);
    is->line = at ? at->line : 1;
    is->column = at ? at->column : 1;
    snprintf(is->message, sizeof is->message, fmt, detail);
}

static const x_attr *find_attr(const x_node *n, const char *name) {
    for (size_t i = 0; i < n->nattrs; i++)
        if (!strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

static void check_elem(checker *k, const c_elem *spec, const x_node *node, const char *path) {
    char sub[256], msg[200];
    for (size_t i = 0; i < spec->nattrs; i++) {
        const c_attr *a = &spec->attrs[i];
        const x_attr *xa = find_attr(node, a->name);
        snprintf(sub, sizeof sub, "%s/@%s", path, a->name);
        if (!xa) {
            if (a->required) add_issue(k, AW_CONTRACT_MISSING_ATTRIBUTE, sub, node, "required attribute %s is missing", a->name);
            continue;
        }
        const char *v = xa->value;
        size_t vn = xa->value_len;
        if (a->v.type != CT_STRING) aw__contract_trim(&v, &vn);
        int code = aw__contract_check_value(&a->v, v, vn, msg, sizeof msg);
        if (code) add_issue(k, (aw_contract_code)code, sub, node, "%s", msg);
    }
    if (k->opts && k->opts->strict) {
        for (size_t i = 0; i < node->nattrs; i++) {
            size_t j;
            for (j = 0; j < spec->nattrs; j++)
                if (!strcmp(spec->attrs[j].name, node->attrs[i].name)) break;
            if (j == spec->nattrs) {
                snprintf(sub, sizeof sub, "%s/@%s", path, node->attrs[i].name);
                add_issue(k, AW_CONTRACT_UNKNOWN_ATTRIBUTE, sub, node, "attribute %s is not part of the contract",
                          node->attrs[i].name);
            }
        }
    }
    const char *text = node->text;
    size_t tn = node->text_len;
    aw__contract_trim(&text, &tn);
    if (spec->has_text) {
        if (!tn) {
            if (spec->text_required) add_issue(k, AW_CONTRACT_EMPTY_TEXT, path, node, "%s must not be empty", spec->name);
        } else {
            int code = aw__contract_check_value(&spec->text, text, tn, msg, sizeof msg);
            if (code) add_issue(k, (aw_contract_code)code, path, node, "text %s", msg);
        }
    } else if (tn && k->opts && k->opts->strict) {
        add_issue(k, AW_CONTRACT_UNEXPECTED_TEXT, path, node, "%s takes no text of its own", spec->name);
    }
    /* children: count by name, in document order */
    size_t counts[64] = {0};
    size_t nspec = spec->nchildren < 64 ? spec->nchildren : 64;
    for (const x_node *ch = node->first; ch && !k->oom && k->count < k->limit; ch = ch->next) {
        size_t j;
        for (j = 0; j < nspec; j++)
            if (!strcmp(spec->children[j].name, ch->name)) break;
        if (j == nspec) {
            if (k->opts && k->opts->strict) {
                snprintf(sub, sizeof sub, "%s/%s", path, ch->name);
                add_issue(k, AW_CONTRACT_UNKNOWN_ELEMENT, sub, ch, "element <%s> is not part of the contract", ch->name);
            }
            continue;
        }
        const c_elem *cs = &spec->children[j];
        size_t idx = ++counts[j];
        if (cs->max == 1) snprintf(sub, sizeof sub, "%s/%s", path, cs->name);
        else snprintf(sub, sizeof sub, "%s/%s[%zu]", path, cs->name, idx);
        if (idx > cs->max) {
            if (idx == cs->max + 1) {
                char detail[160];
                snprintf(detail, sizeof detail, "<%s> appears more than %zu time%s in <%s>", cs->name, cs->max,
                         cs->max == 1 ? "" : "s", spec->name);
                add_issue(k, AW_CONTRACT_TOO_MANY, sub, ch, "%s", detail);
            }
            continue;
        }
        check_elem(k, cs, ch, sub);
    }
    for (size_t j = 0; j < nspec; j++) {
        const c_elem *cs = &spec->children[j];
        if (counts[j] < cs->min) {
            snprintf(sub, sizeof sub, "%s/%s", path, cs->name);
            char detail[160];
            if (cs->min == 1) snprintf(detail, sizeof detail, "required element <%s> is missing", cs->name);
            else snprintf(detail, sizeof detail, "<%s> must appear at least %zu times", cs->name, cs->min);
            add_issue(k, AW_CONTRACT_MISSING_ELEMENT, sub, node, "%s", detail);
        }
    }
}

/* Parse and check; tree is kept for the caller on success. */
static int run_check(const aw_contract *c, const char *xml, size_t len, const aw_contract_options *opts,
                     size_t limit, x_tree *tree, checker *k) {
    memset(k, 0, sizeof *k);
    k->opts = opts;
    k->limit = limit;
    k->alloc = opts ? opts->alloc : NULL;
    aw_contract_issue issue;
    int rc = aw__contract_tree(xml, len, opts, c->root.name, tree, &issue);
    if (rc == AW_ENOMEM) return rc;
    if (rc) {
        add_issue(k, issue.code, issue.path, NULL, "%s", issue.message);
        if (k->count) {
            k->issues[0].line = issue.line;
            k->issues[0].column = issue.column;
        }
        return k->oom ? AW_ENOMEM : AW_EVALID;
    }
    char path[256];
    snprintf(path, sizeof path, "/%s", c->root.name);
    if (strcmp(tree->root->name, c->root.name) != 0) {
        char detail[200];
        snprintf(detail, sizeof detail, "the root element must be <%s>, not <%.80s>", c->root.name, tree->root->name);
        add_issue(k, AW_CONTRACT_WRONG_ROOT, path, tree->root, "%s", detail);
    } else {
        check_elem(k, &c->root, tree->root, path);
    }
    if (k->oom) return AW_ENOMEM;
    return k->count ? AW_EVALID : 0;
}

int aw_contract_validate(const aw_contract *c, const char *xml, size_t len,
                         const aw_contract_options *opts, aw_contract_issue **issues,
                         size_t *issue_count, aw_error *err) {
    if (!c || (!xml && len) || !issues || !issue_count) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *issues = NULL;
    *issue_count = 0;
    x_tree tree;
    checker k;
    int rc = run_check(c, xml ? xml : "", len, opts, SIZE_MAX, &tree, &k);
    aw__contract_tree_free(&tree); /* safe after a failed parse too */
    if (rc == AW_ENOMEM) {
        aw_free(k.alloc, k.issues);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    if (rc) {
        *issues = k.issues;
        *issue_count = k.count;
        aw__error_set(err, AW_EVALID, "%s: %s", k.issues[0].path[0] ? k.issues[0].path : "document",
                      k.issues[0].message);
        if (err) {
            err->line = k.issues[0].line;
            err->column = k.issues[0].column;
        }
        return AW_EVALID;
    }
    aw_free(k.alloc, k.issues);
    return 0;
}

/* ---- mapping to JSON -------------------------------------------------------- */

static aw_json_value *typed(aw_json_doc *doc, const c_value *v, const char *s, size_t n) {
    double d;
    /* Fixed: empty optional text of an integer, decimal, boolean or enum
     * element (attributes cannot be empty and valid) is null; it used to
     * come out as "" for numbers and enums and as false for booleans, a
     * value the model never wrote. */
    if (n == 0 && v->type != CT_STRING && v->type != CT_LIST) return aw_json_new_null(doc);
    switch (v->type) {
    case CT_INTEGER:
    case CT_DECIMAL:
        if (number_text(s, n, v->type == CT_DECIMAL, &d)) return aw_json_new_number(doc, d);
        return aw_json_new_string(doc, s, n);
    case CT_BOOLEAN: return aw_json_new_bool(doc, n == 4 && !memcmp(s, "true", 4));
    case CT_LIST: {
        aw_json_value *arr = aw_json_new_array(doc);
        size_t i = 0;
        while (arr && i <= n) {
            const char *comma = memchr(s + i, ',', n - i);
            size_t end = comma ? (size_t)(comma - s) : n;
            const char *item = s + i;
            size_t len = end - i;
            aw__contract_trim(&item, &len);
            if (len) {
                aw_json_value *sv = aw_json_new_string(doc, item, len);
                if (!sv || aw_json_array_push(doc, arr, sv)) return NULL;
            }
            if (!comma) break;
            i = end + 1;
        }
        return arr;
    }
    default: return aw_json_new_string(doc, s, n);
    }
}

static aw_json_value *map_elem(aw_json_doc *doc, const c_elem *spec, const x_node *node, int depth) {
    if (depth > 64) return NULL;
    const char *text = node->text;
    size_t tn = node->text_len;
    aw__contract_trim(&text, &tn);
    if (!spec->nattrs && !spec->nchildren) return typed(doc, &spec->text, text, tn);
    aw_json_value *obj = aw_json_new_object(doc);
    if (!obj) return NULL;
    for (size_t i = 0; i < spec->nattrs; i++) {
        const x_attr *xa = find_attr(node, spec->attrs[i].name);
        if (!xa) continue;
        const char *v = xa->value;
        size_t vn = xa->value_len;
        if (spec->attrs[i].v.type != CT_STRING) aw__contract_trim(&v, &vn);
        aw_json_value *jv = typed(doc, &spec->attrs[i].v, v, vn);
        if (!jv || aw_json_object_set(doc, obj, spec->attrs[i].name, strlen(spec->attrs[i].name), jv)) return NULL;
    }
    for (size_t j = 0; j < spec->nchildren; j++) {
        const c_elem *cs = &spec->children[j];
        aw_json_value *arr = cs->max > 1 ? aw_json_new_array(doc) : NULL;
        if (cs->max > 1 && !arr) return NULL;
        int found = 0;
        for (const x_node *ch = node->first; ch; ch = ch->next) {
            if (strcmp(ch->name, cs->name) != 0) continue;
            aw_json_value *cv = map_elem(doc, cs, ch, depth + 1);
            if (!cv) return NULL;
            found = 1;
            if (arr) {
                if (aw_json_array_push(doc, arr, cv)) return NULL;
            } else {
                if (aw_json_object_set(doc, obj, cs->name, strlen(cs->name), cv)) return NULL;
                break;
            }
        }
        if (arr && aw_json_object_set(doc, obj, cs->name, strlen(cs->name), arr)) return NULL;
        (void)found;
    }
    if (spec->has_text && tn) {
        aw_json_value *tv = typed(doc, &spec->text, text, tn);
        if (!tv || aw_json_object_set(doc, obj, "#text", 5, tv)) return NULL;
    }
    return obj;
}

int aw_contract_parse(const aw_contract *c, const char *xml, size_t len,
                      const aw_contract_options *opts, aw_json_doc **out, aw_error *err) {
    if (!c || (!xml && len) || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    x_tree tree;
    checker k;
    int rc = run_check(c, xml ? xml : "", len, opts, 1, &tree, &k);
    if (rc) {
        if (rc == AW_EVALID && k.count) {
            aw__error_set(err, AW_EVALID, "%s: %s", k.issues[0].path[0] ? k.issues[0].path : "document",
                          k.issues[0].message);
            if (err) {
                err->line = k.issues[0].line;
                err->column = k.issues[0].column;
            }
        } else {
            aw__error_set(err, AW_ENOMEM, "out of memory");
        }
        aw_free(k.alloc, k.issues);
        aw__contract_tree_free(&tree);
        return rc;
    }
    aw_free(k.alloc, k.issues);
    aw_json_doc *doc = aw_json_doc_new(opts ? opts->alloc : NULL);
    aw_json_value *root = doc ? map_elem(doc, &c->root, tree.root, 0) : NULL;
    aw__contract_tree_free(&tree);
    if (!root) {
        aw_json_doc_free(doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    aw_json_doc_set_root(doc, root);
    *out = doc;
    return 0;
}
