/* Private parts of the json module shared by its files. */
#ifndef AW_INTERNAL_JSON_H
#define AW_INTERNAL_JSON_H

#include "agentwire/json.h"
#include "internal/arena.h"

/* A document lives at the start of its own arena's first block, so a
 * document costs one allocation; aw_json_doc_free copies the arena out
 * before freeing it. */
struct aw_json_doc {
    aw_arena arena;
    aw_json_value *root;
};

/* Reusable parse state: the scratch stacks survive between parses so the
 * JSON-lines reader allocates nothing per line once warmed up. */
typedef struct aw__json_frame {
    size_t start;   /* first scratch entry of this container */
    int is_object;
} aw__json_frame;

typedef struct aw__json_parser {
    const aw_allocator *alloc;
    size_t max_depth;
    int allow_bom;
    aw_json_member *scratch; /* values (and keys) of the open containers */
    size_t scratch_len, scratch_cap;
    aw__json_frame *frames;
    size_t frames_cap;
    /* set while scratch or frames is the caller's memory (not to be
     * reallocated or freed) */
    int scratch_borrowed, frames_borrowed;
    /* The padded copy of the text last parsed. Strings and keys are
     * decoded in place, so a key's or a string value's distance from here
     * is its offset in that text: how errors found after the parse (a
     * mistyped field) name their place. */
    const char *copy;
} aw__json_parser;

void aw__json_parser_init(aw__json_parser *ps, const aw_json_read_options *opts);
void aw__json_parser_free(aw__json_parser *ps);
/* Parse text into values allocated in arena; *root receives the result
 * (values are parsed in place, so on failure it may hold a partial value). */
int aw__json_parse_with(aw__json_parser *ps, aw_arena *arena, const char *text, size_t len,
                        aw_json_value *root, aw_error *err);

/* Is key a canonical array index ("0", "42", below 2^32 - 1)? Sets *index. */
int aw__json_index_key(const char *key, size_t len, uint32_t *index);

/* Work out AW_JSON_F_DUPKEYS and AW_JSON_F_INDEXKEYS for members[0..count).
 * Returns the flags, or -1 when scratch memory could not be had. */
int aw__json_object_flags(const aw_json_member *members, size_t count, const aw_allocator *alloc);

/* For an object whose members need reordering (index keys or duplicates):
 * fills order[] with the member indices to write, in JSON.stringify order,
 * and value_of[i] with the member whose value member i shows (the last of
 * its duplicates). Returns the number of entries in order, or -1 on
 * allocation failure. order and value_of must hold count entries. */
long aw__json_object_order(const aw_json_member *members, size_t count, const aw_allocator *alloc,
                           size_t *order, size_t *value_of);

/* Numbers. */
/* 128-bit powers of ten (json_pow10.c): for AW_POW10_MIN <= k <= AW_POW10_MAX,
 * aw__pow10_128[k - AW_POW10_MIN] holds {high, low} 64-bit halves of
 * floor(10^k * 2^(127 - floor(log2(10^k)))), a value in [2^127, 2^128);
 * exact for 0 <= k <= 55 and below the true value by less than one
 * otherwise. */
#define AW_POW10_MIN (-342)
#define AW_POW10_MAX 325
extern const uint64_t aw__pow10_128[AW_POW10_MAX - AW_POW10_MIN + 1][2];

/* The 128-bit product a * b: returns the low half, *hi gets the high one. */
static inline uint64_t aw__mul128(uint64_t a, uint64_t b, uint64_t *hi) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)a * b;
    *hi = (uint64_t)(p >> 64);
    return (uint64_t)p;
#else
    uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
    *hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
    return (mid << 32) | (uint32_t)p00;
#endif
}

/* w * 10^q (w > 0) correctly rounded to a double, for normal results:
 * 0 and *out set, or -1 when the fast method cannot decide (the result
 * is subnormal or overflows, q is out of the table, or the product lies
 * too close to a rounding boundary): then use aw__json_strtod. */
int aw__json_decimal_to_double(uint64_t w, long q, double *out);
/* strtod that ignores the C locale's decimal point; s[0..n) is a valid JSON
 * number and s[n] must be writable (it is restored before returning). */
double aw__json_strtod(char *s, size_t n);
/* v in decimal into out (at least 20 bytes); returns the length. */
size_t aw__json_write_uint(uint64_t v, char *out);
/* JavaScript Number::toString for finite d into out (at least 32 bytes);
 * returns the length. */
size_t aw__json_format_double(double d, char *out);
/* JavaScript String(d) for any double: as above, plus "NaN", "Infinity",
 * "-Infinity". out needs 32 bytes. */
size_t aw__js_number_string(double d, char *out);

#endif
