#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "testutil.h"

uint64_t aw_test_next64(aw_test_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint32_t aw_test_below(aw_test_rng *r, uint32_t n) { return (uint32_t)(aw_test_next64(r) % n); }

char *aw_test_write_json(const aw_json_value *v, int indent, size_t *len) {
    aw_buf b;
    aw_buf_init(&b, NULL);
    aw_json_write_options o = {.indent = indent};
    aw_error err;
    if (aw_json_write(v, &o, &b, &err)) fail_msg("aw_json_write: %s", err.message);
    if (!b.data && aw_buf_reserve(&b, 0)) fail_msg("out of memory");
    if (len) *len = b.len;
    return b.data;
}

char *aw_test_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else {
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) return NULL;
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

typedef struct sink {
    char *data;
    size_t len, cap;
} sink;

static void sink_add(sink *s, const char *p, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap < s->len + n + 1) cap *= 2;
        char *d = realloc(s->data, cap);
        if (!d) abort();
        s->data = d;
        s->cap = cap;
    }
    memcpy(s->data + s->len, p, n);
    s->len += n;
    s->data[s->len] = '\0';
}

int aw_test_run_cmd(const char *cmd, const char *stdin_data, size_t stdin_len, char **out, size_t *out_len,
                    char **err, size_t *err_len) {
    int in_p[2], out_p[2], err_p[2];
    if (pipe(in_p) || pipe(out_p) || pipe(err_p)) return -1;
    signal(SIGPIPE, SIG_IGN);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(in_p[0], 0);
        dup2(out_p[1], 1);
        dup2(err_p[1], 2);
        close(in_p[0]); close(in_p[1]); close(out_p[0]); close(out_p[1]); close(err_p[0]); close(err_p[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(in_p[0]);
    close(out_p[1]);
    close(err_p[1]);
    fcntl(in_p[1], F_SETFL, O_NONBLOCK);
    sink so = {0}, se = {0};
    size_t sent = 0;
    int in_open = 1, out_open = 1, err_open = 1;
    if (!stdin_data || stdin_len == 0) {
        close(in_p[1]);
        in_open = 0;
    }
    char buf[65536];
    while (out_open || err_open || in_open) {
        struct pollfd fds[3];
        int nf = 0, io = -1, oo = -1, eo = -1;
        if (in_open) fds[io = nf++] = (struct pollfd){in_p[1], POLLOUT, 0};
        if (out_open) fds[oo = nf++] = (struct pollfd){out_p[0], POLLIN, 0};
        if (err_open) fds[eo = nf++] = (struct pollfd){err_p[0], POLLIN, 0};
        if (poll(fds, (nfds_t)nf, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (io >= 0 && fds[io].revents) {
            ssize_t w = write(in_p[1], stdin_data + sent, stdin_len - sent);
            if (w > 0) sent += (size_t)w;
            if (w < 0 && errno != EAGAIN) sent = stdin_len;
            if (sent >= stdin_len) {
                close(in_p[1]);
                in_open = 0;
            }
        }
        if (oo >= 0 && fds[oo].revents) {
            ssize_t r = read(out_p[0], buf, sizeof buf);
            if (r > 0) sink_add(&so, buf, (size_t)r);
            else out_open = 0;
        }
        if (eo >= 0 && fds[eo].revents) {
            ssize_t r = read(err_p[0], buf, sizeof buf);
            if (r > 0) sink_add(&se, buf, (size_t)r);
            else err_open = 0;
        }
    }
    if (in_open) close(in_p[1]);
    close(out_p[0]);
    close(err_p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sink_add(&so, "", 0);
    sink_add(&se, "", 0);
    if (out) *out = so.data; else free(so.data);
    if (out_len) *out_len = so.len;
    if (err) *err = se.data; else free(se.data);
    if (err_len) *err_len = se.len;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void aw_test_check_appended(const aw_buf *out, const char *prefix, size_t prefix_len, int rc, const aw_error *err,
                            const char *want, size_t want_len) {
    if (rc == 0) {
        assert_int_equal(out->len, prefix_len + want_len);
        assert_memory_equal(out->data, prefix, prefix_len);
        assert_memory_equal(out->data + prefix_len, want, want_len);
        return;
    }
    assert_int_equal(rc, AW_ENOMEM);
    assert_int_equal(err->code, AW_ENOMEM);
    assert_int_equal(out->len, prefix_len);
    assert_memory_equal(out->data, prefix, prefix_len);
}

/* 1 when seq[0..len) is a well-formed UTF-8 sequence of one character,
 * decided from the code point it spells. */
static int well_formed_one(const unsigned char *seq, size_t len) {
    unsigned c = seq[0];
    size_t want = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (want != len) return 0;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t i = 1; i < len; i++) {
        if ((seq[i] & 0xC0) != 0x80) return 0;
        cp = cp << 6 | (seq[i] & 0x3Fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    return cp >= least[len] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

/* 1 when p[0..k) is how some well-formed sequence starts: tried with every
 * second byte when only the lead is given, the rest filled with 0x80. */
static int starts_well_formed(const unsigned char *p, size_t k) {
    for (size_t len = k < 2 ? 2 : k; len <= 4; len++) {
        unsigned char seq[4];
        memcpy(seq, p, k);
        for (unsigned second = 0x80; second <= 0xBF; second++) {
            if (k < 2) seq[1] = (unsigned char)second;
            for (size_t i = k < 2 ? 2 : k; i < len; i++) seq[i] = 0x80;
            if (well_formed_one(seq, len)) return 1;
            if (k >= 2) break;
        }
    }
    return 0;
}

size_t aw_test_utf8_subpart(const unsigned char *p, size_t n) {
    size_t k = 1;
    while (k < n && k < 3 && starts_well_formed(p, k + 1)) k++;
    return k;
}

bool aw_test_pid_alive(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z' && close_paren[2] != 'X';
}

bool aw_test_store_url(char *url, size_t url_cap, char *dir, size_t dir_cap)
{
    const char *pg = getenv("AW_PG_URL");
    dir[0] = 0;
    if (pg && *pg) {
        snprintf(url, url_cap, "%s", pg);
        return true;
    }
    snprintf(dir, dir_cap, "/tmp/aw-store-test.XXXXXX");
    if (!mkdtemp(dir))
        fail_msg("mkdtemp: %s", strerror(errno));
    snprintf(url, url_cap, "sqlite:%s/sessions.db", dir);
    return false;
}

int aw_test_store_remove(const char *dir)
{
    if (!dir[0])
        return 0;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}
