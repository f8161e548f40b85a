/* aw_messages_encode_json: messages encoded from their JSON text with
 * memory for a few messages, not for the whole input and output.
 *
 * A history is one JSON array, often tens of megabytes; parsing it into
 * one document and writing the thread into one buffer holds both, about
 * three times the input, and spends much of the time in page faults. Here
 * the array's items are found one at a time by a skim that follows only
 * strings and brackets, and each item is parsed by the strict reader on
 * its own, so every byte is still checked; between items only white space
 * and commas may stand. The items are found once, then walked:
 *   1. until one tells, the shape (AUTO only; usually the first item);
 *   2. every item read into the normalized list, for the call id -> tool
 *      name map the XML needs (a result may come before its call) and so
 *      that every error is found before anything is written;
 *   3. every item read again and written, the output handed to the
 *      caller's function in blocks of about 256 KB.
 * Memory: one item's document and list, the names and one block. A root
 * that is not an array (an Anthropic request object) goes
 * the whole-document way. */
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/messages.h"

#define BLOCK (256u * 1024u)

typedef struct stream {
    const char *s;
    size_t n;
    const aw_messages_options *opts;
    aw_error *err;
} stream;

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* The closing quote of the string whose text starts at s[i] (n when it is
 * not closed). Most of a history is string text: 16 bytes at a time,
 * stopping only at a quote or a backslash. */
static size_t string_end(const char *s, size_t n, size_t i) {
    for (;;) {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
        while (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
            unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
            if (mask) {
                i += (unsigned)__builtin_ctz(mask);
                break;
            }
            i += 16;
        }
#endif
        while (i < n && s[i] != '"' && s[i] != '\\') i++;
        if (i >= n || s[i] == '"') return i < n ? i : n;
        i += 2; /* an escape: the backslash and what it escapes */
        if (i >= n) return n;
    }
}

/* The end of the item starting at s[i]: after its closing bracket or quote,
 * or at the first delimiter of a scalar. Only strings and brackets are
 * followed; the reader checks the rest. */
static size_t item_end(const char *s, size_t n, size_t i) {
    size_t depth = 0;
    while (i < n) {
        char c = s[i];
        if (c == '"') {
            i = string_end(s, n, i + 1) + 1;
            if (depth == 0) return i > n ? n : i;
            continue;
        }
        if (c == '[' || c == '{') depth++;
        else if (c == ']' || c == '}') {
            if (depth == 0) return i; /* a scalar ended by the array's end */
            if (--depth == 0) return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            return i;
        }
        i++;
    }
    return n;
}

/* The input is not JSON. The error is the whole-text reader's, word for
 * word and place for place, as aw_json_parse would give it (the cost of a
 * second read is paid only on this path); rc, at and what are the item
 * walk's own finding, kept should the reader disagree. */
static int json_error(stream *st, int rc, size_t at, const char *what) {
    aw_json_read_options ro = {st->opts->alloc, 0, false};
    aw_json_doc *doc = NULL;
    aw_error whole;
    int wrc = aw_json_parse(st->s, st->n, &ro, &doc, &whole);
    aw_json_doc_free(doc);
    if (wrc == AW_ENOMEM) return aw__error_set(st->err, AW_ENOMEM, "out of memory");
    if (wrc) {
        if (st->err) *st->err = whole;
        return wrc;
    }
    return aw__error_at(st->err, rc, st->s, st->n, at, "%s", what);
}

/* Where each item of the root array lies, found once by the skim. */
typedef struct span {
    size_t at, end;
} span;

typedef struct spans {
    span *v;
    size_t count, cap;
} spans;

/* The spans of the root array's items, its syntax between them checked. */
static int find_items(stream *st, spans *sp) {
    const char *s = st->s;
    size_t n = st->n, i = skip_ws(s, n, skip_ws(s, n, 0) + 1); /* past the '[' */
    if (i < n && s[i] == ']') goto end;
    for (;;) {
        if (sp->count == sp->cap) {
            size_t cap = sp->cap ? sp->cap * 2 : 256;
            span *v = aw_realloc(st->opts->alloc, sp->v, cap * sizeof *v);
            if (!v) return aw__error_set(st->err, AW_ENOMEM, "out of memory");
            sp->v = v;
            sp->cap = cap;
        }
        size_t end = item_end(s, n, i);
        sp->v[sp->count++] = (span){i, end};
        i = skip_ws(s, n, end);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == ']') break;
        return json_error(st, AW_ESYNTAX, i, "expected ',' or ']' after an array element");
    }
end:
    if (skip_ws(s, n, i + 1) != n) return json_error(st, AW_ESYNTAX, skip_ws(s, n, i + 1), "unexpected text");
    return 0;
}

typedef int (*item_fn)(void *ctx, const aw_json_value *item, size_t index, size_t at);

/* Each item, parsed, to fn; stops when fn returns nonzero (1: done, < 0:
 * an error set). */
