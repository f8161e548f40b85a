/* A YAML document read whole into a tree of nodes that keep their
 * positions: what agent files' frontmatter is made of. Not installed.
 *
 * libyaml parses (it takes no allocator: its working memory comes from
 * malloc and is gone when aw_yaml_read returns); the tree is built from
 * its events, iteratively, into an arena of the caller's allocator.
 * Configuration needs mappings, sequences and scalars, nothing else:
 *
 *   - aliases (*name) are refused: a few bytes of them can stand for
 *     gigabytes of values once expanded, and no agent file needs one;
 *   - a key appearing twice in a mapping is an error naming both places;
 *   - plain scalars are typed as YAML 1.2's core schema says (null, true
 *     and false, integers in decimal, 0o octal and 0x hex, floats with
 *     .inf and .nan); quoted and block scalars are strings, and so are
 *     the YAML 1.1 words (yes, no, on, off) 1.2 no longer reads as booleans;
 *   - the tags !!str, !!int, !!float, !!bool, !!null and the non-specific
 *     "!" are understood; any other tag is an error;
 *   - nesting deeper than max_depth and more than max_nodes values are
 *     errors, so hostile input costs bounded memory and no recursion. */
#ifndef AW_YAML_TREE_H
#define AW_YAML_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/error.h"
#include "agentwire/json.h"
#include "internal/rt_arena.h"

typedef enum aw_yaml_kind { AW_YAML_SCALAR = 0, AW_YAML_SEQUENCE, AW_YAML_MAPPING } aw_yaml_kind;

/* What a scalar is. */
typedef enum aw_yaml_type { AW_YAML_STRING = 0, AW_YAML_NULL, AW_YAML_BOOL, AW_YAML_INT, AW_YAML_FLOAT } aw_yaml_type;

typedef struct aw_yaml_node aw_yaml_node;
struct aw_yaml_node {
    aw_yaml_kind kind;
    size_t line, column;  /* 1-based, in the file (line_offset added); column in characters */
    /* scalars: the text as written (NUL-terminated, may contain NUL only
     * through escapes) and its typed value */
    const char *text;
    size_t len;
    aw_yaml_type type;
    bool b;
    int64_t i;
    double d;
    /* sequences: the items; mappings: keys and values alternate, so item
     * 2k is a key (always a scalar) and 2k + 1 its value */
    aw_yaml_node **items;
    size_t count;
};

typedef struct aw_yaml_options {
    size_t line_offset;  /* lines of the file before the YAML text */
    size_t max_depth;    /* 0: 64 */
    size_t max_nodes;    /* 0: 100 000 */
} aw_yaml_options;

/* Read one YAML document from text into nodes allocated in arena. *root
 * is NULL for an empty document. On failure err says where (line and
 * column in the file) and why; the arena may hold part of a tree, freed
 * with it. */
int aw_yaml_read(const char *text, size_t len, const aw_yaml_options *opts, aw_arena *arena,
                 const aw_yaml_node **root, aw_error *err);

/* The value of key in a mapping, or NULL. */
const aw_yaml_node *aw_yaml_get(const aw_yaml_node *map, const char *key);
/* Pairs of a mapping. */
static inline size_t aw_yaml_pairs(const aw_yaml_node *map) { return map->kind == AW_YAML_MAPPING ? map->count / 2 : 0; }
static inline const aw_yaml_node *aw_yaml_key(const aw_yaml_node *map, size_t k) { return map->items[2 * k]; }
static inline const aw_yaml_node *aw_yaml_value(const aw_yaml_node *map, size_t k) { return map->items[2 * k + 1]; }
static inline bool aw_yaml_is_string(const aw_yaml_node *n)
{
    return n && n->kind == AW_YAML_SCALAR && n->type == AW_YAML_STRING;
}

/* The node as a JSON value in doc: mappings as objects (keys by their
 * text), sequences as arrays, scalars by their type. With scalars_as_text,
 * every scalar becomes the string it was written as (an environment's
 * values, a command's arguments: `PORT: 8080` means "8080"). NULL when out
 * of memory. */
aw_json_value *aw_yaml_to_json(aw_json_doc *doc, const aw_yaml_node *n, bool scalars_as_text);

/* A name for a node's kind in messages: "a mapping", "a list", "a string",
 * "a number", "true or false", "null". */
const char *aw_yaml_describe(const aw_yaml_node *n);

#endif
