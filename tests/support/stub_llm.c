/* stub_llm — a scripted stand-in for the OpenAI and Anthropic HTTP APIs,
 * for tests: HTTP/1.1 on 127.0.0.1 at an ephemeral port.
 *
 *   stub_llm --script FILE --log FILE [--timeout-ms N] [--client-pid-file FILE]
 *
 * Prints the port number alone on the first line of stdout. It serves any
 * number of connections at once (kept alive, or closed after a reply when
 * the client asks), exits 0 once every script line is used up and its
 * reply sent, and exits 3 after --timeout-ms (default 60000) whatever
 * happens, so it never hangs a test.
 *
 * The log: every request appended as a JSON line when it has arrived
 * whole: {"seq": 1, "conn": 1, "line": 3, "arrived_us": 1795801119570123,
 * "method": "POST", "path": "/v1/messages?beta=true", "headers":
 * {"x-api-key": "...", ...}, "body": "..."}. "conn" numbers the connections in the order accepted (a
 * kept-alive one shows as the same number); "line" is the script line
 * that answered (0: none did, and the reply was a 500 saying so, or a
 * 404 for a path that is no model API, bodiless for HEAD); header
 * names are in lower case and values as sent (keys included, so tests see
 * them go as headers); the body is a string. "arrived_us": when the
 * request had arrived whole (CLOCK_REALTIME, microseconds), so a benchmark
 * can tell how long after its start a client sent its first request.
 * With --client-pid-file, "client_cpu_ns" too: the CPU time so far of the
 * process whose pid that file holds (all its threads, from /proc), read
 * while the client waits for the reply; the benchmark's launcher writes
 * the pid of the runtime it measures there (bench/run_runtime.sh), and
 * the difference between two requests is the CPU the client spent on one
 * turn. Absent while the file holds no live pid.
 *
 * The script: one JSON object per line (blank lines skipped). A request
 * takes the first line not used up whose "endpoint" equals its path (the
 * query left out), or that has no "endpoint" (such a line answers only
 * paths ending in /chat/completions, /messages or /responses, unless it
 * has a "body"). Keys, all optional:
 *
 *   endpoint     "/v1/chat/completions" | "/v1/messages" | "/v1/responses";
 *                the reply's shape follows it (or the request's path)
 *   times        how many requests the line answers (default 1; 0: any
 *                number, and the script is then never done)
 *   text         the reply text;  reasoning  reasoning/thinking text
 *   tool_calls   [{"id", "name", "arguments": "JSON text" or a value}]
 *   usage        {"input_tokens", "output_tokens", "cache_read_tokens",
 *                 "cache_write_tokens", "reasoning_tokens"}
 *   stop_reason  as the API writes it (default: stop / tool_calls,
 *                end_turn / tool_use, completed)
 *   model        default: the request's "model"
 *   stream       true/false; default: the request's "stream"
 *   piece        bytes of text or arguments per delta event (default 16;
 *                4096 with big_mb), never cutting a UTF-8 character
 *   chunks       "random" (default for a stream): writes of 1..max_chunk
 *                bytes (default 64) from "seed" (default 1); N: writes of
 *                N bytes; 0 (default for a whole reply): one write
 *   chunk_delay_ms  a pause after each write
 *   delay_ms     a pause before the status line
 *   big_mb       the text is N MiB of 64-byte lines
 *                "0123...XYZ+\n" (written 64 KiB at a time)
 *   status       an HTTP status; >= 300 sends the API's error document
 *                built from "error": {"message", "type"} (or a string)
 *   headers      {"Retry-After": "2", ...} extra response headers
 *   body         the exact body to send instead (content_type sets its
 *                type; a stream sends it as one event)
 *   close        true: "Connection: close" after the reply
 *   fault        "close": close the connection without replying;
 *                "reset": a TCP reset after "after_events" events (default
 *                  half of them; half the bytes of a whole reply);
 *                "truncate": end the body cleanly there, the rest unsent;
 *                "malformed": the line `data: {"malformed` as an extra
 *                  event after "after_events" (default 1); a whole reply
 *                  is cut in half;
 *                "stall": pause "stall_ms" (default 10000) there, then go on
 *
 * Examples:
 *   {"endpoint": "/v1/chat/completions", "text": "Hello", "usage": {"input_tokens": 10, "output_tokens": 2}}
 *   {"endpoint": "/v1/messages", "tool_calls": [{"id": "toolu_1", "name": "read", "arguments": {"path": "a"}}]}
 *   {"endpoint": "/v1/responses", "text": "done", "usage": {"input_tokens": 5, "output_tokens": 1}}
 *   {"endpoint": "/v1/chat/completions", "status": 429, "headers": {"Retry-After": "2"}, "error": "Rate limit reached"}
 *   {"endpoint": "/v1/messages", "text": "abc", "fault": "reset", "after_events": 3}
 *   {"endpoint": "/v1/chat/completions", "text": "abc", "fault": "stall", "stall_ms": 5000}
 *   {"endpoint": "/v1/chat/completions", "big_mb": 50}
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stub_llm.h"

#define MAX_HEAD ((size_t)64 << 10)
#define MAX_BODY ((size_t)512 << 20)
#define MAX_CONNS 64

typedef struct script_line {
    aw_json_doc *doc;
    const aw_json_value *v;
    size_t lineno;
    const char *endpoint; /* NULL: any */
    long times;           /* 0: any number */
    long used;
} script_line;

