/* Private parts of the schema module: the compiled form shared by the
 * compiler (schema_compile.c, schema_keywords.c, schema_refs.c) and the
 * evaluator (schema_validate.c, schema_assert.c). */
#ifndef AW_INTERNAL_SCHEMA_H
#define AW_INTERNAL_SCHEMA_H

#include <stdint.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "agentwire/event.h"
#include "agentwire/schema.h"
#include "internal/arena.h"

/* Instance type bits, as the `type` keyword names them. An integer-valued
 * number has T_INT and T_NUM. */
enum { T_NULL = 1, T_BOOL = 2, T_INT = 4, T_NUM = 8, T_STR = 16, T_ARR = 32, T_OBJ = 64, T_ALL = 127 };

/* Assertions a node holds (sc_node.asserts). */
enum {
    A_TYPE = 1u << 0,
    A_CONST = 1u << 1,
    A_ENUM = 1u << 2,
    A_MULTIPLE = 1u << 3,
    A_MAX = 1u << 4,
    A_XMAX = 1u << 5,
    A_MIN = 1u << 6,
    A_XMIN = 1u << 7,
    A_MAXLEN = 1u << 8,
    A_MINLEN = 1u << 9,
    A_PATTERN = 1u << 10,
    A_FORMAT = 1u << 11,
    A_MAXITEMS = 1u << 12,
    A_MINITEMS = 1u << 13,
    A_UNIQUE = 1u << 14,
    A_MAXPROPS = 1u << 15,
    A_MINPROPS = 1u << 16,
    A_REQUIRED = 1u << 17,
    A_DEPREQ = 1u << 18
};
#define A_NUMBER_MASK (A_MULTIPLE | A_MAX | A_XMAX | A_MIN | A_XMIN)
#define A_STRING_MASK (A_MAXLEN | A_MINLEN | A_PATTERN | A_FORMAT)
#define A_ARRAY_MASK (A_MAXITEMS | A_MINITEMS | A_UNIQUE)
#define A_OBJECT_MASK (A_MAXPROPS | A_MINPROPS | A_REQUIRED | A_DEPREQ)

/* Vocabularies in force for a node (2020-12 $vocabulary; draft-07 has
 * them all). */
enum {
    V_APPLICATOR = 1u << 0,
    V_UNEVALUATED = 1u << 1,
    V_VALIDATION = 1u << 2,
    V_FORMAT_ASSERT = 1u << 3,
    V_ALL = V_APPLICATOR | V_UNEVALUATED | V_VALIDATION
};

typedef enum sc_format {
    FMT_NONE = 0, FMT_DATE_TIME, FMT_DATE, FMT_TIME, FMT_DURATION, FMT_EMAIL, FMT_HOSTNAME, FMT_IPV4,
    FMT_IPV6, FMT_URI, FMT_URI_REFERENCE, FMT_UUID, FMT_REGEX, FMT_JSON_POINTER, FMT_RELATIVE_JSON_POINTER
} sc_format;

/* A number bound: its double for the fast comparison, its value for the
 * exact one when the doubles tie. */
typedef struct sc_num {
    double d;
    const aw_json_value *v;
} sc_num;

typedef struct sc_regex {
    pcre2_code *code;
    const char *source; /* as written in the schema, for messages */
    size_t len;
    int jit;            /* JIT-compiled */
} sc_regex;

typedef struct sc_enum {
    const aw_json_value *values; /* the enum array */
    uint32_t *slots;             /* hash table of value index + 1 (0: empty); NULL for short enums */
    uint32_t mask;
    uint8_t types;               /* T_* of the values: a quick "cannot match" */
} sc_enum;

struct sc_node;

/* A subschema reached by an applicator: the node and the keyword path
 * from the parent node to it ("/properties/a", "/allOf/2", "/$ref"). */
typedef struct sc_child {
    struct sc_node *node;
    const char *seg;
    uint32_t seg_len;
} sc_child;

typedef struct sc_prop {
    aw_text name;
    uint64_t hash;
    sc_child child;
} sc_prop;

typedef struct sc_depreq {
    aw_text name;
    aw_text *required;
    uint32_t count;
} sc_depreq;

typedef enum sc_op_kind {
    OP_REF = 0,
    OP_DYNREF,
    OP_ALLOF,
    OP_ANYOF,
    OP_ONEOF,
    OP_NOT,
    OP_IF,           /* children: if, then (or NULL node), else (or NULL node) */
    OP_DEPSCHEMAS,   /* children with names[] */
    OP_PROPS,        /* properties, patternProperties, additionalProperties */
    OP_PROPNAMES,
    OP_ITEMS,        /* prefixItems (or items array) then items (or additionalItems) */
    OP_CONTAINS,
    OP_UNEVAL_ITEMS, /* these two come last */
    OP_UNEVAL_PROPS
} sc_op_kind;

