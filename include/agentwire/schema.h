/* agentwire — JSON Schema validation (draft 2020-12 and draft-07).
 *
 * Compile a schema once, validate many instances, free:
 *
 *   aw_schema *s;
 *   if (aw_schema_compile(schema_root, NULL, &s, &err)) ... err names the keyword
 *   aw_schema_result r;
 *   aw_schema_result_init(&r, NULL);
 *   aw_schema_validate(s, instance, NULL, &r, &err);   r.valid, r.errors[]
 *   aw_schema_result_free(&r);
 *   aw_schema_free(s);
 *
 * A compiled schema is immutable: any number of threads may validate with
 * it at once, each with its own aw_schema_result (which also keeps the
 * scratch memory a validation needs, so a result reused for many
 * validations allocates nothing once warmed up).
 *
 * Dialects. Draft 2020-12 unless `$schema` says otherwise (or the options
 * choose draft-07 for schemas without `$schema`). `$schema` may name
 * https://json-schema.org/draft/2020-12/schema, http://json-schema.org/draft-07/schema#
 * (with or without the '#', http or https), or a meta-schema registered in
 * the registry whose own `$schema` leads to one of them (its `$vocabulary`
 * then chooses the 2020-12 vocabularies in force). Anything else is a
 * compile error. An embedded resource (a subschema with `$id`) may change
 * dialect with its own `$schema`.
 *
 * Keywords: every keyword of the core, applicator, unevaluated and
 * validation vocabularies of 2020-12 and of draft-07 (`$ref`, `$defs` /
 * `definitions`, `$anchor`, `$dynamicRef` / `$dynamicAnchor`, `allOf`,
 * `anyOf`, `oneOf`, `not`, `if` / `then` / `else`, `dependentSchemas` /
 * `dependencies`, `prefixItems`, `items`, `additionalItems`, `contains`,
 * `minContains`, `maxContains`, `properties`, `patternProperties`,
 * `additionalProperties`, `propertyNames`, `unevaluatedItems`,
 * `unevaluatedProperties`, `type`, `enum`, `const`, `multipleOf`,
 * `maximum`, `exclusiveMaximum`, `minimum`, `exclusiveMinimum`,
 * `maxLength`, `minLength`, `pattern`, `maxItems`, `minItems`,
 * `uniqueItems`, `maxProperties`, `minProperties`, `required`,
 * `dependentRequired`), plus `format`. Unknown keywords are ignored.
 *
 * Numbers are compared as the decimals they are written as: 1 equals 1.0
 * in `const`, `enum` and `uniqueItems`, 1.0 is an integer, bounds are exact
 * beyond double precision, and `multipleOf` divides decimals exactly (0.1
 * is a multiple of 0.01; 0.3 of 0.1).
 *
 * String lengths count code points (a lone surrogate escape counts as one).
 *
 * Regular expressions (`pattern`, `patternProperties`, format "regex") are
 * ECMAScript's with the `u` flag, run by PCRE2 in UTF mode after a
 * translation: `.` excludes only \n, \r, U+2028 and U+2029; `\s` / `\S` are
 * ECMAScript's white space (Unicode Zs, U+FEFF and the line terminators);
 * `\d`, `\w`, `\b` are ASCII; `$` matches only at the very end; `\uXXXX`,
 * surrogate pairs written as two escapes, `\u{X}`, `\cX`, `[^]` and `[]`
 * mean what they mean in ECMAScript; an escape ECMAScript's `u` mode
 * refuses (`\a`, `\e`, `\z`, `\Z`, `\A`, `\Q`, a letter with no meaning) is
 * an invalid pattern. What remains different from ECMAScript:
 *   - lookbehind must have a bounded length (PCRE2 refuses `(?<=a+)`);
 *   - PCRE2-only group syntax (inline flags `(?i)`, comments `(?#..)`,
 *     atomic `(?>..)` and `(?P<n>..)` groups, recursion `(?R)`) and
 *     possessive quantifiers (`a++`) are refused, as ECMAScript refuses
 *     them; a `{n}+` after a counted quantifier is not (PCRE2 reads it as
 *     possessive);
 *   - a lone `{` or `}` is a literal (ECMAScript's `u` mode refuses it);
 *   - `\p{..}` accepts the property names PCRE2 10.42 knows (general
 *     categories and scripts, short or long: `\p{L}`, `\p{Letter}`,
 *     `\p{Greek}`), not `Script_Extensions=` or binary properties beyond
 *     PCRE2's list.
 * Matching runs with PCRE2's match and depth limits: a pattern that hits
 * them on some string (catastrophic backtracking) is a validation error
 * naming the pattern, never a hang.
 *
 * Formats are annotations unless format assertion is on
 * (aw_schema_options.format_assert, or a 2020-12 meta-schema whose
 * `$vocabulary` requires format-assertion); then date-time, date, time,
 * duration, email, hostname, ipv4, ipv6, uri, uri-reference, uuid, regex,
 * json-pointer and relative-json-pointer are checked. Other formats pass.
 *
 * References. `$ref` to a document other than the one compiled resolves
 * only through a registry the caller fills before compiling (by URI); the
 * meta-schemas of both dialects are built in. Nothing is ever fetched. A
 * reference that does not resolve is a compile error naming it; a loop of
 * references (or of allOf/anyOf/... that never moves into the instance,
 * such as {"$ref": "#"}) is a compile error too.
 *
 * Hostile input: no recursion on the C stack follows the depth of a schema
 * or an instance (explicit work stacks); enums are hashed; uniqueItems is
 * linear (hashes of canonical values); regular expressions have match
 * limits. */
