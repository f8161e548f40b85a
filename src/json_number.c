/* Number text <-> double, independent of the C locale.
 *
 * Reading: aw__json_decimal_to_double converts the digits the reader
 * gathered with one 64x128-bit product (Eisel-Lemire), and leaves the rare
 * undecidable case to strtod (aw__json_strtod).
 *
 * Formatting follows ECMAScript Number::toString: the shortest digit string
 * that reads back to the same double, the closest to it among those (found
 * with Giulietti's Schubfach method), then JavaScript's choice between plain
 * and exponent notation. Both use the table of json_pow10.c. */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "internal/json.h"

/* The C library reads and prints numbers with the locale's decimal point;
 * JSON always uses '.'. Swap it in and out when the locale differs. */
static char locale_point(void) {
    const char *dp = localeconv()->decimal_point;
    return (dp && dp[0] && !dp[1]) ? dp[0] : '.';
}

double aw__json_strtod(char *s, size_t n) {
    /* s[n] is writable scratch (the parser's padded copy, or a local
     * buffer): terminate in place rather than copy, so numbers of any length
     * need no allocation. */
    char saved = s[n];
    s[n] = '\0';
    char dp = locale_point();
    char *dot = NULL;
    if (dp != '.') {
        dot = memchr(s, '.', n);
        if (dot) *dot = dp;
    }
    double d = strtod(s, NULL);
    if (dot) *dot = '.';
    s[n] = saved;
    return d;
}

/* floor(x / 2^s) for any sign of x (>> on a negative int is
 * implementation-defined in C). */
static inline long floor_shift(long x, int s) {
    return x >= 0 ? x >> s : -((-x + (1L << s) - 1) >> s);
}

/* floor(log2(10^k)) for |k| <= 1233. This constant, and Schubfach's 1262611
 * and 524031 below (floor(log10(2^q)) and floor(log10(3/4 * 2^q))), were
 * checked against exact rational arithmetic for every k of the table and
 * every binary exponent q of a double; test_json_number checks the results. */
static inline long floor_log2_pow10(long k) { return floor_shift(k * 1741647L, 19); }

static inline int leading_zeros64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_clzll(x);
#else
    int n = 0;
    while (!(x & 0x8000000000000000ull)) {
        x <<= 1;
        n++;
    }
    return n;
#endif
}

/* Eisel and Lemire's method: with W = w shifted to its top bit, the top
 * bits of W * 10^q's 128-bit significand are the double's significand and
 * a rounding bit. The table value is below 10^q's by less than one unit
 * (exact for 0 <= q <= 55), so the true product lies within two units of
 * the 64 bits below the computed top 128: only when those bits and the
 * ones under the significand are all ones could the truth cross a rounding
 * boundary, and that case is left to strtod. Ties (exactly halfway) need
 * an exact product, so they are decided only where the table is exact. */
