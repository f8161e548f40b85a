/* The DevTools-protocol driver of the browser tests (cdp.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agentwire/buf.h"
#include "cdp.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int fail(aw_cdp *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
    return -1;
}

static bool executable(const char *p)
{
    struct stat st;
    return p && !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK);
}

const char *aw_cdp_browser(void)
{
    static char found[512];
    const char *env = getenv("AW_CHROMIUM");
    if (env && *env)
        return executable(env) ? env : NULL;
    if (executable("/usr/bin/chromium"))
        return "/usr/bin/chromium";
    const char *path = getenv("PATH");
    static const char *const names[] = {"chromium", "chromium-browser"};
    for (size_t i = 0; path && i < 2; i++)
        for (const char *p = path; *p;) {
            size_t n = strcspn(p, ":");
            snprintf(found, sizeof found, "%.*s/%s", (int)n, p, names[i]);
            if (executable(found))
                return found;
            p += n + (p[n] == ':');
        }
    return NULL;
}

/* ---- messages ------------------------------------------------------------------------ */

static int send_text(aw_cdp *c, const aw_buf *msg)
{
    const char *p = msg->data;
    size_t n = msg->len + 1; /* with its NUL */
    while (n) {
        ssize_t w = write(c->to, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return fail(c, "the browser does not take commands: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The next whole message (NUL-ended) within the time left; NULL on
 * timeout or when the browser is gone. */
static aw_json_doc *next_message(aw_cdp *c, int64_t until)
{
    for (;;) {
        char *nul = c->len ? memchr(c->buf, 0, c->len) : NULL;
        if (nul) {
            size_t n = (size_t)(nul - c->buf);
            aw_json_doc *d = NULL;
            aw_json_parse(c->buf, n, NULL, &d, NULL);
            memmove(c->buf, nul + 1, c->len - n - 1);
            c->len -= n + 1;
            if (d)
                return d;
            continue;
        }
        int64_t left = until - now_ms();
        struct pollfd p = {c->from, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return NULL;
        char tmp[65536];
        ssize_t r = read(c->from, tmp, sizeof tmp);
        if (r <= 0)
            return NULL;
        char *b = realloc(c->buf, c->len + (size_t)r);
        if (!b)
            abort();
        memcpy(b + c->len, tmp, (size_t)r);
        c->buf = b;
        c->len += (size_t)r;
    }
}

/* Send method (on the page when on_page) and wait for its answer. */
static aw_json_doc *call(aw_cdp *c, bool on_page, const char *method, const char *params, int timeout_ms)
{
    int id = ++c->next_id;
    aw_buf msg;
    aw_buf_init(&msg, NULL);
    aw_buf_printf(&msg, "{\"id\":%d,\"method\":\"%s\"", id, method);
    if (on_page)
        aw_buf_printf(&msg, ",\"sessionId\":\"%s\"", c->session);
    aw_buf_append_str(&msg, ",\"params\":");
    aw_buf_append_str(&msg, params ? params : "{}");
    aw_buf_putc(&msg, '}');
    int rc = send_text(c, &msg);
    aw_buf_free(&msg);
    if (rc)
        return NULL;
    int64_t until = now_ms() + timeout_ms;
    for (;;) {
        aw_json_doc *d = next_message(c, until);
        if (!d) {
            fail(c, "%s: no answer in %d ms", method, timeout_ms);
            return NULL;
        }
        const aw_json_value *root = aw_json_doc_root(d), *got = aw_json_get(root, "id");
        if (!aw_json_is_number(got) || (int)got->u.num.d != id) {
            aw_json_doc_free(d); /* an event, or an older answer */
            continue;
        }
        const aw_json_value *e = aw_json_get(root, "error");
        if (e) {
            const aw_json_value *m = aw_json_get(e, "message");
            fail(c, "%s: %s", method, aw_json_is_string(m) ? m->u.str.ptr : "failed");
            aw_json_doc_free(d);
            return NULL;
        }
        aw_json_value *result = aw_json_get_mut((aw_json_value *)root, "result");
        aw_json_doc_set_root(d, result);
        return d;
    }
}

aw_json_doc *aw_cdp_call(aw_cdp *c, const char *method, const char *params, int timeout_ms)
{
    return call(c, true, method, params, timeout_ms);
}

/* ---- the browser ------------------------------------------------------------------------ */

/* fd moved to at least 10 (so that dup2 onto 3 and 4 cannot clash). */
static int high(int fd) { return fcntl(fd, F_DUPFD, 10); }

int aw_cdp_start(aw_cdp *c, const char *browser, const char *dir, int width, int height)
{
    memset(c, 0, sizeof *c);
    c->to = c->from = -1;
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        return fail(c, "pipe: %s", strerror(errno));
    char profile[600], log[600], size[64];
    snprintf(profile, sizeof profile, "--user-data-dir=%s/profile", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
    c->pid = fork();
    if (c->pid < 0)
        return fail(c, "fork: %s", strerror(errno));
    if (c->pid == 0) {
        setpgid(0, 0); /* its own group: the test can end all its processes */
        int r = high(in[0]), w = high(out[1]);
        if (r < 0 || w < 0 || dup2(r, 3) != 3 || dup2(w, 4) != 4)
            _exit(127);
        int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int devnull = open("/dev/null", O_RDONLY);
        if (logfd >= 0) {
            dup2(logfd, 1);
            dup2(logfd, 2);
        }
        if (devnull >= 0)
            dup2(devnull, 0);
        char *argv[] = {(char *)browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                        "--no-first-run", "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--disable-dev-shm-usage", "--remote-debugging-pipe", profile, size,
                        "about:blank", NULL};
        execv(browser, argv);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    c->to = in[1];
    c->from = out[0];
    aw_json_doc *t = call(c, false, "Target.createTarget", "{\"url\":\"about:blank\"}", 30000);
    const aw_json_value *tid = t ? aw_json_get(aw_json_doc_root(t), "targetId") : NULL;
    if (!aw_json_is_string(tid)) {
        aw_json_doc_free(t);
        return fail(c, "the browser did not open a page (see %s): %s", log, c->error);
    }
    char params[300];
    snprintf(params, sizeof params, "{\"targetId\":\"%s\",\"flatten\":true}", tid->u.str.ptr);
    aw_json_doc_free(t);
    aw_json_doc *a = call(c, false, "Target.attachToTarget", params, 10000);
    const aw_json_value *sid = a ? aw_json_get(aw_json_doc_root(a), "sessionId") : NULL;
    if (!aw_json_is_string(sid)) {
        aw_json_doc_free(a);
        return fail(c, "could not attach to the page: %s", c->error);
    }
    snprintf(c->session, sizeof c->session, "%s", sid->u.str.ptr);
    aw_json_doc_free(a);
    snprintf(params, sizeof params, "{\"width\":%d,\"height\":%d,\"deviceScaleFactor\":1,\"mobile\":false}", width, height);
    aw_json_doc *m = aw_cdp_call(c, "Emulation.setDeviceMetricsOverride", params, 10000);
    aw_json_doc_free(m);
    return m ? 0 : -1;
}

/* Call method with params `head` followed by value as a JSON string and
 * the closing brace: {"url": VALUE}. */
static aw_json_doc *call_with_text(aw_cdp *c, const char *method, const char *head, const char *value, int timeout_ms)
{
    aw_buf p;
    aw_buf_init(&p, NULL);
    aw_buf_append_str(&p, head);
    aw_json_write_string(&p, value, strlen(value));
    aw_buf_putc(&p, '}');
    aw_json_doc *d = aw_cdp_call(c, method, p.data, timeout_ms);
    aw_buf_free(&p);
    return d;
}

int aw_cdp_navigate(aw_cdp *c, const char *url)
{
    aw_json_doc *d = call_with_text(c, "Page.navigate", "{\"url\":", url, 20000);
    aw_json_doc_free(d);
    return d ? 0 : -1;
}

/* Runtime.evaluate of expr with its value returned; NULL on failure. */
static aw_json_doc *evaluate(aw_cdp *c, const char *expr)
{
    return call_with_text(c, "Runtime.evaluate", "{\"returnByValue\":true,\"expression\":", expr, 10000);
}

bool aw_cdp_wait(aw_cdp *c, const char *expr, int timeout_ms)
{
    int64_t until = now_ms() + timeout_ms;
    char wrapped[4096];
    snprintf(wrapped, sizeof wrapped, "(() => { try { return !!(%s); } catch (e) { return false; } })()", expr);
    while (now_ms() < until) {
        aw_json_doc *d = evaluate(c, wrapped);
        const aw_json_value *v = d ? aw_json_get(aw_json_get(aw_json_doc_root(d), "result"), "value") : NULL;
        bool yes = aw_json_is_bool(v) && v->u.b;
        aw_json_doc_free(d);
        if (yes)
            return true;
        sleep_ms(100);
    }
    fail(c, "waited %d ms for: %s", timeout_ms, expr);
    return false;
}

aw_json_doc *aw_cdp_eval_json(aw_cdp *c, const char *expr)
{
    aw_buf w;
    aw_buf_init(&w, NULL);
    aw_buf_printf(&w, "JSON.stringify(%s)", expr);
    aw_json_doc *d = evaluate(c, w.data);
    aw_buf_free(&w);
    const aw_json_value *v = d ? aw_json_get(aw_json_get(aw_json_doc_root(d), "result"), "value") : NULL;
    aw_json_doc *out = NULL;
    if (aw_json_is_string(v) && aw_json_parse(v->u.str.ptr, v->u.str.len, NULL, &out, NULL))
        out = NULL;
    if (!out)
        fail(c, "the page could not tell: %s", expr);
    aw_json_doc_free(d);
    return out;
}

static int b64(int ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

int aw_cdp_screenshot(aw_cdp *c, const char *path)
{
    /* the whole page: the viewport made as tall as the content */
    aw_json_doc *m = aw_cdp_call(c, "Page.getLayoutMetrics", NULL, 10000);
    const aw_json_value *size = m ? aw_json_get(aw_json_doc_root(m), "cssContentSize") : NULL;
    const aw_json_value *h = aw_json_get(size, "height"), *w = aw_json_get(size, "width");
    int height = aw_json_is_number(h) ? (int)h->u.num.d + 1 : 900, width = aw_json_is_number(w) ? (int)w->u.num.d : 1280;
    aw_json_doc_free(m);
    char params[200];
    snprintf(params, sizeof params, "{\"width\":%d,\"height\":%d,\"deviceScaleFactor\":1,\"mobile\":false}", width,
             height > 6000 ? 6000 : height);
    aw_json_doc_free(aw_cdp_call(c, "Emulation.setDeviceMetricsOverride", params, 10000));
    aw_json_doc *d = aw_cdp_call(c, "Page.captureScreenshot", "{\"format\":\"png\"}", 30000);
    const aw_json_value *data = d ? aw_json_get(aw_json_doc_root(d), "data") : NULL;
    if (!aw_json_is_string(data)) {
        aw_json_doc_free(d);
        return -1;
    }
    FILE *f = fopen(path, "wb");
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; f && i < data->u.str.len; i++) {
        int v = b64((unsigned char)data->u.str.ptr[i]);
        if (v < 0)
            continue;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            fputc((int)((acc >> bits) & 0xFF), f);
        }
    }
    aw_json_doc_free(d);
    return f && fclose(f) == 0 ? 0 : fail(c, "cannot write %s", path);
}

void aw_cdp_stop(aw_cdp *c)
{
    if (c->pid > 0) {
        aw_buf msg;
        aw_buf_init(&msg, NULL);
        aw_buf_printf(&msg, "{\"id\":%d,\"method\":\"Browser.close\"}", ++c->next_id);
        send_text(c, &msg);
        aw_buf_free(&msg);
        int status;
        bool gone = false;
        for (int i = 0; i < 250 && !gone; i++) {
            gone = waitpid(c->pid, &status, WNOHANG) == c->pid;
            if (!gone)
                sleep_ms(20);
        }
        kill(-c->pid, SIGKILL); /* whatever of its group is left */
        if (!gone)
            waitpid(c->pid, &status, 0);
        c->pid = 0;
    }
    if (c->to >= 0)
        close(c->to);
    if (c->from >= 0)
        close(c->from);
    free(c->buf);
    c->buf = NULL;
    c->to = c->from = -1;
}
