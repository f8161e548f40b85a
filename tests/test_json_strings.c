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
#include "testutil.h"

/* fixed seed, so a failure repeats */
static aw_test_rng rng_state = {0x2545F4914F6CDD1Dull};

static uint64_t rnd(void) { return aw_test_next64(&rng_state); }

/* UTF-8 of cp into out; returns the length. Written here on purpose, not
 * aw__utf8_encode: the reader decodes \u escapes with that, so the expected
 * bytes must come from an encoder the reader does not use. */
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

/* Length of the well-formed UTF-8 sequence at s (n bytes there), by
 * Table 3-7 of the Unicode standard; 0 when ill-formed. */
static size_t reference_seq_len(const unsigned char *s, size_t n) {
    static const struct {
        unsigned char lead_lo, lead_hi, second_lo, second_hi;
        size_t len;
    } forms[] = {{0x00, 0x7F, 0, 0, 1},       {0xC2, 0xDF, 0x80, 0xBF, 2}, {0xE0, 0xE0, 0xA0, 0xBF, 3},
                 {0xE1, 0xEC, 0x80, 0xBF, 3}, {0xED, 0xED, 0x80, 0x9F, 3}, {0xEE, 0xEF, 0x80, 0xBF, 3},
                 {0xF0, 0xF0, 0x90, 0xBF, 4}, {0xF1, 0xF3, 0x80, 0xBF, 4}, {0xF4, 0xF4, 0x80, 0x8F, 4}};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        if (s[0] < forms[f].lead_lo || s[0] > forms[f].lead_hi) continue;
        size_t len = forms[f].len;
        if (n < len) return 0;
        if (len > 1 && (s[1] < forms[f].second_lo || s[1] > forms[f].second_hi)) return 0;
        for (size_t i = 2; i < len; i++)
            if (s[i] < 0x80 || s[i] > 0xBF) return 0;
        return len;
    }
    return 0;
}

/* Parse ["<before><seq><after>"] and compare with the reference: the
 * decoded text when every byte of the string is well-formed UTF-8 (and
 * not '"', '\\' or a control), else an AW_EUTF8 error at the first
 * ill-formed sequence. before and after are plain JSON text. */
static void check_utf8_case(const char *before, const unsigned char *seq, size_t nseq, const char *after) {
    char json[256];
    size_t nb = strlen(before), na = strlen(after), n = 0;
    json[n++] = '[';
    json[n++] = '"';
    memcpy(json + n, before, nb);
    n += nb;
    size_t at = n; /* where seq starts in the input */
    memcpy(json + n, seq, nseq);
    n += nseq;
    memcpy(json + n, after, na);
    n += na;
    memcpy(json + n, "\"]", 2);
    n += 2;

    /* the reference: the string's raw bytes run from 2 to the closing
     * quote; seq may hold a quote, backslash or control that ends or
     * breaks the plain run, so only the bytes of seq are judged here and
     * seq is made of non-ASCII bytes and letters only by the callers */
    size_t bad = SIZE_MAX;
    for (size_t i = 0; i < nseq;) {
        size_t len = reference_seq_len(seq + i, nseq - i);
        if (len == 0) {
            bad = at + i;
            break;
        }
        i += len;
    }
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_json_parse(json, n, NULL, &doc, &err);
    if (bad == SIZE_MAX) {
        if (rc) fail_msg("rejected valid UTF-8 (%s) in %.*s", err.message, (int)n, json);
        const aw_json_value *s = aw_json_at(aw_json_doc_root(doc), 0);
        /* before and after decode to themselves or shorter (escapes):
         * check that seq comes out whole after the decoded before */
        if (!aw_json_is_string(s) || s->u.str.len < nseq) fail_msg("decoded wrongly: %.*s", (int)n, json);
        aw_json_doc *ref = NULL;
        char plain[256];
        size_t np = 0;
        plain[np++] = '[';
        plain[np++] = '"';
        memcpy(plain + np, before, nb);
        np += nb;
        memcpy(plain + np, "\", \"", 4);
        np += 4;
        memcpy(plain + np, after, na);
        np += na;
        memcpy(plain + np, "\"]", 2);
        np += 2;
        assert_int_equal(aw_json_parse(plain, np, NULL, &ref, &err), 0);
        const aw_json_value *b = aw_json_at(aw_json_doc_root(ref), 0), *a = aw_json_at(aw_json_doc_root(ref), 1);
        if (s->u.str.len != b->u.str.len + nseq + a->u.str.len || memcmp(s->u.str.ptr, b->u.str.ptr, b->u.str.len) ||
            memcmp(s->u.str.ptr + b->u.str.len, seq, nseq) ||
            memcmp(s->u.str.ptr + b->u.str.len + nseq, a->u.str.ptr, a->u.str.len) || s->u.str.ptr[s->u.str.len])
            fail_msg("decoded wrongly: %.*s", (int)n, json);
        aw_json_doc_free(ref);
        aw_json_doc_free(doc);
    } else {
        if (rc != AW_EUTF8 || err.offset != bad)
            fail_msg("%.*s: wanted a UTF-8 error at %zu, got %d at %zu (%s)", (int)n, json, bad, rc, err.offset,
                     err.message);
        assert_null(doc);
    }
}

