/* Repair of broken JSON as language models write it.
 *
 * One forward pass of a tolerant tokenizer rewrites the text as compact
 * JSON, token by token, with an explicit stack of open containers (no
 * recursion, at most AW_JSON_DEFAULT_MAX_DEPTH deep, like the strict reader)
 * and a single state for the innermost one; a fast lane (see there) takes
 * the usual tokens, and the general code the rest. Only when that pass
 * repaired nothing does the strict reader look at the text: valid JSON is
 * then copied through unchanged (steps 0).
 *
 * Linear time: the few lookaheads (after a quote inside a string, to tell a
 * closing quote from one that should have been escaped; after a comma in a
 * string; over an unquoted key) stop at the next quote, delimiter or end of
 * line, and what they read is read again at most once, so no byte is looked
 * at more than a few times whatever the input holds.
 *
 * The rules, in the order a reader meets them:
 *  - a UTF-8 BOM, and prose before the value, are dropped (SURROUNDING_TEXT).
 *    The value starts where the text starts if it starts with one; else at
 *    the first '{' or '[' (a '[' followed by something that looks like JSON
 *    wins over a later '{', so [a link] in prose is passed over); when the
 *    text holds no container, at the first string, number or
 *    true/false/null. A literal counts at the start only when alone there,
 *    so "None of this" is prose.
 *  - a ```lang fence around the value is dropped (CODE_FENCE); the value then
 *    ends at the closing fence (the first at the start of a line, else the
 *    last one), and blanks before it are not part of an unclosed string.
 *  - after the value: a closing fence, a trailing comma, an ellipsis or
 *    other text are dropped (CODE_FENCE, TRAILING_COMMA, ELLIPSIS,
 *    SURROUNDING_TEXT). A second value after the first is dropped too.
 *  - strings in 'single', `back` or “curly” quotes become "double"-quoted
 *    (SINGLE_QUOTES).
 *  - inside a string, a quote of its own kind ends it when what follows can
 *    follow a string: the end, a newline, one of , : [ ] { } / ..., a
 *    number or a literal after a blank, an unquoted key and its colon, or a
 *    quote that is itself followed by one of those; after a key, a blank or
 *    '=' too (a missing colon). Otherwise the quote is text and escaped
 *    (INVALID_ESCAPES), as in "He said "hi" to me" or "print("x")". Bad
 *    escapes such as \q, \x41 or a lone backslash keep their backslash,
 *    escaped (INVALID_ESCAPES); \' becomes ', and a backslash before a raw
 *    newline becomes \n.
 *  - JSON escaped once too often, {\"a\": \"b\"}: a \" where a string
 *    starts opens it, and a \" that can end it ends it (INVALID_ESCAPES).
 *  - {"a": "b, "c": 1}: a string whose quote after a comma opens something
 *    followed by a colon ends before that comma (UNCLOSED).
 *  - raw control characters in strings are escaped; bytes that are not
 *    UTF-8 become U+FFFD, one per maximal subpart (CONTROL_CHARS).
 *  - keys without quotes, and bare words where a value belongs, become
 *    strings (UNQUOTED_KEYS): {a: b c} -> {"a":"b c"}. An unquoted key runs
 *    to its colon ({first name: 1}); with no colon before the next
 *    delimiter it is one word and the rest is its value ({url 80} ->
 *    {"url":80}, MISSING_COLON).
 *  - True/False/None, undefined, NaN, Infinity (-> null), and numbers
 *    JavaScript or Python would take but JSON does not: 01 -> 1, +1 -> 1,
 *    .5 -> 0.5, 1. -> 1, 1e -> 1e0, 0x1F -> 31 (PYTHON_LITERALS). A number
 *    followed by letters (12px) is a bare word.
 *  - comments // and block comments are dropped (COMMENTS).
 *  - commas: extra ones are dropped (TRAILING_COMMA); a missing one between
 *    two values or members is added (MISSING_COMMA).
 *  - {"a" 1} gets its colon (MISSING_COLON), {"a":}, {"a"}, {"a":, ...} get
 *    null (MISSING_VALUE), and so does {"a": "b": 1}, where "b" is taken as
 *    the next key. '=' in place of ':' counts as a missing colon.
 *  - ... or … where a value, key or comma belongs is dropped (ELLIPSIS);
 *    as a member value it becomes null.
 *  - at the end of the text an open string, and then every open container,
 *    are closed in order (UNCLOSED); a closer that belongs to an outer
 *    container closes the inner ones too (UNCLOSED), and one that matches
 *    nothing is dropped (SURROUNDING_TEXT). When an unclosed string ends in
 *    closers that match the open containers, as in ["a], the string ends
 *    before them. An escape cut off by the end is dropped.
 *  - any other byte between tokens (control characters, invalid UTF-8,
 *    Unicode spaces, stray punctuation) is dropped (SURROUNDING_TEXT).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The fast paths: SSE2 (always there on x86-64) and the fast lane below.
 * tests/test_json_repair.c builds this file a second time with
 * AW_REPAIR_NO_SIMD and AW_REPAIR_NO_LANE defined, and checks that the
 * slow paths give the same results. */
#if defined(__SSE2__) && !defined(AW_REPAIR_NO_SIMD)
#define REPAIR_SSE2 1
#include <emmintrin.h>
#endif

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/utf8.h"

#define MAX_DEPTH AW_JSON_DEFAULT_MAX_DEPTH

/* Forced inline for the fast lane's string copy, used in two places; the
 * lane itself kept out of the walk, so that the compiler allocates its
 * registers for the lane's loop alone. */
#if defined(__GNUC__)
#define HOT inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define HOT inline
#define NOINLINE
#endif

enum { S_VALUE, S_KEY, S_COLON, S_AFTER };

/* Quote kinds. */
enum { Q_NONE, Q_DOUBLE, Q_SINGLE, Q_BACK, Q_CDOUBLE, Q_CSINGLE };

typedef struct rp {
    const unsigned char *s;
    size_t n;     /* end of the value's text (a closing fence, or the end) */
    size_t full;  /* end of the whole text */
    size_t i;
    aw_buf *out;
    char *o;         /* where the next output byte goes (out->len is set at the end) */
    char *oend;      /* out's last byte, kept for the terminating NUL */
    unsigned steps;
    int rc;          /* AW_ENOMEM or AW_ELIMIT once something failed */
    size_t nctrl;    /* control characters escaped so far */
    size_t key_from, key_stop; /* the last unquoted key's run (bare_word) */
    size_t rc_at;    /* where, for AW_ELIMIT */
    int state;
    int after_comma; /* S_VALUE/S_KEY reached through a ',' */
    int done;        /* the top-level value is complete */
    int esc_open;    /* the next string opened with \" (JSON escaped once too often) */
    size_t depth;
    size_t open_obj, open_arr;
    unsigned char kind[MAX_DEPTH]; /* '{' or '[' */
    unsigned char has[MAX_DEPTH];  /* an item or member was written */
} rp;

/* ---- character classes -------------------------------------------------- */

/* Bytes copied as they are inside a string: printable ASCII but for the
 * backslash and the quote characters, which need a decision. */
static const unsigned char plain_tab[256] = {
#define R(x) [x] = 1
    R(' '), R('!'), R('#'), R('$'), R('%'), R('&'), R('('), R(')'), R('*'), R('+'), R(','),
    R('-'), R('.'), R('/'), R('0'), R('1'), R('2'), R('3'), R('4'), R('5'), R('6'), R('7'),
    R('8'), R('9'), R(':'), R(';'), R('<'), R('='), R('>'), R('?'), R('@'), R('A'), R('B'),
    R('C'), R('D'), R('E'), R('F'), R('G'), R('H'), R('I'), R('J'), R('K'), R('L'), R('M'),
    R('N'), R('O'), R('P'), R('Q'), R('R'), R('S'), R('T'), R('U'), R('V'), R('W'), R('X'),
    R('Y'), R('Z'), R('['), R(']'), R('^'), R('_'), R('a'), R('b'), R('c'), R('d'), R('e'),
    R('f'), R('g'), R('h'), R('i'), R('j'), R('k'), R('l'), R('m'), R('n'), R('o'), R('p'),
    R('q'), R('r'), R('s'), R('t'), R('u'), R('v'), R('w'), R('x'), R('y'), R('z'), R('{'),
    R('|'), R('}'), R('~'), R(0x7F)
#undef R
};

