/* The `format` checks, for when formats are asserted: RFC 3339 dates,
 * times and durations, RFC 5321 mailboxes, RFC 1123 host names, IP
 * addresses, RFC 3986 URIs, UUIDs, regular expressions and JSON Pointers.
 * Host names are checked as ASCII (LDH labels); the IDNA rules for the
 * Unicode inside "xn--" labels are not applied. */
#include <string.h>

#include "internal/schema.h"

static const char *const format_names[] = {
    NULL, "date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
    "uri-reference", "uuid", "regex", "json-pointer", "relative-json-pointer",
};

sc_format aw__sc_format_lookup(const char *name, size_t n) {
    for (size_t i = 1; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strlen(format_names[i]) == n && !memcmp(format_names[i], name, n)) return (sc_format)i;
    return FMT_NONE;
}

const char *aw__sc_format_name(sc_format f) {
    return (size_t)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : NULL;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static int num_at(const char *s, size_t n, size_t at, size_t count, int *out) {
    if (at + count > n) return 0;
    int v = 0;
    for (size_t i = 0; i < count; i++) {
        if (!is_digit(s[at + i])) return 0;
        v = v * 10 + (s[at + i] - '0');
    }
    *out = v;
    return 1;
}

/* ---- RFC 3339 -------------------------------------------------------------- */

static int full_date(const char *s, size_t n) {
    int y, m, d;
    if (n != 10 || s[4] != '-' || s[7] != '-') return 0;
    if (!num_at(s, n, 0, 4, &y) || !num_at(s, n, 5, 2, &m) || !num_at(s, n, 8, 2, &d)) return 0;
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d <= days[m - 1] + (m == 2 && leap);
}

/* HH:MM:SS[.frac](Z|+HH:MM|-HH:MM); a leap second only at 23:59:60 UTC. */
static int full_time(const char *s, size_t n) {
    int h, m, sec;
    if (n < 9 || s[2] != ':' || s[5] != ':') return 0;
    if (!num_at(s, n, 0, 2, &h) || !num_at(s, n, 3, 2, &m) || !num_at(s, n, 6, 2, &sec)) return 0;
    size_t i = 8;
    if (i < n && s[i] == '.') {
        size_t start = ++i;
        while (i < n && is_digit(s[i])) i++;
        if (i == start) return 0;
    }
    if (i >= n) return 0;
    int oh = 0, om = 0, sign = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        if (i + 1 != n) return 0;
    } else if (s[i] == '+' || s[i] == '-') {
        sign = s[i] == '+' ? 1 : -1;
        if (n - i != 6 || s[i + 3] != ':' || !num_at(s, n, i + 1, 2, &oh) || !num_at(s, n, i + 4, 2, &om)) return 0;
        if (oh > 23 || om > 59) return 0;
    } else {
        return 0;
    }
    if (h > 23 || m > 59 || sec > 60) return 0;
    if (sec == 60) {
        /* the time in UTC must be 23:59 */
        int minutes = h * 60 + m - sign * (oh * 60 + om);
        minutes = ((minutes % 1440) + 1440) % 1440;
        if (minutes != 23 * 60 + 59) return 0;
    }
    return 1;
}

static int date_time(const char *s, size_t n) {
    if (n < 20 || (s[10] != 'T' && s[10] != 't')) return 0;
    return full_date(s, 10) && full_time(s + 11, n - 11);
}

/* RFC 3339 appendix A: P (date [time] | time | week). */
static int duration(const char *s, size_t n) {
    if (n < 2 || s[0] != 'P') return 0;
    size_t i = 1;
    static const char date_units[] = "YMD", time_units[] = "HMS";
    int next = 0, any = 0;
    while (i < n && s[i] != 'T') {
        size_t start = i;
        while (i < n && is_digit(s[i])) i++;
        if (i == start || i >= n) return 0;
        if (s[i] == 'W') return !any && i + 1 == n;
        const char *u = memchr(date_units + next, s[i], 3 - (size_t)next);
        /* each unit follows the one before it: Y then M then D */
        if (!u || (any && u != date_units + next)) return 0;
        next = (int)(u - date_units) + 1;
        any = 1;
        i++;
        if (next == 3 && i < n && s[i] != 'T') return 0;
    }
    if (i == n) return any;
    i++; /* 'T' */
    int tnext = 0, tany = 0;
    while (i < n) {
        size_t start = i;
        while (i < n && is_digit(s[i])) i++;
        if (i == start || i >= n) return 0;
        const char *u = memchr(time_units + tnext, s[i], 3 - (size_t)tnext);
        if (!u || (tany && u != time_units + tnext)) return 0;
        tnext = (int)(u - time_units) + 1;
        tany = 1;
        i++;
    }
    return tany;
}

