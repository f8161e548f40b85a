/* Where a value of a JSON text starts, for errors that the library names
 * by index ("message 3: ...") because it was handed the parsed document,
 * not the text: the command, which has the text, turns the index into
 * FILE:line:col. The text has already parsed, so the skim below need not
 * check it. */
#include <string.h>

#include "cli.h"

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

static size_t skip_string(const char *s, size_t n, size_t i) {
    for (i++; i < n && s[i] != '"'; i++)
        if (s[i] == '\\') i++;
    return i < n ? i + 1 : n;
}

/* The end of the value at s[i]. */
static size_t skip_value(const char *s, size_t n, size_t i) {
    if (i < n && s[i] == '"') return skip_string(s, n, i);
    if (i < n && (s[i] == '[' || s[i] == '{')) {
        size_t depth = 0;
        while (i < n) {
            char c = s[i];
            if (c == '"') {
                i = skip_string(s, n, i);
                continue;
            }
            if (c == '[' || c == '{') depth++;
            else if ((c == ']' || c == '}') && --depth == 0) return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && !strchr(",]} \t\r\n", s[i])) i++;
    return i;
}

/* The "messages" member's value in the object at s[i]. */
static size_t member_value(const char *s, size_t n, size_t i, const char *key) {
    size_t klen = strlen(key);
    for (i = skip_ws(s, n, i + 1); i < n && s[i] == '"';) {
        size_t k = skip_string(s, n, i);
        bool match = k - i == klen + 2 && memcmp(s + i + 1, key, klen) == 0;
        i = skip_ws(s, n, skip_ws(s, n, k) + 1); /* past the ':' */
        if (match) return i;
        i = skip_ws(s, n, skip_value(s, n, i));
        if (i < n && s[i] == ',') i = skip_ws(s, n, i + 1);
    }
    return n;
}

size_t cli_messages_item_offset(const char *s, size_t n, size_t index) {
    size_t i = skip_ws(s, n, 0);
    if (i < n && s[i] == '{') i = member_value(s, n, i, "messages");
    if (i >= n || s[i] != '[') return n;
    i = skip_ws(s, n, i + 1);
    for (size_t k = 0; i < n && s[i] != ']'; k++) {
        if (k == index) return i;
        i = skip_ws(s, n, skip_value(s, n, i));
        if (i < n && s[i] == ',') i = skip_ws(s, n, i + 1);
    }
    return n;
}

void cli_locate(const char *s, size_t n, size_t offset, aw_error *err) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < n; i++) {
        if (s[i] == '\n') {
            line++;
            col = 1;
        } else if (((unsigned char)s[i] & 0xC0) != 0x80) {
            col++; /* columns count characters, as everywhere */
        }
    }
    err->offset = offset;
    err->line = line;
    err->column = col;
}
