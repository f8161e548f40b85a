/* UTF-8 validation, decoding and character-boundary arithmetic. */
#include <string.h>

#include "agentwire/utf8.h"
#include "internal/errors.h"
#include "internal/utf8.h"

uint32_t aw__utf8_decode(const unsigned char *p, size_t len) {
    switch (len) {
    case 1: return p[0];
    case 2: return ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F);
    case 3: return ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
    default:
        return ((uint32_t)(p[0] & 0x07) << 18) | ((uint32_t)(p[1] & 0x3F) << 12) |
               ((uint32_t)(p[2] & 0x3F) << 6) | (p[3] & 0x3F);
    }
}

size_t aw__utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

size_t aw__utf8_skip_ascii(const unsigned char *s, size_t i, size_t n) {
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ull) break;
        i += 8;
    }
    while (i < n && s[i] < 0x80) i++;
    return i;
}

size_t aw__utf8_count(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t count = 0, i = 0;
    while (i < n) {
        size_t j = aw__utf8_skip_ascii(u, i, n);
        count += j - i;
        i = j;
        if (i >= n) break;
        size_t len = aw__utf8_seq_len(u + i, n - i);
        i += len ? len : 1;
        count++;
    }
    return count;
}

size_t aw__utf8_prefix(const char *s, size_t n, size_t max_chars) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, chars = 0;
    while (i < n && chars < max_chars) {
        if (u[i] < 0x80) {
            i++;
        } else {
            size_t len = aw__utf8_seq_len(u + i, n - i);
            i += len ? len : 1;
        }
        chars++;
    }
    return i;
}

size_t aw__utf8_clip(const char *s, size_t n, size_t max_bytes) {
    if (n <= max_bytes) return n;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < max_bytes) {
        size_t len = u[i] < 0x80 ? 1 : aw__utf8_seq_len(u + i, n - i);
        if (len == 0) len = 1;
        if (i + len > max_bytes) break;
        i += len;
    }
    return i;
}

/* The range the second byte of a sequence led by c must be in; the bytes
 * after it are any continuation byte. */
static int second_byte_ok(unsigned c, unsigned b) {
    if (c == 0xE0) return b >= 0xA0 && b <= 0xBF;
    if (c == 0xED) return b >= 0x80 && b <= 0x9F;
    if (c == 0xF0) return b >= 0x90 && b <= 0xBF;
    if (c == 0xF4) return b >= 0x80 && b <= 0x8F;
    return b >= 0x80 && b <= 0xBF;
}

size_t aw__utf8_subpart_len(const unsigned char *p, size_t n) {
    unsigned c = p[0];
    size_t need; /* bytes a sequence led by c has */
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) need = 3;
    else if (c >= 0xF0 && c <= 0xF4) need = 4;
    else return 1; /* not a lead byte */
    if (n < 2 || !second_byte_ok(c, p[1])) return 1;
    size_t k = 2;
    while (k < need && k < n && (p[k] & 0xC0) == 0x80) k++;
    /* k == need would be a whole well-formed sequence, which the caller
     * says is not there; never let a unit swallow one */
    return k < need ? k : 1;
}

size_t aw__utf8_valid_prefix(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    for (;;) {
        i = aw__utf8_skip_ascii(p, i, n);
        if (i >= n) return n;
        size_t k = aw__utf8_seq_len(p + i, n - i);
        if (!k) return i;
        i += k;
    }
}

int aw__utf8_scrub(aw_buf *out, const char *s, size_t n, int decoded) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t good = i + aw__utf8_valid_prefix(s + i, n - i);
        if (aw_buf_append(out, s + i, good - i)) return AW_ENOMEM;
        i = good;
        if (i == n) break;
        if (aw_buf_append(out, "\xEF\xBF\xBD", 3)) return AW_ENOMEM;
        i += decoded ? aw__utf8_invalid_len(p + i, n - i) : aw__utf8_subpart_len(p + i, n - i);
    }
    return 0;
}

int aw_utf8_scrub(aw_buf *out, const char *s, size_t n) {
    if (!out || (!s && n)) return AW_EINVAL;
    return aw__utf8_scrub(out, s, n, 0);
}

int aw_utf8_is_valid(const char *s, size_t n) {
    if (!s) return n == 0;
    return aw__utf8_valid_prefix(s, n) == n;
}
