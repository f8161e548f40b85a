/* Fuzz the schema module with a schema and an instance: the input is the
 * schema's JSON, a NUL byte, then the instance's JSON (without a NUL, the
 * schema is validated against itself). Beyond "no crash, no hang, no
 * leak": the verdict-only run (the fast pass, schema_fast.c) and the full
 * run agree, and both agree with the frame machine alone (a max_depth
 * below 64 turns the fast pass off) whenever it stays within that depth;
 * an invalid verdict comes with errors and a valid one with none, every
 * error's instance location leads to a value of the instance, the result
 * written as JSON parses, and a compile error has a message. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "internal/schema.h"

static aw_json_doc *parse(const char *p, size_t n) {
    aw_json_doc *doc = NULL;
    if (aw_json_parse(p, n, NULL, &doc, NULL)) return NULL;
    return doc;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t schema_len = nul ? (size_t)(nul - text) : size;
    aw_json_doc *schema = parse(text, schema_len);
    if (!schema) return 0;
    /* a byte below 4 after the NUL picks draft-07 (1) and format assertion (2) */
    const char *rest = nul ? nul + 1 : text + size;
    size_t rest_len = (size_t)(text + size - rest);
    unsigned flags = 0;
    if (rest_len && (unsigned char)rest[0] < 4) flags = (unsigned char)rest[0], rest++, rest_len--;
    aw_json_doc *inst = nul ? parse(rest, rest_len) : NULL;
    const aw_json_value *instance = inst ? aw_json_doc_root(inst) : aw_json_doc_root(schema);
    aw_schema_options opts = {NULL, (flags & 1) ? AW_SCHEMA_DRAFT_7 : AW_SCHEMA_DRAFT_2020_12, (flags & 2) != 0, NULL,
                              NULL};
    aw_schema *s = NULL;
    aw_error err;
    int rc = aw_schema_compile(aw_json_doc_root(schema), &opts, &s, &err);
    if (rc) {
        if (err.code != rc || err.message[0] == '\0') abort();
    } else {
        aw_schema_result full, quick, frames;
        aw_schema_result_init(&full, NULL);
        aw_schema_result_init(&quick, NULL);
        aw_schema_result_init(&frames, NULL);
        aw_schema_validate_options fo = {50, 2000}, qo = {0, 2000}, mo = {0, 63};
        int r1 = aw_schema_validate(s, instance, &fo, &full, &err);
        int r2 = aw_schema_validate(s, instance, &qo, &quick, &err);
        int r3 = aw_schema_validate(s, instance, &mo, &frames, &err);
        if ((r1 == 0) != (r2 == 0)) abort();
        if (r1 && r1 != AW_ELIMIT) abort();
        if (r3 && r3 != AW_ELIMIT) abort();
        if (!r1 && !r3 && frames.valid != quick.valid) abort();
        if (!r1) {
            if (full.valid != quick.valid) abort();
            if (quick.error_count) abort();
            if (full.valid != (full.error_count == 0 && !full.truncated)) abort();
            for (size_t i = 0; i < full.error_count; i++) {
                const aw_schema_error *e = &full.errors[i];
                if (!e->instance_location || !e->keyword_location || !e->message || !e->message[0]) abort();
                /* locations are JSON Pointers (escaped keys), so unescape and follow */
                if (strlen(e->keyword_location) > e->keyword_location_len ||
                    strlen(e->instance_location) > e->instance_location_len)
                    abort();
                if (!aw__sc_pointer_get(instance, e->instance_location, e->instance_location_len) &&
                    e->instance_location_len < 500)
                    abort();
            }
            aw_buf out;
            aw_buf_init(&out, NULL);
            if (aw_schema_result_write(&full, &out)) abort();
            aw_json_doc *back = parse(out.data, out.len);
            if (!back) abort();
            aw_json_doc_free(back);
            aw_buf_free(&out);
        }
        aw_schema_result_free(&full);
        aw_schema_result_free(&quick);
        aw_schema_result_free(&frames);
        aw_schema_free(s);
    }
    aw_json_doc_free(inst);
    aw_json_doc_free(schema);
    return 0;
}
