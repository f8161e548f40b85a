/* Private state of the streaming extractor, shared by the scanner of text
 * and opening tags (transport_extract.c), the scanner of payloads
 * (transport_payload.c) and the validation of complete tags
 * (transport_tags.c). */
#ifndef AW_INTERNAL_TRANSPORT_EXTRACT_H
#define AW_INTERNAL_TRANSPORT_EXTRACT_H

#include <string.h>

#include "agentwire/transport.h"
#include "internal/transport.h"

enum { ST_TEXT = 0, ST_OPEN, ST_ATTRS, ST_PAYLOAD };
enum { TAG_NONE = 0, TAG_NONCE, TAG_REASONING };
/* What the payload scanner holds back in close_buf: a '<', the start of a
 * closing tag, of a CDATA opener, or of one of our opening tags. */
enum { HELD_NONE = 0, HELD_LT, HELD_CLOSE, HELD_CDATA, HELD_OPEN };

/* The longest tag name we recognise; a longer name is text. Every scan
 * applies the same bound, so the answer never depends on where a chunk
 * ends. */
#define TAG_NAME_MAX 256

/* A closing tag met inside a JSON string of its own payload is decided by
 * what follows it within this many bytes (see transport_payload.c). */
#define CLOSE_LOOKBACK 1024

/* What the open tag is, decided when its '>' arrives. */
typedef enum { SLOT_NUMBERED = 0, SLOT_FINAL, SLOT_PROGRESS, SLOT_OTHER } slot_kind;

#define NO_OFFSET ((size_t)-1)

typedef struct x_tag {
    int kind;            /* TAG_* */
    aw_buf name;         /* tag name, without '<' */
    aw_buf attrs;        /* the raw bytes between the name and '>' */
    size_t attr_len;     /* how many of them are attributes (not a self-closing '/') */
    aw_buf tool;         /* decoded attribute values */
    aw_buf status;
    aw_buf format;
    int has_tool, has_status, has_format;
    aw_text slot;        /* points into name */
    slot_kind slot_kind;
    unsigned long slot_number;
    int json_payload;    /* payload is JSON: tool slots, progress */
    int rejected;        /* -1, or the aw_reject_reason decided at open */
    size_t cut_string;   /* the payload was cut at a closing tag inside the JSON
                            string that starts at this offset; NO_OFFSET */
    char message[256];
} x_tag;

struct aw_extractor {
    /* what every aw_extractor_feed touches, together in one cache line: a
     * reply streamed token by token makes a call per few bytes */
    const aw_transport *t;
    int state;
    int finished, stopped;
    struct aw_recover *rec; /* other dialects are on: the filter of the visible text */
    aw_x_fn fn;
    void *ctx;
    aw_error *err;
    unsigned turn;
    const aw_allocator *alloc;
    aw_buf hold;            /* '<' and a partial tag name, in ST_OPEN */
    char quote;             /* open quote in ST_ATTRS */
    x_tag tag;
    aw_buf payload;
    char close_buf[2 + TAG_NAME_MAX + 16]; /* held bytes (HELD_*) */
    size_t close_len;
    int held;               /* HELD_* */
    int in_string, escaped, json_tracking, seen_content;
    size_t str_start;       /* payload offset of the open JSON string's quote */
    int cdata;              /* 0 none, 1 inside, 2 after */
    size_t cdata_br;        /* ']' held inside CDATA */
    /* A closing tag of the open tag met inside one of its JSON strings:
     * 0 none, 1 the string goes on, 2 the string ended and the next
     * non-blank byte decides. The payload from cand_at on (the closing tag
     * and what follows) is not reported until then. */
    int cand;
    size_t cand_at, cand_end, cand_string;
    aw_buf replay;          /* bytes to read again as the rest of the reply */
    size_t replayed;        /* how many bytes were read again, in all */
    unsigned char *used;    /* numbered slots that got an accepted call this reply */
    int final_done, progress_done;
    aw_buf feedback;        /* rejection lines */
    size_t rejections;
    int rec_busy;           /* the filter is running: what it reports is not a boundary */
    const char *emit_dialect; /* the dialect of the call being reported (transport_recover.c) */
    char warning[160];
};

