/* Recovering the calls a reply wrote in other dialects (issue 18): a
 * filter between the tag scanner's visible text (AW_X_TEXT) and the
 * caller.
 *
 * The filter passes text on as it comes, except what may still turn out
 * to be a call: from a reader's trigger on (src/internal/dialect.h), the
 * bytes are held until the reader decides where the candidate ends; a
 * candidate that holds calls never reaches the visible text, one that
 * holds none is released as text. It keeps the Markdown context that
 * decides whether a trigger counts: inside an inline code span or a fence
 * of another language nothing is a call, and a ```json fence is the
 * fenced dialect's candidate as a whole.
 *
 * Every decision depends on the bytes only, never on where a chunk ends:
 * a decision that needs bytes not yet seen waits for them (or for the end
 * of the reply), so the events are the same for every chunking. The text
 * scan looks at each byte once, but for the bytes of a candidate that
 * turned out to be none, which it looks at again; each candidate is
 * scanned incrementally by its reader; and the bytes candidates scan in
 * all are bounded by a multiple of the reply's length (beyond it no new
 * candidate starts), which bounds the looking again too: the time stays
 * linear even when unclosed candidates overlap.
 *
 * A tag of our own (anything the tag scanner reports besides text) ends
 * the text before it: what is held is settled first, as at the end of the
 * reply, so events keep their order. */
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal/dialect.h"
#include "internal/errors.h"
#include "internal/transport_extract.h"

enum { M_TEXT = 0, M_CAND, M_FENCE };

/* Candidates may scan this many bytes per byte of reply, plus a start. */
#define SCAN_BUDGET_FACTOR 8
#define SCAN_BUDGET_BASE 65536

typedef struct aw_recover aw_recover;
struct aw_recover {
    aw_buf buf;        /* text not yet passed on; buf[0..done) is passed on */
    size_t done;
    size_t pos;        /* next byte to examine */
    size_t base;       /* reply offset of buf[0] (for the scan budget) */
    size_t spent;      /* bytes examined by candidates so far */
    int mode;
    int line_start;    /* pos is at the start of a line */
    int span;          /* backticks of the open inline code span, 0 when none */
    /* a fence */
    char fence_char;
    size_t fence_len;
    int fence_json;    /* a ```json (or bare) fence, read by the fenced dialect */
    size_t fence_start, fence_body;
    /* a candidate */
    const aw_dialect *reader;
    const aw_dialect_trigger *opener; /* the marker it began with, NULL for a shape */
    aw_dialect_scan st;
    size_t cand;
    size_t cand_len;   /* once its end is known; 0 before */
    unsigned enabled;
    const struct aw_recover_index *ix;
};

/* What the text scan looks for, made once per session: the marker
 * triggers of the enabled readers, which second bytes (after '<' or '[')
 * may begin one, so that most '<' in prose are decided by one lookup, and
 * which bytes a line must start with for a line-start rule to look. */
struct aw_recover_index {
    struct marker {
        const aw_dialect_trigger *t;
        const aw_dialect *d;
    } markers[32];
    size_t marker_count;
    unsigned char second[2][256];
    const aw_dialect *shapes[4]; /* enabled readers with line-start shapes */
    size_t shape_count;
    unsigned char line_first[256];
};
typedef struct aw_recover_index aw_recover_index;

/* ---- passing text on --------------------------------------------------------- */

static int pass_text(aw_extractor *x, const char *p, size_t n) {
    if (!n) return 0;
    aw_x_event ev = {AW_X_TEXT, {p, n}, AW__X_NO_TEXT, AW__X_NO_TEXT, NULL, NULL, NULL};
    return aw__x_emit(x, &ev);
}

static int pass_to(aw_extractor *x, aw_recover *r, size_t k) {
    int rc = 0;
    if (k > r->done) rc = pass_text(x, r->buf.data + r->done, k - r->done);
    if (k > r->done) r->done = k;
    return rc;
}