enum mark_kind { MARK_STALL, MARK_RESET, MARK_CLOSE };

typedef struct mark {
    size_t at; /* in the bytes of the response */
    enum mark_kind kind;
    long ms;
} mark;

enum chunking { CHUNK_WHOLE, CHUNK_FIXED, CHUNK_RANDOM };

typedef struct conn {
    int fd;
    long number;
    aw_buf in;
    bool continued; /* 100 Continue sent for the request being read */
    /* the response being written */
    bool writing;
    aw_buf out;
    size_t out_pos;
    mark marks[4];
    size_t nmarks, next_mark;
    enum chunking chunking;
    size_t chunk_size, max_chunk;
    uint64_t rng;
    long chunk_delay_ms;
    int64_t wake_at; /* sleeping until then (monotonic ms); 0: awake */
    bool close_after;
} conn;

static script_line *lines;
static size_t nlines;
static FILE *log_file;
static long seq;
static const char *client_pid_file;
static conn *conns[MAX_CONNS];

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The CPU time of the client named by --client-pid-file, in nanoseconds:
 * the first field of each of its threads' schedstat (time on a CPU, ns
 * precise where /proc/PID/stat counts 10 ms ticks). -1 when unknown. */
static long long client_cpu_ns(void)
{
    FILE *f = client_pid_file ? fopen(client_pid_file, "r") : NULL;
    long pid = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task", pid);
    DIR *tasks = pid > 0 ? opendir(path) : NULL;
    if (!tasks)
        return -1;
    long long total = 0;
    struct dirent *t;
    while ((t = readdir(tasks))) {
        if (t->d_name[0] == '.')
            continue;
        char stat_path[96];
        snprintf(stat_path, sizeof stat_path, "/proc/%ld/task/%.20s/schedstat", pid, t->d_name);
        FILE *sf = fopen(stat_path, "r");
        long long ns = 0;
        if (sf && fscanf(sf, "%lld", &ns) == 1)
            total += ns;
        if (sf)
            fclose(sf);
    }
    closedir(tasks);
    return total;
}

static void must(int rc)
{
    if (rc) {
        fprintf(stderr, "stub_llm: out of memory\n");
        exit(2);
    }
}

/* ---- the script ------------------------------------------------------------------ */

static void load_script(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "stub_llm: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t b = 0;
        while (b < (size_t)n && (line[b] == ' ' || line[b] == '\t' || line[b] == '\r' || line[b] == '\n'))
            b++;
        if (b == (size_t)n)
            continue;
        aw_json_doc *doc = NULL;
        aw_error err;
        if (aw_json_parse(line, (size_t)n, NULL, &doc, &err) || !aw_json_is_object(aw_json_doc_root(doc))) {
            fprintf(stderr, "stub_llm: %s:%zu: %s\n", path, lineno, doc ? "a line must be a JSON object" : err.message);
            exit(2);
        }
        lines = realloc(lines, (nlines + 1) * sizeof *lines);
        if (!lines)
            must(-1);
        script_line *s = &lines[nlines++];
        memset(s, 0, sizeof *s);
        s->doc = doc;
        s->v = aw_json_doc_root(doc);
        s->lineno = lineno;
        const aw_json_value *ep = aw_json_get(s->v, "endpoint");
        s->endpoint = aw_json_is_string(ep) ? ep->u.str.ptr : NULL;
        const aw_json_value *t = aw_json_get(s->v, "times");
        s->times = aw_json_is_number(t) ? (long)t->u.num.d : 1;
    }
    free(line);
    fclose(f);
}

