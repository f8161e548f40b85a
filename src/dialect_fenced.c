/* Calls in a ```json fence (or a fence with no language), as models write
 * them when asked for JSON:
 *
 *   ```json
 *   {"name": "get_weather", "arguments": {"city": "Paris"}}
 *   ```
 *
 * also with "parameters", a list of such objects, or {"tool_calls": [...]}
 * (the shape of this project's reference). The recovery filter finds the
 * fence and hands its body here (transport_recover.c): fences have no
 * trigger of their own. A fence that shows JSON data, naming no declared
 * tool, stays text. */
#include <string.h>

#include "internal/dialect.h"

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    (void)s, (void)p, (void)n, (void)at_end;
    return AW_DIALECT_NONE;
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    aw_text body = aw__dialect_trim(p, n);
    if (!body.len || (body.ptr[0] != '{' && body.ptr[0] != '[')) return AW_DIALECT_NOT_A_CALL;
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_parse_call_json(out->alloc, body.ptr, body.len, &doc, &repairs);
    if (rc || !doc) return rc ? rc : AW_DIALECT_NOT_A_CALL;
    const aw_json_value *root = aw_json_doc_root(doc);
    /* {"tool_calls": [...]} says it holds calls; a bare object or list is
     * calls only when it names declared tools */
    int explicit = aw_json_is_object(root) && aw_json_get(root, "tool_calls");
    rc = aw__dialect_json_calls(out, "fenced", root, raw, repairs, !explicit);
    aw_json_doc_free(doc);
    return rc;
}

const aw_dialect aw__dialect_fenced = {"fenced", AW_DIALECT_FENCED, NULL, 0, NULL, NULL, 0, scan, parse, NULL};
