/* The streaming tag extractor: text and opening tags (payloads are
 * transport_payload.c's).
 *
 * A byte-level state machine whose state carries across chunks: every
 * byte is examined once, whatever the chunking, and only the few bytes
 * that could still turn out to be a tag (or a closing tag) are held back.
 * The one exception is bounded: a closing tag inside a JSON string that
 * turns out to have been the end (transport_payload.c) has the bytes after
 * it, at most CLOSE_LOOKBACK of them, read again. So the events are the
 * same for every chunking, the time is linear in the reply, and the memory
 * is bounded by the largest payload (which must be kept whole to be
 * validated).
 *
 * The four faults of the public implementations are designed out here: a
 * closing tag inside a JSON string does not end a tool payload while the
 * JSON goes on (strings are tracked), a '>' inside a quoted attribute does
 * not end the tag (quotes are tracked), nothing is re-scanned past that
 * bound (state carries across chunks), and tool output is escaped when
 * rendered into XML-PAST (transport_notice.c).
 *
 * Nothing unclosed swallows the rest of a reply: a tag rejected as it
 * opens (a foreign nonce, a slot that is not open, a tool not allowed) is
 * not a tag at all, so its text, and any tag inside it, is read on as
 * text; an opening tag that meets a '<' before its '>' is text; and the
 * payload rules of transport_payload.c end a tool payload whose closing tag
 * was lost in an open string or never written.
 */
#include <string.h>

#include "internal/errors.h"
#include "internal/transport_extract.h"

static const char *find_lt(const char *p, size_t n) { return aw__x_find_byte(p, n, '<'); }

/* ---- recognising an opening tag ---------------------------------------- */

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
    return 0;
}

/* The kind of a complete tag name, or TAG_NONE. */
static int tag_kind_of(const aw_extractor *x, const char *name, size_t n) {
    const aw_transport *t = x->t;
    /* the first byte rules out most names without a call to memcmp: the
     * markup of other dialects is dense with them */
    if (n > t->prefix_len + 1 && name[0] == t->prefix[0] && memcmp(name, t->prefix, t->prefix_len) == 0 &&
        name[t->prefix_len] == '-')
        return TAG_NONCE;
    for (size_t i = 0; i < t->reasoning_count; i++)
        if (n == t->reasoning[i].len && name[0] == t->reasoning[i].ptr[0] && memcmp(name, t->reasoning[i].ptr, n) == 0)
            return TAG_REASONING;
    return TAG_NONE;
}

/* Does the byte after a complete name make it an opening tag of that kind? */
static int opens_tag(int kind, unsigned char c) {
    if (kind == TAG_NONE) return 0;
    return c == '>' || aw__x_is_space(c) || c == '/';
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
        rc = aw__x_emit_text(x, h, n);
        memmove(x->hold.data, h + n, x->hold.len - n);
        x->hold.len -= n;
        if (x->hold.len) {
            /* re-check what is left as a fresh candidate */
            size_t k = 1;
            while (k < x->hold.len && aw__x_is_name_char((unsigned char)x->hold.data[k])) k++;
            if (k == x->hold.len && could_be_tag(x, x->hold.data + 1, k - 1)) break;
        }
    }
    x->state = x->hold.len ? ST_OPEN : ST_TEXT;
    return rc;
}

/* The opening tag as it was written ("<" name attrs, then `end`), as text:
 * it turned out not to be a tag. */
static int markup_as_text(aw_extractor *x, const char *end) {
    x_tag *g = &x->tag;
    aw_buf_clear(&x->hold);
    if (aw_buf_putc(&x->hold, '<') || aw_buf_append(&x->hold, g->name.data, g->name.len) ||
        aw_buf_append(&x->hold, g->attrs.data, g->attrs.len) || aw_buf_append_str(&x->hold, end))
        return AW_ENOMEM;
    int rc = aw__x_emit_text(x, x->hold.data, x->hold.len);
    aw_buf_clear(&x->hold);
    return rc;
}

/* ---- the state machine -------------------------------------------------- */

static int open_tag_done(aw_extractor *x, int self_closing) {
    int rc = aw__extract_open(x);
    if (rc < 0) return rc;
    if (rc == 1) {
        /* rejected as it opened: not a tag, so nothing after it is hidden
         * (the model is told, and any tag inside it still counts) */
        x->state = ST_TEXT;
        rc = markup_as_text(x, ">");
        return rc ? rc : aw__extract_reject_open(x);
    }
    if (self_closing) {
        aw_buf_clear(&x->payload);
        x->state = ST_TEXT;
        return aw__extract_close(x);
    }
    aw__extract_begin_payload(x);
    return 0;
}

/* Attributes: quotes are tracked so that '>' inside a value does not end
 * the tag. A '<' (quoted or not: XML allows none in a tag) means the tag
 * was never ended: it is text, and the '<' is looked at again. */
