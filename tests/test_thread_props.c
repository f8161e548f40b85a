/* Properties of the thread codec over random events (issue 3, "Tests"):
 *
 *  1. parse:   for events holding random bytes (invalid UTF-8, NUL, controls,
 *              markup, ANSI sequences, surrogates, U+FFFE/U+FFFF), the
 *              encoder's output always parses with expat, holds one <event>
 *              per written event, with the right type and id, and nothing
 *              deeper.
 *  2. round trip: for events holding valid UTF-8 text without characters
 *              XML forbids, decode(encode(x)) gives back x's carried fields.
 *              Accounted for, as documented in thread.h: XML end-of-line
 *              handling turns CR and CRLF in bodies into LF, attribute
 *              normalization turns tab, CR, LF and CRLF in attribute values
 *              into one space each, a numeric parallelGroup comes back as its
 *              text, a non-string result comes back as its compact JSON text,
 *              timestamp is 0, verified is false, and toolCallId is
 *              "call_<id of the paired input>" (pairing checked against the
 *              documented rule). JSON strings inside args may hold anything
 *              JSON.stringify escapes (controls, lone surrogates).
 *  3. append writer: when every tool_result follows its tool_call (and call
 *              ids are not reused), the writer's buffer equals the whole
 *              encoder's output after every append, prefill and strip-ansi
 *              included.
 *  4. what differs otherwise (documented): the writer names a result after
 *              the latest tool_call with its id seen *before* it, "unknown"
 *              when there is none; the whole encoder looks at the whole input
 *              and uses the *last* call with that id. So (a) a result that
 *              precedes its call is "unknown" in the writer's output, and
 *              (b) a result between two calls reusing one id takes the first
 *              call's name in the writer's output and the second call's in
 *              the encoder's. Checked exactly on a fixed case and as a model
 *              over random sequences.
 *  5. JSON text: aw_thread_encode_json, which encodes JSON lines as it reads
 *              them, gives the bytes of aw_event_list_parse + aw_thread_encode
 *              for the random events written as JSON lines (and as one array),
 *              calls and results in any order, ids reused, prefill and
 *              strip-ansi included.
 *
 * A seeded PRNG makes every run the same; a failure prints the seed and the
 * case number. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <expat.h>

#include "agentwire/agentwire.h"
#include "testutil.h"
#include "failalloc.h"

#define SEED 0x5EED0A3A7ULL
#define PARSE_CASES 3000
#define ROUNDTRIP_CASES 3000
#define WRITER_CASES 1500
#define MAXEV 14

/* ---- PRNG (splitmix64) ----------------------------------------------------------- */

typedef aw_test_rng rng;


/* ---- random text ---------------------------------------------------------------------- */

enum text_mode {
    TEXT_RANDOM, /* any bytes */
    TEXT_CLEAN,  /* valid UTF-8, only characters XML 1.0 allows */
    TEXT_JSON    /* CLEAN plus what JSON.stringify escapes: controls, lone surrogates */
};