/* Drop what was passed on, so the buffer holds only what is undecided. */
static void compact(aw_recover *r) {
    if (r->done == r->buf.len) {
        r->base += r->done;
        r->pos -= r->done;
        r->buf.len = 0;
        r->done = 0;
        return;
    }
    if (r->done < 4096 || r->done < r->buf.len / 2) return;
    size_t d = r->done;
    memmove(r->buf.data, r->buf.data + d, r->buf.len - d);
    r->buf.len -= d;
    r->buf.data[r->buf.len] = '\0';
    r->base += d;
    r->done = 0;
    r->pos -= d;
    r->cand -= r->cand >= d ? d : r->cand;
    r->fence_start -= r->fence_start >= d ? d : r->fence_start;
    r->fence_body -= r->fence_body >= d ? d : r->fence_body;
}

/* ---- what readers report ------------------------------------------------------------ */

typedef struct out_ctx {
    aw_dialect_out out;
    aw_extractor *x;
} out_ctx;

static const aw_tool_def *out_tool(aw_dialect_out *o, aw_text name) {
    out_ctx *c = (out_ctx *)o;
    return aw__transport_tool(c->x->t, name.ptr, name.len);
}

static int out_malformed(aw_dialect_out *o, const char *dialect, aw_text name, aw_reject_reason reason,
                         const char *message) {
    out_ctx *c = (out_ctx *)o;
    (void)dialect;
    return aw__extract_reject(c->x, AW__X_NO_TEXT, name, reason, message);
}

static int out_call(aw_dialect_out *o, const char *dialect, aw_text name, const aw_json_value *args, aw_text raw,
                    unsigned repairs) {
    out_ctx *c = (out_ctx *)o;
    aw_extractor *x = c->x;
    if (!aw__transport_tool(x->t, name.ptr, name.len)) {
        char msg[200];
        snprintf(msg, sizeof msg, "Tool `%.*s` is not available; call one of the declared tools.",
                 (int)(name.len > 64 ? 64 : name.len), name.ptr);
        return out_malformed(o, dialect, name, AW_REJECT_TOOL_NOT_ALLOWED, msg);
    }
    aw_json_doc *empty = NULL;
    if (!args && !(args = aw__dialect_new_args(x->alloc, &empty))) return AW_ENOMEM;
    /* the accept path every call takes, so what checks calls checks these */
    x->emit_dialect = dialect;
    int rc = aw__extract_emit_call(x, AW__X_NO_TEXT, name, args, raw,
                                   x->t->mode == AW_TRANSPORT_XML ? dialect : "recovered", repairs);
    x->emit_dialect = NULL;
    aw_json_doc_free(empty);
    return rc;
}

/* Read a complete candidate: 0 when it was read (its markup is hidden), 1
 * when it is text after all, or a negative code. */
static int read_candidate(aw_extractor *x, const aw_dialect *d, const char *p, size_t n) {
    out_ctx c = {{out_call, out_malformed, out_tool, x->alloc, x->rec->enabled}, x};
    int rc = d->parse(p, n, &c.out);
    return rc == AW_DIALECT_NOT_A_CALL ? 1 : rc;
}

/* ---- the Markdown context and triggers ---------------------------------------------- */

static int within_budget(const aw_recover *r, size_t at) {
    return r->spent <= SCAN_BUDGET_FACTOR * (r->base + at) + SCAN_BUDGET_BASE;
}

/* The triggers of the enabled readers, for the text scan. */
static void index_triggers(aw_recover_index *r, unsigned enabled) {
    static const char always[] = " \t\r\n`~"; /* blank lines, indents, fences */
    for (const char *c = always; *c; c++) r->line_first[(unsigned char)*c] = 1;
    for (size_t i = 0; i < aw__dialect_count; i++) {
        const aw_dialect *d = aw__dialects[i];
        if (!(d->flags & enabled)) continue;
        if (d->starts && r->shape_count < sizeof r->shapes / sizeof r->shapes[0]) {
            r->shapes[r->shape_count++] = d;
            for (const char *c = d->line_first; c && *c; c++) r->line_first[(unsigned char)*c] = 1;
        }
        for (size_t k = 0; k < d->trigger_count; k++) {
            const aw_dialect_trigger *t = &d->triggers[k];
            if (t->where != AW_DT_ANYWHERE || r->marker_count == sizeof r->markers / sizeof r->markers[0]) continue;
            r->markers[r->marker_count].t = t;
            r->markers[r->marker_count++].d = d;
            r->second[t->text[0] == '['][(unsigned char)t->text[1]] = 1;
        }
    }
}

