/* Content parts that are not text: images, audio, documents and files are
 * described in one line ("[image: image/png, 34 KB]"), thinking blocks are
 * left out. A prompt is read by a model as text: base64 pasted into it is
 * tokens spent on noise (a 34 KB screenshot is some 60,000 tokens), and
 * Anthropic's thinking signatures are opaque bytes meant for the API alone.
 *
 * The shapes read:
 *   OpenAI     {"type": "image_url", "image_url": {"url"} | "url"}
 *              {"type": "input_audio", "input_audio": {"data", "format"}}
 *              {"type": "file", "file": {"file_data", "filename", "file_id"}}
 *   Anthropic  {"type": "image" | "document", "source": {"type": "base64",
 *              "media_type", "data"} | {"type": "url", "url"} |
 *              {"type": "text", "media_type", "data"} | {"type": "file", "file_id"}}
 *              {"type": "thinking" | "redacted_thinking", ...}
 *   LangChain  {"type": "image" | "audio" | "file", "source_type": "base64" |
 *              "url" | "id", "data", "mime_type", "url", "id"}
 * A data URL ("data:image/png;base64,...") gives its media type and data. */
#include <stdio.h>
#include <string.h>

#include "internal/messages.h"

static bool str_is(const aw_json_value *v, const char *s) {
    return aw_json_is_string(v) && v->u.str.len == strlen(s) && memcmp(v->u.str.ptr, s, v->u.str.len) == 0;
}

static aw_text text_of(const aw_json_value *v) {
    aw_text t = {NULL, 0};
    if (aw_json_is_string(v)) {
        t.ptr = v->u.str.ptr;
        t.len = v->u.str.len;
    }
    return t;
}