static void put_cp(aw_buf *b, uint32_t cp) {
    char o[4];
    size_t n;
    if (cp < 0x80) {
        o[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        o[0] = (char)(0xF0 | (cp >> 18));
        o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    aw_buf_append(b, o, n);
}

/* A character XML 1.0 allows (other than tab/LF/CR). */
static uint32_t clean_cp(rng *r) {
    switch (aw_test_below(r, 4)) {
    case 0: return 0x20 + aw_test_below(r, 0x5F);               /* printable ASCII */
    case 1: return 0x7F + aw_test_below(r, 0xD7FF - 0x7F + 1);  /* DEL, C1, BMP below surrogates */
    case 2: return 0xE000 + aw_test_below(r, 0xFFFD - 0xE000 + 1);
    default: return 0x10000 + aw_test_below(r, 0x100000);
    }
}

static void clean_piece(rng *r, aw_buf *b) {
    static const char *const specials[] = {"&", "<", ">", "\"", "'", "]]>", "&amp;", "</event>", "<thread>",
                                           "<![CDATA[", "-->", "\xEF\xBF\xBD", "\xEF\xBF\xBC", "\xF4\x8F\xBF\xBF",
                                           "\xC2\x85", "\xE2\x80\xA8", "\xF0\x9F\x98\x80", "é", "日本"};
    static const char *const spaces[] = {"\t", "\n", "\r", "\r\n", "\n\r", " ", "  "};
    switch (aw_test_below(r, 6)) {
    case 0:
    case 1: {
        int n = 1 + (int)aw_test_below(r, 8);
        for (int i = 0; i < n; i++) aw_buf_putc(b, (char)('a' + aw_test_below(r, 26)));
        break;
    }
    case 2: aw_buf_append_str(b, specials[aw_test_below(r, sizeof specials / sizeof specials[0])]); break;
    case 3: aw_buf_append_str(b, spaces[aw_test_below(r, sizeof spaces / sizeof spaces[0])]); break;
    default: put_cp(b, clean_cp(r)); break;
    }
}

static void json_piece(rng *r, aw_buf *b) {
    switch (aw_test_below(r, 4)) {
    case 0: aw_buf_putc(b, (char)aw_test_below(r, 0x20)); break; /* controls, NUL included */
    case 1:                                              /* a lone low surrogate, as the reader keeps "\udc00" */
        aw_buf_putc(b, (char)0xED);
        aw_buf_putc(b, (char)(0xB0 + aw_test_below(r, 16)));
        aw_buf_putc(b, (char)(0x80 + aw_test_below(r, 64)));
        break;
    case 2: /* a lone high surrogate, never followed by a low one */
        aw_buf_putc(b, (char)0xED);
        aw_buf_putc(b, (char)(0xA0 + aw_test_below(r, 16)));
        aw_buf_putc(b, (char)(0x80 + aw_test_below(r, 64)));
        aw_buf_putc(b, 'x');
        break;
    default: aw_buf_append_str(b, "\x1b[31m"); break;
    }
}

static void random_piece(rng *r, aw_buf *b) {
    static const char *const nasty[] = {"\x1b[1;32m", "\x1b]8;;http://x\x07", "\x1b]0;t\x1b\\", "\x1b", "\xEF\xBF\xBE",
                                        "\xEF\xBF\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xC0\xAF", "\xE2\x82",
                                        "\xF4\x90\x80\x80", "\xF0\x9F", "\xFF", "\xFE", "\x80", "\x00\x00"};
    switch (aw_test_below(r, 5)) {
    case 0: {
        int n = 1 + (int)aw_test_below(r, 6);
        for (int i = 0; i < n; i++) aw_buf_putc(b, (char)aw_test_below(r, 256));
        break;
    }
    case 1: {
        size_t k = aw_test_below(r, sizeof nasty / sizeof nasty[0]);
        aw_buf_append(b, nasty[k], k == sizeof nasty / sizeof nasty[0] - 1 ? 2 : strlen(nasty[k]));
        break;
    }
    case 2: aw_buf_putc(b, (char)aw_test_below(r, 0x20)); break;
    default: clean_piece(r, b); break;
    }
}

static void gen_text(rng *r, int mode, aw_buf *b) {
    aw_buf_clear(b);
    aw_buf_reserve(b, 0);
    int pieces = aw_test_below(r, 5) == 0 ? 0 : 1 + (int)aw_test_below(r, 12);
    for (int i = 0; i < pieces; i++) {
        if (mode == TEXT_RANDOM) random_piece(r, b);
        else if (mode == TEXT_JSON && aw_test_below(r, 4) == 0) json_piece(r, b);
        else clean_piece(r, b);
    }
}

/* ---- random JSON values and events --------------------------------------------------------- */

static double gen_number(rng *r) {
    static const double specials[] = {1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1, 123456789012345678901.0,
                                      -0.0, 0.000001, 1e20, -1.5e-10, 4294967296.0, 9007199254740993.0};
    switch (aw_test_below(r, 6)) {
    case 0: return (double)aw_test_below(r, 10);
    case 1: return -(double)aw_test_below(r, 1000000);
    case 2: return aw_test_below(r, 100000) / 8.0;
    case 3: {
        for (;;) {
            uint64_t bits = aw_test_next64(r);
            double d;
            memcpy(&d, &bits, sizeof d);
            if (d - d == 0) return d; /* finite */
        }
    }
    case 4: return specials[aw_test_below(r, sizeof specials / sizeof specials[0])];
    default: return (double)aw_test_below(r, 100);
    }
}

static aw_json_value *gen_value(aw_json_doc *d, rng *r, int mode, int depth, aw_buf *tmp);

static aw_json_value *gen_object(aw_json_doc *d, rng *r, int mode, int depth, aw_buf *tmp) {
    aw_json_value *o = aw_json_new_object(d);
    int n = (int)aw_test_below(r, depth > 2 ? 2 : 5);
    for (int i = 0; i < n; i++) {
        aw_json_value *v = gen_value(d, r, mode, depth + 1, tmp);
        gen_text(r, mode == TEXT_RANDOM ? TEXT_RANDOM : TEXT_JSON, tmp);
        if (aw_test_below(r, 3) == 0) aw_buf_printf(tmp, "%u", aw_test_below(r, 12)); /* sometimes an integer-like key */
        aw_json_object_set(d, o, tmp->data, tmp->len, v);
    }
    return o;
}

static aw_json_value *gen_value(aw_json_doc *d, rng *r, int mode, int depth, aw_buf *tmp) {
    switch (aw_test_below(r, depth > 3 ? 4 : 6)) {
    case 0: return aw_test_below(r, 2) ? aw_json_new_bool(d, aw_test_below(r, 2)) : aw_json_new_null(d);
    case 1: return aw_json_new_number(d, gen_number(r));
    case 2:
    case 3:
        gen_text(r, mode == TEXT_RANDOM ? TEXT_RANDOM : TEXT_JSON, tmp);
        return aw_json_new_string(d, tmp->data, tmp->len);
    case 4: {
        aw_json_value *a = aw_json_new_array(d);
        int n = (int)aw_test_below(r, 4);
        for (int i = 0; i < n; i++) aw_json_array_push(d, a, gen_value(d, r, mode, depth + 1, tmp));
        return a;
    }
    default: return gen_object(d, r, mode, depth, tmp);
    }
}

static const char *const kind_types[] = {"message", "tool_call", "tool_result", "error", "human_input_requested",
                                         "human_input_received", "completion", "summary", "approval", "plan",
                                         "x_custom"};

typedef struct gen_case {
    aw_json_doc *doc;
    aw_event ev[MAXEV];
    size_t n;
} gen_case;

static void set_text(gen_case *c, aw_json_value *o, const char *key, rng *r, int mode, aw_buf *tmp) {
    gen_text(r, mode, tmp);
    aw_json_object_set_string(c->doc, o, key, tmp->data, tmp->len);
}

/* Random events; tool ids from a small pool so names resolve often. */
static void gen_events(rng *r, int mode, gen_case *c) {
    aw_buf tmp;
    aw_buf_init(&tmp, NULL);
    c->doc = aw_json_doc_new(NULL);
    c->n = aw_test_below(r, MAXEV + 1);
    for (size_t i = 0; i < c->n; i++) {
        aw_json_doc *d = c->doc;
        aw_json_value *o = aw_json_new_object(d);
        int k = (int)aw_test_below(r, 11);
        aw_json_object_set_string(d, o, "type", kind_types[k], strlen(kind_types[k]));
        char id[16];
        snprintf(id, sizeof id, "c%u", aw_test_below(r, 6));
        switch (k) {
        case 0: {
            static const char *const roles[] = {"user", "assistant", "system"};
            const char *role = roles[aw_test_below(r, 3)];
            aw_json_object_set_string(d, o, "role", role, strlen(role));
            set_text(c, o, "content", r, mode, &tmp);
            break;
        }
        case 1:
            set_text(c, o, "toolName", r, mode, &tmp);
            aw_json_object_set_string(d, o, "toolCallId", id, strlen(id));
            aw_json_object_set(d, o, "args", 4, gen_object(d, r, mode, 1, &tmp));
            if (aw_test_below(r, 3) == 0) set_text(c, o, "parallelGroup", r, mode, &tmp);
            break;
        case 2:
            aw_json_object_set_string(d, o, "toolCallId", id, strlen(id));
            if (aw_test_below(r, 3)) {
                set_text(c, o, "result", r, mode, &tmp);
            } else {
                /* any other JSON value (a string result is text of `mode`:
                 * JSON-only characters belong inside JSON text) */
                aw_json_value *v = gen_value(d, r, mode, 1, &tmp);
                while (aw_json_is_string(v)) v = gen_value(d, r, mode, 1, &tmp);
                aw_json_object_set(d, o, "result", 6, v);
            }
            if (aw_test_below(r, 2)) aw_json_object_set_number(d, o, "durationMs", gen_number(r));
            if (aw_test_below(r, 3) == 0) set_text(c, o, "parallelGroup", r, mode, &tmp);
            else if (aw_test_below(r, 4) == 0) aw_json_object_set_number(d, o, "parallelGroup", gen_number(r));
            break;
        case 3:
            set_text(c, o, "error", r, mode, &tmp);
            aw_json_object_set_bool(d, o, "recoverable", aw_test_below(r, 2));
            if (aw_test_below(r, 2)) aw_json_object_set_string(d, o, "toolCallId", id, strlen(id));
            break;
        case 4: set_text(c, o, "question", r, mode, &tmp); break;
        case 5: set_text(c, o, "response", r, mode, &tmp); break;
        case 6:
            set_text(c, o, "result", r, mode, &tmp);
            aw_json_object_set_bool(d, o, "verified", aw_test_below(r, 2));
            break;
        case 7: {
            aw_json_value *its = aw_json_new_array(d);
            int n = (int)aw_test_below(r, 5);
            for (int j = 0; j < n; j++) aw_json_array_push(d, its, aw_json_new_number(d, gen_number(r)));
            aw_json_object_set(d, o, "summarizedIterations", 20, its);
            set_text(c, o, "summary", r, mode, &tmp);
            break;
        }
        default:
            if (aw_test_below(r, 2)) aw_json_object_set(d, o, "extra", 5, gen_value(d, r, mode, 1, &tmp));
            break;
        }
        aw_json_object_set_number(d, o, "timestamp", gen_number(r));
        aw_json_object_set_number(d, o, "iteration", aw_test_below(r, 3) ? (double)aw_test_below(r, 20) : gen_number(r));
        aw_error err;
        if (aw_event_from_json(o, &c->ev[i], &err)) fail_msg("generator made a bad event: %s", err.message);
    }
    aw_buf_free(&tmp);
}

static int written(aw_event_kind k) { return k <= AW_EVENT_SUMMARY; }

static const char *xml_type(const aw_event *ev) {
    static const char *const roles[] = {"human", "ai", "system"};
    static const char *const types[] = {NULL, "tool_input", "tool_output", "error", "human_input_requested",
                                        "human_input_received", "completion", "summary"};
    return ev->kind == AW_EVENT_MESSAGE ? roles[ev->role] : types[ev->kind];
}

/* ---- 1. the output always parses ------------------------------------------------------------------ */

typedef struct shape {
    int depth, max_depth, events, bad;
    const aw_event *ev;
    size_t n, next; /* next original index to match */
} shape;

static void XMLCALL sh_start(void *ud, const XML_Char *name, const XML_Char **atts) {
    shape *s = ud;
    s->depth++;
    if (s->depth > s->max_depth) s->max_depth = s->depth;
    if (s->depth == 1 && strcmp(name, "thread") != 0) s->bad = 1;
    if (s->depth != 2) return;
    if (strcmp(name, "event") != 0) s->bad = 1;
    while (s->next < s->n && !written(s->ev[s->next].kind)) s->next++;
    if (s->next >= s->n) {
        s->bad = 1;
        return;
    }
    const aw_event *ev = &s->ev[s->next];
    char id[24];
    snprintf(id, sizeof id, "%zu", s->next);
    int saw_type = 0, saw_id = 0;
    for (int i = 0; atts[i]; i += 2) {
        if (strcmp(atts[i], "type") == 0) saw_type = strcmp(atts[i + 1], xml_type(ev)) == 0;
        if (strcmp(atts[i], "id") == 0) saw_id = strcmp(atts[i + 1], id) == 0;
    }
    if (!saw_type || !saw_id) s->bad = 1;
    s->next++;
    s->events++;
}

static void XMLCALL sh_end(void *ud, const XML_Char *name) {
    (void)name;
    ((shape *)ud)->depth--;
}

static void test_output_always_parses(void **state) {
    (void)state;
    rng r = {SEED};
    aw_buf out;
    aw_buf_init(&out, NULL);
    for (int t = 0; t < PARSE_CASES; t++) {
        gen_case c;
        gen_events(&r, TEXT_RANDOM, &c);
        aw_thread_options o = {NULL, 0, aw_test_below(&r, 2), NULL};
        aw_buf_clear(&out);
        aw_error err;
        if (aw_thread_encode(c.ev, c.n, &o, &out, &err)) fail_msg("case %d: encode: %s", t, err.message);
        shape s;
        memset(&s, 0, sizeof s);
        s.ev = c.ev;
        s.n = c.n;
        XML_Parser p = XML_ParserCreate("UTF-8");
        XML_SetUserData(p, &s);
        XML_SetElementHandler(p, sh_start, sh_end);
        if (XML_Parse(p, out.data, (int)out.len, 1) != XML_STATUS_OK)
            fail_msg("seed %llx case %d: expat: %s at %lu:%lu\n%s", (unsigned long long)SEED, t,
                     XML_ErrorString(XML_GetErrorCode(p)), (unsigned long)XML_GetCurrentLineNumber(p),
                     (unsigned long)XML_GetCurrentColumnNumber(p), out.data);
        XML_ParserFree(p);
        size_t want = 0;
        for (size_t i = 0; i < c.n; i++) want += written(c.ev[i].kind);
        if (s.bad || s.events != (int)want || s.max_depth > 2)
            fail_msg("seed %llx case %d: wrong shape (events %d of %zu):\n%s", (unsigned long long)SEED, t, s.events,
                     want, out.data);
        aw_json_doc_free(c.doc);
    }
    aw_buf_free(&out);
}

/* ---- 2. decode(encode(x)) --------------------------------------------------------------------------- */

/* What XML gives back for text written as an element body: CRLF and CR
 * become LF. */
static void norm_body(const char *s, size_t n, aw_buf *out) {
    aw_buf_clear(out);
    aw_buf_reserve(out, 0);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') {
            aw_buf_putc(out, '\n');
            if (i + 1 < n && s[i + 1] == '\n') i++;
        } else {
            aw_buf_putc(out, s[i]);
        }
    }
}

