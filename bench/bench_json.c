/* bench_json: agentwire's side of the JSON benchmark (issue 2).
 *
 *   bench_json CORPUS.jsonl OUT.jsonl
 *
 * CORPUS comes from gen_json_corpus. Prints one "key value" line per
 * measurement (bench/run_json.sh joins them with the JavaScript peer's,
 * bench/peers/json_peer.js, into table rows) and writes what the writer
 * produced, every document compact and followed by "\n", to OUT.jsonl, for
 * the peer to compare byte for byte with JSON.stringify's output.
 *
 * The corpus is read into memory and its lines found once, untimed (the
 * peer likewise splits its string into lines untimed). Then, best of 5 each:
 *
 * 1. parse: aw_json_parse of every line, each document freed once parsed
 *    (the peer drops each JSON.parse value likewise); MB/s of input bytes
 *    (the whole file, newlines included).
 * 2. jsonl: the streaming JSON-lines reader (aw_jsonl_feed) over the file's
 *    bytes in 64 KiB chunks, as a program reading a file would feed it, with
 *    a callback that counts values; MB/s of input bytes.
 * 3. parse_keep: aw_json_parse of every line, all documents kept (the peer
 *    keeps all JSON.parse values in an array) and freed after the clock
 *    stops. This one mostly measures how fast fresh memory comes from the
 *    system (page faults): about 1.5 times the input is allocated.
 * 4. write: aw_json_write (compact) of every document kept by 3, plus "\n",
 *    into one reused aw_buf; MB/s of output bytes.
 *
 * MB is 10^6 bytes. Times come from clock_gettime(CLOCK_MONOTONIC). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentwire/agentwire.h"
#include "bench_util.h"

#define REPS 5
#define CHUNK (64 * 1024)

static void die(const char *what, size_t line, const aw_error *err) {
    fprintf(stderr, "bench_json: %s: line %zu: %s (column %zu)\n", what, line, err->message, (size_t)err->column);
    exit(1);
}

typedef struct line {
    size_t off, len;
} line;

typedef struct counter {
    size_t values, bad;
} counter;

static int count_value(void *ctx, size_t lineno, const aw_json_value *root, const aw_error *err) {
    counter *c = ctx;
    (void)lineno;
    if (root) c->values++;
    if (err) c->bad++;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_json CORPUS.jsonl OUT.jsonl\n");
        return 2;
    }
    size_t in_len;
    char *in = bench_read_file(argv[1], &in_len);
    aw_error err;

    /* the lines, untimed; blank lines skipped, as the JSON-lines reader does */
    size_t nlines = 0, cap = 1024;
    line *lines = malloc(cap * sizeof *lines);
    for (size_t pos = 0; pos < in_len;) {
        const char *nl = memchr(in + pos, '\n', in_len - pos);
        size_t end = nl ? (size_t)(nl - in) : in_len;
        size_t k = pos;
        while (k < end && (in[k] == ' ' || in[k] == '\t' || in[k] == '\r')) k++;
        if (k < end) {
            if (nlines == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
            if (!lines) {
                fprintf(stderr, "bench_json: out of memory\n");
                return 1;
            }
            lines[nlines].off = pos;
            lines[nlines].len = end - pos;
            nlines++;
        }
        pos = end + 1;
    }
    aw_json_doc **docs = calloc(nlines ? nlines : 1, sizeof *docs);
    if (!docs) {
        fprintf(stderr, "bench_json: out of memory\n");
        return 1;
    }

    /* ---- 1. aw_json_parse of every line, each document freed ---- */
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (size_t i = 0; i < nlines; i++) {
            aw_json_doc *d;
            if (aw_json_parse(in + lines[i].off, lines[i].len, NULL, &d, &err)) die("parse", i + 1, &err);
            aw_json_doc_free(d);
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("lines %zu\n", nlines);
    printf("input_bytes %zu\n", in_len);
    printf("aw.parse.seconds %.6f\n", best);
    printf("aw.parse.mbps %.1f\n", (double)in_len / best / 1e6);

    /* ---- 2. the streaming JSON-lines reader ---- */
    best = 1e30;
    for (int r = 0; r < REPS; r++) {
        counter c = {0, 0};
        double t0 = bench_now();
        aw_jsonl_reader *rd = aw_jsonl_reader_new(NULL);
        if (!rd) {
            fprintf(stderr, "bench_json: out of memory\n");
            return 1;
        }
        for (size_t pos = 0; pos < in_len; pos += CHUNK) {
            size_t n = in_len - pos < CHUNK ? in_len - pos : CHUNK;
            if (aw_jsonl_feed(rd, in + pos, n, count_value, &c, &err)) die("jsonl feed", 0, &err);
        }
        if (aw_jsonl_finish(rd, count_value, &c, &err)) die("jsonl finish", 0, &err);
        aw_jsonl_reader_free(rd);
        double t = bench_now() - t0;
        if (t < best) best = t;
        if (c.values != nlines || c.bad) {
            fprintf(stderr, "bench_json: the JSON-lines reader saw %zu values and %zu bad lines, expected %zu and 0\n",
                    c.values, c.bad, nlines);
            return 1;
        }
    }
    printf("aw.jsonl.seconds %.6f\n", best);
    printf("aw.jsonl.mbps %.1f\n", (double)in_len / best / 1e6);

    /* ---- 3. aw_json_parse of every line, all documents kept ---- */
    best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = bench_now();
        for (size_t i = 0; i < nlines; i++)
            if (aw_json_parse(in + lines[i].off, lines[i].len, NULL, &docs[i], &err)) die("parse", i + 1, &err);
        double t = bench_now() - t0;
        if (t < best) best = t;
        if (r + 1 < REPS)
            for (size_t i = 0; i < nlines; i++) aw_json_doc_free(docs[i]);
    }
    printf("aw.parse_keep.seconds %.6f\n", best);
    printf("aw.parse_keep.mbps %.1f\n", (double)in_len / best / 1e6);

    /* ---- 4. aw_json_write of every document ---- */
    aw_buf out;
    aw_buf_init(&out, NULL);
    best = 1e30;
    for (int r = 0; r < REPS; r++) {
        aw_buf_clear(&out);
        double t0 = bench_now();
        for (size_t i = 0; i < nlines; i++) {
            if (aw_json_write(aw_json_doc_root(docs[i]), NULL, &out, &err)) die("write", i + 1, &err);
            if (aw_buf_putc(&out, '\n')) {
                fprintf(stderr, "bench_json: out of memory\n");
                return 1;
            }
        }
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("aw.write.out_bytes %zu\n", out.len);
    printf("aw.write.seconds %.6f\n", best);
    printf("aw.write.mbps %.1f\n", (double)out.len / best / 1e6);
    bench_write_file(argv[2], out.data, out.len);

    for (size_t i = 0; i < nlines; i++) aw_json_doc_free(docs[i]);
    free(docs);
    free(lines);
    aw_buf_free(&out);
    free(in);
    return 0;
}
