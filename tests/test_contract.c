/* The built-in contracts, <llmQuery> and <llmResponse>, against seed 004:
 * the seed's contract test list, every one of its ten response validation
 * rules, the query rules, types, boundary counts, encodings, positions and
 * paths, lenient parse against strict validate, build and the prompt.
 * Hostile input, --extract and allocation failures are in
 * test_contract_hostile.c; user-defined contracts in test_contract_user.c. */
#define _POSIX_C_SOURCE 200809L
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <expat.h>

#include "agentwire/agentwire.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

static aw_contract *query, *response;

static int setup(void **state) {
    (void)state;
    aw_error err;
    if (aw_contract_builtin("llmQuery", NULL, &query, &err)) fail_msg("llmQuery: %s", err.message);
    if (aw_contract_builtin("llmResponse", NULL, &response, &err)) fail_msg("llmResponse: %s", err.message);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    aw_contract_free(query);
    aw_contract_free(response);
    return 0;
}

/* Validate; the issues are returned (caller frees) and their count. */
static size_t issues_of(const aw_contract *c, const char *xml, size_t len, bool strict, aw_contract_issue **out) {
    aw_contract_options o = {0};
    o.strict = strict;
    aw_error err;
    size_t n = 0;
    *out = NULL;
    int rc = aw_contract_validate(c, xml, len, &o, out, &n, &err);
    if (rc == 0) {
        assert_int_equal(n, 0);
        assert_null(*out);
    } else {
        if (rc != AW_EVALID) fail_msg("validate returned %d: %s", rc, err.message);
        assert_true(n > 0);
        /* err names the first issue */
        assert_int_equal(err.code, AW_EVALID);
        assert_int_equal(err.line, (*out)[0].line);
        assert_int_equal(err.column, (*out)[0].column);
    }
    return n;
}

static void expect_valid(const aw_contract *c, const char *xml) {
    aw_contract_issue *is;
    size_t n = issues_of(c, xml, strlen(xml), false, &is);
    if (n) fail_msg("expected valid, got %s at %s (%zu:%zu): %s", aw_contract_code_name(is[0].code), is[0].path,
                    is[0].line, is[0].column, is[0].message);
    n = issues_of(c, xml, strlen(xml), true, &is);
    if (n) fail_msg("expected strictly valid, got %s at %s: %s", aw_contract_code_name(is[0].code), is[0].path,
                    is[0].message);
}

/* Exactly one issue, with this code, path and position (line 0: any), and
 * a message containing fragment (NULL: any). Parse must fail the same way. */
static void expect_one_n(const aw_contract *c, const char *xml, size_t len, bool strict, aw_contract_code code,
                         const char *path, size_t line, size_t col, const char *fragment) {
    aw_contract_issue *is;
    size_t n = issues_of(c, xml, len, strict, &is);
    if (n != 1) {
        for (size_t i = 0; i < n; i++)
            print_message("  issue %zu: %s %s: %s\n", i, aw_contract_code_name(is[i].code), is[i].path, is[i].message);
        fail_msg("expected one %s issue at %s, got %zu", aw_contract_code_name(code), path, n);
    }
    if (is[0].code != code)
        fail_msg("expected %s, got %s (%s: %s)", aw_contract_code_name(code), aw_contract_code_name(is[0].code),
                 is[0].path, is[0].message);
    assert_string_equal(is[0].path, path);
    if (line && (is[0].line != line || is[0].column != col))
        fail_msg("%s at %s: position %zu:%zu, want %zu:%zu", aw_contract_code_name(code), path, is[0].line,
                 is[0].column, line, col);
    if (fragment && !strstr(is[0].message, fragment)) fail_msg("'%s' does not contain '%s'", is[0].message, fragment);
    /* parse fails fast on the same issue, named as the command prints each
     * issue of validate: "code: path: message", line, column */
    aw_contract_options o = {0};
    o.strict = strict;
    aw_json_doc *doc = (aw_json_doc *)1;
    aw_error err;
    assert_int_equal(aw_contract_parse(c, xml, len, &o, &doc, &err), AW_EVALID);
    assert_null(doc);
    char want[600];
    snprintf(want, sizeof want, "%s: %s%s%s", aw_contract_code_name(is[0].code), path, path[0] ? ": " : "",
             is[0].message);
    assert_string_equal(err.message, want);
    assert_int_equal(err.line, is[0].line);
    assert_int_equal(err.column, is[0].column);
    free(is);
}

static void expect_one(const aw_contract *c, const char *xml, aw_contract_code code, const char *path, size_t line,
                       size_t col, const char *fragment) {
    expect_one_n(c, xml, strlen(xml), false, code, path, line, col, fragment);
}

