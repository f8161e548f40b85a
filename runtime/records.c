/* A run's records on disk, written as the run goes.
 *
 * The thread file is "<thread>" then one "\n  <event ...>" per event and
 * "\n</thread>": each new event is written over the closing tag together
 * with a new closing tag, in one pwrite, so the file is a whole document
 * after every event and the cost of an event is its own size. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agentwire/records.h"
#include "agentwire/thread.h"
#include "internal/rt_util.h"

#define THREAD_OPEN "<thread>"
#define THREAD_CLOSE "\n</thread>"

typedef struct run_envelopes {
    char *session_id;
    aw_envelope_adapter *adapter;
} run_envelopes;

typedef struct call_name {
    char *id, *name;
} call_name;

struct aw_records {
    aw_records_config cfg;
    const aw_allocator *alloc;
    int thread_fd, accounting_fd, trace_fd, record_fd;
    off_t thread_end;         /* where the closing tag starts */
    size_t thread_events;
    char *thread_session;     /* the run whose events the thread holds */
    call_name *names;
    size_t nnames, cap_names;
    run_envelopes *envs;
    size_t nenvs;
    aw_buf line;
    char *paths[4];           /* owned copies of cfg's paths */
    char error[AW_ERROR_MESSAGE_MAX];
};

static void note_error(aw_records *rec, const char *what, int e)
{
    if (!rec->error[0])
        snprintf(rec->error, sizeof rec->error, "%s: %s", what, strerror(e));
}

static int open_file(const char *path, int *fd, aw_error *err)
{
    *fd = -1;
    if (!path)
        return 0;
    *fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    return *fd < 0 ? aw_rt_error(err, AW_EINVAL, "%s: %s", path, strerror(errno)) : 0;
}

aw_records *aw_records_new(const aw_records_config *cfg, aw_error *err)
{
    aw_error_clear(err);
    aw_records *rec = aw_malloc(cfg->alloc, sizeof *rec);
    if (!rec) {
        aw_rt_error(err, AW_ENOMEM, "out of memory");
        return NULL;
    }
    memset(rec, 0, sizeof *rec);
    rec->cfg = *cfg;
    rec->alloc = cfg->alloc;
    rec->thread_fd = rec->accounting_fd = rec->trace_fd = rec->record_fd = -1;
    aw_buf_init(&rec->line, cfg->alloc);
    /* The paths name the files in messages for as long as the records
     * live: keep copies, the caller's strings may be gone. */
    const char **paths[] = {&rec->cfg.thread_path, &rec->cfg.accounting_path, &rec->cfg.trace_path,
                            &rec->cfg.record_path};
    for (size_t i = 0; i < 4; i++)
        if (*paths[i] && !(*paths[i] = rec->paths[i] = aw_rt_strdup(cfg->alloc, *paths[i]))) {
            aw_rt_error(err, AW_ENOMEM, "out of memory");
            aw_records_free(rec);
            return NULL;
        }
    cfg = &rec->cfg;
    if (open_file(cfg->thread_path, &rec->thread_fd, err) || open_file(cfg->accounting_path, &rec->accounting_fd, err) ||
        open_file(cfg->trace_path, &rec->trace_fd, err) || open_file(cfg->record_path, &rec->record_fd, err)) {
        aw_records_free(rec);
        return NULL;
    }
    if (rec->thread_fd >= 0) {
        if (aw_rt_write_all(rec->thread_fd, THREAD_OPEN THREAD_CLOSE, strlen(THREAD_OPEN THREAD_CLOSE))) {
            aw_rt_error(err, AW_EINVAL, "%s: %s", cfg->thread_path, strerror(errno));
            aw_records_free(rec);
            return NULL;
        }
        rec->thread_end = (off_t)strlen(THREAD_OPEN);
    }
    return rec;
}

/* ---- the thread ------------------------------------------------------------------ */

