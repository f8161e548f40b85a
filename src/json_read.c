/* The strict JSON reader.
 *
 * The input is copied once into the document's arena (with zero padding so
 * vector loads never read past it) and strings are decoded in place: an
 * escape never decodes to more bytes than it spans, so the decoded text fits
 * where the raw text was. Containers are parsed with an explicit stack, so
 * the nesting depth costs heap, not C stack, and is limited by max_depth. */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
/* SSSE3's byte shuffle validates UTF-8 16 bytes at a time; the code is
 * built for it on x86-64 with GCC or Clang and used where the CPU has it. */
#if defined(__SSE2__) && defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define AW_UTF8_SSSE3 1
#include <tmmintrin.h>
#endif

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/utf8.h"

#define PAD 32 /* zero bytes after the copied input */

typedef struct rd {
    aw__json_parser *ps;
    aw_arena *arena;
    const char *src; /* caller's text, for error positions */
    size_t len;
    char *base;      /* arena copy; base[len..len+PAD) are zero */
    char *p;
    char *end;
    aw_error *err;
} rd;

void aw__json_parser_init(aw__json_parser *ps, const aw_json_read_options *opts) {
    memset(ps, 0, sizeof *ps);
    ps->alloc = opts ? opts->alloc : NULL;
    ps->max_depth = (opts && opts->max_depth) ? opts->max_depth : AW_JSON_DEFAULT_MAX_DEPTH;
    ps->allow_bom = opts ? opts->allow_bom : 0;
}

void aw__json_parser_free(aw__json_parser *ps) {
    if (!ps->scratch_borrowed) aw_free(ps->alloc, ps->scratch);
    if (!ps->frames_borrowed) aw_free(ps->alloc, ps->frames);
    ps->scratch = NULL;
    ps->frames = NULL;
    ps->scratch_cap = ps->frames_cap = 0;
    ps->scratch_borrowed = ps->frames_borrowed = 0;
}

static int fail(rd *r, int code, const char *at, const char *msg) {
    return aw__error_at(r->err, code, r->src, r->len, (size_t)(at - r->base), "%s", msg);
}

static int fail_unexpected(rd *r, const char *at, const char *what) {
    if (at >= r->end) return fail(r, AW_ESYNTAX, at, "unexpected end of input");
    unsigned char c = (unsigned char)*at;
    if (c == 0) return aw__error_at(r->err, AW_ESYNTAX, r->src, r->len, (size_t)(at - r->base),
                                    "unexpected NUL byte: %s", what);
    if (c >= 0x20 && c < 0x7F)
        return aw__error_at(r->err, AW_ESYNTAX, r->src, r->len, (size_t)(at - r->base),
                            "unexpected '%c': %s", c, what);
    return aw__error_at(r->err, AW_ESYNTAX, r->src, r->len, (size_t)(at - r->base),
                        "unexpected byte 0x%02X: %s", c, what);
}

static inline char *skip_ws(char *p) {
    if ((unsigned char)*p > ' ') return p; /* compact JSON: no whitespace at all */
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}

/* ---- strings ------------------------------------------------------------ */

/* Each hex digit's value plus one; 0 for any other byte. */
static const unsigned char hex_value_plus1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

static inline int hex_digit(unsigned char c) { return hex_value_plus1[c] - 1; }

/* Four hex digits at p; no branch per digit (escapes mix digits and
 * letters unpredictably): a non-digit makes the OR negative. */
static int hex4(const char *p, uint32_t *out) {
    const unsigned char *u = (const unsigned char *)p;
    int a = hex_digit(u[0]), b = hex_digit(u[1]), c = hex_digit(u[2]), d = hex_digit(u[3]);
    if ((a | b | c | d) < 0) return -1;
    *out = (uint32_t)(a << 12 | b << 8 | c << 4 | d);
    return 0;
}

#if defined(__SSE2__)
/* Bit i set when byte i of the 16 at p needs attention inside a string:
 * '"', '\\', a control character, or any byte >= 0x80 (the signed compare
 * counts those as negative, hence below 0x20). */
static inline unsigned special_mask(const char *p, __m128i *out) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    const __m128i m = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    *out = v;
    return (unsigned)_mm_movemask_epi8(m);
}

/* loaded from first_bytes + 16 - k: k bytes of all ones, then zeros */
static const signed char first_bytes[32] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
#else
static inline int plain_byte(unsigned char c) { return c != '"' && c != '\\' && c >= 0x20 && c < 0x80; }
#endif

#if defined(__SSE2__)
/* Copy n bytes from src down to dst (dst < src; the ranges may overlap)
 * without touching the bytes after dst + n, which may be input not yet
 * read. Ascending 16-byte blocks never overwrite a block before it is
 * loaded; the last (partial) block is loaded before any store. */
static inline void move_down(char *dst, const char *src, size_t n) {
    if (n < 16) {
        const __m128i keep = _mm_loadu_si128((const __m128i *)(first_bytes + 16 - n));
        const __m128i v = _mm_loadu_si128((const __m128i *)src);
        const __m128i old = _mm_loadu_si128((const __m128i *)dst);
        _mm_storeu_si128((__m128i *)dst, _mm_or_si128(_mm_and_si128(keep, v), _mm_andnot_si128(keep, old)));
        return;
    }
    const __m128i last = _mm_loadu_si128((const __m128i *)(src + n - 16));
    for (size_t i = 0; i + 16 <= n; i += 16)
        _mm_storeu_si128((__m128i *)(dst + i), _mm_loadu_si128((const __m128i *)(src + i)));
    _mm_storeu_si128((__m128i *)(dst + n - 16), last);
}
#endif