static inline int is_ws(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
static inline int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static inline int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static inline int is_ident_start(unsigned char c) { return is_alpha(c) || c == '_' || c == '$'; }
static inline int is_ident(unsigned char c) { return is_ident_start(c) || is_digit(c); }
static inline int is_hex(unsigned char c) {
    return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}
static inline int hex_val(unsigned char c) { return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10; }

/* The quote starting at i, if any, and its length in bytes. */
static inline int quote_at(const unsigned char *s, size_t n, size_t i, size_t *len) {
    unsigned char c = s[i];
    *len = 1;
    if (c == '"') return Q_DOUBLE;
    if (c == '\'') return Q_SINGLE;
    if (c == '`') return Q_BACK;
    if (c == 0xE2 && i + 2 < n && s[i + 1] == 0x80) {
        *len = 3;
        if (s[i + 2] == 0x9C || s[i + 2] == 0x9D) return Q_CDOUBLE; /* “ ” */
        if (s[i + 2] == 0x98 || s[i + 2] == 0x99) return Q_CSINGLE; /* ‘ ’ */
    }
    return Q_NONE;
}

/* "..." (or more dots) or "…" at i: its length, else 0. */
static inline size_t ellipsis_at(const unsigned char *s, size_t n, size_t i) {
    if (s[i] != '.' && s[i] != 0xE2) return 0;
    if (i + 2 < n && s[i] == '.' && s[i + 1] == '.' && s[i + 2] == '.') {
        size_t j = i + 3;
        while (j < n && s[j] == '.') j++;
        return j - i;
    }
    if (i + 2 < n && s[i] == 0xE2 && s[i + 1] == 0x80 && s[i + 2] == 0xA6) return 3;
    return 0;
}

static inline int fence_at(const unsigned char *s, size_t n, size_t i) {
    return i + 2 < n && s[i] == '`' && s[i + 1] == '`' && s[i + 2] == '`';
}

/* The first fence at or after i, else n. */
static size_t next_fence(const unsigned char *s, size_t n, size_t i) {
    while (i < n) {
        const unsigned char *p = memchr(s + i, '`', n - i);
        if (!p) return n;
        i = (size_t)(p - s);
        if (fence_at(s, n, i)) return i;
        i++;
    }
    return n;
}

/* Unicode spaces JSON does not allow between tokens. */
static inline int is_unicode_space(uint32_t cp) {
    return cp == 0xA0 || cp == 0x1680 || cp == 0x180E || (cp >= 0x2000 && cp <= 0x200B) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000 ||
           cp == 0xFEFF;
}

/* Can this byte follow the closing quote of a string? */
static inline int follows_string(unsigned char c) {
    return c == ',' || c == ':' || c == ']' || c == '}' || c == '[' || c == '{' || c == '/' ||
           c == '\n';
}

/* A keyword at i: its JSON form, or NULL. */
static const char *keyword(const unsigned char *s, size_t len, int *foreign) {
    static const struct { const char *word, *json; unsigned char len, foreign; } kw[] = {
        {"true", "true", 4, 0},   {"false", "false", 5, 0},   {"null", "null", 4, 0},
        {"True", "true", 4, 1},   {"False", "false", 5, 1},   {"None", "null", 4, 1},
        {"undefined", "null", 9, 1}, {"NaN", "null", 3, 1}, {"Infinity", "null", 8, 1},
    };
    if (len < 3 || len > 9) return NULL;
    for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++) {
        if (kw[k].len == len && kw[k].word[0] == s[0] && memcmp(kw[k].word, s, len) == 0) {
            *foreign = kw[k].foreign;
            return kw[k].json;
        }
    }
    return NULL;
}

/* ---- output ------------------------------------------------------------- */

/* The output is written through r->o, which out->len catches up with only
 * when out has to grow and at the end, where aw_json_repair adds the
 * terminating NUL (r->oend keeps room for it). After a failure the output
 * is thrown away, so writes may go on harmlessly. */
static inline size_t out_len(const rp *r) { return (size_t)(r->o - r->out->data); }

static inline void out_sync(rp *r) { r->out->len = out_len(r); }

static inline void out_load(rp *r) {
    r->o = r->out->data + r->out->len;
    r->oend = r->out->data + r->out->cap - 1;
}

/* Room for n more bytes; 0 when there is, else AW_ENOMEM is set (or was). */
static int out_grow(rp *r, size_t n) {
    if (r->rc) return -1;
    out_sync(r);
    if (aw_buf_reserve(r->out, n)) {
        r->rc = AW_ENOMEM;
        return -1;
    }
    out_load(r);
    return 0;
}

static inline void put(rp *r, const void *p, size_t n) {
    if ((size_t)(r->oend - r->o) < n && out_grow(r, n)) return;
    memcpy(r->o, p, n);
    r->o += n;
}

static inline void put1(rp *r, char c) {
    if (r->o >= r->oend && out_grow(r, 1)) return;
    *r->o++ = c;
}

/* Length of the UTF-8 sequence at p (n bytes there, p[0] >= 0x80) that a
 * string keeps as it is: 0 for bytes that are not UTF-8 and, in a string
 * opened by a curly quote (curly), for the curly quotes that may close it.
 * The usual 2- and 3-byte forms are checked here; the rest by
 * aw__utf8_seq_len. */
static inline size_t text_seq_len(const unsigned char *p, size_t n, int curly) {
    unsigned char c = p[0];
    if (c >= 0xC2 && c <= 0xDF && n >= 2 && (p[1] & 0xC0) == 0x80) return 2;
    if (c >= 0xE1 && c <= 0xEF && c != 0xED && n >= 3 && (p[1] & 0xC0) == 0x80 &&
        (p[2] & 0xC0) == 0x80) {
        if (curly && c == 0xE2 && p[1] == 0x80 &&
            (p[2] == 0x98 || p[2] == 0x99 || p[2] == 0x9C || p[2] == 0x9D))
            return 0;
        return 3;
    }
    return aw__utf8_seq_len(p, n);
}

/* put for the 1 to 4 bytes of a UTF-8 sequence, without a call to memcpy. */
static inline void put_seq(rp *r, const unsigned char *p, size_t l) {
    if (r->oend - r->o >= 4) {
        char *d = r->o;
        for (size_t k = 0; k < l; k++) d[k] = (char)p[k];
        r->o = d + l;
    } else {
        put(r, p, l);
    }
}

/* Copy the text at s[i..n) that a string keeps as it is (plain bytes and
 * UTF-8, see text_seq_len) to the output; return where it ends: at the end,
 * or at a byte that needs a decision (a quote, a backslash, a control
 * character, a byte that is not UTF-8). With SSE2, 16 bytes at a time:
 * each block is stored whole while the output has room, and only the part
 * before its first byte that is not plain counted; the scalar loop takes
 * the tail and a nearly full output. */
static inline size_t copy_text(rp *r, const unsigned char *s, size_t i, size_t n, int curly) {
    for (;;) {
#ifdef REPAIR_SSE2
        /* locals: stores through d cannot change them, as they could r->o */
        char *d = r->o, *dend = r->oend;
        const __m128i dq = _mm_set1_epi8('"'), sq = _mm_set1_epi8('\''), bq = _mm_set1_epi8('`');
        const __m128i bs = _mm_set1_epi8('\\'), space = _mm_set1_epi8(' ');
        while (i + 16 <= n && dend - d >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            /* signed compare: below ' ' are the controls and bytes >= 0x80 */
            __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, dq), _mm_cmpeq_epi8(v, sq)),
                                        _mm_or_si128(_mm_cmpeq_epi8(v, bq), _mm_cmpeq_epi8(v, bs)));
            stop = _mm_or_si128(stop, _mm_cmplt_epi8(v, space));
            unsigned mask = (unsigned)_mm_movemask_epi8(stop);
            _mm_storeu_si128((__m128i *)d, v);
            if (mask) {
                unsigned k = (unsigned)__builtin_ctz(mask);
                r->o = d + k;
                i += k;
                goto decide;
            }
            d += 16;
            i += 16;
        }
        r->o = d;
#endif
        size_t run = i;
        while (i < n && plain_tab[s[i]]) i++;
        if (i > run) put(r, s + run, i - run);
#ifdef REPAIR_SSE2
    decide:
#endif
        if (i >= n || s[i] < 0x80) return i;
        size_t l = text_seq_len(s + i, n - i, curly);
        if (l == 0) return i;
        put_seq(r, s + i, l);
        i += l;
    }
}

/* text as a JSON string */
static void put_string(rp *r, const unsigned char *p, size_t n) {
    size_t k = 0;
    while (k < n && (plain_tab[p[k]] || p[k] == '\'' || p[k] == '`')) k++;
    if (k == n) { /* the usual case: nothing to escape */
        put1(r, '"');
        put(r, p, n);
        put1(r, '"');
    } else if (!r->rc) {
        out_sync(r);
        if (aw_json_write_string(r->out, (const char *)p, n)) r->rc = AW_ENOMEM;
        out_load(r);
    }
}

#define PUTS(r, lit) put((r), (lit), sizeof(lit) - 1)

/* ---- skipping ----------------------------------------------------------- */

static void skip_space_rest(rp *r, size_t i);

/* Skip whitespace, comments and stray bytes that can never start a token:
 * other control characters, bytes that are not UTF-8, Unicode spaces.
 * Inline for the usual case, a few spaces or a newline before a token. */
static inline void skip_space(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->n, i = r->i;
    while (i < n && (s[i] == ' ' || s[i] == '\n')) i++;
    if (i < n && s[i] > ' ' && s[i] < 0x7F && s[i] != '/') {
        r->i = i;
        return;
    }
    skip_space_rest(r, i);
}