/* The label a media part is described with, or NULL. */
static const char *media_label(const aw_json_value *type) {
    static const char *const kinds[][2] = {{"image_url", "image"}, {"image", "image"},   {"input_audio", "audio"},
                                           {"audio", "audio"},     {"file", "file"},     {"document", "document"},
                                           {"video", "video"}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (str_is(type, kinds[i][0])) return kinds[i][1];
    return NULL;
}

aw__part_kind aw__msg_part_kind(const aw_json_value *part) {
    const aw_json_value *type = aw_json_get(part, "type");
    if (str_is(type, "thinking") || str_is(type, "redacted_thinking")) return AW__PART_HIDDEN;
    return media_label(type) ? AW__PART_MEDIA : AW__PART_OTHER;
}

bool aw__msg_has_media(const aw_json_value *arr) {
    for (size_t i = 0; i < aw_json_count(arr); i++)
        if (aw__msg_part_kind(aw_json_at(arr, i)) != AW__PART_OTHER) return true;
    return false;
}

/* What is known of a media part. */
typedef struct media {
    aw_text what;   /* media type, audio format or file name */
    aw_text data;   /* the data, base64 unless raw */
    bool raw;       /* data is the bytes themselves (a text document) */
    aw_text where;  /* a URL or a file id, when there is no data */
} media;

/* "data:TYPE[;base64],DATA" */
static bool data_url(aw_text url, media *m) {
    if (url.len < 5 || memcmp(url.ptr, "data:", 5) != 0) return false;
    const char *comma = memchr(url.ptr, ',', url.len);
    if (!comma) return false;
    size_t head = (size_t)(comma - url.ptr);
    const char *semi = memchr(url.ptr + 5, ';', head - 5);
    m->what.ptr = url.ptr + 5;
    m->what.len = (size_t)((semi ? semi : comma) - m->what.ptr);
    m->data.ptr = comma + 1;
    m->data.len = url.len - head - 1;
    m->raw = !(head >= 12 && memcmp(comma - 7, ";base64", 7) == 0);
    return true;
}

/* A URL, a data URL or a file id into m. */
static void locate(aw_text url, aw_text id, media *m) {
    if (url.ptr && data_url(url, m)) return;
    m->where = url.ptr ? url : id;
}

static void read_media(const aw_json_value *part, media *m) {
    memset(m, 0, sizeof *m);
    const aw_json_value *type = aw_json_get(part, "type");
    if (str_is(type, "image_url")) {
        const aw_json_value *iu = aw_json_get(part, "image_url");
        aw_text url = aw_json_is_string(iu) ? text_of(iu) : text_of(aw_json_get(iu, "url"));
        locate(url, (aw_text){NULL, 0}, m);
    } else if (str_is(type, "input_audio")) {
        const aw_json_value *a = aw_json_get(part, "input_audio");
        m->what = text_of(aw_json_get(a, "format"));
        m->data = text_of(aw_json_get(a, "data"));
    } else if (aw_json_is_object(aw_json_get(part, "file"))) { /* OpenAI's file part */
        const aw_json_value *f = aw_json_get(part, "file");
        aw_text data = text_of(aw_json_get(f, "file_data"));
        if (data.ptr && !data_url(data, m)) m->data = data;
        m->what = text_of(aw_json_get(f, "filename"));
        if (!m->data.ptr) m->where = text_of(aw_json_get(f, "file_id"));
    } else if (aw_json_is_object(aw_json_get(part, "source"))) { /* Anthropic's */
        const aw_json_value *src = aw_json_get(part, "source");
        const aw_json_value *kind = aw_json_get(src, "type");
        m->what = text_of(aw_json_get(src, "media_type"));
        m->data = text_of(aw_json_get(src, "data"));
        m->raw = str_is(kind, "text");
        if (!m->data.ptr) locate(text_of(aw_json_get(src, "url")), text_of(aw_json_get(src, "file_id")), m);
    } else { /* LangChain's standard blocks */
        m->what = text_of(aw_json_get(part, "mime_type"));
        m->data = text_of(aw_json_get(part, "data"));
        if (!m->data.ptr) {
            media u;
            memset(&u, 0, sizeof u);
            locate(text_of(aw_json_get(part, "url")), text_of(aw_json_get(part, "id")), &u);
            if (u.data.ptr) *m = u;
            else m->where = u.where;
        }
    }
}

/* Bytes that base64 text decodes to: 3 per 4 characters, white space and
 * padding not counted. */
static size_t base64_size(aw_text t) {
    size_t chars = 0;
    for (size_t i = 0; i < t.len; i++) {
        char c = t.ptr[i];
        if (c != '=' && c != ' ' && c != '\n' && c != '\r' && c != '\t') chars++;
    }
    return chars / 4 * 3 + (chars % 4 ? chars % 4 - 1 : 0);
}

static int put_size(aw_buf *out, size_t bytes) {
    if (bytes < 1024) return aw_buf_printf(out, "%zu bytes", bytes);
    if (bytes < 1024 * 1024) return aw_buf_printf(out, "%zu KB", (bytes + 512) / 1024);
    return aw_buf_printf(out, "%zu.%zu MB", bytes / (1024 * 1024), bytes % (1024 * 1024) * 10 / (1024 * 1024));
}

int aw__msg_describe_media(const aw_json_value *part, aw_buf *out) {
    media m;
    read_media(part, &m);
    int rc = aw_buf_printf(out, "[%s", media_label(aw_json_get(part, "type")));
    const char *sep = ": ";
    if (m.what.len) {
        rc |= aw_buf_append_str(out, sep);
        rc |= aw_buf_append(out, m.what.ptr, m.what.len);
        sep = ", ";
    }
    if (m.data.ptr) {
        rc |= aw_buf_append_str(out, sep);
        rc |= put_size(out, m.raw ? m.data.len : base64_size(m.data));
    } else if (m.where.len) {
        rc |= aw_buf_append_str(out, sep);
        rc |= aw_buf_append(out, m.where.ptr, m.where.len);
    }
    rc |= aw_buf_putc(out, ']');
    return rc ? AW_ENOMEM : 0;
}
