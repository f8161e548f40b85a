/* The webhook sink's delivery thread against a receiver in this test (a
 * small HTTP/1.1 server on a loopback port, answering 200 to each POST on
 * a kept-alive connection): every envelope arrives once and in order
 * while the run's thread sends as fast as it can, flush waits for the
 * last, and a sink freed right after a send stops at once (the bell the
 * run's thread rings is never lost: a lost ring left a thread asleep and
 * the free waiting for it forever, which ctest's timeout would show). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "agentwire/json.h"
#include "agentwire/loop.h"
#include "agentwire/sink.h"
#include "testutil.h"

typedef struct receiver {
    int listen_fd;
    int port;
    pthread_t thread;
    pthread_mutex_t mu;
    long received;     /* bodies read */
    long out_of_order; /* bodies whose number was not the next one */
    long next;         /* the number the next body should carry */
} receiver;

/* One connection: requests one after another, each answered 200. */
static void serve_connection(receiver *r, int fd)
{
    char buf[65536];
    size_t have = 0;
    for (;;) {
        char *end = memmem(buf, have, "\r\n\r\n", 4);
        if (!end) {
            if (have == sizeof buf)
                break;
            ssize_t k = read(fd, buf + have, sizeof buf - have);
            if (k <= 0)
                break;
            have += (size_t)k;
            continue;
        }
        size_t head = (size_t)(end - buf) + 4;
        const char *cl = strcasestr(buf, "content-length:");
        size_t len = cl && cl < end ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
        while (have < head + len) {
            ssize_t k = read(fd, buf + have, sizeof buf - have);
            if (k <= 0)
                return;
            have += (size_t)k;
        }
        const char *n = memmem(buf + head, len, "\"n\":", 4);
        long num = n ? strtol(n + 4, NULL, 10) : -1;
        pthread_mutex_lock(&r->mu);
        r->received++;
        if (num != r->next)
            r->out_of_order++;
        r->next = num + 1;
        pthread_mutex_unlock(&r->mu);
        static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        if (write(fd, ok, sizeof ok - 1) != (ssize_t)(sizeof ok - 1))
            break;
        memmove(buf, buf + head + len, have - head - len);
        have -= head + len;
    }
}

static void *receiver_main(void *arg)
{
    receiver *r = arg;
    for (;;) {
        int fd = accept(r->listen_fd, NULL, NULL);
        if (fd < 0)
            return NULL;
        serve_connection(r, fd);
        close(fd);
    }
}

static void receiver_start(receiver *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(r->listen_fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    assert_int_equal(bind(r->listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->listen_fd, 16), 0);
    assert_int_equal(getsockname(r->listen_fd, (struct sockaddr *)&a, &alen), 0);
    r->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&r->thread, NULL, receiver_main, r), 0);
}

static void receiver_stop(receiver *r)
{
    shutdown(r->listen_fd, SHUT_RDWR);
    close(r->listen_fd);
    pthread_join(r->thread, NULL);
    pthread_mutex_destroy(&r->mu);
}

/* The receiver, its URL and a loop for the sinks. */
static aw_loop *start(receiver *r, char *url, size_t cap)
{
    receiver_start(r);
    snprintf(url, cap, "http://127.0.0.1:%d/hook", r->port);
    aw_error err;
    aw_loop *l = aw_loop_new(NULL, &err);
    assert_non_null(l);
    return l;
}

static void send_numbered(aw_sink *s, long n)
{
    char text[160];
    snprintf(text, sizeof text, "{\"type\":\"agent.status\",\"session_id\":\"s\",\"payload\":{\"n\":%ld}}", n);
    aw_json_doc *d = NULL;
    aw_error err;
    assert_int_equal(aw_json_parse(text, strlen(text), NULL, &d, &err), 0);
    assert_int_equal(s->ops->send(s, "agent.s", aw_json_doc_root(d), &err), 0);
    aw_json_doc_free(d);
}

static void test_every_envelope_once_in_order(void **state)
{
    (void)state;
    receiver r;
    char url[64];
    aw_loop *l = start(&r, url, sizeof url);
    aw_error err;
    aw_sink *s = aw_sink_open(l, url, NULL, &err);
    assert_non_null(s);
    for (long i = 0; i < 3000; i++) {
        send_numbered(s, i);
        if (i % 97 == 0)
            usleep(200); /* the thread catches up now and then: rings meet it awake and asleep */
    }
    assert_int_equal(s->ops->flush(s, 20000, &err), 0);
    assert_int_equal((long)s->sent, 3000);
    assert_int_equal((long)s->dropped, 0);
    assert_int_equal(aw_sink_pending(s), 0);
    aw_sink_free(s);
    aw_loop_free(l);
    pthread_mutex_lock(&r.mu);
    assert_int_equal(r.received, 3000);
    assert_int_equal(r.out_of_order, 0);
    pthread_mutex_unlock(&r.mu);
    receiver_stop(&r);
}

static void test_freed_right_after_sending(void **state)
{
    (void)state;
    receiver r;
    char url[64];
    aw_loop *l = start(&r, url, sizeof url);
    aw_error err;
    for (int round = 0; round < 1000; round++) {
        aw_sink *s = aw_sink_open(l, url, NULL, &err);
        assert_non_null(s);
        for (long i = 0; i < round % 5; i++)
            send_numbered(s, i);
        aw_sink_free(s); /* what was not delivered is given up on */
    }
    aw_loop_free(l);
    receiver_stop(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_envelope_once_in_order),
        cmocka_unit_test(test_freed_right_after_sending),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
