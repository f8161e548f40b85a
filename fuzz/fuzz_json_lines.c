/* Fuzz the JSON-lines reader: the records (and errors) seen must not depend
 * on how the input is cut into chunks. The first byte picks the chunk size. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"

typedef struct trace {
    aw_buf text; /* one line per record: "L<line> <json>" or "E<line>:<col> <msg>" */
} trace;

static int record(void *ctx, size_t line, const aw_json_value *root, const aw_error *err) {
    trace *t = ctx;
    if (root) {
        aw_buf_printf(&t->text, "L%zu ", line);
        aw_json_write(root, NULL, &t->text, NULL);
    } else {
        aw_buf_printf(&t->text, "E%zu:%zu@%zu %s", err->line, err->column, err->offset, err->message);
    }
    aw_buf_putc(&t->text, '\n');
    return 0;
}

static void run(const char *p, size_t n, size_t chunk, trace *t) {
    aw_jsonl_reader *r = aw_jsonl_reader_new(NULL);
    if (!r) abort();
    aw_error err;
    for (size_t i = 0; i < n; i += chunk) {
        size_t len = n - i < chunk ? n - i : chunk;
        if (aw_jsonl_feed(r, p + i, len, record, t, &err)) abort();
    }
    if (aw_jsonl_finish(r, record, t, &err)) abort();
    aw_jsonl_reader_free(r);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    if (size < 1) return 0;
    size_t chunk = (size_t)(data[0] % 17) + 1;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    trace whole, cut;
    aw_buf_init(&whole.text, NULL);
    aw_buf_init(&cut.text, NULL);
    run(p, n, n ? n : 1, &whole);
    run(p, n, chunk, &cut);
    /* no record at all leaves both buffers NULL, which memcmp may not see */
    if (whole.text.len != cut.text.len ||
        (whole.text.len && memcmp(whole.text.data, cut.text.data, whole.text.len) != 0))
        abort();
    aw_buf_free(&whole.text);
    aw_buf_free(&cut.text);
    return 0;
}
