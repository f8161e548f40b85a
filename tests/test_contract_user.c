/* User-defined contracts: the JSON format of docs/contracts.md loaded from a
 * file and used end to end (validate, parse, build, prompt), every type, the
 * JSON mapping, the format-version rule and the loader's refusals. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "testutil.h"

/* A support-ticket contract using every type and cardinality. */
static const char ticket_json[] =
    "{\n"
    "  \"format\": \"1.0\",\n"
    "  \"name\": \"ticket\",\n"
    "  \"version\": \"2.1.0\",\n"
    "  \"description\": \"Support ticket triage by a model\",\n"
    "  \"root\": {\n"
    "    \"name\": \"ticket\",\n"
    "    \"attributes\": [\n"
    "      {\"name\": \"id\", \"type\": \"integer\", \"min\": 1, \"required\": true, \"description\": \"ticket number\"},\n"
    "      {\"name\": \"priority\", \"type\": \"enum\", \"values\": [\"low\", \"normal\", \"high\"], \"required\": true},\n"
    "      {\"name\": \"tags\", \"type\": \"list\", \"maxItems\": 3, \"description\": \"comma-separated tags\"}\n"
    "    ],\n"
    "    \"children\": [\n"
    "      {\"name\": \"title\", \"text\": {\"required\": true, \"maxLength\": 40}, \"description\": \"one-line summary\"},\n"
    "      {\"name\": \"score\", \"min\": 0, \"max\": 1, \"text\": {\"type\": \"decimal\", \"min\": -1, \"max\": 1}},\n"
    "      {\"name\": \"escalate\", \"min\": 0, \"text\": {\"type\": \"boolean\"}},\n"
    "      {\"name\": \"step\", \"min\": 1, \"max\": \"unbounded\",\n"
    "       \"attributes\": [{\"name\": \"n\", \"type\": \"integer\", \"min\": 1, \"max\": 99, \"required\": true}],\n"
    "       \"text\": {\"required\": true}, \"description\": \"what to do\"},\n"
    "      {\"name\": \"owner\", \"min\": 0, \"max\": 2, \"attributes\": [{\"name\": \"team\", \"type\": \"string\", \"required\": true}]}\n"
    "    ]\n"
    "  }\n"
    "}\n";

static const char ticket_xml[] = "<ticket id=\"7\" priority=\"high\" tags=\"login, sso\">\n"
                                 "  <title>Users cannot log in</title>\n"
                                 "  <score>-0.5</score>\n"
                                 "  <escalate>true</escalate>\n"
                                 "  <step n=\"1\">Reproduce with a test account</step>\n"
                                 "  <step n=\"2\">Check the SSO certificate</step>\n"
                                 "  <owner team=\"identity\" />\n"
                                 "</ticket>";

static const char ticket_parsed[] =
    "{\"id\":7,\"priority\":\"high\",\"tags\":[\"login\",\"sso\"],\"title\":\"Users cannot log in\",\"score\":-0.5,"
    "\"escalate\":true,\"step\":[{\"n\":1,\"#text\":\"Reproduce with a test account\"},{\"n\":2,\"#text\":\"Check the "
    "SSO certificate\"}],\"owner\":[{\"team\":\"identity\"}]}";

static aw_contract *load_text(const char *json, size_t len) {
    aw_contract *c = NULL;
    aw_error err;
    if (aw_contract_load(json, len, NULL, &c, &err)) fail_msg("load: %s", err.message);
    return c;
}

/* Write the contract to a file and load it from there, as a user would. */
static aw_contract *load_via_file(const char *json) {
    char path[] = "/tmp/aw_contract_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    size_t len;
    char *text = aw_test_read_file(path, &len);
    unlink(path);
    assert_non_null(text);
    aw_contract *c = load_text(text, len);
    free(text);
    return c;
}

static char *to_json(const aw_json_value *v) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_json_write(v, NULL, &b, NULL), 0);
    return b.data;
}

static char *parse_str(const aw_contract *c, const char *xml) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_contract_parse(c, xml, strlen(xml), NULL, &doc, &err)) fail_msg("parse: %s", err.message);
    char *s = to_json(aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    return s;
}