/* ... and for text written as an attribute value: line ends as above, then
 * tab and LF become a space. */
static void norm_attr(const char *s, size_t n, aw_buf *out) {
    norm_body(s, n, out);
    for (size_t i = 0; i < out->len; i++)
        if (out->data[i] == '\n' || out->data[i] == '\t') out->data[i] = ' ';
}

static void want_string(int t, size_t i, const aw_json_value *obj, const char *key, const char *want, size_t want_len) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!aw_json_is_string(v)) fail_msg("case %d event %zu: '%s' is not a string", t, i, key);
    if (v->u.str.len != want_len || memcmp(v->u.str.ptr, want, want_len) != 0)
        fail_msg("case %d event %zu: '%s' is '%.*s', want '%.*s'", t, i, key, (int)v->u.str.len, v->u.str.ptr,
                 (int)want_len, want);
}

static void want_number(int t, size_t i, const aw_json_value *obj, const char *key, double want) {
    const aw_json_value *v = aw_json_get(obj, key);
    if (!aw_json_is_number(v)) fail_msg("case %d event %zu: '%s' is not a number", t, i, key);
    if (!(v->u.num.d == want)) fail_msg("case %d event %zu: '%s' is %.17g, want %.17g", t, i, key, v->u.num.d, want);
}

typedef struct pending {
    char name[512];
    size_t name_len;
    char call_id[32];
} pending;

