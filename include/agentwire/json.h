/* agentwire — JSON: a strict reader, a JSON.stringify-exact writer, a builder
 * and a streaming JSON-lines reader.
 *
 * Reading: RFC 8259 strictly, UTF-8 validated, no recursion on depth. The
 * document lives in one arena and is freed at once with aw_json_doc_free().
 * Strings are stored decoded and NUL-terminated (they may also contain NUL;
 * use the length). A lone surrogate escape such as "\ud800" is accepted, as
 * JSON.parse does, and stored as its 3-byte generalized UTF-8 form (ED A0 80),
 * which the writer turns back into "\ud800".
 *
 * Writing: the bytes JavaScript's JSON.stringify(value) or
 * JSON.stringify(value, null, indent) produces for the same value: integer-like
 * keys first in ascending order, shortest round-trip numbers in JavaScript
 * notation, JavaScript's string escapes, and for duplicate keys the last value
 * at the position of the first.
 */
#ifndef AGENTWIRE_JSON_H
#define AGENTWIRE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aw_json_type {
    AW_JSON_NULL = 0,
    AW_JSON_BOOL,
    AW_JSON_NUMBER,
    AW_JSON_STRING,
    AW_JSON_ARRAY,
    AW_JSON_OBJECT
} aw_json_type;

/* Value flags (aw_json_value.flags). */
enum {
    AW_JSON_F_INT = 1 << 0,        /* number: u.num.i holds its exact value */
    AW_JSON_F_DUPKEYS = 1 << 1,    /* object: some key occurs more than once */
    AW_JSON_F_INDEXKEYS = 1 << 2,  /* object: some key is an array index ("0", "17") */
    AW_JSON_F_UNCHECKED = 1 << 3   /* object: the two flags above are not known yet */
};

typedef struct aw_json_value aw_json_value;
typedef struct aw_json_member aw_json_member;

struct aw_json_value {
    uint8_t type;   /* aw_json_type */
    uint8_t flags;  /* AW_JSON_F_* */
    uint16_t reserved_;
    uint32_t num_len; /* number: length of u.num.text */
    union {
        bool b;
        struct { const char *ptr; size_t len; } str;
        /* text is the number as written in the input (or as the builder
         * formatted it); d its double value (may be +-inf for 1e400, as in
         * JavaScript); i is exact when flags has AW_JSON_F_INT. */
        struct { double d; int64_t i; const char *text; } num;
        struct { aw_json_value *items; size_t count; size_t cap; } arr;
        struct { aw_json_member *members; size_t count; size_t cap; } obj;
    } u;
};

struct aw_json_member {
    const char *key; /* decoded, NUL-terminated */
    size_t key_len;
    aw_json_value value;
};

/* A document: an arena holding every value, plus the root. */
typedef struct aw_json_doc aw_json_doc;

typedef struct aw_json_read_options {
    const aw_allocator *alloc; /* NULL: the default allocator */
    size_t max_depth;          /* nesting limit; 0 means the default, 1000 */
    bool allow_bom;            /* accept one leading UTF-8 BOM (JSON.parse does not) */
} aw_json_read_options;

#define AW_JSON_DEFAULT_MAX_DEPTH 1000

/* ---- reading ---------------------------------------------------------- */

/* Parse exactly one JSON text (surrounding whitespace allowed). opts may be
 * NULL. On failure *out is NULL and err says where and why, e.g.
 * "expected ',' or '}' after an object member" at line 3, column 17. */
int aw_json_parse(const char *text, size_t len, const aw_json_read_options *opts,
                  aw_json_doc **out, aw_error *err);

const aw_json_value *aw_json_doc_root(const aw_json_doc *doc);
void aw_json_doc_free(aw_json_doc *doc);

/* ---- reading values ----------------------------------------------------- */

static inline aw_json_type aw_json_type_of(const aw_json_value *v) { return v ? (aw_json_type)v->type : AW_JSON_NULL; }
static inline bool aw_json_is_string(const aw_json_value *v) { return v && v->type == AW_JSON_STRING; }
static inline bool aw_json_is_number(const aw_json_value *v) { return v && v->type == AW_JSON_NUMBER; }
static inline bool aw_json_is_object(const aw_json_value *v) { return v && v->type == AW_JSON_OBJECT; }
static inline bool aw_json_is_array(const aw_json_value *v) { return v && v->type == AW_JSON_ARRAY; }
static inline bool aw_json_is_bool(const aw_json_value *v) { return v && v->type == AW_JSON_BOOL; }
static inline bool aw_json_is_null(const aw_json_value *v) { return v && v->type == AW_JSON_NULL; }

/* Object member lookup by key, as JSON.parse sees it: the last of duplicate
 * keys wins. NULL when absent or when obj is not an object. */
