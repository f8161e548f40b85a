/* Number text <-> double, independent of the C locale.
 *
 * Formatting follows ECMAScript Number::toString: the shortest digit string
 * that reads back to the same double (found by trying 15, 16 and 17
 * significant digits: any normal double whose shortest form has k <= 15
 * digits prints as exactly that form at 15 digits, because 15-digit decimals
 * are spaced wider than normal doubles), then JavaScript's choice between plain and
 * exponent notation. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
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

static size_t write_uint(uint64_t v, char *out) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* buf holds "d.ddd...e[+-]x" (or "de[+-]x") with '.' as the point: add one
 * unit in the last digit, keeping the digit count (9.99e+05 becomes
 * 1.00e+6). Returns the new length. */
static int bump_last_digit(char *buf, int len, size_t cap) {
    char *e = strchr(buf, 'e');
    if (!e) return len;
    int exp10 = atoi(e + 1);
    char *p = e - 1;
    for (;; p--) {
        if (*p == '.') continue;
        if (*p != '9') {
            (*p)++;
            return len;
        }
        *p = '0';
        if (p == buf) break;
    }
    /* every digit was 9: now 1.000...e(x+1) */
    buf[0] = '1';
    int n = snprintf(e + 1, cap - (size_t)(e + 1 - buf), "%+d", exp10 + 1);
    return (int)(e + 1 - buf) + n;
}

/* Shortest digits of |d| (d finite, non-zero): digits[] without a point,
 * and the decimal exponent n such that |d| = 0.digits * 10^n. */
static size_t shortest_digits(double d, char *digits, int *n_out) {
    char buf[64];
    char dp = locale_point();
    /* Subnormals have fewer significant bits than 15 digits resolve, so
     * their shortest form must be searched from one digit up. */
    int first = d < 2.2250738585072014e-308 ? 1 : 15;
    /* A power of two above the smallest normal has a rounding interval half
     * as wide below it as above it, so the nearest decimal of a length can
     * miss it (just below) while the next one up reads back: 2^-1019 is
     * 7.120236347223045e-307 in JavaScript, not the 17-digit
     * 7.1202363472230444e-307. Such doubles also try the next decimal up. */
    int frexp_exp;
    int pow2 = frexp(d, &frexp_exp) == 0.5 && d > 2.2250738585072014e-308;
    for (int prec = first; prec <= 17; prec++) {
        int len = snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        if (len <= 0 || (size_t)len >= sizeof buf) continue;
        char *point = strchr(buf, dp);
        if (dp != '.' && point) *point = '.';
        if (prec < 17 && aw__json_strtod(buf, (size_t)len) != d) {
            if (!pow2) continue;
            len = bump_last_digit(buf, len, sizeof buf);
            if (aw__json_strtod(buf, (size_t)len) != d) continue;
        }
        /* buf: [-]d.ddddde[+-]xx */
        const char *p = buf;
        if (*p == '-') p++;
        size_t k = 0;
        for (; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9') digits[k++] = *p;
        int exp10 = atoi(p + 1);
        while (k > 1 && digits[k - 1] == '0') k--;
        *n_out = exp10 + 1;
        return k;
    }
    return 0; /* not reached: 17 digits always round-trip */
}

static const double exact_pow10[18] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                       1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};

/* Fast path for numbers with few decimals such as 12.5 or 0.001 (most
 * durations and scores). For the first k where t = d * 10^k is an integer
 * below 2^50 and t / 10^k == d (both operands exact, so the division is
 * correctly rounded, as strtod would round "t e-k"), t's digits without
 * trailing zeros are the shortest form: below 2^50 the spacing of k-digit
 * decimals is at least 4 ulp of d, so only one of them reads back to d, and
 * any shorter form, padded with zeros, would be that one. Returns 0 when
 * the fast path does not apply. */
static size_t short_decimal_digits(double d, char *digits, int *n_out) {
    const double limit = 1125899906842624.0; /* 2^50 */
    if (d >= limit || d < 1e-7) return 0;
    for (int k = 1; k <= 17; k++) {
        double t = d * exact_pow10[k];
        if (t >= limit) return 0;
        if (t != (double)(uint64_t)t || t / exact_pow10[k] != d) continue;
        size_t len = write_uint((uint64_t)t, digits);
        *n_out = (int)len - k;
        while (len > 1 && digits[len - 1] == '0') len--;
        return len;
    }
    return 0;
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
    if (d < 9007199254740992.0 && d == (double)(uint64_t)d) return o + write_uint((uint64_t)d, out + o);
    char digits[32];
    int n;
    size_t k = short_decimal_digits(d, digits, &n);
    if (!k) k = shortest_digits(d, digits, &n);
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
        o += write_uint((uint64_t)(e < 0 ? -e : e), out + o);
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
