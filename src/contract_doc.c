/* Reading a contract document into a small element tree with expat:
 * DOCTYPEs refused, encodings other than UTF-8 refused, and limits on
 * depth, size and attributes per element. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal/contract.h"
#include "internal/errors.h"
#include "internal/expat.h"

typedef struct builder {
    aw_expat x; /* first: expat's user data points here */
    x_tree *tree;
    const aw_contract_options *opts;
    size_t max_depth, max_attrs;
    x_node *stack[256];
    aw_buf text[256];
    size_t depth;
    aw_contract_issue *issue;
    int failed; /* an issue other than malformed XML was set */
    size_t line_base, col_base; /* position of the extracted part in the whole input */
} builder;

static void set_issue(builder *b, aw_contract_code code, const char *msg) {
    if (b->failed) return;
    b->failed = 1;
    b->issue->code = code;
    b->issue->path[0] = '\0';
    b->issue->line = (size_t)XML_GetCurrentLineNumber(b->x.parser) + b->line_base - 1;
    b->issue->column = (size_t)XML_GetCurrentColumnNumber(b->x.parser) + 1 +
                       (XML_GetCurrentLineNumber(b->x.parser) == 1 ? b->col_base - 1 : 0);
    snprintf(b->issue->message, sizeof b->issue->message, "%s", msg);
    XML_StopParser(b->x.parser, XML_FALSE);
}

