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
    const c_elem *root;
    int strict;
    size_t max_depth, max_attrs;
    size_t depth;
    aw_contract_issue *issue;
    int failed; /* an issue other than malformed XML was set */
    int listening; /* on_text is set */
    /* Character data, in an area of the strings arena that never moves
     * (nodes point into it). The open elements' text is stacked, innermost
     * last; the innermost's is [region_start(), text_len). Everything below
     * `kept` is the text of closed elements, left in place as their nodes'
     * strings: an element that opened when no open element had text
     * pending (no mixed content above it, the usual case) leaves its
     * trimmed text where it is, terminated, when it closes. In mixed
     * content it is copied out and cut off instead, so that the text
     * pending above it stays in one piece. No text is copied in the usual
     * case, and there is no buffer besides. The area is as long as the
     * document, up to 64 KiB; when full, a new one twice as long takes the
     * pending text (text_room). */
    char *text;
    size_t text_len, text_cap;
    size_t kept;
    size_t text_start[256];         /* text_len when the element at that depth opened */
    unsigned char nothing_pending[256]; /* ... and whether text_len was kept then */
    x_node *open[256]; /* NULL for elements inside an undeclared one */
} builder;

/* Issues found while expat runs (limits, encoding) are rare: their position
 * is asked of expat directly. */