static int remember_name(aw_records *rec, aw_text id, aw_text name)
{
    if (rec->nnames == rec->cap_names) {
        size_t cap = rec->cap_names ? rec->cap_names * 2 : 32;
        call_name *n = aw_realloc(rec->alloc, rec->names, cap * sizeof *n);
        if (!n)
            return AW_ENOMEM;
        rec->names = n;
        rec->cap_names = cap;
    }
    call_name *c = &rec->names[rec->nnames];
    c->id = aw_rt_strndup(rec->alloc, id.ptr, id.len);
    c->name = aw_rt_strndup(rec->alloc, name.ptr, name.len);
    if (!c->id || !c->name) {
        aw_free(rec->alloc, c->id);
        aw_free(rec->alloc, c->name);
        return AW_ENOMEM;
    }
    rec->nnames++;
    return 0;
}

/* The tool of a call id: the latest call with it (results follow their
 * calls closely, so the search from the end is short). */
static aw_text name_of(const aw_records *rec, aw_text id)
{
    for (size_t i = rec->nnames; i-- > 0;)
        if (strlen(rec->names[i].id) == id.len && memcmp(rec->names[i].id, id.ptr, id.len) == 0)
            return (aw_text){rec->names[i].name, strlen(rec->names[i].name)};
    return (aw_text){"unknown", 7};
}