static bool script_done(void)
{
    for (size_t i = 0; i < nlines; i++)
        if (lines[i].times == 0 || lines[i].used < lines[i].times)
            return false;
    return true;
}

static script_line *take_line(const char *path, size_t path_len)
{
    for (size_t i = 0; i < nlines; i++) {
        script_line *s = &lines[i];
        if (s->times && s->used >= s->times)
            continue;
        if (s->endpoint && (strlen(s->endpoint) != path_len || memcmp(s->endpoint, path, path_len) != 0))
            continue;
        /* a line with no endpoint answers the model APIs only (unless it
         * gives its own body), so a client's other calls (a model list, a
         * token count) take no line meant for them */
        if (!s->endpoint && stub_api_of_path(path, path_len) == STUB_UNKNOWN && !aw_json_get(s->v, "body"))
            continue;
        s->used++;
        return s;
    }
    return NULL;
}

static long long line_int(const aw_json_value *v, const char *key, long long dflt)
{
    const aw_json_value *x = aw_json_get(v, key);
    return aw_json_is_number(x) ? (long long)x->u.num.d : dflt;
}

/* ---- requests ---------------------------------------------------------------------- */

typedef struct header {
    const char *name, *value;
    size_t name_len, value_len;
} header;

typedef struct request {
    const char *method, *target;
    size_t method_len, target_len;
    header headers[100];
    size_t nheaders;
    aw_buf body;
    bool close;
} request;

static const header *find_header(const request *q, const char *name)
{
    size_t k = strlen(name);
    for (size_t i = 0; i < q->nheaders; i++)
        if (q->headers[i].name_len == k && strncasecmp(q->headers[i].name, name, k) == 0)
            return &q->headers[i];
    return NULL;
}

static void log_request(const conn *c, const request *q, size_t line)
{
    aw_buf b;
    aw_buf_init(&b, NULL);
    must(aw_buf_printf(&b, "{\"seq\":%ld,\"conn\":%ld,\"line\":%zu,\"arrived_us\":%lld,", ++seq, c->number, line,
                       (long long)wall_us()));
    long long cpu = client_cpu_ns();
    if (cpu >= 0)
        must(aw_buf_printf(&b, "\"client_cpu_ns\":%lld,", cpu));
    must(aw_buf_append_str(&b, "\"method\":"));
    must(aw_json_write_string(&b, q->method, q->method_len));
    must(aw_buf_append_str(&b, ",\"path\":"));
    must(aw_json_write_string(&b, q->target, q->target_len));
    must(aw_buf_append_str(&b, ",\"headers\":{"));
    for (size_t i = 0; i < q->nheaders; i++) {
        char name[256];
        size_t k = q->headers[i].name_len < sizeof name ? q->headers[i].name_len : sizeof name - 1;
        for (size_t j = 0; j < k; j++) {
            char ch = q->headers[i].name[j];
            name[j] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
        }
        if (i)
            must(aw_buf_putc(&b, ','));
        must(aw_json_write_string(&b, name, k));
        must(aw_buf_putc(&b, ':'));
        must(aw_json_write_string(&b, q->headers[i].value, q->headers[i].value_len));
    }
    must(aw_buf_append_str(&b, "},\"body\":"));
    must(aw_json_write_string(&b, q->body.data ? q->body.data : "", q->body.len));
    must(aw_buf_append_str(&b, "}\n"));
    fwrite(b.data, 1, b.len, log_file);
    fflush(log_file);
    aw_buf_free(&b);
}

