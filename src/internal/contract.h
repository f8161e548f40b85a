/* Private parts of the contract module. */
#ifndef AW_INTERNAL_CONTRACT_H
#define AW_INTERNAL_CONTRACT_H

#include "agentwire/contract.h"
#include "internal/arena.h"

typedef enum c_type { CT_STRING = 0, CT_INTEGER, CT_DECIMAL, CT_BOOLEAN, CT_ENUM, CT_LIST } c_type;

/* The type of an attribute value or of an element's text. */
typedef struct c_value {
    c_type type;
    int has_min, has_max;
    double min, max;
    size_t max_length; /* characters; 0: none */
    size_t max_items;  /* list; 0: none */
    const char **values; /* enum */
    size_t nvalues;
} c_value;

typedef struct c_attr {
    const char *name;
    size_t name_len;
    int required;
    c_value v;
    const char *description;
} c_attr;

typedef struct c_elem {
    const char *name;
    size_t name_len;
    size_t min, max; /* max == SIZE_MAX: unbounded */
    c_attr *attrs;
    size_t nattrs;
    struct c_elem *children;
    size_t nchildren;
    int has_text;
    int text_required;
    c_value text;
    const char *description;
} c_elem;

struct aw_contract {
    const aw_allocator *alloc;
    aw_arena arena;
    const char *name;
    const char *version;
    const char *description;
    const char *prompt; /* NULL: generated */
    c_elem root;
};

/* A parsed XML element (contract_doc.c). Elements are matched to the
 * contract while they are read, so that nothing the checker and the
 * mapping never look at is copied: the attributes of a declared element
 * are kept by declaration, undeclared attributes only by name and only in
 * strict mode, and the elements inside an undeclared one not at all. */
typedef struct x_value {
    const char *s; /* NULL: the attribute is absent */
    size_t len;
} x_value;

typedef struct x_node {
    const char *name;
    /* The declaration of this name among the parent's children (for the
     * root: the contract's root when the names match), or NULL. */
    const struct c_elem *decl;
    x_value *values;        /* decl: one per declared attribute, in declaration order */
    const char **unknown;   /* decl and strict: names of undeclared attributes, in document order */
    size_t nunknown;
    const char *text;       /* decl: the element's own character data, concatenated and trimmed */
    size_t text_len;
    struct x_node *first, *last, *next;
    size_t offset;          /* of its '<' in the parsed text */
    size_t line, column;    /* filled by aw__contract_tree_locate */
} x_node;

typedef struct x_tree {
    aw_arena arena;
    aw_arena *strings; /* holds the text and attribute values: arena, or the JSON result's */
    x_node *root;
    const char *text; /* the parsed text (the extracted part with --extract) */
    size_t len;
    size_t line_base, col_base; /* where text starts in the whole input */
} x_tree;

/* Parse xml into tree, matching elements to the contract's root (freed
 * with aw__contract_tree_free). Text and attribute values go to strings
 * when it is not NULL (parse puts them in the JSON result's arena, so its
 * strings need no copy). On malformed input fills issue and returns
 * AW_EVALID; AW_ENOMEM on allocation failure. */
int aw__contract_tree(const char *xml, size_t len, const aw_contract_options *opts, const c_elem *root,
                      aw_arena *strings, x_tree *tree, aw_contract_issue *issue);
void aw__contract_tree_free(x_tree *tree);
/* Fill line and column of every node. Positions are needed only for
 * issues, so they are worked out after the parse, in one pass, and only
 * when there is an issue to report. */
void aw__contract_tree_locate(x_tree *tree);


#endif
