/* Fuzz contract validation and parsing: any bytes against llmResponse or
 * llmQuery, lenient or strict, with or without --extract (the first byte
 * chooses). Validate and parse must agree (same verdict, parse's error is
 * validate's first issue); every issue is well-formed; a parse result
 * builds back into XML that parses to the same JSON. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static aw_contract *contracts[2];

static void write_json(const aw_json_doc *d, aw_buf *b) {
    aw_buf_clear(b);
    if (aw_json_write(aw_json_doc_root(d), NULL, b, NULL)) abort();
}

static void check_issue(const aw_contract_issue *is) {
    if (!aw_contract_code_name(is->code)) abort();
    if (is->line < 1 || is->column < 1) abort();
    if (!memchr(is->path, '\0', sizeof is->path) || !memchr(is->message, '\0', sizeof is->message)) abort();
    if (is->path[0] && is->path[0] != '/') abort();
    if (!is->message[0]) abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size < 1) return 0;
    if (!contracts[0]) {
        if (aw_contract_builtin("llmResponse", NULL, &contracts[0], NULL) ||
            aw_contract_builtin("llmQuery", NULL, &contracts[1], NULL))
            abort();
    }
    const aw_contract *c = contracts[data[0] & 1];
    aw_contract_options o;
    memset(&o, 0, sizeof o);
    o.strict = (data[0] & 2) != 0;
    o.extract = (data[0] & 4) != 0;
    if (data[0] & 8) o.max_depth = 1 + (data[0] >> 4); /* small limits too */
    const char *xml = (const char *)data + 1;
    size_t len = size - 1;

    aw_contract_issue *issues = NULL;
    size_t n = 0;
    aw_error verr, perr;
    int vrc = aw_contract_validate(c, xml, len, &o, &issues, &n, &verr);
    if (vrc != 0 && vrc != AW_EVALID) abort();
    if ((vrc == 0) != (n == 0)) abort();
    for (size_t i = 0; i < n; i++) check_issue(&issues[i]);

    aw_json_doc *doc = NULL;
    int prc = aw_contract_parse(c, xml, len, &o, &doc, &perr);
    if (prc != vrc) abort();
    if (prc) {
        if (doc) abort();
        if (strcmp(perr.message, verr.message) || perr.line != issues[0].line || perr.column != issues[0].column) abort();
    } else {
        /* parse -> build -> parse is a fixed point */
        aw_buf a, xml2, b;
        aw_buf_init(&a, NULL);
        aw_buf_init(&xml2, NULL);
        aw_buf_init(&b, NULL);
        write_json(doc, &a);
        aw_error err;
        if (aw_contract_build(c, aw_json_doc_root(doc), &xml2, &err)) abort();
        aw_contract_options o2;
        memset(&o2, 0, sizeof o2);
        o2.strict = o.strict;
        aw_json_doc *doc2 = NULL;
        if (aw_contract_parse(c, xml2.data, xml2.len, &o2, &doc2, &err)) abort();
        write_json(doc2, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len)) abort();
        aw_json_doc_free(doc2);
        aw_buf_free(&a);
        aw_buf_free(&xml2);
        aw_buf_free(&b);
    }
    aw_json_doc_free(doc);
    aw_free(NULL, issues);
    return 0;
}
