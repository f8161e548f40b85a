/* The JSON writer: JSON.stringify's exact bytes.
 *
 * Containers are walked with an explicit stack, so documents of any depth
 * are written without recursion. Objects that need reordering (array-index
 * keys first, duplicate keys collapsed) get an order computed once per
 * object; the common object is written as stored. */
#include <stdbool.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "internal/errors.h"
#include "internal/json.h"
#include "internal/utf8.h"

static const char hexdig[] = "0123456789abcdef";

/* What a byte needs inside a string: 0 nothing, 1 an escape ('"', '\\',
 * controls), 2 a look at its UTF-8 sequence (>= 0x80). */
static const unsigned char byte_class[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};

#if defined(__SSE2__)
/* Bit i set when byte i of the 16 at p is not plain (class above != 0):
 * the signed compare counts bytes >= 0x80 as below 0x20. */
static inline unsigned special_mask(const unsigned char *p, __m128i *out) {
    const __m128i v = _mm_loadu_si128((const __m128i *)p);
    const __m128i m = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
    *out = v;
    return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* Room for n more bytes and the terminator, growing out only when needed
 * (aw_buf_reserve is a call into another file; this test is inline). */
static inline int room(aw_buf *out, size_t n) {
    if (out->cap - out->len > n) return 0;
    return aw_buf_reserve(out, n);
}

static inline int put_char(aw_buf *out, char c) {
    if (room(out, 1)) return AW_ENOMEM;
    out->data[out->len++] = c;
    out->data[out->len] = '\0';
    return 0;
}

static inline int put_bytes(aw_buf *out, const char *p, size_t n) {
    if (room(out, n)) return AW_ENOMEM;
    memcpy(out->data + out->len, p, n);
    out->len += n;
    out->data[out->len] = '\0';
    return 0;
}

/* Input is taken in blocks; one reservation per block covers the worst case
 * (a byte becomes at most 6 bytes, "\u0001") plus 16 bytes of slack for
 * vector stores that run past what they keep. */
#define BLOCK 4096
#define GROWTH 6

static inline char *put_hex_escape(char *o, uint32_t cp) {
    o[0] = '\\';
    o[1] = 'u';
    o[2] = hexdig[(cp >> 12) & 15];
    o[3] = hexdig[(cp >> 8) & 15];
    o[4] = hexdig[(cp >> 4) & 15];
    o[5] = hexdig[cp & 15];
    return o + 6;
}

/* The non-ASCII sequence at s[*i] (len bytes in all), as JSON.stringify
 * writes the JavaScript string it stands for. A surrogate's 3-byte form is
 * a lone "\udxxx" escape the reader kept: JSON.stringify writes it back as
 * that escape, or, when replace_lone is set, U+FFFD (what a UTF-16 to
 * UTF-8 encoder makes of it), so that strict consumers accept the output.
 * Two such forms in a row are two lone surrogates, never joined into an
 * astral character: the reader joins real escaped pairs itself, so such a
 * row only comes from bytes that were never JSON (CESU-8). Bytes that are
 * not UTF-8 at all cannot be in a JavaScript string: each maximal subpart
 * becomes U+FFFD, as a decoder shows it. */
static char *put_non_ascii(char *o, const unsigned char *s, size_t *i, size_t len, bool replace_lone) {
    size_t n = aw__utf8_seq_len(s + *i, len - *i);
    if (n) {
        for (size_t k = 0; k < n; k++) o[k] = (char)s[*i + k];
        *i += n;
        return o + n;
    }
    if (aw__utf8_is_surrogate(s + *i, len - *i) && !replace_lone) {
        uint32_t cp = aw__utf8_decode(s + *i, 3);
        *i += 3;
        return put_hex_escape(o, cp);
    }
    memcpy(o, "\xEF\xBF\xBD", 3);
    *i += aw__utf8_invalid_len(s + *i, len - *i);
    return o + 3;
}

/* The letter of JavaScript's two-character escape for c, or 0 where it
 * writes \u00xx. A table, not a switch: escapes come in no predictable
 * order. */
static const char short_escape[128] = {['"'] = '"',  ['\\'] = '\\', ['\b'] = 'b', ['\f'] = 'f',
                                       ['\n'] = 'n', ['\r'] = 'r',   ['\t'] = 't'};

/* c is '"', '\\' or a control character. */
static inline char *put_escape(char *o, unsigned char c) {
    if (short_escape[c]) {
        o[0] = '\\';
        o[1] = short_escape[c];
        return o + 2;
    }
    return put_hex_escape(o, c);
}

static int write_string(aw_buf *out, const char *str, size_t len, bool replace_lone) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    size_t first = len > BLOCK ? BLOCK : len;
    /* the quotes, the first block and its slack */
    if (room(out, 2 + first * GROWTH + 16)) return AW_ENOMEM;
    char *o = out->data + out->len;
    *o++ = '"';
    for (;;) {
        size_t block_end = len - i > BLOCK ? i + BLOCK : len;
        while (i < block_end) {
#if defined(__SSE2__)
            if (i + 16 <= len) {
                __m128i v;
                unsigned mask = special_mask(s + i, &v);
                _mm_storeu_si128((__m128i *)o, v);
                if (!mask) {
                    i += 16;
                    o += 16;
                    continue;
                }
                unsigned k = (unsigned)__builtin_ctz(mask);
                i += k;
                o += k;
            } else
#endif
            {
                /* the last bytes, where a 16-byte load would read past s */
                while (i < block_end && !byte_class[s[i]]) *o++ = (char)s[i++];
                if (i == block_end) break;
            }
            if (s[i] >= 0x80) {
                o = put_non_ascii(o, s, &i, len, replace_lone);
            } else {
                o = put_escape(o, s[i]);
                i++;
            }
        }
        out->len = (size_t)(o - out->data);
        if (i >= len) break;
        size_t next = len - i > BLOCK ? BLOCK : len - i;
        if (room(out, next * GROWTH + 16 + 1)) return AW_ENOMEM;
        o = out->data + out->len;
    }
    *o++ = '"';
    out->len = (size_t)(o - out->data);
    *o = '\0';
    return 0;
}