/* A marker trigger at p[0] ('<' or '['): its reader, or NULL; *partial
 * when p[0..n) is the start of one and more bytes could complete it. */
static const aw_dialect *marker_at(const aw_recover_index *r, const char *p, size_t n, int *partial,
                                   const aw_dialect_trigger **which) {
    *partial = 0;
    if (n < 2) {
        *partial = 1; /* every trigger is longer than one byte */
        return NULL;
    }
    if (!r->second[p[0] == '['][(unsigned char)p[1]]) return NULL;
    for (size_t i = 0; i < r->marker_count; i++) {
        const aw_dialect_trigger *t = r->markers[i].t;
        size_t m = n < t->len ? n : t->len;
        if (!aw__dialect_eq(p, t->text, m)) continue;
        if (m == t->len) {
            *which = t;
            return r->markers[i].d;
        }
        *partial = 1;
    }
    return NULL;
}

/* A reader whose shape starts a candidate at p[0], a line start. 1 and
 * *out, 0, or -1 when more bytes are needed. */
static int shape_at(const aw_recover_index *r, const char *p, size_t n, int at_end, const aw_dialect **out) {
    int wait = 0;
    for (size_t i = 0; i < r->shape_count; i++) {
        int k = r->shapes[i]->starts(p, n, at_end);
        if (k > 0) {
            if (wait) return -1; /* an earlier reader may still claim it */
            *out = r->shapes[i];
            return 1;
        }
        if (k < 0) wait = 1;
    }
    return wait ? -1 : 0;
}

static void begin_candidate(aw_recover *r, const aw_dialect *d, const aw_dialect_trigger *opener, size_t at) {
    r->mode = M_CAND;
    r->reader = d;
    r->opener = opener;
    memset(&r->st, 0, sizeof r->st);
    r->cand = at;
    r->cand_len = 0;
}

/* The line that starts at i: blank (it ends an inline code span), a fence
 * opening, or a shape that starts a candidate. 0 to go on scanning the
 * line, 1 to wait for more bytes, 2 when the mode changed. */
static int line_start(aw_recover *r, const char *p, size_t n, size_t i, int at_end) {
    size_t k = i, indent = 0;
    while (k < n && (p[k] == ' ' || p[k] == '\t')) k++, indent++;
    if (k >= n) return at_end ? 0 : 1;
    if (p[k] == '\n' || p[k] == '\r') {
        r->span = 0;
        return 0;
    }
    char fc = p[k];
    if (indent <= 3 && (fc == '`' || fc == '~')) {
        size_t run = 0;
        while (k + run < n && p[k + run] == fc) run++;
        if (k + run >= n && !at_end) return 1;
        if (run >= 3) {
            const char *nl = memchr(p + k + run, '\n', n - k - run);
            if (!nl && !at_end) return 1;
            size_t end = nl ? (size_t)(nl - p) : n;
            aw_text info = aw__dialect_trim(p + k + run, end - k - run);
            if (fc == '`' && memchr(info.ptr, '`', info.len)) return 0; /* inline code, not a fence */
            size_t w = 0;
            while (w < info.len && !aw__dialect_is_space((unsigned char)info.ptr[w])) w++;
            int json = w == 0 || (w == 4 && !strncmp(info.ptr, "json", 4)) ||
                       (w == 4 && !strncmp(info.ptr, "JSON", 4)) || (w == 5 && !strncmp(info.ptr, "jsonc", 5)) ||
                       (w == 5 && !strncmp(info.ptr, "json5", 5));
            r->mode = M_FENCE;
            r->fence_char = fc;
            r->fence_len = run;
            r->fence_json = json && (r->enabled & AW_DIALECT_FENCED);
            r->fence_start = i;
            r->fence_body = nl ? end + 1 : n;
            r->span = 0;
            r->pos = r->fence_body;
            r->line_start = 1;
            return 2;
        }
    }
    if (r->span || !within_budget(r, k)) return 0;
    const aw_dialect *d = NULL;
    int s = shape_at(r->ix, p + k, n - k, at_end, &d);
    if (s < 0) return 1;
    if (s > 0) {
        begin_candidate(r, d, NULL, k);
        return 2;
    }
    return 0;
}

/* The bytes the text scan stops at: everything else passes. Prose is
 * mostly bytes that pass, so they are skipped 16 at a time. */
