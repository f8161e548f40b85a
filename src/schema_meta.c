/* The built-in meta-schemas (schemas/ in the source tree, embedded as bytes
 * by CMake): found by the URI in their $id, so a $ref to a dialect's
 * meta-schema resolves without a registry, and aw_schema_check can
 * validate any schema without a network. */
#include <string.h>

#include "internal/schema.h"
#include "schema_metas.h"

const char *aw__sc_meta_text(const char *uri, size_t len, size_t *text_len) {
    /* the draft-07 meta-schema is also named with https */
    static const char https7[] = "https://json-schema.org/draft-07/schema";
    if (len == sizeof https7 - 1 && !memcmp(uri, https7, len)) uri = "http://json-schema.org/draft-07/schema", len--;
    for (size_t i = 0; i < sizeof aw_schema_metas / sizeof aw_schema_metas[0]; i++) {
        if (strlen(aw_schema_metas[i].uri) == len && !memcmp(aw_schema_metas[i].uri, uri, len)) {
            *text_len = aw_schema_metas[i].len;
            return aw_schema_metas[i].text;
        }
    }
    return NULL;
}
