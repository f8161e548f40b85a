/* aw_messages_encode: read the messages in their shape into the
 * normalized list, then write the chosen encoding from it. */
#include "internal/errors.h"
#include "internal/messages.h"

int aw_messages_encode(const aw_json_value *input, const aw_messages_options *opts, aw_buf *out,
                       aw_error *err) {
    static const aw_messages_options defaults = {AW_MESSAGES_AUTO, AW_MESSAGES_XML, false, NULL};
    if (!input || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!opts) opts = &defaults;
    if ((unsigned)opts->format > AW_MESSAGES_LANGCHAIN || (unsigned)opts->encoding > AW_MESSAGES_TEXT)
        return aw__error_set(err, AW_EINVAL, "invalid options");
    aw_messages_format fmt = opts->format;
    /* a list that tells nothing about its shape is read as OpenAI's, whose
     * errors ("'role' is missing") then say what is wrong with it */
    if (fmt == AW_MESSAGES_AUTO) fmt = aw_messages_detect(input);
    if (fmt == AW_MESSAGES_AUTO) fmt = AW_MESSAGES_OPENAI;
    aw__msg_list l;
    aw__msg_list_init(&l, opts->alloc);
    size_t start = out->len;
    int rc = aw__msg_read(&l, input, fmt, err);
    if (!rc)
        rc = opts->encoding == AW_MESSAGES_TEXT ? aw__msg_write_text(&l, opts, out, err)
                                                : aw__msg_write_xml(&l, opts, out, err);
    aw__msg_list_free(&l);
    if (rc) { /* leave out as it was */
        out->len = start;
        if (out->data) out->data[start] = '\0';
    }
    return rc;
}