static const unsigned char stops[256] = {['<'] = 1, ['['] = 1, ['`'] = 1, ['\n'] = 1};

static size_t next_stop(const char *p, size_t n, size_t i) {
#if defined(__SSE2__)
    const __m128i lt = _mm_set1_epi8('<'), br = _mm_set1_epi8('['), bt = _mm_set1_epi8('`'), nl = _mm_set1_epi8('\n');
    while (i + 16 <= n) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v, br)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v, bt), _mm_cmpeq_epi8(v, nl)));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask) return i + (size_t)__builtin_ctz(mask);
        i += 16;
    }
#endif
    const unsigned char *u = (const unsigned char *)p;
    while (i < n && !stops[u[i]]) i++;
    return i;
}

/* Text: examine from r->pos. 0 when all of it was examined, 1 to wait for
 * more bytes, 2 when the mode changed. Text before r->pos is passed on by
 * the caller. */
static int step_text(aw_recover *r, const char *p, size_t n, int at_end) {
    size_t i = r->pos;
    for (;;) {
        if (r->line_start) {
            int k = line_start(r, p, n, i, at_end);
            if (k) {
                if (k == 1) r->pos = i;
                return k;
            }
            r->line_start = 0;
        }
        i = next_stop(p, n, i);
        if (i >= n) {
            r->pos = n;
            return 0;
        }
        char c = p[i];
        if (c == '\n') {
            /* most lines start with a byte no line-start rule cares about */
            i++;
            r->line_start = i >= n || r->ix->line_first[(unsigned char)p[i]];
            continue;
        }
        if (c == '`') {
            size_t run = 1;
            while (i + run < n && p[i + run] == '`') run++;
            if (i + run >= n && !at_end) {
                r->pos = i;
                return 1;
            }
            if (!r->span) r->span = (int)run;
            else if ((size_t)r->span == run) r->span = 0;
            i += run;
            continue;
        }
        if (!r->span && within_budget(r, i)) {
            int partial;
            const aw_dialect_trigger *t = NULL;
            const aw_dialect *d = marker_at(r->ix, p + i, n - i, &partial, &t);
            if (d) {
                begin_candidate(r, d, t, i);
                r->pos = i;
                return 2;
            }
            if (partial && !at_end) {
                r->pos = i;
                return 1;
            }
        }
        i++;
    }
}

/* ---- candidates ------------------------------------------------------------------ */

/* Does prose follow the candidate that ends at `end`, on its line? 1 yes,
 * 0 no, -1 when the next bytes are not here yet. */
static int prose_follows(const char *p, size_t n, size_t end, int at_end) {
    size_t k = end;
    while (k < n && (p[k] == ' ' || p[k] == '\t')) k++;
    if (k >= n) return at_end ? 0 : -1;
    char c = p[k];
    return !(c == '\n' || c == '\r' || c == '<' || c == '[' || c == '{');
}

/* The candidate was no call: the text scan goes on at `resume` (after its
 * first byte; after all of it for a mention, whose inner markup is part
 * of the mention). */
static void not_a_candidate(aw_recover *r, size_t resume) {
    r->mode = M_TEXT;
    r->pos = resume;
    r->line_start = 0;
}

/* A candidate that was never closed (it ran to the end of the text, or
 * its reader saw a new call begin) ends where a call in another dialect,
 * or a new one opened as it was, begins: the markup of its own dialect,
 * and of the one it holds, is its content, but nothing unclosed swallows
 * the calls after it. A closed candidate keeps all it holds (a file
 * written by a tool may well show another dialect's markup). Looked for
 * once, up to the cut. */
static size_t unclosed_end(const aw_recover *r, const char *p, size_t n) {
    for (size_t i = r->opener ? r->opener->len : 1; i < n; i++) {
        if (p[i] == '\n') {
            /* after a blank line, a call in a shape (bare JSON, pythonic)
             * is a new call too: a value's lines are not separated so */
            size_t k = i + 1;
            while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r')) k++;
            if (k >= n || p[k] != '\n') continue;
            while (k < n && aw__dialect_is_space((unsigned char)p[k])) k++;
            const aw_dialect *d = NULL;
            if (k < n && shape_at(r->ix, p + k, n - k, 1, &d) > 0) return k;
            continue;
        }
        if (p[i] != '<' && p[i] != '[') continue;
        int partial;
        const aw_dialect_trigger *t = NULL;
        const aw_dialect *d = marker_at(r->ix, p + i, n - i, &partial, &t);
        if (!d || d == r->reader->inner) continue;
        if (d == r->reader && t != r->opener) continue;
        return i;
    }
    return n;
}