/* Decode a chunked body from p[0..n); returns the bytes it took, 0 while
 * incomplete, -1 when malformed. */
static long dechunk(const char *p, size_t n, aw_buf *body)
{
    size_t i = 0;
    aw_buf_clear(body);
    for (;;) {
        const char *eol = memmem(p + i, n - i, "\r\n", 2);
        if (!eol)
            return 0;
        char *end;
        unsigned long long size = strtoull(p + i, &end, 16);
        if (end == p + i || size > MAX_BODY)
            return -1;
        i = (size_t)(eol - p) + 2;
        if (size == 0) {
            /* trailers, then the blank line */
            for (;;) {
                const char *e2 = memmem(p + i, n - i, "\r\n", 2);
                if (!e2)
                    return 0;
                size_t len = (size_t)(e2 - (p + i));
                i += len + 2;
                if (len == 0)
                    return (long)i;
            }
        }
        if (n - i < size + 2)
            return 0;
        must(aw_buf_append(body, p + i, size));
        i += size + 2;
    }
}

/* A whole request at the start of c->in: fills q and returns the bytes it
 * took; 0 while incomplete; -1 for a request that cannot be served. */
static long parse_request(conn *c, request *q)
{
    const char *p = c->in.data;
    size_t n = c->in.len;
    const char *end = n ? memmem(p, n, "\r\n\r\n", 4) : NULL;
    if (!end)
        return n > MAX_HEAD ? -1 : 0;
    size_t head_len = (size_t)(end - p) + 4;
    memset(q, 0, sizeof *q);
    aw_buf_init(&q->body, NULL);
    const char *sp1 = memchr(p, ' ', head_len);
    const char *eol = memmem(p, head_len, "\r\n", 2);
    const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
    if (!sp1 || !sp2)
        return -1;
    q->method = p;
    q->method_len = (size_t)(sp1 - p);
    q->target = sp1 + 1;
    q->target_len = (size_t)(sp2 - sp1 - 1);
    const char *h = eol + 2;
    while (h < end + 2 && q->nheaders < sizeof q->headers / sizeof *q->headers) {
        const char *he = memmem(h, (size_t)(end + 2 - h), "\r\n", 2);
        if (!he || he == h)
            break;
        const char *colon = memchr(h, ':', (size_t)(he - h));
        if (colon) {
            header *x = &q->headers[q->nheaders++];
            x->name = h;
            x->name_len = (size_t)(colon - h);
            const char *v = colon + 1;
            while (v < he && (*v == ' ' || *v == '\t'))
                v++;
            x->value = v;
            x->value_len = (size_t)(he - v);
        }
        h = he + 2;
    }
    const header *conn_h = find_header(q, "connection");
    q->close = conn_h && conn_h->value_len == 5 && strncasecmp(conn_h->value, "close", 5) == 0;
    const header *te = find_header(q, "transfer-encoding");
    const header *cl = find_header(q, "content-length");
    const header *expect = find_header(q, "expect");
    bool need_body = (te && te->value_len >= 7 && strncasecmp(te->value, "chunked", 7) == 0) ||
                     (cl && strtoull(cl->value, NULL, 10) > 0);
    if (expect && need_body && !c->continued && n == head_len) {
        static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
        if (send(c->fd, cont, sizeof cont - 1, MSG_NOSIGNAL) < 0)
            return -1;
        c->continued = true;
    }
    if (te && te->value_len >= 7 && strncasecmp(te->value, "chunked", 7) == 0) {
        long took = dechunk(p + head_len, n - head_len, &q->body);
        if (took <= 0) {
            aw_buf_free(&q->body);
            return took < 0 || n > MAX_BODY ? -1 : 0;
        }
        return (long)head_len + took;
    }
    size_t len = cl ? (size_t)strtoull(cl->value, NULL, 10) : 0;
    if (len > MAX_BODY)
        return -1;
    if (n - head_len < len)
        return 0;
    must(aw_buf_append(&q->body, p + head_len, len));
    return (long)(head_len + len);
}

/* ---- responses --------------------------------------------------------------------- */

static const char *reason_of(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 529: return "Overloaded";
    default: return "Status";
    }
}

