/* expat, set up the agentwire way: memory from an arena of the caller's
 * allocator, documents with a DOCTYPE refused, errors as aw_error.
 *
 * expat's memory hooks take no context pointer, so the parser's arena is
 * passed through a thread-local variable that is set only while one of the
 * calls below runs. Every expat call that may allocate must go through
 * them. */
#ifndef AW_INTERNAL_EXPAT_H
#define AW_INTERNAL_EXPAT_H

#include <expat.h>
#include <stddef.h>

#include "agentwire/alloc.h"
#include "agentwire/error.h"
#include "internal/arena.h"

typedef struct aw_expat {
    XML_Parser parser;
    const aw_allocator *alloc;
    aw_arena mem;            /* expat's memory for this parser... */
    struct aw_expat_big *big; /* ... but its big pieces (expat_glue.c) */
    int refused;             /* a DOCTYPE (or entity declaration) was seen */
    int stopped;             /* a handler stopped the parse; err holds why */
    int stop_code;           /* the AW_E* code of that stop, err or not */
    aw_error *err;
    const char *text;        /* the whole input, for error positions */
    size_t len;
} aw_expat;

/* Create a namespace-unaware parser for UTF-8 input with DOCTYPE refusal
 * installed. user_data for handlers is the aw_expat itself. */
int aw__expat_init(aw_expat *x, const aw_allocator *alloc, aw_error *err);
void aw__expat_free(aw_expat *x);
/* Parse the whole text in one go (in pieces of at most 1 GiB). Returns 0
 * or an AW_E* code with err filled (line and column from expat). */
int aw__expat_parse(aw_expat *x, const char *text, size_t len);
/* For handlers: stop the parse with an error at the current position. */
void aw__expat_fail(aw_expat *x, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
