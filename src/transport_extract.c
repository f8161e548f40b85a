/* The streaming tag extractor.
 *
 * A byte-level state machine that never looks back: every byte is examined
 * once, whatever the chunking, and only the few bytes that could still turn
 * out to be a tag (or a closing tag) are held back. So the events are the
 * same for every chunking, the time is linear in the reply, and the memory
 * is bounded by the largest payload (which must be kept whole to be
 * validated).
 *
 * The four faults of the public implementations are designed out here: a
 * closing tag inside a JSON string does not end a tool payload (strings are
 * tracked), a '>' inside a quoted attribute does not end the tag (quotes
 * are tracked), nothing is re-scanned (state carries across chunks), and
 * tool output is escaped when rendered into XML-PAST (transport_notice.c).
 */
#include <string.h>

#include "internal/errors.h"
#include "internal/transport_extract.h"

static const aw_text empty_text = {"", 0};

/* Below this many bytes a span is searched byte by byte: a reply streamed
 * token by token arrives in chunks of a few bytes, where calling memchr
 * costs more than the search itself. */
#define SHORT_SPAN 16

/* memchr, with short spans searched inline. */
static const char *find_byte(const char *p, size_t n, char c) {
    if (n >= SHORT_SPAN) return memchr(p, c, n);
    for (size_t i = 0; i < n; i++)
        if (p[i] == c) return p + i;
    return NULL;
}

static const char *find_lt(const char *p, size_t n) { return find_byte(p, n, '<'); }

/* aw_buf_append, with the common case (a few bytes into a buffer that has
 * room for them and the terminator) done here without a call. */
static int buf_append_small(aw_buf *b, const char *p, size_t n) {
    if (n >= SHORT_SPAN || n >= b->cap - b->len) return aw_buf_append(b, p, n);
    char *d = b->data + b->len;
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    d[n] = '\0';
    b->len += n;
    return 0;
}

/* ---- emitting ----------------------------------------------------------- */

/* These run once per chunk when a reply is streamed token by token, where
 * a call costs as much as their work: inline. */

static inline int emit(aw_extractor *x, const aw_x_event *ev) {
    if (x->stopped) return AW_ESTOP;
    if (x->fn(x->ctx, ev)) {
        x->stopped = 1;
        return AW_ESTOP;
    }
    return 0;
}

static inline int emit_text(aw_extractor *x, const char *p, size_t n) {
    if (!n) return 0;
    if ((x->t->dialects & AW_DIALECT_FENCED) && buf_append_small(&x->visible, p, n)) return AW_ENOMEM;
    aw_x_event ev = {AW_X_TEXT, {p, n}, empty_text, empty_text, NULL, NULL, NULL};
    return emit(x, &ev);
}

/* Payload bytes: kept whole for validation, reported as they come. */
static inline int add_payload(aw_extractor *x, const char *p, size_t n) {
    if (!n) return 0;
    if (buf_append_small(&x->payload, p, n)) return AW_ENOMEM;
    if (x->tag.kind == TAG_REASONING) return 0; /* reasoning is not shown */
    aw_x_event ev = {AW_X_PAYLOAD, {p, n}, empty_text, empty_text, NULL, NULL, NULL};
    return emit(x, &ev);
}

/* ---- recognising an opening tag ---------------------------------------- */

static int is_name_char(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
}

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Could the name collected so far (hold without its '<') still grow into
 * a tag we know? */
static int could_be_tag(const aw_extractor *x, const char *name, size_t n) {
    const aw_transport *t = x->t;
    size_t plen = t->prefix_len;
    /* "<prefix-" followed by the rest of a nonce tag */
    if (n <= plen) {
        if (memcmp(name, t->prefix, n) == 0) return 1;
    } else if (memcmp(name, t->prefix, plen) == 0 && name[plen] == '-') {
        return 1;
    }
    for (size_t i = 0; i < t->reasoning_count; i++)
        if (n <= t->reasoning[i].len && memcmp(name, t->reasoning[i].ptr, n) == 0) return 1;
    if ((t->dialects & AW_DIALECT_HERMES) && n <= 9 && memcmp(name, "tool_call", n) == 0) return 1;
    if ((t->dialects & AW_DIALECT_FUNCTION_CALLS) && n <= 14 && memcmp(name, "function_calls", n) == 0)
        return 1;
    return 0;
}