#ifndef AGENTWIRE_SCHEMA_H
#define AGENTWIRE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aw_schema_draft {
    AW_SCHEMA_DRAFT_2020_12 = 0,
    AW_SCHEMA_DRAFT_7
} aw_schema_draft;

/* "2020-12" or "7" (also "draft-07", "draft7", "2020", "draft2020-12");
 * -1 when unknown. */
int aw_schema_draft_parse(const char *s);
/* The meta-schema URI of a dialect. */
const char *aw_schema_draft_uri(aw_schema_draft d);

/* ---- the registry: documents other schemas may $ref ---------------------- */

typedef struct aw_schema_registry aw_schema_registry;

aw_schema_registry *aw_schema_registry_new(const aw_allocator *alloc);
void aw_schema_registry_free(aw_schema_registry *r);
/* Register a copy of doc under an absolute URI (without fragment). A
 * `$id` inside the document also makes its parts findable by that id.
 * Registering a URI twice replaces the document. */
int aw_schema_registry_add(aw_schema_registry *r, const char *uri, const aw_json_value *doc, aw_error *err);

/* ---- compiling ------------------------------------------------------------- */

typedef struct aw_schema aw_schema;

typedef struct aw_schema_options {
    const aw_allocator *alloc;          /* NULL: the default allocator */
    aw_schema_draft default_draft;      /* for a schema without $schema */
    bool format_assert;                 /* check formats instead of only annotating */
    const aw_schema_registry *registry; /* documents $ref may reach; may be NULL */
    const char *base_uri;               /* the schema's own URI (its retrieval URI), or NULL */
} aw_schema_options;

/* Compile a schema (an object or a boolean). opts may be NULL. The schema
 * is copied: the caller may free it afterwards. On failure *out is NULL
 * and err's message starts with the keyword's location (a JSON Pointer
 * into the schema, or the URI of a referenced document) and says what is
 * wrong: "/properties/a/minLength: must be a non-negative integer",
 * "/$ref: cannot resolve \"other.json#/a\"". Codes: AW_ESYNTAX (a keyword
 * malformed, an invalid pattern), AW_EVALID (unknown $schema, unresolvable
 * $ref, a reference loop), AW_ENOMEM. */
