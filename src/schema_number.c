/* Numbers as the decimals they are written as. JSON Schema compares
 * mathematical values: 1 equals 1.0, 0.1 is a multiple of 0.01, and a
 * bound of 18446744073709551615 is not the double next to it. The double
 * of each number decides quickly whenever it can (different doubles are
 * different decimals in the same order); the decimal text decides the
 * rest, without big-number arithmetic for the common cases. */
#include <math.h>
#include <string.h>

#include "internal/schema.h"

/* A number's significant digits and scientific exponent: the value is
 * 0.D1D2...Dk x 10^exp, D1 != 0, Dk != 0 (k == 0 for zero). The digits
 * are read in place from the text, where a '.' may split them. */
typedef struct decimal {
    const char *ip, *fp; /* integer and fraction digits */
    size_t il, fl;
    size_t first, last;  /* indexes of the first and last nonzero digit in ip ++ fp */
    size_t count;        /* significant digits: last - first + 1, or 0 */
    long long exp;
    int neg;
} decimal;

#define EXP_CAP 1000000000000000LL

static void decimal_of(const aw_json_value *v, decimal *d) {
    const char *s = v->u.num.text;
    size_t n = v->num_len, i = 0;
    memset(d, 0, sizeof *d);
    if (i < n && s[i] == '-') d->neg = 1, i++;
    d->ip = s + i;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    d->il = (size_t)(s + i - d->ip);
    d->fp = s + i;
    if (i < n && s[i] == '.') {
        i++;
        d->fp = s + i;
        while (i < n && s[i] >= '0' && s[i] <= '9') i++;
        d->fl = (size_t)(s + i - d->fp);
    }
    long long e = 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i] == '-', i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (e < EXP_CAP) e = e * 10 + (s[i] - '0');
        if (eneg) e = -e;
    }
    size_t total = d->il + d->fl, a = 0, b = total;
#define DIGIT(k) ((k) < d->il ? d->ip[k] : d->fp[(k) - d->il])
    while (a < total && DIGIT(a) == '0') a++;
    if (a == total) {
        d->neg = 0; /* -0 is 0 */
        return;
    }
    while (b > a && DIGIT(b - 1) == '0') b--;
    d->first = a;
    d->last = b - 1;
    d->count = b - a;
    d->exp = e + (long long)d->il - (long long)a;
}

static inline char digit_at(const decimal *d, size_t k) { return DIGIT(d->first + k); }
#undef DIGIT

/* Compare magnitudes |a| and |b|. */
static int magnitude_cmp(const decimal *a, const decimal *b) {
    if (!a->count || !b->count) return (a->count != 0) - (b->count != 0);
    if (a->exp != b->exp) return a->exp < b->exp ? -1 : 1;
    size_t n = a->count < b->count ? a->count : b->count;
    for (size_t k = 0; k < n; k++) {
        char x = digit_at(a, k), y = digit_at(b, k);
        if (x != y) return x < y ? -1 : 1;
    }
    return a->count < b->count ? -1 : a->count > b->count;
}

int aw__sc_num_cmp(const aw_json_value *a, const aw_json_value *b) {
    if ((a->flags & b->flags & AW_JSON_F_INT)) return a->u.num.i < b->u.num.i ? -1 : a->u.num.i > b->u.num.i;
    double x = a->u.num.d, y = b->u.num.d;
    if (x < y) return -1;
    if (x > y) return 1;
    if (!a->u.num.text || !b->u.num.text) return 0;
    decimal da, db;
    decimal_of(a, &da);
    decimal_of(b, &db);
    if (da.neg != db.neg) {
        if (!da.count && !db.count) return 0;
        return da.neg ? -1 : 1;
    }
    int m = magnitude_cmp(&da, &db);
    return da.neg ? -m : m;
}

int aw__sc_num_is_integer(const aw_json_value *v) {
    if (v->flags & AW_JSON_F_INT) return 1;
    double d = v->u.num.d;
    /* a decimal that is an integer always has an integral double (every
     * double from 2^53 up is one) */
    if (isfinite(d) && d != floor(d)) return 0;
    if (!v->u.num.text) return 1;
    decimal x;
    decimal_of(v, &x);
    return x.count == 0 || (long long)x.count <= x.exp;
}

/* (a * b) mod m without overflow. */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
#if defined(__SIZEOF_INT128__)
    return (uint64_t)((unsigned __int128)a * b % m);
#else
    uint64_t r = 0;
    a %= m;
    while (b) {
        if (b & 1) r = (r + a) % m; /* m < 2^63 here: see the caller */
        a = (a * 2) % m;
        b >>= 1;
    }
    return r;
#endif
}

static uint64_t pow10_mod(unsigned long long k, uint64_t m) {
    uint64_t r = 1 % m, base = 10 % m;
    while (k) {
        if (k & 1) r = mulmod(r, base, m);
        base = mulmod(base, base, m);
        k >>= 1;
    }
    return r;
}

int aw__sc_num_multiple(const aw_json_value *x, const aw_json_value *m) {
    if ((x->flags & m->flags & AW_JSON_F_INT) && m->u.num.i > 0) return x->u.num.i % m->u.num.i == 0;
    if (!x->u.num.text || !m->u.num.text) {
        double q = x->u.num.d / m->u.num.d;
        return isfinite(q) && q == floor(q);
    }
    decimal dx, dm;
    decimal_of(x, &dx);
    decimal_of(m, &dm);
    if (!dx.count) return 1;
    if (!dm.count) return 0;
    /* x = X * 10^ex, m = M * 10^em with X and M free of trailing zeros:
     * x / m = X / M * 10^(ex - em). Below zero, 10 would have to divide X,
     * which it does not. */
    long long ex = dx.exp - (long long)dx.count, em = dm.exp - (long long)dm.count;
    long long k = ex - em;
    if (k < 0) return 0;
    if (dm.count > 18) {
        /* a divisor of more than 18 significant digits: no schema writes
         * one; the doubles decide */
        double q = x->u.num.d / m->u.num.d;
        return isfinite(q) && q == floor(q);
    }
    uint64_t M = 0;
    for (size_t i = 0; i < dm.count; i++) M = M * 10 + (uint64_t)(digit_at(&dm, i) - '0');
    if (M == 1) return 1;
    uint64_t r = 0;
    for (size_t i = 0; i < dx.count; i++) r = (r * 10 + (uint64_t)(digit_at(&dx, i) - '0')) % M;
    if (r == 0) return 1;
    return mulmod(r, pow10_mod((unsigned long long)k, M), M) == 0;
}