/* The kind of a complete tag name, or TAG_NONE. */
static int tag_kind_of(const aw_extractor *x, const char *name, size_t n) {
    const aw_transport *t = x->t;
    if (n > t->prefix_len + 1 && memcmp(name, t->prefix, t->prefix_len) == 0 && name[t->prefix_len] == '-')
        return TAG_NONCE;
    for (size_t i = 0; i < t->reasoning_count; i++)
        if (n == t->reasoning[i].len && memcmp(name, t->reasoning[i].ptr, n) == 0) return TAG_REASONING;
    if ((t->dialects & AW_DIALECT_HERMES) && n == 9 && memcmp(name, "tool_call", 9) == 0) return TAG_HERMES;
    if ((t->dialects & AW_DIALECT_FUNCTION_CALLS) && n == 14 && memcmp(name, "function_calls", 14) == 0)
        return TAG_FUNCTION_CALLS;
    return TAG_NONE;
}

/* The held bytes were not a tag: they are text. The first byte is '<';
 * a later '<' may start a tag itself, so only the part before it is text
 * and the rest is looked at again. */
static int flush_hold(aw_extractor *x) {
    int rc = 0;
    while (x->hold.len && !rc) {
        const char *h = x->hold.data;
        const char *lt = memchr(h + 1, '<', x->hold.len - 1);
        size_t n = lt ? (size_t)(lt - h) : x->hold.len;
        rc = emit_text(x, h, n);
        memmove(x->hold.data, h + n, x->hold.len - n);
        x->hold.len -= n;
        if (x->hold.len) {
            /* re-check what is left as a fresh candidate */
            size_t k = 1;
            while (k < x->hold.len && is_name_char((unsigned char)x->hold.data[k])) k++;
            if (k == x->hold.len && could_be_tag(x, x->hold.data + 1, k - 1)) break;
        }
    }
    x->state = x->hold.len ? ST_OPEN : ST_TEXT;
    return rc;
}

/* ---- the state machine -------------------------------------------------- */

static int begin_payload(aw_extractor *x) {
    aw_buf_clear(&x->payload);
    x->close_len = 0;
    x->held = 0;
    x->in_string = x->escaped = 0;
    x->json_tracking = 0;
    x->seen_content = 0;
    x->cdata = 0;
    x->cdata_br = 0;
    x->state = ST_PAYLOAD;
    return 0;
}

static int open_tag_done(aw_extractor *x, int self_closing) {
    int rc = aw__extract_open(x);
    if (rc) return rc;
    if (self_closing) {
        aw_buf_clear(&x->payload);
        x->state = ST_TEXT;
        return aw__extract_close(x);
    }
    return begin_payload(x);
}

/* Attributes: quotes are tracked so that '>' inside a value does not end
 * the tag. */
static int step_attrs(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (x->quote) {
            if (c == x->quote) x->quote = 0;
        } else if (c == '"' || c == '\'') {
            x->quote = (char)c;
        } else if (c == '>') {
            int self_closing = 0;
            size_t k = x->tag.attrs.len;
            while (k && is_space((unsigned char)x->tag.attrs.data[k - 1])) k--;
            if (k && x->tag.attrs.data[k - 1] == '/') {
                self_closing = 1;
                x->tag.attrs.len = k - 1;
            }
            *used = i + 1;
            return open_tag_done(x, self_closing);
        }
        if (aw_buf_putc(&x->tag.attrs, (char)c)) return AW_ENOMEM;
    }
    *used = n;
    return 0;
}

static const char cdata_open[] = "<![CDATA[";

enum { HELD_NONE = 0, HELD_LT, HELD_CLOSE, HELD_CDATA };

/* The longest tag name we recognise; a longer name is text. Both the
 * whole-chunk scan and the byte-held scan apply the same bound, so the
 * answer never depends on where a chunk ends. */