const aw_json_value *aw_json_get(const aw_json_value *obj, const char *key);
const aw_json_value *aw_json_getn(const aw_json_value *obj, const char *key, size_t key_len);
/* Array element or NULL. */
const aw_json_value *aw_json_at(const aw_json_value *arr, size_t index);
/* Items of an array or members of an object; 0 for other types. For an
 * object with duplicate keys this counts every member as written. */
size_t aw_json_count(const aw_json_value *v);

/* Deep structural equality as JavaScript would see the values after
 * JSON.parse: numbers by double value, objects by their effective keys. */
bool aw_json_equal(const aw_json_value *a, const aw_json_value *b);

/* ---- writing ------------------------------------------------------------ */

typedef struct aw_json_write_options {
    int indent; /* as JSON.stringify's third argument: clamped to 0..10; 0 is compact */
    /* A lone surrogate (kept from a "\ud800" escape) as U+FFFD instead of
     * JSON.stringify's "\ud800" escape: output that strict consumers
     * (Python's json with UTF-8 text, Go, serde) take as valid Unicode.
     * The command writes its JSON records this way, except `json format`. */
    bool replace_lone_surrogates;
} aw_json_write_options;

/* Append JSON.stringify(v, null, indent) to out. opts may be NULL (compact).
 * Non-finite numbers are written as null, as JavaScript does. */
int aw_json_write(const aw_json_value *v, const aw_json_write_options *opts, aw_buf *out,
                  aw_error *err);

/* Append a string as a JSON string literal, quotes included, escaped as
 * JSON.stringify escapes it. Bytes that are not UTF-8 become U+FFFD, one
 * per maximal subpart (the Unicode Standard's practice); a 3-byte
 * surrogate form (a lone surrogate) becomes \udxxx, two in a row are two
 * escapes (never joined into one character). */
int aw_json_write_string(aw_buf *out, const char *s, size_t len);

/* aw_json_write_string under opts (only replace_lone_surrogates counts;
 * NULL is the default). */
int aw_json_write_string_opts(aw_buf *out, const char *s, size_t len, const aw_json_write_options *opts);

/* Append a number as JavaScript prints it (shortest round trip; NaN and
 * infinities as null, the JSON.stringify rule). */
int aw_json_write_number(aw_buf *out, double d);

/* ---- building ----------------------------------------------------------- */

/* An empty document to build values in. Values made by the functions below
 * belong to the document and are freed with it. They may be linked into
 * arrays and objects of the same document only. */
aw_json_doc *aw_json_doc_new(const aw_allocator *alloc);
void aw_json_doc_set_root(aw_json_doc *doc, aw_json_value *root);

/* Each returns NULL on allocation failure. */
aw_json_value *aw_json_new_null(aw_json_doc *doc);
aw_json_value *aw_json_new_bool(aw_json_doc *doc, bool b);
aw_json_value *aw_json_new_number(aw_json_doc *doc, double d);
aw_json_value *aw_json_new_int(aw_json_doc *doc, int64_t i);
/* Copies the bytes. */
aw_json_value *aw_json_new_string(aw_json_doc *doc, const char *s, size_t len);
aw_json_value *aw_json_new_array(aw_json_doc *doc);
aw_json_value *aw_json_new_object(aw_json_doc *doc);
/* Deep copy of a value from any document into doc. */
aw_json_value *aw_json_copy(aw_json_doc *doc, const aw_json_value *src);

/* Append a copy of *item (a shallow struct copy: containers are shared, so
 * build children before adding them or add them and then look them up). */
int aw_json_array_push(aw_json_doc *doc, aw_json_value *arr, const aw_json_value *item);
/* Set key to a copy of *val, as `obj[key] = val` does: an existing key keeps
 * its position and gets the new value; a new key goes last. Copies the key. */
int aw_json_object_set(aw_json_doc *doc, aw_json_value *obj, const char *key, size_t key_len,
                       const aw_json_value *val);
/* Shorthands for the common builder steps. */
int aw_json_object_set_string(aw_json_doc *doc, aw_json_value *obj, const char *key,
                              const char *s, size_t len);
int aw_json_object_set_int(aw_json_doc *doc, aw_json_value *obj, const char *key, int64_t i);
int aw_json_object_set_number(aw_json_doc *doc, aw_json_value *obj, const char *key, double d);
int aw_json_object_set_bool(aw_json_doc *doc, aw_json_value *obj, const char *key, bool b);
int aw_json_object_set_null(aw_json_doc *doc, aw_json_value *obj, const char *key);
/* Mutable lookups, for filling in nested containers after adding them. */
aw_json_value *aw_json_get_mut(aw_json_value *obj, const char *key);
aw_json_value *aw_json_at_mut(aw_json_value *arr, size_t index);

