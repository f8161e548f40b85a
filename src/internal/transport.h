/* Private parts of the transport module. */
#ifndef AW_INTERNAL_TRANSPORT_H
#define AW_INTERNAL_TRANSPORT_H

#include "agentwire/transport.h"
#include "internal/arena.h"

struct aw_transport {
    aw_transport_mode mode;
    char nonce[9];
    char *prefix;                /* in the arena */
    size_t prefix_len;
    unsigned max_calls;
    aw_report_format format;
    aw_json_doc *schema_doc;     /* copy of the final schema */
    const aw_json_value *final_schema;
    aw_json_doc *tools_doc;      /* copies of the tool schemas */
    aw_tool_def *tools;
    aw_schema **tool_schemas;    /* compiled tools[i].schema, or NULL */
    aw_schema *final_compiled;   /* compiled final_schema, or NULL */
    size_t tool_count;
    aw_text *reasoning;          /* reasoning tag names */
    size_t reasoning_count;
    unsigned dialects;
    struct aw_recover_index *rec_index; /* the dialects' triggers, for every extractor (transport_recover.c) */
    const aw_allocator *alloc;
    aw_arena arena;
};

/* Made when t->dialects has any, freed with the session. */
int aw__recover_index_new(aw_transport *t);
void aw__recover_index_free(aw_transport *t);

/* Tool lookup; NULL when not allowed. */
const aw_tool_def *aw__transport_tool(const aw_transport *t, const char *name, size_t len);
/* The compiled argument schema of a tool, or NULL (no such tool, or no
 * schema). */
const aw_schema *aw__transport_tool_schema(const aw_transport *t, const char *name, size_t len);

#endif
