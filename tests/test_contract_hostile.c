/* Contracts against hostile and awkward input: entity attacks, broken XML,
 * invalid UTF-8, deep nesting, many attributes, a 50 MB document; taking a
 * document out of prose (--extract); and allocation failures in load,
 * validate, parse, build and prompt. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"

static aw_contract *query, *response;

static int setup(void **state) {
    (void)state;
    if (aw_contract_builtin("llmQuery", NULL, &query, NULL)) return -1;
    if (aw_contract_builtin("llmResponse", NULL, &response, NULL)) return -1;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    aw_contract_free(query);
    aw_contract_free(response);
    return 0;
}

/* Validate with options and counting allocator; exactly one issue expected,
 * with this code (and line/column when line is not 0, and a message
 * containing fragment when not NULL). Returns the allocation calls made. */
static long expect_issue_opts(const aw_contract *c, const char *xml, size_t len, aw_contract_options o,
                              aw_contract_code code, const char *path, size_t line, size_t col, const char *fragment) {
    aw_failalloc fa;
    aw_failalloc_init(&fa, -1);
    o.alloc = aw_failalloc_allocator(&fa);
    aw_contract_issue *is = NULL;
    size_t n = 0;
    aw_error err;
    int rc = aw_contract_validate(c, xml, len, &o, &is, &n, &err);
    if (rc != AW_EVALID) fail_msg("validate returned %d (%s)", rc, err.message);
    if (n != 1 || is[0].code != code)
        fail_msg("expected one %s, got %zu issue(s), the first %s at %s: %s", aw_contract_code_name(code), n,
                 aw_contract_code_name(is[0].code), is[0].path, is[0].message); /* n >= 1 with AW_EVALID */
    assert_string_equal(is[0].path, path);
    if (line && (is[0].line != line || is[0].column != col))
        fail_msg("%s at %zu:%zu, want %zu:%zu (%s)", aw_contract_code_name(code), is[0].line, is[0].column, line, col,
                 is[0].message);
    if (fragment && !strstr(is[0].message, fragment)) fail_msg("'%s' does not contain '%s'", is[0].message, fragment);
    aw_free(o.alloc, is);
    /* parse agrees, and leaves nothing behind */
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_contract_parse(c, xml, len, &o, &doc, &err), AW_EVALID);
    assert_null(doc);
    assert_int_equal(err.line, line ? line : err.line);
    assert_int_equal(fa.live, 0);
    return fa.calls;
}

static long expect_issue(const aw_contract *c, const char *xml, aw_contract_code code, const char *path, size_t line,
                         size_t col, const char *fragment) {
    aw_contract_options o = {0};
    return expect_issue_opts(c, xml, strlen(xml), o, code, path, line, col, fragment);
}

static char *parse_json(const aw_contract *c, const char *xml, size_t len, aw_contract_options o) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_contract_parse(c, xml, len, &o, &doc, &err))
        fail_msg("parse failed at %zu:%zu: %s", err.line, err.column, err.message);
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(aw_json_doc_root(doc), NULL, &b, NULL), 0);
    aw_json_doc_free(doc);
    return b.data;
}

#define RESP_TAIL "<analysis><summaryUpdate/></analysis></llmResponse>"

/* ---- entities and DOCTYPEs ------------------------------------------------------- */