static int each_item(stream *st, const spans *sp, item_fn fn, void *ctx) {
    aw_json_read_options ro = {st->opts->alloc, AW_JSON_DEFAULT_MAX_DEPTH - 1, false};
    for (size_t index = 0; index < sp->count; index++) {
        size_t at = sp->v[index].at;
        aw_json_doc *doc = NULL;
        aw_error sub;
        int rc = aw_json_parse(st->s + at, sp->v[index].end - at, &ro, &doc, &sub);
        if (rc == AW_ENOMEM) return aw__error_set(st->err, AW_ENOMEM, "out of memory");
        if (rc) return json_error(st, rc, at + sub.offset, sub.message);
        rc = fn(ctx, aw_json_doc_root(doc), index, at);
        aw_json_doc_free(doc);
        if (rc) return rc < 0 ? rc : 0;
    }
    return 0;
}

/* ---- the walks -------------------------------------------------------------- */

typedef struct walk {
    stream *st;
    aw_messages_format fmt;
    aw__msg_list list;
    aw__msg_xml xml;
    aw_buf out;
    size_t written; /* text form: messages written */
    aw_messages_write_fn write;
    void *ctx;
    size_t items;
    int failed;        /* the first message error of the learning walk, */
    aw_error first;    /* reported only once the whole input is known JSON */
} walk;

static int detect_item(void *ctx, const aw_json_value *item, size_t index, size_t at) {
    (void)index;
    (void)at;
    walk *w = ctx;
    w->fmt = aw__msg_detect_one(item);
    return w->fmt != AW_MESSAGES_AUTO;
}

/* The item as a one-item array, read into the cleared list; a message
 * error is placed where the item starts. */
static int read_item(walk *w, const aw_json_value *item, size_t index, size_t at) {
    aw_json_value one;
    memset(&one, 0, sizeof one);
    one.type = AW_JSON_ARRAY;
    one.u.arr.items = (aw_json_value *)item;
    one.u.arr.count = one.u.arr.cap = 1;
    aw__msg_list_clear(&w->list);
    w->list.base = index;
    int rc = w->fmt == AW_MESSAGES_ANTHROPIC   ? aw__msg_read_anthropic(&w->list, &one, w->st->err)
             : w->fmt == AW_MESSAGES_LANGCHAIN ? aw__msg_read_langchain(&w->list, &one, w->st->err)
                                               : aw__msg_read_openai(&w->list, &one, w->st->err);
    if (rc && rc != AW_ENOMEM) {
        aw_error *e = w->st->err;
        if (e) aw__error_locate(e, w->st->s, w->st->n, at);
    }
    return rc;
}

static int learn_item(void *ctx, const aw_json_value *item, size_t index, size_t at) {
    walk *w = ctx;
    w->items++;
    if (w->failed) return 0; /* only the JSON is checked now */
    int rc = read_item(w, item, index, at);
    /* the reference's pass-through, when this is the only item: one user
     * message that already is a thread, kept (its text lives in this
     * item's document only) until the walk tells whether more follow */
    const aw__msg *m = w->list.count ? &w->list.items[0] : NULL;
    if (!rc && index == 0 && w->st->opts->encoding == AW_MESSAGES_XML && w->list.count == 1 &&
        m->role == AW__MSG_USER && aw__msg_is_thread(m->text, NULL))
        rc = aw__msg_write_xml(&w->list, w->st->opts, &w->out, w->st->err);
    if (!rc && w->st->opts->encoding == AW_MESSAGES_XML && aw__msg_xml_names(&w->xml, &w->list, true))
        rc = aw__error_set(w->st->err, AW_ENOMEM, "out of memory");
    if (rc && rc != AW_ENOMEM) { /* a JSON error further on comes first, as in aw_json_parse + encode */
        if (!w->failed && w->st->err) w->first = *w->st->err;
        if (!w->failed) w->failed = rc;
        rc = 0;
    }
    return rc;
}

static int hand_over(walk *w) {
    if (w->out.len && w->write(w->ctx, w->out.data, w->out.len))
        return aw__error_set(w->st->err, AW_ESTOP, "the output was refused");
    aw_buf_clear(&w->out);
    return 0;
}

static int write_item(void *ctx, const aw_json_value *item, size_t index, size_t at) {
    walk *w = ctx;
    int rc = read_item(w, item, index, at);
    if (!rc)
        rc = w->st->opts->encoding == AW_MESSAGES_TEXT
                 ? aw__msg_text_blocks(&w->list, w->st->opts, &w->written, &w->out, w->st->err)
                 : aw__msg_xml_lines(&w->xml, &w->list, w->st->err);
    if (!rc && w->out.len >= BLOCK) rc = hand_over(w);
    return rc;
}

/* ---- the whole-document way ------------------------------------------------- */

