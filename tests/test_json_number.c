/* The number fast paths against slow references that follow the
 * definitions directly:
 *
 * - writing: aw__json_format_double (Schubfach) against a search that
 *   prints 1 to 17 significant digits with snprintf and keeps the first
 *   that strtod reads back (with the neighbour one unit up for powers of
 *   two, whose rounding interval is lopsided), then JavaScript's notation;
 * - reading: aw__json_decimal_to_double (Eisel-Lemire) and the reader's
 *   digit gathering against strtod, for random digits and exponents and for
 *   the texts at the edges of each path (19 and 20 digits, leading zeros,
 *   halfway cases, subnormals, overflow).
 *
 * Inputs come from a fixed-seed generator, so a failure repeats. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "testutil.h"
#include "internal/json.h"

/* fixed seed, so a failure repeats */
static aw_test_rng rng_state = {0x9E3779B97F4A7C15ull};

static uint64_t rnd(void) { return aw_test_next64(&rng_state); }

/* ---- the writing reference ------------------------------------------------ */

/* digits[] of the integer v without trailing zeros; returns the count. */
static size_t strip_digits(unsigned long long v, char *digits) {
    char tmp[32];
    size_t k = (size_t)snprintf(tmp, sizeof tmp, "%llu", v);
    while (k > 1 && tmp[k - 1] == '0') k--;
    memcpy(digits, tmp, k);
    return k;
}

/* Shortest digits of d > 0 by search: digits[] (no point, no trailing
 * zeros) and n with d = 0.digits * 10^n. At each length the nearest
 * decimal is tried, and for a power of two (whose rounding interval is
 * narrower below) also the one a unit above it. */
static size_t ref_shortest(double d, char *digits, int *n_out) {
    /* set on every path: fail_msg returns as far as the compiler knows */
    *n_out = 0;
    int pow2_exp;
    int pow2 = frexp(d, &pow2_exp) == 0.5 && d > 2.2250738585072014e-308;
    for (int prec = 1; prec <= 17; prec++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%.*e", prec - 1, d);
        char *e = strchr(buf, 'e');
        int exp10 = atoi(e + 1); /* buf = d.ddd * 10^exp10 */
        unsigned long long v = 0;
        for (const char *p = buf; p < e; p++)
            if (*p >= '0' && *p <= '9') v = v * 10 + (unsigned long long)(*p - '0');
        for (int up = 0; up <= pow2; up++) {
            char text[64];
            snprintf(text, sizeof text, "%llue%d", v + (unsigned long long)up, exp10 - prec + 1);
            if (strtod(text, NULL) != d) continue;
            unsigned long long w = v + (unsigned long long)up;
            /* 9.99e5 + 1 unit is 10.00e5: one digit more before the point */
            int len = snprintf(text, sizeof text, "%llu", w);
            *n_out = exp10 - prec + 1 + len;
            return strip_digits(w, digits);
        }
    }
    fail_msg("no round trip for %a", d);
    return 0;
}

/* JavaScript's Number::toString notation for d (finite). */
static void ref_format(double d, char *out) {
    if (d == 0) {
        strcpy(out, "0");
        return;
    }
    if (d < 0) {
        *out++ = '-';
        d = -d;
    }
    char digits[32];
    int n;
    int k = (int)ref_shortest(d, digits, &n);
    digits[k] = 0;
    if (k <= n && n <= 21) {
        sprintf(out, "%s%.*s", digits, n - k, "000000000000000000000");
    } else if (0 < n && n <= 21) {
        sprintf(out, "%.*s.%s", n, digits, digits + n);
    } else if (-6 < n && n <= 0) {
        sprintf(out, "0.%.*s%s", -n, "000000", digits);
    } else {
        int e = n - 1;
        if (k > 1) sprintf(out, "%c.%se%c%d", digits[0], digits + 1, e < 0 ? '-' : '+', abs(e));
        else sprintf(out, "%ce%c%d", digits[0], e < 0 ? '-' : '+', abs(e));
    }
}

static void check_format(double d) {
    char got[64], want[64];
    size_t n = aw__json_format_double(d, got);
    got[n] = 0;
    ref_format(d, want);
    if (strcmp(got, want)) fail_msg("%a (%.17g): wrote %s, the reference %s", d, d, got, want);
}

static double from_bits(uint64_t b) {
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}

static void test_format_edges(void **state) {
    (void)state;
    const double fixed[] = {5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308,
                            1.7976931348623157e308, 0.1, 0.2, 0.3, 0.30000000000000004, 1e21, 1e-7,
                            1.5e-7, 123456789012345680000.0, 9007199254740993.0, 1.2345678901234568e+29,
                            7.120236347223045e-307, 5e-310, 4.35e-320, 0.000001, 1e22, 1e23, 9.5, 0.5,
                            100.25, 33.333333333333336, 2.5e-5, 6.02214076e23};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        check_format(fixed[i]);
        check_format(-fixed[i]);
    }
    /* every power of two, and its neighbours (the lopsided intervals) */
    for (uint64_t e = 0; e < 2047; e++) {
        uint64_t b = e << 52;
        check_format(from_bits(b));
        if (b) check_format(from_bits(b - 1));
        check_format(from_bits(b + 1));
    }
}