static void skip_space_rest(rp *r, size_t i) {
    const unsigned char *s = r->s;
    size_t n = r->n;
    for (;;) {
        while (i < n && is_ws(s[i])) i++;
        if (i >= n) break;
        unsigned char c = s[i];
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            r->steps |= AW_REPAIR_COMMENTS;
            while (i < n && s[i] != '\n') i++;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            r->steps |= AW_REPAIR_COMMENTS;
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) i++;
            i = i < n ? i + 2 : n;
            continue;
        }
        if (c < 0x20 || c == 0x7F) {
            r->steps |= AW_REPAIR_SURROUNDING_TEXT;
            i++;
            continue;
        }
        if (c >= 0x80) {
            size_t l = aw__utf8_seq_len(s + i, n - i);
            if (l == 0 || is_unicode_space(aw__utf8_decode(s + i, l))) {
                r->steps |= AW_REPAIR_SURROUNDING_TEXT;
                i += l ? l : 1;
                continue;
            }
        }
        break;
    }
    r->i = i;
}

/* Drop one stray byte (or UTF-8 sequence) between tokens. */
static void skip_stray(rp *r) {
    size_t l = r->s[r->i] >= 0x80 ? aw__utf8_seq_len(r->s + r->i, r->n - r->i) : 1;
    r->i += l ? l : 1;
    r->steps |= AW_REPAIR_SURROUNDING_TEXT;
}

/* ---- containers --------------------------------------------------------- */

static inline int in_object(const rp *r) { return r->depth && r->kind[r->depth - 1] == '{'; }

/* Before an item of an array or a key of an object: the comma, if needed. */
static void separate(rp *r) {
    if (!r->depth) return;
    if (r->has[r->depth - 1]) put1(r, ',');
    r->has[r->depth - 1] = 1;
}

static void before_value(rp *r) {
    if (!in_object(r)) separate(r);
}

static void value_done(rp *r) {
    r->after_comma = 0;
    if (r->depth == 0) r->done = 1;
    else r->state = S_AFTER;
}

static void push(rp *r, unsigned char k) {
    if (r->depth >= MAX_DEPTH) {
        if (!r->rc) {
            r->rc = AW_ELIMIT;
            r->rc_at = r->i;
        }
        return;
    }
    before_value(r);
    put1(r, (char)k);
    r->kind[r->depth] = k;
    r->has[r->depth] = 0;
    r->depth++;
    if (k == '{') r->open_obj++;
    else r->open_arr++;
    r->state = k == '{' ? S_KEY : S_VALUE;
    r->after_comma = 0;
    r->i++;
}

/* Close the innermost container; explicit when the text closed it. */
static void close_top(rp *r, int explicit_close) {
    unsigned char k = r->kind[r->depth - 1];
    if (k == '{') {
        if (r->state == S_COLON) {
            PUTS(r, ":null");
            r->steps |= AW_REPAIR_MISSING_VALUE;
        } else if (r->state == S_VALUE) {
            PUTS(r, "null");
            r->steps |= AW_REPAIR_MISSING_VALUE;
        } else if (r->state == S_KEY && r->after_comma) {
            r->steps |= AW_REPAIR_TRAILING_COMMA;
        }
    } else if (r->state == S_VALUE && r->after_comma) {
        r->steps |= AW_REPAIR_TRAILING_COMMA;
    }
    if (!explicit_close) r->steps |= AW_REPAIR_UNCLOSED;
    put1(r, k == '{' ? '}' : ']');
    r->depth--;
    if (k == '{') r->open_obj--;
    else r->open_arr--;
    value_done(r);
}

static void on_closer(rp *r, unsigned char c) {
    unsigned char want = c == '}' ? '{' : '[';
    if (r->depth && r->kind[r->depth - 1] == want) {
        r->i++;
        close_top(r, 1);
    } else if ((want == '{' ? r->open_obj : r->open_arr) > 0) {
        close_top(r, 0); /* the closer is seen again for the next level */
    } else {
        skip_stray(r);
    }
}

/* ---- strings ------------------------------------------------------------ */

/* Is the quote that ends just before j the end of its string? It is when
 * what follows can follow a string. Before another quote, that quote's own
 * follower decides: in "say "hi"" the middle quote is text because the next
 * one is followed by the end. */
static int quote_ends_string(const rp *r, size_t j, int key) {
    const unsigned char *s = r->s;
    size_t n = r->n, j0 = j;
    if (r->depth == 0) return 1;
    while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r')) j++;
    if (j >= n) return 1;
    unsigned char c = s[j];
    if (follows_string(c) || ellipsis_at(s, n, j) || fence_at(s, n, j)) return 1;
    if (key && (j > j0 || c == '=')) return 1; /* {"a" b}, {"a"=1}: a missing colon */
    if (is_digit(c) || c == '-') return j > j0; /* ["a" 1] but "is "42" now" */
    if (is_ident_start(c)) {
        /* "x" b: 1 is a missing comma, and so is "x" true; "x" b c is text */
        size_t k = j;
        while (k < n && (is_ident(s[k]) || s[k] == '-')) k++;
        int foreign;
        int literal = keyword(s + j, k - j, &foreign) != NULL;
        while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
        return k < n ? s[k] == ':' || (literal && follows_string(s[k])) : literal;
    }
    size_t ql;
    if (quote_at(s, n, j, &ql)) {
        size_t k = j + ql;
        while (k < n && is_ws(s[k])) k++;
        if (k >= n || follows_string(s[k])) return 0;
        return 1;
    }
    return 0;
}

/* quote_ends_string, with the usual case first: a delimiter right after
 * the quote. */
static inline int delimiter(unsigned char c) { return c == ',' || c == ':' || c == '}' || c == ']'; }

static inline int quote_ends(const rp *r, size_t j, int key) {
    if (j < r->n && delimiter(r->s[j])) return 1;
    return quote_ends_string(r, j, key);
}

static int closers_match(const rp *r, size_t p, size_t end) {
    size_t level = r->depth;
    for (size_t i = p; i < end; i++) {
        unsigned char c = r->s[i];
        if (c != '}' && c != ']') continue;
        if (level == 0) return 0;
        if (r->kind[--level] != (c == '}' ? '{' : '[')) return 0;
    }
    return 1;
}

/* End of text inside a string (content started at start, and the ouput
 * holds it written). Close it; when the content ends in closers that match
 * the open containers (["a]), end the string before them. */
static void string_at_end(rp *r, size_t start, unsigned steps0, size_t nctrl0) {
    const unsigned char *s = r->s;
    size_t p = r->n, cut = 0, closers = 0, ctrl = 0;
    r->steps |= AW_REPAIR_UNCLOSED;
    r->i = r->n;
    while (p > start) {
        unsigned char c = s[p - 1];
        if (c == ' ') cut += 1;
        else if (c == '\t' || c == '\n') cut += 2, ctrl++; /* written as \t, \n */
        else if (c == '}' || c == ']') cut += 1, closers++;
        else break;
        p--;
    }
    /* at a closing fence, blanks before it are layout, not text */
    int fenced = r->n < r->full;
    if ((closers || fenced) && !r->rc && (p == start || s[p - 1] != '\\') &&
        closers_match(r, p, r->n) && cut <= out_len(r)) {
        r->o -= cut;
        r->i = p;
        /* the only control characters of the string were cut off */
        if (!(steps0 & AW_REPAIR_CONTROL_CHARS) && r->nctrl - nctrl0 == ctrl)
            r->steps &= ~(unsigned)AW_REPAIR_CONTROL_CHARS;
    }
    put1(r, '"');
}

/* {"a": "b, "c": 1}: the quote at i (ql bytes, of kind q) that did not end
 * the string opens the next key, and the string should have ended before
 * the comma. So it is when only spaces stand between a comma inside the
 * string and the quote, and the next quote on the line is followed by a
 * colon. Returns where the comma is, or SIZE_MAX. The look ahead stops at
 * the next quote, which the string or the key then reads again: no byte is
 * looked at more than twice. */
static size_t comma_before_key(const rp *r, size_t start, size_t i, size_t ql, int q) {
    const unsigned char *s = r->s;
    size_t n = r->n, p = i, j = i + ql, l = 1;
    if (!in_object(r)) return SIZE_MAX;
    while (p > start && s[p - 1] == ' ') p--;
    if (p == start || s[p - 1] != ',') return SIZE_MAX;
    if (p - 1 > start && s[p - 2] == '\\') return SIZE_MAX;
    for (; j < n; j++) {
        unsigned char c = s[j];
        if (c == '\n' || c == '\\') return SIZE_MAX;
        if ((c == '"' || c == '\'' || c == '`' || c == 0xE2) && quote_at(s, n, j, &l) == q) break;
    }
    if (j >= n) return SIZE_MAX;
    j += l;
    while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
    return j < n && s[j] == ':' ? p - 1 : SIZE_MAX;
}

