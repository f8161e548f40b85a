/* Regular expressions of `pattern`, `patternProperties` and format
 * "regex": ECMAScript patterns (`u` flag) translated to PCRE2 syntax, then
 * compiled in UTF mode (JIT where it can) and matched with limits, so a
 * pattern that backtracks catastrophically stops with an error instead of
 * running for ever. schema.h lists what still differs from ECMAScript. */
#include <stdio.h>
#include <string.h>

#include "internal/schema.h"
#include "internal/utf8.h"

/* ECMAScript's WhiteSpace and LineTerminator code points, and their
 * complement, as PCRE2 class ranges. */
#define ES_SPACE "\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"
#define ES_NOT_SPACE                                                                                           \
    "\\x{0}-\\x{8}\\x{e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}\\x{200b}-\\x{2027}"          \
    "\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}\\x{3001}-\\x{d7ff}\\x{e000}-\\x{fefe}"             \
    "\\x{ff00}-\\x{10ffff}"

#define NOT_DIGIT "\\x{0}-\\x{2f}\\x{3a}-\\x{10ffff}"
#define NOT_WORD "\\x{0}-\\x{2f}\\x{3a}-\\x{40}\\x{5b}-\\x{5e}\\x{60}\\x{7b}-\\x{10ffff}"

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* n hex digits at p[*i]; -1 when not there. */
static long hex_digits(const char *p, size_t n, size_t *i, int count) {
    long v = 0;
    for (int k = 0; k < count; k++) {
        if (*i >= n || hexval(p[*i]) < 0) return -1;
        v = v * 16 + hexval(p[(*i)++]);
    }
    return v;
}

/* \uXXXX, \u{X..}, or a surrogate pair written as two \u escapes, at
 * p[*i] (just after the 'u'). The code point, or -1. */
static long unicode_escape(const char *p, size_t n, size_t *i) {
    if (*i < n && p[*i] == '{') {
        (*i)++;
        long v = 0;
        size_t start = *i;
        while (*i < n && hexval(p[*i]) >= 0) {
            v = v * 16 + hexval(p[(*i)++]);
            if (v > 0x10FFFF) return -1;
        }
        if (*i == start || *i >= n || p[*i] != '}') return -1;
        (*i)++;
        return v;
    }
    long v = hex_digits(p, n, i, 4);
    if (v >= 0xD800 && v <= 0xDBFF && *i + 6 <= n && p[*i] == '\\' && p[*i + 1] == 'u') {
        size_t j = *i + 2;
        long lo = hex_digits(p, n, &j, 4);
        if (lo >= 0xDC00 && lo <= 0xDFFF) {
            *i = j;
            return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
        }
    }
    return v;
}

static int put_cp(aw_buf *out, long cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) return aw_buf_append_str(out, "(?!)"); /* a lone surrogate: no UTF-8 string holds one */
    return aw_buf_printf(out, "\\x{%lx}", cp);
}

/* ECMAScript's long General_Category names, which PCRE2 10.42 knows only
 * by their short forms. */
