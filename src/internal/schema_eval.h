/* Private state of a validation, shared by the evaluator
 * (schema_validate.c) and the assertions and errors (schema_assert.c). */
#ifndef AW_INTERNAL_SCHEMA_EVAL_H
#define AW_INTERNAL_SCHEMA_EVAL_H

#include <string.h>

#include "internal/schema.h"

/* Frame flags. */
enum {
    F_ERRORS = 1 << 0, /* record errors (else stop at the first failure) */
    F_PROPS = 1 << 1,  /* collect evaluated members (unevaluatedProperties) */
    F_ITEMS = 1 << 2,  /* collect evaluated items (unevaluatedItems) */
    F_REF = 1 << 3,    /* a $ref was crossed on the way here */
    F_SPEC = 1 << 4    /* an anyOf/oneOf branch: its errors may be taken back */
};

/* How a location steps from a frame's instance to a child's. */
enum { SEG_NONE = 0, SEG_KEY, SEG_INDEX };

typedef struct sc_frame {
    const sc_node *node;
    const aw_json_value *inst;
    const char *kw_seg;  /* keyword path from the parent frame's node */
    uint32_t kw_len;
    uint8_t seg;         /* SEG_*: instance path from the parent frame's instance */
    uint8_t flags;       /* F_* */
    uint8_t valid;
    uint8_t started;
    uint8_t waiting;     /* a child frame is running */
    uint8_t waiting_done;/* the current op pushed a child and resumes with its verdict */
    uint8_t child_valid;
    uint8_t eff_done;
    const char *key;
    uint32_t key_len;
    size_t index;
    uint16_t op;         /* the op running */
    uint32_t sub, phase, phase2, count; /* its state */
    size_t err_mark, dropped_mark;
    uint32_t ann, ann_words; /* this frame's bitset on the annotation stack */
    const uint32_t *eff; /* effective members of an object with duplicate keys */
    uint32_t eff_count;
} sc_frame;

/* Where an error sits relative to a frame: a child checked in place adds
 * its keyword segment and instance segment. */
typedef struct sc_loc {
    const char *kw_seg;
    uint32_t kw_len;
    uint8_t seg;
    uint8_t crossed; /* a $ref was crossed */
    uint8_t errors;  /* errors are wanted */
    uint8_t here;
    const char *key;
    uint32_t key_len;
    size_t index;
} sc_loc;

/* What a result keeps between validations. */
typedef struct sc_state {
    aw_arena arena;   /* error strings */
    aw_arena scratch; /* this validation's temporary values */
    size_t errors_cap;
    pcre2_match_data *md;
    const aw_json_value *kidx_obj; /* the object last indexed by key */
    uint32_t *kidx;
    uint32_t kidx_mask;
} sc_state;

#define SC_LOCAL_FRAMES 32
#define SC_LOCAL_ANN 32

typedef struct sc_vctx {
    const aw_schema *s;
    const aw_allocator *alloc;
    aw_schema_result *r;
    sc_state *state;
    aw_error *err;
    sc_frame *st;
    size_t top, cap, max_depth;
    uint64_t *ann;
    size_t ann_top, ann_cap;
    size_t max_errors, dropped, spec_depth;
    int abort, limit_hit, root_valid;
    /* the stacks' first storage, on the C stack of the frame machine only
     * (the verdict pass needs neither, and a small context is cheap) */
    sc_frame *local;
    uint64_t *ann_local;
} sc_vctx;

/* Short keys compared inline: a call to memcmp costs more than they do. */
static inline int aw__sc_same_key(const char *a, const char *b, size_t n) {
    if (n > 16) return !memcmp(a, b, n);
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* The property of an OP_PROPS op named key, or NULL. */
static inline const sc_prop *aw__sc_find_prop(const sc_op *op, const char *key, size_t len) {
    const sc_prop *p = op->u.props.props;
    if (!op->u.props.table) {
        for (uint32_t i = 0; i < op->u.props.nprops; i++)
            if (p[i].name.len == len && aw__sc_same_key(p[i].name.ptr, key, len)) return &p[i];
        return NULL;
    }
    uint64_t h = aw__sc_bytes_hash(key, len);
    uint32_t s = (uint32_t)h & op->u.props.mask;
    while (op->u.props.table[s]) {
        const sc_prop *q = &p[op->u.props.table[s] - 1];
        if (q->hash == h && q->name.len == len && aw__sc_same_key(q->name.ptr, key, len)) return q;
        s = (s + 1) & op->u.props.mask;
    }
    return NULL;
}

/* Check node n's assertions on x, as frame fi or a child of it placed by
 * loc. 0 and *ok, or AW_ENOMEM. */
int aw__sc_check(sc_vctx *v, size_t fi, const sc_loc *loc, const sc_node *n, const aw_json_value *x, int *ok);
/* The same, for the assertions in mask only. */
int aw__sc_check_some(sc_vctx *v, size_t fi, const sc_loc *loc, const sc_node *n, const aw_json_value *x, uint32_t mask,
                      int *ok);
/* Record an error at frame f (plus loc), raised by keyword of node. 0 or
 * AW_ENOMEM. */
int aw__sc_error(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *node, const char *keyword,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* A pattern that hit PCRE2's limits. */
int aw__sc_regex_limit_error(sc_vctx *v, const sc_frame *f, const sc_loc *loc, const sc_node *node, const sc_regex *re,
                             int code);
/* err for a validation deeper than max_depth. */
void aw__sc_limit_error(sc_vctx *v, aw_error *err);
/* Does object o have key? (an index of its keys for large objects) */
int aw__sc_has_key(sc_vctx *v, const aw_json_value *o, const char *key, size_t len);
void aw__sc_mark(sc_vctx *v, sc_frame *f, size_t i);
/* The verdict without frames (schema_fast.c): 1 valid, 0 invalid, -1
 * when only the frame machine can tell. */
int aw__sc_fast_verdict(sc_vctx *v, const aw_json_value *instance);
/* Append one error to a result (aw_schema_check's compile errors). */
int aw__sc_result_add(aw_schema_result *r, const char *instance_location, const char *keyword_location,
                      const char *message, aw_error *err);

#endif