#define TAG_NAME_MAX 256
enum { GO_ON = 0, CLOSED, GIVE_BACK };

/* The payload saw '<': it may be the closing tag "</name>" (spaces allowed
 * before '>') or, before any content, a CDATA opener. The bytes are held
 * until that is decided; if neither, they are payload. */
static int held_byte(aw_extractor *x, unsigned char c) {
    size_t k = x->close_len;
    switch (x->held) {
    case HELD_LT:
        if (c == '/') x->held = HELD_CLOSE;
        else if (c == '!' && !x->seen_content && x->tag.kind == TAG_NONCE) x->held = HELD_CDATA;
        else break;
        x->close_buf[x->close_len++] = (char)c;
        return GO_ON;
    case HELD_CLOSE: {
        size_t want = 2 + x->tag.name.len;
        if (k < want) {
            if ((char)c != x->tag.name.data[k - 2]) break;
            x->close_buf[x->close_len++] = (char)c;
            return GO_ON;
        }
        if (c == '>') {
            x->close_len = 0;
            x->held = HELD_NONE;
            return CLOSED;
        }
        if (is_space(c) && k < sizeof x->close_buf) {
            x->close_buf[x->close_len++] = (char)c;
            return GO_ON;
        }
        break;
    }
    case HELD_CDATA:
        if ((char)c != cdata_open[k]) break;
        x->close_len++;
        if (x->close_len == sizeof cdata_open - 1) {
            x->close_len = 0;
            x->held = HELD_NONE;
            x->cdata = 1;
            x->seen_content = 1;
            aw_buf_clear(&x->payload); /* whitespace before the section is not content */
        }
        return GO_ON;
    }
    /* neither: the held bytes are payload; c is looked at again */
    int rc = x->held == HELD_CDATA ? add_payload(x, cdata_open, k) : add_payload(x, x->close_buf, k);
    x->close_len = 0;
    x->held = HELD_NONE;
    x->seen_content = 1;
    return rc ? rc : GIVE_BACK;
}

static int step_payload(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0, run = 0; /* run: first byte not yet added as payload */
    int rc;
#define FLUSH_RUN()                                                                  \
    do {                                                                             \
        if (i > run && (rc = add_payload(x, p + run, i - run))) return rc;           \
        run = i;                                                                     \
    } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        if (x->held) {
            int m = held_byte(x, c);
            if (m < 0) return m;
            if (m == CLOSED) {
                *used = i + 1;
                x->state = ST_TEXT;
                return aw__extract_close(x);
            }
            if (m == GO_ON) i++;
            run = i;
            continue;
        }
        if (x->cdata == 1) {
            /* inside CDATA: raw text up to "]]>" */
            if (c == ']') {
                FLUSH_RUN();
                if (x->cdata_br == 2 && (rc = add_payload(x, "]", 1))) return rc;
                if (x->cdata_br < 2) x->cdata_br++;
                run = ++i;
                continue;
            }
            if (c == '>' && x->cdata_br == 2) {
                x->cdata = 2;
                x->cdata_br = 0;
                run = ++i;
                continue;
            }
            if (x->cdata_br) {
                if ((rc = add_payload(x, "]]", x->cdata_br))) return rc;
                x->cdata_br = 0;
            }
            i++;
            continue;
        }
        if (x->in_string) {
            if (x->escaped) x->escaped = 0;
            else if (c == '\\') x->escaped = 1;
            else if (c == '"') x->in_string = 0;
            else {
                /* skip to the next quote or backslash */
                while (i + 1 < n && p[i + 1] != '"' && p[i + 1] != '\\') i++;
            }
            i++;
            continue;
        }
        if (c == '<') {
            FLUSH_RUN();
            x->close_buf[0] = '<';
            x->close_len = 1;
            x->held = HELD_LT;
            run = ++i;
            continue;
        }
        if (!x->seen_content && !is_space(c)) {
            x->seen_content = 1;
            /* a JSON payload: track its strings, so that a closing tag
             * inside one is text and not the end of the payload */
            if (x->tag.json_payload && (c == '{' || c == '[')) x->json_tracking = 1;
        }
        if (x->json_tracking || !x->seen_content) {
            /* byte by byte while the kind of payload is not known yet */
            if (x->json_tracking && c == '"') x->in_string = 1;
            i++;
            continue;
        }
        /* plain payload: jump to the next '<' */
        const char *lt = memchr(p + i, '<', n - i);
        i = lt ? (size_t)(lt - p) : n;
    }
    FLUSH_RUN();
