/* Compiling a schema: the walk over every subschema (a work list, no
 * recursion), the identifiers it meets ($id, $anchor, $dynamicAnchor),
 * dialects and vocabularies ($schema, $vocabulary), then references
 * resolved against everything compiled (loading registered and built-in
 * documents on demand), and loops of in-place references refused. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/schema.h"

/* How many meta-schemas a $schema may go through to reach a dialect. */
#define MAX_META_CHAIN 8

#define DEFAULT_BASE "urn:agentwire:schema"

typedef struct uri_entry {
    const char *key;
    size_t len;
    sc_node *node;
    int dynamic; /* an anchor made by $dynamicAnchor */
} uri_entry;

typedef struct val_entry {
    const aw_json_value *v;
    sc_node *node;
} val_entry;

typedef struct pending_ref {
    sc_node *from;
    uint16_t op; /* index in from's ops, which are placed once the node is done */
    const char *uri; /* absolute, resolved against the base in force */
    size_t len;
    const char *written; /* as written, for messages */
    int dynamic;
} pending_ref;

struct sc_compiler {
    aw_schema *s;
    const aw_schema_options *opts;
    aw_error *err;
    const aw_allocator *alloc;
    sc_node **work;
    size_t nwork, work_cap;
    val_entry *vals;
    size_t vals_cap, vals_count;
    uri_entry *uris;
    size_t uris_cap, uris_count;
    pending_ref *refs;
    size_t nrefs, refs_cap;
    int registry_loaded; /* every registered document was compiled */
};

aw_schema *aw__sc_schema(sc_compiler *c) { return c->s; }