static int step_candidate(aw_extractor *x, aw_recover *r, int at_end) {
    const char *p = r->buf.data + r->cand;
    size_t n = r->buf.len - r->cand;
    if (!r->cand_len) {
        size_t before = r->st.pos;
        long len = r->reader->scan(&r->st, p, n, at_end);
        r->spent += r->st.pos > before ? r->st.pos - before : 0;
        if (len == AW_DIALECT_MORE) return 1;
        if (len == AW_DIALECT_NONE) {
            not_a_candidate(r, r->cand + 1);
            return 2;
        }
        r->cand_len = (size_t)len;
        if (r->st.unclosed || (at_end && r->cand_len == n)) {
            r->cand_len = unclosed_end(r, p, r->cand_len);
            r->spent += r->cand_len;
        }
    }
    if (r->reader->mention_rule) {
        int prose = prose_follows(p, n, r->cand_len, at_end);
        if (prose < 0) return 1;
        if (prose) {
            not_a_candidate(r, r->cand + r->cand_len);
            return 2;
        }
    }
    int rc = pass_to(x, r, r->cand);
    if (rc) return rc;
    rc = read_candidate(x, r->reader, p, r->cand_len);
    if (rc < 0) return rc;
    if (rc == 1) {
        not_a_candidate(r, r->cand + 1);
        return 2;
    }
    r->done = r->pos = r->cand + r->cand_len;
    r->line_start = p[r->cand_len - 1] == '\n';
    r->mode = M_TEXT;
    return 2;
}

/* ---- fences --------------------------------------------------------------------------- */

/* Is the line at i the fence's closing line? 1 yes (*end: after its
 * marker and blanks), 0 no, -1 when more bytes are needed. */
static int closes_fence(const aw_recover *r, const char *p, size_t n, size_t i, int at_end, size_t *end) {
    size_t k = i, indent = 0;
    while (k < n && p[k] == ' ' && indent < 4) k++, indent++;
    size_t run = 0;
    while (k + run < n && p[k + run] == r->fence_char) run++;
    size_t e = k + run;
    while (e < n && (p[e] == ' ' || p[e] == '\t' || p[e] == '\r')) e++;
    if (e >= n && !at_end) return -1;
    if (indent > 3 || run < r->fence_len || (e < n && p[e] != '\n')) return 0;
    *end = e;
    return 1;
}

static int read_fence(aw_extractor *x, aw_recover *r, size_t body_end, size_t end) {
    const char *p = r->buf.data;
    int rc = 1;
    if (r->fence_json) {
        aw_text body = {p + r->fence_body, body_end > r->fence_body ? body_end - r->fence_body : 0};
        if ((rc = pass_to(x, r, r->fence_start))) return rc;
        rc = read_candidate(x, &aw__dialect_fenced, body.ptr, body.len);
        if (rc < 0) return rc;
    }
    if (rc == 0) r->done = end; /* the fence held calls: it is not shown */
    r->mode = M_TEXT;
    r->pos = end;
    r->line_start = 0;
    return 2;
}

static int step_fence(aw_extractor *x, aw_recover *r, int at_end) {
    const char *p = r->buf.data;
    size_t n = r->buf.len;
    size_t i = r->pos;
    for (;;) {
        if (r->line_start) {
            size_t end;
            int k = closes_fence(r, p, n, i, at_end, &end);
            if (k < 0) {
                r->pos = i;
                return 1;
            }
            if (k > 0) return read_fence(x, r, i, end);
            r->line_start = 0;
        }
        const char *nl = i < n ? memchr(p + i, '\n', n - i) : NULL;
        if (!nl) {
            r->pos = n;
            if (at_end) return read_fence(x, r, n, n);
            return 1;
        }
        i = (size_t)(nl - p) + 1;
        r->pos = i;
        r->line_start = 1;
    }
}

