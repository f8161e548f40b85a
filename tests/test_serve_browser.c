/* agentwire serve's pages in a real browser: headless Chromium, driven
 * over the DevTools protocol on a pipe (tests/support/cdp.c), loads the
 * pages from a real server on a real store and the test reads what they
 * show from the DOM.
 *
 *   the list          a row per session, with its status, turns, tokens
 *   a stored session  the timeline's bars, the token chart, the report
 *                     rendered from Markdown; a tool output holding
 *                     <script> shown as text and never run, a javascript:
 *                     link made inert, raw HTML in the report shown as text
 *   a running session a real `agentwire run` held between its steps: the
 *                     open page gains its steps as the run writes them
 *
 * Screenshots of the three are kept in the build folder (serve-list.png,
 * serve-session.png, serve-live.png). Skipped (77) without Chromium. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdp.h"
#include "serve_fixture.h"
#include "testutil.h"

static char dir[256], url[1024], base[64], stored[128];
static aw_server *srv;
static aw_cdp browser;

#define PWNED "<script>window.pwned=1</script>"
/* what the stored session's report holds: Markdown, and things that must
 * stay text */
#define REPORT                                                                                                         \
    "# Done\\n\\nThe checks:\\n\\n- one\\n- **two** and *three*\\n\\n1. first\\n2. second\\n\\n"                      \
    "```\\nlet x = 1;\\n```\\n\\n`code` <b>x</b> [bad](javascript:window.pwned=2) "                                   \
    "[good](https://example.com/)\\n\\n<img src=x onerror=\\\"window.pwned=3\\\">"

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A finished run: three turns, four calls of a tool whose output is a
 * <script> tag, and a report in Markdown. */
