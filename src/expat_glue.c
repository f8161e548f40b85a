/* expat with agentwire's allocator, DOCTYPE refusal and error reporting. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "internal/errors.h"
#include "internal/expat.h"

/* expat's memory comes from an arena of its own, one per parser: a
 * document used to cost some 30 allocations and 180 frees through the
 * hooks below; now a few arena blocks, and the parser is dropped by
 * freeing the arena (everything expat allocates lives there or in the big
 * pieces' list, and it holds nothing else: no files, no threads), without
 * walking its tables in XML_ParserFree. In the arena, free is a no-op and
 * realloc copies to a new piece; what expat frees while parsing (tags,
 * pool blocks) it keeps on free lists and reuses. Pieces of BIG_PIECE
 * bytes and more (a large document's input buffer, the string pool of a
 * long attribute value, the tables of many names) come from the allocator
 * itself and are freed and grown in place: expat grows those by
 * doubling, which in the arena would leave as much again behind. */
static _Thread_local aw_expat *current; /* the parser whose call is running */

#define BIG_PIECE ((size_t)64 << 10)

/* Just before every piece: its size (a multiple of 16, so that pieces
 * stay 16-byte aligned) and whether it is big. */
typedef struct piece_header {
    size_t size;
    size_t big;
} piece_header;

struct aw_expat_big {
    struct aw_expat_big *prev, *next;
    piece_header h;
};

static piece_header *header_of(void *p) { return (piece_header *)p - 1; }
static struct aw_expat_big *big_of(void *p) { return (struct aw_expat_big *)p - 1; }

static void link_big(aw_expat *x, struct aw_expat_big *b) {
    b->prev = NULL;
    b->next = x->big;
    if (x->big) x->big->prev = b;
    x->big = b;
}

static void unlink_big(aw_expat *x, struct aw_expat_big *b) {
    if (b->prev) b->prev->next = b->next;
    else x->big = b->next;
    if (b->next) b->next->prev = b->prev;
}

static void *mm_malloc(size_t n) {
    if (n > SIZE_MAX - 2 * sizeof(struct aw_expat_big)) return NULL;
    size_t size = (n + 15) & ~(size_t)15;
    if (size >= BIG_PIECE) {
        struct aw_expat_big *b = aw_malloc(current->alloc, sizeof *b + size);
        if (!b) return NULL;
        b->h.size = size;
        b->h.big = 1;
        link_big(current, b);
        return b + 1;
    }
    piece_header *h = aw__arena_alloc(&current->mem, sizeof *h + size);
    if (!h) return NULL;
    h->size = size;
    h->big = 0;
    return h + 1;
}

static void *mm_realloc(void *p, size_t n) {
    if (!p) return mm_malloc(n);
    piece_header *h = header_of(p);
    if (n <= h->size) return p;
    if (h->big) {
        if (n > SIZE_MAX - 2 * sizeof(struct aw_expat_big)) return NULL;
        size_t size = (n + 15) & ~(size_t)15;
        struct aw_expat_big *b = big_of(p);
        unlink_big(current, b);
        struct aw_expat_big *grown = aw_realloc(current->alloc, b, sizeof *b + size);
        if (!grown) {
            link_big(current, b); /* untouched: expat keeps the old piece */
            return NULL;
        }
        grown->h.size = size;
        link_big(current, grown);
        return grown + 1;
    }
    void *q = mm_malloc(n);
    if (q) memcpy(q, p, h->size);
    return q;
}

static void mm_free(void *p) {
    if (!p || !header_of(p)->big) return;
    struct aw_expat_big *b = big_of(p);
    unlink_big(current, b);
    aw_free(current->alloc, b);
}

/* Everything expat allocated for x. */
static void drop_memory(aw_expat *x) {
    while (x->big) {
        struct aw_expat_big *b = x->big;
        x->big = b->next;
        aw_free(x->alloc, b);
    }
    aw__arena_free(&x->mem);
}

static const XML_Memory_Handling_Suite suite = {mm_malloc, mm_realloc, mm_free};

static void XMLCALL on_doctype(void *ud, const XML_Char *name, const XML_Char *sysid,
                               const XML_Char *pubid, int has_internal_subset) {
    (void)name;
    (void)sysid;
    (void)pubid;
    (void)has_internal_subset;
    aw_expat *x = ud;
    x->refused = 1;
    aw__expat_fail(x, AW_ESYNTAX, "a DOCTYPE is not allowed (entity and DTD processing are refused)");
}