int aw_schema_compile(const aw_json_value *schema, const aw_schema_options *opts, aw_schema **out,
                      aw_error *err);
void aw_schema_free(aw_schema *s);
/* The dialect of the schema's root. */
aw_schema_draft aw_schema_draft_of(const aw_schema *s);

/* ---- validating ------------------------------------------------------------ */

/* One error, in the "basic" output form of the specification. The strings
 * live in the result. */
typedef struct aw_schema_error {
    const char *instance_location;          /* JSON Pointer into the instance ("" is the root) */
    const char *keyword_location;           /* JSON Pointer of the keyword, through the $refs taken */
    const char *absolute_keyword_location;  /* URI#pointer of the keyword when a $ref was crossed;
                                               else NULL */
    const char *message;                    /* expected integer, got string "3" */
    /* The locations' lengths in bytes: a property name may hold U+0000,
     * which a C string cannot, so read the locations with these. */
    size_t instance_location_len;
    size_t keyword_location_len;
    size_t absolute_keyword_location_len;   /* 0 when there is none */
} aw_schema_error;

typedef struct aw_schema_result {
    bool valid;
    aw_schema_error *errors;
    size_t error_count;
    bool truncated;          /* there were more errors than max_errors */
    /* private: the memory the errors live in and the scratch space of a
     * validation, kept for the next one */
    const aw_allocator *alloc_;
    void *state_;
} aw_schema_result;

#define AW_SCHEMA_DEFAULT_MAX_ERRORS 100

typedef struct aw_schema_validate_options {
    /* errors kept; 0 keeps none and stops at the first failure (the
     * fastest way to a verdict). opts == NULL: AW_SCHEMA_DEFAULT_MAX_ERRORS */
    size_t max_errors;
    /* work-stack depth limit (schema frames in evaluation); 0: 100,000.
     * Past it aw_schema_validate fails with AW_ELIMIT. */
    size_t max_depth;
} aw_schema_validate_options;

void aw_schema_result_init(aw_schema_result *r, const aw_allocator *alloc);
void aw_schema_result_free(aw_schema_result *r);

/* Validate instance against s. Returns 0 with r->valid and r->errors set
 * (the errors of a previous call on r are dropped), or AW_ENOMEM, or
 * AW_ELIMIT past max_depth (err says where). A regular expression that
 * hits PCRE2's limits is not a failure of the call: it is a validation
 * error in r. */
int aw_schema_validate(const aw_schema *s, const aw_json_value *instance, const aw_schema_validate_options *opts,
                       aw_schema_result *r, aw_error *err);

/* The result as JSON in the basic output form:
 * {"valid":false,"errors":[{"instanceLocation":..,"keywordLocation":..,
 * ["absoluteKeywordLocation":..,] "error":..}]} or {"valid":true}. */
int aw_schema_result_write(const aw_schema_result *r, aw_buf *out);

/* The errors as one line a model can act on:
 * `/age: expected integer, got string "3"; (root): missing required property "name"`,
 * at most max_bytes long (cut at a character boundary, "..." added); 0:
 * no limit. A U+0000 in a location is written \u0000. */
int aw_schema_result_summary(const aw_schema_result *r, size_t max_bytes, aw_buf *out);

/* ---- meta-schemas -------------------------------------------------------------- */

/* Is schema a valid schema of its dialect? Validates it against the
 * dialect's meta-schema (shipped in the library; for a custom `$schema`,
 * the registered meta-schema) and then compiles it, so a pattern PCRE2
 * cannot compile or a $ref that does not resolve counts too. Returns 0
 * with r filled (r->valid; keyword errors as in aw_schema_validate,
 * compile errors as one error at their location), or AW_ENOMEM. */
int aw_schema_check(const aw_json_value *schema, const aw_schema_options *opts, aw_schema_result *r,
                    aw_error *err);

#ifdef __cplusplus
}
#endif
#endif