/* The JSON escape of control character c into e; its length. */
static inline size_t control_escape(unsigned char c, char e[6]) {
    static const char hex[] = "0123456789abcdef";
    char letter = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : c == '\b' ? 'b' : c == '\f' ? 'f' : 0;
    e[0] = '\\';
    if (letter) {
        e[1] = letter;
        return 2;
    }
    e[1] = 'u';
    e[2] = e[3] = '0';
    e[4] = hex[c >> 4];
    e[5] = hex[c & 15];
    return 6;
}

static void put_control(rp *r, unsigned char c) {
    char e[6];
    size_t l = control_escape(c, e);
    r->steps |= AW_REPAIR_CONTROL_CHARS;
    r->nctrl++;
    put(r, e, l);
}

/* A string opening at r->i with a quote of kind q (qlen bytes), written as
 * a JSON string. */
static void parse_string(rp *r, int q, size_t qlen, int key) {
    const unsigned char *s = r->s;
    size_t n = r->n, i = r->i + qlen, start = i;
    int curly = q == Q_CDOUBLE || q == Q_CSINGLE;
    unsigned steps0 = r->steps;
    size_t nctrl0 = r->nctrl;
    int esc = r->esc_open && q == Q_DOUBLE; /* then \" may close it too */
    r->esc_open = 0;
    if (q != Q_DOUBLE) r->steps |= AW_REPAIR_SINGLE_QUOTES;
    put1(r, '"');
    while (!r->rc) {
        i = copy_text(r, s, i, n, curly);
        if (i >= n) {
            string_at_end(r, start, steps0, nctrl0);
            return;
        }
        unsigned char c = s[i];
        size_t ql;
        int k = quote_at(s, n, i, &ql);
        if (k != Q_NONE && k == q) {
            if (quote_ends(r, i + ql, key)) {
                put1(r, '"');
                r->i = i + ql;
                return;
            }
            size_t pc = key ? SIZE_MAX : comma_before_key(r, start, i, ql, q);
            if (pc != SIZE_MAX && !r->rc && out_len(r) >= i - pc) {
                r->o -= i - pc; /* the comma and spaces written */
                put1(r, '"');
                r->steps |= AW_REPAIR_UNCLOSED;
                r->i = pc;
                return;
            }
            /* a quote that belongs to the text */
            if (c == '"') {
                PUTS(r, "\\\"");
                r->steps |= AW_REPAIR_INVALID_ESCAPES;
            } else {
                put(r, s + i, ql);
            }
            i += ql;
        } else if (c == '"') {
            PUTS(r, "\\\"");
            i++;
        } else if (k != Q_NONE) {
            put(r, s + i, ql); /* another kind of quote: text */
            i += ql;
        } else if (c == '\\') {
            if (i + 1 >= n) { /* cut off by the end */
                i = n;
                continue;
            }
            unsigned char e = s[i + 1];
            if (esc && e == '"' && quote_ends_string(r, i + 2, key)) {
                put1(r, '"');
                r->i = i + 2;
                return;
            }
            switch (e) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                put(r, s + i, 2);
                i += 2;
                break;
            case 'u': {
                size_t h = 0;
                while (h < 4 && i + 2 + h < n && is_hex(s[i + 2 + h])) h++;
                if (h == 4) {
                    put(r, s + i, 6);
                    i += 6;
                } else if (i + 2 + h >= n) {
                    i = n; /* cut off by the end */
                } else {
                    PUTS(r, "\\\\");
                    r->steps |= AW_REPAIR_INVALID_ESCAPES;
                    i++;
                }
                break;
            }
            case '\'':
            case '`':
                put1(r, (char)e);
                if (!((e == '\'' && q == Q_SINGLE) || (e == '`' && q == Q_BACK)))
                    r->steps |= AW_REPAIR_INVALID_ESCAPES;
                i += 2;
                break;
            case '\n':
            case '\r':
                PUTS(r, "\\n");
                r->steps |= AW_REPAIR_INVALID_ESCAPES;
                i += (e == '\r' && i + 2 < n && s[i + 2] == '\n') ? 3 : 2;
                break;
            default:
                PUTS(r, "\\\\");
                r->steps |= AW_REPAIR_INVALID_ESCAPES;
                i++;
                break;
            }
        } else if (c < 0x20) {
            put_control(r, c);
            i++;
        } else { /* not UTF-8 (curly quotes were taken above) */
            PUTS(r, "\xEF\xBF\xBD");
            r->steps |= AW_REPAIR_CONTROL_CHARS;
            i += aw__utf8_subpart_len(s + i, n - i);
        }
    }
}

/* ---- bare words, literals, numbers -------------------------------------- */

/* Text without quotes where a key or a value belongs, up to the next
 * delimiter, written as a string (trailing blanks trimmed). */
static void bare_word(rp *r, int key) {
    const unsigned char *s = r->s;
    size_t n = r->n, start = r->i, i = start;
    /* a key cut short below ({a 1 2 3 ...}) leaves the rest of its run to
     * be read again; the delimiter it found is remembered, so no byte is
     * scanned more than twice */
    if (key && start > r->key_from && start < r->key_stop) i = r->key_stop;
    while (i < n) {
        unsigned char c = s[i];
        if (c == ',' || c == '}' || c == ']' || c == '{' || c == '[' || c == '"' || c == '\n' ||
            c == '\r' || (key && (c == ':' || c == '=')))
            break;
        if (c == '/' && i + 1 < n &&
            (s[i + 1] == '*' || (s[i + 1] == '/' && (i == start || s[i - 1] == ' ' || s[i - 1] == '\t'))))
            break;
        if (c == '`' && fence_at(s, n, i)) break;
        i++;
    }
    if (i == start) i++; /* never stall */
    if (key) {
        r->key_from = start;
        r->key_stop = i;
    }
    size_t end = i;
    while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t')) end--;
    if (key && (i >= n || (s[i] != ':' && s[i] != '='))) {
        /* no colon before the next delimiter: {url 80.1} is url: 80.1, and
         * {first name: 1} keeps its space */
        for (size_t b = start; b < end; b++) {
            if (s[b] == ' ' || s[b] == '\t') {
                end = i = b;
                break;
            }
        }
    }
    put_string(r, s + start, end - start);
    r->steps |= AW_REPAIR_UNQUOTED_KEYS;
    r->i = i;
}

static size_t ident_len(const unsigned char *s, size_t n, size_t i) {
    size_t j = i;
    if (j < n && is_ident_start(s[j]))
        while (j < n && is_ident(s[j])) j++;
    return j - i;
}

static int number_ends(const unsigned char *s, size_t n, size_t i) {
    if (i >= n) return 1;
    unsigned char c = s[i];
    return is_ws(c) || c == ',' || c == ':' || c == ']' || c == '}' || c == '[' || c == '{' ||
           c == '/' || c == '"' || c == '\'' || c == ')' || c == ';' || ellipsis_at(s, n, i) ||
           fence_at(s, n, i);
}

/* Hexadecimal 0x...: the literal spans start..he, its digits hs..he. */
static void put_hex(rp *r, size_t start, int neg, size_t hs, size_t he) {
    const unsigned char *s = r->s;
    char tmp[48];
    size_t o = 0;
    while (hs + 1 < he && s[hs] == '0') hs++;
    if (neg) tmp[o++] = '-';
    if (he - hs <= 16) {
        uint64_t v = 0;
        for (size_t k = hs; k < he; k++) v = v * 16 + (uint64_t)hex_val(s[k]);
        o += (size_t)snprintf(tmp + o, sizeof tmp - o, "%llu", (unsigned long long)v);
    } else {
        double d = 0;
        for (size_t k = hs; k < he; k++) d = d * 16 + hex_val(s[k]);
        if (d - d != 0) { /* beyond a double: keep the text as a string */
            put_string(r, s + start, he - start);
            return;
        }
        o += aw__json_format_double(d, tmp + o);
    }
    put(r, tmp, o);
}

/* A number at r->i, normalized to JSON. 0 when the text there is not a
 * number after all (12px), for the caller to take as a bare word. */