/* Where item k of the root object's "messages" array starts (n if not). */
static size_t messages_item(const char *s, size_t n, size_t k) {
    size_t i = skip_ws(s, n, skip_ws(s, n, 0) + 1);
    while (i < n && s[i] == '"') { /* a member: key, ':', value */
        size_t key_end = item_end(s, n, i);
        bool is_messages = key_end - i == 10 && memcmp(s + i, "\"messages\"", 10) == 0;
        i = skip_ws(s, n, skip_ws(s, n, key_end) + 1);
        if (is_messages && i < n && s[i] == '[') {
            i = skip_ws(s, n, i + 1);
            for (size_t item = 0; i < n && s[i] != ']'; item++) {
                if (item == k) return i;
                i = skip_ws(s, n, item_end(s, n, i));
                if (i < n && s[i] == ',') i = skip_ws(s, n, i + 1);
            }
            return n;
        }
        i = skip_ws(s, n, item_end(s, n, i));
        if (i < n && s[i] == ',') i = skip_ws(s, n, i + 1);
    }
    return n;
}

/* A root that is not an array: an Anthropic request object, parsed whole
 * (its "system" comes first); an error about a message is placed where it
 * starts. */
static int whole(stream *st, aw_messages_write_fn write, void *ctx) {
    aw_json_read_options ro = {st->opts->alloc, 0, false};
    aw_json_doc *doc = NULL;
    int rc = aw_json_parse(st->s, st->n, &ro, &doc, st->err);
    if (rc) return rc;
    const aw_json_value *root = aw_json_doc_root(doc);
    aw_messages_format fmt = st->opts->format;
    if (fmt == AW_MESSAGES_AUTO) fmt = aw_messages_detect(root);
    if (fmt == AW_MESSAGES_AUTO) fmt = AW_MESSAGES_OPENAI;
    aw__msg_list l;
    aw__msg_list_init(&l, st->opts->alloc);
    l.reading = (size_t)-1;
    aw_buf out;
    aw_buf_init(&out, st->opts->alloc);
    rc = aw__msg_read(&l, root, fmt, st->err);
    if (rc && rc != AW_ENOMEM && l.reading != (size_t)-1 && st->err) {
        size_t at = messages_item(st->s, st->n, l.reading);
        if (at < st->n) aw__error_locate(st->err, st->s, st->n, at);
    }
    if (!rc)
        rc = st->opts->encoding == AW_MESSAGES_TEXT ? aw__msg_write_text(&l, st->opts, &out, st->err)
                                                    : aw__msg_write_xml(&l, st->opts, &out, st->err);
    if (!rc && out.len && write(ctx, out.data, out.len)) rc = aw__error_set(st->err, AW_ESTOP, "the output was refused");
    aw__msg_list_free(&l);
    aw_buf_free(&out);
    aw_json_doc_free(doc);
    return rc;
}

int aw_messages_encode_json(const char *json, size_t len, const aw_messages_options *opts,
                            aw_messages_write_fn write, void *ctx, aw_error *err) {
    static const aw_messages_options defaults = {AW_MESSAGES_AUTO, AW_MESSAGES_XML, false, NULL};
    if ((!json && len) || !write) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!opts) opts = &defaults;
    if ((unsigned)opts->format > AW_MESSAGES_LANGCHAIN || (unsigned)opts->encoding > AW_MESSAGES_TEXT)
        return aw__error_set(err, AW_EINVAL, "invalid options");
    stream st = {json ? json : "", len, opts, err};
    size_t i = skip_ws(st.s, len, 0);
    if (i >= len || st.s[i] != '[') return whole(&st, write, ctx);
    walk w;
    memset(&w, 0, sizeof w);
    w.st = &st;
    w.fmt = opts->format;
    w.write = write;
    w.ctx = ctx;
    aw__msg_list_init(&w.list, opts->alloc);
    aw__msg_xml_init(&w.xml, opts, &w.out);
    aw_buf_init(&w.out, opts->alloc);
    int rc = 0;
    /* as aw_messages_encode: a list that tells nothing is read as OpenAI's */
    spans sp = {NULL, 0, 0};
    rc = find_items(&st, &sp);
    if (!rc && w.fmt == AW_MESSAGES_AUTO) rc = each_item(&st, &sp, detect_item, &w);
    if (w.fmt == AW_MESSAGES_AUTO) w.fmt = AW_MESSAGES_OPENAI;
    if (!rc) rc = each_item(&st, &sp, learn_item, &w);
    if (!rc && w.failed) {
        if (err) *err = w.first;
        rc = w.failed;
    }
    if (!rc && w.items == 1 && w.out.len) { /* the pass-through, kept by learn_item */
        rc = hand_over(&w);
        goto done;
    }
    aw_buf_clear(&w.out);
    if (!rc && opts->encoding == AW_MESSAGES_XML && aw_buf_append(&w.out, "<thread>", 8))
        rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) rc = each_item(&st, &sp, write_item, &w);
    if (!rc && opts->encoding == AW_MESSAGES_XML && aw_buf_append(&w.out, "\n</thread>", 10))
        rc = aw__error_set(err, AW_ENOMEM, "out of memory");
    if (!rc) rc = hand_over(&w);
done:
    aw_free(opts->alloc, sp.v);
    aw__msg_xml_free(&w.xml);
    aw__msg_list_free(&w.list);
    aw_buf_free(&w.out);
    return rc;
}