/* ---- addresses --------------------------------------------------------------- */

static int ipv4(const char *s, size_t n) {
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part) {
            if (i >= n || s[i] != '.') return 0;
            i++;
        }
        size_t start = i;
        int v = 0;
        while (i < n && is_digit(s[i]) && i - start < 4) v = v * 10 + (s[i++] - '0');
        size_t len = i - start;
        if (len == 0 || len > 3 || v > 255 || (len > 1 && s[start] == '0')) return 0;
    }
    return i == n;
}

static int ipv6(const char *s, size_t n) {
    int groups = 0, gap = 0;
    size_t i = 0;
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 1;
        i = 2;
        if (i == n) return 1;
    } else if (n && s[0] == ':') {
        return 0;
    }
    while (i < n) {
        size_t start = i;
        while (i < n && is_hex(s[i]) && i - start < 5) i++;
        size_t len = i - start;
        if (i < n && s[i] == '.') {
            /* an IPv4 tail takes two groups */
            if (!ipv4(s + start, n - start)) return 0;
            groups += 2;
            i = n;
            break;
        }
        if (len == 0 || len > 4) return 0;
        groups++;
        if (i == n) break;
        if (s[i] != ':') return 0;
        i++;
        if (i < n && s[i] == ':') {
            if (gap) return 0;
            gap = 1;
            i++;
            if (i == n) break;
        } else if (i == n) {
            return 0;
        }
    }
    return gap ? groups < 8 : groups == 8;
}

static int label_char(char c) { return is_alpha(c) || is_digit(c) || c == '-'; }

/* RFC 5890's A-labels need Punycode that decodes: the part after the
 * last '-' must be base-36 digits (and the label not end in '-'). */
static int hostname(const char *s, size_t n) {
    if (n == 0 || n > 253) return 0;
    size_t i = 0;
    while (i <= n) {
        size_t start = i;
        while (i < n && s[i] != '.') {
            if (!label_char(s[i])) return 0;
            i++;
        }
        size_t len = i - start;
        if (len == 0 || len > 63 || s[start] == '-' || s[i - 1] == '-') return 0;
        if (len >= 4 && s[start + 2] == '-' && s[start + 3] == '-') {
            /* "??--" is reserved for A-labels, which start "xn--" */
            if (!((s[start] == 'x' || s[start] == 'X') && (s[start + 1] == 'n' || s[start + 1] == 'N'))) return 0;
            const char *body = s + start + 4;
            size_t blen = len - 4;
            const char *dash = NULL;
            for (size_t k = 0; k < blen; k++)
                if (body[k] == '-') dash = body + k;
            const char *digits = dash ? dash + 1 : body;
            size_t dlen = (size_t)(body + blen - digits);
            if (dlen == 0) return 0;
            for (size_t k = 0; k < dlen; k++)
                if (!(is_digit(digits[k]) || (digits[k] >= 'a' && digits[k] <= 'z'))) return 0;
        }
        if (i == n) break;
        i++;
        if (i == n) return 0; /* a trailing dot */
    }
    return 1;
}

static int atext(char c) {
    return is_alpha(c) || is_digit(c) || (c && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL);
}

static int email(const char *s, size_t n) {
    const char *at = NULL;
    size_t i = 0;
    if (n && s[0] == '"') {
        for (i = 1; i < n && s[i] != '"'; i++) {
            if (s[i] == '\\') i++;
            else if ((unsigned char)s[i] < 0x20) return 0;
        }
        if (i >= n || i + 1 >= n || s[i + 1] != '@') return 0;
        at = s + i + 1;
    } else {
        for (i = 0; i < n && s[i] != '@'; i++) {
            if (s[i] == '.') {
                if (i == 0 || s[i - 1] == '.') return 0;
            } else if (!atext(s[i])) {
                return 0;
            }
        }
        if (i == 0 || i >= n || s[i - 1] == '.') return 0;
        at = s + i;
    }
    const char *d = at + 1;
    size_t dn = (size_t)(s + n - d);
    if (dn >= 2 && d[0] == '[' && d[dn - 1] == ']') {
        if (dn > 7 && !memcmp(d + 1, "IPv6:", 5)) return ipv6(d + 6, dn - 7);
        return ipv4(d + 1, dn - 2);
    }
    return hostname(d, dn);
}

/* ---- URIs (RFC 3986) ----------------------------------------------------------- */

