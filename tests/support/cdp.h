/* Headless Chromium driven over the DevTools protocol on a pipe
 * (--remote-debugging-pipe: commands on its fd 3, answers on its fd 4,
 * each a JSON text ended by a NUL), so a test can load a page, wait for
 * what it shows, read its DOM and take a screenshot, with no npm and no
 * WebSocket. Every wait is bounded. */
#ifndef AW_TEST_CDP_H
#define AW_TEST_CDP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "agentwire/json.h"

typedef struct aw_cdp {
    pid_t pid; /* the browser, leader of its own process group */
    int to, from;
    char *buf;
    size_t len;
    int next_id;
    char session[128]; /* the page's DevTools session */
    char error[512];   /* the last failure, in words */
} aw_cdp;

/* The browser to use: $AW_CHROMIUM, /usr/bin/chromium, or chromium /
 * chromium-browser on PATH; NULL when there is none. */
const char *aw_cdp_browser(void);

/* Start the browser with a fresh profile in dir and open one page of
 * width x height. 0, or -1 (c->error says why). */
int aw_cdp_start(aw_cdp *c, const char *browser, const char *dir, int width, int height);
/* Call a method on the page (params: a JSON object's text, or NULL);
 * the answer's "result" in a document, or NULL (c->error). */
aw_json_doc *aw_cdp_call(aw_cdp *c, const char *method, const char *params, int timeout_ms);
int aw_cdp_navigate(aw_cdp *c, const char *url);
/* Evaluate expr in the page until it is true, at most timeout_ms. */
bool aw_cdp_wait(aw_cdp *c, const char *expr, int timeout_ms);
/* The value of JSON.stringify(expr) in the page, parsed; NULL on failure. */
aw_json_doc *aw_cdp_eval_json(aw_cdp *c, const char *expr);
/* A PNG of the whole page. 0 or -1. */
int aw_cdp_screenshot(aw_cdp *c, const char *path);
/* Close the browser (killed, with its group, if it does not go). */
void aw_cdp_stop(aw_cdp *c);

#endif