static void test_billion_laughs(void **state) {
    (void)state;
    const char *xml = "<?xml version=\"1.0\"?>\n"
                      "<!DOCTYPE lolz [\n"
                      " <!ENTITY lol \"lol\">\n"
                      " <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n"
                      " <!ENTITY lol2 \"&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;\">\n"
                      " <!ENTITY lol3 \"&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;\">\n"
                      " <!ENTITY lol4 \"&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;\">\n"
                      " <!ENTITY lol5 \"&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;\">\n"
                      " <!ENTITY lol6 \"&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;\">\n"
                      " <!ENTITY lol7 \"&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;\">\n"
                      " <!ENTITY lol8 \"&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;\">\n"
                      " <!ENTITY lol9 \"&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;\">\n"
                      "]>\n"
                      "<llmResponse><response>&lol9;</response>" RESP_TAIL;
    /* refused at the DOCTYPE, before any entity is declared: "quickly" is
     * measured in allocations, which no expansion could stay under */
    long calls = expect_issue(response, xml, AW_CONTRACT_MALFORMED, "", 2, 16,
                              "a DOCTYPE is not allowed (entity and DTD processing are refused)");
    assert_true(calls < 100);
    /* the same with the DOCTYPE's name matching the root */
    expect_issue(response, "<!DOCTYPE llmResponse [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;\">]>"
                           "<llmResponse><response>&b;</response>" RESP_TAIL,
                 AW_CONTRACT_MALFORMED, "", 1, 23, "DOCTYPE");
}

static void test_external_entities(void **state) {
    (void)state;
    const char *attacks[] = {
        "<?xml version=\"1.0\"?>\n<!DOCTYPE llmResponse [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>\n"
        "<llmResponse><response>&xxe;</response>" RESP_TAIL,
        "<!DOCTYPE llmResponse SYSTEM \"file:///etc/passwd\"><llmResponse><response>x</response>" RESP_TAIL,
        "<!DOCTYPE llmResponse PUBLIC \"-//X//Y\" \"http://127.0.0.1:1/x.dtd\"><llmResponse><response>x</response>" RESP_TAIL,
        "<!DOCTYPE llmResponse [<!ENTITY % pe SYSTEM \"file:///etc/passwd\"> %pe;]><llmResponse><response>x</response>" RESP_TAIL,
        "<!DOCTYPE llmResponse [<!ENTITY x \"y\">]><llmResponse><response>x</response>" RESP_TAIL,
        "<!DOCTYPE llmResponse><llmResponse><response>x</response>" RESP_TAIL,
    };
    for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++) {
        aw_contract_issue *is = NULL;
        size_t n = 0;
        assert_int_equal(aw_contract_validate(response, attacks[i], strlen(attacks[i]), NULL, &is, &n, NULL), AW_EVALID);
        assert_int_equal(n, 1);
        assert_int_equal(is[0].code, AW_CONTRACT_MALFORMED);
        if (!strstr(is[0].message, "DOCTYPE")) fail_msg("attack %zu: %s", i, is[0].message);
        assert_null(strstr(is[0].message, "root:"));
        aw_free(NULL, is);
    }
    /* an entity reference without a declaration is just malformed */
    expect_issue(response, "<llmResponse><response>&xxe;</response>" RESP_TAIL, AW_CONTRACT_MALFORMED, "", 1, 24,
                 "undefined entity");
    /* the five predefined entities and character references work */
    aw_contract_options o = {0};
    const char *ok = "<llmResponse><response>&lt;&gt;&amp;&quot;&apos;&#65;&#x42;</response>" RESP_TAIL;
    char *s = parse_json(response, ok, strlen(ok), o);
    assert_string_equal(s, "{\"response\":\"<>&\\\"'AB\",\"analysis\":{\"subject\":[],\"summaryUpdate\":\"\"}}");
    free(s);
}

/* ---- broken XML ---------------------------------------------------------------- */