#undef FLUSH_RUN
    *used = n;
    return 0;
}

/* Is the chunk payload that step_payload would add whole, changing no
 * state? It is when it holds no byte that matters where the payload is:
 * inside CDATA a ']' (or the '>' after "]]", so none may be pending);
 * inside a JSON string a quote or backslash (and no escape may be
 * pending); elsewhere in a JSON payload a quote or '<'; in other payload
 * a '<'. Before the first content byte, or with bytes of a possible
 * closing tag held, every byte matters. */
static int payload_is_inert(const aw_extractor *x, const char *p, size_t n) {
    if (x->held || !x->seen_content) return 0;
    if (x->cdata == 1) return !x->cdata_br && !find_byte(p, n, ']');
    if (x->in_string) return !x->escaped && !find_byte(p, n, '"') && !find_byte(p, n, '\\');
    if (x->json_tracking) return !find_byte(p, n, '"') && !find_lt(p, n);
    return !find_lt(p, n);
}

static int step_open(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        const char *name = x->hold.data + 1;
        size_t nlen = x->hold.len - 1;
        if (is_name_char(c)) {
            if (nlen >= TAG_NAME_MAX) {
                *used = i; /* too long to be ours: c is looked at again as text */
                return flush_hold(x);
            }
            if (aw_buf_putc(&x->hold, (char)c)) return AW_ENOMEM;
            if (!could_be_tag(x, x->hold.data + 1, nlen + 1)) {
                *used = i + 1;
                return flush_hold(x);
            }
            continue;
        }
        int kind = tag_kind_of(x, name, nlen);
        int ok = kind != TAG_NONE && (c == '>' || (kind != TAG_HERMES && kind != TAG_FUNCTION_CALLS &&
                                                   (is_space(c) || c == '/')));
        if (!ok) {
            *used = i; /* c is looked at again as text */
            return flush_hold(x);
        }
        aw__extract_tag_reset(x, kind);
        if (aw_buf_append(&x->tag.name, name, nlen) || aw_buf_reserve(&x->tag.name, 0)) return AW_ENOMEM;
        x->hold.len = 0;
        x->quote = 0;
        if (c == '>') {
            *used = i + 1;
            return open_tag_done(x, 0);
        }
        x->state = ST_ATTRS;
        *used = i; /* the attribute step sees c */
        return 0;
    }
    *used = n;
    return 0;
}

/* Text: runs up to a '<' that may start a tag. A '<' whose name, seen
 * whole in this chunk, cannot be one of ours stays in the run, so markup
 * in prose costs no extra events; one that may be ours (or whose name
 * reaches the end of the chunk) is held back for step_open to decide. */
static int step_text(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0;
    for (;;) {
        const char *lt = memchr(p + i, '<', n - i);
        if (!lt) {
            *used = n;
            return emit_text(x, p, n);
        }
        size_t at = (size_t)(lt - p), j = at + 1;
        while (j < n && j - at <= TAG_NAME_MAX + 1 && is_name_char((unsigned char)p[j])) j++;
        const char *name = p + at + 1;
        size_t nlen = j - at - 1;
        int maybe;
        if (nlen > TAG_NAME_MAX) {
            maybe = 0;
        } else if (j < n) {
            unsigned char c = (unsigned char)p[j];
            int kind = tag_kind_of(x, name, nlen);
            maybe = kind != TAG_NONE &&
                    (c == '>' || (kind != TAG_HERMES && kind != TAG_FUNCTION_CALLS && (is_space(c) || c == '/')));
        } else {
            maybe = could_be_tag(x, name, nlen);
        }
        if (!maybe) {
            i = at + 1;
            continue;
        }
        int rc = emit_text(x, p, at);
        if (rc) return rc;
        x->hold.len = 0;
        if (aw_buf_putc(&x->hold, '<')) return AW_ENOMEM;
        x->state = ST_OPEN;
        *used = at + 1;
        return 0;
    }
}