static int unreserved(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
static int sub_delim(char c) { return c && strchr("!$&'()*+,;=", c) != NULL; }

/* Characters of a component: pchar plus `extra`; %HH checked. */
static int component(const char *s, size_t n, const char *extra) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return 0;
            if (!is_hex(s[i + 1]) || !is_hex(s[i + 2])) return 0;
            i += 2;
        } else if (!(unreserved(c) || sub_delim(c) || c == ':' || c == '@' || (extra && c && strchr(extra, c)))) {
            return 0;
        }
    }
    return 1;
}

static int authority(const char *s, size_t n) {
    const char *at = memchr(s, '@', n);
    if (at) {
        if (!component(s, (size_t)(at - s), NULL)) return 0;
        size_t used = (size_t)(at - s) + 1;
        s += used;
        n -= used;
        if (memchr(s, '@', n)) return 0;
    }
    size_t host_end = n;
    if (n && s[0] == '[') {
        const char *close = memchr(s, ']', n);
        if (!close) return 0;
        size_t hl = (size_t)(close - s) - 1;
        if (hl && (s[1] == 'v' || s[1] == 'V')) {
            if (!component(s + 1, hl, NULL)) return 0;
        } else if (!ipv6(s + 1, hl)) {
            return 0;
        }
        host_end = (size_t)(close - s) + 1;
        if (host_end < n && s[host_end] != ':') return 0;
    } else {
        const char *colon = memchr(s, ':', n);
        if (colon) host_end = (size_t)(colon - s);
        for (size_t i = 0; i < host_end; i++)
            if (s[i] == ':' || s[i] == '@') return 0;
        if (!component(s, host_end, NULL)) return 0;
    }
    if (host_end < n) {
        for (size_t i = host_end + 1; i < n; i++)
            if (!is_digit(s[i])) return 0;
    }
    return 1;
}

static int uri_ref(const char *s, size_t n, int need_scheme) {
    size_t i = 0, scheme_end = 0;
    if (n && is_alpha(s[0])) {
        size_t j = 1;
        while (j < n && (is_alpha(s[j]) || is_digit(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.')) j++;
        if (j < n && s[j] == ':') scheme_end = j + 1;
    }
    if (need_scheme && !scheme_end) return 0;
    i = scheme_end;
    const char *frag = memchr(s + i, '#', n - i);
    size_t end = frag ? (size_t)(frag - s) : n;
    if (frag && !component(frag + 1, n - end - 1, "/?")) return 0;
    const char *q = memchr(s + i, '?', end - i);
    size_t path_end = q ? (size_t)(q - s) : end;
    if (q && !component(q + 1, end - path_end - 1, "/?")) return 0;
    if (path_end - i >= 2 && s[i] == '/' && s[i + 1] == '/') {
        size_t a = i + 2, b = a;
        while (b < path_end && s[b] != '/') b++;
        if (!authority(s + a, b - a)) return 0;
        i = b;
    } else if (!scheme_end) {
        /* a relative path's first segment has no ':' */
        size_t k = i;
        while (k < path_end && s[k] != '/') {
            if (s[k] == ':') return 0;
            k++;
        }
    }
    return component(s + i, path_end - i, "/");
}

/* ---- the rest ------------------------------------------------------------------- */

static int uuid(const char *s, size_t n) {
    if (n != 36) return 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return 0;
        } else if (!is_hex(s[i])) {
            return 0;
        }
    }
    return 1;
}

static int relative_json_pointer(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && is_digit(s[i])) i++;
    if (i == 0 || (i > 1 && s[0] == '0')) return 0;
    if (i == n) return 1;
    if (s[i] == '#') return i + 1 == n;
    return aw__sc_is_json_pointer(s + i, n - i);
}

int aw__sc_format_check(const aw_schema *s, sc_format f, const char *p, size_t n) {
    switch (f) {
    case FMT_DATE_TIME: return date_time(p, n);
    case FMT_DATE: return full_date(p, n);
    case FMT_TIME: return full_time(p, n);
    case FMT_DURATION: return duration(p, n);
    case FMT_EMAIL: return email(p, n);
    case FMT_HOSTNAME: return hostname(p, n);
    case FMT_IPV4: return ipv4(p, n);
    case FMT_IPV6: return ipv6(p, n);
    case FMT_URI: return uri_ref(p, n, 1);
    case FMT_URI_REFERENCE: return uri_ref(p, n, 0);
    case FMT_UUID: return uuid(p, n);
    case FMT_REGEX: return aw__sc_regex_valid(s, p, n);
    case FMT_JSON_POINTER: return aw__sc_is_json_pointer(p, n);
    case FMT_RELATIVE_JSON_POINTER: return relative_json_pointer(p, n);
    default: return 1;
    }
}
