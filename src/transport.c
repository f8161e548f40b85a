/* The transport session: nonce, mode, tools and the names of things. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/transport.h"

static const char *const format_names[] = {"markdown", "text", "tty", "pipe",
                                           "json", "slack-block-kit", "sub-agent"};

const char *aw_report_format_name(aw_report_format f) {
    return (unsigned)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : NULL;
}

int aw_report_format_parse(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strlen(format_names[i]) == n && memcmp(format_names[i], s, n) == 0) return (int)i;
    return -1;
}

static const char *const reason_names[] = {
    "wrong_nonce",   "dead_slot", "unknown_slot",        "tool_not_allowed",
    "empty_payload", "duplicate_slot", "unclosed",       "not_allowed_in_mode",
    "invalid_json",  "bad_status", "wrong_format", "invalid_arguments",
    "malformed_call",
};

const char *aw_reject_reason_name(aw_reject_reason r) {
    return (unsigned)r < sizeof reason_names / sizeof reason_names[0] ? reason_names[r] : NULL;
}

static int is_nonce(const char *s) {
    if (strlen(s) != 8) return 0;
    for (int i = 0; i < 8; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

static int fresh_nonce(char out[9]) {
    unsigned char b[4];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n <= 0) return -1;
        got += (size_t)n;
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 4; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    out[8] = '\0';
    return 0;
}

static int is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* Compile a schema of the session; on failure err names whose it is. */
static int compile_schema(const aw_json_value *schema, const aw_allocator *alloc, const char *whose, size_t whose_len,
                          aw_schema **out, aw_error *err) {
    aw_schema_options opts = {alloc, AW_SCHEMA_DRAFT_2020_12, false, NULL, NULL};
    aw_error cerr;
    int rc = aw_schema_compile(schema, &opts, out, &cerr);
    if (rc == AW_ENOMEM) return aw__error_set(err, AW_ENOMEM, "out of memory");
    if (rc) return aw__error_set(err, rc, "%.*s: %s", (int)whose_len, whose, cerr.message);
    return 0;
}