static void test_broken_xml(void **state) {
    (void)state;
    expect_issue(response, "<llmResponse>\n<response>x</analysis>\n</llmResponse>", AW_CONTRACT_MALFORMED, "", 2, 14,
                 "mismatched tag");
    expect_issue(response, "<llmResponse><response>x</response><analysis><summaryUpdate></analysis></summaryUpdate>"
                           "</llmResponse>",
                 AW_CONTRACT_MALFORMED, "", 1, 63, "mismatched tag");
    expect_issue(response,
                 "<llmResponse><response>x</response><analysis>\n"
                 "  <subject name=\"a\" name=\"b\" description=\"d\" isNew=\"true\"/>\n"
                 "<summaryUpdate/></analysis></llmResponse>",
                 AW_CONTRACT_MALFORMED, "", 2, 21, "duplicate attribute");
    expect_issue(response, "<llmResponse><response x='1\">x</response>" RESP_TAIL, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
    expect_issue(response, "<llmResponse><response>x</response><analysis><summaryUpdate/></analysis>",
                 AW_CONTRACT_MALFORMED, "", 1, 73, "no element found");
    expect_issue(response, "<llmResponse><response>x\0y</response>" RESP_TAIL, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
    expect_issue(response, "<llmResponse><response>x&#0;</response>" RESP_TAIL, AW_CONTRACT_MALFORMED, "", 1, 25, NULL);
    expect_issue(response, "<llmResponse><response>x\x01</response>" RESP_TAIL, AW_CONTRACT_MALFORMED, "", 1, 25, NULL);
    expect_issue(response, "<1llmResponse/>", AW_CONTRACT_MALFORMED, "", 1, 2, NULL);
    /* a NUL byte inside the given length */
    const char nul[] = "<llmResponse><response>a\0b</response>" RESP_TAIL;
    aw_contract_options o = {0};
    expect_issue_opts(response, nul, sizeof nul - 1, o, AW_CONTRACT_MALFORMED, "", 1, 25, NULL);
}

static void test_invalid_utf8(void **state) {
    (void)state;
    const char *bad[] = {
        "\xff",             /* never valid */
        "\xc0\xaf",         /* overlong '/' */
        "\xe0\x80\xaf",     /* overlong */
        "\xed\xa0\x80",     /* a surrogate */
        "\xf4\x90\x80\x80", /* above U+10FFFF */
        "\x80",             /* stray continuation */
        "\xe6\x97",         /* cut short */
        "\xef\xbf\xbe",     /* U+FFFE, not a character */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char xml[256];
        /* in text, in an attribute value, in a name */
        snprintf(xml, sizeof xml, "<llmResponse><response>ok %s</response>" RESP_TAIL, bad[i]);
        expect_issue(response, xml, AW_CONTRACT_MALFORMED, "", 1, 27, NULL);
        snprintf(xml, sizeof xml, "<llmResponse><response a=\"%s\">ok</response>" RESP_TAIL, bad[i]);
        expect_issue(response, xml, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
        snprintf(xml, sizeof xml, "<llmResponse><response>ok</response><x%s/>" RESP_TAIL, bad[i]);
        expect_issue(response, xml, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
    }
}

/* ---- limits -------------------------------------------------------------------- */

static char *nested(size_t levels, int closed) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "<llmResponse><response>x");
    for (size_t i = 0; i < levels; i++) aw_buf_append(&b, "<a>", 3);
    if (closed)
        for (size_t i = 0; i < levels; i++) aw_buf_append(&b, "</a>", 4);
    aw_buf_append_str(&b, "</response>" RESP_TAIL);
    return b.data;
}

static void test_deep_nesting(void **state) {
    (void)state;
    aw_contract_options o = {0};
    /* 64 levels are allowed (llmResponse, response and 62 <a>) */
    char *x = nested(62, 1);
    char *s = parse_json(response, x, strlen(x), o);
    assert_string_equal(s, "{\"response\":\"x\",\"analysis\":{\"subject\":[],\"summaryUpdate\":\"\"}}");
    free(s);
    free(x);
    /* the 65th is refused where it opens */
    x = nested(63, 1);
    expect_issue(response, x, AW_CONTRACT_LIMIT, "", 1, 24 + 62 * 3 + 1, "elements nested deeper than 64 levels");
    free(x);
    /* 100,000 levels, closed or not: an error, not a crash, and little memory */
    x = nested(100000, 1);
    long calls = expect_issue(response, x, AW_CONTRACT_LIMIT, "", 1, 211, NULL);
    assert_true(calls < 1000); /* validate and parse: they stop at level 65 */
    free(x);
    x = nested(100000, 0);
    expect_issue(response, x, AW_CONTRACT_LIMIT, "", 1, 211, NULL);
    /* a smaller limit, and a larger one capped at 256 */
    o.max_depth = 3;
    expect_issue_opts(response, x, strlen(x), o, AW_CONTRACT_LIMIT, "", 1, 28, "deeper than 3 levels");
    o.max_depth = 1000000;
    expect_issue_opts(response, x, strlen(x), o, AW_CONTRACT_LIMIT, "", 1, 24 + 254 * 3 + 1, "deeper than 256 levels");
    free(x);
    /* depth inside a wrong root still counts */
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int i = 0; i < 100000; i++) aw_buf_append(&b, "<x>", 3);
    expect_issue(response, b.data, AW_CONTRACT_LIMIT, "", 1, 193, NULL);
    aw_buf_free(&b);
}

static void test_attribute_limit(void **state) {
    (void)state;
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "<llmResponse><response>x</response><analysis><subject name=\"n\" description=\"d\" isNew=\"true\"");
    for (int i = 0; i < 61; i++) aw_buf_printf(&b, " a%d=\"v\"", i);
    aw_buf_append_str(&b, "/><summaryUpdate/></analysis></llmResponse>");
    /* 64 attributes: fine (the unknown ones ignored by lenient rules) */
    aw_contract_options o = {0};
    char *s = parse_json(response, b.data, b.len, o);
    assert_non_null(strstr(s, "\"isNew\":true"));
    free(s);
    /* 65: over the limit */
    b.len -= strlen("/><summaryUpdate/></analysis></llmResponse>");
    aw_buf_append_str(&b, " a99=\"v\"/><summaryUpdate/></analysis></llmResponse>");
    expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_LIMIT, "", 1, 46, "more than 64 attributes");
    o.max_attributes = 2;
    expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_LIMIT, "", 1, 46, "more than 2 attributes");
    aw_buf_free(&b);
}

