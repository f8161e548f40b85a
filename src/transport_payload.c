/* The payload scanner: the bytes between an opening tag's '>' and the end
 * of the tag.
 *
 * A payload ends at its closing tag "</name>" (blanks allowed before the
 * '>'); in CDATA, only after "]]>". Two rules keep a tag that was never
 * properly closed from swallowing the rest of the reply:
 *
 * - A JSON payload (tool slots, progress, hermes) has its strings tracked,
 *   so a closing tag inside a string is content, as in
 *   {"q": "</ai-agent-1a2b3c4d-0001>"}. But a model that leaves a string
 *   open ({"q": "hello}</…-0001>) makes the real closing tag look like
 *   string content. Such a closing tag is a candidate end, decided by what
 *   follows it: when the string then ends and a ',', ':', '}' or ']' comes
 *   next, the JSON goes on and the closing tag was content; when anything
 *   else comes next, or the reply ends first, the string was left open and
 *   the closing tag was the end. The payload stops there and the bytes
 *   after the closing tag are read again as the rest of the reply. The
 *   decision must come within CLOSE_LOOKBACK bytes of the closing tag (past
 *   that the string is taken to go on), and those bytes are not reported
 *   until it comes: so the look-back is bounded, the events do not depend
 *   on the chunking, and since a cut replays at most CLOSE_LOOKBACK bytes
 *   and needs a tag of its own (an opening and a closing tag, some 40
 *   bytes of reply), the time stays linear.
 *
 * - One of our opening tags outside a string of a tool payload, where JSON
 *   cannot have a '<', means the tag before it was never closed: that tag
 *   ends there (unclosed) and the new one opens. A report's text may quote
 *   a tag, so FINAL payloads do not end this way. */
#include "internal/errors.h"
#include "internal/transport_extract.h"

static const char cdata_open[] = "<![CDATA[";

enum { GO_ON = 0, CLOSED, OPENED, GIVE_BACK };

void aw__extract_begin_payload(aw_extractor *x) {
    aw_buf_clear(&x->payload);
    x->close_len = 0;
    x->held = HELD_NONE;
    x->in_string = x->escaped = 0;
    x->json_tracking = 0;
    x->seen_content = 0;
    x->str_start = 0;
    x->cdata = 0;
    x->cdata_br = 0;
    x->cand = 0;
    x->state = ST_PAYLOAD;
}

/* Does one of our opening tags end this payload here? */
static int opening_tag_ends_payload(const aw_extractor *x) {
    return x->tag.kind == TAG_NONCE && x->tag.json_payload && !x->in_string;
}

/* Can byte c at index `at` of a tag name belong to one of our nonce tags
 * ("prefix-...")? */
static int nonce_name_byte(const aw_transport *t, size_t at, unsigned char c) {
    if (at < t->prefix_len) return c == (unsigned char)t->prefix[at];
    if (at == t->prefix_len) return c == '-';
    return aw__x_is_name_char(c);
}

/* The payload saw '<': it may be the closing tag, before any content a
 * CDATA opener, or (see opening_tag_ends_payload) one of our opening tags.
 * The bytes are held until that is decided; if none of these, they are
 * payload. */