static void test_format_random(void **state) {
    (void)state;
    for (int i = 0; i < 60000; i++) {
        uint64_t b = rnd();
        switch (i % 4) {
        case 0: break;                                                                 /* any */
        case 1: b = (b & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(1000 + rnd() % 50) << 52); break; /* near 1 */
        case 2: b &= 0x800FFFFFFFFFFFFFull; break;                                    /* subnormal */
        default: b = (b & 0x800FFFFFFFFFFFFFull) | ((uint64_t)(rnd() % 2046 + 1) << 52); /* normal */
        }
        double d = from_bits(b);
        if (isfinite(d)) check_format(d);
    }
    /* short decimals: what most numbers in agent data look like */
    for (int i = 0; i < 20000; i++) {
        double d = (double)(rnd() % 100000000) / pow(10, (double)(rnd() % 12));
        check_format(d);
    }
}

/* ---- the reading reference ------------------------------------------------ */

static void check_decimal(uint64_t w, long q) {
    char text[64];
    snprintf(text, sizeof text, "%llue%ld", (unsigned long long)w, q);
    double want = strtod(text, NULL), got;
    if (aw__json_decimal_to_double(w, q, &got)) return; /* left to strtod */
    if (memcmp(&got, &want, sizeof got)) fail_msg("%s: %.17g, strtod %.17g", text, got, want);
}

static void test_decimal_to_double(void **state) {
    (void)state;
    for (int i = 0; i < 200000; i++) {
        int nd = 1 + (int)(rnd() % 19);
        uint64_t w = 0;
        for (int j = 0; j < nd; j++) w = w * 10 + rnd() % 10;
        if (!w) w = 1;
        long q = i % 2 ? (long)(rnd() % 700) - 350 : (long)(rnd() % 60) - 30;
        check_decimal(w, q);
    }
    /* halfway between two doubles, and one unit either side */
    for (int i = 0; i < 20000; i++) {
        int shift = (int)(rnd() % 11);
        uint64_t w = ((1ull << 53) + 1 + 2 * (rnd() % 100000)) << shift;
        check_decimal(w, 0);
        check_decimal(w + 1, 0);
        check_decimal(w - 1, 0);
    }
    /* exact ties with a power of ten: (2^53 + odd) * 2^-k = w * 10^-k for
     * w = (2^53 + odd) * 5^k, and w * 10^k = 2^53 + odd times 2^k when 5^k
     * divides 2^53 + odd */
    for (uint64_t odd = 1; odd < 4000; odd += 2) {
        uint64_t pow5 = 1;
        for (long k = 1; k <= 4; k++) {
            pow5 *= 5;
            check_decimal(((1ull << 53) + odd) * pow5, -k);
            if (((1ull << 53) + odd) % pow5 == 0) check_decimal(((1ull << 53) + odd) / pow5, k);
        }
    }
}

/* The reader's double and int for a number text, against strtod. */
static void check_text(const char *text) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(text, strlen(text), NULL, &doc, &err)) fail_msg("%s: %s", text, err.message);
    const aw_json_value *v = aw_json_doc_root(doc);
    double want = strtod(text, NULL);
    if (memcmp(&v->u.num.d, &want, sizeof want)) fail_msg("%s: %.17g, strtod %.17g", text, v->u.num.d, want);
    if (v->flags & AW_JSON_F_INT) {
        if ((double)v->u.num.i != want) fail_msg("%s: int %lld", text, (long long)v->u.num.i);
    } else if (!strpbrk(text, ".eE") && strlen(text) <= 18) {
        fail_msg("%s: an integer without the int flag", text);
    }
    aw_json_doc_free(doc);
}

static void test_reader_numbers(void **state) {
    (void)state;
    const char *fixed[] = {"0", "-0", "0.0", "-0.0", "0e5", "1", "-1", "9007199254740993", "18446744073709551615",
                           "18446744073709551616", "9999999999999999999", "99999999999999999999",
                           "1234567890123456789", "12345678901234567890", "0.1234567890123456789",
                           "0.12345678901234567890", "0.0000000000000000001", "0.00000000000000000001",
                           "0.000000000000000000123", "1.5e300", "1e308", "1.8e308", "2.4e-324", "2.5e-324",
                           "4.9406564584124654e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
                           "9007199254740992.5", "9007199254740993.5", "0.30000000000000004", "100.0",
                           "1.000000000000000000000000000001", "7.5e-1", "123.456e-2", "-98765.4321e3"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) check_text(fixed[i]);
    char text[96];
    for (int i = 0; i < 20000; i++) {
        size_t o = 0;
        if (rnd() % 2) text[o++] = '-';
        int int_digits = (int)(rnd() % 22), frac_digits = (int)(rnd() % 22);
        if (int_digits == 0) text[o++] = '0';
        for (int j = 0; j < int_digits; j++) text[o++] = (char)('0' + (j == 0 ? 1 + rnd() % 9 : rnd() % 10));
        if (frac_digits) {
            text[o++] = '.';
            int zeros = (int)(rnd() % 25);
            for (int j = 0; j < frac_digits; j++) text[o++] = (char)('0' + (j < zeros ? 0 : rnd() % 10));
        }
        if (rnd() % 3 == 0) o += (size_t)snprintf(text + o, sizeof text - o, "e%d", (int)(rnd() % 700) - 350);
        text[o] = 0;
        check_text(text);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_edges),
        cmocka_unit_test(test_format_random),
        cmocka_unit_test(test_decimal_to_double),
        cmocka_unit_test(test_reader_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
