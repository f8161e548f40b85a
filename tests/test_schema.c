/* The schema module beyond the official suite (test_schema_suite.c): the
 * error output (locations, messages, limits), compile errors, decimals,
 * the ECMAScript regex translation, the registry, hostile schemas and
 * instances (deep nesting, huge enums, uniqueItems on 100,000 items,
 * catastrophic patterns, reference loops) and several threads validating
 * with one compiled schema. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
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

static aw_json_doc *parse(const char *json) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse(json, strlen(json), NULL, &doc, &err)) fail_msg("bad test JSON: %s: %s", err.message, json);
    return doc;
}

static aw_schema *compile_opts(const char *json, const aw_schema_options *opts) {
    aw_json_doc *doc = parse(json);
    aw_schema *s = NULL;
    aw_error err;
    if (aw_schema_compile(aw_json_doc_root(doc), opts, &s, &err)) fail_msg("compile: %s: %s", err.message, json);
    aw_json_doc_free(doc);
    return s;
}

static aw_schema *compile(const char *json) { return compile_opts(json, NULL); }

/* The compile error message for a schema that must not compile. */
static int compile_error(const char *json, const aw_schema_options *opts, char *msg, size_t size) {
    aw_json_doc *doc = parse(json);
    aw_schema *s = NULL;
    aw_error err;
    int rc = aw_schema_compile(aw_json_doc_root(doc), opts, &s, &err);
    aw_json_doc_free(doc);
    if (!rc) fail_msg("compiled, but should not: %s", json);
    assert_null(s);
    snprintf(msg, size, "%s", err.message);
    return rc;
}

/* Validate; the result in r, which the caller frees. Both the full run
 * and the verdict-only run must agree. */
static int check(const aw_schema *s, const char *instance, aw_schema_result *r) {
    aw_json_doc *doc = parse(instance);
    aw_error err;
    aw_schema_result quick;
    aw_schema_result_init(&quick, NULL);
    aw_schema_validate_options q = {0, 0};
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(doc), &q, &quick, &err), 0);
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(doc), NULL, r, &err), 0);
    assert_int_equal(quick.valid, r->valid);
    assert_int_equal(quick.error_count, 0);
    aw_schema_result_free(&quick);
    aw_json_doc_free(doc);
    return r->valid;
}

static int valid(const char *schema, const char *instance) {
    aw_schema *s = compile(schema);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    int v = check(s, instance, &r);
    aw_schema_result_free(&r);
    aw_schema_free(s);
    return v;
}

/* The result as basic-output JSON. */
static char *output(const char *schema, const char *instance) {
    aw_schema *s = compile(schema);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    check(s, instance, &r);
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_schema_result_write(&r, &out), 0);
    aw_schema_result_free(&r);
    aw_schema_free(s);
    return out.data;
}

static void expect_output(const char *schema, const char *instance, const char *want) {
    char *got = output(schema, instance);
    assert_string_equal(got, want);
    free(got);
}

/* ---- errors: locations and messages ------------------------------------------- */