static void test_round_trip(void **state) {
    (void)state;
    rng r = {SEED ^ 0xA5A5};
    aw_buf out, want, tmp;
    aw_buf_init(&out, NULL);
    aw_buf_init(&want, NULL);
    aw_buf_init(&tmp, NULL);
    static pending stack[MAXEV];
    for (int t = 0; t < ROUNDTRIP_CASES; t++) {
        gen_case c;
        gen_events(&r, TEXT_CLEAN, &c);
        aw_thread_options o = {NULL, 0, aw_test_below(&r, 2), NULL};
        aw_buf_clear(&out);
        aw_error err;
        assert_int_equal(aw_thread_encode(c.ev, c.n, &o, &out, &err), 0);
        aw_json_doc *back = NULL;
        if (aw_thread_decode(out.data, out.len, NULL, &back, &err))
            fail_msg("case %d: decode: %s at %zu:%zu\n%s", t, err.message, err.line, err.column, out.data);
        const aw_json_value *evs = aw_json_doc_root(back);
        size_t nstack = 0, j = 0;
        for (size_t i = 0; i < c.n; i++) {
            const aw_event *ev = &c.ev[i];
            if (!written(ev->kind)) continue;
            const aw_json_value *d = aw_json_at(evs, j++);
            if (!d) fail_msg("case %d: too few events decoded\n%s", t, out.data);
            static const char *const types[] = {"message", "tool_call", "tool_result", "error", "human_input_requested",
                                                "human_input_received", "completion", "summary"};
            want_string(t, i, d, "type", types[ev->kind], strlen(types[ev->kind]));
            want_number(t, i, d, "iteration", ev->iteration->u.num.d);
            want_number(t, i, d, "timestamp", 0);
            switch (ev->kind) {
            case AW_EVENT_MESSAGE: {
                static const char *const roles[] = {"user", "assistant", "system"};
                want_string(t, i, d, "role", roles[ev->role], strlen(roles[ev->role]));
                norm_body(ev->text.ptr, ev->text.len, &want);
                want_string(t, i, d, "content", want.data, want.len);
                break;
            }
            case AW_EVENT_TOOL_CALL: {
                norm_attr(ev->tool_name.ptr, ev->tool_name.len, &want);
                want_string(t, i, d, "toolName", want.data, want.len);
                if (!aw_json_equal(aw_json_get(d, "args"), ev->args)) {
                    aw_buf_clear(&tmp);
                    aw_json_write(aw_json_get(d, "args"), NULL, &tmp, NULL);
                    fail_msg("case %d event %zu: args changed: %s", t, i, tmp.data);
                }
                /* every input waits for its output under its name */
                pending *p = &stack[nstack++];
                memcpy(p->name, want.data, want.len < sizeof p->name ? want.len : sizeof p->name);
                p->name_len = want.len;
                snprintf(p->call_id, sizeof p->call_id, "call_%zu", i);
                want_string(t, i, d, "toolCallId", p->call_id, strlen(p->call_id));
                assert_true(want.len < sizeof p->name);
                break;
            }
            case AW_EVENT_TOOL_RESULT: {
                if (aw_json_is_string(ev->result)) {
                    norm_body(ev->result->u.str.ptr, ev->result->u.str.len, &want);
                } else {
                    aw_buf_clear(&want);
                    aw_json_write(ev->result, NULL, &want, NULL);
                }
                want_string(t, i, d, "result", want.data, want.len);
                /* the name written: the last call with this id anywhere, else
                 * "unknown" */
                aw_text name = {"unknown", 7};
                for (size_t k = 0; k < c.n; k++)
                    if (c.ev[k].kind == AW_EVENT_TOOL_CALL && c.ev[k].tool_call_id.len == ev->tool_call_id.len &&
                        memcmp(c.ev[k].tool_call_id.ptr, ev->tool_call_id.ptr, ev->tool_call_id.len) == 0)
                        name = c.ev[k].tool_name;
                norm_attr(name.ptr, name.len, &want);
                /* pairing: the nearest earlier unpaired input of that name */
                char own[32];
                snprintf(own, sizeof own, "call_%zu", i);
                const char *cid = own;
                for (size_t k = nstack; k-- > 0;) {
                    if (stack[k].name_len == want.len && memcmp(stack[k].name, want.data, want.len) == 0) {
                        static char taken[32];
                        memcpy(taken, stack[k].call_id, sizeof taken);
                        cid = taken;
                        memmove(&stack[k], &stack[k + 1], (nstack - k - 1) * sizeof stack[0]);
                        nstack--;
                        break;
                    }
                }
                want_string(t, i, d, "toolCallId", cid, strlen(cid));
                if (ev->duration_ms) want_number(t, i, d, "durationMs", ev->duration_ms->u.num.d);
                else assert_null(aw_json_get(d, "durationMs"));
                if (!ev->parallel_group) {
                    assert_null(aw_json_get(d, "parallelGroup"));
                } else if (aw_json_is_string(ev->parallel_group)) {
                    norm_attr(ev->parallel_group->u.str.ptr, ev->parallel_group->u.str.len, &want);
                    want_string(t, i, d, "parallelGroup", want.data, want.len);
                } else {
                    aw_buf_clear(&want);
                    aw_json_write_number(&want, ev->parallel_group->u.num.d);
                    want_string(t, i, d, "parallelGroup", want.data, want.len);
                }
                break;
            }
            case AW_EVENT_ERROR: {
                norm_body(ev->text.ptr, ev->text.len, &want);
                want_string(t, i, d, "error", want.data, want.len);
                const aw_json_value *rec = aw_json_get(d, "recoverable");
                assert_true(aw_json_is_bool(rec));
                assert_int_equal(rec->u.b, ev->recoverable);
                break;
            }
            case AW_EVENT_HUMAN_INPUT_REQUESTED:
            case AW_EVENT_HUMAN_INPUT_RECEIVED:
            case AW_EVENT_COMPLETION:
            case AW_EVENT_SUMMARY: {
                static const char *const fields[] = {"question", "response", "result", "summary"};
                const char *f = fields[ev->kind - AW_EVENT_HUMAN_INPUT_REQUESTED];
                norm_body(ev->text.ptr, ev->text.len, &want);
                want_string(t, i, d, f, want.data, want.len);
                if (ev->kind == AW_EVENT_COMPLETION) assert_true(aw_json_is_bool(aw_json_get(d, "verified")));
                if (ev->kind == AW_EVENT_SUMMARY) {
                    const aw_json_value *its = aw_json_get(d, "summarizedIterations");
                    assert_true(aw_json_is_array(its));
                    assert_int_equal(aw_json_count(its), aw_json_count(ev->summarized_iterations));
                    for (size_t k = 0; k < aw_json_count(its); k++)
                        if (!(aw_json_at(its, k)->u.num.d == aw_json_at(ev->summarized_iterations, k)->u.num.d))
                            fail_msg("case %d event %zu: summarizedIterations[%zu] differs", t, i, k);
                }
                break;
            }
            default: break;
            }
        }
        if (j != aw_json_count(evs)) fail_msg("case %d: %zu events decoded, %zu written", t, aw_json_count(evs), j);
        aw_json_doc_free(back);
        aw_json_doc_free(c.doc);
    }
    aw_buf_free(&out);
    aw_buf_free(&want);
    aw_buf_free(&tmp);
}