static void test_fifty_megabytes(void **state) {
    (void)state;
    const size_t size = 50u << 20;
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_buf_reserve(&b, size + 200), 0);
    aw_buf_append_str(&b, "<llmResponse><response>");
    while (b.len < size) aw_buf_append_str(&b, "Lorem ipsum dolor sit amet, ");
    size_t text_len = b.len - strlen("<llmResponse><response>");
    aw_buf_append_str(&b, "</response>" RESP_TAIL);
    /* over the default limit of 16 MiB: refused before any parsing */
    aw_contract_options o = {0};
    long calls = expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_LIMIT, "", 1, 1,
                                   "the document is larger than the limit of 16777216 bytes");
    assert_true(calls < 10);
    /* with a larger limit it is read in full */
    o.max_bytes = 64u << 20;
    aw_json_doc *doc = NULL;
    assert_int_equal(aw_contract_parse(response, b.data, b.len, &o, &doc, NULL), 0);
    const aw_json_value *r = aw_json_get(aw_json_doc_root(doc), "response");
    assert_int_equal(r->u.str.len, text_len - 1); /* the trailing blank trimmed */
    /* build is not held to the input limit: it writes the 50 MB back */
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_contract_build(response, aw_json_doc_root(doc), &out, NULL), 0);
    assert_true(out.len > size);
    aw_buf_free(&out);
    aw_json_doc_free(doc);
    /* and a smaller limit refuses small documents */
    o.max_bytes = 10;
    expect_issue_opts(response, "<llmResponse/>", 14, o, AW_CONTRACT_LIMIT, "", 1, 1, "limit of 10 bytes");
    aw_buf_free(&b);
}

/* ---- --extract ----------------------------------------------------------------- */

