/* URIs and JSON Pointers for the schema module: RFC 3986 reference
 * resolution (how `$id` and `$ref` combine with the base URI), percent
 * decoding of fragments, and RFC 6901 pointers. */
#include <string.h>

#include "internal/schema.h"

typedef struct uri_parts {
    const char *scheme, *auth, *path, *query, *frag;
    size_t scheme_len, auth_len, path_len, query_len, frag_len;
    int has_scheme, has_auth, has_query, has_frag;
} uri_parts;

static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

static void uri_parse(const char *s, size_t n, uri_parts *u) {
    memset(u, 0, sizeof *u);
    size_t i = 0;
    if (n && is_alpha(s[0])) {
        size_t j = 1;
        while (j < n && (is_alpha(s[j]) || (s[j] >= '0' && s[j] <= '9') || s[j] == '+' || s[j] == '-' || s[j] == '.'))
            j++;
        if (j < n && s[j] == ':') {
            u->has_scheme = 1;
            u->scheme = s;
            u->scheme_len = j;
            i = j + 1;
        }
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
        size_t j = i + 2;
        while (j < n && s[j] != '/' && s[j] != '?' && s[j] != '#') j++;
        u->has_auth = 1;
        u->auth = s + i + 2;
        u->auth_len = j - i - 2;
        i = j;
    }
    size_t j = i;
    while (j < n && s[j] != '?' && s[j] != '#') j++;
    u->path = s + i;
    u->path_len = j - i;
    i = j;
    if (i < n && s[i] == '?') {
        j = i + 1;
        while (j < n && s[j] != '#') j++;
        u->has_query = 1;
        u->query = s + i + 1;
        u->query_len = j - i - 1;
        i = j;
    }
    if (i < n && s[i] == '#') {
        u->has_frag = 1;
        u->frag = s + i + 1;
        u->frag_len = n - i - 1;
    }
}

/* RFC 3986 5.2.4, appending the result to out. */
static int remove_dots(const char *p, size_t n, aw_buf *out) {
    size_t start = out->len;
    size_t i = 0;
    while (i < n) {
        if (n - i >= 3 && !memcmp(p + i, "../", 3)) i += 3;
        else if (n - i >= 2 && !memcmp(p + i, "./", 2)) i += 2;
        else if (n - i >= 3 && !memcmp(p + i, "/./", 3)) i += 2;
        else if (n - i == 2 && !memcmp(p + i, "/.", 2)) {
            if (aw_buf_putc(out, '/')) return AW_ENOMEM;
            i = n;
        } else if ((n - i >= 4 && !memcmp(p + i, "/../", 4)) || (n - i == 3 && !memcmp(p + i, "/..", 3))) {
            /* drop the last segment written */
            while (out->len > start && out->data[out->len - 1] != '/') out->len--;
            if (out->len > start) out->len--;
            out->data[out->len] = '\0';
            if (n - i == 3) {
                if (aw_buf_putc(out, '/')) return AW_ENOMEM;
                i = n;
            } else {
                i += 3;
            }
        } else if ((n - i == 1 && p[i] == '.') || (n - i == 2 && !memcmp(p + i, "..", 2))) {
            i = n;
        } else {
            size_t j = i + (p[i] == '/');
            while (j < n && p[j] != '/') j++;
            if (aw_buf_append(out, p + i, j - i)) return AW_ENOMEM;
            i = j;
        }
    }
    return 0;
}

static int put_lower(aw_buf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (aw_buf_putc(out, c)) return AW_ENOMEM;
    }
    return 0;
}

/* The authority with its host in lower case (user info kept as is). */
static int put_auth(aw_buf *out, const char *a, size_t n) {
    const char *at = memchr(a, '@', n);
    size_t host = at ? (size_t)(at - a) + 1 : 0;
    if (aw_buf_append(out, a, host)) return AW_ENOMEM;
    return put_lower(out, a + host, n - host);
}

