/* agentwire serve's JSON API, read from the store:
 *
 *   GET /api/sessions              {"sessions": [...], "limit", "offset"}: newest
 *                                  first; ?status= ?agent= ?kind= (exact), ?q=
 *                                  (text in the id, task, agent or report),
 *                                  ?since= (ms or RFC 3339), ?limit= (1..1000,
 *                                  100) ?offset=
 *   GET /api/sessions/ID           {"session", "steps", "accounting"}
 *   GET /api/sessions/ID/thread    the <thread> XML (?download=1: as a file)
 *   GET /api/sessions/ID/accounting  JSON lines (?download=1: as a file)
 *
 * A parameter out of its bounds is a 400 naming it; an unknown session a
 * 404; a store that does not answer a 503. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agentwire/envelope.h"
#include "agentwire/event.h"
#include "agentwire/thread.h"
#include "internal/rt_util.h"
#include "internal/serve_impl.h"

/* The command writes JSON this way too: lone surrogates as U+FFFD, so a
 * browser's JSON.parse and every strict reader take it. */
static const aw_json_write_options json_out = {.replace_lone_surrogates = true};

static enum MHD_Result reply_json(aw_server *s, struct MHD_Connection *c, const aw_json_value *v)
{
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    if (aw_json_write(v, &json_out, &b, NULL) || aw_buf_putc(&b, '\n')) {
        aw_buf_free(&b);
        return aw__reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    }
    struct MHD_Response *r = aw__response_buf(s, &b, "application/json; charset=utf-8");
    if (r)
        MHD_add_response_header(r, "Cache-Control", "no-store");
    return aw__reply(c, MHD_HTTP_OK, r);
}

static enum MHD_Result store_failed(aw_server *s, struct MHD_Connection *c, int rc, const aw_error *err)
{
    if (rc != AW_STORE_ENOTFOUND)
        aw__serve_log(s, "store: %s", err->message);
    return aw__reply_error(s, c, aw__status_for_store(rc), "%s", err->message);
}

/* ---- parameters ------------------------------------------------------------------------- */

