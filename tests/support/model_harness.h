/* Tests' side of a provider: collect what one model request reports
 * (text, reasoning, tool calls, the result) and run it on a loop. */
#ifndef AW_TEST_MODEL_HARNESS_H
#define AW_TEST_MODEL_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "agentwire/buf.h"
#include "agentwire/json.h"
#include "agentwire/provider.h"
#include "internal/provider_http.h"
#include "stub_client.h"

typedef struct aw_test_reply {
    aw_buf text;       /* all of it, unless count_only */
    aw_buf reasoning;
    aw_buf calls;      /* "id|name|arguments\n" per call */
    size_t text_bytes;
    uint64_t text_hash;  /* FNV-1a of the text, for replies too big to keep */
    bool count_only;
    size_t stop_after_text; /* on_text returns nonzero once this much came; 0: never */
    bool cancel_instead;    /* ...or cancels the call from inside on_text */
    aw_model_call *call;    /* set by aw_test_model_run */
    int dones, after_stop;
    bool stopped;
    /* the result, copied */
    int code;
    char error[1024];
    bool retryable;
    int64_t retry_after_ms;
    int http_status;
    char stop_reason[64];
    char model[128];
    bool has_usage;
    aw_model_usage usage;
} aw_test_reply;

void aw_test_reply_init(aw_test_reply *r);
void aw_test_reply_free(aw_test_reply *r);
const aw_model_fns *aw_test_reply_fns(void);

/* Send req on p and run the loop until the reply is done. Returns the
 * send's status (its message in err). */
int aw_test_model_run(aw_loop *l, aw_provider *p, const aw_model_request *req, aw_test_reply *out, aw_error *err);

/* A provider from spec on l (idle timeout 20 s); a failure fails the test. */
aw_provider *aw_test_provider(aw_loop *l, const char *spec, const char *base_url, bool no_stream, aw_trace_fn trace,
                              void *trace_ctx, const aw_allocator *alloc);

/* A provider against a fresh stub_llm, on a fresh loop. */
typedef struct aw_test_fixture {
    aw_stub stub;
    aw_loop *loop;
    aw_provider *p;
    char base[128];  /* the stub's URL and base_path */
    const char *spec;
} aw_test_fixture;

/* Start the stub on script, set key_env to key, make the provider. */
void aw_test_fixture_start(aw_test_fixture *f, const char *script, const char *spec, const char *base_path,
                           const char *key_env, const char *key);
void aw_test_fixture_finish(aw_test_fixture *f);
/* Run req on p (NULL: f->p) to its end; a send error fails the test. */
void aw_test_fixture_run(aw_test_fixture *f, aw_provider *p, const aw_model_request *req, aw_test_reply *r);
/* Run req on p (NULL: f->p); it must succeed. */
void aw_test_fixture_ok(aw_test_fixture *f, aw_provider *p, const aw_model_request *req);
/* Run req on p (NULL: f->p; "fresh": a new provider of f->spec, nothing
 * cached) and return the body the stub logged as its index-th request. */
char *aw_test_fixture_body(aw_test_fixture *f, aw_provider *p, bool fresh, const aw_model_request *req, size_t index);

/* One way a request fails, and what its result must say. */
typedef struct aw_test_fault {
    const char *script;     /* the stub's script */
    int64_t idle_ms;        /* the provider's idle timeout; 0: the fixture's */
    int code;
    const char *error;      /* the whole message; NULL: only `has` is checked */
    const char *has[2];     /* parts the message must hold */
    bool retryable;
    bool check_retry_after;
    int64_t retry_after_ms;
    int http_status;        /* 0: not checked */
    const char *text;       /* the text passed on before the failure; NULL: not checked */
} aw_test_fault;

/* One request ("hi") of spec against a stub on c->script, its result
 * checked against c; a mismatch fails the test naming the script. */
void aw_test_fault_check(const aw_test_fault *c, const char *spec, const char *base_path, const char *key_env,
                         const char *key);

/* Append a message to a chat: plain, an assistant turn with one tool call,
 * a tool result. */
void aw_test_chat_add(aw_chat *c, aw_chat_role role, const char *content);
void aw_test_chat_call(aw_chat *c, const char *content, const char *id, const char *name, const char *args);
void aw_test_chat_result(aw_chat *c, const char *id, const char *name, const char *content, bool is_error);

/* An allocator that counts the bytes live and their peak, to show a reply
 * is streamed rather than kept. */
typedef struct aw_test_counting {
    aw_allocator base;
    size_t live, peak;
} aw_test_counting;

const aw_allocator *aw_test_counting_init(aw_test_counting *c);

/* A trace (aw_provider_config.trace) as one text: a "== what" line where
 * the kind changes, so the pieces of a reply body read as one. */
typedef struct aw_test_trace {
    aw_buf text;
    const char *last;
} aw_test_trace;

void aw_test_trace_init(aw_test_trace *t);
void aw_test_trace_fn(void *ctx, const char *what, const char *p, size_t n);

/* Run a reply reader over stream, fed in pieces of chunk bytes, then
 * finished; returns its status and copies what the reply said. */
int aw_test_read_reply(const aw_reply_reader_ops *ops, const aw_allocator *a, const char *stream, size_t chunk,
                       aw_reply_info *info);

/* A string member's bytes, or NULL. */
const char *aw_test_str(const aw_json_value *v, const char *key);

/* Both non-NULL and equal; frees both. */
void aw_test_same_and_free(char *a, char *b);

/* FNV-1a over bytes, continuing from h (start with AW_TEST_FNV_START). */
#define AW_TEST_FNV_START 1469598103934665603ull
uint64_t aw_test_fnv(uint64_t h, const char *p, size_t n);

#endif