static char *copy(builder *b, const char *s, size_t n) {
    char *p = aw__arena_alloc(&b->tree->arena, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

static void XMLCALL on_decl(void *ud, const XML_Char *version, const XML_Char *encoding, int standalone) {
    builder *b = ud;
    (void)version;
    (void)standalone;
    if (!encoding) return;
    char low[16];
    size_t n = strlen(encoding);
    if (n >= sizeof low) n = sizeof low - 1;
    for (size_t i = 0; i < n; i++) low[i] = (char)tolower((unsigned char)encoding[i]);
    low[n] = '\0';
    if (strcmp(low, "utf-8") != 0 && strcmp(low, "utf8") != 0) {
        char msg[120];
        snprintf(msg, sizeof msg, "the document declares encoding \"%.40s\"; only UTF-8 is accepted", encoding);
        set_issue(b, AW_CONTRACT_MALFORMED, msg);
    }
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    builder *b = ud;
    if (b->failed || b->x.stopped) return;
    if (b->depth >= b->max_depth) {
        char msg[96];
        snprintf(msg, sizeof msg, "elements nested deeper than %zu levels", b->max_depth);
        return set_issue(b, AW_CONTRACT_LIMIT, msg);
    }
    size_t nattrs = 0;
    while (atts[2 * nattrs]) nattrs++;
    if (nattrs > b->max_attrs) {
        char msg[96];
        snprintf(msg, sizeof msg, "an element with more than %zu attributes", b->max_attrs);
        return set_issue(b, AW_CONTRACT_LIMIT, msg);
    }
    x_node *n = aw__arena_alloc(&b->tree->arena, sizeof *n);
    if (!n) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
    memset(n, 0, sizeof *n);
    n->name = copy(b, name, strlen(name));
    n->line = (size_t)XML_GetCurrentLineNumber(b->x.parser) + b->line_base - 1;
    n->column = (size_t)XML_GetCurrentColumnNumber(b->x.parser) + 1 +
                (XML_GetCurrentLineNumber(b->x.parser) == 1 ? b->col_base - 1 : 0);
    n->nattrs = nattrs;
    n->attrs = nattrs ? aw__arena_alloc(&b->tree->arena, nattrs * sizeof *n->attrs) : NULL;
    if (!n->name || (nattrs && !n->attrs)) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
    for (size_t i = 0; i < nattrs; i++) {
        size_t vl = strlen(atts[2 * i + 1]);
        n->attrs[i].name = copy(b, atts[2 * i], strlen(atts[2 * i]));
        n->attrs[i].value = copy(b, atts[2 * i + 1], vl);
        n->attrs[i].value_len = vl;
        if (!n->attrs[i].name || !n->attrs[i].value) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
    }
    if (b->depth) {
        x_node *parent = b->stack[b->depth - 1];
        if (parent->last) parent->last->next = n;
        else parent->first = n;
        parent->last = n;
    } else {
        b->tree->root = n;
    }
    b->stack[b->depth] = n;
    aw_buf_clear(&b->text[b->depth]);
    b->depth++;
}

static void XMLCALL on_end(void *ud, const XML_Char *name) {
    builder *b = ud;
    (void)name;
    if (b->failed || b->x.stopped) return;
    b->depth--;
    x_node *n = b->stack[b->depth];
    aw_buf *t = &b->text[b->depth];
    n->text = copy(b, t->data ? t->data : "", t->len);
    n->text_len = t->len;
    if (!n->text) aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    builder *b = ud;
    if (b->failed || b->x.stopped || !b->depth) return;
    if (aw_buf_append(&b->text[b->depth - 1], s, (size_t)len)) aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The first complete "<root ...>...</root>" (or "<root .../>") in the text:
 * the first root element to end, from the nearest opening before its end.
 * (Fixed: the first opening used to be taken, so a mention of <root> in the
 * prose before the document made the extract malformed; and an opening
 * without a closing after it stopped the search.) One pass, linear time:
 * the '>' that ends an opening is searched for once and reused. */
static int extract(const char *xml, size_t len, const char *root, size_t *start, size_t *end) {
    size_t rl = strlen(root);
    size_t open = SIZE_MAX;
    const char *gt = NULL; /* the first '>' at or after the last opening seen */
    for (size_t i = 0; i + rl + 1 < len; i++) {
        if (xml[i] != '<') continue;
        if (xml[i + 1] == '/') {
            if (open == SIZE_MAX || i + 2 + rl > len || memcmp(xml + i + 2, root, rl) != 0) continue;
            size_t k = i + 2 + rl;
            while (k < len && is_space(xml[k])) k++;
            if (k < len && xml[k] == '>') {
                *start = open;
                *end = k + 1;
                return 1;
            }
            continue;
        }
        if (memcmp(xml + i + 1, root, rl) != 0) continue;
        char c = xml[i + 1 + rl];
        if (!(c == '>' || c == '/' || is_space(c))) continue;
        if (!gt || gt < xml + i) gt = memchr(xml + i, '>', len - i);
        if (!gt) break; /* no '>' after here: nothing can complete */
        if (gt[-1] == '/') { /* a self-closing root */
            *start = i;
            *end = (size_t)(gt - xml) + 1;
            return 1;
        }
        open = i;
    }
    return 0;
}

int aw__contract_tree(const char *xml, size_t len, const aw_contract_options *opts, const char *root_name,
                      x_tree *tree, aw_contract_issue *issue) {
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    size_t max_bytes = (opts && opts->max_bytes) ? opts->max_bytes : (16u << 20);
    aw__arena_init(&tree->arena, alloc);
    tree->root = NULL;
    memset(issue, 0, sizeof *issue);
    if (len > max_bytes) {
        issue->code = AW_CONTRACT_LIMIT;
        issue->line = issue->column = 1;
        snprintf(issue->message, sizeof issue->message, "the document is larger than the limit of %zu bytes", max_bytes);
        return AW_EVALID;
    }
    size_t line_base = 1, col_base = 1;
    if (opts && opts->extract) {
        size_t s, e;
        if (!extract(xml, len, root_name, &s, &e)) {
            issue->code = AW_CONTRACT_NOT_FOUND;
            issue->line = issue->column = 1;
            snprintf(issue->message, sizeof issue->message, "no complete <%s> document in the text", root_name);
            return AW_EVALID;
        }
        /* where the extract starts, counted the way expat and aw_error count
         * (lines after LF, CR LF or CR; columns in characters). Fixed: the
         * column used to count bytes, so text such as "日本 <root>" before the
         * document shifted every column on that line. */
        aw_error at;
        aw__error_locate(&at, xml, len, s);
        line_base = at.line;
        col_base = at.column;
        xml += s;
        len = e - s;
    }
    builder *b = aw_malloc(alloc, sizeof *b);
    if (!b) return AW_ENOMEM;
    memset(b, 0, sizeof *b);
    b->tree = tree;
    b->opts = opts;
    b->issue = issue;
    b->line_base = line_base;
    b->col_base = col_base;
    b->max_depth = (opts && opts->max_depth) ? opts->max_depth : 64;
    if (b->max_depth > 256) b->max_depth = 256;
    b->max_attrs = (opts && opts->max_attributes) ? opts->max_attributes : 64;
    for (size_t i = 0; i < 256; i++) aw_buf_init(&b->text[i], alloc);
    aw_error err;
    int rc = aw__expat_init(&b->x, alloc, &err);
    if (!rc) {
        XML_SetElementHandler(b->x.parser, on_start, on_end);
        XML_SetCharacterDataHandler(b->x.parser, on_text);
        XML_SetXmlDeclHandler(b->x.parser, on_decl);
        rc = aw__expat_parse(&b->x, xml, len);
        if (b->failed) {
            rc = AW_EVALID;
        } else if (rc && rc != AW_ENOMEM) {
            issue->code = AW_CONTRACT_MALFORMED;
            issue->line = err.line + line_base - 1;
            issue->column = err.column + (err.line == 1 ? col_base - 1 : 0);
            snprintf(issue->message, sizeof issue->message, "%s", err.message);
            rc = AW_EVALID;
        }
    }
    aw__expat_free(&b->x);
    for (size_t i = 0; i < 256; i++) aw_buf_free(&b->text[i]);
    aw_free(alloc, b);
    if (rc) aw__contract_tree_free(tree);
    return rc;
}

void aw__contract_tree_free(x_tree *tree) {
    aw__arena_free(&tree->arena);
    tree->root = NULL;
}
