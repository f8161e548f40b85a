/* bench_thread: agentwire's side of the thread benchmark (issue 3).
 *
 *   bench_thread CORPUS.jsonl APPEND_EVENT.json OUT_PREFIX
 *
 * CORPUS and APPEND_EVENT come from gen_thread_corpus; APPEND_EVENT "-"
 * leaves out the append measurements (3). Prints one
 * "key value" line per measurement (bench/run_thread.sh joins them with the
 * JavaScript peer's, bench/peers/thread_peer.js, into table rows) and writes
 * the XML it produced, for the peer to compare byte for byte:
 *
 *   OUT_PREFIX.xml              the whole corpus encoded
 *   OUT_PREFIX.append-<S>MB.xml the thread of S MB plus the first appended event
 *
 * 1. encode: aw_event_list_parse once (not timed), then aw_thread_encode into
 *    a reused aw_buf; best of 5; MB/s of output bytes.
 * 2. end to end: aw_thread_encode_json (what `agentwire thread encode` runs:
 *    each JSON line parsed into reused memory and encoded) from the file's
 *    bytes in memory into a reused aw_buf; best of 5; MB/s of input bytes.
 *    Its output must equal encode's, byte for byte.
 * 3. append: an aw_thread_writer is filled with the corpus's events, in order,
 *    until the document holds S MB (S = 1, 4, 16), then the same 2 KB event
 *    is appended APPENDS times in a row, each append timed on its own; the
 *    median (and the mean, which includes the buffer's occasional doubling)
 *    per append.
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
#define APPENDS 101

static void die(const char *what, const aw_error *err) {
    fprintf(stderr, "bench_thread: %s: %s (line %zu)\n", what, err->message, (size_t)err->line);
    exit(1);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: bench_thread CORPUS.jsonl APPEND_EVENT.json OUT_PREFIX\n");
        return 2;
    }
    size_t in_len, one_len;
    char *in = bench_read_file(argv[1], &in_len);
    int appends = strcmp(argv[2], "-") != 0;
    char *one = appends ? bench_read_file(argv[2], &one_len) : NULL;
    const char *prefix = argv[3];
    char path[4096];
    aw_error err;

    /* ---- 1. in-memory encode ---- */
    aw_event_list *list = NULL;
    if (aw_event_list_parse(in, in_len, NULL, &list, &err)) die("parse", &err);
    const aw_event *events = aw_event_list_items(list);
    size_t nevents = aw_event_list_count(list);
    aw_buf out;
    aw_buf_init(&out, NULL);
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        aw_buf_clear(&out);
        double t0 = bench_now();
        if (aw_thread_encode(events, nevents, NULL, &out, &err)) die("encode", &err);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    printf("events %zu\n", nevents);
    printf("input_bytes %zu\n", in_len);
    printf("aw.encode.out_bytes %zu\n", out.len);
    printf("aw.encode.seconds %.6f\n", best);
    printf("aw.encode.mbps %.1f\n", (double)out.len / best / 1e6);
    snprintf(path, sizeof path, "%s.xml", prefix);
    bench_write_file(path, out.data, out.len);
    aw_buf encoded;
    aw_buf_init(&encoded, NULL);
    if (aw_buf_append(&encoded, out.data, out.len)) die("copy", &err);

    /* ---- 2. JSON lines -> XML, end to end ---- */
    best = 1e30;
    for (int r = 0; r < REPS; r++) {
        aw_buf_clear(&out);
        double t0 = bench_now();
        if (aw_thread_encode_json(in, in_len, NULL, NULL, &out, &err)) die("encode_json", &err);
        double t = bench_now() - t0;
        if (t < best) best = t;
    }
    if (out.len != encoded.len || memcmp(out.data, encoded.data, out.len) != 0) {
        fprintf(stderr, "bench_thread: end-to-end output differs from the in-memory encoder's\n");
        return 1;
    }
    aw_buf_free(&encoded);
    printf("aw.e2e.seconds %.6f\n", best);
    printf("aw.e2e.mbps %.1f\n", (double)in_len / best / 1e6);

    /* ---- 3. append one event to a thread of 1, 4 and 16 MB ---- */
    if (!appends) {
        aw_event_list_free(list);
        aw_buf_free(&out);
        free(in);
        return 0;
    }
    aw_event_list *extra = NULL;
    if (aw_event_list_parse(one, one_len, NULL, &extra, &err)) die("parse append event", &err);
    if (aw_event_list_count(extra) != 1) {
        fprintf(stderr, "bench_thread: %s must hold one event\n", argv[2]);
        return 1;
    }
    const aw_event *ev = aw_event_list_items(extra);
    static const int sizes_mb[] = {1, 4, 16};
    for (size_t s = 0; s < sizeof sizes_mb / sizeof sizes_mb[0]; s++) {
        size_t target = (size_t)sizes_mb[s] * 1000000u;
        aw_thread_writer *w = aw_thread_writer_new(NULL);
        aw_buf doc;
        aw_buf_init(&doc, NULL);
        if (!w || aw_thread_writer_start(w, &doc)) {
            fprintf(stderr, "bench_thread: out of memory\n");
            return 1;
        }
        size_t k = 0;
        while (doc.len < target && k < nevents)
            if (aw_thread_writer_append(w, &events[k++], &doc, &err)) die("append", &err);
        if (doc.len < target) {
            fprintf(stderr, "bench_thread: corpus too small for a %d MB thread\n", sizes_mb[s]);
            return 1;
        }
        size_t before = doc.len;
        double t[APPENDS], sum = 0;
        for (int r = 0; r < APPENDS; r++) {
            double t0 = bench_now();
            if (aw_thread_writer_append(w, ev, &doc, &err)) die("append", &err);
            t[r] = bench_now() - t0;
            sum += t[r];
            if (r == 0) {
                snprintf(path, sizeof path, "%s.append-%dMB.xml", prefix, sizes_mb[s]);
                bench_write_file(path, doc.data, doc.len);
            }
        }
        qsort(t, APPENDS, sizeof t[0], cmp_double);
        printf("aw.append.%d.prefix_events %zu\n", sizes_mb[s], k);
        printf("aw.append.%d.bytes_before %zu\n", sizes_mb[s], before);
        printf("aw.append.%d.bytes_after %zu\n", sizes_mb[s], doc.len);
        printf("aw.append.%d.appends %d\n", sizes_mb[s], APPENDS);
        printf("aw.append.%d.median_us %.3f\n", sizes_mb[s], t[APPENDS / 2] * 1e6);
        printf("aw.append.%d.mean_us %.3f\n", sizes_mb[s], sum / APPENDS * 1e6);
        printf("aw.append.%d.max_us %.3f\n", sizes_mb[s], t[APPENDS - 1] * 1e6);
        aw_thread_writer_free(w);
        aw_buf_free(&doc);
    }

    aw_event_list_free(extra);
    aw_event_list_free(list);
    aw_buf_free(&out);
    free(in);
    free(one);
    return 0;
}