static void set_issue(builder *b, aw_contract_code code, const char *msg) {
    if (b->failed) return;
    b->failed = 1;
    b->issue->code = code;
    b->issue->path[0] = '\0';
    b->issue->line = (size_t)XML_GetCurrentLineNumber(b->x.parser) + b->tree->line_base - 1;
    b->issue->column = (size_t)XML_GetCurrentColumnNumber(b->x.parser) + 1 +
                       (XML_GetCurrentLineNumber(b->x.parser) == 1 ? b->tree->col_base - 1 : 0);
    snprintf(b->issue->message, sizeof b->issue->message, "%s", msg);
    XML_StopParser(b->x.parser, XML_FALSE);
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

/* s and its terminator */
static char *copy(aw_arena *arena, const char *s, size_t n) {
    char *p = aw__arena_alloc(arena, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n + 1);
    return p;
}

static x_node *new_node(builder *b, const char *name, const c_elem *decl, size_t extra) {
    x_node *n = aw__arena_alloc(&b->tree->arena, sizeof *n + extra);
    if (!n) return NULL;
    n->name = name;
    n->decl = decl;
    n->values = NULL;
    n->unknown = NULL;
    n->nunknown = 0;
    n->text = "";
    n->text_len = 0;
    n->first = n->last = n->next = NULL;
    n->offset = (size_t)XML_GetCurrentByteIndex(b->x.parser);
    n->line = n->column = 0;
    return n;
}

/* Names mostly differ in their first byte: no strcmp call for those. */
static int same_name(const char *a, const char *b) { return a[0] == b[0] && strcmp(a, b) == 0; }

static const c_elem *child_decl(const c_elem *parent, const char *name) {
    size_t n = parent->nchildren < 64 ? parent->nchildren : 64; /* as many as the checker counts */
    for (size_t j = 0; j < n; j++)
        if (same_name(parent->children[j].name, name)) return &parent->children[j];
    return NULL;
}

static size_t attr_decl(const c_elem *decl, const char *name) {
    size_t j = 0;
    while (j < decl->nattrs && !same_name(decl->attrs[j].name, name)) j++;
    return j;
}

/* A declared element: the name is the declaration's, attribute values are
 * copied into their declaration's slot (all in one piece of the strings
 * arena), undeclared attributes are kept by name in strict mode and
 * dropped otherwise. */
static x_node *declared_node(builder *b, const c_elem *decl, const XML_Char **atts, size_t nattrs) {
    x_node *n = new_node(b, decl->name, decl, decl->nattrs * sizeof(x_value));
    if (!n) return NULL;
    n->values = (x_value *)(n + 1);
    for (size_t j = 0; j < decl->nattrs; j++) n->values[j].s = NULL, n->values[j].len = 0;
    size_t bytes = 0;
    for (size_t i = 0; i < nattrs; i++) {
        size_t j = attr_decl(decl, atts[2 * i]);
        if (j < decl->nattrs) {
            n->values[j].s = atts[2 * i + 1]; /* expat's, until copied below */
            n->values[j].len = strlen(atts[2 * i + 1]);
            bytes += n->values[j].len + 1;
        } else if (b->strict) {
            if (!n->unknown && !(n->unknown = aw__arena_alloc(&b->tree->arena, nattrs * sizeof *n->unknown)))
                return NULL;
            if (!(n->unknown[n->nunknown++] = copy(&b->tree->arena, atts[2 * i], strlen(atts[2 * i])))) return NULL;
        }
    }
    char *p = bytes ? aw__arena_alloc(b->tree->strings, bytes) : NULL;
    if (bytes && !p) return NULL;
    for (size_t j = 0; j < decl->nattrs; j++) {
        x_value *v = &n->values[j];
        if (!v->s) continue;
        memcpy(p, v->s, v->len + 1);
        v->s = p;
        p += v->len + 1;
    }
    return n;
}

/* An undeclared element: only its name is kept, for the issue that
 * reports it (strict mode, or a wrong root). */
static x_node *undeclared_node(builder *b, const XML_Char *name) {
    char *copied = copy(&b->tree->arena, name, strlen(name));
    return copied ? new_node(b, copied, NULL, 0) : NULL;
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len);

/* Text is read only where someone looks at it: in a declared element
 * whose contract has text, or that maps to its text (no attributes, no
 * children), or in strict mode (text where the contract has none is an
 * issue). Elsewhere, expat is told not to report it at all: the
 * indentation between elements costs no call. */
static void listen_to_text(builder *b, const x_node *open) {
    const c_elem *d = open ? open->decl : NULL;
    int wanted = d && (d->has_text || b->strict || (!d->nattrs && !d->nchildren));
    if (wanted != b->listening) XML_SetCharacterDataHandler(b->x.parser, wanted ? on_text : NULL);
    b->listening = wanted;
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
    x_node *parent = b->depth ? b->open[b->depth - 1] : NULL;
    x_node *n = NULL;
    if (!b->depth || (parent && parent->decl)) {
        const c_elem *decl = parent ? child_decl(parent->decl, name) : same_name(name, b->root->name) ? b->root : NULL;
        n = decl ? declared_node(b, decl, atts, nattrs) : undeclared_node(b, name);
        if (!n) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
        if (!parent) b->tree->root = n;
        else if (parent->last) parent->last->next = n;
        else parent->first = n;
        if (parent) parent->last = n;
    } /* else inside an undeclared element, which nothing looks into */
    b->open[b->depth] = n;
    b->text_start[b->depth] = b->text_len;
    b->nothing_pending[b->depth] = b->text_len == b->kept;
    b->depth++;
    listen_to_text(b, n);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static int all_space(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!is_space(s[i])) return 0;
    return 1;
}

static size_t region_start(const builder *b, size_t depth) {
    return b->text_start[depth] > b->kept ? b->text_start[depth] : b->kept;
}

/* A new area for n more bytes of text: twice as long as the last, or
 * more; only the pending text moves (what is kept stays where the nodes
 * point), so the copying stays linear in the text. */
static int text_room(builder *b, size_t n) {
    size_t pending = b->text_len - b->kept;
    size_t cap = b->text_cap < SIZE_MAX / 2 ? b->text_cap * 2 : SIZE_MAX;
    if (n > SIZE_MAX - 1 - pending) return -1;
    if (cap < pending + n + 1) cap = pending + n + 1;
    char *area = aw__arena_alloc(b->tree->strings, cap);
    if (!area) return -1;
    if (pending) memcpy(area, b->text + b->kept, pending);
    for (size_t d = 0; d < b->depth; d++)
        b->text_start[d] = b->text_start[d] > b->kept ? b->text_start[d] - b->kept : 0;
    b->text = area;
    b->text_len = pending;
    b->text_cap = cap;
    b->kept = 0;
    return 0;
}

/* expat hands text over in many small pieces (each line break, each
 * entity, the indentation between elements). Leading whitespace is
 * dropped at once: the text is kept trimmed. */
static void XMLCALL on_text(void *ud, const XML_Char *s, int len) {
    builder *b = ud;
    if (b->failed || b->x.stopped || !b->depth) return;
    const x_node *open = b->open[b->depth - 1];
    if (!open || !open->decl) return; /* no one reads the text of undeclared elements */
    size_t n = (size_t)len;
    if (b->text_len == region_start(b, b->depth - 1) && all_space(s, n)) return;
    if (n > b->text_cap - b->text_len && text_room(b, n)) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
    memcpy(b->text + b->text_len, s, n);
    b->text_len += n;
}


/* The element's text is kept trimmed: the checker and the mapping both
 * use it so. */
static void XMLCALL on_end(void *ud, const XML_Char *name) {
    builder *b = ud;
    (void)name;
    if (b->failed || b->x.stopped) return;
    b->depth--;
    listen_to_text(b, b->depth ? b->open[b->depth - 1] : NULL);
    x_node *n = b->open[b->depth];
    size_t start = region_start(b, b->depth);
    if (b->text_len == start) return; /* only declared elements have text */
    char *t = b->text + start;
    size_t len = b->text_len - start;
    while (len && is_space(*t)) t++, len--; /* the leading part is dropped already, unless after a child */
    while (len && is_space(t[len - 1])) len--;
    size_t end = (size_t)(t - b->text) + len; /* where its terminator goes */
    if (!len) {
        b->text_len = start;
    } else if (b->nothing_pending[b->depth] && end < b->text_cap) {
        t[len] = '\0';
        b->kept = b->text_len = end + 1;
    } else {
        char *p = aw__arena_alloc(b->tree->strings, len + 1);
        if (!p) return aw__expat_fail(&b->x, AW_ENOMEM, "out of memory");
        memcpy(p, t, len);
        p[len] = '\0';
        t = p;
        b->text_len = start;
    }
    if (len) {
        n->text = t;
        n->text_len = len;
    }
}

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

int aw__contract_tree(const char *xml, size_t len, const aw_contract_options *opts, const c_elem *root,
                      aw_arena *strings, x_tree *tree, aw_contract_issue *issue) {
    const char *root_name = root->name;
    const aw_allocator *alloc = opts ? opts->alloc : NULL;
    size_t max_bytes = (opts && opts->max_bytes) ? opts->max_bytes : (16u << 20);
    aw__arena_init(&tree->arena, alloc);
    tree->strings = strings ? strings : &tree->arena;
    tree->root = NULL;
    tree->text = NULL;
    tree->len = 0;
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
    tree->text = xml;
    tree->len = len;
    tree->line_base = line_base;
    tree->col_base = col_base;
    /* Start the arena in one block of what a reply usually needs instead of
     * growing it in steps from 4 KiB: about 100 bytes per element (half the
     * document's length is plenty), plus the strings when they go here (at
     * most the document's length). Capped, as a large document may be
     * mostly elements the contract does not declare, which take nothing. */
    size_t guess = len / 2 + 1024 + (strings ? 0 : len);
    if (aw__arena_reserve(&tree->arena, guess < (1u << 20) ? guess : (1u << 20))) return AW_ENOMEM;
    builder b;
    b.tree = tree;
    b.root = root;
    b.strict = opts && opts->strict;
    b.issue = issue;
    b.failed = b.listening = 0;
    b.depth = 0;
    b.max_depth = (opts && opts->max_depth) ? opts->max_depth : 64;
    if (b.max_depth > 256) b.max_depth = 256;
    b.max_attrs = (opts && opts->max_attributes) ? opts->max_attributes : 64;
    b.text_len = b.kept = 0;
    b.text_cap = len < 65536 ? len + 1 : 65536;
    if (!(b.text = aw__arena_alloc(tree->strings, b.text_cap))) return AW_ENOMEM;
    aw_error err;
    int rc = aw__expat_init(&b.x, alloc, &err);
    if (!rc) {
        XML_SetElementHandler(b.x.parser, on_start, on_end);
        XML_SetXmlDeclHandler(b.x.parser, on_decl);
        rc = aw__expat_parse(&b.x, xml, len);
        if (b.failed) {
            rc = AW_EVALID;
        } else if (rc && rc != AW_ENOMEM) {
            issue->code = AW_CONTRACT_MALFORMED;
            issue->line = err.line + line_base - 1;
            issue->column = err.column + (err.line == 1 ? col_base - 1 : 0);
            snprintf(issue->message, sizeof issue->message, "%s", err.message);
            rc = AW_EVALID;
        }
    }
    aw__expat_free(&b.x);
    if (rc) aw__contract_tree_free(tree);
    return rc;
}

/* Advance a position (line, column in characters) up to offset to,
 * counting as expat does: a line ends at LF, CR LF or CR; a column is a
 * character, so UTF-8 continuation bytes do not count (everything before
 * a node was accepted by expat, so it is valid UTF-8). */
typedef struct cursor {
    size_t pos, line, column; /* column 0-based, as expat's */
} cursor;

static void advance(cursor *c, const char *text, size_t len, size_t to) {
    size_t i = c->pos, line = c->line, column = c->column;
    while (i < to) {
        unsigned char ch = (unsigned char)text[i++];
        if (ch == '\n' || ch == '\r') {
            if (ch == '\r' && i < len && text[i] == '\n') i++;
            line++;
            column = 0;
        } else if ((ch & 0xC0) != 0x80) {
            column++;
        }
    }
    c->pos = i;
    c->line = line;
    c->column = column;
}

/* Nodes in document order have increasing offsets: one pass over the text. */
static void locate_nodes(x_tree *tree, x_node *n, cursor *c) {
    for (; n; n = n->next) {
        advance(c, tree->text, tree->len, n->offset);
        n->line = c->line + tree->line_base - 1;
        n->column = c->column + 1 + (c->line == 1 ? tree->col_base - 1 : 0);
        locate_nodes(tree, n->first, c);
    }
}

void aw__contract_tree_locate(x_tree *tree) {
    if (!tree->root || tree->root->line) return;
    cursor c = {0, 1, 0};
    locate_nodes(tree, tree->root, &c);
}

void aw__contract_tree_free(x_tree *tree) {
    aw__arena_free(&tree->arena);
    tree->root = NULL;
}
