/* Allocation failures across the schema module: every allocation made
 * while a registry is filled, a schema compiled (references into the
 * registry and into the built-in meta-schemas, patterns, a hashed enum,
 * formats, unevaluated*, $dynamicRef) and instances validated (errors,
 * uniqueItems, duplicate keys, propertyNames, a catastrophic pattern) is
 * failed in turn, then again with the allocator out of memory for good
 * from the N-th call on; and the same for aw_schema_check. Each run must
 * free everything and either fail with AW_ENOMEM or give exactly the
 * answer of a run without failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agentwire/agentwire.h"
#include "failalloc.h"

#define WRONG_RESULT 1

static const char other_json[] =
    "{\"$id\":\"https://example.com/other.json\",\"$defs\":{\"path\":{\"type\":\"string\",\"pattern\":\"^/\"},"
    "\"tree\":{\"$dynamicAnchor\":\"node\",\"type\":\"object\",\"properties\":{\"kids\":{\"type\":\"array\","
    "\"items\":{\"$dynamicRef\":\"#node\"}}}}}}";

static const char schema_json[] =
    "{\"$id\":\"https://example.com/tool.json\",\"type\":\"object\","
    "\"properties\":{\"path\":{\"$ref\":\"other.json#/$defs/path\"},"
    "\"mode\":{\"enum\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",1,2.5,{\"k\":[1]}]},"
    "\"when\":{\"format\":\"date-time\"},\"tags\":{\"type\":\"array\",\"uniqueItems\":true,\"items\":{\"type\":\"string\"}},"
    "\"tree\":{\"$ref\":\"other.json#/$defs/tree\"},\"meta\":{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"},"
    "\"slow\":{\"pattern\":\"^(a+)+$\"},\"n\":{\"multipleOf\":0.01,\"maximum\":100}},"
    "\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}},\"propertyNames\":{\"maxLength\":20},"
    "\"required\":[\"path\"],\"anyOf\":[{\"required\":[\"mode\"]},{\"required\":[\"tags\"]}],"
    "\"unevaluatedProperties\":false}";

static const char *const instances[] = {
    "{\"path\":\"/etc\",\"mode\":{\"k\":[1.0]},\"tags\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\"],"
    "\"x-1\":3,\"n\":0.1,\"tree\":{\"kids\":[{\"kids\":[]}]},\"meta\":{\"type\":\"string\"}}",
    "{\"path\":\"etc\",\"mode\":\"z\",\"when\":\"yesterday\",\"tags\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"a\"],"
    "\"x-1\":\"s\",\"n\":0.001,\"tree\":{\"kids\":[1]},\"meta\":{\"type\":5},\"slow\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\","
    "\"a-very-long-property-name\":1,\"extra\":true,\"extra\":false}",
    "[1,2]",
};

/* Compile and validate everything with allocator a, appending the results
 * to out (whose own allocator is the default). */
static int run_all(const aw_allocator *a, aw_buf *out) {
    aw_json_read_options ro = {.alloc = a};
    aw_json_doc *other = NULL, *schema = NULL;
    aw_error err;
    aw_schema_registry *reg = NULL;
    aw_schema *s = NULL;
    aw_schema_result r;
    aw_schema_result_init(&r, a);
    int rc = aw_json_parse(other_json, sizeof other_json - 1, &ro, &other, &err);
    if (!rc) rc = aw_json_parse(schema_json, sizeof schema_json - 1, &ro, &schema, &err);
    if (!rc && !(reg = aw_schema_registry_new(a))) rc = AW_ENOMEM;
    if (!rc) rc = aw_schema_registry_add(reg, "https://example.com/other.json", aw_json_doc_root(other), &err);
    aw_schema_options opts = {a, AW_SCHEMA_DRAFT_2020_12, true, reg, NULL};
    if (!rc) rc = aw_schema_compile(aw_json_doc_root(schema), &opts, &s, &err);
    if (!rc) aw_schema_registry_free(reg), reg = NULL; /* the schema keeps what it needs */
    for (size_t i = 0; !rc && i < sizeof instances / sizeof instances[0]; i++) {
        aw_json_doc *inst = NULL;
        rc = aw_json_parse(instances[i], strlen(instances[i]), &ro, &inst, &err);
        if (!rc) rc = aw_schema_validate(s, aw_json_doc_root(inst), NULL, &r, &err);
        if (!rc && (aw_schema_result_write(&r, out) || aw_buf_putc(out, '\n'))) rc = WRONG_RESULT;
        aw_schema_validate_options quick = {0, 0};
        if (!rc) rc = aw_schema_validate(s, aw_json_doc_root(inst), &quick, &r, &err);
        if (!rc && aw_buf_printf(out, "quick %d\n", r.valid)) rc = WRONG_RESULT;
        aw_json_doc_free(inst);
    }
    aw_schema_result_free(&r);
    aw_schema_free(s);
    aw_schema_registry_free(reg);
    aw_json_doc_free(other);
    aw_json_doc_free(schema);
    return rc;
}