static void add_mark(conn *c, size_t at, enum mark_kind kind, long ms)
{
    if (c->nmarks < sizeof c->marks / sizeof *c->marks)
        c->marks[c->nmarks++] = (mark){at, kind, ms};
}

static void put_head(conn *c, int status, const char *content_type, const aw_json_value *extra, bool chunked,
                     size_t length)
{
    must(aw_buf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n", status, reason_of(status), content_type));
    for (size_t i = 0; i < aw_json_count(extra) && aw_json_is_object(extra); i++) {
        const aw_json_member *m = &extra->u.obj.members[i];
        if (!aw_json_is_string(&m->value))
            continue;
        must(aw_buf_append(&c->out, m->key, m->key_len));
        must(aw_buf_append_str(&c->out, ": "));
        must(aw_buf_append(&c->out, m->value.u.str.ptr, m->value.u.str.len));
        must(aw_buf_append_str(&c->out, "\r\n"));
    }
    if (chunked)
        must(aw_buf_append_str(&c->out, "Transfer-Encoding: chunked\r\n"));
    else
        must(aw_buf_printf(&c->out, "Content-Length: %zu\r\n", length));
    if (c->close_after)
        must(aw_buf_append_str(&c->out, "Connection: close\r\n"));
    must(aw_buf_append_str(&c->out, "\r\n"));
}

static void put_chunk(conn *c, const char *p, size_t n)
{
    if (n == 0)
        return;
    must(aw_buf_printf(&c->out, "%zx\r\n", n));
    must(aw_buf_append(&c->out, p, n));
    must(aw_buf_append_str(&c->out, "\r\n"));
}

static const char malformed_event[] = "data: {\"malformed\n\n";

/* The reply body of a stream as chunks, one per event, with the line's
 * fault placed after event `after`. */
static void put_stream(conn *c, const stub_body *b, const char *fault, size_t after, long stall_ms)
{
    size_t start = 0;
    for (size_t i = 0; i <= b->nevents; i++) {
        if (i == after && fault) {
            if (strcmp(fault, "malformed") == 0)
                put_chunk(c, malformed_event, sizeof malformed_event - 1);
            else if (strcmp(fault, "stall") == 0)
                add_mark(c, c->out.len, MARK_STALL, stall_ms);
            else if (strcmp(fault, "reset") == 0) {
                add_mark(c, c->out.len, MARK_RESET, 0);
                return;
            } else if (strcmp(fault, "truncate") == 0)
                break;
        }
        if (i == b->nevents)
            break;
        put_chunk(c, b->bytes.data + start, b->event_ends[i] - start);
        start = b->event_ends[i];
    }
    must(aw_buf_append_str(&c->out, "0\r\n\r\n"));
}

static bool request_wants_stream(const request *q, const char **model, aw_json_doc **doc)
{
    *model = NULL;
    *doc = NULL;
    if (aw_json_parse(q->body.data ? q->body.data : "", q->body.len, NULL, doc, NULL))
        return false;
    const aw_json_value *root = aw_json_doc_root(*doc);
    const aw_json_value *m = aw_json_get(root, "model");
    if (aw_json_is_string(m))
        *model = m->u.str.ptr;
    const aw_json_value *s = aw_json_get(root, "stream");
    return aw_json_is_bool(s) && s->u.b;
}

static void set_chunking(conn *c, const aw_json_value *line, bool stream, bool big)
{
    const aw_json_value *ch = aw_json_get(line, "chunks");
    c->rng = (uint64_t)line_int(line, "seed", 1);
    c->max_chunk = (size_t)line_int(line, "max_chunk", 64);
    if (c->max_chunk == 0)
        c->max_chunk = 1;
    c->chunk_delay_ms = (long)line_int(line, "chunk_delay_ms", 0);
    if (aw_json_is_string(ch) && strcmp(ch->u.str.ptr, "random") == 0)
        c->chunking = CHUNK_RANDOM;
    else if (aw_json_is_number(ch) && ch->u.num.d >= 1) {
        c->chunking = CHUNK_FIXED;
        c->chunk_size = (size_t)ch->u.num.d;
    } else if (aw_json_is_number(ch))
        c->chunking = CHUNK_WHOLE;
    else if (big) {
        c->chunking = CHUNK_FIXED;
        c->chunk_size = 65536;
    } else
        c->chunking = stream ? CHUNK_RANDOM : CHUNK_WHOLE;
}

static void respond_error(conn *c, stub_api api, int status, const aw_json_value *line, const char *message)
{
    aw_buf body;
    aw_buf_init(&body, NULL);
    const aw_json_value *raw = aw_json_get(line, "body");
    if (aw_json_is_string(raw))
        must(aw_buf_append(&body, raw->u.str.ptr, raw->u.str.len));
    else if (message) {
        must(aw_buf_append_str(&body, "{\"error\":{\"message\":"));
        must(aw_json_write_string(&body, message, strlen(message)));
        must(aw_buf_append_str(&body, ",\"type\":\"stub_error\"}}"));
    } else
        stub_error_body(api, status, line, &body);
    put_head(c, status, "application/json", aw_json_get(line, "headers"), false, body.len);
    must(aw_buf_append(&c->out, body.data, body.len));
    aw_buf_free(&body);
}

static void respond(conn *c, const request *q)
{
    size_t path_len = q->target_len;
    const char *qm = memchr(q->target, '?', q->target_len);
    if (qm)
        path_len = (size_t)(qm - q->target);
    script_line *s = take_line(q->target, path_len);
    log_request(c, q, s ? s->lineno : 0);
    aw_buf_clear(&c->out);
    c->out_pos = 0;
    c->nmarks = c->next_mark = 0;
    c->wake_at = 0;
    c->writing = true;
    c->close_after = q->close;
    if (!s) {
        c->chunking = CHUNK_WHOLE;
        if (q->method_len == 4 && memcmp(q->method, "HEAD", 4) == 0) {
            /* a reachability check (claude sends HEAD /): no body */
            must(aw_buf_append_str(&c->out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"));
            return;
        }
        bool api = stub_api_of_path(q->target, path_len) != STUB_UNKNOWN;
        char msg[600];
        snprintf(msg, sizeof msg, "stub: %s %.*s %.*s", api ? "no scripted reply left for" : "nothing at",
                 (int)q->method_len, q->method, (int)(path_len > 400 ? 400 : path_len), q->target);
        respond_error(c, STUB_UNKNOWN, api ? 500 : 404, NULL, msg);
        return;
    }
    const aw_json_value *line = s->v;
    stub_api api = stub_api_of_path(s->endpoint ? s->endpoint : q->target, s->endpoint ? strlen(s->endpoint) : path_len);
    const aw_json_value *fv = aw_json_get(line, "fault");
    const char *fault = aw_json_is_string(fv) ? fv->u.str.ptr : NULL;
    const aw_json_value *close_v = aw_json_get(line, "close");
    if (aw_json_is_bool(close_v) && close_v->u.b)
        c->close_after = true;
    long delay = (long)line_int(line, "delay_ms", 0);
    if (delay > 0)
        add_mark(c, 0, MARK_STALL, delay);
    if (fault && strcmp(fault, "close") == 0) {
        add_mark(c, 0, MARK_CLOSE, 0);
        c->chunking = CHUNK_WHOLE;
        return;
    }
    int status = (int)line_int(line, "status", 200);
    const char *model;
    aw_json_doc *req_doc;
    bool stream = request_wants_stream(q, &model, &req_doc);
    const aw_json_value *sv = aw_json_get(line, "stream");
    if (aw_json_is_bool(sv))
        stream = sv->u.b;
    set_chunking(c, line, stream, line_int(line, "big_mb", 0) > 0);
    if (status >= 300) {
        respond_error(c, api, status, line, NULL);
        aw_json_doc_free(req_doc);
        return;
    }
    stub_body b;
    stub_body_init(&b);
    const aw_json_value *raw = aw_json_get(line, "body");
    char err[200];
    if (aw_json_is_string(raw)) {
        must(aw_buf_append(&b.bytes, raw->u.str.ptr, raw->u.str.len));
    } else if (stub_reply_body(api, line, model, stream, &b, err, sizeof err)) {
        char msg[300];
        snprintf(msg, sizeof msg, "stub: script line %zu: %s", s->lineno, err);
        respond_error(c, api, 500, NULL, msg);
        stub_body_free(&b);
        aw_json_doc_free(req_doc);
        return;
    }
    aw_json_doc_free(req_doc);
    const aw_json_value *ct = aw_json_get(line, "content_type");
    const char *content_type = aw_json_is_string(ct) ? ct->u.str.ptr : stream ? "text/event-stream" : "application/json";
    long stall_ms = (long)line_int(line, "stall_ms", 10000);
    if (stream) {
        size_t after = (size_t)line_int(line, "after_events", fault && strcmp(fault, "malformed") == 0 ? 1
                                                               : (long long)(b.nevents / 2));
        if (b.nevents == 0) {
            /* a raw body: one event, the faults around it */
            b.event_ends = malloc(sizeof *b.event_ends);
            if (!b.event_ends)
                must(-1);
            b.event_ends[0] = b.bytes.len;
            b.nevents = 1;
        }
        put_head(c, status, content_type, aw_json_get(line, "headers"), true, 0);
        put_stream(c, &b, fault, after, stall_ms);
    } else {
        if (fault && strcmp(fault, "malformed") == 0)
            b.bytes.len /= 2;
        put_head(c, status, content_type, aw_json_get(line, "headers"), false, b.bytes.len);
        size_t body_at = c->out.len;
        must(aw_buf_append(&c->out, b.bytes.data, b.bytes.len));
        size_t half = body_at + b.bytes.len / 2;
        if (fault && strcmp(fault, "stall") == 0)
            add_mark(c, half, MARK_STALL, stall_ms);
        else if (fault && strcmp(fault, "reset") == 0)
            add_mark(c, half, MARK_RESET, 0);
        else if (fault && strcmp(fault, "truncate") == 0)
            add_mark(c, half, MARK_CLOSE, 0);
    }
    stub_body_free(&b);
}

/* ---- connections --------------------------------------------------------------------- */

static void drop(size_t i, bool reset)
{
    conn *c = conns[i];
    if (reset) {
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        shutdown(c->fd, SHUT_WR);
        char sink[4096];
        while (read(c->fd, sink, sizeof sink) > 0)
            ;
    }
    close(c->fd);
    aw_buf_free(&c->in);
    aw_buf_free(&c->out);
    free(c);
    conns[i] = NULL;
}

static size_t next_size(conn *c, size_t left)
{
    size_t n = left;
    if (c->chunking == CHUNK_FIXED)
        n = c->chunk_size;
    else if (c->chunking == CHUNK_RANDOM) {
        /* splitmix64 */
        uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        n = 1 + (size_t)(z % c->max_chunk);
    }
    return n < left ? n : left;
}

static void serve_requests(size_t i);

/* Write what the socket takes, up to the next mark. */
static void write_some(size_t i)
{
    conn *c = conns[i];
    while (c->writing && c->wake_at == 0) {
        size_t limit = c->next_mark < c->nmarks ? c->marks[c->next_mark].at : c->out.len;
        if (c->out_pos >= limit && c->next_mark < c->nmarks) {
            mark m = c->marks[c->next_mark++];
            if (m.kind == MARK_STALL) {
                c->wake_at = now_ms() + m.ms;
                return;
            }
            drop(i, m.kind == MARK_RESET);
            return;
        }
        if (c->out_pos == c->out.len) {
            c->writing = false;
            c->continued = false;
            if (c->close_after) {
                drop(i, false);
                return;
            }
            serve_requests(i); /* a request that came meanwhile */
            return;
        }
        size_t n = next_size(c, limit - c->out_pos);
        ssize_t w = send(c->fd, c->out.data + c->out_pos, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w < 0) {
            drop(i, false);
            return;
        }
        c->out_pos += (size_t)w;
        if (c->chunk_delay_ms > 0 && c->chunking != CHUNK_WHOLE) {
            c->wake_at = now_ms() + c->chunk_delay_ms;
            return;
        }
    }
}

static void serve_requests(size_t i)
{
    conn *c = conns[i];
    if (!c || c->writing)
        return;
    request q;
    long took = parse_request(c, &q);
    if (took == 0)
        return;
    if (took < 0) {
        static const char bad[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        (void)!send(c->fd, bad, sizeof bad - 1, MSG_NOSIGNAL);
        drop(i, false);
        return;
    }
    respond(c, &q);
    aw_buf_free(&q.body);
    memmove(c->in.data, c->in.data + took, c->in.len - (size_t)took);
    c->in.len -= (size_t)took;
    write_some(i);
}

static void read_some(size_t i)
{
    conn *c = conns[i];
    char buf[65536];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n > 0) {
            must(aw_buf_append(&c->in, buf, (size_t)n));
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        /* closed by the client, or broken: whatever it was waiting for is moot */
        drop(i, false);
        return;
    }
    serve_requests(i);
}

static bool any_writing(void)
{
    for (size_t i = 0; i < MAX_CONNS; i++)
        if (conns[i] && conns[i]->writing)
            return true;
    return false;
}

static int listen_loopback(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&a, &len)) {
        fprintf(stderr, "stub_llm: cannot listen on 127.0.0.1: %s\n", strerror(errno));
        exit(2);
    }
    printf("%d\n", ntohs(a.sin_port));
    fflush(stdout);
    return fd;
}

static void accept_all(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        size_t i = 0;
        while (i < MAX_CONNS && conns[i])
            i++;
        if (i == MAX_CONNS) {
            close(fd);
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conn *c = calloc(1, sizeof *c);
        if (!c)
            must(-1);
        static long accepted;
        c->fd = fd;
        c->number = ++accepted;
        aw_buf_init(&c->in, NULL);
        aw_buf_init(&c->out, NULL);
        conns[i] = c;
    }
}

int main(int argc, char **argv)
{
    const char *script = NULL, *log_path = NULL;
    long timeout_ms = 60000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--script") == 0)
            script = argv[i + 1];
        else if (strcmp(argv[i], "--log") == 0)
            log_path = argv[i + 1];
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            timeout_ms = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--client-pid-file") == 0)
            client_pid_file = argv[i + 1];
    }
    if (!script || !log_path) {
        fprintf(stderr, "usage: stub_llm --script FILE --log FILE [--timeout-ms N] [--client-pid-file FILE]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    load_script(script);
    log_file = fopen(log_path, "ab");
    if (!log_file) {
        fprintf(stderr, "stub_llm: %s: %s\n", log_path, strerror(errno));
        return 2;
    }
    int lfd = listen_loopback();
    int64_t deadline = now_ms() + timeout_ms;
    struct pollfd pfd[MAX_CONNS + 1];
    size_t who[MAX_CONNS + 1];
    for (;;) {
        if (script_done() && !any_writing())
            break;
        int64_t now = now_ms();
        if (now >= deadline) {
            fprintf(stderr, "stub_llm: timed out after %ld ms with script lines left\n", timeout_ms);
            return 3;
        }
        int64_t wait = deadline - now;
        size_t n = 0;
        pfd[n].fd = lfd;
        pfd[n].events = POLLIN;
        n++;
        for (size_t i = 0; i < MAX_CONNS; i++) {
            conn *c = conns[i];
            if (!c)
                continue;
            if (c->wake_at && c->wake_at - now < wait)
                wait = c->wake_at > now ? c->wake_at - now : 0;
            pfd[n].fd = c->fd;
            pfd[n].events = (short)(POLLIN | (c->writing && !c->wake_at ? POLLOUT : 0));
            who[n] = i;
            n++;
        }
        if (poll(pfd, n, (int)wait) < 0 && errno != EINTR)
            return 2;
        if (pfd[0].revents)
            accept_all(lfd);
        now = now_ms();
        for (size_t k = 1; k < n; k++) {
            size_t i = who[k];
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR))
                read_some(i);
            conn *c = conns[i];
            if (!c)
                continue;
            if (c->wake_at && now >= c->wake_at)
                c->wake_at = 0;
            if (c->writing && !c->wake_at)
                write_some(i);
        }
    }
    for (size_t i = 0; i < MAX_CONNS; i++)
        if (conns[i])
            drop(i, false);
    close(lfd);
    fclose(log_file);
    for (size_t i = 0; i < nlines; i++)
        aw_json_doc_free(lines[i].doc);
    free(lines);
    return 0;
}