/* What comes before the bytes under test: nothing, plain ASCII, a
 * non-ASCII character (so the vector validator starts earlier and the
 * bytes fall at every place of its 16-byte blocks), escapes (so the
 * decoded text trails the input). */
static const char *const utf8_befores[] = {
    "", "a", "abcdefghijklmno", "abcdefghijklmnop", "\xC3\xA9", "\xC3\xA9x", "\xC3\xA9xyzxyzxyzxyzx",
    "\xE2\x80\x94xyzxyzxyzxyzxyzx", "\\n", "\\n\xC3\xA9", "\\u00e9\\t\xC3\xA9xyzxyzxyzxyz", ("\\\\\\\"\xF0\x9F\x98\x80" "abcdefghi"),
};

/* What follows: the closing quote at once, ASCII, an escape, more
 * non-ASCII, text across a block boundary. */
static const char *const utf8_afters[] = {
    "", "z", "\\n", "zz\\u0041", "\xC3\xA9", "abcdefghijklmnopq", ("\xE2\x82\xAC" "abcdefghijklmnopqrstuvwxyz\\/"),
};

/* Every pair of bytes after a non-ASCII lead or continuation byte, every
 * lead with every class of second and third byte, and cut-off sequences,
 * at every place against the reference validator. The vector validator
 * and the scalar one (which takes over at the first ill-formed byte) must
 * both agree with it. */
static void test_utf8_against_reference(void **state) {
    (void)state;
    const size_t nbefore = sizeof utf8_befores / sizeof utf8_befores[0];
    const size_t nafter = sizeof utf8_afters / sizeof utf8_afters[0];
    /* all byte pairs starting with a non-ASCII byte, second byte a letter or non-ASCII */
    for (unsigned b0 = 0x80; b0 <= 0xFF; b0++)
        for (unsigned b1 = 0x41; b1 <= 0xFF; b1++) {
            if (b1 > 0x5A && b1 < 0x80) continue;
            unsigned char seq[2] = {(unsigned char)b0, (unsigned char)b1};
            check_utf8_case(utf8_befores[(b0 + b1) % nbefore], seq, 2, utf8_afters[(b0 * 7 + b1) % nafter]);
        }
    /* leads with representative continuation bytes, whole and cut short */
    static const unsigned char probes[] = {0x41, 0x7A, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF};
    const size_t nprobes = sizeof probes;
    for (unsigned lead = 0xC0; lead <= 0xFF; lead++)
        for (size_t i = 0; i < nprobes; i++)
            for (size_t j = 0; j < nprobes; j++)
                for (size_t k = 0; k < nprobes; k += 3) {
                    unsigned char seq[4] = {(unsigned char)lead, probes[i], probes[j], probes[k]};
                    size_t pick = lead + i * 3 + j * 5 + k;
                    for (size_t len = 1; len <= 4; len++)
                        check_utf8_case(utf8_befores[(pick + len) % nbefore], seq, len, utf8_afters[(pick + 2 * len) % nafter]);
                }
    /* valid characters of each length at every offset of two blocks,
     * then an ill-formed byte at every later offset */
    static const unsigned char *const chars[] = {(const unsigned char *)"\xC3\xA9", (const unsigned char *)"\xE2\x80\x94",
                                                 (const unsigned char *)"\xF0\x9F\x98\x80", (const unsigned char *)"\xF4\x8F\xBF\xBF",
                                                 (const unsigned char *)"\xEF\xBF\xBF", (const unsigned char *)"\xED\x9F\xBF"};
    for (size_t c = 0; c < sizeof chars / sizeof chars[0]; c++) {
        size_t clen = strlen((const char *)chars[c]);
        for (size_t off = 0; off < 40; off++)
            for (size_t badoff = 0; badoff < 48; badoff += 5) {
                unsigned char seq[128];
                size_t n = 0;
                for (size_t i = 0; i < off; i++) seq[n++] = (unsigned char)('a' + i % 26);
                memcpy(seq + n, chars[c], clen);
                n += clen;
                for (size_t i = 0; i < badoff; i++) seq[n++] = (unsigned char)('A' + i % 26);
                check_utf8_case(utf8_befores[(off + c) % nbefore], seq, n, utf8_afters[(badoff + c) % nafter]);
                seq[n++] = (unsigned char)(badoff % 2 ? 0xBF : 0xC1);
                check_utf8_case(utf8_befores[(off + c + 1) % nbefore], seq, n, utf8_afters[(badoff + c + 1) % nafter]);
                seq[n - 1] = chars[c][0]; /* a lead cut short by what follows */
                check_utf8_case(utf8_befores[(off + c + 2) % nbefore], seq, n, utf8_afters[(badoff + c + 2) % nafter]);
            }
    }
}

