/* Fuzz the JSON repairer. Beyond "no crash": a failure names its reason and
 * place and leaves the output buffer as it was; a success gives text the
 * strict reader accepts, unchanged input (and no steps) exactly when the
 * input was valid JSON, and a fixed point: repairing the output again gives
 * the same bytes and no steps. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    const char *in = (const char *)data;
    aw_buf out;
    aw_buf_init(&out, NULL);
    if (aw_buf_append(&out, "<", 1)) abort(); /* output is appended after this */
    unsigned steps = 12345;
    aw_error err;
    int rc = aw_json_repair(in, size, NULL, &out, &steps, &err);
    if (rc) {
        if (rc != AW_ESYNTAX && rc != AW_ELIMIT) abort();
        if (err.code != rc || err.message[0] == '\0' || err.line == 0 || err.column == 0) abort();
        if (steps != 0 || out.len != 1 || out.data[1] != '\0') abort();
        aw_buf_free(&out);
        return 0;
    }
    const char *o = out.data + 1;
    size_t olen = out.len - 1;
    if (o[olen] != '\0') abort();

    aw_json_doc *doc = NULL;
    if (aw_json_parse(o, olen, NULL, &doc, &err)) abort();
    aw_json_doc_free(doc);

    /* valid input <=> unchanged output with no steps */
    doc = NULL;
    int valid = aw_json_parse(in, size, NULL, &doc, &err) == 0;
    aw_json_doc_free(doc);
    if (valid != (steps == 0)) abort();
    if (valid && (olen != size || memcmp(o, in, size) != 0)) abort();
    for (unsigned b = 1; b <= AW_REPAIR_MISSING_VALUE; b <<= 1)
        if ((steps & b) && !aw_json_repair_step_name(b)) abort();
    if (steps & ~(unsigned)((AW_REPAIR_MISSING_VALUE << 1) - 1)) abort();

    aw_buf again;
    aw_buf_init(&again, NULL);
    unsigned steps2 = 1;
    if (aw_json_repair(o, olen, NULL, &again, &steps2, &err)) abort();
    if (steps2 != 0 || again.len != olen || memcmp(again.data, o, olen) != 0) abort();
    aw_buf_free(&again);
    aw_buf_free(&out);
    return 0;
}
