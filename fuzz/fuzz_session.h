/* A transport session for a fuzz target: the tools from JSON, nonce
 * 1a2b3c4d; aborts on failure (a fuzz target has nothing to report to). */
#ifndef AW_FUZZ_SESSION_H
#define AW_FUZZ_SESSION_H

#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "agentwire/transport.h"

static aw_transport *fuzz_session(const char *tools_json, aw_transport_mode mode, aw_report_format format,
                                  unsigned dialects) {
    aw_json_doc *doc = NULL;
    aw_tool_def *defs = NULL;
    size_t n = 0;
    if (aw_json_parse(tools_json, strlen(tools_json), NULL, &doc, NULL) ||
        aw_tools_from_json(aw_json_doc_root(doc), NULL, &defs, &n, NULL))
        abort();
    aw_transport_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.mode = mode;
    cfg.nonce = "1a2b3c4d";
    cfg.format = format;
    cfg.tools = defs;
    cfg.tool_count = n;
    cfg.dialects = dialects;
    aw_transport *t = aw_transport_new(&cfg, NULL);
    if (!t) abort();
    aw_free(NULL, defs);
    aw_json_doc_free(doc);
    return t;
}

#endif