/* ---- 3 and 4. the append writer ------------------------------------------------------------------------ */

static void encode_prefix(const aw_event *ev, size_t n, const aw_thread_options *o, aw_buf *out) {
    aw_buf_clear(out);
    aw_error err;
    if (aw_thread_encode(ev, n, o, out, &err)) fail_msg("encode: %s", err.message);
}

static void test_writer_matches_encoder(void **state) {
    (void)state;
    rng r = {SEED ^ 0x77};
    aw_buf doc, whole, prefill;
    aw_buf_init(&doc, NULL);
    aw_buf_init(&whole, NULL);
    aw_buf_init(&prefill, NULL);
    static char ids[MAXEV][32];
    for (int t = 0; t < WRITER_CASES; t++) {
        gen_case c;
        gen_events(&r, TEXT_RANDOM, &c);
        /* every call gets its own id; every result names an earlier call,
         * or an id no call has */
        size_t calls[MAXEV], ncalls = 0;
        for (size_t i = 0; i < c.n; i++) {
            aw_event *ev = &c.ev[i];
            if (ev->kind == AW_EVENT_TOOL_CALL) {
                snprintf(ids[i], sizeof ids[i], "k%zu", i);
                calls[ncalls++] = i;
            } else if (ev->kind == AW_EVENT_TOOL_RESULT) {
                if (ncalls && aw_test_below(&r, 4)) snprintf(ids[i], sizeof ids[i], "k%zu", calls[aw_test_below(&r, (uint32_t)ncalls)]);
                else snprintf(ids[i], sizeof ids[i], "none%zu", i);
            } else {
                continue;
            }
            ev->tool_call_id.ptr = ids[i];
            ev->tool_call_id.len = strlen(ids[i]);
        }
        gen_text(&r, TEXT_CLEAN, &prefill);
        aw_thread_options o = {prefill.data, prefill.len, aw_test_below(&r, 2), NULL};
        aw_thread_writer *w = aw_thread_writer_new(&o);
        assert_non_null(w);
        aw_buf_clear(&doc);
        if (aw_test_below(&r, 2)) aw_buf_append_str(&doc, "prompt before the thread\n"); /* the writer owns only its tail */
        size_t keep = doc.len;
        assert_int_equal(aw_thread_writer_start(w, &doc), 0);
        encode_prefix(c.ev, 0, &o, &whole);
        assert_int_equal(doc.len - keep, whole.len);
        assert_memory_equal(doc.data + keep, whole.data, whole.len);
        for (size_t i = 0; i < c.n; i++) {
            aw_error err;
            if (aw_thread_writer_append(w, &c.ev[i], &doc, &err)) fail_msg("case %d: append: %s", t, err.message);
            assert_int_equal(aw_thread_writer_count(w), i + 1);
            encode_prefix(c.ev, i + 1, &o, &whole);
            if (doc.len - keep != whole.len || memcmp(doc.data + keep, whole.data, whole.len) != 0)
                fail_msg("seed %llx case %d after %zu events: writer\n%s\n---- encoder\n%s", (unsigned long long)SEED, t,
                         i + 1, doc.data + keep, whole.data);
        }
        aw_thread_writer_free(w);
        aw_json_doc_free(c.doc);
    }
    aw_buf_free(&doc);
    aw_buf_free(&whole);
    aw_buf_free(&prefill);
}

