/* The readers of tool-call dialects (issue 18): one src/dialect_NAME.c
 * each, behind this interface, driven by the recovery filter of the
 * extractor (transport_recover.c).
 *
 * The filter watches the visible text of a reply for a reader's trigger
 * (a marker such as "<tool_call>" anywhere, or a shape at the start of a
 * line such as "[get_weather("), outside inline code spans and fences of
 * other languages. From the trigger on, the text is a candidate: it is
 * held back (not shown) while the reader's scan decides, byte by byte and
 * across chunks, where it ends or that it is no call at all. A complete
 * candidate is handed to the reader's parse, which reports calls (name and
 * arguments) and malformed calls (with feedback in the dialect's own form)
 * through an aw_dialect_out; the filter then checks each call against the
 * declared tools and hands it to the extractor's accept path.
 *
 * Readers are pure functions of the bytes: no state but the scan struct,
 * no I/O, every allocation through out->alloc. */
#ifndef AW_INTERNAL_DIALECT_H
#define AW_INTERNAL_DIALECT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agentwire/json.h"
#include "agentwire/transport.h"

/* ---- what a reader reports ---------------------------------------------- */

typedef struct aw_dialect_out aw_dialect_out;
struct aw_dialect_out {
    /* A call, with the tool named as written. args is an object, or NULL
     * for none; it is read during the call only. raw is the call's text,
     * repairs the AW_REPAIR_* steps its JSON needed. Nonzero stops the
     * parse (a negative AW_E* code). */
    int (*call)(aw_dialect_out *o, const char *dialect, aw_text name, const aw_json_value *args, aw_text raw,
                unsigned repairs);
    /* A call recognised but malformed: the tool when known, the reason,
     * and one line telling the model how to write it in this dialect. */
    int (*malformed)(aw_dialect_out *o, const char *dialect, aw_text name, aw_reject_reason reason,
                     const char *message);
    /* The declared tool of that name, or NULL: string-carried arguments
     * are typed by its schema, and bare forms (JSON, pythonic) are calls
     * only when they name one. */
    const aw_tool_def *(*tool)(aw_dialect_out *o, aw_text name);
    const aw_allocator *alloc;
    unsigned enabled; /* AW_DIALECT_*: which dialects a shared trigger may be read as */
};

/* ---- the reader interface --------------------------------------------------- */

/* The incremental state of one candidate's scan; each reader uses the
 * fields it needs. Zeroed when the candidate starts. */
typedef struct aw_dialect_scan {
    size_t pos;      /* bytes of the candidate already examined */
    size_t mark;     /* a position the reader keeps (an end it may cut at, a body start) */
    size_t aux;
    int depth;       /* bracket depth of a balanced scan */
    char quote;      /* the open string's quote, or 0 */
    unsigned char escaped;
    unsigned char phase; /* the reader's own sub-state */
    unsigned char kind;  /* which of the reader's forms this candidate is */
    unsigned char unclosed; /* set by a scan that ended the candidate without its closing markup
                               (a new call began): the filter then cuts it before another dialect's call */
} aw_dialect_scan;

/* Scan results: the candidate's length (> 0), or one of these. */
#define AW_DIALECT_MORE 0L   /* need more bytes */
#define AW_DIALECT_NONE (-1L) /* no call: the trigger is text after all */

/* parse() results besides 0 (read: calls and malformed calls reported) and
 * negative AW_E* codes from the out callbacks. */
#define AW_DIALECT_NOT_A_CALL 1
/* From helpers that report a malformed call themselves: done, nothing more
 * to read. */
#define AW_DIALECT_REPORTED 2

/* Where a trigger counts. */
enum { AW_DT_ANYWHERE = 0, AW_DT_LINE_START = 1 };

typedef struct aw_dialect_trigger {
    const char *text;
    unsigned char len;
    unsigned char where; /* AW_DT_* */
} aw_dialect_trigger;

typedef struct aw_dialect {
    const char *name;     /* "hermes": how --dialects and the calls name it */
    unsigned flags;       /* AW_DIALECT_* it reads; active when any is enabled */
    const aw_dialect_trigger *triggers;
    size_t trigger_count;
    /* For shapes rather than markers at the start of a line: does a
     * candidate start at p (a line start, n bytes known, at_end when no more
     * will come)? 1 yes, 0 no, -1 more bytes needed. NULL: none. It may
     * look at most AW_DIALECT_LOOKAHEAD bytes ahead. */
    int (*starts)(const char *p, size_t n, int at_end);
    const char *line_first; /* the bytes such a shape may start with */
    /* Prose after the candidate on the same line makes it a mention ("write
     * <tool_call>{...}</tool_call> to call"), not a call. Off for the
     * dialects of special tokens, which prose does not contain. */
    int mention_rule;
    /* Where does the candidate p[0..n) end? The length, AW_DIALECT_MORE or
     * AW_DIALECT_NONE; never MORE when at_end. Resumes at s->pos, so a
     * candidate costs time linear in its length whatever the chunking. */
    long (*scan)(aw_dialect_scan *s, const char *p, size_t n, int at_end);
    /* Read the complete candidate p[0..n): 0, AW_DIALECT_NOT_A_CALL, or a
     * negative AW_E* code. */
    int (*parse)(const char *p, size_t n, aw_dialect_out *out);
    /* The reader whose triggers this one's content holds (Qwen3-Coder's
     * <function= inside <tool_call>, the <invoke> inside MiniMax's
     * wrapper), or NULL: they do not cut an unclosed candidate short. */
    const struct aw_dialect *inner;
} aw_dialect;