static void test_extract(void **state) {
    (void)state;
    aw_contract_options o = {0};
    o.extract = true;
    const char *doc = "<llmResponse><response>Hi</response>" RESP_TAIL;
    const char *want = "{\"response\":\"Hi\",\"analysis\":{\"subject\":[],\"summaryUpdate\":\"\"}}";
    char text[1024];
    /* prose around */
    snprintf(text, sizeof text, "Sure! Here is my answer:\n\n%s\n\nHope this helps.", doc);
    char *s = parse_json(response, text, strlen(text), o);
    assert_string_equal(s, want);
    free(s);
    /* a fenced block */
    snprintf(text, sizeof text, "```xml\n%s\n```\n", doc);
    s = parse_json(response, text, strlen(text), o);
    assert_string_equal(s, want);
    free(s);
    /* the prose names the root before the document does */
    snprintf(text, sizeof text, "I will answer with an <llmResponse> element, as asked:\n```xml\n%s\n```", doc);
    s = parse_json(response, text, strlen(text), o);
    assert_string_equal(s, want);
    free(s);
    /* two documents: the first complete one */
    snprintf(text, sizeof text,
             "First: <llmResponse><response>one</response>" RESP_TAIL " then <llmResponse><response>two</response>" RESP_TAIL);
    s = parse_json(response, text, strlen(text), o);
    assert_non_null(strstr(s, "\"response\":\"one\""));
    free(s);
    /* a cut-short first attempt, then a complete document */
    snprintf(text, sizeof text, "<llmResponse><response>oops\n\nLet me try again:\n%s", doc);
    s = parse_json(response, text, strlen(text), o);
    assert_string_equal(s, want);
    free(s);
    /* a closing tag with blanks, and attributes on the root */
    s = parse_json(response, "x <llmResponse id=\"1\"><response>Hi</response><analysis><summaryUpdate/></analysis></llmResponse\n> y",
                   strlen("x <llmResponse id=\"1\"><response>Hi</response><analysis><summaryUpdate/></analysis></llmResponse\n> y"), o);
    assert_string_equal(s, want);
    free(s);
    /* the whole text is a document: extract changes nothing */
    s = parse_json(response, doc, strlen(doc), o);
    assert_string_equal(s, want);
    free(s);
    /* without extract, prose is malformed */
    snprintf(text, sizeof text, "Sure!\n%s", doc);
    aw_contract_options strict_doc = {0};
    expect_issue_opts(response, text, strlen(text), strict_doc, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
    /* nothing to take */
    expect_issue_opts(response, "no XML here", 11, o, AW_CONTRACT_NOT_FOUND, "", 1, 1,
                      "no complete <llmResponse> document in the text");
    expect_issue_opts(response, "<llmResponse><response>cut short", 32, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    expect_issue_opts(response, "<llmResponseX>a</llmResponseX>", 30, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    expect_issue_opts(response, "", 0, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    expect_issue_opts(query, doc, strlen(doc), o, AW_CONTRACT_NOT_FOUND, "", 1, 1,
                      "no complete <llmQuery> document in the text");
    /* a self-closing root is a complete document (that then breaks the rules) */
    aw_contract_issue *is = NULL;
    size_t n = 0;
    assert_int_equal(aw_contract_validate(response, "text <llmResponse/> text", 24, &o, &is, &n, NULL), AW_EVALID);
    assert_int_equal(n, 2);
    assert_string_equal(is[0].path, "/llmResponse/response");
    assert_string_equal(is[1].path, "/llmResponse/analysis");
    assert_int_equal(is[1].line, 1);
    assert_int_equal(is[1].column, 6);
    aw_free(NULL, is);
    /* positions are in the whole text: lines and columns (in characters) */
    const char *t = "Voilà 日本:\r\n\r\n  x <llmResponse><response>Hi</response><analysis>\n"
                    "<subject name=\"a\" description=\"b\" isNew=\"yes\"/><summaryUpdate/></analysis></llmResponse> end";
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_BAD_VALUE, "/llmResponse/analysis/subject[1]/@isNew", 4, 1,
                      NULL);
    t = "Voilà 日本: <llmResponse><response>Hi</response><analysis><subject name=\"a\" description=\"b\" isNew=\"yes\"/>"
        "<summaryUpdate/></analysis></llmResponse> end";
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_BAD_VALUE, "/llmResponse/analysis/subject[1]/@isNew", 1,
                      11 + 46, NULL);
    t = "Voilà 日本: <llmResponse><response>Hi</respons></llmResponse>";
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_MALFORMED, "", 1, 11 + 27, "mismatched tag");
    t = "a\nb\n<llmResponse>\n<response>Hi</respons></llmResponse>";
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_MALFORMED, "", 4, 15, "mismatched tag");
    /* the document taken out must itself be well-formed */
    t = "<llmResponse><response>a & b</response>" RESP_TAIL;
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_MALFORMED, "", 1, 27, NULL);
    /* strict and extract together */
    o.strict = true;
    t = "Here: <llmResponse><response>Hi</response><analysis><summaryUpdate/><x/></analysis></llmResponse>";
    expect_issue_opts(response, t, strlen(t), o, AW_CONTRACT_UNKNOWN_ELEMENT, "/llmResponse/analysis/x", 1, 69, NULL);
}