int aw__json_decimal_to_double(uint64_t w, long q, double *out) {
    if (w == 0 || q < AW_POW10_MIN || q > AW_POW10_MAX) return -1;
    const uint64_t *t = aw__pow10_128[q - AW_POW10_MIN];
    int lz = leading_zeros64(w);
    uint64_t W = w << lz;
    uint64_t hi, lo = aw__mul128(W, t[0], &hi);
    uint64_t mid_hi, rest = aw__mul128(W, t[1], &mid_hi);
    lo += mid_hi;
    hi += lo < mid_hi;
    /* hi:lo:rest is the 192-bit W * table; hi >= 2^62 */
    int shift = 9 + (int)(hi >> 63);
    uint64_t below = hi & (((uint64_t)1 << shift) - 1);
    int exact = q >= 0 && q <= 55;
    if (!exact && below == ((uint64_t)1 << shift) - 1 && lo >= UINT64_MAX - 1) return -1;
    uint64_t m54 = hi >> shift; /* in [2^53, 2^54): 53 bits and a rounding bit */
    uint64_t m;
    if (exact && (m54 & 1) && below == 0 && lo == 0 && rest == 0)
        m = (m54 >> 1) + ((m54 >> 1) & 1); /* exactly halfway: to even */
    else
        m = (m54 + 1) >> 1;
    long e2 = shift + 2 + floor_log2_pow10(q) - lz; /* value = m * 2^e2 */
    if (m == (uint64_t)1 << 53) {
        m >>= 1;
        e2++;
    }
    long biased = e2 + 52 + 1023;
    if (biased <= 0 || biased >= 2047) return -1;
    uint64_t bits = ((uint64_t)biased << 52) | (m & (((uint64_t)1 << 52) - 1));
    memcpy(out, &bits, sizeof bits);
    return 0;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                     "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                     "8081828384858687888990919293949596979899";

static inline size_t decimal_length(uint64_t v) {
    size_t n = 1;
    while (v >= 10000) {
        v /= 10000;
        n += 4;
    }
    return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* v in decimal, two digits per division, written from the end. */
size_t aw__json_write_uint(uint64_t v, char *out) {
    size_t n = decimal_length(v);
    char *o = out + n;
    while (v >= 100) {
        unsigned pair = (unsigned)(v % 100);
        v /= 100;
        o -= 2;
        memcpy(o, digit_pairs + 2 * pair, 2);
    }
    if (v >= 10) {
        o -= 2;
        memcpy(o, digit_pairs + 2 * v, 2);
    } else {
        *--o = (char)('0' + v);
    }
    return n;
}

/* 10^k's significand rounded up: the table's value, plus one where the
 * table is below the true value. */
static inline void pow10_ceil(long k, uint64_t *hi, uint64_t *lo) {
    const uint64_t *t = aw__pow10_128[k - AW_POW10_MIN];
    *hi = t[0];
    *lo = t[1];
    if (k < 0 || k > 55) {
        *lo += 1;
        *hi += *lo == 0;
    }
}

/* floor(g * cp / 2^128) with the lowest bit set when the dropped part is
 * not zero (round to odd): that bit is all the comparisons below need to
 * know of what lies under the last unit. */
static inline uint64_t round_to_odd(uint64_t g_hi, uint64_t g_lo, uint64_t cp) {
    uint64_t x_hi;
    (void)aw__mul128(g_lo, cp, &x_hi);
    uint64_t y_hi, y_lo = aw__mul128(g_hi, cp, &y_hi);
    y_lo += x_hi;
    y_hi += y_lo < x_hi;
    return y_hi | (y_lo > 1);
}

/* The shortest decimal dec * 10^*exp10 that reads back as d (finite, > 0),
 * the closest to d when several have that length (ties to even), as
 * ECMAScript's Number::toString asks. Giulietti's Schubfach method: with d
 * = c * 2^q, the doubles' rounding interval around d is scaled by a power of
 * ten, 10^-k, chosen so that it holds one or two multiples of 10^k's unit
 * and at most one of the unit ten times larger; the three scaled bounds
 * (times 4, so that halves stay integers) come from one 64x128-bit product
 * each. The bounds belong to the interval when c is even (a decimal
 * exactly halfway reads back as the even significand). */
static uint64_t shortest_decimal(double d, int *exp10) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    uint64_t frac = bits & (((uint64_t)1 << 52) - 1);
    long biased = (long)(bits >> 52) & 0x7FF;
    uint64_t c = biased ? frac | ((uint64_t)1 << 52) : frac;
    long q = biased ? biased - 1075 : -1074;
    uint64_t open = c & 1;
    /* at a power of two the double below is half as far as the one above */
    int lower_closer = frac == 0 && biased > 1;
    uint64_t cbl = 4 * c - 2 + (uint64_t)lower_closer, cb = 4 * c, cbr = 4 * c + 2;
    /* k = floor(log10(2^q)), or floor(log10(3/4 * 2^q)) when lower_closer */
    long k = floor_shift(q * 1262611L - (lower_closer ? 524031L : 0), 22);
    int h = (int)(q + floor_log2_pow10(-k) + 1); /* 1..4 */
    uint64_t g_hi, g_lo;
    pow10_ceil(-k, &g_hi, &g_lo);
    uint64_t vbl = round_to_odd(g_hi, g_lo, cbl << h);
    uint64_t vb = round_to_odd(g_hi, g_lo, cb << h);
    uint64_t vbr = round_to_odd(g_hi, g_lo, cbr << h);
    uint64_t lower = vbl + open, upper = vbr - open;
    uint64_t s = vb >> 2;
    if (s >= 10) {
        /* one digit shorter: at most one multiple of 10 * 10^k fits */
        uint64_t sp = s / 10;
        int up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
        if (up_in != wp_in) {
            *exp10 = (int)k + 1;
            return sp + (uint64_t)wp_in;
        }
    }
    int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    *exp10 = (int)k;
    if (u_in != w_in) return s + (uint64_t)w_in;
    /* both s and s + 1 read back: the closer, or the even one */
    uint64_t mid = 4 * s + 2;
    return s + (uint64_t)(vb > mid || (vb == mid && (s & 1)));
}

/* Shortest digits of d (finite, > 0): digits[] without a point or trailing
 * zeros, and n such that d = 0.digits * 10^n. */
static size_t shortest_digits(double d, char *digits, int *n_out) {
    int e;
    uint64_t dec = shortest_decimal(d, &e);
    /* Schubfach's digits often end in zeros (4165.6 comes as 41656 and
     * twelve zeros): strip them in large steps first */
    if (dec % 100000000 == 0) {
        dec /= 100000000;
        e += 8;
    }
    if (dec % 10000 == 0) {
        dec /= 10000;
        e += 4;
    }
    while (dec % 10 == 0) {
        dec /= 10;
        e++;
    }
    size_t k = aw__json_write_uint(dec, digits);
    *n_out = e + (int)k;
    return k;
}

size_t aw__json_format_double(double d, char *out) {
    size_t o = 0;
    if (d == 0) {
        out[0] = '0'; /* -0 prints as 0 */
        return 1;
    }
    if (d < 0) {
        out[o++] = '-';
        d = -d;
    }
    /* integers below 2^53 print as themselves */
    if (d < 9007199254740992.0 && d == (double)(uint64_t)d) return o + aw__json_write_uint((uint64_t)d, out + o);
    char digits[32];
    int n;
    size_t k = shortest_digits(d, digits, &n);
    if ((int)k <= n && n <= 21) {
        memcpy(out + o, digits, k);
        o += k;
        for (int i = (int)k; i < n; i++) out[o++] = '0';
    } else if (0 < n && n <= 21) {
        memcpy(out + o, digits, (size_t)n);
        o += (size_t)n;
        out[o++] = '.';
        memcpy(out + o, digits + n, k - (size_t)n);
        o += k - (size_t)n;
    } else if (-6 < n && n <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -n; i++) out[o++] = '0';
        memcpy(out + o, digits, k);
        o += k;
    } else {
        out[o++] = digits[0];
        if (k > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, k - 1);
            o += k - 1;
        }
        out[o++] = 'e';
        int e = n - 1;
        out[o++] = e < 0 ? '-' : '+';
        o += aw__json_write_uint((uint64_t)(e < 0 ? -e : e), out + o);
    }
    return o;
}

size_t aw__js_number_string(double d, char *out) {
    if (d != d) {
        memcpy(out, "NaN", 3);
        return 3;
    }
    if (d - d != 0) {
        if (d < 0) {
            memcpy(out, "-Infinity", 9);
            return 9;
        }
        memcpy(out, "Infinity", 8);
        return 8;
    }
    return aw__json_format_double(d, out);
}