static void test_error_messages(void **state) {
    (void)state;
    expect_output("{\"properties\":{\"age\":{\"type\":\"integer\"}}}", "{\"age\":\"3\"}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/age\",\"keywordLocation\":\"/properties/age/type\","
                  "\"error\":\"expected integer, got string \\\"3\\\"\"}]}");
    expect_output("{\"required\":[\"name\",\"id\"],\"properties\":{\"id\":{}}}", "{\"id\":1}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/required\","
                  "\"error\":\"missing required property \\\"name\\\"\"}]}");
    expect_output("{\"properties\":{\"a\":{}},\"additionalProperties\":false}", "{\"a\":1,\"b/c~\":2}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/b~1c~0\",\"keywordLocation\":\"/additionalProperties\","
                  "\"error\":\"property \\\"b/c~\\\" is not allowed\"}]}");
    expect_output("{\"enum\":[\"a\",\"b\"]}", "\"c\"",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/enum\","
                  "\"error\":\"string \\\"c\\\" is not one of \\\"a\\\", \\\"b\\\"\"}]}");
    expect_output("{\"items\":{\"type\":[\"string\",\"null\"]}}", "[null,\"x\",true]",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/2\",\"keywordLocation\":\"/items/type\","
                  "\"error\":\"expected null or string, got boolean true\"}]}");
    expect_output("{\"pattern\":\"^[0-9]+$\",\"minLength\":3}", "\"1x\"",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/minLength\","
                  "\"error\":\"string is 2 characters long; at least 3 expected\"},{\"instanceLocation\":\"\","
                  "\"keywordLocation\":\"/pattern\",\"error\":\"string \\\"1x\\\" does not match the pattern \\\"^[0-9]+$\\\"\"}]}");
    /* a $ref crossed: the keyword path goes through it, the absolute one names the target */
    expect_output("{\"$id\":\"https://example.com/root.json\",\"properties\":{\"n\":{\"$ref\":\"#/$defs/pos\"}},"
                  "\"$defs\":{\"pos\":{\"minimum\":0}}}",
                  "{\"n\":-1}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/n\",\"keywordLocation\":\"/properties/n/$ref/minimum\","
                  "\"absoluteKeywordLocation\":\"https://example.com/root.json#/$defs/pos/minimum\","
                  "\"error\":\"number -1 is below the minimum 0\"}]}");
    expect_output("{\"type\":\"object\"}", "{}", "{\"valid\":true}");
    /* anyOf: the branches' errors are kept when none matches, dropped when one does */
    expect_output("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":10}]}", "5",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/anyOf/0/type\","
                  "\"error\":\"expected string, got number 5\"},{\"instanceLocation\":\"\",\"keywordLocation\":\"/anyOf/1/minimum\","
                  "\"error\":\"number 5 is below the minimum 10\"},{\"instanceLocation\":\"\",\"keywordLocation\":\"/anyOf\","
                  "\"error\":\"matches none of the 2 anyOf schemas\"}]}");
    expect_output("{\"anyOf\":[{\"type\":\"string\"},{\"minimum\":10}]}", "50", "{\"valid\":true}");
    expect_output("{\"oneOf\":[{\"minimum\":1},{\"maximum\":10}]}", "5",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/oneOf\","
                  "\"error\":\"matches oneOf schemas 0 and 1; exactly one must match\"}]}");
    expect_output("{\"not\":{\"type\":\"string\"}}", "\"s\"",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/not\","
                  "\"error\":\"must not match the schema in \\\"not\\\"\"}]}");
    expect_output("{\"contains\":{\"type\":\"string\"},\"maxContains\":1}", "[\"a\",1,\"b\"]",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/maxContains\","
                  "\"error\":\"2 items match the \\\"contains\\\" schema; at most 1 may\"}]}");
    expect_output("{\"uniqueItems\":true}", "[1,{\"a\":[1]},2,{\"a\":[1.0]}]",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/uniqueItems\","
                  "\"error\":\"items 1 and 3 are equal; items must be unique\"}]}");
    expect_output("{\"prefixItems\":[{}],\"items\":false}", "[1,2]",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/1\",\"keywordLocation\":\"/items\","
                  "\"error\":\"item 1 is not allowed (no items beyond the listed ones)\"}]}");
    expect_output("{\"properties\":{\"a\":true},\"unevaluatedProperties\":false}", "{\"a\":1,\"z\":2}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"/z\",\"keywordLocation\":\"/unevaluatedProperties\","
                  "\"error\":\"property \\\"z\\\" is not allowed (not evaluated by any other keyword)\"}]}");
    expect_output("{\"dependentRequired\":{\"a\":[\"b\"]}}", "{\"a\":1}",
                  "{\"valid\":false,\"errors\":[{\"instanceLocation\":\"\",\"keywordLocation\":\"/dependentRequired\","
                  "\"error\":\"property \\\"b\\\" is required when \\\"a\\\" is present\"}]}");
}

static void test_all_errors_and_limits(void **state) {
    (void)state;
    aw_schema *s = compile("{\"items\":{\"type\":\"string\"}}");
    aw_json_doc *doc = parse("[1,2,3,4,5,6,7,8,9,10]");
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    aw_error err;
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(doc), NULL, &r, &err), 0);
    assert_false(r.valid);
    assert_int_equal(r.error_count, 10);
    assert_false(r.truncated);
    assert_string_equal(r.errors[9].instance_location, "/9");
    aw_schema_validate_options three = {3, 0};
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(doc), &three, &r, &err), 0);
    assert_false(r.valid);
    assert_int_equal(r.error_count, 3);
    assert_true(r.truncated);
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_schema_result_summary(&r, 0, &out), 0);
    assert_string_equal(out.data, "/0: expected string, got number 1; /1: expected string, got number 2; /2: expected "
                                  "string, got number 3; and more");
    aw_buf_clear(&out);
    assert_int_equal(aw_schema_result_summary(&r, 20, &out), 0);
    assert_string_equal(out.data, "/0: expected stri...");
    aw_buf_free(&out);
    /* a limit reached inside anyOf branches never changes the verdict */
    aw_schema *any = compile("{\"anyOf\":[{\"items\":{\"type\":\"string\"}},{\"items\":{\"type\":\"integer\"}}]}");
    aw_schema_validate_options one = {1, 0};
    assert_int_equal(aw_schema_validate(any, aw_json_doc_root(doc), &one, &r, &err), 0);
    assert_true(r.valid);
    assert_int_equal(r.error_count, 0);
    aw_schema_result_free(&r);
    aw_schema_free(any);
    aw_json_doc_free(doc);
    aw_schema_free(s);
}