/* Many openings and no closing: extract stays linear (counted in
 * allocations: none for the search). */
static void test_extract_hostile(void **state) {
    (void)state;
    aw_buf b;
    aw_buf_init(&b, NULL);
    for (int i = 0; i < 200000; i++) aw_buf_append_str(&b, "<llmResponse ");
    aw_contract_options o = {0};
    o.extract = true;
    long calls = expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    assert_true(calls < 5);
    aw_buf_clear(&b);
    for (int i = 0; i < 200000; i++) aw_buf_append_str(&b, "<llmResponse>");
    expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    aw_buf_clear(&b);
    for (int i = 0; i < 200000; i++) aw_buf_append_str(&b, "</llmResponse>");
    expect_issue_opts(response, b.data, b.len, o, AW_CONTRACT_NOT_FOUND, "", 1, 1, NULL);
    aw_buf_free(&b);
}

/* ---- allocation failures --------------------------------------------------------- */

static const char user_contract[] =
    "{\"format\":\"1.0\",\"name\":\"note\",\"version\":\"1.2.0\",\"root\":{\"name\":\"note\","
    "\"attributes\":[{\"name\":\"level\",\"type\":\"enum\",\"values\":[\"a\",\"b\"],\"required\":true},"
    "{\"name\":\"tags\",\"type\":\"list\",\"maxItems\":3}],"
    "\"children\":[{\"name\":\"body\",\"text\":{\"required\":true,\"maxLength\":20}},"
    "{\"name\":\"item\",\"min\":0,\"max\":\"unbounded\",\"attributes\":[{\"name\":\"n\",\"type\":\"integer\",\"min\":1}],"
    "\"text\":{\"type\":\"decimal\"}}]}}";

static int load_all(const aw_allocator *a, void *ctx) {
    (void)ctx;
    aw_contract *c = NULL;
    aw_error err;
    int rc = aw_contract_builtin("llmResponse", a, &c, &err);
    aw_contract_free(c);
    c = NULL;
    if (!rc) rc = aw_contract_builtin("llmQuery", a, &c, &err);
    aw_contract_free(c);
    c = NULL;
    if (!rc) rc = aw_contract_load(user_contract, sizeof user_contract - 1, a, &c, &err);
    aw_contract_free(c);
    if (rc && rc != AW_ENOMEM) fail_msg("load returned %d: %s", rc, err.message);
    return rc;
}

static void test_alloc_load(void **state) {
    (void)state;
    assert_true(aw_failalloc_run(load_all, NULL, 0) > 5);
}

typedef struct doc_case {
    const aw_contract *c;
    const char *xml;
    bool strict, extract;
    size_t want_issues; /* 0: valid */
} doc_case;