static int held_byte(aw_extractor *x, unsigned char c) {
    size_t k = x->close_len;
    switch (x->held) {
    case HELD_LT:
        if (c == '/') x->held = HELD_CLOSE;
        else if (c == '!' && !x->seen_content && x->tag.kind == TAG_NONCE) x->held = HELD_CDATA;
        else if (opening_tag_ends_payload(x) && nonce_name_byte(x->t, 0, c)) x->held = HELD_OPEN;
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
        if (c == '>') return CLOSED;
        if (aw__x_is_space(c) && k < sizeof x->close_buf) {
            x->close_buf[x->close_len++] = (char)c;
            return GO_ON;
        }
        break;
    }
    case HELD_OPEN: {
        size_t at = k - 1; /* bytes of the name so far; the same bounds as step_open's */
        if (aw__x_is_name_char(c)) {
            if (at >= TAG_NAME_MAX || !nonce_name_byte(x->t, at, c)) break;
            x->close_buf[x->close_len++] = (char)c;
            return GO_ON;
        }
        if (at > x->t->prefix_len + 1 && (c == '>' || c == '/' || aw__x_is_space(c))) return OPENED;
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
    /* none of them: the held bytes are payload; c is looked at again */
    int rc = x->held == HELD_CDATA ? aw__x_add_payload(x, cdata_open, k) : aw__x_add_payload(x, x->close_buf, k);
    x->close_len = 0;
    x->held = HELD_NONE;
    x->seen_content = 1;
    return rc ? rc : GIVE_BACK;
}

/* ---- a closing tag inside a JSON string ------------------------------------ */

/* The held closing tag (close_buf, then its '>') is a candidate end. Its
 * bytes go into the payload, unreported until decided. A later candidate
 * in the same string replaces it: what lies between the two is payload
 * either way. */
static int begin_candidate(aw_extractor *x) {
    size_t at = x->payload.len;
    if (x->cand) {
        int rc = aw__x_emit_payload(x, x->payload.data + x->cand_at, at - x->cand_at);
        x->cand = 0;
        if (rc) return rc;
    }
    if (aw__x_append(&x->payload, x->close_buf, x->close_len) || aw__x_append(&x->payload, ">", 1))
        return AW_ENOMEM;
    x->cand = 1;
    x->cand_at = at;
    x->cand_end = x->payload.len;
    x->cand_string = x->str_start;
    x->close_len = 0;
    x->held = HELD_NONE;
    return 0;
}

/* Is the decision still within reach of the candidate? (the byte deciding
 * it is the next one after the payload so far) */
static int within_lookback(const aw_extractor *x) { return x->payload.len - x->cand_at <= CLOSE_LOOKBACK; }

/* The candidate was content: report what was held back. */
static int release_candidate(aw_extractor *x) {
    x->cand = 0;
    return aw__x_emit_payload(x, x->payload.data + x->cand_at, x->payload.len - x->cand_at);
}

/* The candidate was the end: the payload stops at it, and what followed
 * it is left in x->replay to be read again as the rest of the reply. */
static int cut_at_candidate(aw_extractor *x) {
    size_t rest = x->payload.len - x->cand_end;
    if (rest && aw_buf_append(&x->replay, x->payload.data + x->cand_end, rest)) return AW_ENOMEM;
    x->payload.len = x->cand_at;
    x->payload.data[x->cand_at] = '\0';
    x->tag.cut_string = x->cand_string;
    x->cand = 0;
    x->in_string = x->escaped = 0;
    x->state = ST_TEXT;
    return aw__extract_close(x);
}

/* ---- the scan ---------------------------------------------------------------- */

/* One of our opening tags began (close_buf holds "<name"): the open tag
 * was never closed. Report it, and hand the new tag's start to the
 * opening-tag scanner. */
static int tag_opens_inside(aw_extractor *x) {
    aw_buf_clear(&x->hold);
    if (aw_buf_append(&x->hold, x->close_buf, x->close_len)) return AW_ENOMEM;
    x->close_len = 0;
    x->held = HELD_NONE;
    x->state = ST_OPEN;
    return aw__extract_unclosed_before_tag(x);
}

int aw__extract_step_payload(aw_extractor *x, const char *p, size_t n, size_t *used) {
    size_t i = 0, run = 0; /* run: first byte not yet added as payload */
    int rc;
#define FLUSH_RUN()                                                                  \
    do {                                                                             \
        if (i > run && (rc = aw__x_add_payload(x, p + run, i - run))) return rc;     \
        run = i;                                                                     \
    } while (0)
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        if (x->held) {
            int m = held_byte(x, c);
            if (m < 0) return m;
            if (m == CLOSED) {
                if (x->in_string) {
                    if ((rc = begin_candidate(x))) return rc;
                    run = ++i;
                    continue;
                }
                x->close_len = 0;
                x->held = HELD_NONE;
                *used = i + 1;
                x->state = ST_TEXT;
                return aw__extract_close(x);
            }
            if (m == OPENED) {
                *used = i; /* c ends the new tag's name: the opening-tag scanner sees it */
                return tag_opens_inside(x);
            }
            if (m == GO_ON) i++;
            run = i;
            continue;
        }
        if (x->cdata == 1) {
            /* inside CDATA: raw text up to "]]>" */
            if (c == ']') {
                FLUSH_RUN();
                if (x->cdata_br == 2 && (rc = aw__x_add_payload(x, "]", 1))) return rc;
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
                if ((rc = aw__x_add_payload(x, "]]", x->cdata_br))) return rc;
                x->cdata_br = 0;
            }
            i++;
            continue;
        }
        if (x->in_string) {
            if (x->escaped) {
                x->escaped = 0;
            } else if (c == '\\') {
                x->escaped = 1;
            } else if (c == '"') {
                x->in_string = 0;
                if (x->cand) x->cand = 2; /* the next non-blank byte decides */
            } else if (c == '<') {
                /* perhaps the closing tag, inside the string */
                FLUSH_RUN();
                x->close_buf[0] = '<';
                x->close_len = 1;
                x->held = HELD_LT;
                run = ++i;
                continue;
            } else {
                /* skip to the next byte that matters in a string */
                while (i + 1 < n && p[i + 1] != '"' && p[i + 1] != '\\' && p[i + 1] != '<') i++;
            }
            i++;
            continue;
        }
        if (x->cand == 2 && !aw__x_is_space(c)) {
            /* the string that held a closing tag ended; c decides */
            FLUSH_RUN();
            if (within_lookback(x) && c != ',' && c != ':' && c != '}' && c != ']') {
                *used = i; /* c is the first byte of the rest */
                return cut_at_candidate(x);
            }
            if ((rc = release_candidate(x))) return rc;
        }
        if (c == '<') {
            FLUSH_RUN();
            x->close_buf[0] = '<';
            x->close_len = 1;
            x->held = HELD_LT;
            run = ++i;
            continue;
        }
        if (!x->seen_content && !aw__x_is_space(c)) {
            x->seen_content = 1;
            /* a JSON payload: track its strings, so that a closing tag
             * inside one is not taken for the end at once */
            if (x->tag.json_payload && (c == '{' || c == '[')) x->json_tracking = 1;
        }
        if (x->json_tracking || !x->seen_content) {
            /* byte by byte while the kind of payload is not known yet */
            if (x->json_tracking && c == '"') {
                x->in_string = 1;
                x->str_start = x->payload.len + (i - run);
            }
            i++;
            continue;
        }
        /* plain payload: jump to the next '<' */
        const char *lt = memchr(p + i, '<', n - i);
        i = lt ? (size_t)(lt - p) : n;
    }
    FLUSH_RUN();
#undef FLUSH_RUN
    /* past the look-back nothing can make the candidate the end: report
     * what was held back */
    if (x->cand && !within_lookback(x) && (rc = release_candidate(x))) return rc;
    *used = n;
    return 0;
}

int aw__extract_end_payload(aw_extractor *x, const char *stop_reason) {
    /* held bytes of a would-be closing tag or CDATA opener are payload */
    int rc = 0;
    if (x->held == HELD_CDATA) rc = aw__x_add_payload(x, cdata_open, x->close_len);
    else if (x->held) rc = aw__x_add_payload(x, x->close_buf, x->close_len);
    if (!rc && x->cdata_br) rc = aw__x_add_payload(x, "]]", x->cdata_br);
    x->close_len = 0;
    x->held = HELD_NONE;
    x->cdata_br = 0;
    if (rc) return rc;
    if (x->cand) {
        /* the reply ended before the JSON went on: the closing tag was the end */
        if (within_lookback(x)) return cut_at_candidate(x);
        if ((rc = release_candidate(x))) return rc;
    }
    x->state = ST_TEXT;
    return aw__extract_unclosed(x, stop_reason);
}