/* ---- compile errors ------------------------------------------------------------- */

static void test_compile_errors(void **state) {
    (void)state;
    char msg[AW_ERROR_MESSAGE_MAX];
    assert_int_equal(compile_error("{\"$schema\":\"https://json-schema.org/draft/2019-09/schema\"}", NULL, msg, sizeof msg),
                     AW_EVALID);
    assert_non_null(strstr(msg, "/$schema: unknown dialect \"https://json-schema.org/draft/2019-09/schema\""));
    assert_int_equal(compile_error("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/missing\"}}}", NULL, msg, sizeof msg), AW_EVALID);
    assert_string_equal(msg, "/properties/a/$ref: cannot resolve \"#/$defs/missing\"");
    assert_int_equal(compile_error("{\"$ref\":\"https://example.com/other.json\"}", NULL, msg, sizeof msg), AW_EVALID);
    assert_string_equal(msg, "/$ref: cannot resolve \"https://example.com/other.json\"");
    /* loops of references that never move into the instance */
    assert_int_equal(compile_error("{\"$ref\":\"#\"}", NULL, msg, sizeof msg), AW_EVALID);
    assert_non_null(strstr(msg, "a loop of references"));
    assert_int_equal(compile_error("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"allOf\":[{\"$ref\":\"#/$defs/a\"}]}},"
                                   "\"properties\":{\"x\":{\"$ref\":\"#/$defs/a\"}}}",
                                   NULL, msg, sizeof msg),
                     AW_EVALID);
    assert_non_null(strstr(msg, "a loop of references"));
    /* ... but recursion through properties is fine */
    aw_schema_free(compile("{\"properties\":{\"next\":{\"$ref\":\"#\"}}}"));
    assert_int_equal(compile_error("{\"properties\":{\"a\":{\"minLength\":-1}}}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_string_equal(msg, "/properties/a/minLength: must be a non-negative integer");
    assert_int_equal(compile_error("{\"type\":\"strnig\"}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_string_equal(msg, "/type: unknown type \"strnig\"");
    assert_int_equal(compile_error("{\"pattern\":\"a(b\"}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_non_null(strstr(msg, "/pattern: invalid regular expression: "));
    assert_int_equal(compile_error("{\"patternProperties\":{\"\\\\a\":{}}}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_non_null(strstr(msg, "/patternProperties: invalid regular expression \"\\a\""));
    assert_int_equal(compile_error("{\"items\":[{}]}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_non_null(strstr(msg, "/items: must be a schema"));
    assert_int_equal(compile_error("{\"allOf\":[]}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_int_equal(compile_error("{\"multipleOf\":0}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_int_equal(compile_error("{\"properties\":{\"a\":3}}", NULL, msg, sizeof msg), AW_ESYNTAX);
    assert_string_equal(msg, ": properties/a must be a schema (an object or a boolean)");
    assert_int_equal(compile_error("[1]", NULL, msg, sizeof msg), AW_ESYNTAX);
    /* a required vocabulary we do not know */
    aw_schema_registry *reg = aw_schema_registry_new(NULL);
    aw_json_doc *meta = parse("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$vocabulary\":"
                              "{\"https://example.com/vocab/x\":true}}");
    aw_error err;
    assert_int_equal(aw_schema_registry_add(reg, "https://example.com/meta", aw_json_doc_root(meta), &err), 0);
    aw_schema_options opts = {NULL, AW_SCHEMA_DRAFT_2020_12, false, reg, NULL};
    assert_int_equal(compile_error("{\"$schema\":\"https://example.com/meta\"}", &opts, msg, sizeof msg), AW_EVALID);
    assert_non_null(strstr(msg, "unknown vocabulary \"https://example.com/vocab/x\""));
    aw_json_doc_free(meta);
    aw_schema_registry_free(reg);
}

/* ---- dialects and the registry ----------------------------------------------------- */

static void test_dialects(void **state) {
    (void)state;
    /* draft-07 by $schema: items as an array is a tuple, $ref hides its siblings */
    const char *d7 = "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"items\":[{\"type\":\"string\"}],"
                     "\"additionalItems\":false}";
    assert_true(valid(d7, "[\"a\"]"));
    assert_false(valid(d7, "[\"a\",1]"));
    assert_true(valid("{\"$schema\":\"http://json-schema.org/draft-07/schema\",\"definitions\":{\"s\":{\"type\":\"string\"}},"
                      "\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\",\"type\":\"integer\"}}}",
                      "{\"a\":\"x\"}"));
    assert_false(valid("{\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\",\"type\":\"integer\"}},\"$defs\":{\"s\":{\"type\":\"string\"}}}",
                       "{\"a\":\"x\"}"));
    /* the default dialect from the options */
    aw_schema_options seven = {NULL, AW_SCHEMA_DRAFT_7, false, NULL, NULL};
    aw_schema *s = compile_opts("{\"dependencies\":{\"a\":[\"b\"],\"c\":{\"required\":[\"d\"]}}}", &seven);
    assert_int_equal(aw_schema_draft_of(s), AW_SCHEMA_DRAFT_7);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_false(check(s, "{\"a\":1}", &r));
    assert_false(check(s, "{\"c\":1}", &r));
    assert_true(check(s, "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}", &r));
    aw_schema_free(s);
    assert_int_equal(aw_schema_draft_parse("7"), AW_SCHEMA_DRAFT_7);
    assert_int_equal(aw_schema_draft_parse("2020-12"), AW_SCHEMA_DRAFT_2020_12);
    assert_int_equal(aw_schema_draft_parse("2019-09"), -1);
    /* a reference to another document through the registry, and to a meta-schema built in */
    aw_schema_registry *reg = aw_schema_registry_new(NULL);
    aw_json_doc *other = parse("{\"$defs\":{\"path\":{\"type\":\"string\",\"pattern\":\"^/\"}},"
                               "\"inner\":{\"$id\":\"https://example.com/inner\",\"type\":\"integer\"}}");
    aw_error err;
    assert_int_equal(aw_schema_registry_add(reg, "https://example.com/other.json", aw_json_doc_root(other), &err), 0);
    aw_json_doc_free(other); /* the registry holds a copy */
    aw_schema_options opts = {NULL, AW_SCHEMA_DRAFT_2020_12, false, reg, NULL};
    s = compile_opts("{\"$id\":\"https://example.com/tool\",\"properties\":{\"p\":{\"$ref\":\"other.json#/$defs/path\"},"
                     "\"schema\":{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}}}",
                     &opts);
    aw_schema_registry_free(reg); /* the schema holds what it uses */
    assert_true(check(s, "{\"p\":\"/etc\",\"schema\":{\"type\":\"string\"}}", &r));
    assert_false(check(s, "{\"p\":\"etc\"}", &r));
    assert_string_equal(r.errors[0].absolute_keyword_location, "https://example.com/other.json#/$defs/path/pattern");
    assert_false(check(s, "{\"schema\":{\"type\":12}}", &r));
    aw_schema_free(s);
    aw_schema_result_free(&r);
    assert_int_equal(aw_schema_registry_add(NULL, "x", NULL, &err), AW_EINVAL);
}

static void test_format_assertion(void **state) {
    (void)state;
    const char *schema = "{\"properties\":{\"when\":{\"format\":\"date-time\"},\"mail\":{\"format\":\"email\"},"
                         "\"ip\":{\"format\":\"ipv4\"},\"re\":{\"format\":\"regex\"},\"u\":{\"format\":\"uri\"},"
                         "\"d\":{\"format\":\"duration\"},\"x\":{\"format\":\"no-such-format\"}}}";
    const char *bad = "{\"when\":\"2024-02-30T10:00:00Z\",\"mail\":\"a@@b\",\"ip\":\"1.2.3.256\",\"re\":\"a(\","
                      "\"u\":\"no scheme\",\"d\":\"P1D2H\",\"x\":\"anything\"}";
    const char *good = "{\"when\":\"2024-02-29T23:59:60Z\",\"mail\":\"a.b@example.com\",\"ip\":\"10.0.0.1\",\"re\":\"^a+$\","
                       "\"u\":\"https://example.com/a?b#c\",\"d\":\"P1DT2H\",\"x\":\"anything\"}";
    /* an annotation by default */
    assert_true(valid(schema, bad));
    aw_schema_options fa = {NULL, AW_SCHEMA_DRAFT_2020_12, true, NULL, NULL};
    aw_schema *s = compile_opts(schema, &fa);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_true(check(s, good, &r));
    assert_false(check(s, bad, &r));
    assert_int_equal(r.error_count, 6);
    assert_string_equal(r.errors[0].message, "string \"2024-02-30T10:00:00Z\" is not a valid date-time");
    aw_schema_result_free(&r);
    aw_schema_free(s);
}

/* ---- numbers ------------------------------------------------------------------------- */

static void test_decimals(void **state) {
    (void)state;
    assert_true(valid("{\"multipleOf\":0.01}", "0.1"));
    assert_true(valid("{\"multipleOf\":0.1}", "0.3"));
    assert_true(valid("{\"multipleOf\":0.0001}", "19.99"));
    assert_false(valid("{\"multipleOf\":0.01}", "0.001"));
    assert_true(valid("{\"multipleOf\":1e-8}", "0.12345678"));
    assert_false(valid("{\"multipleOf\":1e-8}", "0.123456789"));
    assert_true(valid("{\"multipleOf\":7.5}", "1.5e3"));
    assert_false(valid("{\"multipleOf\":7.5}", "1e3"));
    assert_false(valid("{\"multipleOf\":7}", "1e300"));
    assert_true(valid("{\"multipleOf\":5}", "1e300"));
    assert_true(valid("{\"multipleOf\":3}", "123456789012345678901234567890"));
    assert_false(valid("{\"multipleOf\":3}", "123456789012345678901234567891"));
    /* JSON equality: 1 == 1.0 == 1e0; -0 == 0 */
    assert_true(valid("{\"const\":1}", "1.0"));
    assert_true(valid("{\"enum\":[\"x\",10]}", "1e1"));
    assert_true(valid("{\"const\":{\"a\":[0]}}", "{\"a\":[-0.0]}"));
    assert_false(valid("{\"const\":1}", "true"));
    assert_false(valid("{\"uniqueItems\":true}", "[1,1.00]"));
    assert_true(valid("{\"uniqueItems\":true}", "[1,true,\"1\",[1],{\"1\":1}]"));
    /* integers: 1.0 is one; beyond doubles, the decimal decides */
    assert_true(valid("{\"type\":\"integer\"}", "1.0"));
    assert_true(valid("{\"type\":\"integer\"}", "1e2"));
    assert_false(valid("{\"type\":\"integer\"}", "1.0000000000000000001"));
    assert_false(valid("{\"maximum\":18446744073709551615}", "18446744073709551616"));
    assert_true(valid("{\"maximum\":18446744073709551615}", "18446744073709551615"));
    assert_false(valid("{\"exclusiveMinimum\":0.1}", "0.1000000000000000000000001e0") == 0);
    assert_false(valid("{\"const\":9007199254740993}", "9007199254740992"));
}

/* ---- regular expressions --------------------------------------------------------------- */

static void test_ecmascript_regex(void **state) {
    (void)state;
    assert_false(valid("{\"pattern\":\"^\\\\d$\"}", "\"\\u0660\""));        /* \d is ASCII */
    assert_true(valid("{\"pattern\":\"^\\\\D$\"}", "\"\\u0660\""));
    assert_true(valid("{\"pattern\":\"^\\\\s$\"}", "\"\\u00a0\""));         /* \s is Unicode */
    assert_true(valid("{\"pattern\":\"^\\\\s$\"}", "\"\\ufeff\""));
    assert_false(valid("{\"pattern\":\"^\\\\S$\"}", "\"\\u2028\""));
    assert_true(valid("{\"pattern\":\"^[\\\\S]$\"}", "\"x\""));
    assert_false(valid("{\"pattern\":\"^[\\\\S]$\"}", "\"\\u3000\""));
    assert_false(valid("{\"pattern\":\"^.$\"}", "\"\\n\""));                 /* . excludes line terminators */
    assert_false(valid("{\"pattern\":\"^.$\"}", "\"\\u2029\""));
    assert_true(valid("{\"pattern\":\"^.$\"}", "\"\\u000b\""));
    assert_false(valid("{\"pattern\":\"^abc$\"}", "\"abc\\n\""));          /* $ only at the end */
    assert_true(valid("{\"pattern\":\"^\\\\u00e9\\\\u{1F600}$\"}", "\"\\u00e9\\ud83d\\ude00\""));
    assert_true(valid("{\"pattern\":\"^\\\\ud83d\\\\ude00$\"}", "\"\\ud83d\\ude00\""));
    assert_true(valid("{\"pattern\":\"^[^]$\"}", "\"\\n\""));
    assert_false(valid("{\"pattern\":\"[]\"}", "\"anything\""));
    assert_true(valid("{\"pattern\":\"^\\\\cJ$\"}", "\"\\n\""));
    assert_true(valid("{\"pattern\":\"^\\\\p{Letter}+$\"}", "\"\\u00e9t\\u00e9\""));
    assert_true(valid("{\"pattern\":\"(?<=a)b\"}", "\"ab\""));
    assert_true(valid("{\"pattern\":\"^(?<y>\\\\d{4})-\\\\k<y>$\"}", "\"2024-2024\""));
    assert_true(valid("{\"pattern\":\"a\"}", "\"bab\""));                  /* not anchored */
    /* a lone surrogate escape in the instance never matches, never breaks */
    assert_false(valid("{\"pattern\":\"^.$\"}", "\"\\ud800\""));
    char msg[AW_ERROR_MESSAGE_MAX];
    static const char *const refused[] = {"\\\\a", "\\\\z", "(?i)a", "a++", "(?#c)", "(?P<n>x)", "[a", "\\\\c1", "\\\\x4"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char schema[64];
        snprintf(schema, sizeof schema, "{\"pattern\":\"%s\"}", refused[i]);
        assert_int_equal(compile_error(schema, NULL, msg, sizeof msg), AW_ESYNTAX);
    }
}

/* Catastrophic backtracking ends at PCRE2's limits, as a validation error. */
static void test_catastrophic_pattern(void **state) {
    (void)state;
    aw_schema *s = compile("{\"properties\":{\"s\":{\"pattern\":\"^(a+)+$\"}},\"patternProperties\":{\"^(x+x+)+$\":true}}");
    char inst[256];
    snprintf(inst, sizeof inst, "{\"s\":\"%s\"}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab");
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_false(check(s, inst, &r));
    assert_int_equal(r.error_count, 1);
    assert_string_equal(r.errors[0].keyword_location, "/properties/s");
    assert_non_null(strstr(r.errors[0].message, "could not be matched within its limits"));
    snprintf(inst, sizeof inst, "{\"%s\":1}", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx!");
    assert_false(check(s, inst, &r));
    assert_string_equal(r.errors[0].keyword_location, "/patternProperties/^(x+x+)+$");
    assert_true(check(s, "{\"s\":\"aaaa\",\"xxxx\":1}", &r));
    aw_schema_result_free(&r);
    aw_schema_free(s);
}

/* A property name holding U+0000 (legal JSON) is in the locations whole:
 * they carry their lengths, the JSON result writes it \u0000, and so does
 * the one-line summary (found by fuzz_schema: the location was cut at the
 * NUL and led nowhere). */
static void test_nul_in_a_property_name(void **state) {
    (void)state;
    aw_schema *s = compile("{\"properties\":{\"a\\u0000b\":{\"type\":\"integer\"}}}");
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_false(check(s, "{\"a\\u0000b\":\"x\"}", &r));
    assert_int_equal(r.error_count, 1);
    assert_int_equal(r.errors[0].instance_location_len, 4);
    assert_memory_equal(r.errors[0].instance_location, "/a\0b", 5);
    assert_int_equal(r.errors[0].keyword_location_len, 20);
    assert_memory_equal(r.errors[0].keyword_location, "/properties/a\0b/type", 21);
    aw_buf out;
    aw_buf_init(&out, NULL);
    assert_int_equal(aw_schema_result_write(&r, &out), 0);
    assert_non_null(strstr(out.data, "\"instanceLocation\":\"/a\\u0000b\",\"keywordLocation\":\"/properties/a\\u0000b/type\""));
    aw_buf_clear(&out);
    assert_int_equal(aw_schema_result_summary(&r, 0, &out), 0);
    assert_int_equal(strlen(out.data), out.len);
    assert_non_null(strstr(out.data, "/a\\u0000b: "));
    aw_buf_free(&out);
    assert_true(check(s, "{\"a\\u0000b\":1,\"a\":\"x\"}", &r));
    aw_schema_result_free(&r);
    aw_schema_free(s);
}

/* ---- hostile sizes ------------------------------------------------------------------------- */

/* "[[[...]]]" or {"items":{"items":...}} n deep. */
static char *nested(const char *open, const char *inner, const char *close, size_t n) {
    size_t lo = strlen(open), li = strlen(inner), lc = strlen(close);
    char *s = malloc(n * (lo + lc) + li + 1), *p = s;
    for (size_t i = 0; i < n; i++) memcpy(p, open, lo), p += lo;
    memcpy(p, inner, li), p += li;
    for (size_t i = 0; i < n; i++) memcpy(p, close, lc), p += lc;
    *p = '\0';
    return s;
}

static aw_json_doc *parse_deep(const char *text) {
    aw_json_read_options ro = {NULL, 1000000, false};
    aw_json_doc *doc = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(text, strlen(text), &ro, &doc, &err), 0);
    return doc;
}

static void test_deep_nesting(void **state) {
    (void)state;
    /* a schema 50,000 levels deep, through applicators and through items */
    const size_t depth = 50000;
    char *schema_text = nested("{\"allOf\":[{\"items\":", "{\"type\":\"integer\"}", "}]}", depth);
    aw_json_doc *schema = parse_deep(schema_text);
    aw_schema *s = NULL;
    aw_error err;
    assert_int_equal(aw_schema_compile(aw_json_doc_root(schema), NULL, &s, &err), 0);
    char *inst_text = nested("[", "1", "]", depth);
    aw_json_doc *inst = parse_deep(inst_text);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(inst), NULL, &r, &err), 0);
    assert_true(r.valid);
    /* the same depth with a wrong leaf: the error names the whole path */
    inst_text[depth] = '"';
    inst_text[depth - 1] = '[';
    aw_json_doc_free(inst);
    free(inst_text);
    inst_text = nested("[", "\"x\"", "]", depth);
    inst = parse_deep(inst_text);
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(inst), NULL, &r, &err), 0);
    assert_false(r.valid);
    assert_int_equal(strlen(r.errors[0].instance_location), 2 * depth);
    /* past the caller's depth limit: AW_ELIMIT, naming where */
    aw_schema_validate_options shallow = {10, 1000};
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(inst), &shallow, &r, &err), AW_ELIMIT);
    assert_non_null(strstr(err.message, "deeper than 1000"));
    aw_schema_result_free(&r);
    aw_json_doc_free(inst);
    aw_json_doc_free(schema);
    aw_schema_free(s);
    free(inst_text);
    free(schema_text);
    /* a recursive schema over a deep instance, and `$dynamicRef` recursion */
    s = compile("{\"$dynamicAnchor\":\"t\",\"type\":[\"array\",\"integer\"],\"items\":{\"$dynamicRef\":\"#t\"}}");
    inst_text = nested("[", "1", "]", 5000);
    inst = parse_deep(inst_text);
    aw_schema_result_init(&r, NULL);
    assert_int_equal(aw_schema_validate(s, aw_json_doc_root(inst), NULL, &r, &err), 0);
    assert_true(r.valid);
    aw_schema_result_free(&r);
    aw_json_doc_free(inst);
    aw_schema_free(s);
    free(inst_text);
}

static void test_huge_enum_and_unique(void **state) {
    (void)state;
    const size_t n = 100000;
    aw_buf text;
    aw_buf_init(&text, NULL);
    aw_buf_append_str(&text, "{\"enum\":[");
    for (size_t i = 0; i < n; i++) aw_buf_printf(&text, "%s\"v%zu\",%zu", i ? "," : "", i, i);
    aw_buf_append_str(&text, ",{\"k\":[1,2]}]}");
    aw_schema *s = compile(text.data);
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    assert_true(check(s, "\"v99999\"", &r));
    assert_true(check(s, "99999.0", &r));
    assert_true(check(s, "{\"k\":[1,2.0]}", &r));
    assert_false(check(s, "\"v100000\"", &r));
    assert_non_null(strstr(r.errors[0].message, "(200001 values)"));
    aw_schema_free(s);
    /* uniqueItems over 100,000 items: hashed, so linear (a quadratic check
     * would take minutes here) */
    s = compile("{\"uniqueItems\":true}");
    aw_buf_clear(&text);
    aw_buf_putc(&text, '[');
    for (size_t i = 0; i < n; i++) aw_buf_printf(&text, "%s{\"id\":%zu,\"tags\":[\"t%zu\"]}", i ? "," : "", i, i % 7);
    aw_buf_putc(&text, ']');
    assert_true(check(s, text.data, &r));
    text.len--;
    aw_buf_append_str(&text, ",{\"tags\":[\"t3\"],\"id\":3.0}]");
    assert_false(check(s, text.data, &r));
    assert_string_equal(r.errors[0].message, "items 3 and 100000 are equal; items must be unique");
    aw_schema_result_free(&r);
    aw_schema_free(s);
    aw_buf_free(&text);
}

/* Duplicate keys in an instance: the last one counts, as JSON.parse reads it. */
static void test_duplicate_keys(void **state) {
    (void)state;
    assert_true(valid("{\"properties\":{\"a\":{\"type\":\"string\"}}}", "{\"a\":1,\"a\":\"x\"}"));
    assert_false(valid("{\"properties\":{\"a\":{\"type\":\"string\"}}}", "{\"a\":\"x\",\"a\":1}"));
    assert_true(valid("{\"maxProperties\":1}", "{\"a\":1,\"a\":2}"));
    assert_true(valid("{\"const\":{\"a\":2}}", "{\"a\":1,\"a\":2}"));
    assert_false(valid("{\"uniqueItems\":true}", "[{\"a\":1,\"a\":2},{\"a\":2}]"));
}

/* ---- threads ------------------------------------------------------------------------------- */

typedef struct thread_job {
    const aw_schema *s;
    const aw_json_value *good, *bad;
    int failures;
} thread_job;

static void *validate_many(void *arg) {
    thread_job *j = arg;
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    for (int i = 0; i < 2000; i++) {
        aw_error err;
        if (aw_schema_validate(j->s, j->good, NULL, &r, &err) || !r.valid) j->failures++;
        if (aw_schema_validate(j->s, j->bad, NULL, &r, &err) || r.valid || r.error_count != 3) j->failures++;
    }
    aw_schema_result_free(&r);
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    aw_schema *s = compile("{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"},"
                           "\"tags\":{\"type\":\"array\",\"uniqueItems\":true,\"items\":{\"enum\":[\"a\",\"b\",\"c\"]}}},"
                           "\"required\":[\"name\"],\"unevaluatedProperties\":false}");
    aw_json_doc *good = parse("{\"name\":\"abc\",\"tags\":[\"a\",\"b\"]}");
    aw_json_doc *bad = parse("{\"name\":\"A1\",\"tags\":[\"a\",\"a\"],\"x\":1}");
    thread_job jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (thread_job){s, aw_json_doc_root(good), aw_json_doc_root(bad), 0};
        assert_int_equal(pthread_create(&th[i], NULL, validate_many, &jobs[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(jobs[i].failures, 0);
    }
    aw_json_doc_free(good);
    aw_json_doc_free(bad);
    aw_schema_free(s);
}

/* ---- meta-schemas ----------------------------------------------------------------------------- */

static void test_check(void **state) {
    (void)state;
    aw_schema_result r;
    aw_schema_result_init(&r, NULL);
    aw_error err;
    aw_json_doc *doc = parse("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"minLength\":1}}}");
    assert_int_equal(aw_schema_check(aw_json_doc_root(doc), NULL, &r, &err), 0);
    assert_true(r.valid);
    aw_json_doc_free(doc);
    doc = parse("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"strnig\",\"minLength\":-1}}}");
    assert_int_equal(aw_schema_check(aw_json_doc_root(doc), NULL, &r, &err), 0);
    assert_false(r.valid);
    assert_true(r.error_count >= 2);
    aw_json_doc_free(doc);
    /* what only compiling finds: a reference that goes nowhere */
    doc = parse("{\"$ref\":\"#/$defs/nothing\"}");
    assert_int_equal(aw_schema_check(aw_json_doc_root(doc), NULL, &r, &err), 0);
    assert_false(r.valid);
    assert_int_equal(r.error_count, 1);
    assert_string_equal(r.errors[0].instance_location, "/$ref");
    assert_string_equal(r.errors[0].message, "cannot resolve \"#/$defs/nothing\"");
    aw_json_doc_free(doc);
    /* draft-07 by $schema, against its own meta-schema */
    doc = parse("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"items\":[{\"type\":\"string\"}],\"exclusiveMinimum\":true}");
    assert_int_equal(aw_schema_check(aw_json_doc_root(doc), NULL, &r, &err), 0);
    assert_false(r.valid);
    assert_string_equal(r.errors[0].instance_location, "/exclusiveMinimum");
    aw_json_doc_free(doc);
    /* both meta-schemas are valid schemas of their own dialect */
    static const char *const metas[] = {"/schemas/draft2020-12/schema.json", "/schemas/draft-07/schema.json"};
    for (int i = 0; i < 2; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s%s", AW_SOURCE_DIR, metas[i]);
        size_t len;
        char *text = aw_test_read_file(path, &len);
        assert_non_null(text);
        assert_int_equal(aw_json_parse(text, len, NULL, &doc, &err), 0);
        assert_int_equal(aw_schema_check(aw_json_doc_root(doc), NULL, &r, &err), 0);
        assert_true(r.valid);
        aw_json_doc_free(doc);
        free(text);
    }
    aw_schema_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_messages),   cmocka_unit_test(test_all_errors_and_limits),
        cmocka_unit_test(test_compile_errors),   cmocka_unit_test(test_dialects),
        cmocka_unit_test(test_format_assertion), cmocka_unit_test(test_decimals),
        cmocka_unit_test(test_ecmascript_regex), cmocka_unit_test(test_catastrophic_pattern),
        cmocka_unit_test(test_deep_nesting),     cmocka_unit_test(test_huge_enum_and_unique),
        cmocka_unit_test(test_duplicate_keys),   cmocka_unit_test(test_threads),
        cmocka_unit_test(test_check),            cmocka_unit_test(test_nul_in_a_property_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