/* Kept out of line so that the fast path of aw_extractor_feed does not pay
 * for the registers the state machine needs. */
#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* The state machine over one chunk: each step takes what it can and says
 * how much it used. */
static NOINLINE int run_states(aw_extractor *x, const char *chunk, size_t len) {
    size_t pos = 0;
    while (pos < len) {
        size_t used = 0;
        int rc;
        switch (x->state) {
        case ST_TEXT: rc = step_text(x, chunk + pos, len - pos, &used); break;
        case ST_OPEN: rc = step_open(x, chunk + pos, len - pos, &used); break;
        case ST_ATTRS: rc = step_attrs(x, chunk + pos, len - pos, &used); break;
        default: rc = step_payload(x, chunk + pos, len - pos, &used); break;
        }
        if (rc) return rc;
        pos += used;
    }
    return 0;
}

/* Chunks up to this size are first checked whole for a byte that changes
 * the scanner's state; the check costs less than a pass through the state
 * machine, and at most this much is scanned twice when it fails. */
#define SMALL_CHUNK 64

static int feed_failed(int rc, aw_error *err) {
    if (rc == AW_ESTOP) return aw__error_set(err, AW_ESTOP, "stopped by the callback");
    return aw__error_set(err, rc, "%s", aw_strerror(rc));
}

int aw_extractor_feed(aw_extractor *x, const char *chunk, size_t len, aw_x_fn fn, void *ctx,
                      aw_error *err) {
    if (!x || !fn || (!chunk && len)) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (x->finished) return aw__error_set(err, AW_EINVAL, "the reply was already finished");
    x->fn = fn;
    x->ctx = ctx;
    x->err = err;
    int rc;
    /* A reply streamed token by token comes in chunks of a few bytes, and
     * most of them hold no byte that changes the scanner's state: those
     * are text or payload whole, as the step functions would conclude,
     * and skip the state machine. */
    if (len <= SMALL_CHUNK && x->state == ST_TEXT && !find_lt(chunk, len)) rc = emit_text(x, chunk, len);
    else if (len <= SMALL_CHUNK && x->state == ST_PAYLOAD && payload_is_inert(x, chunk, len))
        rc = add_payload(x, chunk, len);
    else rc = run_states(x, chunk, len);
    return rc ? feed_failed(rc, err) : 0;
}

int aw_extractor_finish(aw_extractor *x, const char *stop_reason, aw_x_fn fn, void *ctx,
                        aw_error *err) {
    if (!x || !fn) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (x->finished) return aw__error_set(err, AW_EINVAL, "the reply was already finished");
    x->fn = fn;
    x->ctx = ctx;
    x->err = err;
    int rc = 0;
    if (x->state == ST_OPEN) {
        /* a '<' and a partial name at the very end: text */
        rc = emit_text(x, x->hold.data, x->hold.len);
        x->hold.len = 0;
    } else if (x->state == ST_ATTRS || x->state == ST_PAYLOAD) {
        /* held bytes of a would-be closing tag or CDATA opener are payload */
        if (x->held == HELD_CDATA) rc = add_payload(x, cdata_open, x->close_len);
        else if (x->held) rc = add_payload(x, x->close_buf, x->close_len);
        if (!rc && x->cdata_br) rc = add_payload(x, "]]", x->cdata_br);
        x->close_len = 0;
        x->held = HELD_NONE;
        x->cdata_br = 0;
        if (!rc) rc = aw__extract_unclosed(x, stop_reason, x->state == ST_ATTRS);
    }
    x->state = ST_TEXT;
    if (!rc && (x->t->dialects & AW_DIALECT_FENCED)) rc = aw__extract_fenced(x);
    x->finished = 1;
    if (rc == AW_ESTOP) return aw__error_set(err, AW_ESTOP, "stopped by the callback");
    if (rc) return aw__error_set(err, rc, "%s", aw_strerror(rc));
    return 0;
}