int aw_json_write_string(aw_buf *out, const char *str, size_t len) {
    return write_string(out, str, len, false);
}

int aw_json_write_string_opts(aw_buf *out, const char *str, size_t len, const aw_json_write_options *opts) {
    return write_string(out, str, len, opts && opts->replace_lone_surrogates);
}

int aw_json_write_number(aw_buf *out, double d) {
    if (d != d || d - d != 0) return aw_buf_append(out, "null", 4); /* NaN, +-inf */
    if (room(out, 32)) return AW_ENOMEM;
    out->len += aw__json_format_double(d, out->data + out->len);
    out->data[out->len] = '\0';
    return 0;
}

static int write_num(aw_buf *out, const aw_json_value *v) {
    /* exact integers that a double holds exactly print as written */
    if ((v->flags & AW_JSON_F_INT) && v->u.num.i > -9007199254740992LL &&
        v->u.num.i < 9007199254740992LL && (double)v->u.num.i == v->u.num.d) {
        if (room(out, 24)) return AW_ENOMEM;
        char *o = out->data + out->len;
        int64_t i = v->u.num.i;
        if (i < 0) *o++ = '-';
        o += aw__json_write_uint(i < 0 ? (uint64_t)(-i) : (uint64_t)i, o);
        out->len = (size_t)(o - out->data);
        *o = '\0';
        return 0;
    }
    return aw_json_write_number(out, v->u.num.d);
}

typedef struct wframe {
    const aw_json_value *v;
    size_t next;      /* position in order (or in members/items) */
    size_t count;     /* entries to write */
    size_t *order;    /* NULL: members in stored order */
    size_t *value_of; /* with order: member whose value to show */
} wframe;

typedef struct writer {
    aw_buf *out;
    const aw_allocator *alloc;
    int indent;
    bool replace_lone;
    wframe *stack;
    size_t depth, cap;
    aw_error *err;
} writer;

static int newline_indent(writer *w, size_t depth) {
    size_t n = 1 + (size_t)w->indent * depth;
    if (aw_buf_reserve(w->out, n)) return AW_ENOMEM;
    char *o = w->out->data + w->out->len;
    o[0] = '\n';
    memset(o + 1, ' ', n - 1);
    w->out->len += n;
    w->out->data[w->out->len] = '\0';
    return 0;
}

static void free_frame(writer *w, wframe *f) {
    aw_free(w->alloc, f->order);
    aw_free(w->alloc, f->value_of);
    f->order = f->value_of = NULL;
}

/* Open a container: write its first bracket (or the empty form) and push a
 * frame when it has content. */
static int open_container(writer *w, const aw_json_value *v) {
    size_t count = aw_json_count(v);
    int obj = v->type == AW_JSON_OBJECT;
    if (count == 0) return put_bytes(w->out, obj ? "{}" : "[]", 2);
    if (w->depth == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        wframe *s = aw_realloc(w->alloc, w->stack, cap * sizeof *s);
        if (!s) return AW_ENOMEM;
        w->stack = s;
        w->cap = cap;
    }
    wframe f = {v, 0, count, NULL, NULL};
    if (obj && (v->flags & (AW_JSON_F_DUPKEYS | AW_JSON_F_INDEXKEYS | AW_JSON_F_UNCHECKED))) {
        f.order = aw_malloc(w->alloc, count * sizeof *f.order);
        f.value_of = aw_malloc(w->alloc, count * sizeof *f.value_of);
        long n = (f.order && f.value_of)
                     ? aw__json_object_order(v->u.obj.members, count, w->alloc, f.order, f.value_of)
                     : -1;
        if (n < 0) {
            free_frame(w, &f);
            return AW_ENOMEM;
        }
        f.count = (size_t)n;
    }
    w->stack[w->depth++] = f;
    return put_char(w->out, obj ? '{' : '[');
}

