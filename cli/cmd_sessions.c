/* `agentwire sessions`: what the store holds. list and show for people
 * (--json for programs), export in the codecs' formats, rm and gc. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/memory.h"
#include "agentwire/store.h"
#include "agentwire/thread.h"
#include "cli.h"
#include "cli_run.h"

static const char sessions_help[] =
    "Usage: agentwire sessions COMMAND [--store URL] [options]\n"
    "\n"
    "The sessions in the store (--store URL; default\n"
    "sqlite:$XDG_DATA_HOME/agentwire/sessions.db).\n"
    "\n"
    "Commands:\n"
    "  list [--status S] [--agent A] [--since T] [--limit N|--all] [--json]\n"
    "        newest first, 50 unless --limit or --all; S: running, completed,\n"
    "        failed, interrupted;\n"
    "        T: a date (2026-01-16, 2026-01-16T10:00:00Z) or a time ago (30m, 2h, 7d)\n"
    "  show ID [--json]\n"
    "        turns, tools, tokens, cost, status, the final report; for a\n"
    "        conversation its subjects, keywords and summary\n"
    "  export ID --as thread|events|snapshot|accounting\n"
    "        the agent events as <thread> XML or JSON lines, the latest slim\n"
    "        snapshot, the accounting rows as JSON lines\n"
    "  rm ID...\n"
    "        remove sessions and everything they hold\n"
    "  gc --older-than DURATION\n"
    "        remove the sessions not updated for DURATION (7d, 12h, 30m)\n"
    "  wait ID [--timeout T]\n"
    "        until the session ends (a queued one: until a worker has run it);\n"
    "        prints its status; exit status 0 completed, 1 otherwise (failed,\n"
    "        interrupted, or still running after T: 30s, 5m, ...)\n";

/* "30m", "2h", "7d", "1w", "90s" -> milliseconds; -1 when malformed. */
static int64_t parse_age(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    double unit = !strcmp(end, "s")   ? 1e3
                  : !strcmp(end, "m") ? 60e3
                  : !strcmp(end, "h") ? 3600e3
                  : !strcmp(end, "d") ? 86400e3
                  : !strcmp(end, "w") ? 604800e3
                  : !strcmp(end, "ms") ? 1
                                       : -1;
    return unit < 0 ? -1 : (int64_t)(v * unit);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A date (YYYY-MM-DD, with THH:MM[:SS][Z]) or an age -> ms since 1970. */
static int64_t parse_since(const char *s)
{
    int64_t age = parse_age(s);
    if (age >= 0)
        return now_ms() - age;
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int n = 0, y, mo, d, h = 0, mi = 0, sec = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
        return -1;
    const char *rest = s + n;
    if (*rest == 'T' || *rest == ' ') {
        int k = 0;
        if (sscanf(rest + 1, "%2d:%2d%n", &h, &mi, &k) != 2)
            return -1;
        rest += 1 + k;
        if (*rest == ':' && sscanf(rest + 1, "%2d%n", &sec, &k) == 1)
            rest += 1 + k;
    }
    if (*rest == 'Z')
        rest++;
    if (*rest || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    return (int64_t)timegm(&tm) * 1000;
}

static const char *str(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_string(v) ? v->u.str.ptr : NULL;
}

static double num(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    return aw_json_is_number(v) ? v->u.num.d : 0;
}

static void format_time(int64_t ms, char *out, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%SZ", &tm);
}

/* The store named by --store (taken out of the arguments by the caller). */
static aw_store *open_store(const char *url, bool read_only) { return cli_store_open(url, read_only); }

/* The options every command takes: --store URL and --help. TAKEN to go
 * on, -1 for another option, else the exit status. */
enum { TAKEN = -2 };
static int common_option(cli_args *a, const char *opt, const char **url)
{
    if (cli_is_help(opt)) {
        fputs(sessions_help, stdout);
        return CLI_OK;
    }
    if (strcmp(opt, "--store") != 0)
        return -1;
    return (*url = cli_opt_value(a, opt)) ? TAKEN : CLI_USAGE;
}

/* A command's own options: TAKEN, or the exit status of a usage error. */
typedef int (*own_option_fn)(void *ctx, cli_args *a, const char *opt);

/* Every option of a command: -1 to go on, else the exit status. */
static int read_options(cli_args *a, const char **url, own_option_fn own, void *ctx)
{
    const char *opt;
    while ((opt = cli_next_opt(a))) {
        int rc = common_option(a, opt, url);
        if (rc == -1)
            rc = own ? own(ctx, a, opt) : cli_usage_error(a, "unknown option '%s'", opt);
        if (rc != TAKEN)
            return rc;
    }
    return -1;
}

/* ---- list ------------------------------------------------------------------------ */

static void one_line(const char *s, size_t max, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; s && s[i] && k + 4 < cap && k < max; i++)
        out[k++] = s[i] == '\n' || s[i] == '\t' || s[i] == '\r' ? ' ' : s[i];
    /* never end inside a UTF-8 sequence */
    while (k && ((unsigned char)out[k - 1] & 0xC0) == 0x80)
        k--;
    if (k && ((unsigned char)out[k - 1] & 0xC0) == 0xC0)
        k--;
    out[k] = 0;
}

typedef struct list_opts {
    aw_session_filter f;
    bool json;
} list_opts;

static int list_option(void *ctx, cli_args *a, const char *opt)
{
    list_opts *o = ctx;
    const char *v;
    if (!strcmp(opt, "--json")) {
        o->json = true;
    } else if (!strcmp(opt, "--all")) {
        o->f.limit = 0;
    } else if (!strcmp(opt, "--status") || !strcmp(opt, "--agent") || !strcmp(opt, "--kind")) {
        if (!(v = cli_opt_value(a, opt)))
            return CLI_USAGE;
        *(opt[2] == 's' ? &o->f.status : opt[2] == 'a' ? &o->f.agent : &o->f.kind) = v;
    } else if (!strcmp(opt, "--since")) {
        if (!(v = cli_opt_value(a, opt)))
            return CLI_USAGE;
        if ((o->f.since_ms = parse_since(v)) < 0)
            return cli_usage_error(a, "--since wants a date (2026-01-16, 2026-01-16T10:00Z) or an age (2h, 7d), not '%s'",
                                   v);
    } else if (!strcmp(opt, "--limit")) {
        long n;
        if (!(v = cli_opt_value(a, opt)) || (n = cli_opt_long(opt, v, 1, 1000000000)) < 0)
            return CLI_USAGE;
        o->f.limit = (size_t)n;
    } else {
        return cli_usage_error(a, "unknown option '%s'", opt);
    }
    return TAKEN;
}

static int cmd_list(cli_args *a)
{
    const char *url = NULL;
    list_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.f.limit = 50; /* a page: the newest; --all for every one */
    int orc = read_options(a, &url, list_option, &lo);
    if (orc >= 0)
        return orc;
    aw_session_filter f = lo.f;
    bool json = lo.json;
    if (a->nfiles)
        return cli_usage_error(a, "list takes no argument");
    aw_store *s = open_store(url, true);
    if (!s)
        return CLI_REJECTED;
    aw_json_doc *d = NULL;
    aw_error err;
    int rc = CLI_OK;
    if (aw_store_session_list(s, &f, &d, &err)) {
        fprintf(stderr, "agentwire sessions list: %s\n", err.message);
        rc = CLI_REJECTED;
    }
    const aw_json_value *list = aw_json_doc_root(d);
    if (!rc && json) {
        rc = cli_print_json(list);
    } else if (!rc) {
        printf("%-36s  %-11s  %-20s  %-12s  %5s  %9s  %8s  %s\n", "ID", "STATUS", "CREATED", "AGENT", "TURNS", "TOKENS",
               "COST", "TASK");
        for (size_t i = 0; i < aw_json_count(list); i++) {
            const aw_json_value *o = aw_json_at(list, i);
            const aw_json_value *u = aw_json_get(o, "usage");
            char when[32], task[64], cost[16], agent[16];
            format_time((int64_t)num(o, "created_at"), when, sizeof when);
            one_line(str(o, "task"), 50, task, sizeof task);
            one_line(str(o, "agent") ? str(o, "agent") : "-", 12, agent, sizeof agent);
            if (aw_json_get(u, "cost_usd"))
                snprintf(cost, sizeof cost, "$%.4f", num(u, "cost_usd"));
            else
                snprintf(cost, sizeof cost, "-");
            printf("%-36s  %-11s  %-20s  %-12s  %5.0f  %9.0f  %8s  %s\n", str(o, "id"), str(o, "status"), when, agent,
                   num(o, "turns"), num(u, "input_tokens") + num(u, "output_tokens"), cost, task);
        }
    }
    aw_json_doc_free(d);
    aw_store_close(s);
    return rc;
}

/* ---- show ------------------------------------------------------------------------ */

/* Tool calls and failures from the accounting rows. */
static void print_tools(const aw_json_value *rows)
{
    size_t calls = 0, failed = 0, models = 0;
    for (size_t i = 0; i < aw_json_count(rows); i++) {
        const aw_json_value *r = aw_json_at(rows, i);
        const char *kind = str(r, "kind");
        const char *status = str(r, "status");
        if (kind && !strcmp(kind, "tool")) {
            calls++;
            failed += status && strcmp(status, "ok") && strcmp(status, "success");
        } else if (kind && !strcmp(kind, "model")) {
            models++;
        }
    }
    printf("requests  %zu to the model; %zu tool calls, %zu failed\n", models, calls, failed);
    /* calls per tool, in the order first seen */
    const char *names[32];
    size_t counts[32], n = 0;
    for (size_t i = 0; i < aw_json_count(rows); i++) {
        const aw_json_value *r = aw_json_at(rows, i);
        const char *kind = str(r, "kind"), *cmd = str(r, "command");
        if (!kind || strcmp(kind, "tool") || !cmd)
            continue;
        size_t k = 0;
        while (k < n && strcmp(names[k], cmd))
            k++;
        if (k == n && n < 32) {
            names[n] = cmd;
            counts[n++] = 0;
        }
        if (k < n)
            counts[k]++;
    }
    for (size_t k = 0; k < n; k++)
        printf("          %s: %zu\n", names[k], counts[k]);
}

static void print_memory(aw_store *s, const char *id)
{
    aw_json_doc *ex = NULL, *mj = NULL;
    aw_error err;
    if (aw_store_exchanges(s, id, &ex, &err))
        return;
    aw_memory *m = aw_memory_new(NULL);
    const aw_json_value *list = aw_json_doc_root(ex);
    for (size_t i = 0; m && i < aw_json_count(list); i++)
        aw_memory_add(m, aw_json_get(aw_json_at(list, i), "reply"), &err);
    if (m && !aw_memory_json(m, &mj)) {
        const aw_json_value *root = aw_json_doc_root(mj);
        printf("exchanges %zu\n", aw_json_count(list));
        const aw_json_value *subs = aw_json_get(root, "subjects"), *kws = aw_json_get(root, "keywords");
        printf("subjects  ");
        for (size_t i = 0; i < aw_json_count(subs); i++)
            printf("%s%s", i ? ", " : "", str(aw_json_at(subs, i), "name"));
        printf("%s\nkeywords  ", aw_json_count(subs) ? "" : "(none)");
        for (size_t i = 0; i < aw_json_count(kws); i++)
            printf("%s%s (%.2f)", i ? ", " : "", str(aw_json_at(kws, i), "term"), num(aw_json_at(kws, i), "confidence"));
        printf("%s\nsummary   %s\n", aw_json_count(kws) ? "" : "(none)", str(root, "summary"));
    }
    aw_json_doc_free(mj);
    aw_memory_free(m);
    aw_json_doc_free(ex);
}

static int show_json(aw_store *s, const char *id, aw_json_doc *d)
{
    aw_json_value *root = (aw_json_value *)aw_json_doc_root(d);
    const char *kind = str(root, "kind");
    aw_json_doc *ex = NULL, *mj = NULL;
    aw_memory *m = NULL;
    aw_error err;
    int rc = 0;
    if (kind && !strcmp(kind, "chat") && !aw_store_exchanges(s, id, &ex, &err) && (m = aw_memory_new(NULL))) {
        const aw_json_value *list = aw_json_doc_root(ex);
        for (size_t i = 0; i < aw_json_count(list); i++)
            aw_memory_add(m, aw_json_get(aw_json_at(list, i), "reply"), &err);
        aw_json_value *copy = NULL;
        rc = aw_memory_json(m, &mj) || !(copy = aw_json_copy(d, aw_json_doc_root(mj))) ||
             aw_json_object_set(d, root, "memory", 6, copy);
    }
    if (!rc)
        rc = cli_print_json(root);
    aw_json_doc_free(mj);
    aw_memory_free(m);
    aw_json_doc_free(ex);
    return rc ? CLI_REJECTED : CLI_OK;
}

static int json_option(void *ctx, cli_args *a, const char *opt)
{
    if (strcmp(opt, "--json") != 0)
        return cli_usage_error(a, "unknown option '%s'", opt);
    *(bool *)ctx = true;
    return TAKEN;
}

static int cmd_show(cli_args *a)
{
    const char *url = NULL;
    bool json = false;
    int orc = read_options(a, &url, json_option, &json);
    if (orc >= 0)
        return orc;
    if (!a->file || a->nfiles > 1)
        return cli_usage_error(a, "show takes one session ID");
    aw_store *s = open_store(url, true);
    if (!s)
        return CLI_REJECTED;
    aw_json_doc *d = NULL, *acc = NULL;
    aw_error err;
    int rc = CLI_OK;
    if (aw_store_session_get(s, a->file, &d, &err)) {
        fprintf(stderr, "agentwire sessions show: %s\n", err.message);
        rc = CLI_REJECTED;
    } else if (json) {
        rc = show_json(s, a->file, d);
    } else {
        const aw_json_value *o = aw_json_doc_root(d), *u = aw_json_get(o, "usage");
        char created[32], updated[32];
        format_time((int64_t)num(o, "created_at"), created, sizeof created);
        format_time((int64_t)num(o, "updated_at"), updated, sizeof updated);
        printf("session   %s\n", str(o, "id"));
        printf("kind      %s%s%s\n", str(o, "kind"), str(o, "parent_id") ? ", under " : "",
               str(o, "parent_id") ? str(o, "parent_id") : "");
        if (str(o, "agent"))
            printf("agent     %s\n", str(o, "agent"));
        printf("status    %s%s%s%s\n", str(o, "status"), str(o, "stop_reason") ? " (" : "",
               str(o, "stop_reason") ? str(o, "stop_reason") : "", str(o, "stop_reason") ? ")" : "");
        const aw_json_value *resumable = aw_json_get(o, "resumable");
        if (aw_json_is_bool(resumable) && resumable->u.b && strcmp(str(o, "status"), "running") != 0)
            printf("          resumable: agentwire resume %s\n", str(o, "id"));
        printf("created   %s\nupdated   %s (%.1f s of running)\n", created, updated, num(o, "seconds"));
        printf("turns     %.0f (%.0f steps, %.0f events)\n", num(o, "turns"), num(o, "steps"), num(o, "events"));
        printf("tokens    %.0f in, %.0f out (%.0f cache read, %.0f cache write, %.0f reasoning)\n",
               num(u, "input_tokens"), num(u, "output_tokens"), num(u, "cache_read_tokens"),
               num(u, "cache_write_tokens"), num(u, "reasoning_tokens"));
        if (aw_json_get(u, "cost_usd"))
            printf("cost      $%.4f\n", num(u, "cost_usd"));
        else
            printf("cost      unknown\n");
        if (!aw_store_accounting(s, a->file, &acc, &err))
            print_tools(aw_json_doc_root(acc));
        const aw_json_value *cfg = aw_json_get(o, "config");
        const aw_json_value *models = aw_json_get(cfg, "models");
        if (aw_json_count(models)) {
            printf("model     ");
            for (size_t i = 0; i < aw_json_count(models); i++)
                printf("%s%s", i ? ", then " : "", aw_json_at(models, i)->u.str.ptr);
            printf("\n");
        }
        if (str(o, "task"))
            printf("task      %s\n", str(o, "task"));
        if (!strcmp(str(o, "kind") ? str(o, "kind") : "", "chat"))
            print_memory(s, a->file);
        if (str(o, "final_report"))
            printf("report    (%s)\n%s\n", str(o, "final_status") ? str(o, "final_status") : "?", str(o, "final_report"));
    }
    aw_json_doc_free(acc);
    aw_json_doc_free(d);
    aw_store_close(s);
    return rc;
}

/* ---- export ---------------------------------------------------------------------- */

static int print_lines(const aw_json_value *list, const char *member)
{
    aw_buf out;
    aw_buf_init(&out, NULL);
    int rc = 0;
    for (size_t i = 0; i < aw_json_count(list) && !rc; i++) {
        const aw_json_value *v = aw_json_at(list, i);
        if (member)
            v = aw_json_get(v, member);
        rc = aw_json_write(v, NULL, &out, NULL) || aw_buf_putc(&out, '\n');
    }
    if (!rc)
        rc = cli_write_stdout(out.data ? out.data : "", out.len);
    aw_buf_free(&out);
    return rc ? CLI_REJECTED : CLI_OK;
}

static int export_thread(const aw_json_value *list)
{
    size_t n = aw_json_count(list);
    aw_event *evs = calloc(n + 1, sizeof *evs);
    if (!evs)
        return CLI_REJECTED;
    aw_error err;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        if ((rc = aw_event_from_json(aw_json_get(aw_json_at(list, i), "event"), &evs[i], &err)))
            fprintf(stderr, "agentwire sessions export: stored event %zu: %s\n", i + 1, err.message);
    aw_buf out;
    aw_buf_init(&out, NULL);
    if (!rc && (rc = aw_thread_encode(evs, n, NULL, &out, &err)))
        fprintf(stderr, "agentwire sessions export: %s\n", err.message);
    if (!rc)
        rc = cli_write_stdout(out.data, out.len) || cli_write_stdout("\n", 1);
    aw_buf_free(&out);
    free(evs);
    return rc ? CLI_REJECTED : CLI_OK;
}

static int as_option(void *ctx, cli_args *a, const char *opt)
{
    if (strcmp(opt, "--as") != 0)
        return cli_usage_error(a, "unknown option '%s'", opt);
    return (*(const char **)ctx = cli_opt_value(a, opt)) ? TAKEN : CLI_USAGE;
}

static int cmd_export(cli_args *a)
{
    const char *url = NULL, *as = NULL;
    int orc = read_options(a, &url, as_option, &as);
    if (orc >= 0)
        return orc;
    if (!a->file || a->nfiles > 1)
        return cli_usage_error(a, "export takes one session ID");
    if (!as || (strcmp(as, "thread") && strcmp(as, "events") && strcmp(as, "snapshot") && strcmp(as, "accounting")))
        return cli_usage_error(a, "--as thread, events, snapshot or accounting");
    aw_store *s = open_store(url, true);
    if (!s)
        return CLI_REJECTED;
    aw_json_doc *d = NULL;
    aw_error err;
    int rc;
    if (!strcmp(as, "snapshot"))
        rc = aw_store_snapshot(s, a->file, &d, &err);
    else if (!strcmp(as, "accounting"))
        rc = aw_store_accounting(s, a->file, &d, &err);
    else
        rc = aw_store_events(s, a->file, 0, 0, &d, &err);
    if (rc) {
        fprintf(stderr, "agentwire sessions export: %s\n", err.message);
        rc = CLI_REJECTED;
    } else if (!strcmp(as, "snapshot")) {
        rc = cli_print_json(aw_json_doc_root(d));
    } else if (!strcmp(as, "accounting")) {
        rc = print_lines(aw_json_doc_root(d), NULL);
    } else if (!strcmp(as, "events")) {
        rc = print_lines(aw_json_doc_root(d), "event");
    } else {
        rc = export_thread(aw_json_doc_root(d));
    }
    aw_json_doc_free(d);
    aw_store_close(s);
    return rc;
}

/* ---- rm and gc --------------------------------------------------------------------- */

static int cmd_rm(cli_args *a)
{
    const char *url = NULL;
    const char *ids[256];
    size_t n = 0;
    for (int i = 0; i < a->argc; i++) {
        const char *arg = a->argv[i];
        if (cli_is_help(arg)) {
            fputs(sessions_help, stdout);
            return CLI_OK;
        }
        if (!strcmp(arg, "--store") && i + 1 < a->argc)
            url = a->argv[++i];
        else if (!strncmp(arg, "--store=", 8))
            url = arg + 8;
        else if (arg[0] == '-' && arg[1])
            return cli_usage_error(a, "unknown option '%s'", arg);
        else if (n == 256)
            return cli_usage_error(a, "at most 256 sessions at once");
        else
            ids[n++] = arg;
    }
    if (!n)
        return cli_usage_error(a, "which sessions? (sessions rm ID...)");
    aw_store *s = open_store(url, false);
    if (!s)
        return CLI_REJECTED;
    int rc = CLI_OK;
    for (size_t i = 0; i < n; i++) {
        aw_error err;
        if (aw_store_session_delete(s, ids[i], &err)) {
            fprintf(stderr, "agentwire sessions rm: %s\n", err.message);
            rc = CLI_REJECTED;
        }
    }
    aw_store_close(s);
    return rc;
}

static int age_option(void *ctx, cli_args *a, const char *opt)
{
    if (strcmp(opt, "--older-than") != 0)
        return cli_usage_error(a, "unknown option '%s'", opt);
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return CLI_USAGE;
    if ((*(int64_t *)ctx = parse_age(v)) < 0)
        return cli_usage_error(a, "--older-than wants a duration such as 30m, 12h or 7d, not '%s'", v);
    return TAKEN;
}

static int cmd_gc(cli_args *a)
{
    const char *url = NULL;
    int64_t age = -1;
    int orc = read_options(a, &url, age_option, &age);
    if (orc >= 0)
        return orc;
    if (age < 0)
        return cli_usage_error(a, "how old? (--older-than DURATION)");
    if (a->nfiles)
        return cli_usage_error(a, "gc takes no argument");
    aw_store *s = open_store(url, false);
    if (!s)
        return CLI_REJECTED;
    size_t removed = 0;
    aw_error err;
    int rc = CLI_OK;
    if (aw_store_gc(s, now_ms() - age, &removed, &err)) {
        fprintf(stderr, "agentwire sessions gc: %s\n", err.message);
        rc = CLI_REJECTED;
    } else {
        fprintf(stderr, "agentwire sessions gc: %zu session%s removed\n", removed, removed == 1 ? "" : "s");
    }
    aw_store_close(s);
    return rc;
}

/* ---- wait ------------------------------------------------------------------------------ */

static int timeout_option(void *ctx, cli_args *a, const char *opt)
{
    if (strcmp(opt, "--timeout") != 0)
        return cli_usage_error(a, "unknown option '%s'", opt);
    const char *v = cli_opt_value(a, opt);
    if (!v)
        return CLI_USAGE;
    if ((*(int64_t *)ctx = cli_parse_duration(v)) < 0)
        return cli_usage_error(a, "--timeout wants a duration such as 30s or 5m, not '%s'", v);
    return TAKEN;
}

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The store is asked again and again, 50 ms apart at first and 1 s at
 * most: a wait costs one small query a second. */
static int cmd_wait(cli_args *a)
{
    const char *url = NULL;
    int64_t timeout = -1;
    int orc = read_options(a, &url, timeout_option, &timeout);
    if (orc >= 0)
        return orc;
    if (!a->file || a->nfiles > 1)
        return cli_usage_error(a, "which session? (sessions wait ID)");
    aw_store *s = open_store(url, true);
    if (!s)
        return CLI_REJECTED;
    int64_t deadline = timeout >= 0 ? now_ms() + timeout : -1, pause = 50;
    int rc;
    for (;;) {
        aw_json_doc *d = NULL;
        aw_error err;
        if (aw_store_session_get(s, a->file, &d, &err)) {
            fprintf(stderr, "agentwire sessions wait: %s\n", err.message);
            rc = CLI_REJECTED;
            break;
        }
        char status[32];
        const char *st = str(aw_json_doc_root(d), "status");
        snprintf(status, sizeof status, "%s", st ? st : "?");
        aw_json_doc_free(d);
        if (strcmp(status, "running") != 0 && strcmp(status, "queued") != 0) {
            printf("%s\n", status);
            rc = !strcmp(status, "completed") ? CLI_OK : CLI_REJECTED;
            break;
        }
        if (deadline >= 0 && now_ms() >= deadline) {
            fprintf(stderr, "agentwire sessions wait: session %s is still %s\n", a->file, status);
            rc = CLI_REJECTED;
            break;
        }
        int64_t left = deadline >= 0 ? deadline - now_ms() : pause;
        sleep_ms(left < pause ? (left > 0 ? left : 0) : pause);
        pause = pause * 2 > 1000 ? 1000 : pause * 2;
    }
    aw_store_close(s);
    return rc;
}

static const cli_command commands[] = {
    {"list", cmd_list}, {"show", cmd_show}, {"export", cmd_export}, {"rm", cmd_rm}, {"gc", cmd_gc}, {"wait", cmd_wait},
};

int cli_sessions(int argc, char **argv)
{
    return cli_dispatch("sessions", sessions_help, commands, sizeof commands / sizeof *commands, argc, argv);
}