static void thread_event(aw_records *rec, const aw_run_info *run, const aw_json_value *event)
{
    if (rec->thread_fd < 0 || rec->error[0])
        return;
    if (!rec->thread_session && !(rec->thread_session = aw_rt_strdup(rec->alloc, run->session_id)))
        return note_error(rec, rec->cfg.thread_path, ENOMEM);
    if (strcmp(rec->thread_session, run->session_id) != 0)
        return; /* a sub-agent's events stay out of its parent's thread */
    aw_event ev;
    aw_error err;
    if (aw_event_from_json(event, &ev, &err))
        return;
    if (ev.kind == AW_EVENT_TOOL_CALL && remember_name(rec, ev.tool_call_id, ev.tool_name))
        return note_error(rec, rec->cfg.thread_path, ENOMEM);
    aw_buf_clear(&rec->line);
    aw_thread_options opts = {.alloc = rec->alloc};
    size_t id = rec->thread_events++;
    if (aw_buf_append_str(&rec->line, "\n  ") ||
        aw_thread_write_event(&ev, id, name_of(rec, ev.tool_call_id), &opts, &rec->line) ||
        aw_buf_append_str(&rec->line, THREAD_CLOSE))
        return note_error(rec, rec->cfg.thread_path, ENOMEM);
    if (rec->line.len == strlen("\n  ") + strlen(THREAD_CLOSE))
        return; /* a kind the format does not write */
    const char *p = rec->line.data;
    size_t n = rec->line.len;
    off_t at = rec->thread_end;
    while (n) {
        ssize_t w = pwrite(rec->thread_fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return note_error(rec, rec->cfg.thread_path, errno);
        p += w;
        n -= (size_t)w;
        at += w;
    }
    rec->thread_end = at - (off_t)strlen(THREAD_CLOSE);
}

/* ---- JSON lines -------------------------------------------------------------------- */

static void json_line(aw_records *rec, int fd, const char *path, const aw_json_value *v)
{
    if (fd < 0 || rec->error[0])
        return;
    aw_buf_clear(&rec->line);
    if (aw_json_write(v, NULL, &rec->line, NULL) || aw_buf_putc(&rec->line, '\n'))
        return note_error(rec, path, ENOMEM);
    if (aw_rt_write_all(fd, rec->line.data, rec->line.len))
        note_error(rec, path, errno);
}

/* ---- envelopes ------------------------------------------------------------------------- */

static int broadcast(void *ctx, const char *channel, const aw_json_value *env)
{
    aw_records *rec = ctx;
    for (size_t i = 0; i < rec->cfg.sink_count; i++) {
        aw_error err;
        if (rec->cfg.sinks[i]->ops->send(rec->cfg.sinks[i], channel, env, &err) && err.code == AW_ENOMEM)
            note_error(rec, rec->cfg.sinks[i]->name, ENOMEM);
    }
    return 0;
}

static aw_envelope_adapter *adapter_for(aw_records *rec, const aw_run_info *run)
{
    for (size_t i = 0; i < rec->nenvs; i++)
        if (strcmp(rec->envs[i].session_id, run->session_id) == 0)
            return rec->envs[i].adapter;
    run_envelopes *e = aw_realloc(rec->alloc, rec->envs, (rec->nenvs + 1) * sizeof *e);
    if (!e)
        return NULL;
    rec->envs = e;
    aw_envelope_config ec = {run->session_id, run->execution_id, rec->cfg.preset, rec->alloc};
    aw_envelope_adapter *a = aw_envelope_adapter_new(&ec, broadcast, rec);
    char *sid = aw_rt_strdup(rec->alloc, run->session_id);
    if (!a || !sid) {
        aw_envelope_adapter_free(a);
        aw_free(rec->alloc, sid);
        return NULL;
    }
    rec->envs[rec->nenvs++] = (run_envelopes){sid, a};
    return a;
}

/* ---- the observer ---------------------------------------------------------------------- */

static void on_event(void *ctx, const aw_run_info *run, const aw_json_value *event)
{
    thread_event(ctx, run, event);
}

static void on_runtime(void *ctx, const aw_run_info *run, const aw_json_value *event)
{
    aw_records *rec = ctx;
    if (!rec->cfg.sink_count)
        return;
    const aw_json_value *kind = aw_json_get(event, "event");
    if (!rec->cfg.stream_events && aw_json_is_string(kind) && strcmp(kind->u.str.ptr, "stream_chunk") == 0)
        return;
    aw_envelope_adapter *a = adapter_for(rec, run);
    if (!a)
        return note_error(rec, "events", ENOMEM);
    /* An event the adapter refuses is an envelope lost: said, not passed
     * over (the run then ends saying its records could not be kept). */
    aw_error err;
    aw_error_clear(&err);
    int rc = aw_envelope_adapter_handle(a, event, aw_rt_wall_ms(), &err);
    if (rc == AW_ENOMEM)
        note_error(rec, "events", ENOMEM);
    else if (rc && !rec->error[0])
        snprintf(rec->error, sizeof rec->error, "events: %.200s", err.message);
}

static void on_accounting(void *ctx, const aw_run_info *run, const aw_json_value *row)
{
    (void)run;
    aw_records *rec = ctx;
    json_line(rec, rec->accounting_fd, rec->cfg.accounting_path, row);
}

static void on_reply(void *ctx, const aw_run_info *run, const aw_json_value *reply)
{
    aw_records *rec = ctx;
    /* a sub-agent's replies would make the file unplayable for its parent */
    if (rec->thread_session && strcmp(rec->thread_session, run->session_id) != 0)
        return;
    json_line(rec, rec->record_fd, rec->cfg.record_path, reply);
}

void aw_records_trace(void *ctx, const char *what, const char *p, size_t n)
{
    aw_records *rec = ctx;
    if (rec->trace_fd < 0 || rec->error[0])
        return;
    char head[160];
    int k = snprintf(head, sizeof head, "=== %s (%zu bytes)\n", what, n);
    if (aw_rt_write_all(rec->trace_fd, head, (size_t)k) || aw_rt_write_all(rec->trace_fd, p, n) ||
        aw_rt_write_all(rec->trace_fd, "\n", 1))
        note_error(rec, rec->cfg.trace_path, errno);
}

static int on_step(void *ctx, const aw_run_info *run, const aw_run_step *step, aw_error *err)
{
    (void)run;
    (void)step;
    aw_records *rec = ctx;
    if (rec->error[0])
        return aw_rt_error(err, AW_EINVAL, "%s", rec->error);
    return 0;
}

aw_run_observer aw_records_observer(aw_records *rec)
{
    aw_run_observer o = {.ctx = rec,
                         .on_event = on_event,
                         .on_runtime = on_runtime,
                         .on_accounting = on_accounting,
                         .on_reply = on_reply,
                         .on_step = on_step};
    return o;
}

const char *aw_records_error(const aw_records *rec) { return rec->error[0] ? rec->error : NULL; }

/* The accounting's last rows: what each event destination delivered and
 * gave up on, once it has been flushed. */
static void sink_row(aw_records *rec, const aw_sink *sink)
{
    if (rec->accounting_fd < 0)
        return;
    aw_json_doc *d = aw_json_doc_new(rec->alloc);
    aw_json_value *row = d ? aw_json_new_object(d) : NULL;
    bool bad = !row || aw_json_object_set_string(d, row, "kind", "events", 6) ||
               aw_json_object_set_string(d, row, "destination", sink->name, strlen(sink->name)) ||
               aw_json_object_set_string(d, row, "sink", sink->ops->kind, strlen(sink->ops->kind)) ||
               aw_json_object_set_int(d, row, "sent", (int64_t)sink->sent) ||
               aw_json_object_set_int(d, row, "dropped", (int64_t)sink->dropped) ||
               aw_json_object_set_int(d, row, "dead_lettered", (int64_t)sink->dead_lettered) ||
               (sink->error[0] && aw_json_object_set_string(d, row, "error", sink->error, strlen(sink->error)));
    if (bad)
        note_error(rec, rec->cfg.accounting_path, ENOMEM);
    else
        json_line(rec, rec->accounting_fd, rec->cfg.accounting_path, row);
    aw_json_doc_free(d);
}

int aw_records_close(aw_records *rec, aw_error *err)
{
    aw_error_clear(err);
    int64_t flush_ms = rec->cfg.sink_flush_ms ? rec->cfg.sink_flush_ms : 5000;
    for (size_t i = 0; i < rec->cfg.sink_count && flush_ms > 0; i++) {
        aw_error e;
        if (rec->cfg.sinks[i]->ops->flush(rec->cfg.sinks[i], flush_ms, &e) && !rec->error[0])
            snprintf(rec->error, sizeof rec->error, "%s", e.message);
        sink_row(rec, rec->cfg.sinks[i]);
    }
    int fds[] = {rec->thread_fd, rec->accounting_fd, rec->trace_fd, rec->record_fd};
    const char *paths[] = {rec->cfg.thread_path, rec->cfg.accounting_path, rec->cfg.trace_path, rec->cfg.record_path};
    for (size_t i = 0; i < 4; i++)
        if (fds[i] >= 0 && fsync(fds[i]) != 0 && errno != EINVAL && errno != EROFS)
            note_error(rec, paths[i], errno);
    return rec->error[0] ? aw_rt_error(err, AW_EINVAL, "%s", rec->error) : 0;
}

void aw_records_free(aw_records *rec)
{
    if (!rec)
        return;
    int fds[] = {rec->thread_fd, rec->accounting_fd, rec->trace_fd, rec->record_fd};
    for (size_t i = 0; i < 4; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    for (size_t i = 0; i < rec->nnames; i++) {
        aw_free(rec->alloc, rec->names[i].id);
        aw_free(rec->alloc, rec->names[i].name);
    }
    aw_free(rec->alloc, rec->names);
    for (size_t i = 0; i < rec->nenvs; i++) {
        aw_envelope_adapter_free(rec->envs[i].adapter);
        aw_free(rec->alloc, rec->envs[i].session_id);
    }
    aw_free(rec->alloc, rec->envs);
    aw_free(rec->alloc, rec->thread_session);
    for (size_t i = 0; i < 4; i++)
        aw_free(rec->alloc, rec->paths[i]);
    aw_buf_free(&rec->line);
    aw_free(rec->alloc, rec);
}