static int parse_number(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->n, i = r->i;
    int neg = 0, fixed = 0;
    if (s[i] == '-') neg = 1, i++;
    else if (s[i] == '+') fixed = 1, i++;
    if (i < n && s[i] == 'I') { /* -Infinity */
        size_t l = ident_len(s, n, i);
        if (l == 8 && memcmp(s + i, "Infinity", 8) == 0) {
            PUTS(r, "null");
            r->steps |= AW_REPAIR_PYTHON_LITERALS;
            r->i = i + 8;
            return 1;
        }
        return 0;
    }
    if (i + 2 < n && s[i] == '0' && (s[i + 1] | 0x20) == 'x' && is_hex(s[i + 2])) {
        size_t hs = i + 2, he = hs;
        while (he < n && is_hex(s[he])) he++;
        if (!number_ends(s, n, he)) return 0;
        put_hex(r, r->i, neg, hs, he);
        r->steps |= AW_REPAIR_PYTHON_LITERALS;
        r->i = he;
        return 1;
    }
    size_t is = i;
    while (i < n && is_digit(s[i])) i++;
    size_t ie = i, fs = 0, fe = 0, es = 0, ee = 0;
    int dot = 0, exp = 0;
    if (i < n && s[i] == '.' && !ellipsis_at(s, n, i)) {
        dot = 1;
        fs = ++i;
        while (i < n && is_digit(s[i])) i++;
        fe = i;
    }
    if (ie == is && (!dot || fe == fs)) return 0;
    size_t esign = 0;
    if (i < n && (s[i] | 0x20) == 'e') {
        exp = 1;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) esign = i++;
        es = i;
        while (i < n && is_digit(s[i])) i++;
        ee = i;
    }
    if (!number_ends(s, n, i)) return 0;
    if (neg) put1(r, '-');
    if (ie == is) {
        put1(r, '0');
        fixed = 1;
    } else {
        size_t z = is;
        while (z + 1 < ie && s[z] == '0') z++;
        if (z > is) fixed = 1;
        put(r, s + z, ie - z);
    }
    if (dot) {
        if (fe == fs) { /* 1. is 1 */
            fixed = 1;
        } else {
            put1(r, '.');
            put(r, s + fs, fe - fs);
        }
    }
    if (exp) {
        put1(r, (char)s[es - 1 - (esign ? 1 : 0)]);
        if (esign) put1(r, (char)s[esign]);
        if (ee == es) {
            put1(r, '0');
            fixed = 1;
        } else {
            put(r, s + es, ee - es);
        }
    }
    if (fixed) r->steps |= AW_REPAIR_PYTHON_LITERALS;
    r->i = i;
    return 1;
}

/* Does a value (or a key) start at i? Used to tell a missing comma or colon
 * from stray punctuation. */
static int starts_item(const rp *r, size_t i) {
    const unsigned char *s = r->s;
    size_t n = r->n, ql;
    unsigned char c = s[i];
    if (c == '{' || c == '[' || is_ident(c) || quote_at(s, n, i, &ql)) return 1;
    if ((c == '-' || c == '+' || c == '.') && i + 1 < n &&
        (is_digit(s[i + 1]) || (c != '.' && s[i + 1] == '.') || (c == '-' && s[i + 1] == 'I')))
        return 1;
    if (c >= 0x80) return aw__utf8_seq_len(s + i, n - i) != 0;
    return 0;
}

/* A value at r->i in S_VALUE state. */
static void parse_value(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->n, i = r->i, ql;
    unsigned char c = s[i];
    int q;
    if (c == '{' || c == '[') {
        push(r, c);
        return;
    }
    if ((q = quote_at(s, n, i, &ql)) != Q_NONE) {
        before_value(r);
        size_t mark = out_len(r);
        parse_string(r, q, ql, 0);
        if (in_object(r) && !r->rc) {
            /* {"a": "b": 1}: "b" is the next key and a's value is missing */
            size_t j = r->i;
            while (j < n && is_ws(s[j])) j++;
            if (j < n && s[j] == ':') {
                if (r->oend - r->o < 5 && out_grow(r, 5)) return;
                char *m = r->out->data + mark;
                memmove(m + 5, m, (size_t)(r->o - m));
                memcpy(m, "null,", 5);
                r->o += 5;
                r->steps |= AW_REPAIR_MISSING_VALUE;
                r->state = S_COLON;
                return;
            }
        }
        value_done(r);
        return;
    }
    before_value(r);
    if (is_digit(c) || ((c == '-' || c == '+' || c == '.') && starts_item(r, i))) {
        if (parse_number(r)) {
            value_done(r);
            return;
        }
    } else if (is_ident_start(c)) {
        size_t l = ident_len(s, n, i);
        int foreign = 0;
        const char *kw = keyword(s + i, l, &foreign);
        if (kw && (i + l >= n || !(is_ident(s[i + l]) || s[i + l] == '-'))) {
            put(r, kw, strlen(kw));
            if (foreign) r->steps |= AW_REPAIR_PYTHON_LITERALS;
            r->i = i + l;
            value_done(r);
            return;
        }
    }
    bare_word(r, 0);
    value_done(r);
}

/* ---- the fast lane ------------------------------------------------------ */
#ifndef AW_REPAIR_NO_LANE

/* Most of what models write is JSON already, or nearly. The fast lane takes
 * the usual tokens, whole, with the position and the output in locals:
 * exactly what step() would do with them (the same output, steps and
 * state), and nothing else. At the first token it does not take it stops,
 * undoing nothing but that token's own partial output, and step() goes on
 * from there; the walk tries the lane again after each step. The tokens it
 * takes, in the states step() would see them in:
 *  - blanks (space, tab, CR, LF) between tokens;
 *  - after a value: ',', the closer of the innermost container, and a
 *    quote (the comma before it is missing);
 *  - where a key belongs: a string (below) or an identifier directly
 *    followed by ':' ({key: 1}), then ':'; or '}';
 *  - where a value belongs: '{', '[', a string (not followed by ':' in an
 *    object), a number in JSON's own form, true, false, null, True, False,
 *    None, and ']' closing an array;
 *  - a string: in double or single quotes, with text, UTF-8, escapes, and
 *    the repairs made inside one (control characters, bytes that are not
 *    UTF-8, invalid escapes), closed by a quote that the end of the string
 *    for sure follows (see lane_string).
 * It starts only with room for the rest of the input and 64 bytes; what it
 * writes is no longer than what it reads but for a few bytes here and
 * there (a comma, the quotes of a key, an escape), which check for room
 * first, so the rest writes without checks. Tests build this file without
 * the lane too and compare (see the top). */

/* The blanks JSON allows between tokens (is_ws), as a table. */
static const unsigned char ws_tab[256] = {[' '] = 1, ['\n'] = 1, ['\r'] = 1, ['\t'] = 1};

/* What ends a string for sure right after its closing quote (a delimiter or
 * a newline; see quote_ends_string), as a table. */
static const unsigned char after_quote_tab[256] = {[','] = 1, [':'] = 1, ['}'] = 1, [']'] = 1, ['\n'] = 1};

/* Where the lane writes a string, and what the string needs: steps and the
 * count of control characters escaped, applied only when the lane takes
 * it (step() redoes a string the lane gives up, from its start). */
typedef struct lane_out {
    char *o;
    char *oend;   /* r->oend */
    unsigned steps;
    size_t nctrl;
} lane_out;

/* Room for what is left of the input, 32 bytes, and extra more: the lane's
 * writes that are longer than what they read check it first. */
static inline int lane_room(const char *o, const char *oend, size_t left, size_t extra) {
    return (size_t)(oend - o) >= left + 32 + extra;
}

/* A string at s[i] in double or single quotes (q), with text, UTF-8 and
 * escapes, and the repairs step() makes inside one (control characters,
 * bytes that are not UTF-8, invalid escapes, a " in 'single quotes'),
 * closed by a quote that what follows makes its end for sure: blanks and a
 * delimiter, a newline or the end; for a key, also blanks or '='. Copies it
 * to lo->o and returns where it ends, past the closing quote; 0 when it is
 * anything else (what was written past the old lo->o is then to be
 * ignored). */
static HOT size_t lane_string(const unsigned char *s, size_t i, size_t n, lane_out *lo, unsigned char q,
                              int key) {
    char *o = lo->o;
    unsigned char c;
    *o++ = '"';
    i++;
    for (;;) {
#ifdef REPAIR_SSE2
        /* the block stops at both quotes, \, controls and bytes >= 0x80
         * (` is text in either kind of string) */
        const __m128i sq = _mm_set1_epi8('\''), dq = _mm_set1_epi8('"');
        const __m128i bs = _mm_set1_epi8('\\'), space = _mm_set1_epi8(' ');
        while (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            __m128i stop = _mm_or_si128(_mm_cmpeq_epi8(v, sq), _mm_cmpeq_epi8(v, dq));
            stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, bs));
            stop = _mm_or_si128(stop, _mm_cmplt_epi8(v, space));
            unsigned mask = (unsigned)_mm_movemask_epi8(stop);
            _mm_storeu_si128((__m128i *)o, v);
            if (mask) {
                unsigned k = (unsigned)__builtin_ctz(mask);
                o += k;
                i += k;
                goto decide; /* s[i] is not plain */
            }
            o += 16;
            i += 16;
        }
#endif
        while (i < n && plain_tab[s[i]]) *o++ = (char)s[i++];
        if (i >= n) return 0;
#ifdef REPAIR_SSE2
    decide: /* s[i] needs a decision */