static char *build_str(const aw_contract *c, const char *json, int *rc, aw_error *err) {
    aw_json_doc *d = NULL;
    if (aw_json_parse(json, strlen(json), NULL, &d, err)) fail_msg("bad fixture: %s", err->message);
    aw_buf b;
    aw_buf_init(&b, NULL);
    *rc = aw_contract_build(c, aw_json_doc_root(d), &b, err);
    aw_json_doc_free(d);
    if (*rc) {
        aw_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static size_t issues(const aw_contract *c, const char *xml, bool strict, aw_contract_issue **out) {
    aw_contract_options o = {0};
    o.strict = strict;
    size_t n = 0;
    int rc = aw_contract_validate(c, xml, strlen(xml), &o, out, &n, NULL);
    assert_int_equal(rc, n ? AW_EVALID : 0);
    return n;
}

/* ---- end to end ------------------------------------------------------------------ */

static void test_end_to_end(void **state) {
    (void)state;
    aw_contract *c = load_via_file(ticket_json);
    assert_string_equal(aw_contract_name(c), "ticket");
    assert_string_equal(aw_contract_version(c), "2.1.0");
    /* validate */
    aw_contract_issue *is;
    assert_int_equal(issues(c, ticket_xml, true, &is), 0);
    /* parse */
    char *json = parse_str(c, ticket_xml);
    assert_string_equal(json, ticket_parsed);
    /* build gives back the document, byte for byte */
    int rc;
    aw_error err;
    char *xml = build_str(c, json, &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    assert_string_equal(xml, ticket_xml);
    free(xml);
    free(json);
    /* prompt: generated from the contract */
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_contract_prompt(c, &b), 0);
    assert_string_equal(b.data, "You are an AI assistant. Always respond using this XML format:\n"
                                "\n"
                                "<ticket id=\"integer\" priority=\"low|normal|high\" tags=\"comma-separated tags\">\n"
                                "  <title>[one-line summary]</title>\n"
                                "  <score>[-1-1]</score>\n"
                                "  <escalate>[true|false]</escalate>\n"
                                "  <step n=\"1-99\">[what to do]</step>\n"
                                "  <!-- Repeat <step> 1 or more times -->\n"
                                "  <owner team=\"team\" />\n"
                                "  <!-- Repeat <owner> 0-2 times -->\n"
                                "</ticket>\n"
                                "\n"
                                "Rules:\n"
                                "- Escape <, > and & in text as &lt;, &gt; and &amp;\n"
                                "- <ticket> always has id\n"
                                "- id of <ticket> is a whole number of at least 1\n"
                                "- <ticket> always has priority\n"
                                "- tags of <ticket> lists at most 3 comma-separated items\n"
                                "- <ticket> holds exactly one <title>\n"
                                "- <title> must not be empty\n"
                                "- the text of <title> has at most 40 characters\n"
                                "- <ticket> holds 0 to 1 <score>\n"
                                "- the text of <score> is a number from -1 to 1\n"
                                "- <ticket> holds 0 to 1 <escalate>\n"
                                "- <ticket> holds at least 1 <step>\n"
                                "- <step> always has n\n"
                                "- n of <step> is a whole number from 1 to 99\n"
                                "- <step> must not be empty\n"
                                "- <ticket> holds 0 to 2 <owner>\n"
                                "- <owner> always has team");
    aw_buf_free(&b);
    aw_contract_free(c);
}

static void test_user_rules(void **state) {
    (void)state;
    aw_contract *c = load_text(ticket_json, sizeof ticket_json - 1);
    const char *bad = "<ticket id=\"0\" priority=\"urgent\" tags=\"a,b,c,d\" color=\"red\">\n"
                      "  <title>This title is much longer than forty characters, really</title>\n"
                      "  <score>1.5</score>\n"
                      "  <escalate>yes</escalate>\n"
                      "  <owner/>\n"
                      "  <owner team=\"a\"/>\n"
                      "  <owner team=\"b\"/>\n"
                      "  <note>extra</note>\n"
                      "</ticket>";
    aw_contract_issue *is;
    size_t n = issues(c, bad, false, &is);
    struct { aw_contract_code code; const char *path; size_t line; const char *message; } want[] = {
        {AW_CONTRACT_BAD_VALUE, "/ticket/@id", 1, "must be at least 1, not 0"},
        {AW_CONTRACT_BAD_VALUE, "/ticket/@priority", 1, "must be one of the listed values, not \"urgent\""},
        {AW_CONTRACT_TOO_MANY_ITEMS, "/ticket/@tags", 1, "has 4 items; at most 3 are allowed"},
        {AW_CONTRACT_TEXT_TOO_LONG, "/ticket/title", 2, "text is 55 characters long; at most 40 are allowed"},
        {AW_CONTRACT_BAD_VALUE, "/ticket/score", 3, "text must be from -1 to 1, not 1.5"},
        {AW_CONTRACT_BAD_VALUE, "/ticket/escalate", 4, "text must be \"true\" or \"false\", not \"yes\""},
        {AW_CONTRACT_MISSING_ATTRIBUTE, "/ticket/owner[1]/@team", 5, "required attribute team is missing"},
        {AW_CONTRACT_TOO_MANY, "/ticket/owner[3]", 7, "<owner> appears more than 2 times in <ticket>"},
        {AW_CONTRACT_MISSING_ELEMENT, "/ticket/step", 1, "required element <step> is missing"},
    };
    assert_int_equal(n, sizeof want / sizeof *want);
    for (size_t i = 0; i < n; i++) {
        if (is[i].code != want[i].code || strcmp(is[i].path, want[i].path) || is[i].line != want[i].line ||
            strcmp(is[i].message, want[i].message))
            fail_msg("issue %zu: %s %s line %zu: %s", i, aw_contract_code_name(is[i].code), is[i].path, is[i].line,
                     is[i].message);
    }
    free(is);
    /* strict adds the unknowns */
    n = issues(c, bad, true, &is);
    assert_int_equal(n, 11);
    assert_string_equal(is[3].path, "/ticket/@color");
    assert_string_equal(is[9].path, "/ticket/note");
    assert_string_equal(is[10].path, "/ticket/step");
    free(is);
    /* unbounded: many steps are fine; an integer out of its range is not */
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "<ticket id=\"1\" priority=\"low\"><title>t</title>");
    for (int i = 1; i <= 99; i++) aw_buf_printf(&b, "<step n=\"%d\">s</step>", i);
    aw_buf_append_str(&b, "</ticket>");
    assert_int_equal(issues(c, b.data, true, &is), 0);
    b.len -= strlen("</ticket>");
    aw_buf_append_str(&b, "<step n=\"100\">s</step><step n=\"1\"> </step></ticket>");
    n = issues(c, b.data, true, &is);
    assert_int_equal(n, 2);
    assert_string_equal(is[0].path, "/ticket/step[100]/@n");
    assert_string_equal(is[0].message, "must be from 1 to 99, not 100");
    assert_string_equal(is[1].path, "/ticket/step[101]");
    assert_int_equal(is[1].code, AW_CONTRACT_EMPTY_TEXT);
    free(is);
    aw_buf_free(&b);
    aw_contract_free(c);
}

/* The JSON mapping: arrays for repeatable children, typed text, "#text"
 * for text beside attributes, null for empty typed text, absent optional
 * elements and attributes left out. */
static void test_mapping(void **state) {
    (void)state;
    aw_contract *c = load_text(ticket_json, sizeof ticket_json - 1);
    char *s = parse_str(c, "<ticket id=\"3\" priority=\"low\"><title> t </title><step n=\"1\">go</step></ticket>");
    assert_string_equal(s, "{\"id\":3,\"priority\":\"low\",\"title\":\"t\",\"step\":[{\"n\":1,\"#text\":\"go\"}],\"owner\":[]}");
    free(s);
    s = parse_str(c, "<ticket id=\"3\" priority=\"low\" tags=\"\"><title>t</title><score/><escalate> </escalate>"
                     "<step n=\"1\">go</step></ticket>");
    assert_string_equal(s, "{\"id\":3,\"priority\":\"low\",\"tags\":[],\"title\":\"t\",\"score\":null,\"escalate\":null,"
                           "\"step\":[{\"n\":1,\"#text\":\"go\"}],\"owner\":[]}");
    /* and null builds back to an empty element */
    int rc;
    aw_error err;
    char *xml = build_str(c, s, &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    assert_non_null(strstr(xml, "  <score></score>\n  <escalate></escalate>\n"));
    free(xml);
    free(s);
    s = parse_str(c, "<ticket id=\"3\" priority=\"low\"><title>t</title><escalate>false</escalate><step n=\"1\">go</step></ticket>");
    assert_non_null(strstr(s, "\"escalate\":false"));
    free(s);
    aw_contract_free(c);

    /* a root that is only text maps to its typed value */
    static const char answer[] = "{\"format\":\"1\",\"root\":{\"name\":\"answer\",\"text\":{\"required\":true,\"type\":\"integer\"}}}";
    c = load_text(answer, sizeof answer - 1);
    assert_string_equal(aw_contract_name(c), "answer"); /* the root's name when "name" is absent */
    assert_string_equal(aw_contract_version(c), "1.0.0");
    s = parse_str(c, "<answer> 42 </answer>");
    assert_string_equal(s, "42");
    free(s);
    xml = build_str(c, "42", &rc, &err);
    assert_string_equal(xml, "<answer>42</answer>");
    free(xml);
    aw_contract_free(c);

    /* text beside children: "#text" again */
    static const char mixed[] =
        "{\"format\":\"1.0\",\"root\":{\"name\":\"doc\",\"text\":{\"type\":\"list\"},"
        "\"children\":[{\"name\":\"flag\",\"min\":0}]}}";
    c = load_text(mixed, sizeof mixed - 1);
    s = parse_str(c, "<doc>a, b<flag/></doc>");
    assert_string_equal(s, "{\"flag\":\"\",\"#text\":[\"a\",\"b\"]}");
    xml = build_str(c, s, &rc, &err);
    assert_string_equal(xml, "<doc>\n  a, b\n  <flag></flag>\n</doc>");
    free(xml);
    free(s);
    aw_contract_free(c);
}

static void test_enum_and_lists(void **state) {
    (void)state;
    static const char json[] =
        "{\"format\":\"1.0\",\"name\":\"vote\",\"prompt\":\"Vote with <vote choice=\\\"yes|no\\\"/>.\","
        "\"root\":{\"name\":\"vote\",\"attributes\":[{\"name\":\"choice\",\"type\":\"enum\",\"values\":[\"yes\",\"no\",\"a&b\"],"
        "\"required\":true},{\"name\":\"weight\",\"type\":\"decimal\",\"max\":10},{\"name\":\"who\",\"type\":\"list\"}],"
        "\"children\":[{\"name\":\"why\",\"min\":0,\"text\":{\"maxLength\":5,\"type\":\"enum\",\"values\":[\"cost\",\"time\"]}}]}}";
    aw_contract *c = load_text(json, sizeof json - 1);
    char *s = parse_str(c, "<vote choice=\"a&amp;b\" weight=\"-3\" who=\" x , y,z \"><why>time</why></vote>");
    assert_string_equal(s, "{\"choice\":\"a&b\",\"weight\":-3,\"who\":[\"x\",\"y\",\"z\"],\"why\":\"time\"}");
    free(s);
    aw_contract_issue *is;
    /* enums compare exactly, after trimming */
    assert_int_equal(issues(c, "<vote choice=\" yes \"/>", false, &is), 0);
    assert_int_equal(issues(c, "<vote choice=\"Yes\" weight=\"10.5\"><why>money</why></vote>", false, &is), 3);
    assert_string_equal(is[0].message, "must be one of the listed values, not \"Yes\"");
    assert_string_equal(is[1].message, "must be at most 10, not 10.5");
    assert_string_equal(is[2].message, "text must be one of the listed values, not \"money\"");
    free(is);
    /* a prompt given in the contract is used as it is */
    aw_buf b;
    aw_buf_init(&b, NULL);
    assert_int_equal(aw_contract_prompt(c, &b), 0);
    assert_string_equal(b.data, "Vote with <vote choice=\"yes|no\"/>.");
    aw_buf_free(&b);
    /* build writes lists with ", " and numbers in JavaScript's form */
    int rc;
    aw_error err;
    char *xml = build_str(c, "{\"choice\":\"no\",\"weight\":2.50,\"who\":[\"a\",3]}", &rc, &err);
    assert_string_equal(xml, "<vote choice=\"no\" weight=\"2.5\" who=\"a, 3\" />");
    free(xml);
    aw_contract_free(c);
}

/* ---- versions ------------------------------------------------------------------ */

static int load_err(const char *json, aw_error *err) {
    aw_contract *c = (aw_contract *)1;
    int rc = aw_contract_load(json, strlen(json), NULL, &c, err);
    if (rc) assert_null(c);
    aw_contract_free(rc ? NULL : c);
    return rc;
}

static void expect_load_error(const char *json, int code, const char *message) {
    aw_error err;
    int rc = load_err(json, &err);
    if (rc != code) fail_msg("load of %s returned %d (%s), want %d", json, rc, err.message, code);
    if (message) assert_string_equal(err.message, message);
}

static void test_format_version(void **state) {
    (void)state;
    aw_error err;
    /* same major: accepted, whatever the minor */
    assert_int_equal(load_err("{\"format\":\"1\",\"root\":{\"name\":\"a\"}}", &err), 0);
    assert_int_equal(load_err("{\"format\":\"1.0\",\"root\":{\"name\":\"a\"}}", &err), 0);
    assert_int_equal(load_err("{\"format\":\"1.9.3\",\"root\":{\"name\":\"a\"}}", &err), 0);
    /* another major: refused */
    expect_load_error("{\"format\":\"2.0\",\"root\":{\"name\":\"a\"}}", AW_EINVAL,
                      "contract format version 2.0 is not supported (this agentwire reads 1.x)");
    expect_load_error("{\"format\":\"0.9\",\"root\":{\"name\":\"a\"}}", AW_EINVAL,
                      "contract format version 0.9 is not supported (this agentwire reads 1.x)");
    expect_load_error("{\"format\":\"10.0\",\"root\":{\"name\":\"a\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"v1\",\"root\":{\"name\":\"a\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"\",\"root\":{\"name\":\"a\"}}", AW_EINVAL, NULL);
    /* missing, or not a string */
    expect_load_error("{\"root\":{\"name\":\"a\"}}", AW_EINVAL,
                      "contract document: 'format' (the contract format version, \"1.0\") is missing");
    expect_load_error("{\"format\":1,\"root\":{\"name\":\"a\"}}", AW_EINVAL, NULL);
    /* the contract's own version is free text */
    const char *v7 = "{\"format\":\"1.0\",\"version\":\"7.0.0-beta\",\"root\":{\"name\":\"a\"}}";
    aw_contract *c = load_text(v7, strlen(v7));
    assert_string_equal(aw_contract_version(c), "7.0.0-beta");
    aw_contract_free(c);
}

static void test_loader_refusals(void **state) {
    (void)state;
    expect_load_error("", AW_ESYNTAX, NULL);
    expect_load_error("{\"format\":\"1.0\",", AW_ESYNTAX, NULL);
    expect_load_error("[]", AW_EINVAL, "contract document: must be a JSON object");
    expect_load_error("{\"format\":\"1.0\"}", AW_EINVAL, "contract element: must be an object");
    expect_load_error("{\"format\":\"1.0\",\"root\":[]}", AW_EINVAL, "contract element: must be an object");
    expect_load_error("{\"format\":\"1.0\",\"root\":{}}", AW_EINVAL, "contract element: 'name' must be an XML element name");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a b\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"1a\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a>\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\\u0000b\"}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"#text\"}]}}", AW_EINVAL,
                      "contract element <a>: each attribute needs a 'name' that is an XML attribute name");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"max\":2}}", AW_EINVAL,
                      "contract element <a>: the root occurs exactly once");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"min\":0}}", AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"min\":3,\"max\":2}]}}",
                      AW_EINVAL, "contract element <b>: 'min' is above 'max'");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"min\":\"unbounded\"}]}}",
                      AW_EINVAL, "contract element <b>: 'min' must be a number");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"max\":-1}]}}",
                      AW_EINVAL, "contract element <b>: 'max' must be a non-negative integer");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"max\":1.5}]}}",
                      AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[{\"name\":\"b\"},{\"name\":\"b\"}]}}",
                      AW_EINVAL, "contract element <a>: declares a child element twice");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"b\"}],"
                      "\"children\":[{\"name\":\"b\"}]}}",
                      AW_EINVAL, "contract element <a>: has an attribute and a child element of the same name");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\"},{\"name\":\"x\"}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': is declared twice");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":{}}}", AW_EINVAL,
                      "contract element <a>: 'attributes' must be an array");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[1]}}", AW_EINVAL,
                      "contract element <a>: each attribute must be an object");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":3}}", AW_EINVAL,
                      "contract element <a>: 'children' must be an array");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"text\":true}}", AW_EINVAL,
                      "contract element <a>: 'text' must be an object");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"enumeration\"}]}}",
                      AW_EINVAL,
                      "contract element <a> attribute 'x': 'type' must be string, integer, decimal, boolean, enum or list");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":3}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': 'type' must be a string");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\"}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': an enum needs a non-empty 'values' array");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\",\"values\":[]}]}}",
                      AW_EINVAL, NULL);
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"enum\",\"values\":[1]}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': enum 'values' must be strings");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"decimal\",\"min\":1,\"max\":0}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': 'min' is above 'max'");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"type\":\"integer\",\"min\":\"0\"}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': 'min' must be a number");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"attributes\":[{\"name\":\"x\",\"required\":\"yes\"}]}}",
                      AW_EINVAL, "contract element <a> attribute 'x': 'required' must be true or false");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"text\":{\"maxLength\":-1}}}", AW_EINVAL,
                      "contract element <a>: 'maxLength' must be a non-negative integer");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"text\":{\"maxItems\":\"many\"}}}", AW_EINVAL,
                      "contract element <a>: 'maxItems' must be a non-negative integer");
    expect_load_error("{\"format\":\"1.0\",\"version\":2,\"root\":{\"name\":\"a\"}}", AW_EINVAL,
                      "contract document: 'version' must be a string");
    expect_load_error("{\"format\":\"1.0\",\"prompt\":[],\"root\":{\"name\":\"a\"}}", AW_EINVAL,
                      "contract document: 'prompt' must be a string");
    expect_load_error("{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"description\":5}}", AW_EINVAL,
                      "contract element <a>: 'description' must be a string");
    /* 64 children are fine, 65 are not */
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_buf_append_str(&b, "{\"format\":\"1.0\",\"root\":{\"name\":\"a\",\"children\":[");
    for (int i = 0; i < 64; i++) aw_buf_printf(&b, "%s{\"name\":\"c%d\",\"min\":0}", i ? "," : "", i);
    aw_buf_append_str(&b, "]}}");
    expect_load_error(b.data, 0, NULL);
    b.len -= 3;
    aw_buf_append_str(&b, ",{\"name\":\"c64\"}]}}");
    expect_load_error(b.data, AW_EINVAL, "contract element <a>: declares more than 64 child elements");
    /* 33 levels of elements are fine, 34 are not */
    aw_buf_clear(&b);
    aw_buf_append_str(&b, "{\"format\":\"1.0\",\"root\":");
    for (int i = 0; i < 33; i++) aw_buf_printf(&b, "{\"name\":\"e%d\",\"children\":[", i);
    aw_buf_append_str(&b, "{\"name\":\"leaf\"}");
    for (int i = 0; i < 33; i++) aw_buf_append_str(&b, "]}");
    aw_buf_append_str(&b, "}");
    expect_load_error(b.data, AW_EINVAL, "contract element: nesting deeper than 32 levels");
    aw_buf_clear(&b);
    aw_buf_append_str(&b, "{\"format\":\"1.0\",\"root\":");
    for (int i = 0; i < 32; i++) aw_buf_printf(&b, "{\"name\":\"e%d\",\"children\":[", i);
    aw_buf_append_str(&b, "{\"name\":\"leaf\"}");
    for (int i = 0; i < 32; i++) aw_buf_append_str(&b, "]}");
    aw_buf_append_str(&b, "}");
    expect_load_error(b.data, 0, NULL);
    aw_buf_free(&b);
    /* unknown keys are ignored; names may hold '-', '.', ':' and non-ASCII */
    expect_load_error("{\"format\":\"1.0\",\"author\":\"me\",\"root\":{\"name\":\"ns:r\\u00e9-1.x\",\"color\":\"red\","
                      "\"attributes\":[{\"name\":\"_a\",\"unit\":\"cm\"}]}}",
                      0, NULL);
    aw_contract *c = (aw_contract *)1;
    assert_int_equal(aw_contract_load(NULL, 0, NULL, NULL, NULL), AW_EINVAL);
    assert_int_equal(aw_contract_load("{}", 2, NULL, &c, NULL), AW_EINVAL);
    assert_null(c);
}

