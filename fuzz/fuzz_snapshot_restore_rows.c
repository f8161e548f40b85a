/* Fuzz resuming from stored rows: what a database hands back after a
 * crash, a bad disk or a hand edit. The input is lines:
 *   R{...}   a step's resume data (starts a new step row)
 *   E{...}   an agent event of the current step
 *   F        the current step ended its run
 *   S{...}   the latest slim snapshot
 * The rows go through aw_store_resume_assemble and the snapshot through
 * aw_snapshot_restore. Either may refuse; neither may crash or leak, and
 * an accepted assembly must hold every step's chat and every event, in
 * a shape run.c's restore() takes (a turn in range, known roles). */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentwire.h"
#include "agentwire/store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    aw_json_doc *rows = aw_json_doc_new(NULL);
    aw_json_value *list = aw_json_new_array(rows);
    aw_json_value *row = NULL;
    const char *snapshot = NULL;
    size_t snapshot_len = 0, events = 0;
    const char *p = (const char *)data, *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n >= 1 && p[0] == 'R') {
            aw_json_value *o = aw_json_new_object(rows), *evs = aw_json_new_array(rows);
            if (!o || !evs || aw_json_object_set_string(rows, o, "resume", p + 1, n - 1) ||
                aw_json_object_set(rows, o, "events", 6, evs) || aw_json_array_push(rows, list, o))
                abort();
            row = aw_json_at_mut(list, aw_json_count(list) - 1);
        } else if (n >= 1 && p[0] == 'E' && row) {
            aw_json_value *s = aw_json_new_string(rows, p + 1, n - 1);
            if (!s || aw_json_array_push(rows, aw_json_get_mut(row, "events"), s))
                abort();
            events++;
        } else if (n >= 1 && p[0] == 'F' && row) {
            if (aw_json_object_set_bool(rows, row, "final", true))
                abort();
        } else if (n >= 1 && p[0] == 'S') {
            snapshot = p + 1;
            snapshot_len = n - 1;
        }
        p += n + (nl ? 1 : 0);
    }
    aw_json_doc_set_root(rows, list);
    aw_store_resume r;
    aw_error err;
    if (aw_store_resume_assemble(list, NULL, &r, &err) == 0) {
        if (aw_json_count(list) != r.steps)
            abort();
        if (r.steps) {
            const aw_json_value *res = aw_json_doc_root(r.resume);
            const aw_json_value *turn = aw_json_get(res, "turn");
            if (!aw_json_is_number(turn) || turn->u.num.d < 0 || turn->u.num.d > 1e6)
                abort();
            if (aw_json_count(aw_json_doc_root(r.history)) != events)
                abort();
            const aw_json_value *chat = aw_json_get(res, "chat");
            for (size_t i = 0; i < aw_json_count(chat); i++)
                if (!aw_json_is_string(aw_json_get(aw_json_at(chat, i), "role")) ||
                    !aw_json_is_string(aw_json_get(aw_json_at(chat, i), "content")))
                    abort();
        } else if (!r.needs_task) {
            abort();
        }
        aw_store_resume_free(&r);
    } else if (err.code != AW_STORE_ECORRUPT && err.code != AW_ENOMEM) {
        abort();
    }
    aw_json_doc *snap = NULL, *restored = NULL;
    if (snapshot && aw_json_parse(snapshot, snapshot_len, NULL, &snap, &err) == 0) {
        if (aw_snapshot_restore(aw_json_doc_root(snap), NULL, &restored, &err) == 0) {
            aw_slim_config cfg;
            aw_slim_preset("full", &cfg);
            aw_json_doc *again = NULL;
            if (aw_snapshot_slim(aw_json_doc_root(restored), &cfg, NULL, &again, &err) == 0)
                aw_json_doc_free(again);
        }
        aw_json_doc_free(restored);
        aw_json_doc_free(snap);
    }
    aw_json_doc_free(rows);
    return 0;
}