#if defined(AW_UTF8_SSSE3)
/* UTF-8 validation of 16 bytes at once (after Keiser and Lemire,
 * "Validating UTF-8 in less than one instruction per byte", 2021). Each
 * byte is classified with the byte before it: three table look-ups, on the
 * previous byte's high and low nibble and on this byte's high nibble, each
 * give the set of errors the nibble allows; an error is present when all
 * three allow it. */
enum {
    U8_TOO_SHORT = 0x01,  /* lead byte, then no continuation byte */
    U8_TOO_LONG = 0x02,   /* ASCII byte, then a continuation byte */
    U8_OVERLONG_2 = 0x04, /* C0 or C1, then a continuation byte */
    U8_OVERLONG_3 = 0x08, /* E0, then 80..9F */
    U8_SURROGATE = 0x10,  /* ED, then A0..BF */
    U8_OVERLONG_4 = 0x20, /* F0, then 80..8F */
    U8_TOO_LARGE = 0x40,  /* F4, then 90..BF (F5..FF are checked apart) */
    /* two continuation bytes: an error unless the byte is the third or
     * fourth of a sequence, which the lead two or three bytes back says */
    U8_TWO_CONTS = 0x80
};

#define U8_ANY_LOW (U8_TOO_SHORT | U8_TOO_LONG | U8_TWO_CONTS)
#define U8_CONT_AFTER (U8_TOO_LONG | U8_OVERLONG_2 | U8_TWO_CONTS)

__attribute__((target("ssse3"))) static inline __m128i u8_nibble_lookup(__m128i table, __m128i nibbles) {
    return _mm_shuffle_epi8(table, nibbles);
}

/* From p (just after a complete character) to the first '"', '\\' or
 * control character: that byte's address when every byte before it is
 * well-formed UTF-8, as aw__utf8_seq_len defines it, else NULL. Reads 16
 * bytes at a time; the zero padding after the input stops it. */
__attribute__((target("ssse3"))) static char *valid_utf8_until_special(char *p) {
    /* previous byte's high nibble */
    const __m128i by_prev_high = _mm_setr_epi8(
        U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG, U8_TOO_LONG,
        (char)U8_TWO_CONTS, (char)U8_TWO_CONTS, (char)U8_TWO_CONTS, (char)U8_TWO_CONTS,
        U8_TOO_SHORT | U8_OVERLONG_2, U8_TOO_SHORT, U8_TOO_SHORT | U8_OVERLONG_3 | U8_SURROGATE,
        U8_TOO_SHORT | U8_OVERLONG_4 | U8_TOO_LARGE);
    /* previous byte's low nibble */
    const __m128i by_prev_low = _mm_setr_epi8(
        (char)(U8_ANY_LOW | U8_OVERLONG_2 | U8_OVERLONG_3 | U8_OVERLONG_4), (char)(U8_ANY_LOW | U8_OVERLONG_2),
        (char)U8_ANY_LOW, (char)U8_ANY_LOW, (char)(U8_ANY_LOW | U8_TOO_LARGE), (char)U8_ANY_LOW, (char)U8_ANY_LOW,
        (char)U8_ANY_LOW, (char)U8_ANY_LOW, (char)U8_ANY_LOW, (char)U8_ANY_LOW, (char)U8_ANY_LOW, (char)U8_ANY_LOW,
        (char)(U8_ANY_LOW | U8_SURROGATE), (char)U8_ANY_LOW, (char)U8_ANY_LOW);
    /* this byte's high nibble */
    const __m128i by_high = _mm_setr_epi8(
        U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT,
        (char)(U8_CONT_AFTER | U8_OVERLONG_3 | U8_OVERLONG_4),
        (char)(U8_CONT_AFTER | U8_OVERLONG_3 | U8_TOO_LARGE),
        (char)(U8_CONT_AFTER | U8_SURROGATE | U8_TOO_LARGE), (char)(U8_CONT_AFTER | U8_SURROGATE | U8_TOO_LARGE),
        U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT, U8_TOO_SHORT);
    const __m128i low_nibble = _mm_set1_epi8(0x0F);
    /* the last three bytes of a block could not end a sequence: greater
     * than EF, DF, BF respectively */
    const __m128i tail_limits = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)0xEF,
                                              (char)0xDF, (char)0xBF);
    __m128i prev = _mm_setzero_si128(); /* as if ASCII came before p */
    unsigned prev_unfinished = 0;
    for (;;) {
        const __m128i v = _mm_loadu_si128((const __m128i *)p);
        const __m128i special = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
            _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v)); /* v <= 0x1F */
        /* text between the non-ASCII characters: ASCII after a finished
         * character is valid whatever it holds */
        if (!(_mm_movemask_epi8(v) | prev_unfinished)) {
            unsigned stops = (unsigned)_mm_movemask_epi8(special);
            if (stops) return p + __builtin_ctz(stops);
            prev = v;
            p += 16;
            continue;
        }
        const __m128i prev1 = _mm_alignr_epi8(v, prev, 15);
        __m128i err = _mm_and_si128(
            _mm_and_si128(u8_nibble_lookup(by_prev_high, _mm_and_si128(_mm_srli_epi16(prev1, 4), low_nibble)),
                          u8_nibble_lookup(by_prev_low, _mm_and_si128(prev1, low_nibble))),
            u8_nibble_lookup(by_high, _mm_and_si128(_mm_srli_epi16(v, 4), low_nibble)));
        /* bit 7 where a lead byte two (E0..) or three (F0..) back wants
         * this byte to be a continuation: then TWO_CONTS is no error, and
         * its absence is one */
        const __m128i third = _mm_subs_epu8(_mm_alignr_epi8(v, prev, 14), _mm_set1_epi8((char)(0xE0 - 0x80)));
        const __m128i fourth = _mm_subs_epu8(_mm_alignr_epi8(v, prev, 13), _mm_set1_epi8((char)(0xF0 - 0x80)));
        err = _mm_xor_si128(err, _mm_and_si128(_mm_or_si128(third, fourth), _mm_set1_epi8((char)0x80)));
        err = _mm_or_si128(err, _mm_subs_epu8(v, _mm_set1_epi8((char)0xF4))); /* F5..FF */
        unsigned bad = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(err, _mm_setzero_si128())) ^ 0xFFFFu;
        unsigned stops = (unsigned)_mm_movemask_epi8(special);
        if (stops) {
            /* the special byte's own check says whether a sequence was
             * cut short by it; bytes after it are not this string's */
            unsigned k = (unsigned)__builtin_ctz(stops);
            return bad & ((2u << k) - 1) ? NULL : p + k;
        }
        if (bad) return NULL;
        prev_unfinished = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_subs_epu8(v, tail_limits), _mm_setzero_si128())) ^ 0xFFFFu;
        prev = v;
        p += 16;
    }
}
#endif

