/* Private state of the streaming extractor, shared by the scanner
 * (transport_extract.c) and the validation of closed tags
 * (transport_tags.c). */
#ifndef AW_INTERNAL_TRANSPORT_EXTRACT_H
#define AW_INTERNAL_TRANSPORT_EXTRACT_H

#include "agentwire/transport.h"
#include "internal/transport.h"

enum { ST_TEXT = 0, ST_OPEN, ST_ATTRS, ST_PAYLOAD };
enum { TAG_NONE = 0, TAG_NONCE, TAG_REASONING, TAG_HERMES, TAG_FUNCTION_CALLS };

/* What the open tag is, decided when its '>' arrives. */
typedef enum { SLOT_NUMBERED = 0, SLOT_FINAL, SLOT_PROGRESS, SLOT_OTHER } slot_kind;

typedef struct x_tag {
    int kind;            /* TAG_* */
    aw_buf name;         /* tag name, without '<' */
    aw_buf attrs;        /* raw attribute text */
    aw_buf tool;         /* decoded attribute values */
    aw_buf status;
    aw_buf format;
    int has_tool, has_status, has_format;
    aw_text slot;        /* points into name */
    slot_kind slot_kind;
    unsigned long slot_number;
    int json_payload;    /* payload is JSON: tool slots, progress, hermes */
    int rejected;        /* -1, or the aw_reject_reason decided at open */
    char message[256];
} x_tag;

struct aw_extractor {
    const aw_transport *t;
    unsigned turn;
    const aw_allocator *alloc;
    int state;
    aw_buf hold;            /* '<' and a partial tag name, in ST_OPEN */
    char quote;             /* open quote in ST_ATTRS */
    x_tag tag;
    aw_buf payload;
    char close_buf[2 + 256 + 16]; /* held bytes of a possible closing tag */
    size_t close_len;
    int held;               /* what close_buf holds */
    int in_string, escaped, json_tracking, seen_content;
    int cdata;              /* 0 none, 1 inside, 2 after */
    size_t cdata_br;        /* ']' held inside CDATA */
    unsigned char *used;    /* numbered slots used this turn */
    int final_used, progress_used;
    aw_buf feedback;        /* rejection lines */
    size_t rejections;
    aw_buf visible;         /* for the fenced dialect */
    char warning[160];
    int finished, stopped;
    aw_x_fn fn;
    void *ctx;
    aw_error *err;
};

void aw__extract_tag_reset(aw_extractor *x, int kind);
/* The opening tag is complete: classify it, decide early rejections, and
 * report TAG_OPEN. */
int aw__extract_open(aw_extractor *x);
/* The closing tag arrived: validate and report. */
int aw__extract_close(aw_extractor *x);
/* The reply ended inside a tag. in_open_tag: it ended before '>'. */
int aw__extract_unclosed(aw_extractor *x, const char *stop_reason, int in_open_tag);
/* The fenced dialect, over the visible text at the end. */
int aw__extract_fenced(aw_extractor *x);

#endif
