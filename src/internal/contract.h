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
    int required;
    c_value v;
    const char *description;
} c_attr;

typedef struct c_elem {
    const char *name;
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

/* A parsed XML element (contract_doc.c). */
typedef struct x_attr {
    const char *name;
    const char *value;
    size_t value_len;
} x_attr;

typedef struct x_node {
    const char *name;
    x_attr *attrs;
    size_t nattrs;
    char *text;       /* the element's own character data, concatenated */
    size_t text_len;
    struct x_node *first, *last, *next;
    size_t line, column;
} x_node;

typedef struct x_tree {
    aw_arena arena;
    x_node *root;
} x_tree;

/* Parse xml into tree (freed with aw__contract_tree_free). On malformed
 * input fills issue and returns AW_EVALID; AW_ENOMEM on allocation
 * failure. */
int aw__contract_tree(const char *xml, size_t len, const aw_contract_options *opts, const char *root_name,
                      x_tree *tree, aw_contract_issue *issue);
void aw__contract_tree_free(x_tree *tree);

/* Check a value against its type; returns 0 or an aw_contract_code with a
 * message in msg. */
int aw__contract_check_value(const c_value *v, const char *s, size_t n, char *msg, size_t msg_size);
/* Trim ASCII whitespace. */
void aw__contract_trim(const char **s, size_t *n);

#endif