int aw__sc_uri_resolve(const char *base, size_t base_len, const char *ref, size_t ref_len, aw_buf *out) {
    uri_parts b, r;
    uri_parse(base ? base : "", base ? base_len : 0, &b);
    uri_parse(ref, ref_len, &r);
    const uri_parts *sch = r.has_scheme ? &r : &b;
    int rc = 0;
    if (sch->has_scheme) {
        rc = put_lower(out, sch->scheme, sch->scheme_len);
        if (!rc) rc = aw_buf_putc(out, ':');
    }
    const char *query = NULL;
    size_t query_len = 0;
    int has_query = 0;
    if (r.has_scheme || r.has_auth) {
        if (!rc && r.has_auth) {
            rc = aw_buf_append(out, "//", 2);
            if (!rc) rc = put_auth(out, r.auth, r.auth_len);
        }
        if (!rc) rc = remove_dots(r.path, r.path_len, out);
        has_query = r.has_query, query = r.query, query_len = r.query_len;
    } else {
        if (!rc && b.has_auth) {
            rc = aw_buf_append(out, "//", 2);
            if (!rc) rc = put_auth(out, b.auth, b.auth_len);
        }
        if (r.path_len == 0) {
            if (!rc) rc = aw_buf_append(out, b.path, b.path_len);
            if (r.has_query) has_query = 1, query = r.query, query_len = r.query_len;
            else has_query = b.has_query, query = b.query, query_len = b.query_len;
        } else {
            has_query = r.has_query, query = r.query, query_len = r.query_len;
            if (r.path[0] == '/') {
                if (!rc) rc = remove_dots(r.path, r.path_len, out);
            } else {
                aw_buf merged;
                aw_buf_init(&merged, out->alloc);
                if (rc) {
                    /* out of memory already */
                } else if (b.has_auth && b.path_len == 0) {
                    rc = aw_buf_putc(&merged, '/');
                } else {
                    size_t keep = b.path_len;
                    while (keep && b.path[keep - 1] != '/') keep--;
                    rc = aw_buf_append(&merged, b.path, keep);
                }
                if (!rc) rc = aw_buf_append(&merged, r.path, r.path_len);
                if (!rc) rc = remove_dots(merged.data ? merged.data : "", merged.len, out);
                aw_buf_free(&merged);
            }
        }
    }
    if (!rc && has_query) {
        rc = aw_buf_putc(out, '?');
        if (!rc) rc = aw_buf_append(out, query, query_len);
    }
    if (!rc && r.has_frag && r.frag_len) {
        rc = aw_buf_putc(out, '#');
        if (!rc) rc = aw_buf_append(out, r.frag, r.frag_len);
    }
    if (!rc && !out->data) rc = aw_buf_reserve(out, 1);
    return rc ? AW_ENOMEM : 0;
}

size_t aw__sc_uri_split(const char *uri, size_t len, const char **frag, size_t *frag_len) {
    const char *h = memchr(uri, '#', len);
    if (!h) {
        *frag = NULL;
        *frag_len = 0;
        return len;
    }
    *frag = h + 1;
    *frag_len = len - (size_t)(h - uri) - 1;
    return (size_t)(h - uri);
}

static int hex_val(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int aw__sc_percent_decode(const char *s, size_t n, aw_buf *out) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int h = hex_val(s[i + 1]), l = hex_val(s[i + 2]);
            if (h < 0 || l < 0) return -1;
            c = (char)(h * 16 + l);
            i += 2;
        }
        if (aw_buf_putc(out, c)) return AW_ENOMEM;
    }
    if (!out->data && aw_buf_reserve(out, 1)) return AW_ENOMEM;
    return 0;
}

int aw__sc_pointer_escape(aw_buf *out, const char *key, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (key[i] != '~' && key[i] != '/') continue;
        if (aw_buf_append(out, key + run, i - run)) return AW_ENOMEM;
        if (aw_buf_append(out, key[i] == '~' ? "~0" : "~1", 2)) return AW_ENOMEM;
        run = i + 1;
    }
    return aw_buf_append(out, key + run, n - run) ? AW_ENOMEM : 0;
}

const aw_json_value *aw__sc_pointer_get(const aw_json_value *v, const char *ptr, size_t n) {
    if (n == 0) return v;
    if (ptr[0] != '/') return NULL;
    size_t i = 1;
    char tok[512];
    for (;;) {
        size_t t = 0;
        while (i < n && ptr[i] != '/') {
            char c = ptr[i];
            if (c == '~') {
                if (i + 1 >= n || (ptr[i + 1] != '0' && ptr[i + 1] != '1')) return NULL;
                c = ptr[i + 1] == '0' ? '~' : '/';
                i++;
            }
            if (t == sizeof tok) return NULL;
            tok[t++] = c;
            i++;
        }
        if (aw_json_is_object(v)) {
            v = aw_json_getn(v, tok, t);
        } else if (aw_json_is_array(v)) {
            if (t == 0 || (t > 1 && tok[0] == '0')) return NULL;
            size_t idx = 0;
            for (size_t k = 0; k < t; k++) {
                if (tok[k] < '0' || tok[k] > '9' || idx > (size_t)1 << 40) return NULL;
                idx = idx * 10 + (size_t)(tok[k] - '0');
            }
            v = aw_json_at(v, idx);
        } else {
            return NULL;
        }
        if (!v) return NULL;
        if (i >= n) return v;
        i++; /* past '/' */
    }
}

int aw__sc_is_json_pointer(const char *s, size_t n) {
    if (n == 0) return 1;
    if (s[0] != '/') return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1'))) return 0;
    return 1;
}
