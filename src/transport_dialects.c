/* The native calls that came with the reply. (Calls written in the text in
 * other dialects are recovered by transport_recover.c and the readers in
 * dialect_*.c.) */
#include <stdio.h>
#include <string.h>

#include "internal/errors.h"
#include "internal/transport_extract.h"

int aw_extractor_native_calls(aw_extractor *x, const aw_json_value *calls, aw_x_fn fn, void *ctx,
                              aw_error *err) {
    if (!x || !fn) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!aw_json_is_array(calls)) return aw__error_set(err, AW_ETYPE, "native calls must be a JSON array");
    x->fn = fn;
    x->ctx = ctx;
    int rc = 0;
    for (size_t i = 0; i < calls->u.arr.count && !rc; i++) {
        const aw_json_value *c = &calls->u.arr.items[i];
        const aw_json_value *f = aw_json_get(c, "function");
        const aw_json_value *def = aw_json_is_object(f) ? f : c;
        const aw_json_value *name = aw_json_get(def, "name");
        if (!aw_json_is_string(name)) {
            rc = aw__error_set(err, AW_ETYPE, "native call %zu: 'name' must be a string", i);
            break;
        }
        aw_text tool = {name->u.str.ptr, name->u.str.len};
        int is_final = tool.len == strlen(AW_TOOL_FINAL_REPORT) && !memcmp(tool.ptr, AW_TOOL_FINAL_REPORT, tool.len);
        if (x->t->mode == AW_TRANSPORT_XML) {
            char msg[200];
            snprintf(msg, sizeof msg, "Native tool calls are ignored in this session; call `%.*s` with an XML tag in one of this turn's slots.",
                     (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_NOT_ALLOWED_IN_MODE, msg);
            continue;
        }
        if (x->t->mode == AW_TRANSPORT_XML_FINAL && is_final) {
            /* the XML FINAL tag takes precedence: the report travels as XML */
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_NOT_ALLOWED_IN_MODE,
                                    "The final report travels as the FINAL XML tag in this session, not as a native call.");
            continue;
        }
        const aw_json_value *args = aw_json_get(def, "arguments");
        if (!args) args = aw_json_get(def, "args");
        if (!args) args = aw_json_get(def, "input");
        if (aw_json_is_string(args)) {
            aw_text payload = {args->u.str.ptr, args->u.str.len};
            rc = aw__extract_tool_call(x, AW__X_NO_TEXT, tool, payload, "native", NULL);
            if (rc > 0) rc = 0;
        } else if (aw_json_is_object(args)) {
            rc = aw__extract_emit_call(x, AW__X_NO_TEXT, tool, args, AW__X_NO_TEXT, "native", 0);
        } else {
            char msg[160];
            snprintf(msg, sizeof msg, "Tool `%.*s` payload is not valid JSON. Provide a JSON object.",
                     (int)(tool.len > 64 ? 64 : tool.len), tool.ptr);
            rc = aw__extract_reject(x, AW__X_NO_TEXT, tool, AW_REJECT_INVALID_JSON, msg);
        }
    }
    if (rc == AW_ESTOP) return aw__error_set(err, AW_ESTOP, "stopped by the callback");
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    return rc;
}