/* Deep but legal: a contract nested 33 levels validates, parses and builds
 * a document of the same depth (under the document limit of 64). */
static void test_deep_contract(void **state) {
    (void)state;
    aw_buf b, x;
    aw_buf_init(&b, NULL);
    aw_buf_init(&x, NULL);
    aw_buf_append_str(&b, "{\"format\":\"1.0\",\"root\":");
    for (int i = 0; i < 32; i++) {
        aw_buf_printf(&b, "{\"name\":\"e%d\",\"children\":[", i);
        aw_buf_printf(&x, "<e%d>", i);
    }
    aw_buf_append_str(&b, "{\"name\":\"leaf\",\"text\":{\"type\":\"integer\"}}");
    aw_buf_append_str(&x, "<leaf>5</leaf>");
    for (int i = 31; i >= 0; i--) {
        aw_buf_append_str(&b, "]}");
        aw_buf_printf(&x, "</e%d>", i);
    }
    aw_buf_append_str(&b, "}");
    aw_contract *c = load_text(b.data, b.len);
    char *s = parse_str(c, x.data);
    assert_non_null(strstr(s, "{\"leaf\":5}"));
    int rc;
    aw_error err;
    char *xml = build_str(c, s, &rc, &err);
    if (!xml) fail_msg("build: %s", err.message);
    free(xml);
    free(s);
    aw_buf prompt;
    aw_buf_init(&prompt, NULL);
    assert_int_equal(aw_contract_prompt(c, &prompt), 0);
    assert_non_null(strstr(prompt.data, "<leaf>[integer]</leaf>"));
    aw_buf_free(&prompt);
    aw_contract_free(c);
    aw_buf_free(&b);
    aw_buf_free(&x);
}

