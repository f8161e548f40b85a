/* The MCP stdio framing (internal/mcp_reader.h): lines split as they
 * arrive, each parsed strictly and sorted by what the JSON-RPC 2.0 members
 * say it is.
 *
 * The skim: a server that answers with a line too long to keep, or with a
 * line that is not JSON, still says which request it answers in the line's
 * top-level "id" (the TypeScript SDK writes it last, after a result of any
 * size). A small state machine follows strings and nesting byte by byte
 * and keeps at most a few bytes of each top-level key and of the id's
 * value, so finding it costs no memory whatever the line's length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agentwire/buf.h"
#include "agentwire/error.h"
#include "internal/mcp_reader.h"

#define DEFAULT_MAX_LINE (16u << 20)
#define SHOWN_LINE 200
#define ID_TEXT_MAX 24
#define KEEP_CAPACITY (1u << 20) /* a line buffer grown past this is given back after a long line */

enum { EXPECT_OTHER = 0, EXPECT_KEY, EXPECT_COLON, EXPECT_VALUE, IN_ID_NUMBER };

typedef struct id_skim {
    uint32_t depth;
    bool top_object;  /* the line is an object: depth 1 holds its members */
    bool in_string, escaped;
    bool in_key;      /* the string under way is a top-level key */
    uint8_t expect;
    char key[3];
    uint8_t key_len;  /* 3: longer than "id" */
    bool key_is_id;   /* the key whose value comes next is "id" */
    char id_text[ID_TEXT_MAX];
    uint8_t id_len;
    bool found, is_int;
    int64_t value;
} id_skim;

struct mcp_reader {
    const aw_allocator *alloc;
    size_t max_line;
    aw_buf line;
    bool discarding;   /* the line under way is over max_line */
    uint64_t discarded;
    bool lost;         /* ...because memory ran out, not because of its length */
    id_skim skim;
};

/* ---- the skim ---------------------------------------------------------------- */

static void skim_finish_number(id_skim *s)
{
    if (s->expect != IN_ID_NUMBER)
        return;
    s->expect = EXPECT_OTHER;
    s->found = true;
    s->is_int = false;
    if (s->id_len == 0 || s->id_len >= ID_TEXT_MAX)
        return;
    char text[ID_TEXT_MAX];
    memcpy(text, s->id_text, s->id_len);
    text[s->id_len] = 0;
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) || (digits[0] == '0' && digits[1]))
        return;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*end)
        return;
    s->is_int = true;
    s->value = v;
}

static void skim_string_byte(id_skim *s, char c)
{
    if (s->escaped) {
        s->escaped = false;
        if (s->in_key)
            s->key_len = 3; /* an escaped key is not the plain "id" */
        return;
    }
    if (c == '\\') {
        s->escaped = true;
        return;
    }
    if (c == '"') {
        s->in_string = false;
        if (s->in_key) {
            s->in_key = false;
            s->key_is_id = s->key_len == 2 && s->key[0] == 'i' && s->key[1] == 'd';
            s->expect = EXPECT_COLON;
        }
        return;
    }
    if (s->in_key) {
        if (s->key_len < 3)
            s->key[s->key_len] = c;
        if (s->key_len < 3)
            s->key_len++;
    }
}

static void skim_byte(id_skim *s, char c)
{
    if (s->in_string) {
        skim_string_byte(s, c);
        return;
    }
    bool top = s->depth == 1 && s->top_object;
    switch (c) {
    case '"':
        s->in_string = true;
        if (top && s->expect == EXPECT_KEY) {
            s->in_key = true;
            s->key_len = 0;
        } else if (top && s->expect == EXPECT_VALUE && s->key_is_id) {
            s->found = true; /* a string id: never one of ours */
            s->is_int = false;
            s->expect = EXPECT_OTHER;
        } else if (top) {
            s->expect = EXPECT_OTHER;
        }
        return;
    case '{':
    case '[':
        if (s->depth == 0 && c == '{')
            s->top_object = true;
        if (top)
            s->expect = EXPECT_OTHER;
        if (s->depth < UINT32_MAX)
            s->depth++;
        if (s->depth == 1 && s->top_object)
            s->expect = EXPECT_KEY;
        return;
    case '}':
    case ']':
        if (top)
            skim_finish_number(s);
        if (s->depth > 0)
            s->depth--;
        return;
    case ',':
        if (top) {
            skim_finish_number(s);
            s->expect = EXPECT_KEY;
        }
        return;
    case ':':
        if (top && s->expect == EXPECT_COLON)
            s->expect = EXPECT_VALUE;
        return;
    case ' ':
    case '\t':
    case '\r':
        if (top)
            skim_finish_number(s);
        return;
    default:
        if (!top)
            return;
        if (s->expect == EXPECT_VALUE && s->key_is_id) {
            s->expect = IN_ID_NUMBER;
            s->id_len = 0;
        } else if (s->expect == EXPECT_VALUE) {
            s->expect = EXPECT_OTHER;
        }
        if (s->expect == IN_ID_NUMBER && s->id_len < ID_TEXT_MAX)
            s->id_text[s->id_len++] = c;
        return;
    }
}