/* A lead byte cut short by the end of the string, an escape, a control
 * character or the end of the input, after text that took the vector
 * validator through several blocks. */
static void test_utf8_cut_short(void **state) {
    (void)state;
    static const char *const leads[] = {"\xC3", "\xE2\x80", "\xE2", "\xF0\x9F\x98", "\xF0\x9F", "\xF0"};
    static const char *const ends[] = {"\"]", "\\n\"]", "\n\"]", "", "\"", "\x01"};
    for (size_t l = 0; l < sizeof leads / sizeof leads[0]; l++)
        for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++)
            for (size_t pre = 0; pre < 40; pre++) {
                char json[128];
                size_t n = 0;
                json[n++] = '"';
                memcpy(json + n, "\xC3\xA9", 2);
                n += 2;
                for (size_t i = 0; i < pre; i++) json[n++] = (char)('a' + i % 26);
                size_t at = n;
                memcpy(json + n, leads[l], strlen(leads[l]));
                n += strlen(leads[l]);
                memcpy(json + n, ends[e], strlen(ends[e]));
                n += strlen(ends[e]);
                aw_json_doc *doc = NULL;
                aw_error err;
                int rc = aw_json_parse(json, n, NULL, &doc, &err);
                if (rc != AW_EUTF8 || err.offset != at)
                    fail_msg("%.*s: wanted a UTF-8 error at %zu, got %d at %zu (%s)", (int)n, json, at, rc, err.offset,
                             err.message);
            }
}

/* Every byte at every place of a \u escape: the four digits are looked up
 * in a table and checked together. */
static void test_u_escape_digits(void **state) {
    (void)state;
    for (int place = 0; place < 4; place++)
        for (int b = 0; b < 256; b++) {
            char json[16] = "[\"\\u4e2D\"]";
            json[4 + place] = (char)b;
            int hex = (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F');
            aw_json_doc *doc = NULL;
            aw_error err;
            int rc = aw_json_parse(json, 10, NULL, &doc, &err);
            if (!hex) {
                if (rc != AW_ESYNTAX || err.offset != 2) fail_msg("byte 0x%02X at %d: %d at %zu", b, place, rc, err.offset);
                continue;
            }
            if (rc) fail_msg("byte 0x%02X at %d: %s", b, place, err.message);
            unsigned want = 0x4E2D, digit = b <= '9' ? (unsigned)(b - '0') : (unsigned)((b | 0x20) - 'a' + 10);
            want = (want & ~(0xFu << (12 - 4 * place))) | digit << (12 - 4 * place);
            char utf8_want[4];
            size_t n = utf8(want, utf8_want);
            const aw_json_value *s = aw_json_at(aw_json_doc_root(doc), 0);
            if (s->u.str.len != n || memcmp(s->u.str.ptr, utf8_want, n)) fail_msg("byte 0x%02X at %d", b, place);
            aw_json_doc_free(doc);
        }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_strings),
        cmocka_unit_test(test_utf8_against_reference),
        cmocka_unit_test(test_utf8_cut_short),
        cmocka_unit_test(test_u_escape_digits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
