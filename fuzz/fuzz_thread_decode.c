/* Fuzz the <thread> decoder. Whatever decodes must be events the encoder
 * accepts, and encoding them must give XML that decodes again to the same
 * events (a fixed point after one round). */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static void roundtrip(const aw_json_value *events) {
    size_t n = aw_json_count(events);
    aw_event *evs = calloc(n ? n : 1, sizeof *evs);
    if (!evs) abort();
    for (size_t i = 0; i < n; i++) {
        aw_error err;
        /* args that were not JSON come back as a string: not an event */
        if (aw_event_from_json(aw_json_at(events, i), &evs[i], &err)) {
            free(evs);
            return;
        }
    }
    aw_buf xml;
    aw_buf_init(&xml, NULL);
    aw_error err;
    if (aw_thread_encode(evs, n, NULL, &xml, &err)) abort();
    aw_json_doc *again = NULL;
    if (aw_thread_decode(xml.data, xml.len, NULL, &again, &err)) abort();
    if (aw_json_count(aw_json_doc_root(again)) != n) abort();
    aw_json_doc_free(again);
    aw_buf_free(&xml);
    free(evs);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    aw_json_doc *doc = NULL;
    aw_error err;
    if (aw_thread_decode((const char *)data, size, NULL, &doc, &err)) {
        if (err.code == 0 || err.message[0] == '\0') abort();
        return 0;
    }
    roundtrip(aw_json_doc_root(doc));
    aw_json_doc_free(doc);
    return 0;
}
