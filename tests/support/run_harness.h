/* Driving whole agent runs in tests: a temporary directory, a loop, replay
 * models written from scripts, command tools that run real shell
 * commands, and an observer that keeps everything the run reports (agent
 * events, runtime events, accounting rows, steps, logs, recorded replies)
 * as JSON arrays the tests can search.
 *
 *   rh h;
 *   rh_init(&h, NULL);
 *   rh_script *s = rh_script_new();
 *   rh_say(s, CALL("0001", "echo", "{}"), NULL);
 *   rh_say(s, FINAL("success", "done"), "tool results", NULL);   // + expectations
 *   rh_model(&h, "model.jsonl", s);
 *   rh_tools(&h, "[{\"name\":\"echo\",\"command\":[\"cat\"]}]");
 *   rh_config(&h);                  // h.cfg: xml transport, nonce 1a2b3c4d
 *   assert_int_equal(rh_go(&h, 10000), 0);
 *   ...h.result, h.events...
 *   rh_free(&h);
 */
#ifndef AW_TEST_RUN_HARNESS_H
#define AW_TEST_RUN_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agentwire/json.h"
#include "agentwire/loop.h"
#include "agentwire/provider.h"
#include "agentwire/records.h"
#include "agentwire/run.h"
#include "agentwire/sink.h"
#include "agentwire/tools.h"

#define RH_NONCE "1a2b3c4d"
/* A tool call in slot SLOT ("0001") of the xml transport. */
#define CALL(slot, tool, args) \
    "<ai-agent-" RH_NONCE "-" slot " tool=\"" tool "\">" args "</ai-agent-" RH_NONCE "-" slot ">"
/* The final report, markdown. */
#define FINAL(status, body)                                                                                   \
    "<ai-agent-" RH_NONCE "-FINAL tool=\"agent__final_report\" status=\"" status "\" format=\"markdown\">" body \
    "</ai-agent-" RH_NONCE "-FINAL>"

/* ---- replay scripts ----------------------------------------------------------- */

typedef struct rh_script {
    aw_json_doc *doc;
    aw_json_value *lines;
} rh_script;

rh_script *rh_script_new(void);
void rh_script_free(rh_script *s);
/* A reply line with this text; the NULL-terminated strings after it are
 * the line's "expect" (what the request must hold). */
aw_json_value *rh_say(rh_script *s, const char *text, ...);
/* Set line[key] to the JSON text given ("{\"input_tokens\": 5}", "true"). */
void rh_set(rh_script *s, aw_json_value *line, const char *key, const char *json);
/* A whole line given as JSON text. */
aw_json_value *rh_raw(rh_script *s, const char *json);
/* The script as JSON lines (malloc'd). */
char *rh_script_text(const rh_script *s);

/* ---- the run ---------------------------------------------------------------------- */

typedef struct rh rh;
struct rh {
    char dir[256];
    const aw_allocator *alloc;  /* for everything the run is made of; NULL: default */
    aw_loop *loop;
    aw_provider *models[4];
    size_t nmodels;
    aw_toolbox *box;
    aw_records *records;        /* rh_records */
    aw_sink *sink;
    aw_run *run;
    aw_run_config cfg;
    aw_run_observer observers[3];
    aw_error err;               /* the last failure of a harness call */

    /* what the run reported, copied (default allocator) */
    aw_json_doc *seen;
    aw_json_value *events, *runtime, *accounting, *steps, *logs, *replies;
    bool done;
    aw_run_status status;
    char *content;              /* the result's content, NUL-terminated */
    size_t content_len;
    char stop_reason[32];
    bool synthesized;
    unsigned turns;
    aw_json_doc *json;          /* the result's json, copied */

    /* test hooks, called after the harness has kept the item */
    void (*on_event)(rh *h, const aw_json_value *ev);
    void (*on_runtime)(rh *h, const aw_json_value *ev);
    void (*on_ask)(rh *h, const char *question, size_t len);
    void *user;
    char paths[8][512];
    unsigned next_path;
};

/* A temporary directory and a loop on alloc (NULL: the default). 0, or
 * AW_ENOMEM when the loop cannot be made. */
int rh_init(rh *h, const aw_allocator *alloc);
/* Everything made, the run first; the directory removed. */
void rh_free(rh *h);
/* A path in the directory (valid for the next seven calls). */
const char *rh_path(rh *h, const char *name);
void rh_write(rh *h, const char *name, const char *text);
/* The file's contents (malloc'd, NUL-terminated), NULL when unreadable. */
char *rh_read(rh *h, const char *name, size_t *len);

/* rh_init with the default allocator and, when tools_json is not NULL,
 * rh_tools; the test fails if either does. */
void rh_start(rh *h, const char *tools_json);
/* rh_model("model.jsonl", s) then rh_config; the test fails if the model
 * cannot be made. */
void rh_ready(rh *h, rh_script *s);

/* Write the script to NAME in the directory (the script is freed) and add
 * replay:PATH as the next model (the first, then the fallbacks). */
int rh_model(rh *h, const char *name, rh_script *s);
/* Command tools from JSON text; a tool without "cwd" runs in the
 * directory. */
int rh_tools(rh *h, const char *json);
/* Records into files of the directory: thread.xml, accounting.jsonl,
 * trace.txt, record.jsonl, and envelopes into events.jsonl; their observer
 * goes before the harness's. Call before rh_model for the models to
 * trace into them. */
int rh_records(rh *h, bool stream_events);
/* Flush and close them (aw_records_close). */
int rh_records_close(rh *h);
/* h->cfg with the models, the tools, the observers, xml transport,
 * messages context, nonce RH_NONCE, task "the task", fast retries. */
void rh_config(rh *h);
/* Make and start the run from h->cfg and serve the loop until it is done
 * or limit_ms pass (then the run is cancelled). 0 when done; the run's
 * creation error (h->err), or the loop's, otherwise; AW_ESTOP when the
 * limit passed. */
int rh_go(rh *h, int64_t limit_ms);
/* Serve the loop for ms milliseconds (the run may be under way). */
void rh_serve(rh *h, int64_t ms);

/* The run ended with this status (else the test fails, showing the
 * report and the stop reason). */
void rh_assert_status(rh *h, aw_run_status want);

/* ---- looking at what was seen --------------------------------------------------- */

const char *rh_str(const aw_json_value *o, const char *key);
double rh_num(const aw_json_value *o, const char *key);
/* Items of list whose key is the string value. */
size_t rh_count(const aw_json_value *list, const char *key, const char *value);
/* The nth (from 0) such item, or NULL. */
const aw_json_value *rh_find(const aw_json_value *list, const char *key, const char *value, size_t nth);
/* Whether some item's text (JSON-written) holds needle. */
bool rh_any_holds(const aw_json_value *list, const char *needle);
/* v written as JSON (malloc'd). */
char *rh_json(const aw_json_value *v);
/* Whether process pid still exists (a zombie does not count). */
bool rh_pid_alive(long pid);
/* Whether pid is gone within ms milliseconds (a SIGKILL takes effect a
 * moment after it is sent). */
bool rh_pid_gone(long pid, int64_t ms);

#endif
