/* The scripted model-API stub (stub_llm): what its two files share.
 * stub_llm.c is the server (connections, HTTP, the request log, faults),
 * stub_llm_replies.c writes the reply bodies of the three APIs. */
#ifndef AW_STUB_LLM_H
#define AW_STUB_LLM_H

#include <stdbool.h>
#include <stddef.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"

typedef enum stub_api { STUB_OPENAI_CHAT, STUB_ANTHROPIC_MESSAGES, STUB_OPENAI_RESPONSES, STUB_UNKNOWN } stub_api;

/* The API a path belongs to (the query string is not part of path). */
stub_api stub_api_of_path(const char *path, size_t len);

/* A reply body: the bytes, and for a stream the end offset of each event
 * (faults are placed between events). */
typedef struct stub_body {
    aw_buf bytes;
    size_t *event_ends;
    size_t nevents, cap;
} stub_body;

void stub_body_init(stub_body *b);
void stub_body_free(stub_body *b);

/* Write the reply the script line asks for, in api's shape: an event
 * stream when stream is true, else one JSON document. model is used when
 * the line names none. Returns 0, or -1 with a message in err. */
int stub_reply_body(stub_api api, const aw_json_value *line, const char *model, bool stream, stub_body *out,
                    char *err, size_t errn);

/* The error document of api for a failed request (status >= 400). */
int stub_error_body(stub_api api, int status, const aw_json_value *line, aw_buf *out);

#endif
