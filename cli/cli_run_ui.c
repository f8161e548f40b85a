/* The terminal during a run.
 *
 * stderr: on a terminal one status line, redrawn in place (turn, model,
 * tokens, the running tools with their time); elsewhere plain lines, one
 * per turn and per tool call, that a log keeps. Warnings and errors always
 * (but --quiet keeps only errors).
 *
 * Signals: the first SIGINT or SIGTERM asks the run to stop (the request
 * and the tools are cancelled, the records written, the loop ends within
 * a second); a second one exits at once. The handler only writes a byte
 * to a pipe the loop watches (and, the second time, _exit: the kernel then
 * kills the children through PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_run.h"

#define STATUS_REFRESH_MS 250

struct cli_run_ui {
    aw_loop *loop;
    bool quiet, verbose, tty, visible;
    bool visible_open;    /* the visible text shown last did not end its line */
    int sigpipe[2];
    aw_watch *sig_watch;
    aw_timer *refresh;
    aw_run *run;
    bool done;
    int signal_seen;
    char status[1024]; /* room for every part at its longest: no -Wformat-truncation in Release */
    bool status_shown;
    aw_run_progress last; /* the scalar parts of the last progress */
    char phase[48];
    char tools[256];
    char progress[128];
    /* who takes the result instead of stdout (agentwire chat) */
    cli_result_fn result_fn;
    void *result_ctx;
    /* agent__ask_human */
    int tty_fd;
    aw_watch *tty_watch;
    aw_buf answer;
};

static volatile sig_atomic_t signals_seen;
static volatile sig_atomic_t signal_fd = -1;

static void on_signal(int sig)
{
    if (++signals_seen > 1)
        _exit(sig == SIGTERM ? 143 : 130);
    if (signal_fd >= 0) {
        unsigned char b = (unsigned char)sig;
        int saved = errno;
        (void)!write(signal_fd, &b, 1);
        errno = saved;
    }
}

static void clear_status(cli_run_ui *ui)
{
    if (ui->tty && ui->status_shown) {
        fputs("\r\033[K", stderr);
        ui->status_shown = false;
    }
}