/* Compact output of a member's key: `,"key":` (without the comma for the
 * first member) in one go when the key is short and needs no escape, as
 * nearly all keys are. Returns 1 when written; 0 when the caller must
 * write the key the general way (nothing written then), including when
 * memory ran out (the general way reports it). */
static int put_plain_key(aw_buf *out, const aw_json_member *m, int comma) {
    size_t n = m->key_len;
    if (n > 64 || room(out, n + 4)) return 0;
    const unsigned char *k = (const unsigned char *)m->key;
    char *o = out->data + out->len + (comma ? 1 : 0) + 1;
    for (size_t i = 0; i < n; i++) {
        if (byte_class[k[i]]) return 0;
        o[i] = (char)k[i];
    }
    o -= 1 + (comma ? 1 : 0);
    if (comma) *o++ = ',';
    *o++ = '"';
    o += n;
    *o++ = '"';
    *o++ = ':';
    *o = '\0';
    out->len = (size_t)(o - out->data);
    return 1;
}

static int write_scalar(writer *w, const aw_json_value *v) {
    switch (v->type) {
    case AW_JSON_NULL: return put_bytes(w->out, "null", 4);
    case AW_JSON_BOOL: return v->u.b ? put_bytes(w->out, "true", 4) : put_bytes(w->out, "false", 5);
    case AW_JSON_NUMBER: return write_num(w->out, v);
    case AW_JSON_STRING: return write_string(w->out, v->u.str.ptr, v->u.str.len, w->replace_lone);
    default: return aw__error_set(w->err, AW_EINVAL, "value of unknown type %d", v->type);
    }
}

static int write_any(writer *w, const aw_json_value *v) {
    if (v->type == AW_JSON_ARRAY || v->type == AW_JSON_OBJECT) return open_container(w, v);
    return write_scalar(w, v);
}

static int run(writer *w, const aw_json_value *root) {
    int rc = write_any(w, root);
    if (rc) return rc;
    while (w->depth) {
        wframe *f = &w->stack[w->depth - 1];
        int obj = f->v->type == AW_JSON_OBJECT;
        if (f->next == f->count) {
            size_t depth = w->depth - 1;
            free_frame(w, f);
            w->depth--;
            if (w->indent && (rc = newline_indent(w, depth))) return rc;
            if ((rc = put_char(w->out, obj ? '}' : ']'))) return rc;
            continue;
        }
        const aw_json_value *child;
        if (obj) {
            size_t idx = f->order ? f->order[f->next] : f->next;
            const aw_json_member *m = &f->v->u.obj.members[idx];
            if (w->indent || !put_plain_key(w->out, m, f->next != 0)) {
                if (f->next && (rc = put_char(w->out, ','))) return rc;
                if (w->indent && (rc = newline_indent(w, w->depth))) return rc;
                if ((rc = write_string(w->out, m->key, m->key_len, w->replace_lone))) return rc;
                if ((rc = w->indent ? put_bytes(w->out, ": ", 2) : put_char(w->out, ':'))) return rc;
            }
            child = f->order ? &f->v->u.obj.members[f->value_of[idx]].value : &m->value;
        } else {
            if (f->next && (rc = put_char(w->out, ','))) return rc;
            if (w->indent && (rc = newline_indent(w, w->depth))) return rc;
            child = &f->v->u.arr.items[f->next];
        }
        f->next++;
        if ((rc = write_any(w, child))) return rc;
    }
    return 0;
}

int aw_json_write(const aw_json_value *v, const aw_json_write_options *opts, aw_buf *out,
                  aw_error *err) {
    if (!v || !out) return aw__error_set(err, AW_EINVAL, "NULL value or buffer");
    writer w = {out, out->alloc, 0, false, NULL, 0, 0, err};
    if (opts) {
        w.indent = opts->indent < 0 ? 0 : opts->indent > 10 ? 10 : opts->indent;
        w.replace_lone = opts->replace_lone_surrogates;
    }
    size_t start = out->len;
    int rc = run(&w, v);
    while (w.depth) free_frame(&w, &w.stack[--w.depth]);
    aw_free(w.alloc, w.stack);
    if (rc) {
        out->len = start; /* leave the buffer as it was */
        if (out->data) out->data[start] = '\0';
        if (rc == AW_ENOMEM) aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    return rc;
}