/* ---- shared by the scanners ---------------------------------------------- */

#define AW__X_NO_TEXT ((aw_text){"", 0})

/* Below this many bytes a span is searched byte by byte: a reply streamed
 * token by token arrives in chunks of a few bytes, where calling memchr
 * costs more than the search itself. */
#define SHORT_SPAN 16

/* memchr, with short spans searched inline. */
static inline const char *aw__x_find_byte(const char *p, size_t n, char c) {
    if (n >= SHORT_SPAN) return memchr(p, c, n);
    for (size_t i = 0; i < n; i++)
        if (p[i] == c) return p + i;
    return NULL;
}

/* aw_buf_append, with the common case (a few bytes into a buffer that has
 * room for them and the terminator) done here without a call. */
static inline int aw__x_append(aw_buf *b, const char *p, size_t n) {
    if (n >= SHORT_SPAN || n >= b->cap - b->len) return aw_buf_append(b, p, n);
    char *d = b->data + b->len;
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    d[n] = '\0';
    b->len += n;
    return 0;
}

static inline int aw__x_is_name_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

static inline int aw__x_is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* These run once per chunk when a reply is streamed token by token, where
 * a call costs as much as their work: inline. */

static inline int aw__x_emit(aw_extractor *x, const aw_x_event *ev) {
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

int aw__recover_text(aw_extractor *x, const char *p, size_t n);

static inline int aw__x_emit_text(aw_extractor *x, const char *p, size_t n) {
    if (!n) return 0;
    if (x->rec) return aw__recover_text(x, p, n);
    aw_x_event ev = {AW_X_TEXT, {p, n}, AW__X_NO_TEXT, AW__X_NO_TEXT, NULL, NULL, NULL};
    return aw__x_emit(x, &ev);
}

/* Report payload bytes that are already in x->payload. */
static inline int aw__x_emit_payload(aw_extractor *x, const char *p, size_t n) {
    if (!n || x->tag.kind == TAG_REASONING) return 0; /* reasoning is not shown */
    aw_x_event ev = {AW_X_PAYLOAD, {p, n}, AW__X_NO_TEXT, AW__X_NO_TEXT, NULL, NULL, NULL};
    return aw__x_emit(x, &ev);
}

/* Payload bytes: kept whole for validation, reported as they come unless
 * a closing tag inside a JSON string is being decided. */
static inline int aw__x_add_payload(aw_extractor *x, const char *p, size_t n) {
    if (!n) return 0;
    if (aw__x_append(&x->payload, p, n)) return AW_ENOMEM;
    return x->cand ? 0 : aw__x_emit_payload(x, p, n);
}

static inline aw_text aw__x_tag_tool(const x_tag *g) {
    aw_text t = {g->tool.data ? g->tool.data : "", g->tool.len};
    return t;
}

/* ---- the payload scanner (transport_payload.c) --------------------------- */

void aw__extract_begin_payload(aw_extractor *x);
/* Take what it can of p[0..n) as payload; *used says how much. The state
 * may change (the tag ended); bytes may be left in x->replay to be read
 * again before the rest of p. */
int aw__extract_step_payload(aw_extractor *x, const char *p, size_t n, size_t *used);
/* The reply ended in the payload. */
int aw__extract_end_payload(aw_extractor *x, const char *stop_reason);

/* Is the chunk payload that aw__extract_step_payload would add whole,
 * changing no state? It is when it holds no byte that matters where the
 * payload is: inside CDATA a ']' (or the '>' after "]]", so none may be
 * pending); inside a JSON string a quote, backslash or '<' (and no escape
 * may be pending); elsewhere in a JSON payload a quote or '<'; in other
 * payload a '<'. Before the first content byte, with bytes held, or with a
 * candidate end being decided, every byte matters. Inline: it runs once
 * per chunk of a reply streamed token by token. */
static inline int aw__extract_payload_is_inert(const aw_extractor *x, const char *p, size_t n) {
    if (x->held || !x->seen_content || x->cand) return 0;
    if (x->cdata == 1) return !x->cdata_br && !aw__x_find_byte(p, n, ']');
    if (x->in_string)
        return !x->escaped && !aw__x_find_byte(p, n, '"') && !aw__x_find_byte(p, n, '\\') &&
               !aw__x_find_byte(p, n, '<');
    if (x->json_tracking) return !aw__x_find_byte(p, n, '"') && !aw__x_find_byte(p, n, '<');
    return !aw__x_find_byte(p, n, '<');
}

/* ---- complete tags (transport_tags.c) ------------------------------------- */

void aw__extract_tag_reset(aw_extractor *x, int kind);
/* The opening tag is complete: classify it and decide early rejections.
 * Returns 0 when the tag is open (TAG_OPEN reported), 1 when it was
 * rejected as it opened (nothing reported yet: see aw__extract_reject_open),
 * or a negative code. */
int aw__extract_open(aw_extractor *x);
/* Report the rejection decided as the tag opened. */
int aw__extract_reject_open(aw_extractor *x);
/* The closing tag arrived (or the payload was cut at it): validate and
 * report. */
int aw__extract_close(aw_extractor *x);
/* The reply ended inside the payload. */
int aw__extract_unclosed(aw_extractor *x, const char *stop_reason);
/* One of our opening tags began inside the payload of a tag that was never
 * closed: report that tag. */
int aw__extract_unclosed_before_tag(aw_extractor *x);
/* An opening tag got no '>': before the end of the reply (at_end) or
 * before the next '<'. */
int aw__extract_open_unended(aw_extractor *x, int at_end);

/* ---- what is reported (transport_calls.c) --------------------------------- */

/* Report a rejection and add its line to the feedback. */
int aw__extract_reject(aw_extractor *x, aw_text slot, aw_text tool, aw_reject_reason reason, const char *message);
/* The same, with the schema errors behind an invalid_arguments rejection. */
int aw__extract_reject_with(aw_extractor *x, aw_text slot, aw_text tool, aw_reject_reason reason, const char *message,
                            const aw_schema_result *errors);
/* Parse a payload as JSON, strictly first and then with repair. *doc is
 * NULL when nothing could be recovered; fails only with AW_ENOMEM. */
int aw__extract_parse_payload(const aw_extractor *x, const char *s, size_t n, aw_json_doc **doc, unsigned *repairs);
/* Report an accepted call once its arguments pass the tool's schema (else
 * an invalid_arguments rejection): 0, or a negative code. */
int aw__extract_emit_call(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args, aw_text payload,
                          const char *source, unsigned repairs);
/* The same, telling which: 1 reported, 0 rejected, or a negative code. */
int aw__extract_checked_call(aw_extractor *x, aw_text slot, aw_text tool, const aw_json_value *args, aw_text payload,
                             const char *source, unsigned repairs);
/* A JSON-object payload for a tool: a call (1), or invalid_json or
 * invalid_arguments (0), or a negative code; `why`, when not NULL, says what is wrong with the JSON. */
int aw__extract_tool_call(aw_extractor *x, aw_text slot, aw_text tool, aw_text payload, const char *source,
                          const char *why);
/* "the string starting "hello} (1:11)": the JSON string whose quote is at
 * offset `at` of p[0..n). */
void aw__extract_describe_string(const char *p, size_t n, size_t at, char *out, size_t size);

/* ---- the other dialects (transport_recover.c) ------------------------------ */

/* The filter of the visible text, when t->dialects has any: made with the
 * extractor, freed with it. */
int aw__recover_new(aw_extractor *x);
void aw__recover_free(aw_extractor *x);
/* Something other than text is about to be reported (a tag of ours, a
 * rejection, a call): settle what the filter holds, as at the end of the
 * reply, so the events keep their order. Also called by finish. */
int aw__recover_settle(aw_extractor *x);
/* Bytes the readers have scanned in candidates so far, for the tests of
 * the bound that keeps the filter linear (SCAN_BUDGET_* in
 * transport_recover.c): at most 8 per byte of reply plus 64 KiB, and the
 * length of the candidate that crossed it. */
size_t aw__recover_scanned(const aw_extractor *x);

#endif