/* Parse and write compact JSON (malloc'd). */
static char *parse_opts(const aw_contract *c, const char *xml, size_t len, bool strict) {
    aw_contract_options o = {0};
    o.strict = strict;
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

static char *parse(const aw_contract *c, const char *xml) { return parse_opts(c, xml, strlen(xml), false); }

static void expect_parse(const aw_contract *c, const char *xml, const char *want) {
    char *got = parse(c, xml);
    assert_string_equal(got, want);
    free(got);
}

/* Build from JSON text; returns the XML (malloc'd) or NULL with *rc set. */
static char *build(const aw_contract *c, const char *json, int *rc, aw_error *err) {
    aw_json_doc *d = NULL;
    if (aw_json_parse(json, strlen(json), NULL, &d, err)) fail_msg("bad fixture: %s", err->message);
    aw_buf b;
    aw_buf_init(&b, NULL);
    *rc = aw_contract_build(c, aw_json_doc_root(d), &b, err);
    aw_json_doc_free(d);
    if (*rc) {
        assert_int_equal(b.len, 0);
        aw_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* ---- fixtures ----------------------------------------------------------------- */

/* the seed's examples, byte for byte */
static const char seed_query[] =
    "<llmQuery>\n"
    "  <userMessage>How much should we save for college?</userMessage>\n"
    "  <context topicId=\"family-planning-2025\" messageCount=\"12\">\n"
    "    <activeSubjects>family planning, education costs</activeSubjects>\n"
    "    <recentKeywords>children, university, tuition, savings</recentKeywords>\n"
    "  </context>\n"
    "</llmQuery>";

static const char seed_response[] =
    "<llmResponse>\n"
    "  <response>For college savings, financial advisors often recommend 529 plans. They offer tax advantages and "
    "can be used for qualified education expenses. The amount to save depends on factors like current age of "
    "children, expected college costs, and your timeframe.</response>\n"
    "  <analysis>\n"
    "    <subject name=\"college-savings\" description=\"Discussion of saving strategies for children's higher "
    "education\" isNew=\"true\">\n"
    "      <keyword term=\"529-plan\" confidence=\"0.95\" />\n"
    "      <keyword term=\"tax-advantages\" confidence=\"0.85\" />\n"
    "      <keyword term=\"education-expenses\" confidence=\"0.90\" />\n"
    "      <keyword term=\"financial-planning\" confidence=\"0.75\" />\n"
    "    </subject>\n"
    "    <summaryUpdate>User asked about college savings amounts. Assistant explained 529 plans and mentioned that "
    "savings targets depend on children's ages and expected costs.</summaryUpdate>\n"
    "  </analysis>\n"
    "</llmResponse>";

/* A response: R(subjects) with the given subject markup inside <analysis>. */
#define R_OPEN "<llmResponse><response>Hi</response><analysis>"
#define R_CLOSE "<summaryUpdate>s</summaryUpdate></analysis></llmResponse>"
#define R(subjects) R_OPEN subjects R_CLOSE
#define SUBJ(kw) "<subject name=\"n\" description=\"d\" isNew=\"true\">" kw "</subject>"
#define KW(conf) "<keyword term=\"t\" confidence=\"" conf "\"/>"

#define Q(ctx) "<llmQuery><userMessage>hello</userMessage>" ctx "</llmQuery>"

/* ---- the seed's contract test list --------------------------------------------- */

static void test_parse_valid_query(void **state) {
    (void)state;
    expect_valid(query, seed_query);
    expect_parse(query, seed_query,
                 "{\"userMessage\":\"How much should we save for college?\",\"context\":{\"topicId\":"
                 "\"family-planning-2025\",\"messageCount\":12,\"activeSubjects\":[\"family planning\",\"education "
                 "costs\"],\"recentKeywords\":[\"children\",\"university\",\"tuition\",\"savings\"]}}");
    assert_string_equal(aw_contract_name(query), "llmQuery");
    assert_string_equal(aw_contract_version(query), "1.0.0");
}

static void test_parse_valid_response(void **state) {
    (void)state;
    expect_valid(response, seed_response);
    expect_parse(response, seed_response,
                 "{\"response\":\"For college savings, financial advisors often recommend 529 plans. They offer tax "
                 "advantages and can be used for qualified education expenses. The amount to save depends on "
                 "factors like current age of children, expected college costs, and your timeframe.\","
                 "\"analysis\":{\"subject\":[{\"name\":\"college-savings\",\"description\":\"Discussion of saving "
                 "strategies for children's higher education\",\"isNew\":true,\"keyword\":["
                 "{\"term\":\"529-plan\",\"confidence\":0.95},{\"term\":\"tax-advantages\",\"confidence\":0.85},"
                 "{\"term\":\"education-expenses\",\"confidence\":0.9},{\"term\":\"financial-planning\","
                 "\"confidence\":0.75}]}],\"summaryUpdate\":\"User asked about college savings amounts. Assistant "
                 "explained 529 plans and mentioned that savings targets depend on children's ages and expected "
                 "costs.\"}}");
    assert_string_equal(aw_contract_name(response), "llmResponse");
    assert_string_equal(aw_contract_version(response), "1.0.0");
}

static void test_reject_malformed(void **state) {
    (void)state;
    /* line and column of the problem, as expat sees it */
    expect_one(response, "<llmResponse>\n  <response>Hi</respons>\n</llmResponse>", AW_CONTRACT_MALFORMED, "", 2, 17,
               "mismatched tag");
    expect_one(response, "<llmResponse>\n  <response a=1>Hi</response>", AW_CONTRACT_MALFORMED, "", 2, 15,
               "not well-formed");
    expect_one(response, "<llmResponse><response>Hi</response>", AW_CONTRACT_MALFORMED, "", 1, 37,
               "no element found");
    expect_one(response, "", AW_CONTRACT_MALFORMED, "", 1, 1, "no element found");
    expect_one(response, "   \n ", AW_CONTRACT_MALFORMED, "", 2, 2, "no element found");
    expect_one(response, "just prose, no XML", AW_CONTRACT_MALFORMED, "", 1, 1, "malformed XML");
    expect_one(response, R("") "<llmResponse/>", AW_CONTRACT_MALFORMED, "", 1, 104, "junk after document element");
    expect_one(response, "<llmResponse><response>a & b</response></llmResponse>", AW_CONTRACT_MALFORMED, "", 1, 27,
               "not well-formed");
    expect_one(response, "<llmResponse><response>a < b</response></llmResponse>", AW_CONTRACT_MALFORMED, "", 1, 27,
               "not well-formed");
    /* the seed's "fail fast, no fallback": nothing is returned */
}

static void test_reject_missing_required(void **state) {
    (void)state;
    expect_one(response, "<llmResponse><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_MISSING_ELEMENT, "/llmResponse/response", 1, 1, "required element <response> is missing");
    expect_one(query, "<llmQuery><context topicId=\"t\" messageCount=\"1\"/></llmQuery>", AW_CONTRACT_MISSING_ELEMENT,
               "/llmQuery/userMessage", 1, 1, "<userMessage>");
    expect_one(query, "<llmQuery><userMessage>x</userMessage></llmQuery>", AW_CONTRACT_MISSING_ELEMENT,
               "/llmQuery/context", 1, 1, "<context>");
    expect_one(query, Q("<context messageCount=\"1\"/>"), AW_CONTRACT_MISSING_ATTRIBUTE, "/llmQuery/context/@topicId",
               1, 43, "topicId");
    expect_one(query, Q("<context topicId=\"t\"/>"), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmQuery/context/@messageCount", 1, 43, "messageCount");
}

static void test_reject_invalid_attribute_types(void **state) {
    (void)state;
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"twelve\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, "must be an integer, not \"twelve\"");
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"1.5\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, "integer");
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, "integer");
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"1e3\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, "integer");
    expect_one(response, R(SUBJ(KW("high"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94,
               "must be a decimal number, not \"high\"");
    expect_one(response, R(SUBJ(KW("0.5.1"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "decimal");
    expect_one(response, R(SUBJ(KW("NaN"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "decimal");
    expect_one(response, R(SUBJ(KW("1e-1"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "decimal");
    expect_one(response, R(SUBJ(KW(""))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "decimal");
}

static void test_confidence_range(void **state) {
    (void)state;
    expect_one(response, R(SUBJ(KW("-0.1"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "must be from 0 to 1, not -0.1");
    expect_one(response, R(SUBJ(KW("1.01"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "must be from 0 to 1, not 1.01");
    expect_one(response, R(SUBJ(KW("1.0000001"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, NULL);
    expect_one(response, R(SUBJ(KW("-0.0000001"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, NULL);
    /* the bounds themselves, and other spellings of numbers in range */
    expect_parse(response, R(SUBJ(KW("0.0") KW("1.0") KW("0") KW("1") KW(".5") KW("0.") KW("+0.25") KW("-0") KW(" 0.6 "))),
                 "{\"response\":\"Hi\",\"analysis\":{\"subject\":[{\"name\":\"n\",\"description\":\"d\",\"isNew\":true,"
                 "\"keyword\":[{\"term\":\"t\",\"confidence\":0},{\"term\":\"t\",\"confidence\":1},"
                 "{\"term\":\"t\",\"confidence\":0},{\"term\":\"t\",\"confidence\":1},"
                 "{\"term\":\"t\",\"confidence\":0.5},{\"term\":\"t\",\"confidence\":0},"
                 "{\"term\":\"t\",\"confidence\":0.25},{\"term\":\"t\",\"confidence\":0},"
                 "{\"term\":\"t\",\"confidence\":0.6}]}],\"summaryUpdate\":\"s\"}}");
}

static void test_empty_optional_elements(void **state) {
    (void)state;
    /* <context> may be empty; activeSubjects/recentKeywords may be empty or absent */
    expect_valid(query, Q("<context topicId=\"t\" messageCount=\"0\"/>"));
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"0\"/>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":0}}");
    expect_parse(query, Q("<context topicId=\"\" messageCount=\"0\"><activeSubjects/><recentKeywords>  </recentKeywords></context>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"\",\"messageCount\":0,\"activeSubjects\":[],"
                 "\"recentKeywords\":[]}}");
    /* <analysis> with no subject; empty <summaryUpdate> in both spellings */
    expect_valid(response, "<llmResponse><response>r</response><analysis><summaryUpdate/></analysis></llmResponse>");
    expect_parse(response,
                 "<llmResponse><response>r</response><analysis><summaryUpdate></summaryUpdate></analysis></llmResponse>",
                 "{\"response\":\"r\",\"analysis\":{\"subject\":[],\"summaryUpdate\":\"\"}}");
    /* a subject without keywords */
    expect_parse(response, R(SUBJ("")),
                 "{\"response\":\"Hi\",\"analysis\":{\"subject\":[{\"name\":\"n\",\"description\":\"d\",\"isNew\":true,"
                 "\"keyword\":[]}],\"summaryUpdate\":\"s\"}}");
    /* required text is not optional: empty and whitespace-only are empty */
    expect_one(response, "<llmResponse><response/><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_EMPTY_TEXT, "/llmResponse/response", 1, 14, "response must not be empty");
    expect_one(response, "<llmResponse><response> \n\t </response><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_EMPTY_TEXT, "/llmResponse/response", 1, 14, NULL);
    expect_one(query, "<llmQuery><userMessage></userMessage><context topicId=\"t\" messageCount=\"1\"/></llmQuery>",
               AW_CONTRACT_EMPTY_TEXT, "/llmQuery/userMessage", 1, 11, "userMessage must not be empty");
}

static void test_escaping_in_build(void **state) {
    (void)state;
    int rc;
    aw_error err;
    char *xml = build(query,
                      "{\"userMessage\":\"if a < b && c > d then say \\\"ok\\\" or 'no'\","
                      "\"context\":{\"topicId\":\"a&b <\\\"x\\\"> 'y'\",\"messageCount\":3,"
                      "\"activeSubjects\":[\"R&D\",\"<tags>\"],\"recentKeywords\":[]}}",
                      &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    assert_string_equal(xml, "<llmQuery>\n"
                             "  <userMessage>if a &lt; b &amp;&amp; c &gt; d then say &quot;ok&quot; or "
                             "&apos;no&apos;</userMessage>\n"
                             "  <context topicId=\"a&amp;b &lt;&quot;x&quot;&gt; &apos;y&apos;\" messageCount=\"3\">\n"
                             "    <activeSubjects>R&amp;D, &lt;tags&gt;</activeSubjects>\n"
                             "    <recentKeywords></recentKeywords>\n"
                             "  </context>\n"
                             "</llmQuery>");
    /* and parsing gives the text back */
    expect_parse(query, xml,
                 "{\"userMessage\":\"if a < b && c > d then say \\\"ok\\\" or 'no'\",\"context\":{\"topicId\":"
                 "\"a&b <\\\"x\\\"> 'y'\",\"messageCount\":3,\"activeSubjects\":[\"R&D\",\"<tags>\"],"
                 "\"recentKeywords\":[]}}");
    free(xml);
    /* tab, LF and CR survive attributes, CR survives text */
    xml = build(query, "{\"userMessage\":\"a\\r\\nb\\tc\",\"context\":{\"topicId\":\"x\\ty\\nz\\r\",\"messageCount\":0}}",
                &rc, &err);
    assert_non_null(xml);
    assert_non_null(strstr(xml, "topicId=\"x&#9;y&#10;z&#13;\""));
    expect_parse(query, xml,
                 "{\"userMessage\":\"a\\r\\nb\\tc\",\"context\":{\"topicId\":\"x\\ty\\nz\\r\",\"messageCount\":0}}");
    free(xml);
    /* characters XML forbids become U+FFFD and the output still parses */
    xml = build(query, "{\"userMessage\":\"bell\\u0007 nul\\u0000 end\",\"context\":{\"topicId\":\"t\",\"messageCount\":1}}",
                &rc, &err);
    assert_non_null(xml);
    expect_parse(query, xml,
                 "{\"userMessage\":\"bell\xef\xbf\xbd nul\xef\xbf\xbd end\",\"context\":{\"topicId\":\"t\","
                 "\"messageCount\":1}}");
    free(xml);
}

static void test_utf8_preserved(void **state) {
    (void)state;
    const char *xml = "<llmResponse><response>Ünïcödé — 日本語 😀 ∑</response><analysis>"
                      "<subject name=\"épargne-études\" description=\"Économies « études »\" isNew=\"false\">"
                      "<keyword term=\"学费\" confidence=\"0.7\"/></subject>"
                      "<summaryUpdate>Résumé 🙂</summaryUpdate></analysis></llmResponse>";
    const char *json = "{\"response\":\"Ünïcödé — 日本語 😀 ∑\",\"analysis\":{\"subject\":[{\"name\":\"épargne-études\","
                       "\"description\":\"Économies « études »\",\"isNew\":false,\"keyword\":[{\"term\":\"学费\","
                       "\"confidence\":0.7}]}],\"summaryUpdate\":\"Résumé 🙂\"}}";
    expect_parse(response, xml, json);
    int rc;
    aw_error err;
    char *built = build(response, json, &rc, &err);
    assert_non_null(built);
    assert_non_null(strstr(built, "<response>Ünïcödé — 日本語 😀 ∑</response>"));
    expect_parse(response, built, json);
    free(built);
    /* numeric character references are decoded to UTF-8 */
    expect_parse(query, Q("<context topicId=\"&#x65E5;&#26412;\" messageCount=\"1\"/>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"日本\",\"messageCount\":1}}");
}

/* ---- arrays, booleans, boundary counts ------------------------------------------ */

static void test_arrays_always(void **state) {
    (void)state;
    /* a single subject with a single keyword: still arrays */
    expect_parse(response, R(SUBJ(KW("0.8"))),
                 "{\"response\":\"Hi\",\"analysis\":{\"subject\":[{\"name\":\"n\",\"description\":\"d\",\"isNew\":true,"
                 "\"keyword\":[{\"term\":\"t\",\"confidence\":0.8}]}],\"summaryUpdate\":\"s\"}}");
    /* several subjects, in document order, each with its own keywords */
    expect_parse(response,
                 R("<subject name=\"a\" description=\"da\" isNew=\"true\"><keyword term=\"a1\" confidence=\"0.9\"/>"
                   "<keyword term=\"a2\" confidence=\"0.8\"/></subject>"
                   "<subject name=\"b\" description=\"db\" isNew=\"false\"/>"
                   "<subject name=\"c\" description=\"dc\" isNew=\"true\"><keyword term=\"c1\" confidence=\"1\"/></subject>"),
                 "{\"response\":\"Hi\",\"analysis\":{\"subject\":["
                 "{\"name\":\"a\",\"description\":\"da\",\"isNew\":true,\"keyword\":[{\"term\":\"a1\",\"confidence\":0.9},"
                 "{\"term\":\"a2\",\"confidence\":0.8}]},"
                 "{\"name\":\"b\",\"description\":\"db\",\"isNew\":false,\"keyword\":[]},"
                 "{\"name\":\"c\",\"description\":\"dc\",\"isNew\":true,\"keyword\":[{\"term\":\"c1\",\"confidence\":1}]}],"
                 "\"summaryUpdate\":\"s\"}}");
    /* a comma-separated list with one item is an array too */
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"1\"><activeSubjects>solo</activeSubjects></context>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":1,\"activeSubjects\":[\"solo\"]}}");
}

static void test_is_new(void **state) {
    (void)state;
    char *s = parse(response, R("<subject name=\"n\" description=\"d\" isNew=\"true\"/>"));
    assert_non_null(strstr(s, "\"isNew\":true"));
    free(s);
    s = parse(response, R("<subject name=\"n\" description=\"d\" isNew=\"false\"/>"));
    assert_non_null(strstr(s, "\"isNew\":false"));
    free(s);
    /* the public implementation rejected its own "true"; ours rejects only non-booleans */
    expect_one(response, R("<subject name=\"n\" description=\"d\" isNew=\"yes\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/@isNew", 1, 47, "must be \"true\" or \"false\", not \"yes\"");
    expect_one(response, R("<subject name=\"n\" description=\"d\" isNew=\"True\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/@isNew", 1, 47, NULL);
    expect_one(response, R("<subject name=\"n\" description=\"d\" isNew=\"1\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/@isNew", 1, 47, NULL);
    expect_one(response, R("<subject name=\"n\" description=\"d\" isNew=\"\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/@isNew", 1, 47, NULL);
    /* typed attributes are trimmed, string ones kept as written */
    s = parse(response, R("<subject name=\" n \" description=\"d\" isNew=\" false \"/>"));
    assert_non_null(strstr(s, "\"name\":\" n \",\"description\":\"d\",\"isNew\":false"));
    free(s);
}

static char *subjects(int count, int keywords) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, R_OPEN);
    for (int i = 0; i < count; i++) {
        aw_buf_printf(&b, "<subject name=\"s%d\" description=\"d\" isNew=\"true\">", i);
        for (int k = 0; k < keywords; k++) aw_buf_printf(&b, "\n<keyword term=\"k%d\" confidence=\"0.%d\"/>", k, k);
        aw_buf_append_str(&b, "</subject>");
    }
    aw_buf_append_str(&b, R_CLOSE);
    return b.data;
}

static void test_boundary_counts(void **state) {
    (void)state;
    /* 3 subjects allowed, the 4th is too many */
    char *x = subjects(3, 1);
    expect_valid(response, x);
    char *s = parse(response, x);
    assert_non_null(strstr(s, "\"name\":\"s2\""));
    free(s);
    free(x);
    x = subjects(4, 0);
    expect_one(response, x, AW_CONTRACT_TOO_MANY, "/llmResponse/analysis/subject[4]", 1, 221,
               "<subject> appears more than 3 times in <analysis>");
    free(x);
    /* one issue however many extra there are */
    x = subjects(9, 0);
    expect_one(response, x, AW_CONTRACT_TOO_MANY, "/llmResponse/analysis/subject[4]", 1, 221, NULL);
    free(x);
    /* 10 keywords allowed, the 11th is too many: its own line and column */
    x = subjects(1, 10);
    expect_valid(response, x);
    free(x);
    x = subjects(2, 11);
    aw_contract_issue *is;
    size_t n = issues_of(response, x, strlen(x), false, &is);
    assert_int_equal(n, 2);
    assert_int_equal(is[0].code, AW_CONTRACT_TOO_MANY);
    assert_string_equal(is[0].path, "/llmResponse/analysis/subject[1]/keyword[11]");
    assert_int_equal(is[0].line, 12);
    assert_int_equal(is[0].column, 1);
    assert_string_equal(is[0].message, "<keyword> appears more than 10 times in <subject>");
    assert_string_equal(is[1].path, "/llmResponse/analysis/subject[2]/keyword[11]");
    assert_int_equal(is[1].line, 23);
    free(is);
    free(x);
    /* two of an element allowed once: no index in the path */
    expect_one(response,
               "<llmResponse><response>a</response><response>b</response><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_TOO_MANY, "/llmResponse/response", 1, 36, "<response> appears more than 1 time in <llmResponse>");
}

/* n characters of a message cycling through 1- to 4-byte characters */
static char *message_of(size_t n) {
    static const char *const chars[] = {"a", "é", "日", "😀"};
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "<llmQuery><userMessage>");
    for (size_t i = 0; i < n; i++) aw_buf_append_str(&b, chars[i % 4]);
    aw_buf_append_str(&b, "</userMessage><context topicId=\"t\" messageCount=\"1\"/></llmQuery>");
    return b.data;
}

static void test_message_length_in_characters(void **state) {
    (void)state;
    char *x = message_of(10000); /* 25,000 bytes */
    expect_valid(query, x);
    free(x);
    x = message_of(10001);
    expect_one(query, x, AW_CONTRACT_TEXT_TOO_LONG, "/llmQuery/userMessage", 1, 11,
               "text is 10001 characters long; at most 10000 are allowed");
    free(x);
    /* surrounding whitespace is not counted */
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "<llmQuery><userMessage>\n   ");
    for (int i = 0; i < 10000; i++) aw_buf_append_str(&b, "ü");
    aw_buf_append_str(&b, "\n   </userMessage><context topicId=\"t\" messageCount=\"1\"/></llmQuery>");
    expect_valid(query, b.data);
    aw_buf_free(&b);
}

static void test_message_count(void **state) {
    (void)state;
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"0\"/>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":0}}");
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\" 4096 \"/>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":4096}}");
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"+7\"/>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":7}}");
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"-1\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, "must be at least 0, not -1");
    expect_one(query, Q("<context topicId=\"t\" messageCount=\"0x10\"/>"), AW_CONTRACT_BAD_VALUE,
               "/llmQuery/context/@messageCount", 1, 43, NULL);
    /* as large as a double holds, and larger (no infinity ever reaches the JSON) */
    char buf[1200];
    char digits[520];
    memset(digits, '9', 308);
    digits[308] = '\0';
    snprintf(buf, sizeof buf, Q("<context topicId=\"t\" messageCount=\"%s\"/>"), digits);
    char *s = parse(query, buf);
    assert_non_null(strstr(s, "\"messageCount\":1e+308"));
    free(s);
    memset(digits, '9', 400);
    digits[400] = '\0';
    snprintf(buf, sizeof buf, Q("<context topicId=\"t\" messageCount=\"%s\"/>"), digits);
    expect_one(query, buf, AW_CONTRACT_BAD_VALUE, "/llmQuery/context/@messageCount", 1, 43, "must be an integer");
    memset(digits, '1', 512);
    digits[512] = '\0';
    snprintf(buf, sizeof buf, Q("<context topicId=\"t\" messageCount=\"%s\"/>"), digits);
    expect_one(query, buf, AW_CONTRACT_BAD_VALUE, "/llmQuery/context/@messageCount", 1, 43, "must be an integer");
}

static char *list_query(const char *elem, int items) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_printf(&b, "<llmQuery><userMessage>m</userMessage><context topicId=\"t\" messageCount=\"1\"><%s>", elem);
    for (int i = 0; i < items; i++) aw_buf_printf(&b, "%sitem %d", i ? ", " : "", i);
    aw_buf_printf(&b, "</%s></context></llmQuery>", elem);
    return b.data;
}

static void test_list_limits(void **state) {
    (void)state;
    char *x = list_query("activeSubjects", 20);
    expect_valid(query, x);
    free(x);
    x = list_query("activeSubjects", 21);
    expect_one(query, x, AW_CONTRACT_TOO_MANY_ITEMS, "/llmQuery/context/activeSubjects", 1, 77,
               "text has 21 items; at most 20 are allowed");
    free(x);
    x = list_query("recentKeywords", 50);
    expect_valid(query, x);
    char *s = parse(query, x);
    assert_non_null(strstr(s, "\"item 49\"]"));
    free(s);
    free(x);
    x = list_query("recentKeywords", 51);
    expect_one(query, x, AW_CONTRACT_TOO_MANY_ITEMS, "/llmQuery/context/recentKeywords", 1, 77,
               "text has 51 items; at most 50 are allowed");
    free(x);
    /* empty items (a trailing or doubled comma) are not counted, nor kept */
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"1\"><recentKeywords> a ,, b, </recentKeywords></context>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":1,\"recentKeywords\":[\"a\",\"b\"]}}");
}

/* ---- the ten response validation rules of the seed, one by one ---------------- */

static void test_response_rules(void **state) {
    (void)state;
    /* 1. well-formed XML */
    expect_one(response, "<llmResponse><response>x</response><analysis></llmResponse>", AW_CONTRACT_MALFORMED, "", 1,
               48, "mismatched tag");
    /* 2. the root is <llmResponse> */
    expect_one(response, seed_query, AW_CONTRACT_WRONG_ROOT, "/llmResponse", 1, 1,
               "the root element must be <llmResponse>, not <llmQuery>");
    expect_one(query, seed_response, AW_CONTRACT_WRONG_ROOT, "/llmQuery", 1, 1, "not <llmResponse>");
    /* 3. exactly one non-empty <response> */
    expect_one(response, "<llmResponse><analysis><summaryUpdate/></analysis></llmResponse>", AW_CONTRACT_MISSING_ELEMENT,
               "/llmResponse/response", 1, 1, NULL);
    expect_one(response, "<llmResponse><response/><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_EMPTY_TEXT, "/llmResponse/response", 1, 14, NULL);
    /* 4. exactly one <analysis> */
    expect_one(response, "<llmResponse><response>x</response></llmResponse>", AW_CONTRACT_MISSING_ELEMENT,
               "/llmResponse/analysis", 1, 1, "required element <analysis> is missing");
    expect_one(response,
               "<llmResponse><response>x</response><analysis><summaryUpdate/></analysis><analysis/></llmResponse>",
               AW_CONTRACT_TOO_MANY, "/llmResponse/analysis", 1, 73, NULL);
    /* 5. 0-3 <subject> (boundaries in test_boundary_counts) */
    expect_valid(response, R(""));
    expect_valid(response, R(SUBJ("") SUBJ("") SUBJ("")));
    expect_one(response, R(SUBJ("") SUBJ("") SUBJ("") SUBJ("")), AW_CONTRACT_TOO_MANY, "/llmResponse/analysis/subject[4]",
               1, 218, NULL);
    /* 6. each <subject> has name, description and isNew */
    expect_one(response, R("<subject description=\"d\" isNew=\"true\"/>"), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmResponse/analysis/subject[1]/@name", 1, 47, "required attribute name is missing");
    expect_one(response, R("<subject name=\"n\" isNew=\"true\"/>"), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmResponse/analysis/subject[1]/@description", 1, 47, NULL);
    expect_one(response, R("<subject name=\"n\" description=\"d\"/>"), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmResponse/analysis/subject[1]/@isNew", 1, 47, NULL);
    aw_contract_issue *is;
    size_t n = issues_of(response, R("<subject/>"), strlen(R("<subject/>")), false, &is);
    assert_int_equal(n, 3);
    assert_string_equal(is[0].path, "/llmResponse/analysis/subject[1]/@name");
    assert_string_equal(is[1].path, "/llmResponse/analysis/subject[1]/@description");
    assert_string_equal(is[2].path, "/llmResponse/analysis/subject[1]/@isNew");
    free(is);
    /* 7. 0-10 <keyword> per subject (boundaries in test_boundary_counts) */
    expect_valid(response, R(SUBJ("")));
    /* 8. each <keyword> has term and confidence */
    expect_one(response, R(SUBJ("<keyword confidence=\"0.7\"/>")), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@term", 1, 94, "term");
    expect_one(response, R(SUBJ("<keyword term=\"t\"/>")), AW_CONTRACT_MISSING_ATTRIBUTE,
               "/llmResponse/analysis/subject[1]/keyword[1]/@confidence", 1, 94, "confidence");
    /* 9. confidence parses as a number from 0.0 to 1.0 (more in test_confidence_range) */
    expect_one(response, R(SUBJ(KW("0.9") KW("2"))), AW_CONTRACT_BAD_VALUE,
               "/llmResponse/analysis/subject[1]/keyword[2]/@confidence", 1, 130, "must be from 0 to 1, not 2");
    /* 10. exactly one <summaryUpdate>, which may be empty */
    expect_one(response, "<llmResponse><response>x</response><analysis/></llmResponse>", AW_CONTRACT_MISSING_ELEMENT,
               "/llmResponse/analysis/summaryUpdate", 1, 36, "required element <summaryUpdate> is missing");
    expect_one(response,
               "<llmResponse><response>x</response><analysis><summaryUpdate/><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_TOO_MANY, "/llmResponse/analysis/summaryUpdate", 1, 62, NULL);
    expect_valid(response, "<llmResponse><response>x</response><analysis><summaryUpdate/></analysis></llmResponse>");
    /* order among siblings is free */
    expect_valid(response, "<llmResponse><analysis><summaryUpdate/>" SUBJ("") "</analysis><response>x</response></llmResponse>");
}

/* Every issue is listed, in document order, with its own path and place. */
static void test_every_issue_listed(void **state) {
    (void)state;
    const char *xml = "<llmResponse>\n"
                      "  <response></response>\n"
                      "  <analysis>\n"
                      "    <subject name=\"a\" description=\"d\" isNew=\"true\">\n"
                      "      <keyword term=\"t\" confidence=\"0.5\"/>\n"
                      "    </subject>\n"
                      "    <subject name=\"b\" description=\"d\" isNew=\"maybe\">\n"
                      "      <keyword term=\"u\" confidence=\"7\"/>\n"
                      "      <keyword confidence=\"0.1\"/>\n"
                      "    </subject>\n"
                      "  </analysis>\n"
                      "</llmResponse>";
    aw_contract_issue *is;
    size_t n = issues_of(response, xml, strlen(xml), false, &is);
    assert_int_equal(n, 5);
    struct { aw_contract_code code; const char *path; size_t line, col; } want[] = {
        {AW_CONTRACT_EMPTY_TEXT, "/llmResponse/response", 2, 3},
        {AW_CONTRACT_BAD_VALUE, "/llmResponse/analysis/subject[2]/@isNew", 7, 5},
        {AW_CONTRACT_BAD_VALUE, "/llmResponse/analysis/subject[2]/keyword[1]/@confidence", 8, 7},
        {AW_CONTRACT_MISSING_ATTRIBUTE, "/llmResponse/analysis/subject[2]/keyword[2]/@term", 9, 7},
        {AW_CONTRACT_MISSING_ELEMENT, "/llmResponse/analysis/summaryUpdate", 3, 3},
    };
    for (size_t i = 0; i < n; i++) {
        if (is[i].code != want[i].code || strcmp(is[i].path, want[i].path) || is[i].line != want[i].line ||
            is[i].column != want[i].col)
            fail_msg("issue %zu: %s %s %zu:%zu, want %s %s %zu:%zu", i, aw_contract_code_name(is[i].code), is[i].path,
                     is[i].line, is[i].column, aw_contract_code_name(want[i].code), want[i].path, want[i].line,
                     want[i].col);
    }
    free(is);
    /* the issue's example path, exactly */
    const char *x2 = "<llmResponse>\r\n<response>r</response>\r\n<analysis>\r\n"
                     "<subject name=\"a\" description=\"d\" isNew=\"true\"/>\r\n"
                     "<subject name=\"b\" description=\"d\" isNew=\"true\">\r\n"
                     "  <keyword term=\"x\" confidence=\"high\"/></subject>\r\n"
                     "<summaryUpdate/></analysis></llmResponse>";
    expect_one(response, x2, AW_CONTRACT_BAD_VALUE, "/llmResponse/analysis/subject[2]/keyword[1]/@confidence", 6, 3,
               NULL);
    /* code names */
    const char *names[] = {"malformed", "limit", "wrong_root", "missing_element", "too_many", "missing_attribute",
                           "bad_value", "empty_text", "text_too_long", "too_many_items", "unknown_element",
                           "unknown_attribute", "unexpected_text", "not_found"};
    for (int c = AW_CONTRACT_MALFORMED; c <= AW_CONTRACT_NOT_FOUND; c++)
        assert_string_equal(aw_contract_code_name((aw_contract_code)c), names[c - 1]);
    assert_null(aw_contract_code_name((aw_contract_code)0));
    assert_null(aw_contract_code_name((aw_contract_code)99));
}

/* ---- CDATA, BOM, encodings ------------------------------------------------------ */

static void test_cdata(void **state) {
    (void)state;
    expect_parse(response,
                 "<llmResponse><response><![CDATA[\nYou can use <angle brackets> and & symbols freely here.\n]]>"
                 "</response><analysis><summaryUpdate><![CDATA[a]]>&amp;<![CDATA[<b>]]></summaryUpdate></analysis>"
                 "</llmResponse>",
                 "{\"response\":\"You can use <angle brackets> and & symbols freely here.\",\"analysis\":"
                 "{\"subject\":[],\"summaryUpdate\":\"a&<b>\"}}");
    /* CDATA of only blanks is empty text */
    expect_one(response, "<llmResponse><response><![CDATA[  ]]></response><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_EMPTY_TEXT, "/llmResponse/response", 1, 14, NULL);
    /* lists and typed text in CDATA */
    expect_parse(query, Q("<context topicId=\"t\" messageCount=\"1\"><activeSubjects><![CDATA[x<y, a&b]]></activeSubjects></context>"),
                 "{\"userMessage\":\"hello\",\"context\":{\"topicId\":\"t\",\"messageCount\":1,\"activeSubjects\":[\"x<y\",\"a&b\"]}}");
    /* comments and processing instructions are not text */
    expect_parse(response,
                 "<?xml version=\"1.0\"?><!-- c --><llmResponse><response>a<!-- c -->b<?pi x?>c</response><analysis>"
                 "<summaryUpdate/></analysis></llmResponse><!-- after -->",
                 "{\"response\":\"abc\",\"analysis\":{\"subject\":[],\"summaryUpdate\":\"\"}}");
}

static void test_bom_and_encoding(void **state) {
    (void)state;
    const char *body = "<llmResponse><response>x</response><analysis><summaryUpdate/></analysis></llmResponse>";
    char buf[512];
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s", body);
    expect_valid(response, buf);
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n%s", body);
    expect_valid(response, buf);
    snprintf(buf, sizeof buf, "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>%s", body);
    expect_valid(response, buf);
    /* any other declared encoding is refused, even when the bytes are ASCII */
    const char *encs[] = {"ISO-8859-1", "UTF-16", "US-ASCII", "windows-1252"};
    for (size_t i = 0; i < 4; i++) {
        snprintf(buf, sizeof buf, "<?xml version=\"1.0\" encoding=\"%s\"?>\n%s", encs[i], body);
        char frag[80];
        snprintf(frag, sizeof frag, "declares encoding \"%s\"; only UTF-8 is accepted", encs[i]);
        expect_one(response, buf, AW_CONTRACT_MALFORMED, "", 1, 1, frag);
    }
    /* UTF-16 bytes (with their BOM) are not UTF-8 */
    const char utf16[] = "\xFF\xFE<\0l\0";
    expect_one_n(response, utf16, sizeof utf16 - 1, false, AW_CONTRACT_MALFORMED, "", 0, 0, NULL);
    /* Latin-1 bytes that are not UTF-8 */
    expect_one(response, "<llmResponse><response>caf\xe9</response><analysis><summaryUpdate/></analysis></llmResponse>",
               AW_CONTRACT_MALFORMED, "", 1, 27, NULL);
}

/* ---- positions as expat counts them ------------------------------------------- */

/* Where expat puts each <keyword>: 1-based line and column. */
typedef struct keyword_starts {
    XML_Parser parser;
    size_t line[16], column[16];
    size_t n;
} keyword_starts;

static void XMLCALL record_keyword(void *ud, const XML_Char *name, const XML_Char **atts) {
    (void)atts;
    keyword_starts *k = ud;
    if (strcmp(name, "keyword") || k->n == 16) return;
    k->line[k->n] = (size_t)XML_GetCurrentLineNumber(k->parser);
    k->column[k->n] = (size_t)XML_GetCurrentColumnNumber(k->parser) + 1;
    k->n++;
}

static void XMLCALL ignore_end(void *ud, const XML_Char *name) {
    (void)ud;
    (void)name;
}

static void expat_keyword_starts(const char *xml, keyword_starts *k) {
    k->n = 0;
    k->parser = XML_ParserCreate("UTF-8");
    assert_non_null(k->parser);
    XML_SetUserData(k->parser, k);
    XML_SetElementHandler(k->parser, record_keyword, ignore_end);
    assert_int_equal(XML_Parse(k->parser, xml, (int)strlen(xml), 1), XML_STATUS_OK);
    XML_ParserFree(k->parser);
}

/* Issue positions are no longer asked of expat for every element; they are
 * worked out from the elements' offsets when there is an issue
 * (contract_doc.c). They must stay exactly expat's, whatever the line
 * breaks (LF, CR LF, CR), a BOM, tabs and characters of 1 to 4 bytes
 * before the element; with --extract, shifted by where the document
 * starts in the text. Every <keyword> lacks its term: one issue each. */
static void test_positions_are_expats(void **state) {
    (void)state;
    const char *breaks[] = {"\n", "\r\n", "\r"};
    for (int bom = 0; bom < 2; bom++) {
        for (size_t b = 0; b < 3; b++) {
            const char *nl = breaks[b];
            char xml[1024];
            snprintf(xml, sizeof xml,
                     "%s<llmResponse>%s<response>h\xC3\xA9llo \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9D\x84\x9E%sx</response>%s"
                     "<analysis><subject name=\"a\" description=\"d\" isNew=\"true\">%s\t<keyword confidence=\"0.5\"/>"
                     "\xC3\xA9<keyword confidence=\"0.5\"/>%s<!-- \xC3\xBC\xE2\x82\xAC\xF0\x9D\x84\x9E -->%s"
                     "\xF0\x9D\x84\x9E <keyword confidence=\"0.5\"/>%s%s<keyword confidence=\"0.5\"\r\n/></subject>"
                     "<summaryUpdate/></analysis></llmResponse>",
                     bom ? "\xEF\xBB\xBF" : "", nl, nl, nl, nl, nl, nl, nl, nl);
            keyword_starts want;
            expat_keyword_starts(xml, &want);
            assert_int_equal(want.n, 4);
            aw_contract_issue *is;
            size_t n = issues_of(response, xml, strlen(xml), false, &is);
            assert_int_equal(n, 4);
            for (size_t i = 0; i < n; i++) {
                assert_int_equal(is[i].code, AW_CONTRACT_MISSING_ATTRIBUTE);
                if (is[i].line != want.line[i] || is[i].column != want.column[i])
                    fail_msg("bom %d, break %zu, keyword %zu: %zu:%zu, expat says %zu:%zu", bom, b, i + 1, is[i].line,
                             is[i].column, want.line[i], want.column[i]);
            }
            free(is);
            /* the same document after prose: "line two ü " puts it at 2:12 */
            if (bom) continue;
            char text[1200];
            snprintf(text, sizeof text, "Voil\xC3\xA0 \xE6\x97\xA5\xE6\x9C\xAC\r\nline two \xC3\xBC %s", xml);
            aw_contract_options o = {0};
            o.extract = true;
            aw_error err;
            assert_int_equal(aw_contract_validate(response, text, strlen(text), &o, &is, &n, &err), AW_EVALID);
            assert_int_equal(n, 4);
            for (size_t i = 0; i < n; i++) {
                size_t line = want.line[i] + 1, column = want.column[i] + (want.line[i] == 1 ? 11 : 0);
                if (is[i].line != line || is[i].column != column)
                    fail_msg("extract, break %zu, keyword %zu: %zu:%zu, want %zu:%zu", b, i + 1, is[i].line,
                             is[i].column, line, column);
            }
            free(is);
        }
    }
}

/* ---- lenient parse, strict validate -------------------------------------------- */

static void test_unknown_lenient_and_strict(void **state) {
    (void)state;
    const char *xml = "<llmResponse version=\"2\">\n"
                      "  <response>Hi<b>bold</b></response>\n"
                      "  <mood>calm</mood>\n"
                      "  <analysis>\n"
                      "    <subject name=\"n\" description=\"d\" isNew=\"true\" weight=\"3\">\n"
                      "      <keyword term=\"t\" confidence=\"0.9\">stray text</keyword>\n"
                      "    </subject>\n"
                      "    <summaryUpdate>s</summaryUpdate>\n"
                      "  </analysis>\n"
                      "</llmResponse>";
    /* parse (lenient): unknowns ignored and not in the output */
    expect_parse(response, xml,
                 "{\"response\":\"Hi\",\"analysis\":{\"subject\":[{\"name\":\"n\",\"description\":\"d\",\"isNew\":true,"
                 "\"keyword\":[{\"term\":\"t\",\"confidence\":0.9}]}],\"summaryUpdate\":\"s\"}}");
    aw_contract_issue *is;
    assert_int_equal(issues_of(response, xml, strlen(xml), false, &is), 0);
    /* strict: every unknown is an issue */
    size_t n = issues_of(response, xml, strlen(xml), true, &is);
    assert_int_equal(n, 5);
    assert_int_equal(is[0].code, AW_CONTRACT_UNKNOWN_ATTRIBUTE);
    assert_string_equal(is[0].path, "/llmResponse/@version");
    assert_int_equal(is[0].line, 1);
    assert_int_equal(is[1].code, AW_CONTRACT_UNKNOWN_ELEMENT);
    assert_string_equal(is[1].path, "/llmResponse/response/b");
    assert_int_equal(is[1].line, 2);
    assert_int_equal(is[1].column, 15);
    assert_int_equal(is[2].code, AW_CONTRACT_UNKNOWN_ELEMENT);
    assert_string_equal(is[2].path, "/llmResponse/mood");
    assert_string_equal(is[2].message, "element <mood> is not part of the contract");
    assert_int_equal(is[3].code, AW_CONTRACT_UNKNOWN_ATTRIBUTE);
    assert_string_equal(is[3].path, "/llmResponse/analysis/subject[1]/@weight");
    assert_string_equal(is[3].message, "attribute weight is not part of the contract");
    assert_int_equal(is[4].code, AW_CONTRACT_UNEXPECTED_TEXT);
    assert_string_equal(is[4].path, "/llmResponse/analysis/subject[1]/keyword[1]");
    assert_int_equal(is[4].line, 6);
    assert_int_equal(is[4].column, 7);
    free(is);
    /* strict parse fails on the first */
    expect_one_n(response, "<llmResponse><response>x</response><analysis><summaryUpdate/><x/></analysis></llmResponse>",
                 strlen("<llmResponse><response>x</response><analysis><summaryUpdate/><x/></analysis></llmResponse>"),
                 true, AW_CONTRACT_UNKNOWN_ELEMENT, "/llmResponse/analysis/x", 1, 62, NULL);
    /* whitespace between elements is not stray text */
    expect_valid(response, seed_response);
}

/* ---- build ----------------------------------------------------------------------- */

static void test_build(void **state) {
    (void)state;
    /* the seed's query example is exactly the builder's layout */
    char *json = parse(query, seed_query);
    int rc;
    aw_error err;
    char *xml = build(query, json, &rc, &err);
    assert_non_null(xml);
    assert_string_equal(xml, seed_query);
    free(xml);
    free(json);
    /* a response: keywords self-closed as in the seed, numbers as JavaScript prints them */
    xml = build(response,
                "{\"response\":\"Hello\",\"analysis\":{\"subject\":[{\"name\":\"a\",\"description\":\"b\",\"isNew\":true,"
                "\"keyword\":[{\"term\":\"t\",\"confidence\":0.90},{\"term\":\"u\",\"confidence\":1}]},"
                "{\"name\":\"c\",\"description\":\"d\",\"isNew\":false,\"keyword\":[]}],\"summaryUpdate\":\"\"}}",
                &rc, &err);
    assert_non_null(xml);
    assert_string_equal(xml, "<llmResponse>\n"
                             "  <response>Hello</response>\n"
                             "  <analysis>\n"
                             "    <subject name=\"a\" description=\"b\" isNew=\"true\">\n"
                             "      <keyword term=\"t\" confidence=\"0.9\" />\n"
                             "      <keyword term=\"u\" confidence=\"1\" />\n"
                             "    </subject>\n"
                             "    <subject name=\"c\" description=\"d\" isNew=\"false\" />\n"
                             "    <summaryUpdate></summaryUpdate>\n"
                             "  </analysis>\n"
                             "</llmResponse>");
    free(xml);
    /* parse -> build -> parse is a fixed point for the seed's response */
    json = parse(response, seed_response);
    xml = build(response, json, &rc, &err);
    assert_non_null(xml);
    expect_parse(response, xml, json);
    free(xml);
    free(json);
    /* numbers are written without exponents, so what parse returns builds back */
    json = parse(response, R(SUBJ(KW("0.0000001") KW("0.00000015") KW("1"))));
    assert_non_null(strstr(json, "\"confidence\":1e-7},{\"term\":\"t\",\"confidence\":1.5e-7}"));
    xml = build(response, json, &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    assert_non_null(strstr(xml, "confidence=\"0.0000001\" />\n      <keyword term=\"t\" confidence=\"0.00000015\" />"));
    expect_parse(response, xml, json);
    free(xml);
    free(json);
    static const char nines[] = Q("<context topicId=\"t\" messageCount=\""
                                  "999999999999999999999999999999999999999999999999999999999999999\"/>");
    json = parse(query, nines);
    assert_non_null(strstr(json, "\"messageCount\":1e+63"));
    xml = build(query, json, &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    assert_non_null(strstr(xml, "messageCount=\"1000000000000000000000000000000000000000000000000000000000000000\""));
    expect_parse(query, xml, json);
    free(xml);
    free(json);
    xml = build(query, "{\"userMessage\":\"m\",\"context\":{\"topicId\":1e21,\"messageCount\":1e21}}", &rc, &err);
    assert_non_null(xml);
    /* a string keeps JavaScript's form; an integer is written out */
    assert_non_null(strstr(xml, "topicId=\"1e+21\" messageCount=\"1000000000000000000000\""));
    free(xml);
    xml = build(query, "{\"userMessage\":\"m\",\"context\":{\"topicId\":\"t\",\"messageCount\":1.5e300}}", &rc, &err);
    assert_non_null(xml);
    char *mc = strstr(xml, "messageCount=\"15000");
    assert_non_null(mc);
    assert_int_equal(strspn(mc + 16, "0"), 299);
    assert_int_equal(mc[14 + 301], '"');
    free(xml);
    /* what build writes is validated: a bad value or a missing element is refused */
    assert_null(build(response,
                      "{\"response\":\"r\",\"analysis\":{\"subject\":[{\"name\":\"a\",\"description\":\"b\",\"isNew\":true,"
                      "\"keyword\":[{\"term\":\"t\",\"confidence\":1.5}]}],\"summaryUpdate\":\"\"}}",
                      &rc, &err));
    assert_int_equal(rc, AW_EVALID);
    assert_string_equal(err.message,
                        "bad_value: /llmResponse/analysis/subject[1]/keyword[1]/@confidence: must be from 0 to 1, not 1.5");
    assert_int_equal(err.line, 0); /* no position: the XML it would refer to is not returned */
    assert_int_equal(err.column, 0);
    assert_null(build(response, "{\"response\":\"r\"}", &rc, &err));
    assert_int_equal(rc, AW_EVALID);
    assert_string_equal(err.message, "missing_element: /llmResponse/analysis: required element <analysis> is missing");
    assert_null(build(response, "{\"response\":\"\",\"analysis\":{\"summaryUpdate\":\"\"}}", &rc, &err));
    assert_int_equal(rc, AW_EVALID);
    assert_string_equal(err.message, "empty_text: /llmResponse/response: response must not be empty");
    assert_null(build(query, "{\"userMessage\":\"m\",\"context\":{\"topicId\":\"t\",\"messageCount\":-2}}", &rc, &err));
    assert_int_equal(rc, AW_EVALID);
    /* JSON of the wrong shape */
    assert_null(build(response, "[1,2]", &rc, &err));
    assert_int_equal(rc, AW_ETYPE);
    assert_string_equal(err.message, "/llmResponse: expected an object");
    assert_null(build(response, "{\"response\":{\"x\":1},\"analysis\":{}}", &rc, &err));
    assert_int_equal(rc, AW_ETYPE);
    assert_string_equal(err.message, "/llmResponse/response: expected a string, number or boolean");
    assert_null(build(response, "{\"response\":\"r\",\"analysis\":{\"subject\":[{\"name\":null}]}}", &rc, &err));
    assert_int_equal(rc, AW_ETYPE);
    assert_string_equal(err.message, "/llmResponse/analysis/subject[1]/@name: expected a string, number or boolean");
    assert_null(build(query, "{\"userMessage\":\"m\",\"context\":{\"topicId\":\"t\",\"messageCount\":1,\"activeSubjects\":[{}]}}",
                      &rc, &err));
    assert_int_equal(rc, AW_ETYPE);
    assert_string_equal(err.message, "/llmQuery/context/activeSubjects: list items must be strings or numbers");
    /* build appends to what the buffer holds and leaves it untouched on failure */
    aw_json_doc *d = NULL;
    assert_int_equal(aw_json_parse("{\"response\":\"r\"}", 16, NULL, &d, NULL), 0);
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "keep");
    assert_int_equal(aw_contract_build(response, aw_json_doc_root(d), &b, NULL), AW_EVALID);
    assert_string_equal(b.data, "keep");
    aw_json_doc_free(d);
    assert_int_equal(aw_json_parse("{\"response\":\"r\",\"analysis\":{\"summaryUpdate\":\"s\"}}", 49, NULL, &d, NULL), 0);
    assert_int_equal(aw_contract_build(response, aw_json_doc_root(d), &b, NULL), 0);
    assert_string_equal(b.data, "keep<llmResponse>\n  <response>r</response>\n  <analysis>\n"
                                "    <summaryUpdate>s</summaryUpdate>\n  </analysis>\n</llmResponse>");
    aw_json_doc_free(d);
    aw_buf_free(&b);
    /* bad arguments */
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_contract_build(NULL, NULL, &b, &err), AW_EINVAL);
    aw_buf_free(&b);
}

/* ---- the prompt ------------------------------------------------------------------ */

/* The template of the seed's section 7, taken from the seed file itself. */
static char *seed_template(void) {
    glob_t g;
    if (glob(AW_SHARED_DIR "/seeds/004_*.txt", 0, NULL, &g) != 0 || g.gl_pathc != 1) {
        globfree(&g);
        return NULL;
    }
    size_t len;
    char *seed = aw_test_read_file(g.gl_pathv[0], &len);
    globfree(&g);
    if (!seed) return NULL;
    const char *mark = "LLMs must be instructed with this format in their system prompt:\n\n```\n";
    char *start = strstr(seed, mark);
    char *end = start ? strstr(start + strlen(mark), "\n```") : NULL;
    char *out = NULL;
    if (end) {
        start += strlen(mark);
        out = strndup(start, (size_t)(end - start));
    }
    free(seed);
    return out;
}

/* The seed's section 7, copied by hand; checked against the seed file too
 * when the shared directory is there. */
static const char seed_prompt[] =
    "You are an AI assistant. Always respond using this XML format:\n"
    "\n"
    "<llmResponse>\n"
    "  <response>[Your natural language response here]</response>\n"
    "  <analysis>\n"
    "    <subject name=\"topic-name\" description=\"brief explanation\" isNew=\"true|false\">\n"
    "      <keyword term=\"keyword-term\" confidence=\"0.8\" />\n"
    "      <!-- Include 3-7 keywords per subject -->\n"
    "    </subject>\n"
    "    <!-- Include 1-3 subjects when relevant -->\n"
    "    <summaryUpdate>[Brief 2-3 sentence summary of this exchange]</summaryUpdate>\n"
    "  </analysis>\n"
    "</llmResponse>\n"
    "\n"
    "Rules:\n"
    "- Always extract 1-3 subjects (main themes)\n"
    "- Mark isNew=\"true\" for new subjects, isNew=\"false\" for continuing existing subjects\n"
    "- Extract 3-7 keywords per subject with confidence 0.6-1.0\n"
    "- Provide incremental summary (focus on new information)\n"
    "- Use lowercase, hyphenated terms for names (e.g., \"college-savings\")";

static void test_prompt(void **state) {
    (void)state;
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_contract_prompt(response, &b), 0);
    assert_string_equal(b.data, seed_prompt);
    char *from_seed = seed_template();
    if (from_seed) assert_string_equal(b.data, from_seed);
    else print_message("seed 004 not found under " AW_SHARED_DIR "; compared with the copy only\n");
    free(from_seed);
    /* llmQuery has no prompt of its own: it is generated from the contract */
    aw_buf_clear(&b);
    assert_int_equal(aw_contract_prompt(query, &b), 0);
    assert_string_equal(b.data,
                        "You are an AI assistant. Always respond using this XML format:\n"
                        "\n"
                        "<llmQuery>\n"
                        "  <userMessage>[The user&apos;s natural language message]</userMessage>\n"
                        "  <context topicId=\"Topic/conversation identifier\" messageCount=\"integer\">\n"
                        "    <activeSubjects>[Comma-separated list of current subject names]</activeSubjects>\n"
                        "    <recentKeywords>[Comma-separated list of recent keyword terms]</recentKeywords>\n"
                        "  </context>\n"
                        "</llmQuery>\n"
                        "\n"
                        "Rules:\n"
                        "- Escape <, > and & in text as &lt;, &gt; and &amp;\n"
                        "- <llmQuery> holds exactly one <userMessage>\n"
                        "- <userMessage> must not be empty\n"
                        "- the text of <userMessage> has at most 10000 characters\n"
                        "- <llmQuery> holds exactly one <context>\n"
                        "- <context> always has topicId\n"
                        "- <context> always has messageCount\n"
                        "- messageCount of <context> is a whole number of at least 0\n"
                        "- <context> holds 0 to 1 <activeSubjects>\n"
                        "- the text of <activeSubjects> lists at most 20 comma-separated items\n"
                        "- <context> holds 0 to 1 <recentKeywords>\n"
                        "- the text of <recentKeywords> lists at most 50 comma-separated items");
    /* the prompt appends */
    assert_int_equal(aw_contract_prompt(query, &b), 0);
    assert_non_null(strstr(b.data, "50 comma-separated itemsYou are"));
    aw_buf_free(&b);
    assert_int_equal(aw_contract_prompt(NULL, &b), AW_EINVAL);
}

/* ---- the API's edges ------------------------------------------------------------- */

static void test_api_edges(void **state) {
    (void)state;
    aw_contract *c = (aw_contract *)1;
    aw_error err;
    assert_int_equal(aw_contract_builtin("llmAnswer", NULL, &c, &err), AW_EINVAL);
    assert_null(c);
    assert_string_equal(err.message, "no built-in contract named 'llmAnswer' (try llmQuery or llmResponse)");
    assert_int_equal(aw_contract_builtin(NULL, NULL, &c, &err), AW_EINVAL);
    assert_null(aw_contract_name(NULL));
    assert_null(aw_contract_version(NULL));
    aw_contract_free(NULL);
    aw_contract_issue *is = NULL;
    size_t n = 0;
    assert_int_equal(aw_contract_validate(NULL, "", 0, NULL, &is, &n, &err), AW_EINVAL);
    assert_int_equal(aw_contract_validate(response, NULL, 3, NULL, &is, &n, &err), AW_EINVAL);
    assert_int_equal(aw_contract_validate(response, "", 0, NULL, NULL, &n, &err), AW_EINVAL);
    aw_json_doc *d = NULL;
    assert_int_equal(aw_contract_parse(response, "", 0, NULL, NULL, &err), AW_EINVAL);
    /* NULL options and a NULL error are fine */
    assert_int_equal(aw_contract_validate(response, seed_response, strlen(seed_response), NULL, &is, &n, NULL), 0);
    assert_int_equal(aw_contract_parse(response, seed_response, strlen(seed_response), NULL, &d, NULL), 0);
    aw_json_doc_free(d);
    assert_int_equal(aw_contract_validate(response, "<x/>", 4, NULL, &is, &n, NULL), AW_EVALID);
    assert_int_equal(n, 1);
    aw_free(NULL, is);
    assert_int_equal(aw_contract_parse(response, "<x/>", 4, NULL, &d, NULL), AW_EVALID);
    assert_null(d);
    /* one contract, many documents: nothing is kept between calls */
    for (int i = 0; i < 3; i++) {
        char *s = parse(response, seed_response);
        free(s);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid_query),
        cmocka_unit_test(test_parse_valid_response),
        cmocka_unit_test(test_reject_malformed),
        cmocka_unit_test(test_reject_missing_required),
        cmocka_unit_test(test_reject_invalid_attribute_types),
        cmocka_unit_test(test_confidence_range),
        cmocka_unit_test(test_empty_optional_elements),
        cmocka_unit_test(test_escaping_in_build),
        cmocka_unit_test(test_utf8_preserved),
        cmocka_unit_test(test_arrays_always),
        cmocka_unit_test(test_is_new),
        cmocka_unit_test(test_boundary_counts),
        cmocka_unit_test(test_message_length_in_characters),
        cmocka_unit_test(test_message_count),
        cmocka_unit_test(test_list_limits),
        cmocka_unit_test(test_response_rules),
        cmocka_unit_test(test_every_issue_listed),
        cmocka_unit_test(test_cdata),
        cmocka_unit_test(test_bom_and_encoding),
        cmocka_unit_test(test_positions_are_expats),
        cmocka_unit_test(test_unknown_lenient_and_strict),
        cmocka_unit_test(test_build),
        cmocka_unit_test(test_prompt),
        cmocka_unit_test(test_api_edges),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