static const char *arg(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* A whole number in [min, max] from ?name=, or dflt when absent; -1 when
 * malformed or out of bounds. */
static int64_t int_arg(struct MHD_Connection *c, const char *name, int64_t min, int64_t max, int64_t dflt)
{
    const char *v = arg(c, name);
    if (!v)
        return dflt;
    if (!*v || strlen(v) > 18 || strspn(v, "0123456789") != strlen(v))
        return -1;
    int64_t n = strtoll(v, NULL, 10);
    return n < min || n > max ? -1 : n;
}

/* ASCII case-insensitive search of needle in s. */
static bool contains(const char *s, const char *needle)
{
    size_t n = strlen(needle);
    for (; s && *s; s++)
        if (!strncasecmp(s, needle, n))
            return true;
    return false;
}

static bool matches(const aw_json_value *row, const char *q)
{
    static const char *const keys[] = {"id", "task", "agent", "report_preview"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const aw_json_value *v = aw_json_get(row, keys[i]);
        if (aw_json_is_string(v) && contains(v->u.str.ptr, q))
            return true;
    }
    return false;
}

typedef struct list_query {
    aw_session_filter f;
    const char *q;
    size_t limit, offset;
} list_query;

/* The query's parameters, or a message for a 400. */
static const char *read_list_query(struct MHD_Connection *c, list_query *lq)
{
    memset(lq, 0, sizeof *lq);
    static const char *const names[] = {"status", "agent", "kind"};
    const char **dest[] = {&lq->f.status, &lq->f.agent, &lq->f.kind};
    for (size_t i = 0; i < 3; i++) {
        const char *v = arg(c, names[i]);
        if (v && strlen(v) > 200)
            return "status, agent and kind are at most 200 bytes";
        *dest[i] = v && *v ? v : NULL;
    }
    lq->q = arg(c, "q");
    if (lq->q && strlen(lq->q) > 200)
        return "q is at most 200 bytes";
    if (lq->q && !*lq->q)
        lq->q = NULL;
    int64_t limit = int_arg(c, "limit", 1, 1000, 100), offset = int_arg(c, "offset", 0, 1000000000, 0);
    if (limit < 0)
        return "limit is a number from 1 to 1000";
    if (offset < 0)
        return "offset is a number from 0 to 1000000000";
    lq->limit = (size_t)limit;
    lq->offset = (size_t)offset;
    const char *since = arg(c, "since");
    if (since && *since) {
        int64_t ms = int_arg(c, "since", 0, INT64_MAX / 2, 0);
        if (ms < 0 && aw_time_parse_rfc3339(since, strlen(since), &ms))
            return "since is milliseconds since 1970 or an RFC 3339 time";
        lq->f.since_ms = ms;
    }
    return NULL;
}

/* With a text filter the store is read a page at a time, the matches
 * counted against offset and limit, up to 100 000 sessions looked at. */
static int list_matching(aw_store *st, const list_query *lq, aw_json_doc *out, aw_json_value *list, aw_error *err)
{
    aw_session_filter f = lq->f;
    f.limit = lq->q ? 200 : lq->limit;
    f.offset = lq->q ? 0 : lq->offset;
    size_t skipped = 0;
    for (size_t looked = 0; looked < 100000; looked += f.limit, f.offset += f.limit) {
        aw_json_doc *page = NULL;
        int rc = aw_store_session_list(st, &f, &page, err);
        if (rc)
            return rc;
        const aw_json_value *rows = aw_json_doc_root(page);
        size_t n = aw_json_count(rows);
        for (size_t i = 0; i < n && aw_json_count(list) < lq->limit; i++) {
            const aw_json_value *row = aw_json_at(rows, i);
            if (lq->q && (!matches(row, lq->q) || skipped++ < lq->offset))
                continue;
            aw_json_value *copy = aw_json_copy(out, row);
            if (!copy || aw_json_array_push(out, list, copy)) {
                aw_json_doc_free(page);
                return aw_rt_error(err, AW_ENOMEM, "out of memory");
            }
        }
        aw_json_doc_free(page);
        if (!lq->q || n < f.limit || aw_json_count(list) >= lq->limit)
            break;
    }
    return 0;
}

enum MHD_Result aw__api_sessions(aw_server *s, struct MHD_Connection *c)
{
    list_query lq;
    const char *bad = read_list_query(c, &lq);
    if (bad)
        return aw__reply_error(s, c, MHD_HTTP_BAD_REQUEST, "%s", bad);
    aw_error err;
    aw_store *st = aw__pool_take(&s->pool, &err);
    if (!st)
        return store_failed(s, c, AW_STORE_EIO, &err);
    aw_json_doc *d = aw_json_doc_new(s->alloc);
    aw_json_value *root = d ? aw_json_new_object(d) : NULL, *list = d ? aw_json_new_array(d) : NULL;
    int rc = root && list ? list_matching(st, &lq, d, list, &err) : aw_rt_error(&err, AW_ENOMEM, "out of memory");
    aw__pool_give(&s->pool, st, rc);
    enum MHD_Result ret;
    if (rc)
        ret = store_failed(s, c, rc, &err);
    else if (aw_json_object_set(d, root, "sessions", 8, list) ||
             aw_json_object_set_int(d, root, "limit", (int64_t)lq.limit) ||
             aw_json_object_set_int(d, root, "offset", (int64_t)lq.offset))
        ret = aw__reply_error(s, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
    else
        ret = reply_json(s, c, root);
    aw_json_doc_free(d);
    return ret;
}

/* ---- one session ---------------------------------------------------------------------------- */

/* The summary of every step, read 64 steps at a time (a long session's
 * events, tool results and all, are never in memory at once). */
static int fold_steps(aw_server *s, aw_store *st, const char *id, aw__serve_summary *sum, aw_error *err)
{
    aw__serve_cursor cur = {0, 0, 0};
    for (;;) {
        aw_json_doc *steps = NULL;
        int64_t before = cur.after;
        int rc = aw_store_steps(st, id, cur.after, 64, &steps, err);
        size_t n = rc ? 0 : aw_json_count(aw_json_doc_root(steps));
        if (n)
            rc = aw__serve_feed(aw_json_doc_root(steps), id, &cur, s->alloc, aw__serve_summary_add, sum, err);
        aw_json_doc_free(steps);
        if (!rc && sum->oom)
            rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
        if (rc || !n || cur.after == before)
            return rc;
    }
}

/* {"session": ..., "steps": [...], "accounting": {...}} */
static int session_view(aw_server *s, aw_store *st, const char *id, aw_json_doc **out, aw_error *err)
{
    aw_json_doc *session = NULL, *acc = NULL;
    int rc = aw_store_session_get(st, id, &session, err);
    if (!rc)
        rc = aw_store_accounting(st, id, &acc, err);
    aw_json_doc *d = rc ? NULL : aw_json_doc_new(s->alloc);
    aw_json_value *root = d ? aw_json_new_object(d) : NULL;
    aw__serve_summary sum;
    memset(&sum, 0, sizeof sum);
    if (!rc && (!root || aw__serve_summary_init(&sum, d)))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    if (!rc)
        rc = fold_steps(s, st, id, &sum, err);
    aw_json_value *session_copy = rc ? NULL : aw_json_copy(d, aw_json_doc_root(session));
    aw_json_value *acc_summary = rc ? NULL : aw__serve_accounting_summary(d, aw_json_doc_root(acc));
    if (!rc && (!session_copy || !acc_summary || aw_json_object_set(d, root, "session", 7, session_copy) ||
                aw_json_object_set(d, root, "steps", 5, sum.steps) ||
                aw_json_object_set(d, root, "accounting", 10, acc_summary)))
        rc = aw_rt_error(err, AW_ENOMEM, "out of memory");
    aw_json_doc_free(session);
    aw_json_doc_free(acc);
    if (rc) {
        aw_json_doc_free(d);
        return rc;
    }
    aw_json_doc_set_root(d, root);
    *out = d;
    return 0;
}

/* The stored events as a <thread> document. */
static int thread_of(aw_server *s, const aw_json_value *rows, aw_buf *out, aw_error *err)
{
    size_t n = aw_json_count(rows);
    aw_event *evs = aw_malloc(s->alloc, (n + 1) * sizeof *evs);
    if (!evs)
        return aw_rt_error(err, AW_ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        aw_error e;
        if (aw_event_from_json(aw_json_get(aw_json_at(rows, i), "event"), &evs[i], &e))
            rc = aw_rt_error(err, AW_STORE_ECORRUPT, "stored event %zu: %s", i + 1, e.message);
    }
    if (!rc)
        rc = aw_thread_encode(evs, n, NULL, out, err);
    if (!rc)
        rc = aw_buf_putc(out, '\n') ? aw_rt_error(err, AW_ENOMEM, "out of memory") : 0;
    aw_free(s->alloc, evs);
    return rc;
}

static int accounting_lines(const aw_json_value *rows, aw_buf *out, aw_error *err)
{
    for (size_t i = 0; i < aw_json_count(rows); i++)
        if (aw_json_write(aw_json_at(rows, i), &json_out, out, NULL) || aw_buf_putc(out, '\n'))
            return aw_rt_error(err, AW_ENOMEM, "out of memory");
    return 0;
}

/* Content-Disposition for ?download=1: a file name of the id's safe bytes. */
static void as_download(struct MHD_Response *r, struct MHD_Connection *c, const char *id, const char *ext)
{
    const char *dl = arg(c, "download");
    if (!r || !dl || strcmp(dl, "1"))
        return;
    char name[260], header[340];
    size_t k = 0;
    for (const char *p = id; *p && k < 256; p++)
        name[k++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                            *p == '_'
                        ? *p
                        : '_';
    name[k] = 0;
    snprintf(header, sizeof header, "attachment; filename=\"agentwire-%s.%s\"", name, ext);
    MHD_add_response_header(r, "Content-Disposition", header);
}

enum MHD_Result aw__api_session(aw_server *s, struct MHD_Connection *c, const char *id, const char *what)
{
    aw_error err;
    aw_store *st = aw__pool_take(&s->pool, &err);
    if (!st)
        return store_failed(s, c, AW_STORE_EIO, &err);
    enum MHD_Result ret;
    int rc;
    if (!*what) {
        aw_json_doc *view = NULL;
        rc = session_view(s, st, id, &view, &err);
        aw__pool_give(&s->pool, st, rc);
        ret = rc ? store_failed(s, c, rc, &err) : reply_json(s, c, aw_json_doc_root(view));
        aw_json_doc_free(view);
        return ret;
    }
    bool thread = !strcmp(what, "thread");
    aw_json_doc *rows = NULL;
    rc = thread ? aw_store_events(st, id, 0, 0, &rows, &err) : aw_store_accounting(st, id, &rows, &err);
    aw__pool_give(&s->pool, st, rc);
    if (rc)
        return store_failed(s, c, rc, &err);
    aw_buf b;
    aw_buf_init(&b, s->alloc);
    rc = thread ? thread_of(s, aw_json_doc_root(rows), &b, &err) : accounting_lines(aw_json_doc_root(rows), &b, &err);
    aw_json_doc_free(rows);
    if (rc) {
        aw_buf_free(&b);
        return store_failed(s, c, rc, &err);
    }
    struct MHD_Response *r =
        aw__response_buf(s, &b, thread ? "application/xml; charset=utf-8" : "application/x-ndjson; charset=utf-8");
    if (r)
        MHD_add_response_header(r, "Cache-Control", "no-store");
    as_download(r, c, id, thread ? "thread.xml" : "accounting.jsonl");
    return aw__reply(c, MHD_HTTP_OK, r);
}
