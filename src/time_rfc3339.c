/* RFC 3339 timestamps <-> milliseconds since 1970, without the C library's
 * time zone machinery (no TZ, no locale, no global state). */
#include <stdio.h>
#include <string.h>

#include "agentwire/envelope.h"

/* Days since 1970-01-01 for a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int digits(const char *s, size_t n, size_t at, size_t count, unsigned *out) {
    if (at + count > n) return -1;
    unsigned v = 0;
    for (size_t i = 0; i < count; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9') return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *out = v;
    return 0;
}

int aw_time_parse_rfc3339(const char *s, size_t n, int64_t *ms) {
    unsigned y, mo, d, h, mi, se;
    if (digits(s, n, 0, 4, &y) || n < 19 || s[4] != '-' || digits(s, n, 5, 2, &mo) || s[7] != '-' ||
        digits(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || digits(s, n, 11, 2, &h) ||
        s[13] != ':' || digits(s, n, 14, 2, &mi) || s[16] != ':' || digits(s, n, 17, 2, &se))
        return AW_ESYNTAX;
    static const unsigned mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60) return AW_ESYNTAX;
    if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return AW_ESYNTAX;
    size_t i = 19;
    unsigned frac_ms = 0;
    if (i < n && s[i] == '.') {
        i++;
        size_t k = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (k < 3) frac_ms = frac_ms * 10 + (unsigned)(s[i] - '0');
            k++;
            i++;
        }
        if (k == 0) return AW_ESYNTAX;
        while (k < 3) frac_ms *= 10, k++;
    }
    int64_t offset_min = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        unsigned oh, om;
        int neg = s[i] == '-';
        if (digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' || digits(s, n, i + 4, 2, &om) || oh > 23 ||
            om > 59)
            return AW_ESYNTAX;
        offset_min = (int64_t)(oh * 60 + om) * (neg ? -1 : 1);
        i += 6;
    } else {
        return AW_ESYNTAX;
    }
    if (i != n) return AW_ESYNTAX;
    int64_t days = days_from_civil(y, mo, d);
    int64_t secs = days * 86400 + (int64_t)h * 3600 + (int64_t)mi * 60 + (se == 60 ? 59 : se) - offset_min * 60;
    *ms = secs * 1000 + frac_ms;
    return 0;
}

int aw_time_format_rfc3339(int64_t ms, bool with_ms, aw_buf *out) {
    int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
    unsigned msec = (unsigned)(ms - secs * 1000);
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    unsigned rem = (unsigned)(secs - days * 86400);
    int64_t y;
    unsigned m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999) return AW_EINVAL;
    if (with_ms)
        return aw_buf_printf(out, "%04d-%02u-%02uT%02u:%02u:%02u.%03uZ", (int)y, m, d, rem / 3600, rem / 60 % 60,
                             rem % 60, msec);
    return aw_buf_printf(out, "%04d-%02u-%02uT%02u:%02u:%02uZ", (int)y, m, d, rem / 3600, rem / 60 % 60, rem % 60);
}