static char *arena_strdup(aw_arena *a, const char *s, size_t n) {
    char *p = aw__arena_alloc(a, n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

aw_transport *aw_transport_new(const aw_transport_config *cfg, aw_error *err) {
    if (!cfg) {
        aw__error_set(err, AW_EINVAL, "no configuration");
        return NULL;
    }
    const char *prefix = cfg->prefix ? cfg->prefix : "ai-agent";
    if (!*prefix) {
        aw__error_set(err, AW_EINVAL, "the tag prefix must not be empty");
        return NULL;
    }
    for (const char *p = prefix; *p; p++)
        if (!is_name_char(*p)) {
            aw__error_set(err, AW_EINVAL, "the tag prefix may hold only letters, digits, '_' and '-'");
            return NULL;
        }
    if (cfg->nonce && !is_nonce(cfg->nonce)) {
        aw__error_set(err, AW_EINVAL, "the nonce must be 8 lower-case hex digits, not '%s'", cfg->nonce);
        return NULL;
    }
    if (aw_report_format_name(cfg->format) == NULL) {
        aw__error_set(err, AW_EINVAL, "unknown report format %d", (int)cfg->format);
        return NULL;
    }
    aw_transport *t = aw_malloc(cfg->alloc, sizeof *t);
    if (!t) {
        aw__error_set(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(t, 0, sizeof *t);
    t->alloc = cfg->alloc;
    aw__arena_init(&t->arena, cfg->alloc);
    t->mode = cfg->mode;
    t->max_calls = cfg->max_calls_per_turn ? cfg->max_calls_per_turn : 10;
    t->format = cfg->format;
    t->dialects = cfg->dialects;
    if (aw__recover_index_new(t)) {
        aw__error_set(err, AW_ENOMEM, "out of memory");
        aw_transport_free(t);
        return NULL;
    }
    if (cfg->nonce) {
        memcpy(t->nonce, cfg->nonce, 9);
    } else if (fresh_nonce(t->nonce)) {
        aw__error_set(err, AW_EINVAL, "the system random generator failed");
        aw_transport_free(t);
        return NULL;
    }
    t->prefix_len = strlen(prefix);
    t->prefix = arena_strdup(&t->arena, prefix, t->prefix_len);
    t->tools_doc = aw_json_doc_new(cfg->alloc);
    if (!t->prefix || !t->tools_doc) goto oom;
    if (cfg->final_schema) {
        t->schema_doc = aw_json_doc_new(cfg->alloc);
        if (!t->schema_doc) goto oom;
        t->final_schema = aw_json_copy(t->schema_doc, cfg->final_schema);
        if (!t->final_schema) goto oom;
        if (compile_schema(t->final_schema, cfg->alloc, "final schema", 12, &t->final_compiled, err)) goto fail;
    }
    if (cfg->tool_count) {
        t->tools = aw__arena_alloc(&t->arena, cfg->tool_count * sizeof *t->tools);
        t->tool_schemas = aw_malloc(cfg->alloc, cfg->tool_count * sizeof *t->tool_schemas);
        if (!t->tools || !t->tool_schemas) goto oom;
        memset(t->tool_schemas, 0, cfg->tool_count * sizeof *t->tool_schemas);
        for (size_t i = 0; i < cfg->tool_count; i++) {
            const aw_tool_def *s = &cfg->tools[i];
            aw_tool_def *d = &t->tools[i];
            d->name.ptr = arena_strdup(&t->arena, s->name.ptr ? s->name.ptr : "", s->name.len);
            d->name.len = s->name.len;
            d->description.ptr = arena_strdup(&t->arena, s->description.ptr ? s->description.ptr : "",
                                              s->description.len);
            d->description.len = s->description.len;
            d->schema = s->schema ? aw_json_copy(t->tools_doc, s->schema) : NULL;
            if (!d->name.ptr || !d->description.ptr || (s->schema && !d->schema)) goto oom;
            t->tool_count = i + 1;
            char whose[96];
            int wl = snprintf(whose, sizeof whose, "tool `%.64s`", d->name.ptr);
            if (d->schema && compile_schema(d->schema, cfg->alloc, whose, (size_t)wl, &t->tool_schemas[i], err)) goto fail;
        }
    }
    static const char *const default_reasoning[] = {"think"};
    const char *const *tags = cfg->reasoning_tags ? cfg->reasoning_tags : default_reasoning;
    size_t ntags = cfg->reasoning_tags ? cfg->reasoning_tag_count : 1;
    if (ntags) {
        t->reasoning = aw__arena_alloc(&t->arena, ntags * sizeof *t->reasoning);
        if (!t->reasoning) goto oom;
        for (size_t i = 0; i < ntags; i++) {
            size_t n = strlen(tags[i]);
            t->reasoning[i].ptr = arena_strdup(&t->arena, tags[i], n);
            t->reasoning[i].len = n;
            if (!t->reasoning[i].ptr) goto oom;
        }
        t->reasoning_count = ntags;
    }
    return t;
oom:
    aw__error_set(err, AW_ENOMEM, "out of memory");
fail:
    aw_transport_free(t);
    return NULL;
}

void aw_transport_free(aw_transport *t) {
    if (!t) return;
    for (size_t i = 0; t->tool_schemas && i < t->tool_count; i++) aw_schema_free(t->tool_schemas[i]);
    aw_free(t->alloc, t->tool_schemas);
    aw_schema_free(t->final_compiled);
    aw__recover_index_free(t);
    aw_json_doc_free(t->schema_doc);
    aw_json_doc_free(t->tools_doc);
    aw__arena_free(&t->arena);
    aw_free(t->alloc, t);
}

const char *aw_transport_nonce(const aw_transport *t) { return t ? t->nonce : NULL; }
aw_transport_mode aw_transport_mode_of(const aw_transport *t) { return t ? t->mode : AW_TRANSPORT_NATIVE; }

const aw_tool_def *aw__transport_tool(const aw_transport *t, const char *name, size_t len) {
    for (size_t i = 0; i < t->tool_count; i++)
        if (t->tools[i].name.len == len && memcmp(t->tools[i].name.ptr, name, len) == 0) return &t->tools[i];
    return NULL;
}

const aw_schema *aw__transport_tool_schema(const aw_transport *t, const char *name, size_t len) {
    const aw_tool_def *d = aw__transport_tool(t, name, len);
    return d ? t->tool_schemas[d - t->tools] : NULL;
}

int aw_transport_slot_name(const aw_transport *t, unsigned turn, unsigned k, aw_buf *out) {
    if (!t || turn == 0 || k >= t->max_calls) return AW_EINVAL;
    unsigned long long n = (unsigned long long)(turn - 1) * t->max_calls + k + 1;
    return aw_buf_printf(out, "%s-%s-%04llu", t->prefix, t->nonce, n);
}

/* ---- tool definitions in the common shapes ------------------------------ */

static int text_of(const aw_json_value *v, aw_text *out) {
    if (!v) return 0;
    if (v->type != AW_JSON_STRING) return -1;
    out->ptr = v->u.str.ptr;
    out->len = v->u.str.len;
    return 0;
}

int aw_tools_from_json(const aw_json_value *tools, const aw_allocator *alloc, aw_tool_def **out,
                       size_t *count, aw_error *err) {
    if (!out || !count) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    *out = NULL;
    *count = 0;
    if (!tools || tools->type != AW_JSON_ARRAY)
        return aw__error_set(err, AW_ETYPE, "tools must be a JSON array of tool definitions");
    size_t n = tools->u.arr.count;
    aw_tool_def *defs = aw_malloc(alloc, (n ? n : 1) * sizeof *defs);
    if (!defs) return aw__error_set(err, AW_ENOMEM, "out of memory");
    memset(defs, 0, (n ? n : 1) * sizeof *defs);
    for (size_t i = 0; i < n; i++) {
        const aw_json_value *t = &tools->u.arr.items[i];
        if (t->type != AW_JSON_OBJECT) {
            aw_free(alloc, defs);
            return aw__error_set(err, AW_ETYPE, "tool %zu: must be an object", i);
        }
        /* OpenAI nests the definition under "function" */
        const aw_json_value *fn = aw_json_get(t, "function");
        const aw_json_value *def = aw_json_is_object(fn) ? fn : t;
        const aw_json_value *schema = aw_json_get(def, "parameters");
        if (!schema) schema = aw_json_get(def, "input_schema");
        if (!schema) schema = aw_json_get(def, "inputSchema");
        if (text_of(aw_json_get(def, "name"), &defs[i].name) || !defs[i].name.ptr || !defs[i].name.len) {
            aw_free(alloc, defs);
            return aw__error_set(err, AW_ETYPE, "tool %zu: 'name' must be a non-empty string", i);
        }
        if (text_of(aw_json_get(def, "description"), &defs[i].description)) {
            aw_free(alloc, defs);
            return aw__error_set(err, AW_ETYPE, "tool %zu: 'description' must be a string", i);
        }
        if (schema && schema->type != AW_JSON_OBJECT) {
            aw_free(alloc, defs);
            return aw__error_set(err, AW_ETYPE, "tool %zu: the parameter schema must be an object", i);
        }
        defs[i].schema = schema;
    }
    *out = defs;
    *count = n;
    return 0;
}