/* The built-in contracts are the files in contracts/, loaded by the same
 * code: loading the files gives the same behaviour. */
static void test_builtins_are_the_files(void **state) {
    (void)state;
    const char *names[] = {"llmQuery", "llmResponse"};
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/contracts/%s.json", AW_SOURCE_DIR, names[i]);
        size_t len;
        char *text = aw_test_read_file(path, &len);
        assert_non_null(text);
        aw_contract *file = load_text(text, len), *builtin = NULL;
        free(text);
        assert_int_equal(aw_contract_builtin(names[i], NULL, &builtin, NULL), 0);
        assert_string_equal(aw_contract_name(file), aw_contract_name(builtin));
        assert_string_equal(aw_contract_version(file), aw_contract_version(builtin));
        aw_buf p1, p2;
        aw_buf_init(&p1, NULL);
        aw_buf_init(&p2, NULL);
        assert_int_equal(aw_contract_prompt(file, &p1), 0);
        assert_int_equal(aw_contract_prompt(builtin, &p2), 0);
        assert_string_equal(p1.data, p2.data);
        aw_buf_free(&p1);
        aw_buf_free(&p2);
        aw_contract_free(file);
        aw_contract_free(builtin);
    }
}

/* Mixed content: an element's own text is the concatenation of its pieces
 * around its children, at every level. The tree leaves an element's text
 * in place when nothing above it has text pending, and copies it out
 * otherwise (contract_doc.c); both ways must give the same strings. */