static void skim_bytes(id_skim *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skim_byte(s, p[i]);
}

/* ---- lines -------------------------------------------------------------------- */

mcp_reader *mcp_reader_new(const aw_allocator *alloc, size_t max_line)
{
    mcp_reader *r = aw_malloc(alloc, sizeof *r);
    if (!r)
        return NULL;
    memset(r, 0, sizeof *r);
    r->alloc = alloc;
    r->max_line = max_line ? max_line : DEFAULT_MAX_LINE;
    aw_buf_init(&r->line, alloc);
    return r;
}

void mcp_reader_free(mcp_reader *r)
{
    if (!r)
        return;
    aw_buf_free(&r->line);
    aw_free(r->alloc, r);
}

void mcp_reader_reset(mcp_reader *r)
{
    aw_buf_clear(&r->line);
    r->discarding = false;
    r->lost = false;
    r->discarded = 0;
    memset(&r->skim, 0, sizeof r->skim);
}

static bool blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

static void take_skimmed_id(mcp_msg *m, const id_skim *s)
{
    m->has_int_id = s->found && s->is_int;
    m->int_id = m->has_int_id ? s->value : 0;
}

/* What a parsed line is, by its members (JSON-RPC 2.0, section 4 and 5). */
static void classify(const aw_json_value *root, mcp_msg *m)
{
    m->root = root;
    if (!aw_json_is_object(root)) {
        m->kind = MCP_MSG_INVALID;
        m->problem = aw_json_is_array(root) ? "a batch (JSON array); MCP messages are single objects"
                                            : "not a JSON object";
        return;
    }
    const aw_json_value *version = aw_json_get(root, "jsonrpc");
    if (!aw_json_is_string(version) || version->u.str.len != 3 || memcmp(version->u.str.ptr, "2.0", 3) != 0) {
        m->kind = MCP_MSG_INVALID;
        m->problem = "its \"jsonrpc\" member is not \"2.0\"";
        return;
    }
    const aw_json_value *id = aw_json_get(root, "id");
    if (id && !aw_json_is_string(id) && !aw_json_is_number(id) && !aw_json_is_null(id)) {
        m->kind = MCP_MSG_INVALID;
        m->problem = "its \"id\" is neither a string nor a number";
        return;
    }
    if (aw_json_is_number(id) && (id->flags & AW_JSON_F_INT)) {
        m->has_int_id = true;
        m->int_id = id->u.num.i;
    }
    m->id = id;
    const aw_json_value *method = aw_json_get(root, "method");
    if (method) {
        if (!aw_json_is_string(method) || method->u.str.len == 0) {
            m->kind = MCP_MSG_INVALID;
            m->problem = "its \"method\" is not a non-empty string";
            return;
        }
        m->method = (aw_text){method->u.str.ptr, method->u.str.len};
        m->params = aw_json_get(root, "params");
        m->kind = id && !aw_json_is_null(id) ? MCP_MSG_REQUEST : MCP_MSG_NOTIFICATION;
        return;
    }
    if (!id) {
        m->kind = MCP_MSG_INVALID;
        m->problem = "it has neither a \"method\" nor an \"id\"";
        return;
    }
    const aw_json_value *error = aw_json_get(root, "error");
    if (error) {
        const aw_json_value *code = aw_json_get(error, "code");
        const aw_json_value *message = aw_json_get(error, "message");
        if (!aw_json_is_object(error) || !aw_json_is_number(code)) {
            m->kind = MCP_MSG_INVALID;
            m->problem = "its \"error\" is not an object with a numeric \"code\"";
            return;
        }
        m->kind = MCP_MSG_ERROR;
        double d = code->u.num.d;
        m->error_code = d > -9e18 && d < 9e18 ? (int64_t)d : 0;
        if (aw_json_is_string(message))
            m->error_message = (aw_text){message->u.str.ptr, message->u.str.len};
        return;
    }
    const aw_json_value *result = aw_json_get(root, "result");
    if (!result) {
        m->kind = MCP_MSG_INVALID;
        m->problem = "a response with neither \"result\" nor \"error\"";
        return;
    }
    m->kind = MCP_MSG_RESULT;
    m->result = result;
}