#endif
        c = s[i];
        if (c == q && (i + 1 >= n || after_quote_tab[s[i + 1]])) { /* the usual end */
            *o++ = '"';
            lo->o = o;
            return i + 1;
        }
        if (c == q) { /* the end when quote_ends_string would say so for sure */
            size_t j = i + 1;
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\r')) j++;
            if (j < n && !delimiter(s[j]) && s[j] != '\n' && !(key && (j > i + 1 || s[j] == '=')))
                return 0;
            *o++ = '"';
            lo->o = o;
            return i + 1;
        }
        if (c == '\'' || c == '`') { /* another kind of quote: text */
            *o++ = (char)c;
            i++;
            continue;
        }
        if (!lane_room(o, lo->oend, n - i, 6)) return 0; /* what follows may write more */
        if (c == '"') { /* in 'single quotes' */
            *o++ = '\\';
            *o++ = '"';
            i++;
        } else if (c == '\\') {
            if (i + 1 >= n) return 0;
            unsigned char e = s[i + 1];
            size_t l = 0;
            switch (e) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                l = 2;
                break;
            case 'u':
                if (!(i + 5 < n && is_hex(s[i + 2]) && is_hex(s[i + 3]) && is_hex(s[i + 4]) &&
                      is_hex(s[i + 5])))
                    return 0;
                l = 6;
                break;
            case '\'':
            case '`':
                *o++ = (char)e;
                if (!(e == '\'' && q == '\'')) lo->steps |= AW_REPAIR_INVALID_ESCAPES;
                i += 2;
                continue;
            case '\n':
            case '\r':
                return 0;
            default: /* \q keeps its backslash, escaped */
                *o++ = '\\';
                *o++ = '\\';
                lo->steps |= AW_REPAIR_INVALID_ESCAPES;
                i++;
                continue;
            }
            for (size_t k = 0; k < l; k++) *o++ = (char)s[i + k];
            i += l;
        } else if (c >= 0x80) {
            size_t l = text_seq_len(s + i, n - i, 0);
            if (l) {
                for (size_t k = 0; k < l; k++) *o++ = (char)s[i + k];
                i += l;
            } else { /* not UTF-8 */
                memcpy(o, "\xEF\xBF\xBD", 3);
                o += 3;
                lo->steps |= AW_REPAIR_CONTROL_CHARS;
                i += aw__utf8_subpart_len(s + i, n - i);
            }
        } else {
            o += control_escape(c, o);
            lo->steps |= AW_REPAIR_CONTROL_CHARS;
            lo->nctrl++;
            i++;
        }
    }
}

/* A number in JSON's own form at s[i], which a blank or a delimiter (or
 * the end) follows: its end, else 0. parse_number writes it as it is. */
static inline size_t lane_number(const unsigned char *s, size_t i, size_t n) {
    size_t j = i + (s[i] == '-');
    if (j >= n || !is_digit(s[j])) return 0;
    if (s[j] == '0') j++;
    else
        while (j < n && is_digit(s[j])) j++;
    if (j < n && s[j] == '.') {
        if (++j >= n || !is_digit(s[j])) return 0;
        while (j < n && is_digit(s[j])) j++;
    }
    if (j < n && (s[j] | 0x20) == 'e') {
        if (++j < n && (s[j] == '+' || s[j] == '-')) j++;
        if (j >= n || !is_digit(s[j])) return 0;
        while (j < n && is_digit(s[j])) j++;
    }
    if (j < n && !(is_ws(s[j]) || s[j] == ',' || s[j] == '}' || s[j] == ']')) return 0;
    return j;
}

/* true, false or null at s[i], or Python's True, False or None, not
 * followed by a letter, digit or '-': its end, else 0. *json gets the JSON
 * form (as long as the word), *foreign whether it was Python's. */
static inline size_t lane_literal(const unsigned char *s, size_t i, size_t n, const char **json,
                                  int *foreign) {
    static const char *const words[] = {"true", "false", "null", "True", "False", "None"};
    size_t w = 0, l = 0;
    switch (s[i]) {
    case 't': w = 0; break;
    case 'f': w = 1; break;
    case 'n': w = 2; break;
    case 'T': w = 3; break;
    case 'F': w = 4; break;
    case 'N': w = 5; break;
    default: return 0;
    }
    l = w % 3 == 1 ? 5 : 4; /* false, False */
    if (n - i < l || memcmp(s + i, words[w], 4) != 0 || (l == 5 && s[i + 4] != 'e')) return 0;
    if (i + l < n && (is_ident(s[i + l]) || s[i + l] == '-')) return 0;
    *json = words[w % 3];
    *foreign = w >= 3;
    return i + l;
}

/* Copy s[i..end) to o, a number or a literal: one 16-byte block when it
 * fits and the text goes on that far (the lane has room for the block). */
static inline char *lane_copy(char *o, const unsigned char *s, size_t i, size_t end, size_t full) {
#ifdef REPAIR_SSE2
    if (end - i <= 16 && i + 16 <= full) {
        _mm_storeu_si128((__m128i *)o, _mm_loadu_si128((const __m128i *)(s + i)));
        return o + (end - i);
    }
#else
    (void)full;
#endif
    memcpy(o, s + i, end - i);
    return o + (end - i);
}

/* Past the blanks at s[i] (is_ws), up to n. Kept a plain loop: the
 * processor guesses its exit well enough, and what replaced it measured
 * slower on bench_repair: a 16-byte SSE2 search (most runs are 0 to 3
 * bytes long); a branch-free step over the first two blanks (+8%
 * instructions, and each load then waits for the one before, -18% MB/s);
 * and a bitmask index of blanks and string stops per 64-byte block, walked
 * with a count of trailing zeros, for blanks and strings alike (+44%
 * instructions to build the masks and shift out each 64-bit window, -8%
 * MB/s, for 15% fewer mispredicted branches). */
static inline size_t skip_blanks(const unsigned char *s, size_t i, size_t n) {
    while (i < n && ws_tab[s[i]]) i++;
    return i;
}

/* A string at s[i] (quote q) for the lane, written at *po after a comma
 * when comma: where it ends, else 0. A string that is a value in an object
 * must not be followed by ':' ({"a": "b": 1} is for step()). Only when it
 * is taken are *po and r's steps and counts updated. */
static HOT size_t lane_take_string(rp *r, const unsigned char *s, size_t i, size_t n, char **po,
                                   unsigned char q, int key, int comma, int object_value) {
    lane_out lo = {*po, r->oend, q == '"' ? 0 : AW_REPAIR_SINGLE_QUOTES, 0};
    if (comma) *lo.o++ = ',';
    size_t end = lane_string(s, i, n, &lo, q, key);
    if (end && object_value) {
        size_t j = skip_blanks(s, end, n);
        if (j < n && s[j] == ':') return 0;
    }
    if (end) {
        *po = lo.o;
        r->steps |= lo.steps;
        r->nctrl += lo.nctrl;
    }
    return end;
}

/* Take what the lane can from r->i on; 1 when it took a token (so the walk
 * knows input was consumed by a step), else 0. Each state has its own
 * block, and a token goes straight to the block of the state that follows
 * it, as in the grammar: the processor then learns each place's usual
 * outcome (after a key, a colon), which one dispatch on the state hides. */
