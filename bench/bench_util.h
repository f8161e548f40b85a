/* What every benchmark program needs and none of them measures: clocks,
 * whole-file reading and writing, a fixed-seed random generator and a
 * growable text buffer for the corpus generators. Header-only, because
 * each bench/ C file is its own program (CMake builds one per file).
 * Failures end the program: a benchmark has no caller to report to. */
/* Programs using it define _POSIX_C_SOURCE 200809L before any include. */
#ifndef AW_BENCH_UTIL_H
#define AW_BENCH_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/buf.h"

/* Wall-clock seconds, monotonic. */
static inline double bench_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds of the whole process: what the rest of the machine's load
 * does not inflate. */
static inline double bench_cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The whole file, NUL-terminated; *len its size. */
static inline char *bench_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        exit(1);
    }
    fclose(f);
    p[n] = 0;
    *len = (size_t)n;
    return p;
}

static inline void bench_write_file(const char *path, const char *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

/* xorshift64*: the corpora are made from fixed seeds, so the same bytes
 * come out on every machine. */
static inline uint64_t bench_xorshift(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1Dull;
}

/* splitmix64, for the benchmarks that build their input in memory. */
typedef struct bench_rng {
    uint64_t s;
} bench_rng;

static inline uint64_t bench_splitmix(bench_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline void bench_oom(void) {
    fputs("benchmark: out of memory\n", stderr);
    exit(1);
}

/* Appending to an aw_buf, ending the program when memory runs out. */
static inline void bench_put(aw_buf *b, const char *s) {
    if (aw_buf_append_str(b, s)) bench_oom();
}

static inline void bench_putn(aw_buf *b, const char *s, size_t n) {
    if (aw_buf_append(b, s, n)) bench_oom();
}

#define BENCH_PUTF(b, ...)                                \
    do {                                                  \
        if (aw_buf_printf((b), __VA_ARGS__)) bench_oom(); \
    } while (0)

/* A growable text, always NUL-terminated. */
typedef struct bench_text {
    char *p;
    size_t n, cap;
} bench_text;

/* Room for n more bytes and the NUL. */
static inline void bench_text_reserve(bench_text *b, size_t n) {
    if (b->n + n + 1 <= b->cap) return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        perror("realloc");
        exit(1);
    }
    b->p = p;
    b->cap = cap;
}

static inline void bench_text_add(bench_text *b, const char *s, size_t n) {
    bench_text_reserve(b, n);
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static inline void bench_text_puts(bench_text *b, const char *s) { bench_text_add(b, s, strlen(s)); }

static inline void bench_text_printf(bench_text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void bench_text_printf(bench_text *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        perror("vsnprintf");
        exit(1);
    }
    bench_text_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

#endif