/* Any order: the writer's output is the encoder's output for the same events
 * with each result pointed at the latest call with its id seen before it
 * (or at no call). */
static void test_writer_model_any_order(void **state) {
    (void)state;
    rng r = {SEED ^ 0x99};
    aw_buf doc, model;
    aw_buf_init(&doc, NULL);
    aw_buf_init(&model, NULL);
    static char ids[MAXEV][32];
    int differed = 0;
    for (int t = 0; t < WRITER_CASES; t++) {
        gen_case c;
        gen_events(&r, TEXT_RANDOM, &c);
        aw_thread_options o = {NULL, 0, false, NULL};
        aw_thread_writer *w = aw_thread_writer_new(&o);
        aw_buf_clear(&doc);
        assert_int_equal(aw_thread_writer_start(w, &doc), 0);
        for (size_t i = 0; i < c.n; i++) assert_int_equal(aw_thread_writer_append(w, &c.ev[i], &doc, NULL), 0);
        aw_thread_writer_free(w);

        aw_event copy[MAXEV];
        memcpy(copy, c.ev, c.n * sizeof copy[0]);
        for (size_t i = 0; i < c.n; i++) {
            if (copy[i].kind == AW_EVENT_TOOL_CALL) {
                snprintf(ids[i], sizeof ids[i], "k%zu", i);
            } else if (copy[i].kind == AW_EVENT_TOOL_RESULT) {
                snprintf(ids[i], sizeof ids[i], "none");
                for (size_t k = i; k-- > 0;)
                    if (c.ev[k].kind == AW_EVENT_TOOL_CALL && c.ev[k].tool_call_id.len == c.ev[i].tool_call_id.len &&
                        memcmp(c.ev[k].tool_call_id.ptr, c.ev[i].tool_call_id.ptr, c.ev[i].tool_call_id.len) == 0) {
                        snprintf(ids[i], sizeof ids[i], "k%zu", k);
                        break;
                    }
            } else {
                continue;
            }
            copy[i].tool_call_id.ptr = ids[i];
            copy[i].tool_call_id.len = strlen(ids[i]);
        }
        encode_prefix(copy, c.n, &o, &model);
        if (doc.len != model.len || memcmp(doc.data, model.data, doc.len) != 0)
            fail_msg("case %d: writer\n%s\n---- model\n%s", t, doc.data, model.data);
        encode_prefix(c.ev, c.n, &o, &model);
        differed += doc.len != model.len || memcmp(doc.data, model.data, doc.len) != 0;
        aw_json_doc_free(c.doc);
    }
    assert_true(differed > 0); /* the generator does reach the differing orders */
    aw_buf_free(&doc);
    aw_buf_free(&model);
}

static const char order_case[] =
    "{\"type\":\"tool_result\",\"toolCallId\":\"r1\",\"result\":\"early\",\"timestamp\":1,\"iteration\":1}\n"
    "{\"type\":\"tool_call\",\"toolName\":\"late\",\"toolCallId\":\"r1\",\"args\":{},\"timestamp\":1,\"iteration\":1}\n"
    "{\"type\":\"tool_call\",\"toolName\":\"first\",\"toolCallId\":\"d\",\"args\":{},\"timestamp\":1,\"iteration\":2}\n"
    "{\"type\":\"tool_result\",\"toolCallId\":\"d\",\"result\":\"x\",\"timestamp\":1,\"iteration\":2}\n"
    "{\"type\":\"tool_call\",\"toolName\":\"second\",\"toolCallId\":\"d\",\"args\":{},\"timestamp\":1,\"iteration\":2}\n"
    "{\"type\":\"tool_result\",\"toolCallId\":\"r1\",\"result\":\"after\",\"timestamp\":1,\"iteration\":2}\n";

