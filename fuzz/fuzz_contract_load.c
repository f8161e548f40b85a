/* Fuzz the contract loader: any bytes as a contract. The bytes up to the
 * first NUL are the contract's JSON; the bytes after it, when there are
 * any, are a document to check against it (JSON text cannot hold a raw
 * NUL, so the split costs the loader nothing). A contract that loads must
 * give a prompt, validate a few fixed documents and the given one without
 * crashing, agree between validate and parse, and build every parse result
 * back into XML that parses to the same JSON. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static void write_json(const aw_json_doc *d, aw_buf *b) {
    aw_buf_clear(b);
    if (aw_json_write(aw_json_doc_root(d), NULL, b, NULL)) abort();
}

static void check(const aw_contract *c, const char *xml, size_t len, bool strict) {
    aw_contract_options o;
    memset(&o, 0, sizeof o);
    o.strict = strict;
    aw_contract_issue *issues = NULL;
    size_t n = 0;
    aw_error err;
    int vrc = aw_contract_validate(c, xml, len, &o, &issues, &n, &err);
    if (vrc != 0 && vrc != AW_EVALID) abort();
    if ((vrc == 0) != (n == 0)) abort();
    for (size_t i = 0; i < n; i++)
        if (!aw_contract_code_name(issues[i].code) || issues[i].line < 1 || issues[i].column < 1) abort();
    aw_free(NULL, issues);
    aw_json_doc *doc = NULL;
    int prc = aw_contract_parse(c, xml, len, &o, &doc, &err);
    if (prc != vrc) abort();
    if (prc == 0) {
        aw_buf a, x, b;
        aw_buf_init(&a, NULL);
        aw_buf_init(&x, NULL);
        aw_buf_init(&b, NULL);
        write_json(doc, &a);
        int brc = aw_contract_build(c, aw_json_doc_root(doc), &x, &err);
        /* a list with a maximum length can be refused: build writes its
         * items with ", " where the document may have had "," */
        if (brc && !(brc == AW_EVALID && strstr(err.message, "characters long"))) abort();
        if (!brc) {
            aw_json_doc *doc2 = NULL;
            if (aw_contract_parse(c, x.data, x.len, NULL, &doc2, &err)) abort();
            write_json(doc2, &b);
            if (a.len != b.len || memcmp(a.data, b.data, a.len)) abort();
            aw_json_doc_free(doc2);
        }
        aw_buf_free(&a);
        aw_buf_free(&x);
        aw_buf_free(&b);
    }
    aw_json_doc_free(doc);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t json_len = nul ? (size_t)(nul - text) : size;
    aw_contract *c = NULL;
    aw_error err;
    if (aw_contract_load(text, json_len, NULL, &c, &err)) {
        if (c || !err.message[0]) abort();
        return 0;
    }
    const char *name = aw_contract_name(c), *version = aw_contract_version(c);
    if (!name || !version) abort();

    aw_buf prompt;
    aw_buf_init(&prompt, NULL);
    if (aw_contract_prompt(c, &prompt)) abort();
    aw_buf_free(&prompt);

    /* fixed documents: an empty element of every likely root name, the
     * built-in shapes, prose */
    static const char *const fixed[] = {
        ("<llmResponse><response>r</response><analysis><subject name=\"a\" description=\"b\" isNew=\"true\">"
         "<keyword term=\"t\" confidence=\"0.5\"/></subject><summaryUpdate/></analysis></llmResponse>"),
        "<a x=\"1\" y=\"true\" z=\"a, b\">text<b>1.5</b><c/><c/></a>",
        "not xml",
    };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) check(c, fixed[i], strlen(fixed[i]), i & 1);
    aw_buf root;
    aw_buf_init(&root, NULL);
    if (aw_buf_printf(&root, "<%s/>", name)) abort();
    check(c, root.data, root.len, false);
    aw_buf_clear(&root);
    if (aw_buf_printf(&root, "<%s a=\"1\">x</%s>", name, name)) abort();
    check(c, root.data, root.len, true);
    aw_buf_free(&root);

    /* the document given after the NUL, lenient and strict */
    if (nul) {
        const char *xml = nul + 1;
        size_t len = size - json_len - 1;
        check(c, xml, len, false);
        check(c, xml, len, true);
    }
    aw_contract_free(c);
    return 0;
}