static void test_mixed_content(void **state) {
    (void)state;
    static const char json[] =
        "{\"format\": \"1.0\", \"root\": {\"name\": \"a\", \"text\": {\"required\": false},"
        " \"attributes\": [{\"name\": \"x\", \"type\": \"string\"}], \"children\": ["
        " {\"name\": \"b\", \"min\": 0, \"max\": \"unbounded\", \"text\": {\"required\": false}, \"children\": ["
        "  {\"name\": \"c\", \"min\": 0, \"max\": \"unbounded\", \"text\": {\"type\": \"string\"},"
        "   \"children\": [{\"name\": \"d\", \"min\": 0, \"max\": 3}]}]},"
        " {\"name\": \"e\", \"min\": 0, \"max\": 1},"
        " {\"name\": \"n\", \"min\": 0, \"max\": 1, \"text\": {\"type\": \"decimal\"}}]}}";
    aw_contract *c = load_text(json, strlen(json));
    struct { const char *xml, *want; } cases[] = {
        {"<a>hello <b>in b <c>cc</c> after c</b> tail <e/> end</a>",
         "{\"b\":[{\"c\":[{\"d\":[],\"#text\":\"cc\"}],\"#text\":\"in b  after c\"}],\"e\":\"\",\"#text\":\"hello  tail  end\"}"},
        {"<a x=\" v \">t1<b>b1<c>c1<d>dd</d>c2</c>b2</b>t2<n> 0.5 </n>t3</a>",
         "{\"x\":\" v \",\"b\":[{\"c\":[{\"d\":[\"dd\"],\"#text\":\"c1c2\"}],\"#text\":\"b1b2\"}],\"n\":0.5,\"#text\":\"t1t2t3\"}"},
        {"<a><b>p<c>q</c></b><b><c>r</c>s<c>t</c></b>u</a>",
         "{\"b\":[{\"c\":[{\"d\":[],\"#text\":\"q\"}],\"#text\":\"p\"},{\"c\":[{\"d\":[],\"#text\":\"r\"},{\"d\":[],"
         "\"#text\":\"t\"}],\"#text\":\"s\"}],\"#text\":\"u\"}"},
        {"<a>&#233;<b>&lt;<c>&gt;</c>&amp;</b>&quot;</a>",
         "{\"b\":[{\"c\":[{\"d\":[],\"#text\":\">\"}],\"#text\":\"<&\"}],\"#text\":\"\xC3\xA9\\\"\"}"},
        /* text pending two levels up while the inner elements have none */
        {"<a>top<b><c>deep</c></b>more</a>", "{\"b\":[{\"c\":[{\"d\":[],\"#text\":\"deep\"}]}],\"#text\":\"topmore\"}"},
        {"<a>\n  <b>\n    <c> c1 </c><c>c2</c>\n  </b>\n  <unknown>zz<b>no</b></unknown>ok\n</a>",
         "{\"b\":[{\"c\":[{\"d\":[],\"#text\":\"c1\"},{\"d\":[],\"#text\":\"c2\"}]}],\"#text\":\"ok\"}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = parse_str(c, cases[i].xml);
        if (strcmp(got, cases[i].want)) fail_msg("%s\n got %s\nwant %s", cases[i].xml, got, cases[i].want);
        free(got);
    }
    /* past the first text area (64 KiB), twice: while kept text fills it,
     * and while text is pending at two levels. Pending text moves to a
     * larger area, kept text stays where its nodes point. */
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    assert_int_equal(aw_buf_append_str(&xml, "<a><b>"), 0);
    for (int i = 0; i < 12000; i++) assert_int_equal(aw_buf_printf(&xml, "<c>k%05d</c>", i), 0);
    assert_int_equal(aw_buf_append_str(&xml, "</b>"), 0);
    for (int i = 0; i < 70000; i++) assert_int_equal(aw_buf_putc(&xml, 'x'), 0);
    assert_int_equal(aw_buf_append_str(&xml, "<b>"), 0);
    for (int i = 0; i < 70000; i++) assert_int_equal(aw_buf_putc(&xml, 'y'), 0);
    for (int i = 0; i < 3000; i++) assert_int_equal(aw_buf_printf(&xml, "<c>c%05d</c>", i), 0);
    assert_int_equal(aw_buf_append_str(&xml, "</b><b>"), 0);
    for (int i = 0; i < 3000; i++) assert_int_equal(aw_buf_printf(&xml, "<c>d%05d</c>", i), 0);
    assert_int_equal(aw_buf_append_str(&xml, "</b>www</a>"), 0);
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_contract_parse(c, xml.data, xml.len, NULL, &doc, &err)) fail_msg("parse: %s", err.message);
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *text = aw_json_get(root, "#text");
    assert_true(aw_json_is_string(text));
    assert_int_equal(text->u.str.len, 70003);
    assert_true(text->u.str.ptr[0] == 'x' && text->u.str.ptr[69999] == 'x' && !strcmp(text->u.str.ptr + 70000, "www"));
    const aw_json_value *b = aw_json_get(root, "b");
    assert_int_equal(aw_json_count(b), 3);
    const aw_json_value *kept = aw_json_get(aw_json_at(b, 0), "c");
    assert_int_equal(aw_json_count(kept), 12000);
    for (size_t i = 0; i < 12000; i++) {
        char want[16];
        snprintf(want, sizeof want, "k%05zu", i);
        assert_string_equal(aw_json_get(aw_json_at(kept, i), "#text")->u.str.ptr, want);
    }
    text = aw_json_get(aw_json_at(b, 1), "#text");
    assert_int_equal(text->u.str.len, 70000);
    assert_true(text->u.str.ptr[0] == 'y' && text->u.str.ptr[69999] == 'y' && text->u.str.ptr[70000] == '\0');
    assert_null(aw_json_get(aw_json_at(b, 2), "#text"));
    for (size_t k = 0; k < 2; k++) {
        const aw_json_value *cs = aw_json_get(aw_json_at(b, k + 1), "c");
        assert_int_equal(aw_json_count(cs), 3000);
        for (size_t i = 0; i < 3000; i++) {
            char want[16];
            snprintf(want, sizeof want, "%c%05zu", k ? 'd' : 'c', i);
            assert_string_equal(aw_json_get(aw_json_at(cs, i), "#text")->u.str.ptr, want);
        }
    }
    aw_json_doc_free(doc);
    aw_buf_free(&xml);
    aw_contract_free(c);
}