static int validate_parse(const aw_allocator *a, void *ctx) {
    const doc_case *d = ctx;
    aw_contract_options o = {0};
    o.strict = d->strict;
    o.extract = d->extract;
    o.alloc = a;
    aw_contract_issue *is = NULL;
    size_t n = 0;
    aw_error err;
    int rc = aw_contract_validate(d->c, d->xml, strlen(d->xml), &o, &is, &n, &err);
    aw_free(a, is);
    if (rc == AW_ENOMEM) return rc;
    /* an allocation failure must never pass for a verdict on the document */
    if (rc != (d->want_issues ? AW_EVALID : 0) || n != d->want_issues)
        fail_msg("validate: %d with %zu issue(s): %s", rc, n, err.message);
    aw_json_doc *doc = NULL;
    rc = aw_contract_parse(d->c, d->xml, strlen(d->xml), &o, &doc, &err);
    aw_json_doc_free(doc);
    if (rc == AW_ENOMEM) return rc;
    if (rc != (d->want_issues ? AW_EVALID : 0)) fail_msg("parse: %d: %s", rc, err.message);
    return 0;
}

static void test_alloc_validate_parse(void **state) {
    (void)state;
    doc_case cases[] = {
        {response,
         "<llmResponse><response>Hi &amp; <![CDATA[<b>]]></response><analysis>"
         "<subject name=\"a\" description=\"b\" isNew=\"true\"><keyword term=\"t\" confidence=\"0.5\"/>"
         "<keyword term=\"u\" confidence=\"1\"/></subject><summaryUpdate>s</summaryUpdate></analysis></llmResponse>",
         false, false, 0},
        {response,
         "<llmResponse x=\"1\"><response/><analysis><subject isNew=\"no\"><keyword confidence=\"2\"/></subject>"
         "<subject/><subject/><subject/><y/></analysis></llmResponse>",
         true, false, 16},
        {response, "prose <llmResponse><response>x</response>" RESP_TAIL " more", false, true, 0},
        {response, "<llmResponse><response>x</respons>", false, false, 1},
        {response, "<!DOCTYPE x [<!ENTITY a \"b\">]><llmResponse/>", false, false, 1},
        {query,
         "<llmQuery><userMessage>m</userMessage><context topicId=\"t\" messageCount=\"3\">"
         "<activeSubjects>a, b, c</activeSubjects><recentKeywords>k</recentKeywords></context></llmQuery>",
         false, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) aw_failalloc_run(validate_parse, &cases[i], 0);
}

/* Large documents take the paths small ones do not: expat's big pieces
 * (its buffer and a long attribute's pool, from the allocator itself), the
 * text area growing past 64 KiB while text is pending, and text copied out
 * of mixed content. Every allocation failure on them is handled too. */
static char *large_response(void) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_buf_append_str(&b, "<llmResponse><response>"), 0);
    for (int i = 0; i < 9000; i++) assert_int_equal(aw_buf_append_str(&b, "text &amp; \n"), 0);
    assert_int_equal(aw_buf_append_str(&b, "</response><analysis><subject name=\"n\" description=\""), 0);
    for (int i = 0; i < 12000; i++) assert_int_equal(aw_buf_append_str(&b, "d&lt;x "), 0);
    assert_int_equal(aw_buf_append_str(&b, "\" isNew=\"true\"/><summaryUpdate>s</summaryUpdate></analysis></llmResponse>"),
                     0);
    return b.data;
}

static char *large_mixed(void) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_buf_append_str(&b, "<a><b>"), 0);
    for (int i = 0; i < 9000; i++) assert_int_equal(aw_buf_printf(&b, "<c>k%05d</c>", i), 0);
    assert_int_equal(aw_buf_append_str(&b, "</b>top"), 0);
    for (int i = 0; i < 8000; i++) assert_int_equal(aw_buf_append_str(&b, "pending "), 0);
    assert_int_equal(aw_buf_append_str(&b, "<b>mid<c>inner</c>tail</b>end</a>"), 0);
    return b.data;
}

