/* Strings through the reader's and the writer's vector paths against
 * byte-at-a-time references: random strings of 0 to 100 characters (ASCII,
 * controls, quotes, backslashes, 2- to 4-byte UTF-8) are encoded with a
 * random choice of escapes, so escapes and multi-byte characters fall at
 * every position of a 16-byte block and after every number of earlier
 * escapes (the reader decodes in place behind its read position); the
 * decoded bytes must be the original ones, and the writer's output must be
 * what a plain JSON.stringify-style escaper produces. Fixed seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* UTF-8 of cp into out; returns the length. */
static size_t utf8(uint32_t cp, char *out) {
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

static uint32_t random_char(void) {
    switch (rnd() % 10) {
    case 0: return (uint32_t)(rnd() % 0x20);                          /* control */
    case 1: return rnd() % 2 ? '"' : '\\';
    case 2: return 0x80 + (uint32_t)(rnd() % 0x780);                 /* 2 bytes */
    case 3: {                                                          /* 3 bytes, no surrogate */
        uint32_t cp = 0x800 + (uint32_t)(rnd() % 0xF800);
        return cp >= 0xD800 && cp < 0xE000 ? cp + 0x800 : cp;
    }
    case 4: return 0x10000 + (uint32_t)(rnd() % 0x100000);           /* 4 bytes */
    default: return 0x20 + (uint32_t)(rnd() % 0x5F);                 /* printable ASCII */
    }
}

/* JSON text for cp, with a random choice among its valid spellings. */
static size_t encode_json(uint32_t cp, char *out) {
    int escape = rnd() % 3 == 0;
    if (cp == '"' || cp == '\\' || cp < 0x20 || escape) {
        const char *two = NULL;
        switch (cp) {
        case '"': two = "\\\""; break;
        case '\\': two = "\\\\"; break;
        case '/': two = "\\/"; break;
        case '\b': two = "\\b"; break;
        case '\f': two = "\\f"; break;
        case '\n': two = "\\n"; break;
        case '\r': two = "\\r"; break;
        case '\t': two = "\\t"; break;
        }
        if (two && rnd() % 2) {
            memcpy(out, two, 2);
            return 2;
        }
        if (cp >= 0x10000) {
            uint32_t v = cp - 0x10000;
            return (size_t)sprintf(out, "\\u%04X\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
        }
        return (size_t)sprintf(out, rnd() % 2 ? "\\u%04x" : "\\u%04X", cp);
    }
    return utf8(cp, out);
}

/* JSON.stringify's spelling of cp. */
static size_t encode_stringify(uint32_t cp, char *out) {
    switch (cp) {
    case '"': memcpy(out, "\\\"", 2); return 2;
    case '\\': memcpy(out, "\\\\", 2); return 2;
    case '\b': memcpy(out, "\\b", 2); return 2;
    case '\f': memcpy(out, "\\f", 2); return 2;
    case '\n': memcpy(out, "\\n", 2); return 2;
    case '\r': memcpy(out, "\\r", 2); return 2;
    case '\t': memcpy(out, "\\t", 2); return 2;
    }
    if (cp < 0x20) return (size_t)sprintf(out, "\\u%04x", cp);
    return utf8(cp, out);
}

static void test_random_strings(void **state) {
    (void)state;
    char raw[512], json[1200], want[1200];
    aw_buf out;
    aw_buf_init(&out, NULL);
    for (int round = 0; round < 30000; round++) {
        size_t nraw = 0, njson = 0, nwant = 0;
        json[njson++] = '[';
        /* a string after a prefix, so the string starts at any alignment */
        size_t pad = (size_t)(rnd() % 16);
        for (size_t i = 0; i < pad; i++) json[njson++] = ' ';
        json[njson++] = '"';
        want[nwant++] = '"';
        int chars = (int)(rnd() % 101);
        for (int i = 0; i < chars; i++) {
            uint32_t cp = random_char();
            nraw += utf8(cp, raw + nraw);
            njson += encode_json(cp, json + njson);
            nwant += encode_stringify(cp, want + nwant);
        }
        memcpy(json + njson, "\",1]", 4);
        njson += 4;
        want[nwant++] = '"';

        aw_json_doc *doc = NULL;
        aw_error err;
        if (aw_json_parse(json, njson, NULL, &doc, &err)) fail_msg("%.*s: %s", (int)njson, json, err.message);
        const aw_json_value *s = aw_json_at(aw_json_doc_root(doc), 0);
        if (!aw_json_is_string(s) || s->u.str.len != nraw || memcmp(s->u.str.ptr, raw, nraw) != 0 ||
            s->u.str.ptr[nraw] != '\0')
            fail_msg("decoded wrongly: %.*s", (int)njson, json);
        const aw_json_value *one = aw_json_at(aw_json_doc_root(doc), 1);
        if (!aw_json_is_number(one) || one->u.num.d != 1) fail_msg("the value after the string: %.*s", (int)njson, json);
        aw_buf_clear(&out);
        if (aw_json_write(s, NULL, &out, &err)) fail_msg("write: %s", err.message);
        if (out.len != nwant || memcmp(out.data, want, nwant) != 0)
            fail_msg("written %s, wanted %.*s", out.data, (int)nwant, want);
        aw_json_doc_free(doc);
    }
    aw_buf_free(&out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
