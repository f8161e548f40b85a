/* Fuzz the agent-state reader behind snapshots: any JSON, any preset. A
 * state that slims must restore, and restore + slim must be a fixed point
 * after one round. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static void write_doc(const aw_json_doc *d, aw_buf *b) {
    aw_buf_clear(b);
    if (aw_json_write(aw_json_doc_root(d), NULL, b, NULL)) abort();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size < 1) return 0;
    static const char *const presets[] = {"minimal", "standard", "full"};
    aw_slim_config cfg;
    aw_slim_preset(presets[data[0] % 3], &cfg);
    cfg.redact_tool_args = (data[0] & 4) != 0;
    cfg.max_content_length = (data[0] >> 3) % 16;
    aw_json_doc *state = NULL, *snap = NULL, *restored = NULL, *snap2 = NULL, *restored2 = NULL, *snap3 = NULL;
    aw_error err;
    if (aw_json_parse((const char *)data + 1, size - 1, NULL, &state, &err)) return 0;
    if (aw_snapshot_slim(aw_json_doc_root(state), &cfg, NULL, &snap, &err) == 0) {
        if (aw_snapshot_restore(aw_json_doc_root(snap), NULL, &restored, &err)) abort();
        if (aw_snapshot_slim(aw_json_doc_root(restored), &cfg, NULL, &snap2, &err)) abort();
        if (aw_snapshot_restore(aw_json_doc_root(snap2), NULL, &restored2, &err)) abort();
        if (aw_snapshot_slim(aw_json_doc_root(restored2), &cfg, NULL, &snap3, &err)) abort();
        aw_buf a, b;
        aw_buf_init(&a, NULL);
        aw_buf_init(&b, NULL);
        write_doc(snap2, &a);
        write_doc(snap3, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len)) abort();
        aw_buf_free(&a);
        aw_buf_free(&b);
    } else if (err.message[0] == '\0') {
        abort();
    }
    aw_json_doc_free(snap3);
    aw_json_doc_free(restored2);
    aw_json_doc_free(snap2);
    aw_json_doc_free(restored);
    aw_json_doc_free(snap);
    aw_json_doc_free(state);
    return 0;
}