/* Short decimals are converted without strtod (contract_check.c: up to 19
 * digits below 2^53, one exact division); the result must be strtod's to
 * the bit, on both sides of every limit of that fast path, and longer
 * numbers still go to strtod. */
static void expect_number_as_strtod(const aw_contract *c, const char *attr, const char *num) {
    char xml[200];
    snprintf(xml, sizeof xml, "<n %s=\"%s\"/>", attr, num);
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_contract_parse(c, xml, strlen(xml), NULL, &doc, &err)) fail_msg("%s: %s", xml, err.message);
    const aw_json_value *v = aw_json_get(aw_json_doc_root(doc), attr);
    assert_true(aw_json_is_number(v));
    double want = strtod(num, NULL), got = v->u.num.d;
    if (memcmp(&want, &got, sizeof want) != 0) fail_msg("%s: %.17g, strtod says %.17g", xml, got, want);
    aw_json_doc_free(doc);
}

static void test_numbers_as_strtod(void **state) {
    (void)state;
    static const char json[] = "{\"format\": \"1.0\", \"root\": {\"name\": \"n\", \"attributes\": ["
                               "{\"name\": \"d\", \"type\": \"decimal\"}, {\"name\": \"i\", \"type\": \"integer\"}]}}";
    aw_contract *c = load_text(json, strlen(json));
    const char *decimals[] = {
        "0", "-0", "+0", "-0.0", "0.0", "1", "0.95", "0.1", "0.3", "+0.5", "-0.75", "007.50", "1.0000000000000000000",
        "9007199254740992", "9007199254740993", "9007199254740991", "0.9007199254740993", "900719925474099.3",
        "9999999999999999999", "99999999999999999999", "0.1234567890123456789", "0.12345678901234567890",
        "1234567890123456789.0", "0.0000000000000000001", "0.00000000000000000001", "0.30000000000000004",
        "3.141592653589793238462643383279", "1797693134862315708145274237317043567981",
    };
    for (size_t i = 0; i < sizeof decimals / sizeof decimals[0]; i++)
        expect_number_as_strtod(c, "d", decimals[i]);
    const char *integers[] = {"0", "-0", "42", "+42", "-9007199254740993", "18446744073709551615",
                              "123456789012345678901234567890"};
    for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++) expect_number_as_strtod(c, "i", integers[i]);
    /* random decimals of 1 to 21 digits, the point anywhere */
    uint64_t seed = 0x9E3779B97F4A7C15u;
    for (int k = 0; k < 20000; k++) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        size_t digits = 1 + seed % 21, point = (seed >> 8) % (digits + 1);
        char num[40];
        size_t n = 0;
        if ((seed >> 16) & 1) num[n++] = '-';
        uint64_t r = seed;
        for (size_t d = 0; d < digits; d++) {
            if (d == point && d) num[n++] = '.';
            r = r * 6364136223846793005u + 1442695040888963407u;
            num[n++] = (char)('0' + (r >> 33) % 10);
        }
        num[n] = '\0';
        expect_number_as_strtod(c, "d", num);
    }
    aw_contract_free(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_to_end),     cmocka_unit_test(test_user_rules),
        cmocka_unit_test(test_mapping),        cmocka_unit_test(test_enum_and_lists),
        cmocka_unit_test(test_format_version), cmocka_unit_test(test_loader_refusals),
        cmocka_unit_test(test_deep_contract),  cmocka_unit_test(test_builtins_are_the_files),
        cmocka_unit_test(test_numbers_as_strtod), cmocka_unit_test(test_mixed_content),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