/* ---- driving -------------------------------------------------------------------------- */

/* What is decided and may be passed on: everything before the byte the
 * current mode is looking at (text), the candidate (held), the fence
 * (held when it is the fenced dialect's, else up to the line whose end
 * is being looked for). */
static size_t decided(const aw_recover *r) {
    if (r->mode == M_CAND) return r->cand;
    if (r->mode == M_FENCE) return r->fence_json ? r->fence_start : r->pos;
    return r->pos;
}

/* Run the modes over the buffer until one waits for more bytes (at the
 * end, until everything is decided), passing on what is decided. */
static int run(aw_extractor *x, aw_recover *r, int at_end) {
    for (;;) {
        int k = r->mode == M_TEXT   ? step_text(r, r->buf.data, r->buf.len, at_end)
                : r->mode == M_CAND ? step_candidate(x, r, at_end)
                                    : step_fence(x, r, at_end);
        if (k < 0) return k;
        int rc = pass_to(x, r, decided(r));
        if (rc) return rc;
        if (k != 2) break;
    }
    if (at_end) {
        int rc = pass_to(x, r, r->buf.len);
        if (rc) return rc;
    }
    compact(r);
    return 0;
}

int aw__recover_index_new(aw_transport *t) {
    if (!t->dialects) return 0;
    aw_recover_index *ix = aw_malloc(t->alloc, sizeof *ix);
    if (!ix) return AW_ENOMEM;
    memset(ix, 0, sizeof *ix);
    index_triggers(ix, t->dialects);
    t->rec_index = ix;
    return 0;
}

void aw__recover_index_free(aw_transport *t) {
    aw_free(t->alloc, t->rec_index);
    t->rec_index = NULL;
}

int aw__recover_new(aw_extractor *x) {
    if (!x->t->dialects) return 0;
    aw_recover *r = aw_malloc(x->alloc, sizeof *r);
    if (!r) return AW_ENOMEM;
    memset(r, 0, sizeof *r);
    aw_buf_init(&r->buf, x->alloc);
    r->line_start = 1;
    r->enabled = x->t->dialects;
    r->ix = x->t->rec_index;
    x->rec = r;
    return 0;
}

void aw__recover_free(aw_extractor *x) {
    if (!x->rec) return;
    aw_buf_free(&x->rec->buf);
    aw_free(x->alloc, x->rec);
    x->rec = NULL;
}

/* With nothing held, a chunk is examined where it lies: what is decided
 * is passed on from there, and only the rest is copied. Positions are
 * the same either way, so the decisions are too. */
static int text_in_place(aw_extractor *x, aw_recover *r, const char *p, size_t n) {
    r->pos = 0;
    int k = step_text(r, p, n, 0);
    if (k < 0) return k;
    size_t upto = decided(r);
    int rc = pass_text(x, p, upto);
    if (rc) return rc;
    r->base += upto;
    if (upto == n) {
        r->pos = 0;
        return 0;
    }
    if (aw_buf_append(&r->buf, p + upto, n - upto)) return AW_ENOMEM;
    r->pos -= upto;
    r->cand -= r->cand >= upto ? upto : r->cand;
    r->fence_start -= r->fence_start >= upto ? upto : r->fence_start;
    r->fence_body -= r->fence_body >= upto ? upto : r->fence_body;
    r->done = 0;
    return run(x, r, 0);
}

int aw__recover_text(aw_extractor *x, const char *p, size_t n) {
    aw_recover *r = x->rec;
    if (x->stopped) return AW_ESTOP;
    x->rec_busy = 1;
    int rc;
    if (!r->buf.len && r->mode == M_TEXT) {
        rc = text_in_place(x, r, p, n);
    } else {
        rc = aw_buf_append(&r->buf, p, n) ? AW_ENOMEM : run(x, r, 0);
    }
    x->rec_busy = 0;
    return rc;
}

int aw__recover_settle(aw_extractor *x) {
    aw_recover *r = x->rec;
    if (!r || x->rec_busy || r->done == r->buf.len) return 0;
    x->rec_busy = 1;
    int rc = run(x, r, 1);
    x->rec_busy = 0;
    return rc;
}

size_t aw__recover_scanned(const aw_extractor *x) { return x->rec ? x->rec->spent : 0; }
