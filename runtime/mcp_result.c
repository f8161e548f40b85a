/* A tools/call result as the model reads it.
 *
 * Text parts are the answer. Images, audio and resources come as base64
 * or as whole documents; pasted into the model's context they would cost
 * thousands of tokens of noise each, so they are described instead, by
 * type, MIME type and size ("[image: image/png, 34 KB]"). A tool that
 * answers only with structuredContent has its JSON shown, so the model
 * still sees the answer. */
#include <stdio.h>
#include <string.h>

#include "internal/mcp_impl.h"

static aw_text str_of(const aw_json_value *v)
{
    return aw_json_is_string(v) ? (aw_text){v->u.str.ptr, v->u.str.len} : (aw_text){"", 0};
}

/* Bytes that base64 text decodes to (whitespace ignored). */
static uint64_t base64_size(aw_text b64)
{
    uint64_t chars = 0;
    for (size_t i = 0; i < b64.len; i++) {
        char c = b64.ptr[i];
        if (c != '=' && c != ' ' && c != '\n' && c != '\r' && c != '\t')
            chars++;
    }
    return chars * 3 / 4;
}

static int put_size(aw_buf *out, uint64_t bytes)
{
    if (bytes < 1024)
        return aw_buf_printf(out, "%llu bytes", (unsigned long long)bytes);
    if (bytes < 1024 * 1024)
        return aw_buf_printf(out, "%.0f KB", (double)bytes / 1024.0);
    return aw_buf_printf(out, "%.1f MB", (double)bytes / (1024.0 * 1024.0));
}

static int put_mime(aw_buf *out, const aw_json_value *obj)
{
    aw_text mime = str_of(aw_json_get(obj, "mimeType"));
    if (!mime.len)
        return 0;
    return aw_buf_append(out, ", ", 2) || aw_buf_append(out, mime.ptr, mime.len > 100 ? 100 : mime.len);
}

/* Names and URIs come from the server: cut, so a described part stays short. */
static int put_short(aw_buf *out, aw_text t)
{
    return aw_buf_append(out, t.ptr, t.len > 300 ? 300 : t.len);
}

static int describe_binary(aw_buf *out, const char *what, const aw_json_value *part)
{
    aw_text mime = str_of(aw_json_get(part, "mimeType"));
    return aw_buf_printf(out, "[%s: ", what) || aw_buf_append(out, mime.ptr, mime.len > 100 ? 100 : mime.len) ||
           (mime.len && aw_buf_append(out, ", ", 2)) ||
           put_size(out, base64_size(str_of(aw_json_get(part, "data")))) || aw_buf_putc(out, ']');
}

static int describe_resource(aw_buf *out, const aw_json_value *part)
{
    const aw_json_value *res = aw_json_get(part, "resource");
    const aw_json_value *text = aw_json_get(res, "text");
    uint64_t size = aw_json_is_string(text) ? text->u.str.len : base64_size(str_of(aw_json_get(res, "blob")));
    return aw_buf_append_str(out, "[resource: ") || put_short(out, str_of(aw_json_get(res, "uri"))) ||
           put_mime(out, res) || aw_buf_append(out, ", ", 2) || put_size(out, size) || aw_buf_putc(out, ']');
}

static int describe_link(aw_buf *out, const aw_json_value *part)
{
    aw_text name = str_of(aw_json_get(part, "name"));
    int rc = aw_buf_append_str(out, "[resource link: ");
    if (!rc && name.len)
        rc = put_short(out, name) || aw_buf_append(out, " (", 2);
    rc = rc || put_short(out, str_of(aw_json_get(part, "uri"))) || (name.len && aw_buf_putc(out, ')')) ||
         put_mime(out, part);
    const aw_json_value *size = aw_json_get(part, "size");
    if (!rc && aw_json_is_number(size) && size->u.num.d >= 0 && size->u.num.d < 1e18)
        rc = aw_buf_append(out, ", ", 2) || put_size(out, (uint64_t)size->u.num.d);
    return rc || aw_buf_putc(out, ']');
}

static int describe_part(aw_buf *out, const aw_json_value *part, bool *was_text)
{
    aw_text type = str_of(aw_json_get(part, "type"));
    *was_text = false;
#define IS(s) (type.len == sizeof(s) - 1 && memcmp(type.ptr, s, type.len) == 0)
    if (IS("text")) {
        *was_text = true;
        aw_text t = str_of(aw_json_get(part, "text"));
        return aw_buf_append(out, t.ptr, t.len);
    }
    if (IS("image"))
        return describe_binary(out, "image", part);
    if (IS("audio"))
        return describe_binary(out, "audio", part);
    if (IS("resource"))
        return describe_resource(out, part);
    if (IS("resource_link"))
        return describe_link(out, part);
#undef IS
    /* a type of a later revision is named; anything else is not repeated */
    bool named = type.len > 0 && type.len <= 32;
    for (size_t i = 0; named && i < type.len; i++)
        named = (type.ptr[i] >= 'a' && type.ptr[i] <= 'z') || (type.ptr[i] >= 'A' && type.ptr[i] <= 'Z') ||
                (type.ptr[i] >= '0' && type.ptr[i] <= '9') || type.ptr[i] == '_' || type.ptr[i] == '-';
    if (!named)
        return aw_buf_append_str(out, "[content of an unknown type]");
    return aw_buf_putc(out, '[') || aw_buf_append(out, type.ptr, type.len) || aw_buf_append_str(out, " content]");
}

int mcp_result_text(const aw_json_value *result, aw_buf *out, bool *is_error, const aw_json_value **structured)
{
    const aw_json_value *err = aw_json_get(result, "isError");
    *is_error = aw_json_is_bool(err) && err->u.b;
    const aw_json_value *sc = aw_json_get(result, "structuredContent");
    *structured = sc && !aw_json_is_null(sc) ? sc : NULL;
    const aw_json_value *content = aw_json_get(result, "content");
    size_t n = aw_json_count(content), texts = 0, parts = 0;
    if (!aw_json_is_array(content))
        n = 0;
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *part = aw_json_at(content, i);
        if (!aw_json_is_object(part))
            continue;
        if (parts++ && aw_buf_putc(out, '\n'))
            return AW_ENOMEM;
        bool was_text;
        if (describe_part(out, part, &was_text))
            return AW_ENOMEM;
        texts += was_text;
    }
    if (!texts && *structured) {
        if ((parts && aw_buf_putc(out, '\n')) || aw_json_write(*structured, NULL, out, NULL))
            return AW_ENOMEM;
    }
    return 0;
}