static void stored_run(void)
{
    write_file("probe.json", "[{\"name\": \"probe\", \"description\": \"prints a tag\", \"input_schema\": {\"type\": \"object\"},"
                             " \"command\": [\"sh\", \"-c\", \"sleep 0.05; printf '%s' '" PWNED "'\"]}]");
    write_file("stored.jsonl",
               "{\"turn\": 1, \"text\": \"Looking.\", \"tool_calls\": [{\"id\": \"p1\", \"name\": \"probe\", \"arguments\":"
               " {\"what\": \"a\"}}, {\"id\": \"p2\", \"name\": \"probe\", \"arguments\": {\"what\": \"b\"}}],"
               " \"usage\": {\"input_tokens\": 1200, \"output_tokens\": 80}}\n"
               "{\"turn\": 2, \"tool_calls\": [{\"id\": \"p3\", \"name\": \"probe\", \"arguments\": {\"what\": \"c\"}}],"
               " \"usage\": {\"input_tokens\": 1500, \"output_tokens\": 60}}\n"
               "{\"turn\": 3, \"tool_calls\": [{\"id\": \"f\", \"name\": \"agent__final_report\", \"arguments\":"
               " {\"status\": \"success\", \"content\": \"" REPORT "\"}}], \"usage\": {\"input_tokens\": 1700,"
               " \"output_tokens\": 240}}\n");
    char cmd[2048], *err = NULL;
    snprintf(cmd, sizeof cmd,
             "cd %s && AW_NO_STATUS_LINE=1 %s run --store '%s' --transport native --tools probe.json"
             " --model replay:stored.jsonl 'probe three times'",
             dir, AW_CLI_PATH, url);
    int rc = aw_test_run_cmd(cmd, NULL, 0, NULL, NULL, &err, NULL);
    const char *at = err ? strstr(err, "agentwire: session ") : NULL;
    if (rc != 0 || !at)
        fail_msg("the stored run failed (%d): %s", rc, err ? err : "");
    sscanf(at + 19, "%127[^\n]", stored);
    free(err);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/aw-serve-browser.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(url, sizeof url, "sqlite:%s/sessions.db", dir);
    stored_run();
    srv = fx_server(url, NULL);
    snprintf(base, sizeof base, "http://%s", aw_server_address(srv));
    if (aw_cdp_start(&browser, aw_cdp_browser(), dir, 1280, 900)) {
        fprintf(stderr, "%s\n", browser.error);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    aw_cdp_stop(&browser);
    aw_server_stop(srv);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers ----------------------------------------------------------------------- */

static void open_page(const char *path)
{
    char u[512];
    snprintf(u, sizeof u, "%s%s", base, path);
    if (aw_cdp_navigate(&browser, u))
        fail_msg("%s", browser.error);
}

static void wait_for(const char *expr)
{
    if (!aw_cdp_wait(&browser, expr, 20000))
        fail_msg("%s", browser.error);
}

static aw_json_doc *look(const char *expr)
{
    aw_json_doc *d = aw_cdp_eval_json(&browser, expr);
    if (!d)
        fail_msg("%s", browser.error);
    return d;
}

static double num(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    if (!aw_json_is_number(v))
        fail_msg("the page gave no number for %s", key);
    return v->u.num.d;
}

static const char *str(const aw_json_value *o, const char *key)
{
    const aw_json_value *v = aw_json_get(o, key);
    if (!aw_json_is_string(v))
        fail_msg("the page gave no text for %s", key);
    return v->u.str.ptr;
}

static void screenshot(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", AW_BINARY_DIR, name);
    if (aw_cdp_screenshot(&browser, path))
        fail_msg("screenshot %s: %s", path, browser.error);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 10000); /* a picture, not an empty page */
}

/* ---- the pages --------------------------------------------------------------------- */

static void test_list_page(void **state)
{
    (void)state;
    open_page("/");
    wait_for("document.body.dataset.loaded === '1' && document.querySelectorAll('#sessions tbody tr').length >= 1");
    char expr[1024];
    snprintf(expr, sizeof expr,
             "(() => { const r = document.querySelector('#sessions tbody tr[data-id=\"%s\"]');"
             " const cells = r ? [...r.cells].map((c) => c.textContent) : [];"
             " return {rows: document.querySelectorAll('#sessions tbody tr').length, cells,"
             "  link: r ? r.querySelector('a').getAttribute('href') : null}; })()",
             stored);
    aw_json_doc *d = look(expr);
    const aw_json_value *o = aw_json_doc_root(d), *cells = aw_json_get(o, "cells");
    assert_int_equal((int)num(o, "rows"), 1);
    assert_int_equal(aw_json_count(cells), 8);
    assert_string_equal(aw_json_at(cells, 0)->u.str.ptr, "completed");
    assert_string_equal(aw_json_at(cells, 4)->u.str.ptr, "3");    /* turns */
    assert_string_equal(aw_json_at(cells, 5)->u.str.ptr, "4780"); /* tokens: 4400 in, 380 out */
    assert_string_equal(aw_json_at(cells, 7)->u.str.ptr, "probe three times");
    char want[200];
    snprintf(want, sizeof want, "/sessions/%s", stored);
    assert_string_equal(str(o, "link"), want);
    aw_json_doc_free(d);
    /* a filter that matches nothing, from the form */
    wait_for("(() => { const f = document.getElementById('filters'); f.elements.q.value = 'no such text';"
             " f.requestSubmit(); return true; })()");
    wait_for("document.querySelectorAll('#sessions tbody tr').length === 0 && !document.getElementById('empty').hidden"
             " && location.search === '?q=no+such+text'");
    open_page("/");
    wait_for("document.querySelectorAll('#sessions tbody tr').length === 1");
    screenshot("serve-list.png");
}

static void test_stored_session_page(void **state)
{
    (void)state;
    char path[200];
    snprintf(path, sizeof path, "/sessions/%s", stored);
    open_page(path);
    wait_for("document.querySelectorAll('#timeline rect.bar-tool').length === 4 &&"
             " document.querySelectorAll('#chart g.bar-tokens').length === 3 && document.querySelector('#report h3')");
    aw_json_doc *d = look(
        "(() => { const q = (s) => document.querySelector(s), all = (s) => [...document.querySelectorAll(s)];"
        " const link = (t) => all('#report a').find((a) => a.textContent === t);"
        " return {steps: all('#timeline g.step').length, bars: all('#timeline rect.bar-tool').length,"
        "  stepBars: all('#timeline rect.bar-step').length, axis: all('#timeline .axis text').length,"
        "  tokenBars: all('#chart g.bar-tokens').length, inputs: all('#chart g.bar-tokens rect.bar-input').length,"
        "  h3: q('#report h3').textContent, items: all('#report li').map((li) => li.textContent),"
        "  ol: all('#report ol li').length, strong: q('#report strong').textContent, em: q('#report em').textContent,"
        "  pre: q('#report pre').textContent, code: all('#report code').map((c) => c.textContent),"
        "  tags: all('#report b, #report img, #report script').length, report: q('#report').textContent,"
        "  bad: link('bad').getAttribute('href'), good: link('good').getAttribute('href'),"
        "  outputs: all('#calls code.output').map((c) => c.textContent), calls: all('#calls tbody tr').length,"
        "  pwned: typeof window.pwned, scripts: document.scripts.length, status: document.body.dataset.status,"
        "  facts: q('#facts').textContent, thread: q('#dl-thread').getAttribute('href'),"
        "  live: q('#live').hidden}; })()");
    const aw_json_value *o = aw_json_doc_root(d);
    assert_int_equal((int)num(o, "steps"), 3);
    assert_int_equal((int)num(o, "bars"), 4);
    assert_int_equal((int)num(o, "stepBars"), 3);
    assert_true(num(o, "axis") >= 2);
    assert_int_equal((int)num(o, "tokenBars"), 3);
    assert_int_equal((int)num(o, "inputs"), 3);
    assert_string_equal(str(o, "h3"), "Done");
    const aw_json_value *items = aw_json_get(o, "items");
    assert_int_equal(aw_json_count(items), 4);
    assert_string_equal(aw_json_at(items, 1)->u.str.ptr, "two and three");
    assert_int_equal((int)num(o, "ol"), 2);
    assert_string_equal(str(o, "strong"), "two");
    assert_string_equal(str(o, "em"), "three");
    assert_string_equal(str(o, "pre"), "let x = 1;");
    /* raw HTML in the report is text; the javascript: link goes nowhere */
    assert_int_equal((int)num(o, "tags"), 0);
    assert_non_null(strstr(str(o, "report"), "<b>x</b>"));
    assert_non_null(strstr(str(o, "report"), "<img src=x onerror=\"window.pwned=3\">"));
    assert_string_equal(str(o, "bad"), "#");
    assert_string_equal(str(o, "good"), "https://example.com/");
    /* the tool's <script> output is shown, as text, and never ran */
    const aw_json_value *outputs = aw_json_get(o, "outputs");
    assert_int_equal(aw_json_count(outputs), 4);
    assert_string_equal(aw_json_at(outputs, 0)->u.str.ptr, PWNED);
    assert_int_equal((int)num(o, "calls"), 4);
    assert_string_equal(str(o, "pwned"), "undefined");
    assert_int_equal((int)num(o, "scripts"), 4); /* the page's own four */
    assert_string_equal(str(o, "status"), "completed");
    assert_non_null(strstr(str(o, "facts"), "4400 in, 380 out"));
    assert_non_null(strstr(str(o, "thread"), "/thread?download=1"));
    assert_true(aw_json_get(o, "live")->u.b); /* hidden: not running */
    aw_json_doc_free(d);
    screenshot("serve-session.png");
}

/* The report renderer on hostile Markdown, in the page: only the elements
 * and attributes it knows come out, links go to http(s), mail or this
 * server only, and the source's text is all there. */
static void test_markdown_is_inert(void **state)
{
    (void)state;
    aw_json_doc *d = look(
        "(() => {"
        " const inputs = ['<script>window.pwned=4</script>', '[x](javascript:window.pwned=5)',"
        "  '[x]( JaVaScRiPt:window.pwned=6 )', '[x](data:text/html,<b>y</b>)', '[x](//evil.example/)',"
        "  '<img src=x onerror=window.pwned=7>', '**<svg onload=window.pwned=8>**', '`<b>in code</b>`',"
        "  '# <i>title</i>', '> <iframe src=/>', '- [a](vbscript:x) <a href=javascript:y>z</a>',"
        "  '```\\n</code></pre><script>window.pwned=9</script>\\n```', '*_**`[x](y)`**_*', '\\\\<b\\\\>',"
        "  '[ok](/sessions/x) [ok2](https://example.com/a?b=c#d) [m](mailto:a@b.example)',"
        "  '1. <b>x</b>\\n   - nested <u>y</u>\\n2. z', '---', '<!-- comment -->', '&lt;b&gt; &amp;'];"
        " const known = ['P','H3','H4','H5','H6','UL','OL','LI','PRE','CODE','EM','STRONG','A','BLOCKQUOTE','HR'];"
        " const attrs = ['href','rel','target','start'];"
        " const bad = [];"
        " for (const src of inputs) {"
        "  const box = document.createElement('div'); box.appendChild(markdown.render(src));"
        "  for (const e of box.querySelectorAll('*')) {"
        "   if (!known.includes(e.tagName)) bad.push(src + ': <' + e.tagName + '>');"
        "   for (const a of e.attributes) if (!attrs.includes(a.name)) bad.push(src + ': ' + a.name);"
        "   if (e.tagName === 'A' && !/^(https?:|mailto:|\\/(?!\\/)|#)/.test(e.getAttribute('href')))"
        "    bad.push(src + ': href ' + e.getAttribute('href'));"
        "  }"
        "  for (const word of ['script', 'onerror', 'onload', 'iframe', '<b>', 'comment'])"
        "   if (src.includes(word) && !src.includes('](') && !box.textContent.includes(word))"
        "    bad.push(src + ': lost ' + word);"
        " }"
        " return {bad, pwned: typeof window.pwned}; })()");
    const aw_json_value *bad = aw_json_get(aw_json_doc_root(d), "bad");
    for (size_t i = 0; i < aw_json_count(bad); i++)
        fprintf(stderr, "markdown: %s\n", aw_json_at(bad, i)->u.str.ptr);
    assert_int_equal(aw_json_count(bad), 0);
    assert_string_equal(str(aw_json_doc_root(d), "pwned"), "undefined");
    aw_json_doc_free(d);
}

/* A run held at its gates: the page, opened once, gains its steps. */
static void test_live_session_page(void **state)
{
    (void)state;
    char run_dir[300], path[200];
    snprintf(run_dir, sizeof run_dir, "%s/live", dir);
    assert_int_equal(mkdir(run_dir, 0700), 0);
    fx_run run;
    fx_run_start(&run, url, run_dir, 2);
    snprintf(path, sizeof path, "/sessions/%s", run.session);
    open_page(path);
    wait_for("document.body.dataset.status === 'running' && !document.getElementById('live').hidden");
    /* a mark on this page: it is still there later, so the page was never
     * loaded again */
    wait_for("(window.__opened = 'once') === 'once'");
    fx_gate_open(&run);
    wait_for("document.querySelectorAll('#timeline g.step:not(.pending)').length === 1 &&"
             " document.querySelectorAll('#chart g.bar-tokens').length === 1 &&"
             " document.getElementById('facts').textContent.includes('120 in, 15 out')");
    assert_true(fx_run_alive(&run)); /* held at the second gate */
    aw_json_doc *d = look("({bars: document.querySelectorAll('#timeline rect.bar-tool').length,"
                          " underway: document.querySelectorAll('#timeline g.step.pending').length,"
                          " report: document.querySelector('#report').textContent})");
    assert_int_equal((int)num(aw_json_doc_root(d), "bars"), 1);
    assert_int_equal((int)num(aw_json_doc_root(d), "underway"), 1); /* step 2, under way */
    assert_string_equal(str(aw_json_doc_root(d), "report"), "The run is still going.");
    aw_json_doc_free(d);
    screenshot("serve-live.png");
    fx_gate_open(&run);
    wait_for("document.querySelectorAll('#timeline g.step:not(.pending)').length === 3 &&"
             " document.body.dataset.status === 'completed' && document.querySelector('#report h3') &&"
             " document.getElementById('live').hidden");
    d = look("({opened: window.__opened, h3: document.querySelector('#report h3').textContent,"
             " bars: document.querySelectorAll('#timeline rect.bar-tool').length,"
             " navigations: performance.getEntriesByType('navigation').length})");
    assert_string_equal(str(aw_json_doc_root(d), "opened"), "once");
    assert_string_equal(str(aw_json_doc_root(d), "h3"), "Live run");
    assert_int_equal((int)num(aw_json_doc_root(d), "bars"), 3);
    aw_json_doc_free(d);
    assert_int_equal(fx_run_wait(&run, 30000), 0);
}

int main(void)
{
    if (!aw_cdp_browser()) {
        printf("SKIP: no Chromium here (Debian: chromium; or set AW_CHROMIUM)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_page),
        cmocka_unit_test(test_stored_session_page),
        cmocka_unit_test(test_markdown_is_inert),
        cmocka_unit_test(test_live_session_page),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