static void XMLCALL on_entity_decl(void *ud, const XML_Char *name, int is_param, const XML_Char *value,
                                   int value_len, const XML_Char *base, const XML_Char *sysid,
                                   const XML_Char *pubid, const XML_Char *notation) {
    (void)name; (void)is_param; (void)value; (void)value_len;
    (void)base; (void)sysid; (void)pubid; (void)notation;
    aw_expat *x = ud;
    x->refused = 1;
    aw__expat_fail(x, AW_ESYNTAX, "entity declarations are not allowed");
}

/* expat keys the hash tables of element and attribute names with a random
 * salt (so that no one can send names that all collide), and by default
 * draws that salt from the kernel for every parser: a getrandom system call
 * per document, which took 2.5 to 3.5 µs on the benchmark machine, as long
 * as parsing a few KB. One salt drawn once per process protects the same
 * way (it is just as unknown to the sender of a document) without the
 * call. When the kernel has no randomness to give, 0 is returned and expat
 * draws its own salt as before. */
static unsigned long process_salt(void) {
    static _Atomic unsigned long salt;
    unsigned long s = atomic_load_explicit(&salt, memory_order_relaxed);
    if (s) return s;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) return 0;
    atomic_store_explicit(&salt, s, memory_order_relaxed); /* a racing thread's salt is as good */
    return s;
}

int aw__expat_init(aw_expat *x, const aw_allocator *alloc, aw_error *err) {
    memset(x, 0, sizeof *x);
    x->alloc = alloc;
    x->err = err;
    aw__arena_init(&x->mem, alloc);
    aw_expat *saved = current;
    current = x;
    x->parser = XML_ParserCreate_MM("UTF-8", &suite, NULL);
    current = saved;
    if (!x->parser) {
        drop_memory(x);
        return aw__error_set(err, AW_ENOMEM, "out of memory");
    }
    unsigned long salt = process_salt();
    if (salt) XML_SetHashSalt(x->parser, salt);
    XML_SetUserData(x->parser, x);
    XML_SetStartDoctypeDeclHandler(x->parser, on_doctype);
    XML_SetEntityDeclHandler(x->parser, on_entity_decl);
    /* never read external entities or parameter entities */
    XML_SetParamEntityParsing(x->parser, XML_PARAM_ENTITY_PARSING_NEVER);
    return 0;
}

void aw__expat_free(aw_expat *x) {
    if (!x->parser) return;
    drop_memory(x); /* the parser and all it allocated: see mm_malloc */
    x->parser = NULL;
}

void aw__expat_fail(aw_expat *x, int code, const char *fmt, ...) {
    if (x->stopped) return;
    x->stopped = 1;
    x->stop_code = code;
    if (x->err) {
        char msg[AW_ERROR_MESSAGE_MAX];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        size_t off = (size_t)XML_GetCurrentByteIndex(x->parser);
        aw__error_at(x->err, code, x->text, x->len, off, "%s", msg);
    }
    XML_StopParser(x->parser, XML_FALSE);
}

int aw__expat_parse(aw_expat *x, const char *text, size_t len) {
    x->text = text;
    x->len = len;
    /* expat copies the text into a buffer of the next power of two (at
     * most twice the length): room for it, when it is not a big piece, and
     * for the rest in one block. A failure here is left to expat's own
     * allocation, which reports it. */
    (void)aw__arena_reserve(&x->mem, (len < BIG_PIECE / 2 ? 2 * len : 0) + 8192);
    aw_expat *saved = current;
    current = x;
    size_t pos = 0;
    enum XML_Status st = XML_STATUS_OK;
    do {
        size_t n = len - pos;
        if (n > (1u << 30)) n = 1u << 30;
        st = XML_Parse(x->parser, text + pos, (int)n, pos + n == len);
        pos += n;
    } while (st == XML_STATUS_OK && pos < len);
    current = saved;
    if (x->stopped) return x->stop_code;
    if (st != XML_STATUS_OK) {
        enum XML_Error code = XML_GetErrorCode(x->parser);
        if (code == XML_ERROR_NO_MEMORY) return aw__error_set(x->err, AW_ENOMEM, "out of memory");
        size_t off = (size_t)XML_GetCurrentByteIndex(x->parser);
        int aw_code = code == XML_ERROR_INVALID_TOKEN && off < len && ((unsigned char)text[off] >= 0x80)
                          ? AW_EUTF8 : AW_ESYNTAX;
        return aw__error_at(x->err, aw_code, text, len, off, "malformed XML: %s", XML_ErrorString(code));
    }
    return 0;
}
