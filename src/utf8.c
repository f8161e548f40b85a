/* UTF-8 validation, decoding and character-boundary arithmetic. */
#include <string.h>

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