static int emit_line(mcp_reader *r, const char *p, size_t n, mcp_msg_fn fn, void *ctx)
{
    while (n && p[n - 1] == '\r')
        n--;
    if (blank(p, n))
        return 0;
    mcp_msg m;
    memset(&m, 0, sizeof m);
    m.bytes = n;
    aw_json_read_options ro = {.alloc = r->alloc};
    aw_json_doc *doc = NULL;
    aw_error err;
    int rc = aw_json_parse(p, n, &ro, &doc, &err);
    char problem[AW_ERROR_MESSAGE_MAX + 48];
    if (rc == AW_ENOMEM) {
        /* still skimmed below, so the request it answers fails clearly */
        m.kind = MCP_MSG_INVALID;
        m.problem = "it could not be read: out of memory";
    } else if (rc) {
        snprintf(problem, sizeof problem, "not JSON: %s at column %zu", err.message, err.column);
        m.kind = MCP_MSG_INVALID;
        m.problem = problem;
    } else {
        classify(aw_json_doc_root(doc), &m);
    }
    if (m.kind == MCP_MSG_INVALID) {
        m.root = NULL;
        m.line = (aw_text){p, n < SHOWN_LINE ? n : SHOWN_LINE};
        if (!m.has_int_id) {
            id_skim s;
            memset(&s, 0, sizeof s);
            skim_bytes(&s, p, n);
            skim_finish_number(&s);
            take_skimmed_id(&m, &s);
        }
    }
    int stop = fn(ctx, &m);
    aw_json_doc_free(doc);
    return stop ? AW_ESTOP : 0;
}

static int emit_oversized(mcp_reader *r, mcp_msg_fn fn, void *ctx)
{
    skim_finish_number(&r->skim);
    mcp_msg m;
    memset(&m, 0, sizeof m);
    m.kind = r->lost ? MCP_MSG_INVALID : MCP_MSG_OVERSIZED;
    if (r->lost)
        m.problem = "it could not be read: out of memory";
    m.bytes = r->discarded;
    take_skimmed_id(&m, &r->skim);
    r->discarding = false;
    r->lost = false;
    r->discarded = 0;
    memset(&r->skim, 0, sizeof r->skim);
    return fn(ctx, &m) ? AW_ESTOP : 0;
}

/* A line that could not be kept whole (no memory): reported, skimmed, so
 * the request it answers still fails clearly. */
static int emit_lost(mcp_reader *r, const char *tail, size_t tail_n, mcp_msg_fn fn, void *ctx)
{
    id_skim s;
    memset(&s, 0, sizeof s);
    skim_bytes(&s, r->line.data, r->line.len);
    skim_bytes(&s, tail, tail_n);
    skim_finish_number(&s);
    mcp_msg m;
    memset(&m, 0, sizeof m);
    m.kind = MCP_MSG_INVALID;
    m.problem = "it could not be read: out of memory";
    m.bytes = r->line.len + tail_n;
    take_skimmed_id(&m, &s);
    return fn(ctx, &m) ? AW_ESTOP : 0;
}

/* The line under way passed max_line: skim what is held and let it go. */
static void start_discarding(mcp_reader *r)
{
    memset(&r->skim, 0, sizeof r->skim);
    skim_bytes(&r->skim, r->line.data, r->line.len);
    r->discarding = true;
    r->discarded = r->line.len;
    if (r->line.cap > KEEP_CAPACITY)
        aw_buf_free(&r->line);
    else
        aw_buf_clear(&r->line);
}

int mcp_reader_feed(mcp_reader *r, const char *p, size_t n, mcp_msg_fn fn, void *ctx)
{
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        size_t used = nl ? seg + 1 : seg;
        if (!r->discarding && r->line.len + seg > r->max_line)
            start_discarding(r);
        if (r->discarding) {
            skim_bytes(&r->skim, p, seg);
            r->discarded += seg;
            p += used;
            n -= used;
            if (nl) {
                int rc = emit_oversized(r, fn, ctx);
                if (rc)
                    return rc;
            }
            continue;
        }
        p += used;
        n -= used;
        if (!nl) {
            if (aw_buf_append(&r->line, p - seg, seg)) {
                /* the line is lost; what follows its end is read as usual */
                start_discarding(r);
                r->lost = true;
                skim_bytes(&r->skim, p - seg, seg);
                r->discarded += seg;
                return AW_ENOMEM;
            }
            continue;
        }
        int rc;
        if (r->line.len == 0) {
            rc = emit_line(r, p - used, seg, fn, ctx); /* the whole line is in this chunk */
        } else if (aw_buf_append(&r->line, p - used, seg)) {
            rc = emit_lost(r, p - used, seg, fn, ctx);
            aw_buf_clear(&r->line);
        } else {
            rc = emit_line(r, r->line.data, r->line.len, fn, ctx);
            aw_buf_clear(&r->line);
        }
        if (rc)
            return rc;
    }
    return 0;
}
