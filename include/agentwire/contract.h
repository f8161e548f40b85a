/* agentwire — response contracts: structured XML queries and replies with
 * strict, fail-fast validation (seed 004).
 *
 * A contract is data: a small JSON document that declares the root element
 * and, for each element, its cardinality, its attributes (string, integer,
 * decimal with a range, boolean, enumeration, comma-separated list with a
 * maximum count) and its text (required or optional, maximum length in
 * characters, or a list). The seed's <llmQuery> and <llmResponse> ship as
 * built-in contracts in that format (the files in contracts/); see
 * docs/contracts.md for the format.
 *
 * XML is read with expat; documents with a DOCTYPE or entity declarations
 * are refused, no external entity is ever loaded, and depth, size and
 * attribute count are limited. */
#ifndef AGENTWIRE_CONTRACT_H
#define AGENTWIRE_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"
#include "error.h"
#include "json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aw_contract aw_contract;

/* Load a contract from its JSON text. A contract whose "format" major
 * version differs from AW_CONTRACT_FORMAT_MAJOR is refused. */
#define AW_CONTRACT_FORMAT_MAJOR 1
int aw_contract_load(const char *json, size_t len, const aw_allocator *alloc, aw_contract **out,
                     aw_error *err);
/* A built-in contract by name: "llmQuery" or "llmResponse". */
int aw_contract_builtin(const char *name, const aw_allocator *alloc, aw_contract **out, aw_error *err);
void aw_contract_free(aw_contract *c);
const char *aw_contract_name(const aw_contract *c);    /* the root element */
const char *aw_contract_version(const aw_contract *c); /* e.g. "1.0.0" */

/* Why a document breaks a contract. */
typedef enum aw_contract_code {
    AW_CONTRACT_MALFORMED = 1,   /* not well-formed XML, DOCTYPE, bad encoding */
    AW_CONTRACT_LIMIT,           /* depth, size or attribute-count limit */
    AW_CONTRACT_WRONG_ROOT,
    AW_CONTRACT_MISSING_ELEMENT,
    AW_CONTRACT_TOO_MANY,        /* more children of a name than allowed */
    AW_CONTRACT_MISSING_ATTRIBUTE,
    AW_CONTRACT_BAD_VALUE,       /* an attribute or text of the wrong type or range */
    AW_CONTRACT_EMPTY_TEXT,      /* required text is empty */
    AW_CONTRACT_TEXT_TOO_LONG,
    AW_CONTRACT_TOO_MANY_ITEMS,  /* a comma-separated list is too long */
    AW_CONTRACT_UNKNOWN_ELEMENT, /* strict only */
    AW_CONTRACT_UNKNOWN_ATTRIBUTE, /* strict only */
    AW_CONTRACT_UNEXPECTED_TEXT, /* strict only: text where the contract has none */
    AW_CONTRACT_NOT_FOUND        /* extract: no document with the expected root */
} aw_contract_code;

/* "missing_element", ... */
const char *aw_contract_code_name(aw_contract_code code);

typedef struct aw_contract_issue {
    aw_contract_code code;
    char path[256];  /* "/llmResponse/analysis/subject[2]/keyword[1]/@confidence" */
    size_t line;     /* 1-based */
    size_t column;   /* 1-based */
    char message[256];
} aw_contract_issue;

typedef struct aw_contract_options {
    bool strict;      /* reject unknown elements and attributes, stray text */
    bool extract;     /* take the first complete <root>...</root> out of surrounding text */
    size_t max_depth; /* 0: 64 */
    size_t max_bytes; /* 0: 16 MiB */
    size_t max_attributes; /* per element; 0: 64 */
    const aw_allocator *alloc;
} aw_contract_options;

/* Validate a document. Returns 0 when it conforms, AW_EVALID when it does
 * not (*issues then lists every problem found, in document order; free it
 * with aw_free(alloc, *issues)), or another AW_E* code. */
int aw_contract_validate(const aw_contract *c, const char *xml, size_t len,
                         const aw_contract_options *opts, aw_contract_issue **issues,
                         size_t *issue_count, aw_error *err);

/* Validate and map to JSON: the root element is an object; attributes and
 * child elements are its keys by name; an element with only text is a
 * string (or its declared type); a child allowed more than once is always
 * an array; typed values are JSON numbers and booleans; text is trimmed.
 * Fails fast: the first issue goes to err (code AW_EVALID, message
 * "path: ...", line and column). */
int aw_contract_parse(const aw_contract *c, const char *xml, size_t len,
                      const aw_contract_options *opts, aw_json_doc **out, aw_error *err);

/* JSON (in the shape aw_contract_parse produces) -> XML in the seed's
 * layout: two-space indent, text escaped, attributes quoted and escaped.
 * The result is validated against the contract before it is returned. */
int aw_contract_build(const aw_contract *c, const aw_json_value *data, aw_buf *out, aw_error *err);

/* The system-prompt text that teaches a model the format. For the built-in
 * llmResponse this is the seed's template, word for word. */
int aw_contract_prompt(const aw_contract *c, aw_buf *out);

#ifdef __cplusplus
}
#endif
#endif
