/* The registry: documents by URI that a schema's $ref may reach. Each is a
 * copy, so the caller's documents may go away; a compiled schema copies in
 * turn what it uses, so the registry may be freed after compiling. */
#include <string.h>

#include "internal/errors.h"
#include "internal/schema.h"

typedef struct reg_entry {
    char *uri;
    const aw_json_value *doc;
} reg_entry;

struct aw_schema_registry {
    const aw_allocator *alloc;
    aw_json_doc *docs; /* every copy */
    reg_entry *entries;
    size_t count, cap;
};

aw_schema_registry *aw_schema_registry_new(const aw_allocator *alloc) {
    aw_schema_registry *r = aw_malloc(alloc, sizeof *r);
    if (!r) return NULL;
    memset(r, 0, sizeof *r);
    r->alloc = alloc;
    r->docs = aw_json_doc_new(alloc);
    if (!r->docs) {
        aw_free(alloc, r);
        return NULL;
    }
    return r;
}

void aw_schema_registry_free(aw_schema_registry *r) {
    if (!r) return;
    for (size_t i = 0; i < r->count; i++) aw_free(r->alloc, r->entries[i].uri);
    aw_free(r->alloc, r->entries);
    aw_json_doc_free(r->docs);
    aw_free(r->alloc, r);
}

int aw_schema_registry_add(aw_schema_registry *r, const char *uri, const aw_json_value *doc, aw_error *err) {
    if (!r || !uri || !doc) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    aw_buf norm;
    aw_buf_init(&norm, r->alloc);
    if (aw__sc_uri_resolve(NULL, 0, uri, strlen(uri), &norm)) {
        aw_buf_free(&norm);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    const char *frag;
    size_t frag_len;
    size_t base = aw__sc_uri_split(norm.data, norm.len, &frag, &frag_len);
    if (frag && frag_len) {
        aw_buf_free(&norm);
        return aw__error_set(err, AW_EINVAL, "a registered URI has no fragment: \"%.100s\"", uri);
    }
    norm.len = base;
    norm.data[base] = '\0';
    const aw_json_value *copy = aw_json_copy(r->docs, doc);
    if (!copy) {
        aw_buf_free(&norm);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->count; i++)
        if (!strcmp(r->entries[i].uri, norm.data)) {
            r->entries[i].doc = copy;
            aw_buf_free(&norm);
            return 0;
        }
    if (r->count == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 8;
        reg_entry *g = aw_realloc(r->alloc, r->entries, cap * sizeof *g);
        if (!g) {
            aw_buf_free(&norm);
            return aw__error_set(err, AW_ENOMEM, "out of memory");
        }
        r->entries = g;
        r->cap = cap;
    }
    size_t len;
    r->entries[r->count].uri = aw_buf_detach(&norm, &len);
    r->entries[r->count].doc = copy;
    r->count++;
    return 0;
}

const aw_json_value *aw__sc_registry_get(const aw_schema_registry *r, const char *uri, size_t len) {
    for (size_t i = 0; r && i < r->count; i++)
        if (strlen(r->entries[i].uri) == len && !memcmp(r->entries[i].uri, uri, len)) return r->entries[i].doc;
    return NULL;
}

size_t aw__sc_registry_count(const aw_schema_registry *r) { return r ? r->count : 0; }

const aw_json_value *aw__sc_registry_at(const aw_schema_registry *r, size_t i, const char **uri) {
    *uri = r->entries[i].uri;
    return r->entries[i].doc;
}