static NOINLINE int fast_lane(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->n, full = r->full, i = r->i;
    if (r->esc_open) return 0; /* the next string opened with \" */
    if (!lane_room(r->o, r->oend, n - i, 32) && out_grow(r, n - i + 64)) return 0;
    char *o = r->o;
    int state = r->state, after_comma = r->after_comma, took = 0, foreign;
    size_t d = r->depth, end;
    unsigned char top = d ? r->kind[d - 1] : 0; /* the innermost container */
    unsigned char c;
    const char *json;
    switch (state) {
    case S_KEY: goto key;
    case S_COLON: goto colon;
    case S_VALUE: goto value;
    default: goto after;
    }

key: /* in an object, after '{' or ',' */
    state = S_KEY;
    if ((i = skip_blanks(s, i, n)) >= n) goto out;
    c = s[i];
    if (c == '}') goto close;
    if (c == '"' || c == '\'') {
        if (!(end = lane_take_string(r, s, i, n, &o, c, 1, r->has[d - 1], 0))) goto out;
    } else if (is_ident(c)) { /* {key: ...}, as bare_word takes it */
        if (i > r->key_from && i < r->key_stop) goto out;
        end = i + 1;
        while (end < n && is_ident(s[end])) end++;
        if (end >= n || s[end] != ':' || !lane_room(o, r->oend, n - i, 3)) goto out;
        if (r->has[d - 1]) *o++ = ',';
        *o++ = '"';
        o = lane_copy(o, s, i, end, full);
        *o++ = '"';
        r->key_from = i;
        r->key_stop = end;
        r->steps |= AW_REPAIR_UNQUOTED_KEYS;
    } else {
        goto out;
    }
    r->has[d - 1] = 1;
    i = end;
    took = 1;
    /* fall through */
colon:
    state = S_COLON;
    if ((i = skip_blanks(s, i, n)) >= n || s[i] != ':') goto out;
    *o++ = ':';
    i++;
    after_comma = 0;
    took = 1;
    /* fall through */
value:
    state = S_VALUE;
    if ((i = skip_blanks(s, i, n)) >= n) goto out;
    c = s[i];
    if (c == '{' || c == '[') {
        if (d >= MAX_DEPTH) goto out;
        if (top == '[') {
            if (r->has[d - 1]) *o++ = ',';
            r->has[d - 1] = 1;
        }
        *o++ = (char)c;
        r->kind[d] = c;
        r->has[d] = 0;
        d++;
        top = c;
        after_comma = 0;
        took = 1;
        i++;
        if (c == '{') {
            r->open_obj++;
            goto key;
        }
        r->open_arr++;
        goto value;
    }
    if (c == ']' && top == '[') goto close;
    /* a string, a number or a literal in a container */
    if (!d) goto out;
    if (c == '"' || c == '\'') {
        if (!(end = lane_take_string(r, s, i, n, &o, c, 0, top == '[' && r->has[d - 1], top == '{')))
            goto out;
    } else {
        int comma = top == '[' && r->has[d - 1];
        if (is_digit(c) || c == '-') {
            if (!(end = lane_number(s, i, n))) goto out;
            if (comma) *o++ = ',';
            o = lane_copy(o, s, i, end, full);
        } else {
            if (!(end = lane_literal(s, i, n, &json, &foreign))) goto out;
            if (comma) *o++ = ',';
            memcpy(o, json, end - i);
            o += end - i;
            if (foreign) r->steps |= AW_REPAIR_PYTHON_LITERALS;
        }
    }
    if (top == '[') r->has[d - 1] = 1;
    i = end;
    after_comma = 0;
    took = 1;
    /* fall through */
after: /* after a value in a container */
    state = S_AFTER;
    if ((i = skip_blanks(s, i, n)) >= n) goto out;
    c = s[i];
    if (c == ',') {
        i++;
        after_comma = 1;
        took = 1;
        if (top == '{') goto key;
        goto value;
    }
    if ((c == '"' || c == '\'') && lane_room(o, r->oend, n - i, 1)) {
        /* the comma step() adds before what starts an item; it reads nothing */
        r->steps |= AW_REPAIR_MISSING_COMMA;
        after_comma = 0;
        if (top == '{') goto key;
        goto value;
    }
    if (c != (top == '{' ? '}' : ']')) goto out;
    /* fall through */
close: /* the closer c of the innermost container, with close_top's steps */
    if (state != S_AFTER && after_comma) r->steps |= AW_REPAIR_TRAILING_COMMA;
    *o++ = (char)c;
    i++;
    if (top == '{') r->open_obj--;
    else r->open_arr--;
    after_comma = 0;
    took = 1;
    if (--d) {
        top = r->kind[d - 1];
        goto after;
    }
    r->done = 1;

out:
    r->i = i;
    r->o = o;
    r->depth = d;
    r->state = state;
    r->after_comma = after_comma;
    return took;
}

#endif /* AW_REPAIR_NO_LANE */

/* ---- the walk ----------------------------------------------------------- */

static void step(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->n, i = r->i, ql, el;
    unsigned char c = s[i];
    if (c == '\\' && i + 1 < n && s[i + 1] == '"') { /* {\"a\": 1}: JSON escaped once too often */
        r->i++;
        r->esc_open = 1;
        r->steps |= AW_REPAIR_INVALID_ESCAPES;
        return;
    }
    switch (r->state) {
    case S_AFTER:
        if (c == ',') {
            r->i++;
            r->state = in_object(r) ? S_KEY : S_VALUE;
            r->after_comma = 1;
        } else if (c == '}' || c == ']') {
            on_closer(r, c);
        } else if ((el = ellipsis_at(s, n, i))) {
            r->i += el;
            r->steps |= AW_REPAIR_ELLIPSIS;
        } else if (starts_item(r, i)) {
            r->steps |= AW_REPAIR_MISSING_COMMA;
            r->state = in_object(r) ? S_KEY : S_VALUE;
            r->after_comma = 0;
        } else {
            skip_stray(r);
        }
        break;
    case S_COLON:
        if (c == ':' || c == '=') {
            put1(r, ':');
            if (c == '=') r->steps |= AW_REPAIR_MISSING_COLON;
            r->i++;
            r->state = S_VALUE;
            r->after_comma = 0;
        } else if (c == '}' || c == ']') {
            on_closer(r, c);
        } else if (c == ',') {
            PUTS(r, ":null");
            r->steps |= AW_REPAIR_MISSING_VALUE;
            r->state = S_AFTER;
        } else if (starts_item(r, i) || ellipsis_at(s, n, i)) {
            put1(r, ':');
            r->steps |= AW_REPAIR_MISSING_COLON;
            r->state = S_VALUE;
            r->after_comma = 0;
        } else {
            skip_stray(r);
        }
        break;
    case S_KEY: {
        int q;
        if (c == '}' || c == ']') {
            on_closer(r, c);
        } else if (c == ',') {
            r->i++;
            r->steps |= AW_REPAIR_TRAILING_COMMA;
        } else if ((el = ellipsis_at(s, n, i))) {
            r->i += el;
            r->steps |= AW_REPAIR_ELLIPSIS;
            skip_space(r);
            if (r->i < n && s[r->i] == ',') r->i++;
            r->after_comma = 0;
        } else if ((q = quote_at(s, n, i, &ql)) != Q_NONE) {
            separate(r);
            parse_string(r, q, ql, 1);
            r->state = S_COLON;
            if (r->i < n && s[r->i] == ':') { /* the usual next step, taken here */
                put1(r, ':');
                r->i++;
                r->state = S_VALUE;
                r->after_comma = 0;
            }
        } else if (c == ':' || c == '{' || c == '[' || c == '=' || c == ')' || c == ';') {
            skip_stray(r);
        } else {
            separate(r);
            bare_word(r, 1);
            r->state = S_COLON;
        }
        break;
    }
    case S_VALUE:
        if (c == '}' || c == ']') {
            on_closer(r, c);
        } else if (c == ',') {
            if (in_object(r)) { /* "a":, */
                PUTS(r, "null");
                r->steps |= AW_REPAIR_MISSING_VALUE;
                value_done(r);
            } else {
                r->i++;
                r->steps |= r->depth ? AW_REPAIR_TRAILING_COMMA : AW_REPAIR_SURROUNDING_TEXT;
            }
        } else if (c == ':' || c == ')' || c == ';') {
            skip_stray(r);
        } else if ((el = ellipsis_at(s, n, i))) {
            r->i += el;
            r->steps |= AW_REPAIR_ELLIPSIS;
            if (in_object(r)) {
                PUTS(r, "null");
                value_done(r);
            } else {
                skip_space(r);
                if (r->i < n && s[r->i] == ',') r->i++;
                r->after_comma = 0;
            }
        } else {
            parse_value(r);
        }
        break;
    }
}

static void walk(rp *r) {
    size_t stall = 0;
    while (!r->rc && !r->done) {
#ifndef AW_REPAIR_NO_LANE
        if (fast_lane(r)) stall = 0; /* it took tokens: steps that consumed input */
        if (r->rc || r->done) break;
#endif
        if (r->i >= r->n || r->s[r->i] <= ' ' || r->s[r->i] >= 0x7F || r->s[r->i] == '/') skip_space(r);
        if (r->i >= r->n) break;
        if (r->s[r->i] == '`' && fence_at(r->s, r->n, r->i)) { /* a closing fence ends the value */
            r->n = r->i;
            break;
        }
        size_t i = r->i, depth = r->depth;
        step(r);
        /* every step consumes input or changes state; this is a seatbelt */
        if (r->i == i && r->depth == depth && ++stall > 4) {
            skip_stray(r);
            stall = 0;
        } else if (r->i != i) {
            stall = 0;
        }
    }
    while (!r->rc && r->depth) close_top(r, 0);
}

/* ---- finding the value -------------------------------------------------- */

/* Does a value start at i, for a text that begins there? */
static int value_starts(const rp *r, size_t i) {
    const unsigned char *s = r->s;
    size_t n = r->n, ql;
    if (i >= n) return 0;
    unsigned char c = s[i];
    if (c == '{' || c == '[' || is_digit(c) || quote_at(s, n, i, &ql)) return 1;
    if ((c == '-' || c == '+' || c == '.') && starts_item(r, i)) return 1;
    if (is_ident_start(c)) { /* a literal alone, not "None of this" */
        size_t l = ident_len(s, n, i), j = i + l;
        int foreign;
        if (!keyword(s + i, l, &foreign)) return 0;
        while (j < n && is_ws(s[j])) j++;
        return j >= n || fence_at(s, n, j) || (s[j] == '/' && j + 1 < n && (s[j + 1] == '/' || s[j + 1] == '*'));
    }
    return 0;
}

/* A '[' that looks like the start of JSON rather than of [a link]. */
static int likely_array(const unsigned char *s, size_t n, size_t i) {
    size_t j = i + 1;
    while (j < n && is_ws(s[j])) j++;
    if (j >= n) return 1;
    unsigned char c = s[j];
    return c == '{' || c == '[' || c == ']' || c == '"' || c == '\'' || c == '-' || is_digit(c);
}

static size_t skip_fence(rp *r, size_t i) {
    const unsigned char *s = r->s;
    size_t n = r->full;
    while (i < n && s[i] == '`') i++;
    while (i < n && (is_ident(s[i]) || s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == '#'))
        i++;
    return i;
}