static void test_alloc_large_documents(void **state) {
    (void)state;
    static const char mixed_json[] =
        "{\"format\": \"1.0\", \"root\": {\"name\": \"a\", \"text\": {\"required\": false}, \"children\": ["
        " {\"name\": \"b\", \"min\": 0, \"max\": \"unbounded\", \"text\": {\"required\": false},"
        "  \"children\": [{\"name\": \"c\", \"min\": 0, \"max\": \"unbounded\", \"text\": {\"type\": \"string\"}}]}]}}";
    aw_contract *mixed = NULL;
    assert_int_equal(aw_contract_load(mixed_json, strlen(mixed_json), NULL, &mixed, NULL), 0);
    char *xml[2] = {large_response(), large_mixed()};
    doc_case cases[] = {
        {response, xml[0], false, false, 0},
        {response, xml[0], true, false, 0},
        {mixed, xml[1], false, false, 0},
        {mixed, xml[1], true, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) aw_failalloc_run(validate_parse, &cases[i], 0);
    free(xml[0]);
    free(xml[1]);
    aw_contract_free(mixed);
}

typedef struct build_case {
    const aw_contract *c;
    const char *json;
} build_case;

static int build_prompt(const aw_allocator *a, void *ctx) {
    const build_case *bc = ctx;
    aw_json_read_options ro = {a, 0, false};
    aw_json_doc *d = NULL;
    int rc = aw_json_parse(bc->json, strlen(bc->json), &ro, &d, NULL);
    if (rc) return rc;
    aw_buf out;
    aw_buf_init(&out, a);
    aw_error err;
    rc = aw_contract_build(bc->c, aw_json_doc_root(d), &out, &err);
    if (rc && rc != AW_ENOMEM) fail_msg("build: %d: %s", rc, err.message);
    if (rc == 0) assert_int_equal(out.data[out.len], '\0');
    if (!rc) rc = aw_contract_prompt(bc->c, &out);
    aw_buf_free(&out);
    aw_json_doc_free(d);
    return rc;
}

static void test_alloc_build_prompt(void **state) {
    (void)state;
    build_case cases[] = {
        {query, "{\"userMessage\":\"a < b & c\",\"context\":{\"topicId\":\"t\\n1\",\"messageCount\":12,"
                "\"activeSubjects\":[\"x\",\"y\"],\"recentKeywords\":\"k1, k2\"}}"},
        {response, "{\"response\":\"Hi\",\"analysis\":{\"subject\":[{\"name\":\"a\",\"description\":\"b\","
                   "\"isNew\":true,\"keyword\":[{\"term\":\"t\",\"confidence\":0.5}]}],\"summaryUpdate\":\"s\"}}"},
    };
    for (size_t i = 0; i < 2; i++) aw_failalloc_run(build_prompt, &cases[i], 0);
    /* a user contract: generated prompt, typed text, mixed content */
    aw_contract *c = NULL;
    assert_int_equal(aw_contract_load(user_contract, sizeof user_contract - 1, NULL, &c, NULL), 0);
    build_case uc = {c, "{\"level\":\"a\",\"tags\":[\"x\",\"y\"],\"body\":\"hello\",\"item\":[{\"n\":1,\"#text\":2.5},{\"n\":2}]}"};
    aw_failalloc_run(build_prompt, &uc, 0);
    aw_contract_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_billion_laughs),   cmocka_unit_test(test_external_entities),
        cmocka_unit_test(test_broken_xml),       cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_deep_nesting),     cmocka_unit_test(test_attribute_limit),
        cmocka_unit_test(test_fifty_megabytes),  cmocka_unit_test(test_extract),
        cmocka_unit_test(test_extract_hostile),  cmocka_unit_test(test_alloc_load),
        cmocka_unit_test(test_alloc_validate_parse), cmocka_unit_test(test_alloc_build_prompt),
        cmocka_unit_test(test_alloc_large_documents),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
