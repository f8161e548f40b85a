/* Tests' side of a provider: collect what one model request reports
 * (text, reasoning, tool calls, the result) and run it on a loop. */
#ifndef AW_TEST_MODEL_HARNESS_H
#define AW_TEST_MODEL_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "agentwire/buf.h"
#include "agentwire/provider.h"

typedef struct aw_test_reply {
    aw_buf text;       /* all of it, unless count_only */
    aw_buf reasoning;
    aw_buf calls;      /* "id|name|arguments\n" per call */
    size_t text_bytes;
    uint64_t text_hash;  /* FNV-1a of the text, for replies too big to keep */
    bool count_only;
    size_t stop_after_text; /* on_text returns nonzero once this much came; 0: never */
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

/* FNV-1a over bytes, continuing from h (start with AW_TEST_FNV_START). */
#define AW_TEST_FNV_START 1469598103934665603ull
uint64_t aw_test_fnv(uint64_t h, const char *p, size_t n);

#endif