static const char *const category_names[][2] = {
    {"Letter", "L"}, {"Cased_Letter", "L&"}, {"LC", "L&"}, {"Uppercase_Letter", "Lu"}, {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"}, {"Modifier_Letter", "Lm"}, {"Other_Letter", "Lo"}, {"Mark", "M"},
    {"Combining_Mark", "M"}, {"Nonspacing_Mark", "Mn"}, {"Spacing_Mark", "Mc"}, {"Enclosing_Mark", "Me"},
    {"Number", "N"}, {"Decimal_Number", "Nd"}, {"digit", "Nd"}, {"Letter_Number", "Nl"}, {"Other_Number", "No"},
    {"Punctuation", "P"}, {"punct", "P"}, {"Connector_Punctuation", "Pc"}, {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"}, {"Close_Punctuation", "Pe"}, {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"}, {"Other_Punctuation", "Po"}, {"Symbol", "S"}, {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"}, {"Modifier_Symbol", "Sk"}, {"Other_Symbol", "So"}, {"Separator", "Z"},
    {"Space_Separator", "Zs"}, {"Line_Separator", "Zl"}, {"Paragraph_Separator", "Zp"}, {"Other", "C"},
    {"Control", "Cc"}, {"cntrl", "Cc"}, {"Format", "Cf"}, {"Surrogate", "Cs"}, {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* `\p{Name}`, `\p{Key=Value}`: general categories by either name, and
 * the script names PCRE2 knows. */
static int property_escape(const char *p, size_t n, size_t *i, char which, aw_buf *out) {
    if (*i >= n || p[*i] != '{') return -1;
    size_t start = *i + 1, end = start;
    while (end < n && p[end] != '}') end++;
    if (end >= n || end == start) return -1;
    const char *name = p + start;
    size_t len = end - start;
    const char *eq = memchr(name, '=', len);
    if (eq) {
        size_t klen = (size_t)(eq - name);
        static const char *const keys[] = {"General_Category", "gc", "Script", "sc", "Script_Extensions", "scx"};
        int known = 0;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (strlen(keys[k]) == klen && !memcmp(keys[k], name, klen)) known = 1;
        if (!known) return -1;
        len -= klen + 1;
        name = eq + 1;
    }
    for (size_t k = 0; k < len; k++) {
        char c = name[k];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return -1;
    }
    *i = end + 1;
    for (size_t k = 0; k < sizeof category_names / sizeof category_names[0]; k++)
        if (strlen(category_names[k][0]) == len && !memcmp(category_names[k][0], name, len))
            return aw_buf_printf(out, "\\%c{%s}", which, category_names[k][1]);
    return aw_buf_printf(out, "\\%c{%.*s}", which, (int)len, name);
}

/* One escape after '\\' at p[*i]; in_class: inside [...]. */
static int translate_escape(const char *p, size_t n, size_t *i, int in_class, aw_buf *out, const char **why) {
    if (*i >= n) {
        *why = "the pattern ends with a lone backslash";
        return AW_ESYNTAX;
    }
    char c = p[(*i)++];
    switch (c) {
    /* spelled out: PCRE2 10.42's JIT lets \D and \W miss non-ASCII
     * characters when invalid UTF is allowed in subjects */
    case 'd': return aw_buf_append_str(out, in_class ? "0-9" : "[0-9]");
    case 'D': return aw_buf_append_str(out, in_class ? NOT_DIGIT : "[" NOT_DIGIT "]");
    case 'w': return aw_buf_append_str(out, in_class ? "A-Za-z0-9_" : "[A-Za-z0-9_]");
    case 'W': return aw_buf_append_str(out, in_class ? NOT_WORD : "[" NOT_WORD "]");
    case 'b': case 'B':
        if (in_class) {
            if (c == 'B') break;
            return aw_buf_append_str(out, "\\x{8}");
        }
        return aw_buf_printf(out, "\\%c", c);
    case 's':
        return aw_buf_append_str(out, in_class ? ES_SPACE : "[" ES_SPACE "]");
    case 'S':
        return aw_buf_append_str(out, in_class ? ES_NOT_SPACE : "[^" ES_SPACE "]");
    case 't': return aw_buf_append_str(out, "\\t");
    case 'n': return aw_buf_append_str(out, "\\n");
    case 'r': return aw_buf_append_str(out, "\\r");
    case 'f': return aw_buf_append_str(out, "\\f");
    case 'v': return aw_buf_append_str(out, "\\x{b}");
    case 'c':
        if (*i < n && ((p[*i] >= 'a' && p[*i] <= 'z') || (p[*i] >= 'A' && p[*i] <= 'Z')))
            return aw_buf_printf(out, "\\x{%x}", (unsigned)(p[(*i)++] % 32));
        *why = "\\c must be followed by a letter";
        return AW_ESYNTAX;
    case 'x': {
        long v = hex_digits(p, n, i, 2);
        if (v < 0) {
            *why = "\\x must be followed by two hex digits";
            return AW_ESYNTAX;
        }
        return put_cp(out, v);
    }
    case 'u': {
        long v = unicode_escape(p, n, i);
        if (v < 0) {
            *why = "\\u must be followed by four hex digits or {hex digits}";
            return AW_ESYNTAX;
        }
        return put_cp(out, v);
    }
    case 'p': case 'P':
        if (property_escape(p, n, i, c, out) < 0) {
            *why = "\\p and \\P need {a Unicode property name}";
            return AW_ESYNTAX;
        }
        return 0;
    case '0':
        if (*i < n && p[*i] >= '0' && p[*i] <= '9') break;
        return aw_buf_append_str(out, "\\x{0}");
    case 'k':
        if (in_class || *i >= n || p[*i] != '<') break;
        return aw_buf_append_str(out, "\\k");
    case '-':
        if (!in_class) break;
        return aw_buf_append_str(out, "\\-");
    case '^': case '$': case '\\': case '.': case '*': case '+': case '?': case '(': case ')': case '[':
    case ']': case '{': case '}': case '|': case '/':
        return aw_buf_printf(out, "\\%c", c);
    default:
        if (c >= '1' && c <= '9' && !in_class) {
            unsigned long g = (unsigned long)(c - '0');
            while (*i < n && p[*i] >= '0' && p[*i] <= '9' && g < 100000) g = g * 10 + (unsigned long)(p[(*i)++] - '0');
            return aw_buf_printf(out, "\\g{%lu}", g);
        }
        break;
    }
    *why = "an escape that ECMAScript regular expressions do not have";
    return AW_ESYNTAX;
}

int aw__sc_regex_translate(const char *p, size_t n, aw_buf *out, const char **why) {
    int in_class = 0, rc = 0;
    size_t i = 0;
    while (i < n && !rc) {
        char c = p[i];
        if (c == '\\') {
            i++;
            rc = translate_escape(p, n, &i, in_class, out, why);
            continue;
        }
        if (in_class) {
            if (c == ']') in_class = 0;
            if (c == '[') {
                /* literal in ECMAScript; PCRE2 would read "[:" as a POSIX class */
                rc = aw_buf_append_str(out, "\\[");
                i++;
                continue;
            }
            rc = aw_buf_putc(out, c);
            i++;
            continue;
        }
        if (c == '.') {
            rc = aw_buf_append_str(out, "[^\\n\\r\\x{2028}\\x{2029}]");
            i++;
        } else if (c == '[') {
            if (i + 1 < n && p[i + 1] == ']') {
                rc = aw_buf_append_str(out, "(?!)"); /* [] matches nothing */
                i += 2;
            } else if (i + 2 < n && p[i + 1] == '^' && p[i + 2] == ']') {
                rc = aw_buf_append_str(out, "(?s:.)"); /* [^] matches anything */
                i += 3;
            } else {
                in_class = 1;
                rc = aw_buf_putc(out, '[');
                i++;
                if (i < n && p[i] == '^') {
                    rc = rc ? rc : aw_buf_putc(out, '^');
                    i++;
                }
            }
        } else if (c == '(' && i + 1 < n && p[i + 1] == '?') {
            /* ECMAScript's groups: (?: (?= (?! (?<= (?<! (?<name> */
            const char *g = p + i + 2;
            size_t left = n - i - 2;
            int ok = left >= 1 && (g[0] == ':' || g[0] == '=' || g[0] == '!');
            if (!ok && left >= 2 && g[0] == '<')
                ok = g[1] == '=' || g[1] == '!' || (g[1] >= 'A' && g[1] <= 'Z') || (g[1] >= 'a' && g[1] <= 'z') ||
                     g[1] == '_' || g[1] == '$';
            if (!ok) {
                *why = "a group syntax ECMAScript does not have (inline flags, comments, atomic or named (?P..) groups)";
                return AW_ESYNTAX;
            }
            rc = aw_buf_putc(out, c);
            i++;
        } else if ((c == '*' || c == '+' || c == '?') && i + 1 < n && p[i + 1] == '+') {
            *why = "a possessive quantifier, which ECMAScript does not have";
            return AW_ESYNTAX;
        } else {
            rc = aw_buf_putc(out, c);
            i++;
        }
    }
    if (rc == AW_ESYNTAX) return rc;
    if (rc) return AW_ENOMEM;
    if (in_class) {
        *why = "a character class is not closed";
        return AW_ESYNTAX;
    }
    return 0;
}

/* PCRE2's memory through the schema's allocator. */
static void *pcre_malloc(PCRE2_SIZE n, void *data) { return aw_malloc(data, n); }
static void pcre_free(void *p, void *data) {
    if (p) aw_free(data, p);
}

/* Limits for one match: enough for any sane pattern on tool-argument
 * strings, small enough that catastrophic backtracking ends in well under
 * a second. */
#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 10000
#define HEAP_LIMIT_KIB 20480

int aw__sc_regex_init(aw_schema *s) {
    if (s->mctx) return 0;
    s->gctx = pcre2_general_context_create(pcre_malloc, pcre_free, (void *)s->alloc);
    if (!s->gctx) return AW_ENOMEM;
    s->cctx = pcre2_compile_context_create(s->gctx);
    s->mctx = pcre2_match_context_create(s->gctx);
    if (!s->cctx || !s->mctx) return AW_ENOMEM;
    pcre2_set_match_limit(s->mctx, MATCH_LIMIT);
    pcre2_set_depth_limit(s->mctx, DEPTH_LIMIT);
    pcre2_set_heap_limit(s->mctx, HEAP_LIMIT_KIB);
    return 0;
}

#define COMPILE_OPTIONS (PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C)

static pcre2_code *compile_translated(aw_schema *s, const char *p, size_t n, int *rc, char *why, size_t why_size) {
    aw_buf t;
    aw_buf_init(&t, s->alloc);
    const char *reason = NULL;
    *rc = aw__sc_regex_translate(p, n, &t, &reason);
    if (*rc == AW_ESYNTAX) {
        if (why) snprintf(why, why_size, "%s", reason);
        aw_buf_free(&t);
        return NULL;
    }
    if (*rc) {
        aw_buf_free(&t);
        return NULL;
    }
    int code_err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)(t.data ? t.data : ""), t.len, COMPILE_OPTIONS, &code_err, &off,
                                     s->cctx);
    aw_buf_free(&t);
    if (!code) {
        if (code_err == PCRE2_ERROR_HEAP_FAILED) {
            *rc = AW_ENOMEM;
        } else {
            *rc = AW_ESYNTAX;
            if (why) {
                PCRE2_UCHAR msg[160];
                if (pcre2_get_error_message(code_err, msg, sizeof msg) < 0) snprintf((char *)msg, sizeof msg, "error %d", code_err);
                snprintf(why, why_size, "%s", (const char *)msg);
            }
        }
    }
    return code;
}

int aw__sc_regex_compile(aw_schema *s, const char *p, size_t n, sc_regex **out, char *why, size_t why_size) {
    *out = NULL;
    if (s->nregex == s->regex_cap) {
        size_t cap = s->regex_cap ? 2 * s->regex_cap : 8;
        sc_regex **g = aw_realloc(s->alloc, s->regexes, cap * sizeof *g);
        if (!g) return AW_ENOMEM;
        s->regexes = g;
        s->regex_cap = cap;
    }
    sc_regex *re = aw__arena_alloc(&s->arena, sizeof *re);
    if (!re) return AW_ENOMEM;
    int rc;
    re->code = compile_translated(s, p, n, &rc, why, why_size);
    if (!re->code) return rc;
    re->source = p;
    re->len = n;
    /* JIT where the platform has it; the interpreter gives the same answers */
    re->jit = pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE) == 0;
    s->regexes[s->nregex++] = re;
    *out = re;
    return 0;
}

int aw__sc_regex_valid(const aw_schema *s, const char *p, size_t n) {
    if (!s->cctx) return 0;
    int rc;
    pcre2_code *code = compile_translated((aw_schema *)s, p, n, &rc, NULL, 0);
    if (!code) return rc == AW_ENOMEM ? AW_ENOMEM : 0;
    pcre2_code_free(code);
    return 1;
}

int aw__sc_regex_match(const sc_regex *re, const char *s, size_t n, pcre2_match_data **md, const aw_schema *schema) {
    if (!*md) {
        *md = pcre2_match_data_create(1, schema->gctx);
        if (!*md) return AW_ENOMEM;
    }
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, 0, *md, schema->mctx);
    if (rc >= 0) return 1;
    if (rc == PCRE2_ERROR_NOMATCH) return 0;
    if (rc == PCRE2_ERROR_NOMEMORY) return AW_ENOMEM;
    return rc < 0 ? rc : -1;
}

void aw__sc_regex_free(sc_regex *re) {
    if (re && re->code) pcre2_code_free(re->code);
}
