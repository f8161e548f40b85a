/* Fuzz the envelope input: JSON lines of runtime events through the
 * adapter in every preset; every emitted envelope must be an object with
 * the five envelope keys. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

static int check(void *ctx, const char *channel, const aw_json_value *env) {
    (void)ctx;
    if (strncmp(channel, "agent.", 6) != 0) abort();
    static const char *const keys[] = {"type", "session_id", "execution_id", "timestamp", "payload"};
    for (int i = 0; i < 5; i++)
        if (!aw_json_get(env, keys[i])) abort();
    return 0;
}

typedef struct run {
    aw_envelope_adapter *a;
} run;

static int on_line(void *ctx, size_t line, const aw_json_value *root, const aw_error *err) {
    run *r = ctx;
    (void)line;
    (void)err;
    aw_error e;
    if (root && aw_envelope_adapter_handle(r->a, root, 1768557900123LL, &e) && e.message[0] == '\0') abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    for (int preset = 0; preset < 3; preset++) {
        aw_envelope_config cfg = {"s1", "x1", (aw_envelope_preset)preset, NULL};
        run r = {aw_envelope_adapter_new(&cfg, check, NULL)};
        aw_jsonl_reader *rd = aw_jsonl_reader_new(NULL);
        if (!r.a || !rd) abort();
        aw_jsonl_feed(rd, (const char *)data, size, on_line, &r, NULL);
        aw_jsonl_finish(rd, on_line, &r, NULL);
        aw_jsonl_reader_free(rd);
        aw_envelope_adapter_free(r.a);
    }
    return 0;
}