/* What the one-letter escapes \" \\ \/ \b \f \n \r \t stand for; 0 for
 * any other byte after a backslash. */
static const unsigned char simple_escape[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b', ['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t'};

/* The string whose text starts at start, from p on (nothing before p needs
 * attention). On success *out_s and *out_n describe the decoded string
 * (NUL-terminated in place) and r->p is after the closing quote. Until the
 * first escape nothing is copied; after it, decoded bytes are written at
 * dst, which always trails p. */
static int parse_string_rest(rd *r, char *start, char *p, const char **out_s, size_t *out_n) {
    char *dst = NULL;
#if defined(AW_UTF8_SSSE3)
    int vector_utf8 = 1;
#endif
    for (;;) {
#if defined(__SSE2__)
        __m128i v;
        unsigned mask = special_mask(p, &v);
        if (!dst) {
            while (!mask) {
                p += 16;
                mask = special_mask(p, &v);
            }
            p += __builtin_ctz(mask);
        } else {
            /* a whole plain block can be stored at once: the 16 bytes are
             * already in the register, and dst trails p */
            while (!mask) {
                _mm_storeu_si128((__m128i *)dst, v);
                p += 16;
                dst += 16;
                mask = special_mask(p, &v);
            }
            /* the k plain bytes before the special one: blend them into
             * the 16 bytes at dst, whose other bytes may be input not yet
             * read (dst trails p) and are written back as they were */
            unsigned k = (unsigned)__builtin_ctz(mask);
            const __m128i keep = _mm_loadu_si128((const __m128i *)(first_bytes + 16 - k));
            const __m128i old = _mm_loadu_si128((const __m128i *)dst);
            _mm_storeu_si128((__m128i *)dst, _mm_or_si128(_mm_and_si128(keep, v), _mm_andnot_si128(keep, old)));
            p += k;
            dst += k;
        }
#else
        if (!dst) {
            while (plain_byte((unsigned char)*p)) p++;
        } else {
            while (plain_byte((unsigned char)*p)) *dst++ = *p++;
        }
#endif
        unsigned char c = (unsigned char)*p;
        if (c == '"') {
            char *stop = dst ? dst : p;
            *stop = '\0';
            *out_s = start;
            *out_n = (size_t)(stop - start);
            r->p = p + 1;
            return 0;
        }
        if (c == '\\') {
            if (!dst) dst = p;
            unsigned char e = (unsigned char)p[1];
            /* a table, not a switch: escapes come in no predictable order */
            if (simple_escape[e]) {
                *dst++ = (char)simple_escape[e];
                p += 2;
                continue;
            }
            switch (e) {
            case 'u': {
                uint32_t cp;
                if (p + 6 > r->end || hex4(p + 2, &cp))
                    return fail(r, AW_ESYNTAX, p, "invalid \\u escape: expected four hex digits");
                p += 6;
                if (cp >= 0xD800 && cp <= 0xDBFF && p[0] == '\\' && p[1] == 'u') {
                    uint32_t lo;
                    if (p + 6 <= r->end && hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        p += 6;
                    }
                }
                /* A lone surrogate is kept in its 3-byte generalized form,
                 * as JSON.parse keeps it in a UTF-16 string. */
                dst += aw__utf8_encode(cp, dst);
                continue;
            }
            default:
                if (p + 1 >= r->end) return fail(r, AW_ESYNTAX, p, "unterminated string");
                return fail(r, AW_ESYNTAX, p, "invalid escape sequence in string");
            }
        }
        if (c < 0x20) {
            if (p >= r->end) return fail(r, AW_ESYNTAX, start - 1, "unterminated string");
            return aw__error_at(r->err, AW_ESYNTAX, r->src, r->len, (size_t)(p - r->base),
                                "control character U+%04X in string must be escaped", c);
        }
#if defined(AW_UTF8_SSSE3)
        /* non-ASCII: validated 16 bytes at a time up to the next byte that
         * needs attention, where the CPU can; the scalar loop below takes
         * over for the rest of the string at the first invalid byte, to
         * report it exactly (and never to revisit bytes) */
        if (vector_utf8 && __builtin_cpu_supports("ssse3")) {
            char *stop = valid_utf8_until_special(p);
            if (stop) {
                if (dst) {
                    move_down(dst, p, (size_t)(stop - p));
                    dst += stop - p;
                }
                p = stop;
                continue;
            }
            vector_utf8 = 0;
        }
#endif
        /* non-ASCII: validate a run of multi-byte sequences */
        do {
            size_t n = aw__utf8_seq_len((const unsigned char *)p, (size_t)(r->end - p));
            if (n == 0)
                return aw__error_at(r->err, AW_EUTF8, r->src, r->len, (size_t)(p - r->base),
                                    "invalid UTF-8 byte 0x%02X in string", (unsigned char)*p);
            if (dst) {
                for (size_t i = 0; i < n; i++) dst[i] = p[i];
                dst += n;
            }
            p += n;
        } while ((unsigned char)*p >= 0x80);
    }
}

/* p points after the opening quote. Most strings (keys above all) have no
 * escape and no non-ASCII byte: they are found here, inline, and only the
 * others continue in parse_string_rest. */
static inline int parse_string(rd *r, char *p, const char **out_s, size_t *out_n) {
    char *start = p;
#if defined(__SSE2__)
    __m128i v;
    unsigned mask = special_mask(p, &v);
    while (!mask) {
        p += 16;
        mask = special_mask(p, &v);
    }
    p += __builtin_ctz(mask);
#else
    while (plain_byte((unsigned char)*p)) p++;
#endif
    if (*p != '"') return parse_string_rest(r, start, p, out_s, out_n);
    *p = '\0';
    *out_s = start;
    *out_n = (size_t)(p - start);
    r->p = p + 1;
    return 0;
}

/* ---- numbers ------------------------------------------------------------ */

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static const uint64_t pow10_u64[20] = {1ull,
                                       10ull,
                                       100ull,
                                       1000ull,
                                       10000ull,
                                       100000ull,
                                       1000000ull,
                                       10000000ull,
                                       100000000ull,
                                       1000000000ull,
                                       10000000000ull,
                                       100000000000ull,
                                       1000000000000ull,
                                       10000000000000ull,
                                       100000000000000ull,
                                       1000000000000000ull,
                                       10000000000000000ull,
                                       100000000000000000ull,
                                       1000000000000000000ull,
                                       10000000000000000000ull};

/* Accumulates the significant digits: m holds them without trailing zeros,
 * zeros counts the zeros seen since the last non-zero digit. */
typedef struct numacc {
    uint64_t m;
    long zeros;
    int truncated;
} numacc;

static inline void acc_digit(numacc *a, unsigned d) {
    if (d == 0) {
        a->zeros++;
        return;
    }
    if (a->truncated) return;
    long k = a->zeros + 1;
    uint64_t t;
    if (k > 19 || __builtin_mul_overflow(a->m, pow10_u64[k], &t) ||
        __builtin_add_overflow(t, (uint64_t)d, &a->m)) {
        a->truncated = 1;
        return;
    }
    a->zeros = 0;
}

/* A number value: its double, its exact integer when it has one, and
 * its text as written. */
static inline void store_number(aw_json_value *v, double d, int is_int, int64_t iv, const char *text,
                                size_t text_len) {
    v->type = AW_JSON_NUMBER;
    v->flags = is_int ? AW_JSON_F_INT : 0;
    v->num_len = (uint32_t)text_len;
    v->u.num.d = d;
    v->u.num.i = iv;
    v->u.num.text = text;
}

/* Numbers with more than 19 significant digits (or 19 zeros after "0."):
 * the digits are gathered without trailing zeros (1000000000000000000000e-3
 * is still the integer 10^18) and the double comes from strtod. */
static int parse_long_number(rd *r, char *p, aw_json_value *v) {
    char *start = p;
    int neg = 0;
    numacc a = {0, 0, 0};
    long frac_digits = 0;
    long exp10 = 0;
    if (*p == '-') {
        neg = 1;
        p++;
    }
    if (*p == '0') {
        p++;
        if (*p >= '0' && *p <= '9') return fail(r, AW_ESYNTAX, p - 1, "leading zeros are not allowed in numbers");
    } else if (*p >= '1' && *p <= '9') {
        while (*p >= '0' && *p <= '9') acc_digit(&a, (unsigned)(*p++ - '0'));
    } else {
        return fail(r, AW_ESYNTAX, p, neg ? "expected a digit after '-'" : "expected a value");
    }
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return fail(r, AW_ESYNTAX, p, "expected a digit after the decimal point");
        while (*p >= '0' && *p <= '9') {
            acc_digit(&a, (unsigned)(*p++ - '0'));
            frac_digits++;
        }
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '+' || *p == '-') eneg = *p++ == '-';
        if (!(*p >= '0' && *p <= '9')) return fail(r, AW_ESYNTAX, p, "expected a digit in the exponent");
        long e = 0;
        while (*p >= '0' && *p <= '9') {
            if (e < 100000000) e = e * 10 + (*p - '0');
            p++;
        }
        exp10 = eneg ? -e : e;
    }
    size_t text_len = (size_t)(p - start);
    if (text_len > UINT32_MAX) return fail(r, AW_ELIMIT, start, "number literal too long");

    /* value = m * 10^e exactly, when not truncated */
    long e = exp10 - frac_digits + a.zeros;
    int is_int = 0;
    int64_t iv = 0;
    double d;
    if (!a.truncated) {
        if (a.m == 0) {
            is_int = 1;
        } else if (e >= 0 && e <= 19) {
            uint64_t t;
            if (!__builtin_mul_overflow(a.m, pow10_u64[e], &t)) {
                if (!neg && t <= (uint64_t)INT64_MAX) {
                    is_int = 1;
                    iv = (int64_t)t;
                } else if (neg && t <= (uint64_t)INT64_MAX + 1) {
                    is_int = 1;
                    iv = t == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t;
                }
            }
        }
    }
    /* Clinger's fast path: exact when both the digits and the power of ten
     * are exactly representable. Anything else goes to strtod. */
    if (!a.truncated && a.m <= (1ull << 53) && e >= -22 && e <= 22) {
        d = (double)a.m;
        if (e > 0) d *= pow10_exact[e];
        else if (e < 0) d /= pow10_exact[-e];
        if (neg) d = -d;
    } else {
        d = aw__json_strtod(start, text_len);
    }
    store_number(v, d, is_int, iv, start, text_len);
    r->p = p;
    return 0;
}

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Append the digits at p to *m; returns the end of the digits. Eight at a
 * time where the bytes allow (long fractions such as 0.44783324450825079
 * are common): the padded copy makes reading 8 bytes past p safe. */
