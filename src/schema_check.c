/* Is a schema valid? Validated against its dialect's meta-schema (built
 * in, or registered for a custom $schema) with formats asserted, then
 * compiled, so that what only compiling finds (a pattern PCRE2 refuses, a
 * $ref that goes nowhere, a loop of references) counts too. */
#include <string.h>

#include "internal/errors.h"
#include "internal/schema_eval.h"

int aw_schema_check(const aw_json_value *schema, const aw_schema_options *opts, aw_schema_result *r, aw_error *err) {
    static const aw_schema_options defaults;
    if (!schema || !r) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!opts) opts = &defaults;
    const char *meta = aw_schema_draft_uri(opts->default_draft);
    size_t meta_len = strlen(meta);
    const aw_json_value *declared = aw_json_get(schema, "$schema");
    if (aw_json_is_string(declared)) meta = declared->u.str.ptr, meta_len = declared->u.str.len;
    /* {"$ref": META}, compiled with the caller's registry */
    aw_json_doc *doc = aw_json_doc_new(opts->alloc);
    aw_json_value *ref = doc ? aw_json_new_object(doc) : NULL;
    if (!ref || aw_json_object_set_string(doc, ref, "$ref", meta, meta_len)) {
        aw_json_doc_free(doc);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    aw_schema_options mopts = *opts;
    mopts.format_assert = true;
    mopts.base_uri = NULL;
    aw_schema *m = NULL;
    aw_error cerr;
    int rc = aw_schema_compile(ref, &mopts, &m, &cerr);
    aw_json_doc_free(doc);
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    if (rc) {
        /* an unknown $schema: not a dialect we know */
        r->valid = false;
        r->error_count = 0;
        r->truncated = false;
        return aw__sc_result_add(r, "", "/$schema", cerr.message, err);
    }
    rc = aw_schema_validate(m, schema, NULL, r, err);
    aw_schema_free(m);
    if (rc || !r->valid) return rc;
    aw_schema *s = NULL;
    rc = aw_schema_compile(schema, opts, &s, &cerr);
    aw_schema_free(s);
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) return 0;
    /* "LOCATION: message" from the compiler */
    const char *msg = cerr.message, *sep = strstr(msg, ": ");
    char where[AW_ERROR_MESSAGE_MAX];
    size_t wl = sep ? (size_t)(sep - msg) : 0;
    memcpy(where, msg, wl);
    where[wl] = '\0';
    r->valid = false;
    return aw__sc_result_add(r, where, where, sep ? sep + 2 : msg, err);
}