static int run_check(const aw_allocator *a, aw_buf *out) {
    static const char *const schemas[] = {
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"strnig\",\"minLength\":-1}}}",
        ("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"items\":[{\"$ref\":\"#/definitions/x\"}],"
         "\"definitions\":{\"x\":{\"type\":\"string\"}}}"),
        "{\"$ref\":\"#/$defs/nothing\"}",
    };
    aw_json_read_options ro = {.alloc = a};
    aw_schema_result r;
    aw_schema_result_init(&r, a);
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof schemas / sizeof schemas[0]; i++) {
        aw_json_doc *doc = NULL;
        aw_error err;
        rc = aw_json_parse(schemas[i], strlen(schemas[i]), &ro, &doc, &err);
        aw_schema_options opts = {a, AW_SCHEMA_DRAFT_2020_12, false, NULL, NULL};
        if (!rc) rc = aw_schema_check(aw_json_doc_root(doc), &opts, &r, &err);
        if (!rc && (aw_schema_result_write(&r, out) || aw_buf_putc(out, '\n'))) rc = WRONG_RESULT;
        aw_json_doc_free(doc);
    }
    aw_schema_result_free(&r);
    return rc;
}

typedef struct job {
    int (*fn)(const aw_allocator *a, aw_buf *out);
    aw_buf want;
    int have;
} job;

/* One run: ENOMEM, or success with the reference's output. */
static int one_run(const aw_allocator *a, void *ctx) {
    job *j = ctx;
    aw_buf got;
    aw_buf_init(&got, NULL);
    int rc = j->fn(a, &got);
    if (rc == 0) {
        if (!j->have) {
            j->have = 1;
            aw_buf_append(&j->want, got.data, got.len);
        } else if (got.len != j->want.len || memcmp(got.data, j->want.data, got.len)) {
            /* cmocka stops the test here: free what the run made */
            fprintf(stderr, "result differs:\n--- want\n%s--- got\n%s", j->want.data, got.data);
            rc = WRONG_RESULT;
        }
    } else if (rc != AW_ENOMEM) {
        fprintf(stderr, "a failure other than out of memory: %d\n", rc);
        rc = WRONG_RESULT;
    }
    aw_buf_free(&got);
    return rc;
}

static void test_compile_and_validate(void **state) {
    (void)state;
    job j = {run_all, {0}, 0};
    aw_buf_init(&j.want, NULL);
    long calls = aw_failalloc_run(one_run, &j, 0);
    aw_failalloc_run_sticky(one_run, &j);
    printf("compile and validate: each of %ld allocations failed in turn\n", calls);
    /* the answers are the real ones: one valid instance, two invalid */
    assert_non_null(strstr(j.want.data, "{\"valid\":true}\nquick 1\n{\"valid\":false,"));
    assert_non_null(strstr(j.want.data, "could not be matched within its limits"));
    assert_true(calls > 100);
    aw_buf_free(&j.want);
}

static void test_check(void **state) {
    (void)state;
    job j = {run_check, {0}, 0};
    aw_buf_init(&j.want, NULL);
    long calls = aw_failalloc_run(one_run, &j, 0);
    aw_failalloc_run_sticky(one_run, &j);
    printf("meta-schema check: each of %ld allocations failed in turn\n", calls);
    assert_non_null(strstr(j.want.data, "cannot resolve"));
    assert_true(calls > 100);
    aw_buf_free(&j.want);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_and_validate),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
