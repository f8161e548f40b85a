/* bench_snapshot: agentwire's side of the snapshot benchmark (issue 6).
 *
 *   bench_snapshot STATE.json OUT.json
 *
 * STATE comes from gen_state_corpus (a full agent state of about 20 MB with
 * 10,000 messages). Slims it with the 'standard' configuration (the seed's
 * defaults: 50 messages, 20 steps, 2,000 characters of content, tool
 * results and steps kept), end to end from the file's bytes in memory:
 *
 *   aw_json_parse -> aw_snapshot_slim -> aw_json_write (compact) -> free
 *
 * best of 5, MB/s of input bytes; also the best time of each phase on its
 * own. Prints one "key value" line per measurement (bench/run_snapshot.sh
 * joins them with the JavaScript peer's, bench/peers/snapshot_peer.js) and
 * writes the snapshot to OUT.json for the peer to compare.
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

static void die(const char *what, const aw_error *err) {
    fprintf(stderr, "bench_snapshot: %s: %s (line %zu, column %zu)\n", what, err->message, (size_t)err->line,
            (size_t)err->column);
    exit(1);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: bench_snapshot STATE.json OUT.json\n");
        return 2;
    }
    size_t in_len;
    char *in = bench_read_file(argv[1], &in_len);
    aw_slim_config cfg;
    if (aw_slim_preset("standard", &cfg)) {
        fprintf(stderr, "bench_snapshot: no 'standard' preset\n");
        return 1;
    }
    aw_error err;
    aw_buf out;
    aw_buf_init(&out, NULL);
    double best = 1e30, best_parse = 1e30, best_slim = 1e30, best_write = 1e30, best_free = 1e30;
    size_t messages = 0, steps = 0;
    for (int r = 0; r < REPS; r++) {
        aw_buf_clear(&out);
        double t0 = bench_now();
        aw_json_doc *state = NULL, *snap = NULL;
        if (aw_json_parse(in, in_len, NULL, &state, &err)) die("parse", &err);
        double t1 = bench_now();
        if (aw_snapshot_slim(aw_json_doc_root(state), &cfg, NULL, &snap, &err)) die("slim", &err);
        double t2 = bench_now();
        if (aw_json_write(aw_json_doc_root(snap), NULL, &out, &err)) die("write", &err);
        double t3 = bench_now();
        messages = aw_json_count(aw_json_get(aw_json_doc_root(state), "messages"));
        steps = aw_json_count(aw_json_get(aw_json_doc_root(state), "steps"));
        double t4 = bench_now();
        aw_json_doc_free(snap);
        aw_json_doc_free(state);
        double t5 = bench_now();
        double t = (t3 - t0) + (t5 - t4);
        if (t < best) best = t;
        if (t1 - t0 < best_parse) best_parse = t1 - t0;
        if (t2 - t1 < best_slim) best_slim = t2 - t1;
        if (t3 - t2 < best_write) best_write = t3 - t2;
        if (t5 - t4 < best_free) best_free = t5 - t4;
    }
    printf("input_bytes %zu\n", in_len);
    printf("messages %zu\n", messages);
    printf("steps %zu\n", steps);
    printf("aw.out_bytes %zu\n", out.len);
    printf("aw.seconds %.6f\n", best);
    printf("aw.mbps %.1f\n", (double)in_len / best / 1e6);
    printf("aw.parse_ms %.3f\n", best_parse * 1e3);
    printf("aw.slim_ms %.3f\n", best_slim * 1e3);
    printf("aw.write_ms %.3f\n", best_write * 1e3);
    printf("aw.free_ms %.3f\n", best_free * 1e3);
    bench_write_file(argv[2], out.data, out.len);
    aw_buf_free(&out);
    free(in);
    return 0;
}