/* Where the value inside an opened fence ends: at the first fence that
 * starts a line, else at the last fence, else at the end. */
static size_t fence_end(const rp *r, size_t from) {
    const unsigned char *s = r->s;
    size_t n = r->full, last = n;
    for (size_t i = next_fence(s, n, from); i < n; i = next_fence(s, n, i)) {
        /* blanks back to a newline after from: the fence starts a line
         * (each blank is looked at once: the next fence is further on) */
        size_t b = i;
        while (b > from && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r')) b--;
        if (b > from && s[b - 1] == '\n') return i;
        last = i;
        while (i < n && s[i] == '`') i++;
    }
    return last;
}

static void open_fence(rp *r, size_t at) {
    r->steps |= AW_REPAIR_CODE_FENCE;
    r->i = skip_fence(r, at);
    r->n = fence_end(r, r->i);
    skip_space(r);
}

/* The first '{', or '[' that looks like JSON, in [from, to); else the first
 * '['; else to. */
static size_t first_container(const unsigned char *s, size_t from, size_t to) {
    size_t obj = to, arr = to, any_arr = to;
    for (size_t i = from; i < to && obj == to && arr == to; i++) {
        if (s[i] == '{' && obj == to) {
            obj = i;
        } else if (s[i] == '[') {
            if (any_arr == to) any_arr = i;
            if (arr == to && likely_array(s, to, i)) arr = i;
        }
    }
    size_t best = obj < arr ? obj : arr;
    return best < to ? best : any_arr;
}

/* Set r->i to the start of the value; 0 when there is none. */
static int find_start(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->full;
    if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) {
        r->i = 3;
        r->steps |= AW_REPAIR_SURROUNDING_TEXT;
    }
    skip_space(r);
    if (fence_at(s, n, r->i)) open_fence(r, r->i);
    if (value_starts(r, r->i)) return 1;
    if (r->i >= r->n) return 0;

    /* prose first: the value is most likely inside a fence, if there is one */
    size_t from = r->i;
    if (!(r->steps & AW_REPAIR_CODE_FENCE)) {
        size_t fence = next_fence(s, n, from);
        if (fence < n) {
            unsigned steps0 = r->steps;
            open_fence(r, fence);
            size_t at = value_starts(r, r->i) ? r->i : first_container(s, r->i, r->n);
            if (at < r->n) {
                r->i = at;
                r->steps |= AW_REPAIR_SURROUNDING_TEXT;
                return 1;
            }
            /* a fence with no value in it: look at the whole text */
            r->steps = steps0;
            r->n = n;
            r->i = from;
        }
    }
    r->steps |= AW_REPAIR_SURROUNDING_TEXT;
    size_t best = first_container(s, r->i, r->n);
    if (best < r->n) {
        r->i = best;
        return 1;
    }
    /* no container: the first string, number or true/false/null in the prose */
    for (size_t i = r->i; i < r->n; i++) {
        unsigned char c = s[i];
        int word_start = i == r->i || !is_ident(s[i - 1]);
        if (!word_start) continue;
        if (c == '"' || (c == '\'' && (i == r->i || !is_alpha(s[i - 1]))) ||
            (is_digit(c)) || (c == '-' && i + 1 < r->n && is_digit(s[i + 1]))) {
            r->i = i;
            return 1;
        }
        if (c == 't' || c == 'f' || c == 'n') {
            size_t l = ident_len(s, r->n, i);
            if ((l == 4 && (memcmp(s + i, "true", 4) == 0 || memcmp(s + i, "null", 4) == 0)) ||
                (l == 5 && memcmp(s + i, "false", 5) == 0)) {
                r->i = i;
                return 1;
            }
        }
    }
    return 0;
}

/* What follows the value: a fence, a comma, an ellipsis or other text. */
static void after_value(rp *r) {
    const unsigned char *s = r->s;
    size_t n = r->full;
    r->n = n;
    skip_space(r);
    if (r->i < n && s[r->i] == ',') {
        size_t j = r->i + 1;
        r->i = j;
        skip_space(r);
        if (r->i >= n) {
            r->steps |= AW_REPAIR_TRAILING_COMMA;
            return;
        }
        r->i = j - 1;
    }
    if (fence_at(s, n, r->i)) {
        r->steps |= AW_REPAIR_CODE_FENCE;
        r->i = skip_fence(r, r->i);
        skip_space(r);
    }
    if (r->i >= n) return;
    size_t el = ellipsis_at(s, n, r->i);
    if (el) {
        size_t j = r->i + el;
        r->i = j;
        skip_space(r);
        if (r->i >= n) {
            r->steps |= AW_REPAIR_ELLIPSIS;
            return;
        }
    }
    r->steps |= AW_REPAIR_SURROUNDING_TEXT;
}

/* ---- entry points ------------------------------------------------------- */

/* Does the strict reader take the text? 1 yes, 0 no, -1 out of memory.
 * Asked only when the walk changed nothing: a text the walk had to repair
 * is never valid JSON (every step marks something the strict reader
 * refuses; fuzz_json_repair checks that valid input comes back unchanged),
 * so broken text costs one pass, not a failed strict parse first. */
static int strict_json(const char *text, size_t len, const aw_allocator *alloc) {
    aw_json_read_options ro = {alloc, 0, false};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(text, len, &ro, &doc, NULL);
    aw_json_doc_free(doc);
    if (rc == AW_ENOMEM) return -1;
    return rc == 0;
}

int aw_json_repair(const char *text, size_t len, const aw_allocator *alloc, aw_buf *out,
                   unsigned *steps, aw_error *err) {
    if (steps) *steps = 0;
    if (!out || (!text && len)) return aw__error_set(err, AW_EINVAL, "no input or output buffer");
    if (!text) text = "";
    aw_error_clear(err);

    /* about 2 KiB of state, the container stack included: no allocation */
    rp st;
    rp *r = &st;
    memset(r, 0, offsetof(rp, kind));
    r->s = (const unsigned char *)text;
    r->n = r->full = len;
    r->out = out;
    size_t mark = out->len;

    if (!find_start(r))
        return aw__error_at(err, AW_ESYNTAX, text, len, r->i < len ? r->i : len,
                            "no JSON value found");
    /* room for the usual case: output about the size of the input */
    if (aw_buf_reserve(out, len - r->i + 16)) r->rc = AW_ENOMEM;
    r->state = S_VALUE;
    if (!r->rc) {
        out_load(r);
        walk(r);
        out_sync(r);
    }
    if (!r->rc && !r->done) { /* only stray bytes where the value seemed to be */
        out->len = mark;
        if (out->data) out->data[mark] = '\0';
        return aw__error_at(err, AW_ESYNTAX, text, len, len, "no JSON value found");
    }
    if (!r->rc) after_value(r);
    if (r->rc) {
        out->len = mark;
        if (out->data) out->data[mark] = '\0';
        if (r->rc == AW_ELIMIT)
            return aw__error_at(err, AW_ELIMIT, text, len, r->rc_at,
                                "nesting deeper than %d levels", MAX_DEPTH);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    if (!r->steps) { /* nothing to repair: the text may be valid JSON as it is */
        int valid = strict_json(text, len, alloc);
        if (valid != 0) {
            out->len = mark;
            if (out->data) out->data[mark] = '\0';
            if (valid < 0) return aw__error_set(err, AW_ENOMEM, "out of memory");
            if (aw_buf_append(out, text, len)) return aw__error_set(err, AW_ENOMEM, "out of memory");
            return 0;
        }
        /* the strict reader refused it all the same (\ud800, say): the
         * rewrite stands, and something was changed */
        r->steps = AW_REPAIR_SURROUNDING_TEXT;
    }
    out->data[out->len] = '\0';
    if (steps) *steps = r->steps;
    return 0;
}

const char *aw_json_repair_step_name(unsigned step) {
    switch (step) {
    case AW_REPAIR_CODE_FENCE: return "code_fence";
    case AW_REPAIR_SURROUNDING_TEXT: return "surrounding_text";
    case AW_REPAIR_ELLIPSIS: return "ellipsis";
    case AW_REPAIR_SINGLE_QUOTES: return "single_quotes";
    case AW_REPAIR_UNQUOTED_KEYS: return "unquoted_keys";
    case AW_REPAIR_TRAILING_COMMA: return "trailing_comma";
    case AW_REPAIR_MISSING_COMMA: return "missing_comma";
    case AW_REPAIR_COMMENTS: return "comments";
    case AW_REPAIR_PYTHON_LITERALS: return "python_literals";
    case AW_REPAIR_CONTROL_CHARS: return "control_chars";
    case AW_REPAIR_INVALID_ESCAPES: return "invalid_escapes";
    case AW_REPAIR_UNCLOSED: return "unclosed";
    case AW_REPAIR_MISSING_COLON: return "missing_colon";
    case AW_REPAIR_MISSING_VALUE: return "missing_value";
    default: return NULL;
    }
}
