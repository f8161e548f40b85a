/* gpt-oss's Harmony format. A message to a function carries the
 * recipient in its header:
 *
 *   <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Tokyo"}<|call|>
 *
 * (the recipient may also stand before <|channel|>, and <|constrain|> may
 * be missing, or json glued to the name: "to=functions.shelljson"). Only
 * messages with a recipient are calls; analysis and final messages stay
 * text. The header must end within a few hundred bytes; the arguments end
 * at <|call|>, at the next message, or at the end of the reply (servers
 * often keep the stop token). */
#include <string.h>

#include "internal/dialect.h"

#define LEN(s) (sizeof(s) - 1)
static const char start_tok[] = "<|start|>";
static const char channel_tok[] = "<|channel|>";
static const char message_tok[] = "<|message|>";
static const char call_tok[] = "<|call|>";
static const char end_tok[] = "<|end|>";
#define HEADER_MAX 512

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    if (!s->phase) {
        /* the header, up to <|message|>: a call only with a recipient */
        size_t lim = n < HEADER_MAX ? n : HEADER_MAX;
        size_t from = s->pos ? s->pos : 1;
        size_t m = aw__dialect_find(p, lim, from, message_tok, LEN(message_tok));
        if (m == SIZE_MAX) {
            if (at_end || lim == HEADER_MAX) return AW_DIALECT_NONE;
            size_t again = aw__dialect_resume(lim, LEN(message_tok));
            s->pos = again > from ? again : from;
            return AW_DIALECT_MORE;
        }
        if (aw__dialect_find(p, m, 0, " to=", 4) == SIZE_MAX && aw__dialect_find(p, m, 0, ">to=", 4) == SIZE_MAX)
            return AW_DIALECT_NONE;
        s->phase = 1;
        s->mark = m + LEN(message_tok);
        s->pos = s->mark;
    }
    /* the arguments: up to <|call|>, or the next message's token */
    for (size_t i = s->pos;;) {
        const char *lt = i < n ? memchr(p + i, '<', n - i) : NULL;
        if (!lt) {
            s->pos = n;
            return at_end ? (long)n : AW_DIALECT_MORE;
        }
        i = (size_t)(lt - p);
        const char *const toks[] = {call_tok, end_tok, start_tok, channel_tok};
        const size_t lens[] = {LEN(call_tok), LEN(end_tok), LEN(start_tok), LEN(channel_tok)};
        for (int t = 0; t < 4; t++) {
            size_t k = n - i < lens[t] ? n - i : lens[t];
            if (memcmp(p + i, toks[t], k)) continue;
            if (k < lens[t]) {
                if (at_end) continue;
                s->pos = i;
                return AW_DIALECT_MORE;
            }
            return (long)(t < 2 ? i + lens[t] : i);
        }
        i++;
    }
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    aw_text raw = {p, n};
    size_t m = aw__dialect_find(p, n, 0, message_tok, LEN(message_tok));
    if (m == SIZE_MAX) return AW_DIALECT_NOT_A_CALL;
    size_t to = aw__dialect_find(p, m, 0, "to=", 3);
    if (to == SIZE_MAX) return AW_DIALECT_NOT_A_CALL;
    size_t b = to + 3, e = b;
    while (e < m && !aw__dialect_is_space((unsigned char)p[e]) && p[e] != '<') e++;
    aw_text name = {p + b, e - b};
    if (name.len > 10 && !memcmp(name.ptr, "functions.", 10)) name = (aw_text){name.ptr + 10, name.len - 10};
    if (!out->tool(out, name) && name.len > 4 && !memcmp(name.ptr + name.len - 4, "json", 4)) {
        aw_text unglued = {name.ptr, name.len - 4};
        if (out->tool(out, unglued)) name = unglued;
    }
    size_t ae = n;
    if (n - m >= LEN(message_tok) + LEN(call_tok) && !memcmp(p + n - LEN(call_tok), call_tok, LEN(call_tok)))
        ae = n - LEN(call_tok);
    else if (n - m >= LEN(message_tok) + LEN(end_tok) && !memcmp(p + n - LEN(end_tok), end_tok, LEN(end_tok)))
        ae = n - LEN(end_tok);
    aw_text json = {p + m + LEN(message_tok), ae - m - LEN(message_tok)};
    return aw__dialect_object_call(out, "harmony", name, json, raw, "in <|constrain|>json<|message|>{...}<|call|>");
}

static const aw_dialect_trigger triggers[] = {
    {start_tok, LEN(start_tok), AW_DT_ANYWHERE},
    {channel_tok, LEN(channel_tok), AW_DT_ANYWHERE},
};

const aw_dialect aw__dialect_harmony = {"harmony", AW_DIALECT_HARMONY, triggers, 2, NULL, NULL, 0, scan, parse, NULL};