/* The documented difference, exactly. */
static void test_writer_result_before_call(void **state) {
    (void)state;
    aw_event_list *l = NULL;
    assert_int_equal(aw_event_list_parse(order_case, strlen(order_case), NULL, &l, NULL), 0);
    aw_buf whole, doc;
    aw_buf_init(&whole, NULL);
    aw_buf_init(&doc, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), NULL, &whole, NULL), 0);
    assert_string_equal(whole.data,
                        "<thread>\n"
                        "  <event type=\"tool_output\" id=\"0\" name=\"late\" status=\"success\" iteration=\"1\">early</event>\n"
                        "  <event type=\"tool_input\" id=\"1\" name=\"late\" iteration=\"1\">{}</event>\n"
                        "  <event type=\"tool_input\" id=\"2\" name=\"first\" iteration=\"2\">{}</event>\n"
                        "  <event type=\"tool_output\" id=\"3\" name=\"second\" status=\"success\" iteration=\"2\">x</event>\n"
                        "  <event type=\"tool_input\" id=\"4\" name=\"second\" iteration=\"2\">{}</event>\n"
                        "  <event type=\"tool_output\" id=\"5\" name=\"late\" status=\"success\" iteration=\"2\">after</event>\n"
                        "</thread>");
    aw_thread_writer *w = aw_thread_writer_new(NULL);
    assert_int_equal(aw_thread_writer_start(w, &doc), 0);
    for (size_t i = 0; i < aw_event_list_count(l); i++)
        assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[i], &doc, NULL), 0);
    /* (a) the result before its call is "unknown"; (b) the result between
     * two calls with one id takes the earlier call's name */
    assert_string_equal(doc.data,
                        "<thread>\n"
                        "  <event type=\"tool_output\" id=\"0\" name=\"unknown\" status=\"success\" iteration=\"1\">early</event>\n"
                        "  <event type=\"tool_input\" id=\"1\" name=\"late\" iteration=\"1\">{}</event>\n"
                        "  <event type=\"tool_input\" id=\"2\" name=\"first\" iteration=\"2\">{}</event>\n"
                        "  <event type=\"tool_output\" id=\"3\" name=\"first\" status=\"success\" iteration=\"2\">x</event>\n"
                        "  <event type=\"tool_input\" id=\"4\" name=\"second\" iteration=\"2\">{}</event>\n"
                        "  <event type=\"tool_output\" id=\"5\" name=\"late\" status=\"success\" iteration=\"2\">after</event>\n"
                        "</thread>");
    aw_thread_writer_free(w);
    aw_buf_free(&whole);
    aw_buf_free(&doc);
    aw_event_list_free(l);
}

/* The writer's own contract: start, prefill tail, count, ids for events not
 * written, refusing a buffer it did not leave, events that do not outlive
 * the append. */
static void test_writer_contract(void **state) {
    (void)state;
    aw_thread_options o = {"Go on:", 6, false, NULL};
    aw_thread_writer *w = aw_thread_writer_new(&o);
    assert_non_null(w);
    aw_buf doc;
    aw_buf_init(&doc, NULL);
    aw_error err;
    aw_event_list *l = NULL;
    const char *in = "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":0}\n"
                     "{\"type\":\"tool_call\",\"toolName\":\"t\",\"toolCallId\":\"c\",\"args\":{\"a\":\"<\"},\"timestamp\":1,\"iteration\":1}\n";
    assert_int_equal(aw_event_list_parse(in, strlen(in), NULL, &l, NULL), 0);
    /* append before start */
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[0], &doc, &err), AW_EINVAL);
    assert_int_equal(aw_thread_writer_start(w, &doc), 0);
    assert_string_equal(doc.data, "<thread>\n</thread>\nGo on:");
    assert_int_equal(aw_thread_writer_count(w), 0);
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[0], &doc, &err), 0);
    assert_int_equal(aw_thread_writer_count(w), 1);
    assert_string_equal(doc.data, "<thread>\n</thread>\nGo on:");
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[1], &doc, &err), 0);
    assert_string_equal(doc.data, "<thread>\n"
                                  "  <event type=\"tool_input\" id=\"1\" name=\"t\" iteration=\"1\">{&quot;a&quot;:&quot;&lt;&quot;}</event>\n"
                                  "</thread>\nGo on:");
    aw_event_list_free(l);
    /* the call's id and name were copied: a result still finds them after
     * the call's JSON is gone */
    in = "{\"type\":\"tool_result\",\"toolCallId\":\"c\",\"result\":\"r\",\"timestamp\":1,\"iteration\":1}";
    assert_int_equal(aw_event_list_parse(in, strlen(in), NULL, &l, NULL), 0);
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[0], &doc, &err), 0);
    assert_non_null(strstr(doc.data, "<event type=\"tool_output\" id=\"2\" name=\"t\" status=\"success\" iteration=\"1\">r</event>\n</thread>\nGo on:"));
    /* a buffer that no longer ends with the writer's tail is refused and
     * left alone */
    aw_buf_append_str(&doc, " more");
    size_t len = doc.len;
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[0], &doc, &err), AW_EINVAL);
    assert_int_equal(doc.len, len);
    assert_int_equal(aw_thread_writer_count(w), 3);
    aw_buf other;
    aw_buf_init(&other, NULL);
    assert_int_equal(aw_thread_writer_append(w, &aw_event_list_items(l)[0], &other, &err), AW_EINVAL);
    assert_int_equal(aw_thread_writer_append(w, NULL, &doc, &err), AW_EINVAL);
    assert_int_equal(aw_thread_writer_append(NULL, &aw_event_list_items(l)[0], &doc, &err), AW_EINVAL);
    assert_int_equal(aw_thread_writer_start(w, NULL), AW_EINVAL);
    assert_int_equal(aw_thread_writer_start(NULL, &doc), AW_EINVAL);
    assert_int_equal(aw_thread_writer_count(NULL), 0);
    aw_thread_writer_free(NULL);
    aw_buf_free(&other);
    aw_event_list_free(l);
    aw_thread_writer_free(w);
    aw_buf_free(&doc);

    /* the prefill is copied: the caller's text may go away */
    char pre[8] = "tail";
    aw_thread_options o2 = {pre, 4, false, NULL};
    w = aw_thread_writer_new(&o2);
    memset(pre, 'X', sizeof pre);
    aw_buf_init(&doc, NULL);
    assert_int_equal(aw_thread_writer_start(w, &doc), 0);
    assert_string_equal(doc.data, "<thread>\n</thread>\ntail");
    aw_thread_writer_free(w);
    aw_buf_free(&doc);
}

/* Every allocation failure in new/start/append leaves the document as it was
 * before the failing call. */
typedef struct writer_sweep {
    aw_event_list *events;
    const char *want;
    size_t want_len;
} writer_sweep;

