/* What the HTTP providers say about a failed request: the message of an
 * error reply, whether its status is worth retrying, and any key taken
 * out of a text before it is shown. */
#include <stdio.h>
#include <string.h>

#include "agentwire/json.h"
#include "internal/provider_http.h"

int aw_hp_scrub(const char *key, const char *p, size_t n, aw_buf *out)
{
    size_t kn = key ? strlen(key) : 0;
    size_t i = 0;
    while (kn && i < n) {
        const char *hit = memmem(p + i, n - i, key, kn);
        if (!hit)
            break;
        if (aw_buf_append(out, p + i, (size_t)(hit - (p + i))) || aw_buf_append_str(out, "[redacted]"))
            return AW_ENOMEM;
        i = (size_t)(hit - p) + kn;
    }
    return aw_buf_append(out, p + i, n - i);
}


bool aw_hp_status_retryable(int status) { return status == 429 || status >= 500; }

/* The message an API error document carries: error.message (OpenAI,
 * Anthropic), error as a string, message, or detail (other servers). */
static bool json_error_message(const char *body, size_t n, char *out, size_t cap)
{
    aw_json_doc *doc = NULL;
    if (n == 0 || aw_json_parse(body, n, NULL, &doc, NULL))
        return false;
    const aw_json_value *root = aw_json_doc_root(doc);
    const aw_json_value *e = aw_json_get(root, "error");
    const aw_json_value *m = aw_json_get(e, "message");
    if (!aw_json_is_string(m))
        m = aw_json_is_string(e) ? e : aw_json_get(root, "message");
    if (!aw_json_is_string(m))
        m = aw_json_get(root, "detail");
    bool ok = aw_json_is_string(m) && m->u.str.len > 0;
    if (ok)
        aw_reply_copy(out, cap, m->u.str.ptr, m->u.str.len);
    aw_json_doc_free(doc);
    return ok;
}

void aw_hp_error_text(int status, const char *body, size_t n, char *out, size_t cap)
{
    const char *reason = aw_http_reason(status);
    int k = snprintf(out, cap, "%d%s%s", status, *reason ? " " : "", reason);
    if (k < 0 || (size_t)k >= cap - 3)
        return;
    char msg[512];
    if (!json_error_message(body, n, msg, sizeof msg)) {
        /* not the API's error document: the start of what came, on one line */
        size_t m = 0, i = 0;
        for (; i < n && m < 200; i++) {
            char ch = body[i];
            if (ch == '\r' || ch == '\n' || ch == '\t')
                ch = ' ';
            if (ch == ' ' && (m == 0 || msg[m - 1] == ' '))
                continue;
            msg[m++] = ch;
        }
        /* cut before a character, never inside one */
        if (i < n && ((unsigned char)body[i] & 0xC0) == 0x80)
            while (m > 0 && ((unsigned char)msg[--m] & 0xC0) == 0x80)
                ;
        while (m > 0 && msg[m - 1] == ' ')
            m--;
        msg[m] = 0;
    }
    if (msg[0])
        snprintf(out + k, cap - (size_t)k, ": %s", msg);
}