typedef struct sc_op {
    uint8_t kind;
    uint32_t count;
    sc_child *children;
    union {
        struct {
            sc_prop *props;
            uint32_t nprops;
            uint32_t *table; /* hash slots of prop index + 1, for many properties */
            uint32_t mask;
            sc_regex **patterns; /* one per pattern child */
            sc_child *pattern_children;
            uint32_t npatterns;
            sc_child additional; /* node NULL when absent */
            const char *additional_kw; /* "additionalProperties" */
            /* the node's `required` names when all are among the first 64
             * properties: their bits, so a pass over the members checks
             * them (0: checked apart) */
            uint64_t required_mask;
        } props;
        struct {
            uint32_t nprefix;     /* children[0..nprefix) */
            int has_rest;         /* children[nprefix] applies to the rest */
            const char *rest_kw;  /* "items" or "additionalItems" */
        } items;
        struct {
            uint64_t min, max;
            int has_min, has_max;
        } contains;
        struct {
            aw_text anchor; /* the dynamic anchor's name; len 0: behaves as $ref */
        } dynref;
        aw_text *names; /* OP_DEPSCHEMAS */
    } u;
} sc_op;

struct sc_resource;

typedef struct sc_node {
    uint32_t asserts;
    uint8_t types;        /* A_TYPE: allowed T_* */
    uint8_t is_false;     /* the schema `false` */
    uint8_t trivial;      /* nothing to check: true, {} or only annotations */
    uint8_t uneval;       /* 1: unevaluatedProperties here, 2: unevaluatedItems here */
    uint8_t format;       /* sc_format, asserted when A_FORMAT */
    uint8_t type_only;    /* nothing but `type`: checked inline by the verdict pass */
    uint8_t json_ok;      /* `type` as bits over aw_json_type: every value of a set type passes */
    uint8_t int_only;     /* `type` takes integers but not all numbers */
    uint8_t required_by_props; /* `required` is checked by the OP_PROPS pass's mask */
    uint16_t nops;
    sc_op *ops;
    sc_num max, xmax, min, xmin;
    const aw_json_value *multiple_of;
    const aw_json_value *const_value;
    sc_enum *enumv;
    uint64_t max_len, min_len, max_items, min_items, max_props, min_props;
    sc_regex *pattern;
    aw_text *required;
    uint32_t nrequired;
    sc_depreq *depreq;
    uint32_t ndepreq;
    /* Where the node is within its resource: the path of `up` plus seg
     * (a resource's root has no `up`). Kept as a chain, not a string per
     * node, so that a deep schema costs memory linear in its size. */
    const struct sc_node *up;
    const char *seg;
    uint32_t seg_len;
    struct sc_resource *res;
    /* compile time only */
    const aw_json_value *src;
    uint8_t dialect;      /* aw_schema_draft */
    uint8_t vocab;        /* V_* */
    uint8_t color;        /* loop detection */
    uint8_t compiled;
} sc_node;

typedef struct sc_dynanchor {
    aw_text name;
    sc_node *node;
} sc_dynanchor;

typedef struct sc_resource {
    const char *uri;   /* absolute, without fragment */
    uint32_t uri_len;
    int named;         /* the URI came from $id or the caller, not made up */
    sc_dynanchor *dyn;
    uint32_t ndyn, dyn_cap;
    struct sc_resource *next;
} sc_resource;

struct aw_schema {
    const aw_allocator *alloc;
    aw_arena arena;        /* nodes, ops, strings */
    aw_json_doc *docs;     /* copies of every document compiled */
    sc_node *root;
    sc_regex **regexes;    /* to free */
    size_t nregex, regex_cap;
    pcre2_general_context *gctx;
    pcre2_compile_context *cctx;
    pcre2_match_context *mctx;
    aw_schema_draft draft;
    int format_assert;
};

/* ---- compile-time helpers (schema_compile.c) ------------------------------ */

/* Append the JSON Pointer of n within its resource. */
int aw__sc_node_path(const sc_node *n, aw_buf *out);

typedef struct sc_compiler sc_compiler;