static int writer_with(const aw_allocator *a, void *p) {
    writer_sweep *s = p;
    aw_thread_options o = {"p", 1, true, a};
    aw_thread_writer *w = aw_thread_writer_new(&o);
    if (!w) return AW_ENOMEM;
    aw_buf doc;
    aw_buf_init(&doc, a);
    int rc = aw_thread_writer_start(w, &doc);
    for (size_t i = 0; rc == 0 && i < aw_event_list_count(s->events); i++) {
        char *before = malloc(doc.len + 1);
        size_t before_len = doc.len;
        memcpy(before, doc.data, doc.len);
        size_t count = aw_thread_writer_count(w);
        aw_error err;
        rc = aw_thread_writer_append(w, &aw_event_list_items(s->events)[i], &doc, &err);
        if (rc) {
            assert_int_equal(rc, AW_ENOMEM);
            assert_int_equal(doc.len, before_len);
            assert_memory_equal(doc.data, before, before_len);
            assert_int_equal(aw_thread_writer_count(w), count);
        }
        free(before);
    }
    if (rc == 0) {
        assert_int_equal(doc.len, s->want_len);
        assert_memory_equal(doc.data, s->want, s->want_len);
    }
    aw_buf_free(&doc);
    aw_thread_writer_free(w);
    return rc;
}

static void test_writer_allocation_failures(void **state) {
    (void)state;
    writer_sweep s;
    const char *in =
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hello & bye\",\"timestamp\":1,\"iteration\":0}\n"
        "{\"type\":\"tool_call\",\"toolName\":\"t1\",\"toolCallId\":\"a\",\"args\":{\"q\":[1,{\"r\":\"s\"}]},\"timestamp\":1,\"iteration\":1}\n"
        "{\"type\":\"tool_call\",\"toolName\":\"t2\",\"toolCallId\":\"b\",\"args\":{},\"timestamp\":1,\"iteration\":1}\n"
        "{\"type\":\"tool_result\",\"toolCallId\":\"a\",\"result\":{\"k\":\"" "0123456789abcdef0123456789abcdef" "\"},\"durationMs\":5,\"timestamp\":1,\"iteration\":1}\n"
        "{\"type\":\"plan\",\"timestamp\":1,\"iteration\":1}\n"
        "{\"type\":\"tool_result\",\"toolCallId\":\"b\",\"result\":\"\\u001b[1mB\\u001b[0m\",\"parallelGroup\":\"g\",\"timestamp\":1,\"iteration\":1}\n"
        "{\"type\":\"completion\",\"result\":\"done\",\"verified\":true,\"timestamp\":1,\"iteration\":2}\n";
    assert_int_equal(aw_event_list_parse(in, strlen(in), NULL, &s.events, NULL), 0);
    aw_thread_options o = {"p", 1, true, NULL};
    aw_buf want;
    aw_buf_init(&want, NULL);
    assert_int_equal(aw_thread_encode(aw_event_list_items(s.events), aw_event_list_count(s.events), &o, &want, NULL), 0);
    s.want = want.data;
    s.want_len = want.len;
    assert_true(aw_failalloc_run(writer_with, &s, 0) > 3);
    aw_buf_free(&want);
    aw_event_list_free(s.events);
}

/* ---- 5. JSON text ---------------------------------------------------------------------------------------- */

#define STREAM_CASES 1500

static void expect_streamed_equal(int t, const aw_buf *text, const aw_thread_options *o, aw_buf *want, aw_buf *got) {
    aw_event_list *l = NULL;
    aw_error err;
    if (aw_event_list_parse(text->data, text->len, NULL, &l, &err)) fail_msg("case %d: parse: %s", t, err.message);
    aw_buf_clear(want);
    aw_buf_clear(got);
    if (aw_thread_encode(aw_event_list_items(l), aw_event_list_count(l), o, want, &err))
        fail_msg("case %d: encode: %s", t, err.message);
    aw_event_list_free(l);
    if (aw_thread_encode_json(text->data, text->len, NULL, o, got, &err))
        fail_msg("case %d: encode_json: %s", t, err.message);
    if (got->len != want->len || memcmp(got->data, want->data, want->len) != 0)
        fail_msg("case %d: encode_json\n%s\n---- encode\n%s", t, got->data, want->data);
}

static void test_json_text_matches_encoder(void **state) {
    (void)state;
    rng r = {SEED ^ 0x55};
    aw_buf lines, array, want, got;
    aw_buf_init(&lines, NULL);
    aw_buf_init(&array, NULL);
    aw_buf_init(&want, NULL);
    aw_buf_init(&got, NULL);
    for (int t = 0; t < STREAM_CASES; t++) {
        gen_case c;
        gen_events(&r, (int)aw_test_below(&r, 3), &c);
        aw_buf_clear(&lines);
        aw_buf_clear(&array);
        aw_buf_putc(&array, '[');
        for (size_t i = 0; i < c.n; i++) {
            if (aw_test_below(&r, 4) == 0) aw_buf_append_str(&lines, aw_test_below(&r, 2) ? "\n" : "  \r\n"); /* blank lines */
            assert_int_equal(aw_json_write(c.ev[i].json, NULL, &lines, NULL), 0);
            aw_buf_append_str(&lines, aw_test_below(&r, 2) ? "\n" : "\r\n");
            if (i) aw_buf_putc(&array, ',');
            assert_int_equal(aw_json_write(c.ev[i].json, NULL, &array, NULL), 0);
        }
        aw_buf_putc(&array, ']');
        aw_thread_options o = {"pre", aw_test_below(&r, 2) ? 3u : 0u, aw_test_below(&r, 2) != 0, NULL};
        expect_streamed_equal(t, &lines, &o, &want, &got);
        expect_streamed_equal(t, &array, &o, &want, &got);
        aw_json_doc_free(c.doc);
    }
    aw_buf_free(&lines);
    aw_buf_free(&array);
    aw_buf_free(&want);
    aw_buf_free(&got);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_always_parses),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_writer_matches_encoder),
        cmocka_unit_test(test_writer_model_any_order),
        cmocka_unit_test(test_writer_result_before_call),
        cmocka_unit_test(test_writer_contract),
        cmocka_unit_test(test_writer_allocation_failures),
        cmocka_unit_test(test_json_text_matches_encoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