static int step_attrs(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '<') {
            *used = i;
            x->state = ST_TEXT;
            x->tag.attr_len = x->tag.attrs.len;
            int rc = markup_as_text(x, "");
            return rc ? rc : aw__extract_open_unended(x, 0);
        }
        if (x->quote) {
            if (c == x->quote) x->quote = 0;
        } else if (c == '"' || c == '\'') {
            x->quote = (char)c;
        } else if (c == '>') {
            int self_closing = 0;
            size_t k = x->tag.attrs.len;
            while (k && aw__x_is_space((unsigned char)x->tag.attrs.data[k - 1])) k--;
            if (k && x->tag.attrs.data[k - 1] == '/') {
                self_closing = 1;
                x->tag.attr_len = k - 1;
            } else {
                x->tag.attr_len = x->tag.attrs.len;
            }
            *used = i + 1;
            return open_tag_done(x, self_closing);
        }
        if (aw_buf_putc(&x->tag.attrs, (char)c)) return AW_ENOMEM;
    }
    *used = n;
    return 0;
}

static int step_open(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        const char *name = x->hold.data + 1;
        size_t nlen = x->hold.len - 1;
        if (aw__x_is_name_char(c)) {
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
        if (!opens_tag(kind, c)) {
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
            return aw__x_emit_text(x, p, n);
        }
        size_t at = (size_t)(lt - p), j = at + 1;
        while (j < n && j - at <= TAG_NAME_MAX + 1 && aw__x_is_name_char((unsigned char)p[j])) j++;
        const char *name = p + at + 1;
        size_t nlen = j - at - 1;
        int maybe;
        if (nlen > TAG_NAME_MAX) maybe = 0;
        else if (j < n) maybe = opens_tag(tag_kind_of(x, name, nlen), (unsigned char)p[j]);
        else maybe = could_be_tag(x, name, nlen);
        if (!maybe) {
            i = at + 1;
            continue;
        }
        int rc = aw__x_emit_text(x, p, at);
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

static int run_states(aw_extractor *x, const char *chunk, size_t len);

/* Read again the bytes a cut payload left (transport_payload.c), as the
 * reply that follows the tag. A cut while they are read leaves its own,
 * which are read in turn. */
static int replay(aw_extractor *x) {
    aw_buf rest = x->replay;
    aw_buf_init(&x->replay, x->alloc);
    x->replayed += rest.len;
    int rc = run_states(x, rest.data, rest.len);
    aw_buf_free(&rest);
    return rc;
}

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
        default: rc = aw__extract_step_payload(x, chunk + pos, len - pos, &used); break;
        }
        if (!rc && x->replay.len) rc = replay(x);
        if (rc) return rc;
        pos += used;
    }
    return 0;
}

/* Chunks up to this size are first checked whole for a byte that changes
 * the scanner's state; the check costs less than a pass through the state
 * machine, and at most this much is scanned twice when it fails. */
#define SMALL_CHUNK 64

static int fail(int rc, aw_error *err) {
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
    if (len <= SMALL_CHUNK && x->state == ST_TEXT && !find_lt(chunk, len)) rc = aw__x_emit_text(x, chunk, len);
    else if (len <= SMALL_CHUNK && x->state == ST_PAYLOAD && aw__extract_payload_is_inert(x, chunk, len))
        rc = aw__x_add_payload(x, chunk, len);
    else rc = run_states(x, chunk, len);
    return rc ? fail(rc, err) : 0;
}

/* The reply ended in state x->state: settle it. Text again afterwards,
 * unless a cut payload left bytes to read again, which may end anywhere. */
static int end_state(aw_extractor *x, const char *stop_reason) {
    int rc;
    switch (x->state) {
    case ST_OPEN:
        /* a '<' and a partial name at the very end: text */
        rc = aw__x_emit_text(x, x->hold.data, x->hold.len);
        x->hold.len = 0;
        x->state = ST_TEXT;
        return rc;
    case ST_ATTRS:
        /* the reply ended inside an opening tag: text, and the model is told */
        x->state = ST_TEXT;
        x->tag.attr_len = x->tag.attrs.len;
        rc = markup_as_text(x, "");
        return rc ? rc : aw__extract_open_unended(x, 1);
    case ST_PAYLOAD:
        rc = aw__extract_end_payload(x, stop_reason);
        return !rc && x->replay.len ? replay(x) : rc;
    default:
        return 0;
    }
}

int aw_extractor_finish(aw_extractor *x, const char *stop_reason, aw_x_fn fn, void *ctx,
                        aw_error *err) {
    if (!x || !fn) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (x->finished) return aw__error_set(err, AW_EINVAL, "the reply was already finished");
    x->fn = fn;
    x->ctx = ctx;
    x->err = err;
    int rc = 0;
    while (!rc && x->state != ST_TEXT) rc = end_state(x, stop_reason);
    x->state = ST_TEXT;
    if (!rc) rc = aw__recover_settle(x);
    x->finished = 1;
    return rc ? fail(rc, err) : 0;
}