/* Fill err with "<location>: message"; returns code. */
int aw__sc_fail(sc_compiler *c, int code, const sc_node *at, const char *keyword, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void *aw__sc_alloc(sc_compiler *c, size_t n);
/* A child node for value sub at "<parent path><seg>", compiled later
 * from the work list (seg is copied). */
int aw__sc_child(sc_compiler *c, sc_node *parent, const aw_json_value *sub, const char *seg, size_t seg_len,
                 sc_child *out);
/* "/kw" and "/kw/<escaped key or index>" segments, in the arena. */
int aw__sc_seg_key(sc_compiler *c, const char *kw, const char *key, size_t key_len, sc_child *out_seg);
aw_schema *aw__sc_schema(sc_compiler *c);
/* Register a pending $ref / $dynamicRef of node n (its op number op):
 * the op's child is filled with the target when resolved. */
int aw__sc_add_ref(sc_compiler *c, sc_node *n, uint16_t op, const aw_json_value *ref, int dynamic);

/* Keywords of one node (schema_keywords.c). */
int aw__sc_compile_keywords(sc_compiler *c, sc_node *n);

/* ---- numbers (schema_number.c) --------------------------------------------- */

/* Exact comparison of two JSON numbers: <0, 0, >0. */
int aw__sc_num_cmp(const aw_json_value *a, const aw_json_value *b);
/* Is the number integral (1.0, 1e2 are)? */
int aw__sc_num_is_integer(const aw_json_value *v);
/* Is x an exact multiple of m (m > 0)? */
int aw__sc_num_multiple(const aw_json_value *x, const aw_json_value *m);

/* ---- equality and hashing (schema_equal.c) --------------------------------- */

/* JSON equality (numbers by exact value, objects by their effective keys).
 * 1 equal, 0 not, AW_ENOMEM. */
int aw__sc_equal(const aw_json_value *a, const aw_json_value *b, const aw_allocator *alloc);
/* A hash consistent with aw__sc_equal; AW_ENOMEM leaves *h unset. */
int aw__sc_hash(const aw_json_value *v, const aw_allocator *alloc, uint64_t *h);
uint64_t aw__sc_bytes_hash(const char *s, size_t n);
/* Build the hash table of a long enum. */
int aw__sc_enum_build(sc_enum *e, aw_arena *arena, const aw_allocator *alloc);
/* 1 when v is one of e's values, 0 when not, AW_ENOMEM. */
int aw__sc_enum_has(const sc_enum *e, const aw_json_value *v, const aw_allocator *alloc);
/* uniqueItems: 1 unique, 0 not (*i, *j the first equal pair), AW_ENOMEM. */
int aw__sc_unique(const aw_json_value *arr, const aw_allocator *alloc, size_t *i, size_t *j);
/* Effective members of an object with duplicate keys (the last of each
 * key), in member order: fills idx (count entries) and returns how many,
 * or -1 when out of memory. */
long aw__sc_effective_members(const aw_json_value *obj, const aw_allocator *alloc, uint32_t *idx);
/* Type bits of a value. */
uint8_t aw__sc_type_bits(const aw_json_value *v);

/* ---- regular expressions (schema_regex.c) ------------------------------------ */

/* The PCRE2 contexts of a schema (its allocator, the match limits). */
int aw__sc_regex_init(aw_schema *s);
/* Translate an ECMAScript pattern to PCRE2 syntax (appended to out).
 * AW_ESYNTAX with *why set for what ECMAScript's `u` mode refuses. */
int aw__sc_regex_translate(const char *p, size_t n, aw_buf *out, const char **why);
/* Compile an ECMAScript pattern; *why / *offset on AW_ESYNTAX. */
int aw__sc_regex_compile(aw_schema *s, const char *p, size_t n, sc_regex **out, char *why, size_t why_size);
/* Is p[0..n) a pattern we can compile (format "regex")? */
int aw__sc_regex_valid(const aw_schema *s, const char *p, size_t n);
/* 1 match, 0 no match, or a negative PCRE2 error (limits hit). */
int aw__sc_regex_match(const sc_regex *re, const char *s, size_t n, pcre2_match_data **md,
                       const aw_schema *schema);
void aw__sc_regex_free(sc_regex *re);

/* ---- formats (schema_format.c) ----------------------------------------------- */

sc_format aw__sc_format_lookup(const char *name, size_t n);
const char *aw__sc_format_name(sc_format f);
int aw__sc_format_check(const aw_schema *s, sc_format f, const char *p, size_t n);

/* ---- URIs and pointers (schema_uri.c) ------------------------------------------ */

/* Resolve ref against base (RFC 3986 section 5.2), normalized: scheme and
 * host in lower case, dot segments removed, an empty fragment dropped.
 * Appended to out. */
int aw__sc_uri_resolve(const char *base, size_t base_len, const char *ref, size_t ref_len, aw_buf *out);
/* Split at '#': *frag points after it (NULL when absent). */
size_t aw__sc_uri_split(const char *uri, size_t len, const char **frag, size_t *frag_len);
/* Percent-decode s into out. -1 on a bad escape. */
int aw__sc_percent_decode(const char *s, size_t n, aw_buf *out);
/* Append key as a JSON Pointer token ("~0", "~1"). */
int aw__sc_pointer_escape(aw_buf *out, const char *key, size_t n);
/* Follow a JSON Pointer (already percent-decoded) from v; NULL when it
 * does not lead anywhere. */
const aw_json_value *aw__sc_pointer_get(const aw_json_value *v, const char *ptr, size_t n);
/* Is s a JSON Pointer / relative JSON Pointer (formats)? */
int aw__sc_is_json_pointer(const char *s, size_t n);

/* ---- built-in meta-schemas (schema_meta.c) ----------------------------------- */

/* The text of the built-in document with this URI (no fragment), or NULL. */
const char *aw__sc_meta_text(const char *uri, size_t len, size_t *text_len);

/* ---- registry (schema_registry.c) ---------------------------------------------- */

/* The registered document for uri (no fragment), or NULL. */
const aw_json_value *aw__sc_registry_get(const aw_schema_registry *r, const char *uri, size_t len);
size_t aw__sc_registry_count(const aw_schema_registry *r);
const aw_json_value *aw__sc_registry_at(const aw_schema_registry *r, size_t i, const char **uri);

#endif