/* How far a starts() function may look ahead of a line start. */
#define AW_DIALECT_LOOKAHEAD 256

/* Every reader, in the order their triggers are tried. */
extern const aw_dialect *const aw__dialects[];
extern const size_t aw__dialect_count;

extern const aw_dialect aw__dialect_hermes, aw__dialect_granite, aw__dialect_qwen3_coder, aw__dialect_llama3,
    aw__dialect_pythonic, aw__dialect_mistral, aw__dialect_deepseek, aw__dialect_kimi_k2, aw__dialect_minimax,
    aw__dialect_function_calls, aw__dialect_harmony, aw__dialect_fenced;

/* ---- helpers the readers share (dialect_common.c) ------------------------------ */

static inline int aw__dialect_is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static inline int aw__dialect_is_ident(unsigned char c, int first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* The bytes a scan of JSON must look at outside strings: quotes,
 * brackets and '<'. */
extern const unsigned char aw__json_stop[256];

/* p[0..len) == lit[0..len): markers are short, and a call to memcmp costs
 * more than comparing them here. */
static inline int aw__dialect_eq(const char *p, const char *lit, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (p[i] != lit[i]) return 0;
    return 1;
}

/* The first occurrence of lit in p[from..n), or SIZE_MAX. */
size_t aw__dialect_find(const char *p, size_t n, size_t from, const char *lit, size_t len);
/* Where an incremental search for a literal of length len resumes once
 * p[0..n) held none: the tail that could still be its start. */
static inline size_t aw__dialect_resume(size_t n, size_t len) { return n >= len ? n - len + 1 : 0; }

/* The end of a candidate that ends just after the literal lit (searched
 * from `from`, or from s->pos once a search has begun): its length, or
 * AW_DIALECT_MORE, or at the end of the reply the whole of it. */
long aw__dialect_scan_until(aw_dialect_scan *s, const char *p, size_t n, size_t from, const char *lit, size_t len,
                            int at_end);

/* A candidate that is one JSON value from s->pos (set by the caller to its
 * first bracket): its length once the value closes, else
 * AW_DIALECT_MORE, or at the end of the reply the whole of it. */
long aw__dialect_scan_value(aw_dialect_scan *s, const char *p, size_t n, int at_end, int python);

/* A section of special tokens (DeepSeek's, Kimi's): a candidate that
 * starts with section_begin ends after section_end, one that starts with
 * a lone call after call_end (at the end of the reply: all of it). */
long aw__dialect_scan_section(aw_dialect_scan *s, const char *p, size_t n, int at_end, const char *section_begin,
                              const char *section_end, const char *call_end);

/* A new document with an empty object for a call's arguments; NULL (and
 * *doc NULL) when memory ran out. */
aw_json_value *aw__dialect_new_args(const aw_allocator *alloc, aw_json_doc **doc);

/* Each BEGIN ... END span in p[i..n) (END may be missing: the span then
 * ends at the next BEGIN or at n): *seg is what lies between; returns
 * where to look for the next, or SIZE_MAX when there is none. */
size_t aw__dialect_next_span(const char *p, size_t n, size_t i, const char *begin, size_t blen, const char *end,
                             size_t elen, aw_text *seg);

/* A call whose arguments are the JSON text json (nothing: no arguments),
 * which must be one object; `where` says where it stands, for the
 * feedback ("after <|tool_call_argument_begin|>"). */
int aw__dialect_object_call(aw_dialect_out *out, const char *dialect, aw_text name, aw_text json, aw_text raw,
                            const char *where);

/* The JSON after a marker (granite, hermes, mistral): parsed with repair
 * into *doc, 0; AW_DIALECT_NOT_A_CALL for an illustration; or, reported
 * as malformed with `fix`, AW_DIALECT_REPORTED with *doc NULL: no JSON, stray bytes around
 * it, or (closed 0: no closing tag came) a reply that ended inside it. */
int aw__dialect_marked_json(aw_dialect_out *out, const char *dialect, aw_text body, int closed, const char *fix,
                            aw_json_doc **doc, unsigned *repairs);

/* A balanced scan of JSON (or Python literals, when python) from s->pos:
 * strings with their escapes are skipped, brackets counted from the first
 * one. Returns the offset just after the bracket that closes the first,
 * or SIZE_MAX while it is open. */
size_t aw__dialect_balance(aw_dialect_scan *s, const char *p, size_t n, int python);

/* p[0..n) without blanks around it. */
aw_text aw__dialect_trim(const char *p, size_t n);
/* One newline removed from each end (how XML-ish dialects write a value on
 * lines of its own). */
aw_text aw__dialect_trim_newlines(const char *p, size_t n);

/* Parse JSON strictly, then with repair. *doc NULL when nothing came of it. */
int aw__dialect_parse_json(const aw_allocator *alloc, const char *p, size_t n, aw_json_doc **doc,
                           unsigned *repairs);

/* Does JSON-ish text hold a placeholder outside its strings ("<args>",
 * "...", "…")? Then it illustrates a call rather than making one. */
int aw__dialect_is_illustration(const char *p, size_t n);
/* aw__dialect_parse_json for the JSON of a call: AW_DIALECT_NOT_A_CALL
 * when it is no JSON but an illustration. */
int aw__dialect_parse_call_json(const aw_allocator *alloc, const char *p, size_t n, aw_json_doc **doc,
                                unsigned *repairs);

/* A call object in the common JSON shapes: {"name", "arguments" |
 * "parameters" | "args" | "input"} (arguments an object or a JSON string),
 * OpenAI's {"type": "function", "function": {"name", "arguments"}}.
 * Reported through out as a call of `dialect`. Returns 0, or
 * AW_DIALECT_NOT_A_CALL when v is not call-shaped, or a negative code.
 * strict: a bare form (no marker announced a call), so a call must name a
 * declared tool (undeclared: not a call, silently). */
int aw__dialect_json_call(aw_dialect_out *out, const char *dialect, const aw_json_value *v, aw_text raw,
                          unsigned repairs, int strict);
/* An object, a list of call objects, or {"tool_calls": [...]}: each a call.
 * NOT_A_CALL when none of it is call-shaped. */
int aw__dialect_json_calls(aw_dialect_out *out, const char *dialect, const aw_json_value *v, aw_text raw,
                           unsigned repairs, int strict);

#define AW__DIALECT_NO_TEXT ((aw_text){"", 0})

/* out->malformed with the message formatted (up to 320 bytes). */
int aw__dialect_malformedf(aw_dialect_out *out, const char *dialect, aw_text name, aw_reject_reason reason,
                           const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* ---- bodies that more than one reader's tag may hold ------------------------- */

/* One or more <function=NAME>...</function> (Qwen3-Coder's parameters, or
 * Llama 3.1's JSON object) in p[0..n), reported as calls of raw. */
int aw__qwen3_parse_functions(const char *p, size_t n, aw_text raw, aw_dialect_out *out);
/* GLM's NAME<arg_key>K</arg_key><arg_value>V</arg_value>... in p[0..n). */
int aw__glm45_parse_body(const char *p, size_t n, aw_text raw, aw_dialect_out *out);

/* <invoke name=..><parameter name=..>..</parameter></invoke>, once or more,
 * in p[0..n): the grammar of the function_calls and minimax dialects;
 * form is how a call is written, for the feedback. */
int aw__invoke_parse(const char *p, size_t n, aw_text raw, const char *dialect, const char *form,
                     aw_dialect_out *out);

/* ---- string-carried arguments (dialect_args.c) ------------------------------ */

/* The value of argument `key` written as the string s[0..n) (an XML
 * parameter, a GLM value), typed by the tool's JSON Schema: "5" is 5 where
 * the property is an integer or number, true/false for booleans, null for
 * null, JSON text parsed where it is an object or array (also for a union
 * of types, as long as the text fits one); anything else, or no schema, is
 * the string. NULL when out of memory. */
aw_json_value *aw__dialect_typed_value(aw_json_doc *doc, const aw_allocator *alloc, const aw_json_value *schema,
                                       const char *key, size_t key_len, const char *s, size_t n);

/* ---- Python literals (dialect_pylit.c) ------------------------------------------ */

/* Read `name(k=v, ...)` at p[*pos..n) (blanks skipped; a dotted name such as
 * brave_search.call is returned whole): the name, and the keyword
 * arguments as an object in doc. Values are Python literals: strings in
 * either quote with escapes, numbers, True/False/None, lists, tuples,
 * dicts. 0 and *pos past ')'; AW_ESYNTAX when it is no such call (*why
 * says what), AW_ENOMEM. */
int aw__pylit_call(const char *p, size_t n, size_t *pos, const aw_allocator *alloc, aw_json_doc *doc,
                   aw_text *name, aw_json_value **args, const char **why);

#endif