static void say(cli_run_ui *ui, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void say(cli_run_ui *ui, const char *fmt, ...)
{
    clear_status(ui);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void draw_status(cli_run_ui *ui)
{
    if (!ui->tty || ui->quiet || ui->done)
        return;
    char tok[64];
    snprintf(tok, sizeof tok, "%.1fk in / %.1fk out", (double)ui->last.input_tokens / 1000.0,
             (double)ui->last.output_tokens / 1000.0);
    const aw_run_info *info = ui->run ? aw_run_info_of(ui->run) : NULL;
    int n = snprintf(ui->status, sizeof ui->status, "turn %u/%u · %s%s%s · %s · %s%s%s%s%s", ui->last.turn,
                     ui->last.max_turns, info ? info->provider : "", info && info->model[0] ? ":" : "",
                     info ? info->model : "", tok, ui->phase, ui->tools[0] ? " · " : "", ui->tools,
                     ui->progress[0] ? " · " : "", ui->progress);
    (void)n;
    fprintf(stderr, "\r\033[K%s", ui->status);
    fflush(stderr);
    ui->status_shown = true;
}

/* ---- the observer ---------------------------------------------------------------- */

static void on_log(void *ctx, const aw_run_info *run, int level, const char *msg)
{
    cli_run_ui *ui = ctx;
    if (level == AW_LOG_DEBUG || (level == AW_LOG_INFO && !ui->verbose) || (ui->quiet && level < AW_LOG_ERROR))
        return;
    const char *tag = level >= AW_LOG_ERROR ? "error: " : level == AW_LOG_WARN ? "warning: " : "";
    if (run && run->depth > 0)
        say(ui, "agentwire: [%s] %s%s", run->agent_name ? run->agent_name : "sub-agent", tag, msg);
    else
        say(ui, "agentwire: %s%s", tag, msg);
    draw_status(ui);
}

static void tool_log(void *ctx, int level, const char *source, const char *msg)
{
    cli_run_ui *ui = ctx;
    char line[700];
    snprintf(line, sizeof line, "%s: %s", source, msg);
    on_log(ui, NULL, level, line);
}

static void on_progress(void *ctx, const aw_run_info *run, const aw_run_progress *p)
{
    cli_run_ui *ui = ctx;
    if (run->depth > 0)
        return;
    ui->last = *p;
    snprintf(ui->phase, sizeof ui->phase, "%s", p->phase ? p->phase : "");
    size_t k = 0;
    ui->tools[0] = 0;
    int64_t now = aw_loop_clock();
    for (size_t i = 0; i < p->running_tools && k + 40 < sizeof ui->tools; i++)
        k += (size_t)snprintf(ui->tools + k, sizeof ui->tools - k, "%s%s %.1fs", i ? ", " : "", p->tool_names[i],
                              (double)(now - p->tool_started_ms[i]) / 1000.0);
    snprintf(ui->progress, sizeof ui->progress, "%s", p->progress_message ? p->progress_message : "");
    draw_status(ui);
}

static const char *str(const aw_json_value *v)
{
    return aw_json_is_string(v) ? v->u.str.ptr : "";
}

static double num(const aw_json_value *v) { return aw_json_is_number(v) ? v->u.num.d : 0; }

void cli_run_ui_show_visible(cli_run_ui *ui) { ui->visible = true; }

/* Plain lines for logs: what a turn did, what each tool returned. */
static void on_runtime(void *ctx, const aw_run_info *run, const aw_json_value *ev)
{
    cli_run_ui *ui = ctx;
    if (ui->visible && run->depth == 0 && !strcmp(str(aw_json_get(ev, "event")), "stream_chunk")) {
        const aw_json_value *chunk = aw_json_get(ev, "chunk");
        clear_status(ui);
        if (aw_json_is_string(chunk) && chunk->u.str.len) {
            fwrite(chunk->u.str.ptr, 1, chunk->u.str.len, stderr);
            ui->visible_open = chunk->u.str.ptr[chunk->u.str.len - 1] != '\n';
        }
        return;
    }
    if (ui->visible_open && !strcmp(str(aw_json_get(ev, "event")), "step_completed")) {
        fputc('\n', stderr); /* the reply's text ends its own line */
        ui->visible_open = false;
    }
    if (ui->quiet || (ui->tty && !ui->verbose))
        return;
    const char *kind = str(aw_json_get(ev, "event"));
    const char *who = run->depth > 0 ? (run->agent_name ? run->agent_name : "sub-agent") : NULL;
    if (!strcmp(kind, "tool_completed")) {
        bool ok = aw_json_is_bool(aw_json_get(ev, "success")) && aw_json_get(ev, "success")->u.b;
        say(ui, "agentwire: %s%sturn %u: tool %s %s (%.0f ms)", who ? who : "", who ? ": " : "", run->turn,
            str(aw_json_get(ev, "tool_name")), ok ? "ok" : "failed", num(aw_json_get(ev, "duration_ms")));
    } else if (!strcmp(kind, "step_completed")) {
        const aw_json_value *u = aw_json_get(ev, "usage");
        say(ui, "agentwire: %s%sturn %u: %s, %.0f in / %.0f out tokens, %.1f s", who ? who : "", who ? ": " : "",
            run->turn, str(aw_json_get(ev, "finish_reason"))[0] ? str(aw_json_get(ev, "finish_reason")) : "replied",
            num(aw_json_get(u, "prompt")), num(aw_json_get(u, "completion")), num(aw_json_get(ev, "duration_ms")) / 1000);
    }
}

aw_run_observer cli_run_ui_observer(cli_run_ui *ui)
{
    aw_run_observer o = {.ctx = ui, .on_runtime = on_runtime, .on_log = on_log, .on_progress = on_progress};
    return o;
}

void cli_run_ui_attach_tools(cli_run_ui *ui, aw_toolbox *box) { aw_toolbox_set_log(box, tool_log, ui); }

/* ---- questions ---------------------------------------------------------------------- */

static void on_tty(void *ctx, int fd, unsigned ev)
{
    (void)ev;
    cli_run_ui *ui = ctx;
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    bool eof = n <= 0;
    if (n > 0)
        aw_buf_append(&ui->answer, buf, (size_t)n);
    char *nl = ui->answer.data ? memchr(ui->answer.data, '\n', ui->answer.len) : NULL;
    if (!nl && !eof)
        return;
    size_t len = nl ? (size_t)(nl - ui->answer.data) : ui->answer.len;
    aw_watch_free(ui->tty_watch);
    ui->tty_watch = NULL;
    if (ui->run)
        aw_run_answer(ui->run, ui->answer.data ? ui->answer.data : "", len);
    aw_buf_clear(&ui->answer);
}

void cli_run_ui_ask(void *ctx, aw_run *run, const char *question, size_t len)
{
    cli_run_ui *ui = ctx;
    clear_status(ui);
    fprintf(stderr, "\nThe agent asks: %.*s\n> ", (int)len, question);
    fflush(stderr);
    if (ui->tty_fd < 0)
        ui->tty_fd = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (ui->tty_fd < 0) {
        const char *no = "(no terminal to ask on)";
        aw_run_answer(run, no, strlen(no));
        return;
    }
    if (!ui->tty_watch)
        ui->tty_watch = aw_loop_watch(ui->loop, ui->tty_fd, AW_WATCH_READ, on_tty, ui);
}

/* ---- driving --------------------------------------------------------------------------- */

static void on_signal_byte(void *ctx, int fd, unsigned ev)
{
    (void)ev;
    cli_run_ui *ui = ctx;
    unsigned char b;
    while (read(fd, &b, 1) == 1)
        ui->signal_seen = b;
    if (ui->run && !ui->done) {
        clear_status(ui);
        aw_run_cancel(ui->run, ui->signal_seen == SIGTERM ? "the run was terminated (SIGTERM)"
                                                          : "the run was interrupted (SIGINT)");
    }
}

static void refresh(void *ctx)
{
    cli_run_ui *ui = ctx;
    if (ui->done)
        return;
    /* elapsed times of running tools move even when nothing happens */
    draw_status(ui);
    aw_timer_reset(ui->refresh, STATUS_REFRESH_MS);
}

cli_run_ui *cli_run_ui_new(aw_loop *loop, bool quiet, bool verbose)
{
    cli_run_ui *ui = calloc(1, sizeof *ui);
    if (!ui)
        return NULL;
    ui->loop = loop;
    ui->quiet = quiet;
    ui->verbose = verbose;
    ui->tty = isatty(2) && !getenv("AW_NO_STATUS_LINE");
    ui->tty_fd = -1;
    aw_buf_init(&ui->answer, NULL);
    if (pipe2(ui->sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        fprintf(stderr, "agentwire: cannot make a pipe: %s\n", strerror(errno));
        free(ui);
        return NULL;
    }
    ui->sig_watch = aw_loop_watch(loop, ui->sigpipe[0], AW_WATCH_READ, on_signal_byte, ui);
    if (ui->tty && !quiet)
        ui->refresh = aw_loop_timer(loop, STATUS_REFRESH_MS, refresh, ui);
    signal_fd = ui->sigpipe[1];
    signals_seen = 0;
    cli_catch_stop_signals(on_signal);
    return ui;
}

void cli_run_ui_free(cli_run_ui *ui)
{
    if (!ui)
        return;
    clear_status(ui);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal_fd = -1;
    aw_watch_free(ui->sig_watch);
    aw_watch_free(ui->tty_watch);
    aw_timer_free(ui->refresh);
    close(ui->sigpipe[0]);
    close(ui->sigpipe[1]);
    if (ui->tty_fd >= 0)
        close(ui->tty_fd);
    aw_buf_free(&ui->answer);
    free(ui);
}

int cli_run_print_result(const aw_run_result *res)
{
    if (res->json && !res->synthesized)
        return cli_print_json(res->json);
    if (cli_write_stdout(res->content.ptr, res->content.len))
        return CLI_REJECTED;
    if (res->content.len && res->content.ptr[res->content.len - 1] != '\n' && cli_write_stdout("\n", 1))
        return CLI_REJECTED;
    return CLI_OK;
}

void cli_run_ui_set_result(cli_run_ui *ui, cli_result_fn fn, void *ctx)
{
    ui->result_fn = fn;
    ui->result_ctx = ctx;
}

static void run_done(void *ctx, aw_run *run, const aw_run_result *res)
{
    (void)run;
    (void)res;
    cli_run_ui *ui = ctx;
    ui->done = true;
    aw_loop_stop(ui->loop);
}

int cli_run_ui_drive(cli_run_ui *ui, aw_run *run)
{
    ui->run = run;
    const aw_run_info *info = aw_run_info_of(run);
    if (!ui->quiet)
        say(ui, "agentwire: session %s", info->session_id);
    if (aw_run_start(run, run_done, ui)) {
        fprintf(stderr, "agentwire run: out of memory\n");
        return CLI_REJECTED;
    }
    while (!ui->done)
        if (aw_loop_once(ui->loop, -1)) {
            fprintf(stderr, "agentwire run: the event loop failed\n");
            return CLI_REJECTED;
        }
    clear_status(ui);
    const aw_run_result *res = aw_run_result_of(run);
    if (res->synthesized)
        say(ui, "agentwire: the run failed: %.*s", (int)res->content.len, res->content.ptr);
    int rc = ui->result_fn ? ui->result_fn(ui->result_ctx, res) : cli_run_print_result(res);
    if (ui->signal_seen)
        return ui->signal_seen == SIGTERM ? 143 : 130;
    if (rc != CLI_OK)
        return rc;
    return res->status == AW_RUN_SUCCESS ? CLI_OK : CLI_REJECTED;
}
