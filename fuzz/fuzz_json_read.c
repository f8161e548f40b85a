/* Fuzz the JSON reader. Beyond "no crash": whatever parses must write, and
 * what is written must parse back to an equal document and write to the
 * same bytes (compact and indented). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static int has_nonfinite(const aw_json_value *v) {
    /* Infinity is written as null, as JSON.stringify does, so equality is
     * not expected for documents that hold one. */
    switch (aw_json_type_of(v)) {
    case AW_JSON_NUMBER: return !isfinite(v->u.num.d);
    case AW_JSON_ARRAY:
        for (size_t i = 0; i < v->u.arr.count; i++)
            if (has_nonfinite(&v->u.arr.items[i])) return 1;
        return 0;
    case AW_JSON_OBJECT:
        for (size_t i = 0; i < v->u.obj.count; i++)
            if (has_nonfinite(&v->u.obj.members[i].value)) return 1;
        return 0;
    default: return 0;
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_json_parse((const char *)data, size, NULL, &doc, &err)) {
        if (err.code == 0 || err.message[0] == '\0') abort();
        if (err.code != AW_ENOMEM && (err.line == 0 || err.column == 0)) abort();
        return 0;
    }
    aw_buf a, b, ind;
    aw_buf_init(&a, NULL);
    aw_buf_init(&b, NULL);
    aw_buf_init(&ind, NULL);
    const aw_json_value *root = aw_json_doc_root(doc);
    if (aw_json_write(root, NULL, &a, &err)) abort();
    aw_json_doc *doc2 = NULL;
    if (aw_json_parse(a.data, a.len, NULL, &doc2, &err)) abort();
    if (!has_nonfinite(root) && !aw_json_equal(root, aw_json_doc_root(doc2))) abort();
    if (aw_json_write(aw_json_doc_root(doc2), NULL, &b, &err)) abort();
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
    aw_json_write_options wo = {.indent = 2};
    aw_json_doc *doc3 = NULL;
    if (aw_json_write(root, &wo, &ind, &err)) abort();
    if (aw_json_parse(ind.data, ind.len, NULL, &doc3, &err)) abort();
    aw_buf_clear(&b);
    if (aw_json_write(aw_json_doc_root(doc3), NULL, &b, &err)) abort();
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
    aw_json_doc_free(doc3);
    aw_json_doc_free(doc2);
    aw_json_doc_free(doc);
    aw_buf_free(&a);
    aw_buf_free(&b);
    aw_buf_free(&ind);
    return 0;
}
