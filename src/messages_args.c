/* A tool call's arguments as the compact JSON the thread shows. */
#include "internal/messages.h"

static int blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return 0;
    return 1;
}

int aw__msg_write_args(const aw__msg_call *c, const aw_allocator *alloc, aw_buf *out, bool *raw) {
    if (raw) *raw = false;
    const aw_json_value *args = c->args;
    if (!args) return aw_buf_append(out, "{}", 2);
    if (args->type != AW_JSON_STRING) return aw_json_write(args, NULL, out, NULL);
    const char *s = args->u.str.ptr;
    size_t n = args->u.str.len;
    /* Some providers send "" for a tool without parameters: that is no
     * arguments, not the text "". */
    if (blank(s, n)) return aw_buf_append(out, "{}", 2);
    aw_json_read_options ro = {alloc, 0, false};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(s, n, &ro, &doc, NULL);
    if (rc == AW_ENOMEM) return rc;
    if (rc) { /* not JSON: the model's text as it was, for the model to see */
        if (raw) *raw = true;
        return aw_buf_append(out, s, n);
    }
    rc = aw_json_write(aw_json_doc_root(doc), NULL, out, NULL);
    aw_json_doc_free(doc);
    return rc;
}