static inline char *gather_digits(char *p, uint64_t *m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);
        /* a digit byte has high nibble 3, and still 3 after adding 6; a
         * carry out of a byte that is not a digit only spoils the bytes
         * after it, which are not counted */
        uint64_t not_digit = ((w & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull) |
                             (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) ^ 0x3030303030303030ull);
        /* leading digits: the first non-digit byte's index, 8 when none
         * (the sentinel bit makes that 7, hence the correction) */
        unsigned n = (unsigned)__builtin_ctzll(not_digit | (1ull << 63)) / 8 + (not_digit == 0);
        if (n == 0) return p;
        /* the n digits to the top of the word: the bytes below become
         * leading zeros of an 8-digit number */
        w = (w - 0x3030303030303030ull) << (8 * (8 - n));
        w = w * 10 + (w >> 8); /* pairs of digits in every other byte */
        w = (((w & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
             (((w >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >> 32;
        *m = *m * pow10_u64[n] + w; /* wraps past 19 digits, which callers refuse */
        p += n;
        if (n < 8) return p;
    }
#else
    while (is_digit(*p)) *m = *m * 10 + (unsigned)(*p++ - '0');
    return p;
#endif
}

/* The value of m * 10^e (m has at most 19 digits) as int64 when it is an
 * integer that fits: *iv and 1, else 0. */
static int exact_integer(uint64_t m, long e, int neg, int64_t *iv) {
    if (m == 0) {
        *iv = 0;
        return 1;
    }
    while (e < 0 && m % 10 == 0) {
        m /= 10;
        e++;
    }
    if (e < 0 || e > 19) return 0;
    uint64_t t;
    if (__builtin_mul_overflow(m, pow10_u64[e], &t)) return 0;
    if (!neg && t <= (uint64_t)INT64_MAX) {
        *iv = (int64_t)t;
        return 1;
    }
    if (neg && t <= (uint64_t)INT64_MAX + 1) {
        *iv = t == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)t;
        return 1;
    }
    return 0;
}

/* The digits go into one uint64_t as they are scanned; up to 19
 * significant digits (all but the longest numbers) it holds them exactly,
 * and the double follows from it without strtod: by Clinger's exact
 * product when the digits and the power of ten are both exact doubles,
 * else by aw__json_decimal_to_double. */
static int parse_number(rd *r, char *p, aw_json_value *v) {
    char *start = p;
    int neg = *p == '-';
    p += neg;
    uint64_t m = 0;
    long sig = 0;  /* significant digits in m (leading zeros are not) */
    long frac = 0; /* digits after the point */
    if (*p == '0') {
        p++;
        if (is_digit(*p)) return fail(r, AW_ESYNTAX, p - 1, "leading zeros are not allowed in numbers");
    } else if (is_digit(*p)) {
        char *d0 = p;
        p = gather_digits(p, &m);
        sig = p - d0;
    } else {
        return fail(r, AW_ESYNTAX, p, neg ? "expected a digit after '-'" : "expected a value");
    }
    if (*p == '.') {
        p++;
        if (!is_digit(*p)) return fail(r, AW_ESYNTAX, p, "expected a digit after the decimal point");
        char *f0 = p;
        if (sig == 0) {
            while (*p == '0') p++; /* 0.000123: no digit yet */
            /* the careful path counts 19 such zeros as too many digits */
            if (p - f0 >= 19) return parse_long_number(r, start, v);
        }
        char *d0 = p;
        p = gather_digits(p, &m);
        sig += p - d0;
        frac = p - f0;
    }
    long exp10 = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        int eneg = 0;
        if (*p == '+' || *p == '-') eneg = *p++ == '-';
        if (!is_digit(*p)) return fail(r, AW_ESYNTAX, p, "expected a digit in the exponent");
        while (is_digit(*p)) {
            if (exp10 < 100000000) exp10 = exp10 * 10 + (*p - '0');
            p++;
        }
        if (eneg) exp10 = -exp10;
    }
    if (sig > 19) return parse_long_number(r, start, v);
    size_t text_len = (size_t)(p - start);
    if (text_len > UINT32_MAX) return fail(r, AW_ELIMIT, start, "number literal too long");

    long e = exp10 - frac;
    int64_t iv = 0;
    int is_int = exact_integer(m, e, neg, &iv);
    double d;
    if (m == 0) {
        d = 0;
    } else if (m <= (1ull << 53) && e >= -22 && e <= 22) {
        d = (double)m;
        if (e > 0) d *= pow10_exact[e];
        else if (e < 0) d /= pow10_exact[-e];
    } else if (aw__json_decimal_to_double(m, e, &d)) {
        d = aw__json_strtod(start + neg, text_len - (size_t)neg);
    }
    /* the sign bit set without a branch: signs come in no order */
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    bits |= (uint64_t)neg << 63;
    memcpy(&d, &bits, sizeof d);
    store_number(v, d, is_int, iv, start, text_len);
    r->p = p;
    return 0;
}

/* ---- containers --------------------------------------------------------- */

/* Grow a scratch stack to cap entries of size elem. A borrowed stack (the
 * caller's, on its C stack) is copied to the heap, not reallocated. */
static void *grow_stack(aw__json_parser *ps, void *items, size_t used, size_t cap, size_t elem, int *borrowed) {
    if (!*borrowed) return aw_realloc(ps->alloc, items, cap * elem);
    void *grown = aw_malloc(ps->alloc, cap * elem);
    if (!grown) return NULL;
    if (used) memcpy(grown, items, used * elem);
    *borrowed = 0;
    return grown;
}

static int grow_scratch(rd *r) {
    aw__json_parser *ps = r->ps;
    size_t cap = ps->scratch_cap ? ps->scratch_cap * 2 : 64;
    aw_json_member *s = grow_stack(ps, ps->scratch, ps->scratch_len, cap, sizeof *s, &ps->scratch_borrowed);
    if (!s) return aw__error_set(r->err, AW_ENOMEM, "out of memory");
    ps->scratch = s;
    ps->scratch_cap = cap;
    return 0;
}

static inline int scratch_push(rd *r) {
    aw__json_parser *ps = r->ps;
    if (ps->scratch_len == ps->scratch_cap && grow_scratch(r)) return AW_ENOMEM;
    ps->scratch_len++;
    return 0;
}

static int frame_push(rd *r, size_t depth, int is_object, const char *at) {
    aw__json_parser *ps = r->ps;
    if (depth >= ps->max_depth)
        return aw__error_at(r->err, AW_ELIMIT, r->src, r->len, (size_t)(at - r->base),
                            "nesting deeper than %zu levels", ps->max_depth);
    if (depth == ps->frames_cap) {
        size_t cap = ps->frames_cap ? ps->frames_cap * 2 : 32;
        if (cap > ps->max_depth) cap = ps->max_depth;
        aw__json_frame *f = grow_stack(ps, ps->frames, depth, cap, sizeof *f, &ps->frames_borrowed);
        if (!f) return aw__error_set(r->err, AW_ENOMEM, "out of memory");
        ps->frames = f;
        ps->frames_cap = cap;
    }
    ps->frames[depth].start = ps->scratch_len;
    ps->frames[depth].is_object = is_object;
    return 0;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* The first (up to) 8 bytes of a key as one number, so that most unequal
 * keys differ at one compare. Keys lie in the padded copy of the input, so
 * 8 bytes from the start of any of them can be read. */
static inline uint64_t key_head(const aw_json_member *m) {
    uint64_t w;
    memcpy(&w, m->key, 8);
    return m->key_len >= 8 ? w : w & (((uint64_t)1 << (8 * m->key_len)) - 1);
}

static inline int same_key(const aw_json_member *a, uint64_t ha, const aw_json_member *b, uint64_t hb) {
    return ha == hb && a->key_len == b->key_len && (a->key_len <= 8 || memcmp(a->key, b->key, a->key_len) == 0);
}

/* AW_JSON_F_DUPKEYS and AW_JSON_F_INDEXKEYS of a parsed object; objects of
 * up to 16 members (nearly all) are checked pairwise on key heads, larger
 * ones by aw__json_object_flags. -1 when memory runs out. */
static int parsed_object_flags(const aw_json_member *m, size_t count, const aw_allocator *alloc) {
    if (count > 16) return aw__json_object_flags(m, count, alloc);
    int flags = 0;
    uint64_t heads[16];
    uint32_t idx;
    for (size_t i = 0; i < count; i++) {
        heads[i] = key_head(&m[i]);
        if (m[i].key_len && is_digit(m[i].key[0]) && aw__json_index_key(m[i].key, m[i].key_len, &idx))
            flags |= AW_JSON_F_INDEXKEYS;
    }
    /* one bit per key head: only a key whose bit is already set can equal
     * an earlier one, and only those are compared */
    uint64_t seen = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t bit = (uint64_t)1 << ((heads[i] * 0x9E3779B97F4A7C15ull) >> 58);
        if (seen & bit)
            for (size_t j = 0; j < i; j++)
                if (same_key(&m[i], heads[i], &m[j], heads[j])) return flags | AW_JSON_F_DUPKEYS;
        seen |= bit;
    }
    return flags;
}
#else
static int parsed_object_flags(const aw_json_member *m, size_t count, const aw_allocator *alloc) {
    return aw__json_object_flags(m, count, alloc);
}
#endif

/* Move the scratch entries of the innermost container into the arena. */
static int close_container(rd *r, size_t depth, aw_json_value *out) {
    aw__json_parser *ps = r->ps;
    aw__json_frame *f = &ps->frames[depth];
    size_t count = ps->scratch_len - f->start;
    /* scratch is still NULL when no container has had a member yet ({} first) */
    aw_json_member *src = count ? ps->scratch + f->start : NULL;
    memset(out, 0, sizeof *out);
    if (f->is_object) {
        out->type = AW_JSON_OBJECT;
        if (count) {
            aw_json_member *m = aw__arena_alloc(r->arena, count * sizeof *m);
            if (!m) return aw__error_set(r->err, AW_ENOMEM, "out of memory");
            memcpy(m, src, count * sizeof *m);
            int flags = parsed_object_flags(m, count, ps->alloc);
            if (flags < 0) return aw__error_set(r->err, AW_ENOMEM, "out of memory");
            out->flags = (uint8_t)flags;
            out->u.obj.members = m;
        }
        out->u.obj.count = out->u.obj.cap = count;
    } else {
        out->type = AW_JSON_ARRAY;
        if (count) {
            aw_json_value *items = aw__arena_alloc(r->arena, count * sizeof *items);
            if (!items) return aw__error_set(r->err, AW_ENOMEM, "out of memory");
            for (size_t i = 0; i < count; i++) items[i] = src[i].value;
            out->u.arr.items = items;
        }
        out->u.arr.count = out->u.arr.cap = count;
    }
    ps->scratch_len = f->start;
    return 0;
}

/* ---- the driver --------------------------------------------------------- */

static inline int parse_key(rd *r, char *p) {
    if (*p != '"') {
        if (*p == '}') return fail(r, AW_ESYNTAX, p, "trailing comma before '}'");
        return fail_unexpected(r, p, "expected a string key");
    }
    if (scratch_push(r)) return AW_ENOMEM;
    aw_json_member *m = &r->ps->scratch[r->ps->scratch_len - 1];
    int rc = parse_string(r, p + 1, &m->key, &m->key_len);
    if (rc) return rc;
    p = skip_ws(r->p);
    if (*p != ':') return fail_unexpected(r, p, "expected ':' after an object key");
    r->p = skip_ws(p + 1);
    return 0;
}

/* Where the value being parsed goes: the innermost container's newest
 * scratch entry, or the root. Values are parsed in place there. */
static inline aw_json_value *value_slot(aw__json_parser *ps, size_t depth, aw_json_value *root) {
    return depth ? &ps->scratch[ps->scratch_len - 1].value : root;
}

static int parse_document(rd *r, aw_json_value *root) {
    aw__json_parser *ps = r->ps;
    size_t depth = 0;
    char *p = skip_ws(r->p);
    int rc;

    ps->scratch_len = 0;
    for (;;) {
        /* parse one value at p into its slot, or open a container */
        aw_json_value *v = value_slot(ps, depth, root);
        switch (*p) {
        case '{':
            if ((rc = frame_push(r, depth, 1, p))) return rc;
            depth++;
            p = skip_ws(p + 1);
            if (*p == '}') {
                p++;
                depth--;
                if ((rc = close_container(r, depth, v))) return rc;
                break;
            }
            if ((rc = parse_key(r, p))) return rc;
            p = r->p;
            continue;
        case '[':
            if ((rc = frame_push(r, depth, 0, p))) return rc;
            depth++;
            p = skip_ws(p + 1);
            if (*p == ']') {
                p++;
                depth--;
                if ((rc = close_container(r, depth, v))) return rc;
                break;
            }
            if ((rc = scratch_push(r))) return rc;
            ps->scratch[ps->scratch_len - 1].key = NULL;
            ps->scratch[ps->scratch_len - 1].key_len = 0;
            continue;
        case '"':
            v->type = AW_JSON_STRING;
            v->flags = 0;
            v->reserved_ = 0;
            v->num_len = 0;
            if ((rc = parse_string(r, p + 1, &v->u.str.ptr, &v->u.str.len))) return rc;
            p = r->p;
            break;
        case 't':
            if (memcmp(p, "true", 4)) return fail_unexpected(r, p, "expected a value");
            memset(v, 0, sizeof *v);
            v->type = AW_JSON_BOOL;
            v->u.b = true;
            p += 4;
            break;
        case 'f':
            if (memcmp(p, "false", 5)) return fail_unexpected(r, p, "expected a value");
            memset(v, 0, sizeof *v);
            v->type = AW_JSON_BOOL;
            v->u.b = false;
            p += 5;
            break;
        case 'n':
            if (memcmp(p, "null", 4)) return fail_unexpected(r, p, "expected a value");
            memset(v, 0, sizeof *v);
            v->type = AW_JSON_NULL;
            p += 4;
            break;
        case '-': case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9':
            v->reserved_ = 0;
            if ((rc = parse_number(r, p, v))) return rc;
            p = r->p;
            break;
        default:
            if (depth && !ps->frames[depth - 1].is_object && *p == ']' &&
                ps->scratch_len - 1 > ps->frames[depth - 1].start)
                return fail(r, AW_ESYNTAX, p, "trailing comma before ']'");
            return fail_unexpected(r, p, "expected a value");
        }

        /* a value is complete in its slot: find what comes next */
        for (;;) {
            if (depth == 0) {
                r->p = p;
                return 0;
            }
            aw__json_frame *f = &ps->frames[depth - 1];
            p = skip_ws(p);
            if (*p == ',') {
                p = skip_ws(p + 1);
                if (f->is_object) {
                    if ((rc = parse_key(r, p))) return rc;
                    p = r->p;
                } else {
                    if ((rc = scratch_push(r))) return rc;
                    ps->scratch[ps->scratch_len - 1].key = NULL;
                    ps->scratch[ps->scratch_len - 1].key_len = 0;
                }
                break; /* parse the next value */
            }
            if (f->is_object ? *p != '}' : *p != ']')
                return fail_unexpected(r, p, f->is_object ? "expected ',' or '}' after an object member"
                                                          : "expected ',' or ']' after an array element");
            p++;
            depth--;
            /* the container's own slot: the entry just below its entries */
            aw_json_value *slot = depth ? &ps->scratch[ps->frames[depth].start - 1].value : root;
            if ((rc = close_container(r, depth, slot))) return rc;
        }
    }
}

/* Arena bytes a document of len input bytes is given up front: the padded
 * copy and a first share of the values. Callers refuse len above
 * (SIZE_MAX - PAD - 4096) / 3 * 2, so this sum (and the few hundred bytes
 * added to it) cannot wrap. */
static size_t first_share(size_t len) { return len + PAD + len / 2 + 256; }

int aw__json_parse_with(aw__json_parser *ps, aw_arena *arena, const char *text, size_t len,
                        aw_json_value *root, aw_error *err) {
    if (!text && len) return aw__error_set(err, AW_EINVAL, "NULL text");
    /* first_share adds half the length again: keep that sum in range */
    if (len > (SIZE_MAX - PAD - 4096) / 3 * 2) return aw__error_set(err, AW_ELIMIT, "input too large");
    /* One arena block for the copy and a first share of the values. */
    if (aw__arena_reserve(arena, first_share(len)))
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    char *base = aw__arena_alloc(arena, len + PAD);
    if (!base) return aw__error_set(err, AW_ENOMEM, "out of memory");
    if (len) memcpy(base, text, len);
    memset(base + len, 0, PAD);
    ps->copy = base;

    rd r = {ps, arena, text, len, base, base, base + len, err};
    if (ps->allow_bom && len >= 3 && memcmp(base, "\xEF\xBB\xBF", 3) == 0) r.p += 3;
    int rc = parse_document(&r, root);
    if (rc) return rc;
    char *p = skip_ws(r.p);
    if (p != r.end) return fail_unexpected(&r, p, "unexpected data after the JSON value");
    return 0;
}

/* Small documents parse with scratch stacks on the C stack; larger ones
 * move them to the heap as they grow. */
#define LOCAL_SCRATCH 64
#define LOCAL_FRAMES 32

int aw_json_parse(const char *text, size_t len, const aw_json_read_options *opts,
                  aw_json_doc **out, aw_error *err) {
    if (!out) return aw__error_set(err, AW_EINVAL, "NULL output pointer");
    *out = NULL;
    if (!text && len) return aw__error_set(err, AW_EINVAL, "NULL text");
    if (len > (SIZE_MAX - PAD - 4096) / 3 * 2)
        return aw__error_set(err, AW_ELIMIT, "input too large");
    /* the document itself lives at the start of its arena's first block */
    aw_arena arena;
    aw__arena_init(&arena, opts ? opts->alloc : NULL);
    aw_json_doc *doc = NULL;
    if (aw__arena_reserve(&arena, sizeof *doc + sizeof *doc->root + first_share(len)) == 0)
        doc = aw__arena_alloc(&arena, sizeof *doc);
    if (!doc) {
        aw__arena_free(&arena);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    doc->root = aw__arena_alloc(&arena, sizeof *doc->root);
    doc->arena = arena;
    aw__json_parser ps;
    aw__json_parser_init(&ps, opts);
    aw_json_member scratch[LOCAL_SCRATCH];
    aw__json_frame frames[LOCAL_FRAMES];
    ps.scratch = scratch;
    ps.scratch_cap = LOCAL_SCRATCH;
    ps.scratch_borrowed = 1;
    ps.frames = frames;
    ps.frames_cap = ps.max_depth < LOCAL_FRAMES ? ps.max_depth : LOCAL_FRAMES;
    ps.frames_borrowed = 1;
    int rc = aw__json_parse_with(&ps, &doc->arena, text, len, doc->root, err);
    aw__json_parser_free(&ps);
    if (rc) {
        aw_json_doc_free(doc);
        return rc;
    }
    *out = doc;
    return 0;
}