/* ---- repair of broken model JSON ------------------------------------------ */

/* What aw_json_repair changed, as bit flags. */
enum aw_json_repair_step {
    AW_REPAIR_CODE_FENCE = 1 << 0,       /* ```json ... ``` around the value */
    AW_REPAIR_SURROUNDING_TEXT = 1 << 1, /* prose before or after the value; stray bytes
                                            between tokens (BOM, controls, bad UTF-8) */
    AW_REPAIR_ELLIPSIS = 1 << 2,         /* "..." or "…" for more items: [1, 2, ...] */
    AW_REPAIR_SINGLE_QUOTES = 1 << 3,    /* 'strings', also `back` and “curly” quotes */
    AW_REPAIR_UNQUOTED_KEYS = 1 << 4,    /* {key: 1}; also bare words as values: {"a": ok} */
    AW_REPAIR_TRAILING_COMMA = 1 << 5,   /* [1, 2,] and other extra commas: [,1,,2] */
    AW_REPAIR_MISSING_COMMA = 1 << 6,    /* [1 2] or {"a":1 "b":2} */
    AW_REPAIR_COMMENTS = 1 << 7,         /* // and block comments */
    AW_REPAIR_PYTHON_LITERALS = 1 << 8,  /* True, False, None, undefined, NaN, Infinity (null);
                                            numbers as JS/Python write them: 01, +1, .5,
                                            1., 1e, 0x1F */
    AW_REPAIR_CONTROL_CHARS = 1 << 9,    /* raw newlines, tabs, controls inside strings;
                                            bytes that are not UTF-8 (each -> U+FFFD) */
    AW_REPAIR_INVALID_ESCAPES = 1 << 10, /* "\q" -> "\\q" (\' -> '); a " inside a string
                                            that was not escaped */
    AW_REPAIR_UNCLOSED = 1 << 11,        /* unclosed strings, arrays, objects at the end, or
                                            before a closer or key that ends them */
    AW_REPAIR_MISSING_COLON = 1 << 12,   /* {"a" 1}, {"a" = 1} */
    AW_REPAIR_MISSING_VALUE = 1 << 13    /* {"a":} -> {"a":null}, also {"a"} and {"a":,} */
};

/* Turn almost-JSON as models write it into valid JSON text appended to out.
 * Valid JSON comes back as it was (compact or not, steps 0); anything else
 * is rewritten as compact JSON (no whitespace between tokens), keeping the
 * first top-level value only. *steps (when non-NULL) gets the AW_REPAIR_*
 * flags applied (never 0 for a text the strict reader refuses). Fails with
 * AW_ESYNTAX (position in err) when no value can be recovered (e.g. empty
 * input, or text with no JSON value in it), AW_ELIMIT past 1000 levels of
 * nesting, AW_ENOMEM; out is then left as it was. Linear in the input.
 * The rules are described at the top of src/json_repair.c. */
int aw_json_repair(const char *text, size_t len, const aw_allocator *alloc, aw_buf *out,
                   unsigned *steps, aw_error *err);

/* Short name of one step ("single_quotes"), or NULL. */
const char *aw_json_repair_step_name(unsigned step);

/* ---- JSON lines --------------------------------------------------------- */

/* Called once per non-blank line. On a good line root is the parsed value and
 * err is NULL; on a bad line root is NULL and err holds the problem with line
 * and column filled in. The value lives until the callback returns. Return 0
 * to go on, anything else to stop: feed/finish then return AW_ESTOP. */
typedef int (*aw_jsonl_fn)(void *ctx, size_t line, const aw_json_value *root,
                           const aw_error *err);

typedef struct aw_jsonl_reader aw_jsonl_reader;

/* opts may be NULL. Lines may have any length; CRLF and LF both end a line;
 * blank lines (only whitespace) are skipped. */
aw_jsonl_reader *aw_jsonl_reader_new(const aw_json_read_options *opts);
void aw_jsonl_reader_free(aw_jsonl_reader *r);
/* Feed any chunk of input. Calls fn for each line completed by this chunk.
 * Returns 0, AW_ENOMEM (err set), or AW_ESTOP when fn asked to stop. */
int aw_jsonl_feed(aw_jsonl_reader *r, const char *chunk, size_t len, aw_jsonl_fn fn,
                  void *ctx, aw_error *err);
/* End of input: handles a last line without a newline. */
int aw_jsonl_finish(aw_jsonl_reader *r, aw_jsonl_fn fn, void *ctx, aw_error *err);
/* Lines seen so far (including blank ones). */
size_t aw_jsonl_line_count(const aw_jsonl_reader *r);

#ifdef __cplusplus
}
#endif
#endif
