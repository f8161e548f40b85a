/* Granite 3.0's special token and a JSON list of calls after it:
 *
 *   <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
 *
 * (Granite 3.1 and later write <tool_call> instead: dialect_hermes.c.)
 * The candidate ends where the JSON value closes, or at the end of the
 * reply; a reply that ends inside the arguments is never run. */
#include <string.h>

#include "internal/dialect.h"

static const char marker[] = "<|tool_call|>";
#define MARKER_LEN (sizeof marker - 1)

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    if (!s->pos) {
        size_t i = MARKER_LEN;
        while (i < n && aw__dialect_is_space((unsigned char)p[i])) i++;
        if (i >= n) return at_end ? AW_DIALECT_NONE : AW_DIALECT_MORE;
        if (p[i] != '[' && p[i] != '{') return AW_DIALECT_NONE;
        s->pos = i;
    }
    return aw__dialect_scan_value(s, p, n, at_end, 0);
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    aw_text body = aw__dialect_trim(p + MARKER_LEN, n - MARKER_LEN);
    aw_json_doc *doc;
    unsigned repairs;
    int rc = aw__dialect_marked_json(out, "granite", body, 0,
                                     "After <|tool_call|> write one complete JSON list: "
                                     "[{\"name\": \"NAME\", \"arguments\": {...}}].",
                                     &doc, &repairs);
    if (rc) return rc == AW_DIALECT_REPORTED ? 0 : rc;
    rc = aw__dialect_json_calls(out, "granite", aw_json_doc_root(doc), raw, repairs, 0);
    aw_json_doc_free(doc);
    if (rc == AW_DIALECT_NOT_A_CALL)
        return out->malformed(out, "granite", AW__DIALECT_NO_TEXT, AW_REJECT_INVALID_JSON,
                              "After <|tool_call|> write a JSON list of {\"name\": \"NAME\", \"arguments\": {...}}.");
    return rc;
}

static const aw_dialect_trigger triggers[] = {{marker, MARKER_LEN, AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_granite = {"granite", AW_DIALECT_GRANITE, triggers, 1, NULL, NULL, 0, scan, parse, NULL};
