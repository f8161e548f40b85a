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
 * freeing the arena (everything expat allocates lives there, and it holds
 * nothing else: no files, no threads), without walking its tables in
 * XML_ParserFree. free is a no-op, and realloc copies to a new piece: what
 * expat grows (its input buffer, its string pools, hash tables, the
 * attribute array) grows by doubling, and what it frees while parsing
 * (tags, pool blocks) it keeps on free lists and reuses, so the arena
 * stays within about twice the memory expat holds at its peak. */
static _Thread_local aw_expat *current; /* the parser whose call is running */

#define PIECE_HEADER 16 /* the piece's size, and 16-byte alignment for what follows */

static void *mm_malloc(size_t n) {
    if (n > SIZE_MAX - 2 * PIECE_HEADER) return NULL;
    size_t size = (n + 15) & ~(size_t)15; /* every piece a multiple of 16: all stay 16-byte aligned */
    char *piece = aw__arena_alloc(&current->mem, PIECE_HEADER + size);
    if (!piece) return NULL;
    memcpy(piece, &size, sizeof size);
    return piece + PIECE_HEADER;
}

static void *mm_realloc(void *p, size_t n) {
    if (!p) return mm_malloc(n);
    size_t size;
    memcpy(&size, (char *)p - PIECE_HEADER, sizeof size);
    if (n <= size) return p;
    void *q = mm_malloc(n);
    if (q) memcpy(q, p, size);
    return q;
}

static void mm_free(void *p) { (void)p; }

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
        aw__arena_free(&x->mem);
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
    aw__arena_free(&x->mem); /* the parser and all it allocated: see mm_malloc */
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
     * most twice the length): room for it and the rest in one block. A
     * failure here is left to expat's own allocation, which reports it. */
    if (len < (SIZE_MAX - 8192) / 2) (void)aw__arena_reserve(&x->mem, 2 * len + 8192);
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