void *aw__sc_alloc(sc_compiler *c, size_t n) {
    void *p = aw__arena_alloc(&c->s->arena, n ? n : 1);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

static char *arena_str(sc_compiler *c, const char *s, size_t n) {
    char *p = aw__arena_alloc(&c->s->arena, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

int aw__sc_node_path(const sc_node *n, aw_buf *out) {
    size_t total = 0;
    for (const sc_node *p = n; p; p = p->up) total += p->seg_len;
    if (aw_buf_reserve(out, total)) return AW_ENOMEM;
    char *end = out->data + out->len + total;
    for (const sc_node *p = n; p; p = p->up) {
        end -= p->seg_len;
        memcpy(end, p->seg, p->seg_len);
    }
    out->len += total;
    out->data[out->len] = '\0';
    return 0;
}

int aw__sc_fail(sc_compiler *c, int code, const sc_node *at, const char *keyword, const char *fmt, ...) {
    char msg[AW_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (code == AW_ENOMEM) return aw__error_set(c->err, code, "out of memory");
    const char *uri = at && at->res && at->res->named && at->res != c->s->root->res ? at->res->uri : "";
    aw_buf path;
    aw_buf_init(&path, c->alloc);
    if (at && aw__sc_node_path(at, &path)) return aw__error_set(c->err, AW_ENOMEM, "out of memory");
    /* the end of a long path says more than its start */
    size_t shown = path.len > 120 ? 120 : path.len;
    aw__error_set(c->err, code, "%s%s%s%.*s%s%s: %s", uri, *uri ? "#" : "", shown < path.len ? "..." : "", (int)shown,
                  path.data ? path.data + path.len - shown : "", keyword ? "/" : "", keyword ? keyword : "", msg);
    aw_buf_free(&path);
    return code;
}

/* ---- maps ------------------------------------------------------------------ */

static uint64_t ptr_hash(const void *p) {
    uint64_t h = (uint64_t)(uintptr_t)p;
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    return h ^ (h >> 33);
}

static sc_node *val_get(sc_compiler *c, const aw_json_value *v) {
    if (!c->vals_cap) return NULL;
    size_t k = (size_t)ptr_hash(v) & (c->vals_cap - 1);
    while (c->vals[k].v) {
        if (c->vals[k].v == v) return c->vals[k].node;
        k = (k + 1) & (c->vals_cap - 1);
    }
    return NULL;
}

static int val_put(sc_compiler *c, const aw_json_value *v, sc_node *n) {
    if (2 * (c->vals_count + 1) > c->vals_cap) {
        size_t cap = c->vals_cap ? 2 * c->vals_cap : 64;
        val_entry *g = aw_malloc(c->alloc, cap * sizeof *g);
        if (!g) return AW_ENOMEM;
        memset(g, 0, cap * sizeof *g);
        for (size_t i = 0; i < c->vals_cap; i++) {
            if (!c->vals[i].v) continue;
            size_t k = (size_t)ptr_hash(c->vals[i].v) & (cap - 1);
            while (g[k].v) k = (k + 1) & (cap - 1);
            g[k] = c->vals[i];
        }
        aw_free(c->alloc, c->vals);
        c->vals = g;
        c->vals_cap = cap;
    }
    size_t k = (size_t)ptr_hash(v) & (c->vals_cap - 1);
    while (c->vals[k].v) k = (k + 1) & (c->vals_cap - 1);
    c->vals[k].v = v;
    c->vals[k].node = n;
    c->vals_count++;
    return 0;
}

static uri_entry *uri_find(sc_compiler *c, const char *key, size_t len) {
    if (!c->uris_cap) return NULL;
    size_t k = (size_t)aw__sc_bytes_hash(key, len) & (c->uris_cap - 1);
    while (c->uris[k].key) {
        if (c->uris[k].len == len && !memcmp(c->uris[k].key, key, len)) return &c->uris[k];
        k = (k + 1) & (c->uris_cap - 1);
    }
    return NULL;
}

/* The first registration of a URI wins: a document's own $id is found
 * before a later copy of it. */
static int uri_put(sc_compiler *c, const char *key, size_t len, sc_node *n, int dynamic) {
    if (uri_find(c, key, len)) return 0;
    if (2 * (c->uris_count + 1) > c->uris_cap) {
        size_t cap = c->uris_cap ? 2 * c->uris_cap : 32;
        uri_entry *g = aw_malloc(c->alloc, cap * sizeof *g);
        if (!g) return AW_ENOMEM;
        memset(g, 0, cap * sizeof *g);
        for (size_t i = 0; i < c->uris_cap; i++) {
            if (!c->uris[i].key) continue;
            size_t k = (size_t)aw__sc_bytes_hash(c->uris[i].key, c->uris[i].len) & (cap - 1);
            while (g[k].key) k = (k + 1) & (cap - 1);
            g[k] = c->uris[i];
        }
        aw_free(c->alloc, c->uris);
        c->uris = g;
        c->uris_cap = cap;
    }
    char *copy = arena_str(c, key, len);
    if (!copy) return AW_ENOMEM;
    size_t k = (size_t)aw__sc_bytes_hash(key, len) & (c->uris_cap - 1);
    while (c->uris[k].key) k = (k + 1) & (c->uris_cap - 1);
    c->uris[k] = (uri_entry){copy, len, n, dynamic};
    c->uris_count++;
    return 0;
}

/* ---- nodes and the work list ------------------------------------------------- */

/* seg lives as long as the schema (the arena, or a literal). */
static sc_node *new_node(sc_compiler *c, const aw_json_value *v, sc_resource *res, const sc_node *up, const char *seg,
                         size_t seg_len, uint8_t dialect, uint8_t vocab) {
    sc_node *n = aw__sc_alloc(c, sizeof *n);
    if (!n) return NULL;
    n->src = v;
    n->res = res;
    n->up = up;
    n->seg = seg;
    n->seg_len = (uint32_t)seg_len;
    n->dialect = dialect;
    n->vocab = vocab;
    if (val_put(c, v, n)) return NULL;
    if (c->nwork == c->work_cap) {
        size_t cap = c->work_cap ? 2 * c->work_cap : 64;
        sc_node **g = aw_realloc(c->alloc, c->work, cap * sizeof *g);
        if (!g) return NULL;
        c->work = g;
        c->work_cap = cap;
    }
    c->work[c->nwork++] = n;
    return n;
}

int aw__sc_child(sc_compiler *c, sc_node *parent, const aw_json_value *sub, const char *seg, size_t seg_len,
                 sc_child *out) {
    if (sub->type != AW_JSON_OBJECT && sub->type != AW_JSON_BOOL)
        return aw__sc_fail(c, AW_ESYNTAX, parent, NULL, "%.*s must be a schema (an object or a boolean)", (int)seg_len,
                           seg + 1);
    char *s = arena_str(c, seg, seg_len);
    if (!s) return AW_ENOMEM;
    out->seg = s;
    out->seg_len = (uint32_t)seg_len;
    out->node = val_get(c, sub);
    if (out->node) return 0;
    out->node = new_node(c, sub, parent->res, parent, s, seg_len, parent->dialect, parent->vocab);
    return out->node ? 0 : aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
}

int aw__sc_seg_key(sc_compiler *c, const char *kw, const char *key, size_t key_len, sc_child *out) {
    aw_buf b;
    aw_buf_init(&b, c->alloc);
    int rc = aw_buf_putc(&b, '/');
    if (!rc) rc = aw_buf_append_str(&b, kw);
    if (!rc && key) rc = aw_buf_putc(&b, '/');
    if (!rc && key) rc = aw__sc_pointer_escape(&b, key, key_len);
    if (!rc) {
        out->seg = arena_str(c, b.data, b.len);
        out->seg_len = (uint32_t)b.len;
        if (!out->seg) rc = AW_ENOMEM;
    }
    aw_buf_free(&b);
    return rc;
}

int aw__sc_add_ref(sc_compiler *c, sc_node *n, uint16_t op, const aw_json_value *ref, int dynamic) {
    if (c->nrefs == c->refs_cap) {
        size_t cap = c->refs_cap ? 2 * c->refs_cap : 16;
        pending_ref *g = aw_realloc(c->alloc, c->refs, cap * sizeof *g);
        if (!g) return AW_ENOMEM;
        c->refs = g;
        c->refs_cap = cap;
    }
    aw_buf abs;
    aw_buf_init(&abs, c->alloc);
    int rc = aw__sc_uri_resolve(n->res->uri, n->res->uri_len, ref->u.str.ptr, ref->u.str.len, &abs);
    char *uri = rc ? NULL : arena_str(c, abs.data, abs.len);
    size_t len = abs.len;
    aw_buf_free(&abs);
    if (!uri) return AW_ENOMEM;
    c->refs[c->nrefs++] = (pending_ref){n, op, uri, len, ref->u.str.ptr, dynamic};
    return 0;
}

/* ---- dialects ----------------------------------------------------------------- */

static int is_uri(const aw_json_value *v, const char *a) {
    size_t n = strlen(a);
    return v->u.str.len == n && !memcmp(v->u.str.ptr, a, n);
}

/* Which dialect does a $schema value name? 0 known (*dialect set), 1 not
 * one of ours. */
static int known_dialect(const aw_json_value *v, uint8_t *dialect) {
    static const char *const d2020[] = {"https://json-schema.org/draft/2020-12/schema",
                                        "https://json-schema.org/draft/2020-12/schema#",
                                        "http://json-schema.org/draft/2020-12/schema",
                                        "http://json-schema.org/draft/2020-12/schema#"};
    static const char *const d7[] = {"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema",
                                     "https://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema"};
    for (size_t i = 0; i < 4; i++) {
        if (is_uri(v, d2020[i])) {
            *dialect = AW_SCHEMA_DRAFT_2020_12;
            return 0;
        }
        if (is_uri(v, d7[i])) {
            *dialect = AW_SCHEMA_DRAFT_7;
            return 0;
        }
    }
    return 1;
}

static int registered(sc_compiler *c, const char *uri, size_t len, const aw_json_value **out);

/* The vocabularies a 2020-12 meta-schema's $vocabulary turns on. */
static int vocab_of(sc_compiler *c, sc_node *at, const aw_json_value *vocab, uint8_t *out) {
    static const struct {
        const char *uri;
        uint8_t bit;
    } known[] = {
        {"https://json-schema.org/draft/2020-12/vocab/core", 0},
        {"https://json-schema.org/draft/2020-12/vocab/applicator", V_APPLICATOR},
        {"https://json-schema.org/draft/2020-12/vocab/unevaluated", V_UNEVALUATED},
        {"https://json-schema.org/draft/2020-12/vocab/validation", V_VALIDATION},
        {"https://json-schema.org/draft/2020-12/vocab/meta-data", 0},
        {"https://json-schema.org/draft/2020-12/vocab/format-annotation", 0},
        {"https://json-schema.org/draft/2020-12/vocab/format-assertion", V_FORMAT_ASSERT},
        {"https://json-schema.org/draft/2020-12/vocab/content", 0},
    };
    uint8_t bits = 0;
    for (size_t i = 0; i < vocab->u.obj.count; i++) {
        const aw_json_member *m = &vocab->u.obj.members[i];
        int found = 0;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            if (strlen(known[k].uri) == m->key_len && !memcmp(known[k].uri, m->key, m->key_len)) {
                bits |= known[k].bit;
                found = 1;
            }
        if (!found && aw_json_is_bool(&m->value) && m->value.u.b)
            return aw__sc_fail(c, AW_EVALID, at, "$schema", "the meta-schema requires the unknown vocabulary \"%.*s\"",
                               (int)(m->key_len > 120 ? 120 : m->key_len), m->key);
    }
    *out = bits;
    return 0;
}

/* Dialect and vocabularies from a $schema value. */
static int dialect_of(sc_compiler *c, sc_node *at, const aw_json_value *schema_kw, uint8_t *dialect, uint8_t *vocab) {
    if (!aw_json_is_string(schema_kw)) return aw__sc_fail(c, AW_ESYNTAX, at, "$schema", "must be a string");
    const aw_json_value *v = schema_kw;
    int have_vocab = 0;
    for (int depth = 0; depth < MAX_META_CHAIN; depth++) {
        if (known_dialect(v, dialect) == 0) {
            if (!have_vocab) *vocab = V_ALL;
            return 0;
        }
        const char *frag;
        size_t frag_len;
        size_t base = aw__sc_uri_split(v->u.str.ptr, v->u.str.len, &frag, &frag_len);
        const aw_json_value *meta;
        if (registered(c, v->u.str.ptr, base, &meta)) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
        if (!aw_json_is_object(meta)) break;
        const aw_json_value *voc = aw_json_get(meta, "$vocabulary");
        if (!have_vocab && aw_json_is_object(voc)) {
            if (vocab_of(c, at, voc, vocab)) return c->err ? c->err->code : AW_EVALID;
            have_vocab = 1;
        }
        const aw_json_value *next = aw_json_get(meta, "$schema");
        if (!aw_json_is_string(next) || next == v) break;
        v = next;
    }
    return aw__sc_fail(c, AW_EVALID, at, "$schema", "unknown dialect \"%.*s\" (known: %s, %s, or a registered meta-schema)",
                       (int)(schema_kw->u.str.len > 100 ? 100 : schema_kw->u.str.len), schema_kw->u.str.ptr,
                       aw_schema_draft_uri(AW_SCHEMA_DRAFT_2020_12), aw_schema_draft_uri(AW_SCHEMA_DRAFT_7));
}

/* ---- identifiers ---------------------------------------------------------------- */

static sc_resource *new_resource(sc_compiler *c, const char *uri, size_t len, int named) {
    sc_resource *r = aw__sc_alloc(c, sizeof *r);
    if (!r) return NULL;
    r->uri = arena_str(c, uri, len);
    r->uri_len = (uint32_t)len;
    r->named = named;
    return r->uri ? r : NULL;
}

static int anchor_name_ok(const aw_json_value *v) {
    if (!aw_json_is_string(v) || !v->u.str.len) return 0;
    const char *s = v->u.str.ptr;
    char c0 = s[0];
    if (!((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z') || c0 == '_')) return 0;
    for (size_t i = 1; i < v->u.str.len; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
              ch == '.'))
            return 0;
    }
    return 1;
}

static int put_anchor(sc_compiler *c, sc_node *n, const char *name, size_t len, int dynamic) {
    aw_buf key;
    aw_buf_init(&key, c->alloc);
    int rc = aw_buf_append(&key, n->res->uri, n->res->uri_len);
    if (!rc) rc = aw_buf_putc(&key, '#');
    if (!rc) rc = aw_buf_append(&key, name, len);
    if (!rc) {
        uri_entry *e = uri_find(c, key.data, key.len);
        if (e && dynamic) e->dynamic = 1, e->node = n;
        else rc = uri_put(c, key.data, key.len, n, dynamic);
    }
    aw_buf_free(&key);
    if (!rc && dynamic) {
        sc_resource *r = n->res;
        if (r->ndyn == r->dyn_cap) {
            uint32_t cap = r->dyn_cap ? 2 * r->dyn_cap : 4;
            sc_dynanchor *g = aw__sc_alloc(c, cap * sizeof *g);
            if (!g) return AW_ENOMEM;
            if (r->ndyn) memcpy(g, r->dyn, r->ndyn * sizeof *g);
            r->dyn = g;
            r->dyn_cap = cap;
        }
        char *nm = arena_str(c, name, len);
        if (!nm) return AW_ENOMEM;
        r->dyn[r->ndyn++] = (sc_dynanchor){{nm, len}, n};
    }
    return rc;
}

/* $schema, $id, $anchor and $dynamicAnchor of a node about to compile. */
static int identify(sc_compiler *c, sc_node *n, int is_root) {
    const aw_json_value *o = n->src;
    const aw_json_value *id = aw_json_get(o, "$id");
    const aw_json_value *sch = aw_json_get(o, "$schema");
    int draft7_ref = n->dialect == AW_SCHEMA_DRAFT_7 && aw_json_get(o, "$ref");
    if (sch && (is_root || (id && !draft7_ref))) {
        int rc = dialect_of(c, n, sch, &n->dialect, &n->vocab);
        if (rc) return rc;
        draft7_ref = n->dialect == AW_SCHEMA_DRAFT_7 && aw_json_get(o, "$ref");
    }
    if (id && !draft7_ref) {
        if (!aw_json_is_string(id)) return aw__sc_fail(c, AW_ESYNTAX, n, "$id", "must be a string");
        const char *frag;
        size_t frag_len;
        size_t base_len = aw__sc_uri_split(id->u.str.ptr, id->u.str.len, &frag, &frag_len);
        if (base_len == 0 && frag) {
            /* draft-07's "$id": "#name" is an anchor */
            if (n->dialect == AW_SCHEMA_DRAFT_7 && frag_len) {
                int rc = put_anchor(c, n, frag, frag_len, 0);
                if (rc) return aw__sc_fail(c, rc, n, NULL, "out of memory");
            }
        } else {
            aw_buf abs;
            aw_buf_init(&abs, c->alloc);
            int rc = aw__sc_uri_resolve(n->res->uri, n->res->uri_len, id->u.str.ptr, base_len, &abs);
            sc_resource *r = rc ? NULL : new_resource(c, abs.data, abs.len, 1);
            aw_buf_free(&abs);
            if (!r) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
            n->res = r;
            n->up = NULL;
            n->seg = "";
            n->seg_len = 0;
            if (uri_put(c, r->uri, r->uri_len, n, 0)) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
            if (n->dialect == AW_SCHEMA_DRAFT_7 && frag && frag_len && put_anchor(c, n, frag, frag_len, 0))
                return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
        }
    }
    if (n->dialect == AW_SCHEMA_DRAFT_2020_12) {
        static const char *const kws[] = {"$anchor", "$dynamicAnchor"};
        for (int k = 0; k < 2; k++) {
            const aw_json_value *a = aw_json_get(o, kws[k]);
            if (!a) continue;
            if (!anchor_name_ok(a))
                return aw__sc_fail(c, AW_ESYNTAX, n, kws[k], "must be a name (a letter or '_', then letters, digits, '-', '_', '.')");
            if (put_anchor(c, n, a->u.str.ptr, a->u.str.len, k == 1))
                return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
        }
    }
    return 0;
}

static int drain(sc_compiler *c) {
    while (c->nwork) {
        sc_node *n = c->work[--c->nwork];
        if (n->compiled) continue;
        n->compiled = 1;
        if (n->src->type == AW_JSON_BOOL) {
            n->is_false = !n->src->u.b;
            n->trivial = n->src->u.b;
            continue;
        }
        int rc = identify(c, n, 0);
        if (!rc) rc = aw__sc_compile_keywords(c, n);
        if (rc) return rc;
        n->trivial = !n->asserts && !n->nops;
    }
    return 0;
}

/* ---- documents ------------------------------------------------------------------- */

/* The document named uri: registered, or built in (parsed into the
 * schema's documents). 0 with *out (NULL when there is none), or AW_ENOMEM. */
static int registered(sc_compiler *c, const char *uri, size_t len, const aw_json_value **out) {
    *out = c->opts->registry ? aw__sc_registry_get(c->opts->registry, uri, len) : NULL;
    if (*out) return 0;
    size_t text_len;
    const char *text = aw__sc_meta_text(uri, len, &text_len);
    if (!text) return 0;
    aw_json_read_options ro = {c->alloc, 0, false};
    aw_json_doc *doc = NULL;
    if (aw_json_parse(text, text_len, &ro, &doc, NULL)) return AW_ENOMEM; /* the built-in texts are valid JSON */
    *out = aw_json_copy(c->s->docs, aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    return *out ? 0 : AW_ENOMEM;
}

/* Compile a whole document as a new root resource named uri. */
static int add_document(sc_compiler *c, const aw_json_value *doc, const char *uri, size_t len, int named,
                        sc_node **out) {
    sc_resource *r = new_resource(c, uri, len, named);
    if (!r) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    uint8_t dialect = (uint8_t)c->opts->default_draft, vocab = V_ALL;
    sc_node *n = new_node(c, doc, r, NULL, "", 0, dialect, vocab);
    if (!n) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    if (uri_put(c, uri, len, n, 0)) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    if (doc->type == AW_JSON_OBJECT) {
        n->compiled = 1;
        int rc = identify(c, n, 1);
        if (!rc) rc = aw__sc_compile_keywords(c, n);
        if (rc) return rc;
        n->trivial = !n->asserts && !n->nops;
    }
    if (out) *out = n;
    return drain(c);
}

/* Load the document named uri (registered or built in) if not done yet. 1
 * when something was loaded. */
static int load_document(sc_compiler *c, const char *uri, size_t len) {
    if (uri_find(c, uri, len)) return 0;
    const aw_json_value *v = c->opts->registry ? aw__sc_registry_get(c->opts->registry, uri, len) : NULL;
    if (v) {
        v = aw_json_copy(c->s->docs, v);
        if (!v) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    } else if (registered(c, uri, len, &v)) {
        return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    }
    if (!v) return 0;
    if (v->type != AW_JSON_OBJECT && v->type != AW_JSON_BOOL) return 0;
    int rc = add_document(c, v, uri, len, 1, NULL);
    return rc ? rc : 1;
}

/* Every registered document, for identifiers that only an embedded $id
 * gives. */
static int load_registry(sc_compiler *c) {
    if (c->registry_loaded || !c->opts->registry) return 0;
    c->registry_loaded = 1;
    int loaded = 0;
    for (size_t i = 0; i < aw__sc_registry_count(c->opts->registry); i++) {
        const char *uri;
        aw__sc_registry_at(c->opts->registry, i, &uri);
        int rc = load_document(c, uri, strlen(uri));
        if (rc < 0) return rc;
        loaded |= rc;
    }
    return loaded;
}

/* ---- references ------------------------------------------------------------------- */

/* The node a resolved URI names: 1 and *out, 0 when nothing does, or a
 * negative code. */
static int lookup(sc_compiler *c, const char *uri, size_t len, sc_node **out, int *dynamic) {
    const char *frag;
    size_t frag_len;
    size_t base = aw__sc_uri_split(uri, len, &frag, &frag_len);
    *dynamic = 0;
    if (frag && frag_len && frag[0] != '/') {
        uri_entry *e = uri_find(c, uri, len);
        if (!e) return 0;
        *out = e->node;
        *dynamic = e->dynamic;
        return 1;
    }
    uri_entry *e = uri_find(c, uri, base);
    if (!e) return 0;
    if (!frag || !frag_len) {
        *out = e->node;
        return 1;
    }
    aw_buf ptr;
    aw_buf_init(&ptr, c->alloc);
    int rc = aw__sc_percent_decode(frag, frag_len, &ptr);
    if (rc) {
        aw_buf_free(&ptr);
        return rc == AW_ENOMEM ? AW_ENOMEM : 0;
    }
    const aw_json_value *target = aw__sc_pointer_get(e->node->src, ptr.data, ptr.len);
    aw_buf_free(&ptr);
    if (!target || (target->type != AW_JSON_OBJECT && target->type != AW_JSON_BOOL)) return 0;
    sc_node *n = val_get(c, target);
    if (!n) {
        /* a schema in a place no keyword made one (inside an unknown
         * keyword): compile it now */
        char *pointer = arena_str(c, frag, frag_len);
        n = pointer ? new_node(c, target, e->node->res, NULL, pointer, frag_len, e->node->dialect, e->node->vocab) : NULL;
        if (!n) return AW_ENOMEM;
        rc = drain(c);
        if (rc) return rc;
    }
    *out = n;
    return 1;
}

static int resolve_refs(sc_compiler *c) {
    while (c->nrefs) {
        pending_ref r = c->refs[--c->nrefs];
        sc_node *target = NULL;
        int dynamic = 0;
        int found = lookup(c, r.uri, r.len, &target, &dynamic);
        if (found == 0) {
            const char *frag;
            size_t frag_len;
            size_t base = aw__sc_uri_split(r.uri, r.len, &frag, &frag_len);
            int loaded = load_document(c, r.uri, base);
            if (loaded == 0) loaded = load_registry(c);
            if (loaded < 0) return loaded;
            if (loaded) found = lookup(c, r.uri, r.len, &target, &dynamic);
        }
        if (found < 0) return aw__sc_fail(c, found, NULL, NULL, "out of memory");
        if (found == 0) {
            size_t wlen = strlen(r.written);
            /* the resolved URI helps only when the base is a real one */
            int same = (wlen == r.len && !memcmp(r.written, r.uri, r.len)) || !r.from->res->named;
            return aw__sc_fail(c, AW_EVALID, r.from, r.dynamic ? "$dynamicRef" : "$ref", "cannot resolve \"%.*s\"%s%.*s%s",
                               (int)(wlen > 100 ? 100 : wlen), r.written, same ? "" : " (",
                               same ? 0 : (int)(r.len > 100 ? 100 : r.len), r.uri, same ? "" : ")");
        }
        sc_op *op = &r.from->ops[r.op];
        op->children[0].node = target;
        if (r.dynamic && dynamic) {
            /* only a $dynamicRef whose first target is a $dynamicAnchor of
             * the same name looks at the dynamic scope */
            const char *frag;
            size_t frag_len;
            aw__sc_uri_split(r.uri, r.len, &frag, &frag_len);
            op->u.dynref.anchor.ptr = arena_str(c, frag, frag_len);
            if (!op->u.dynref.anchor.ptr) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
            op->u.dynref.anchor.len = frag_len;
        }
    }
    return 0;
}

/* ---- loops ------------------------------------------------------------------------ */

static int in_place(const sc_op *op) {
    return op->kind == OP_REF || op->kind == OP_DYNREF || op->kind == OP_ALLOF || op->kind == OP_ANYOF ||
           op->kind == OP_ONEOF || op->kind == OP_NOT || op->kind == OP_IF || op->kind == OP_DEPSCHEMAS;
}

typedef struct dfs_frame {
    sc_node *n;
    uint32_t op, child;
} dfs_frame;

/* Depth-first over the edges that apply a schema to the same instance
 * location: a loop among them would run for ever at validation time. */
static int find_loops(sc_compiler *c, sc_node *start) {
    if (start->color) return 0;
    size_t cap = 64, top = 0;
    dfs_frame *st = aw_malloc(c->alloc, cap * sizeof *st);
    if (!st) return aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
    st[top++] = (dfs_frame){start, 0, 0};
    start->color = 1;
    int rc = 0;
    while (top && !rc) {
        dfs_frame *f = &st[top - 1];
        sc_node *next = NULL;
        while (f->op < f->n->nops && !next) {
            sc_op *op = &f->n->ops[f->op];
            if (!in_place(op) || f->child >= op->count) {
                f->op++;
                f->child = 0;
                continue;
            }
            next = op->children[f->child++].node;
        }
        if (!next) {
            f->n->color = 2;
            top--;
            continue;
        }
        if (next->color == 1) {
            aw_buf where;
            aw_buf_init(&where, c->alloc);
            if (aw__sc_node_path(next, &where)) {
                rc = aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
                break;
            }
            rc = aw__sc_fail(c, AW_EVALID, f->n, NULL, "a loop of references that never moves into the instance (through %s#%.100s)",
                             next->res->named ? next->res->uri : "", where.data);
            aw_buf_free(&where);
            break;
        }
        if (next->color == 2) continue;
        if (top == cap) {
            dfs_frame *g = aw_realloc(c->alloc, st, 2 * cap * sizeof *st);
            if (!g) {
                rc = aw__sc_fail(c, AW_ENOMEM, NULL, NULL, "out of memory");
                break;
            }
            st = g;
            cap *= 2;
        }
        next->color = 1;
        st[top++] = (dfs_frame){next, 0, 0};
    }
    aw_free(c->alloc, st);
    return rc;
}

/* ---- the entry point ------------------------------------------------------------------ */

void aw_schema_free(aw_schema *s) {
    if (!s) return;
    for (size_t i = 0; i < s->nregex; i++) aw__sc_regex_free(s->regexes[i]);
    aw_free(s->alloc, s->regexes);
    if (s->mctx) pcre2_match_context_free(s->mctx);
    if (s->cctx) pcre2_compile_context_free(s->cctx);
    if (s->gctx) pcre2_general_context_free(s->gctx);
    aw_json_doc_free(s->docs);
    aw__arena_free(&s->arena);
    aw_free(s->alloc, s);
}

aw_schema_draft aw_schema_draft_of(const aw_schema *s) { return s ? s->draft : AW_SCHEMA_DRAFT_2020_12; }

int aw_schema_compile(const aw_json_value *schema, const aw_schema_options *opts, aw_schema **out, aw_error *err) {
    static const aw_schema_options defaults;
    if (!out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    if (!opts) opts = &defaults;
    if (!schema || (schema->type != AW_JSON_OBJECT && schema->type != AW_JSON_BOOL))
        return aw__error_set(err, AW_ESYNTAX, "a schema must be an object or a boolean");
    if (opts->default_draft != AW_SCHEMA_DRAFT_2020_12 && opts->default_draft != AW_SCHEMA_DRAFT_7)
        return aw__error_set(err, AW_EINVAL, "unknown draft %d", (int)opts->default_draft);
    aw_schema *s = aw_malloc(opts->alloc, sizeof *s);
    if (!s) return aw__error_set(err, AW_ENOMEM, "out of memory");
    memset(s, 0, sizeof *s);
    s->alloc = opts->alloc;
    aw__arena_init(&s->arena, opts->alloc);
    s->format_assert = opts->format_assert;
    sc_compiler c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.opts = opts;
    c.err = err;
    c.alloc = opts->alloc;
    int rc = 0;
    s->docs = aw_json_doc_new(opts->alloc);
    const aw_json_value *copy = s->docs ? aw_json_copy(s->docs, schema) : NULL;
    if (!copy || aw__sc_regex_init(s)) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    const char *base = opts->base_uri ? opts->base_uri : DEFAULT_BASE;
    aw_buf norm;
    aw_buf_init(&norm, opts->alloc);
    if (!rc && aw__sc_uri_resolve(NULL, 0, base, strlen(base), &norm)) rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) {
        /* the root first, so that errors name places in it */
        sc_resource *r = new_resource(&c, norm.data, norm.len, opts->base_uri != NULL);
        sc_node *root = r ? new_node(&c, copy, r, NULL, "", 0, (uint8_t)opts->default_draft, V_ALL) : NULL;
        if (!root || uri_put(&c, r->uri, r->uri_len, root, 0)) {
            rc = aw__error_set(err, AW_ENOMEM, "out of memory");
        } else {
            s->root = root;
            c.nwork = 0;
            root->compiled = 1;
            if (copy->type == AW_JSON_BOOL) {
                root->is_false = !copy->u.b;
                root->trivial = copy->u.b;
            } else {
                rc = identify(&c, root, 1);
                if (!rc) rc = aw__sc_compile_keywords(&c, root);
                root->trivial = !root->asserts && !root->nops;
            }
            s->draft = (aw_schema_draft)root->dialect;
            if (!rc) rc = drain(&c);
            if (!rc) rc = resolve_refs(&c);
            for (size_t i = 0; !rc && i < c.vals_cap; i++)
                if (c.vals[i].v) rc = find_loops(&c, c.vals[i].node);
        }
    }
    aw_buf_free(&norm);
    aw_free(c.alloc, c.work);
    aw_free(c.alloc, c.vals);
    aw_free(c.alloc, c.uris);
    aw_free(c.alloc, c.refs);
    if (rc) {
        if (err && err->code == 0) aw__error_set(err, rc, "%s", aw_strerror(rc));
        aw_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int aw_schema_draft_parse(const char *s) {
    static const char *const d2020[] = {"2020-12", "2020", "draft2020-12", "draft-2020-12"};
    static const char *const d7[] = {"7", "07", "draft-07", "draft7", "draft-7"};
    if (!s) return -1;
    for (size_t i = 0; i < sizeof d2020 / sizeof d2020[0]; i++)
        if (!strcmp(s, d2020[i])) return AW_SCHEMA_DRAFT_2020_12;
    for (size_t i = 0; i < sizeof d7 / sizeof d7[0]; i++)
        if (!strcmp(s, d7[i])) return AW_SCHEMA_DRAFT_7;
    return -1;
}

const char *aw_schema_draft_uri(aw_schema_draft d) {
    return d == AW_SCHEMA_DRAFT_7 ? "http://json-schema.org/draft-07/schema#" : "https://json-schema.org/draft/2020-12/schema";
}
