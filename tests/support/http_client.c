/* The tests' HTTP client (http_client.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void add(char **buf, size_t *len, const char *p, size_t n)
{
    char *b = realloc(*buf, *len + n + 1);
    if (!b)
        abort();
    memcpy(b + *len, p, n);
    *len += n;
    b[*len] = 0;
    *buf = b;
}

/* Read what is there within ms; 1 data, 0 timeout, -1 closed. */
static int read_some(int fd, char **buf, size_t *len, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, ms < 0 ? 0 : ms);
    if (r <= 0)
        return 0;
    char tmp[16384];
    ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0)
        return -1;
    add(buf, len, tmp, (size_t)n);
    return 1;
}

/* Decode whole chunks from raw into out; consumed bytes are removed from
 * raw. Returns 1 when the last (empty) chunk was seen. */
static int dechunk(char **raw, size_t *raw_len, char **out, size_t *out_len)
{
    size_t pos = 0;
    int last = 0;
    for (;;) {
        char *eol = memmem(*raw + pos, *raw_len - pos, "\r\n", 2);
        if (!eol)
            break;
        size_t size = strtoul(*raw + pos, NULL, 16);
        size_t data = (size_t)(eol - *raw) + 2;
        if (*raw_len < data + size + 2)
            break;
        add(out, out_len, *raw + data, size);
        pos = data + size + 2;
        if (size == 0) {
            last = 1;
            break;
        }
    }
    memmove(*raw, *raw + pos, *raw_len - pos);
    *raw_len -= pos;
    return last;
}

static int parse_status(const char *head)
{
    int status = 0;
    return sscanf(head, "HTTP/%*d.%*d %d", &status) == 1 ? status : 0;
}

int aw_http_raw(uint16_t port, const char *request, size_t len, aw_http_resp *out, int timeout_ms)
{
    memset(out, 0, sizeof *out);
    int fd = dial(port);
    if (fd < 0)
        return -1;
    /* a server may answer (and close) before a long request is all sent */
    send_all(fd, request, len);
    char *raw = NULL;
    size_t raw_len = 0;
    int64_t until = now_ms() + timeout_ms;
    while (now_ms() < until && read_some(fd, &raw, &raw_len, (int)(until - now_ms())) >= 0)
        ;
    close(fd);
    if (!raw)
        return -1;
    char *end = strstr(raw, "\r\n\r\n");
    size_t head_len = end ? (size_t)(end - raw) : raw_len;
    out->head = strndup(raw, head_len);
    out->status = parse_status(out->head);
    char *rest = end ? end + 4 : raw + raw_len;
    size_t rest_len = raw_len - (size_t)(rest - raw);
    char te[64];
    if (aw_http_header(out, "Transfer-Encoding", te, sizeof te) && !strcasecmp(te, "chunked")) {
        char *chunks = NULL;
        size_t n = 0;
        add(&chunks, &n, rest, rest_len);
        add(&out->body, &out->body_len, "", 0);
        dechunk(&chunks, &n, &out->body, &out->body_len);
        free(chunks);
    } else {
        add(&out->body, &out->body_len, rest, rest_len);
    }
    free(raw);
    return 0;
}

int aw_http_get(uint16_t port, const char *path, const char *headers, aw_http_resp *out)
{
    char req[8192], host[64] = "";
    /* the caller's own Host, or ours */
    if (!headers || !strcasestr(headers, "Host:"))
        snprintf(host, sizeof host, "Host: 127.0.0.1:%u\r\n", port);
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\n%sConnection: close\r\n%s\r\n", path, host, headers ? headers : "");
    return aw_http_raw(port, req, strlen(req), out, 20000);
}

const char *aw_http_header(const aw_http_resp *r, const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);
    for (const char *line = r->head ? strstr(r->head, "\r\n") : NULL; line; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (!strncasecmp(h, name, n) && h[n] == ':') {
            h += n + 1;
            while (*h == ' ')
                h++;
            size_t len = strcspn(h, "\r\n");
            if (len >= cap)
                len = cap - 1;
            memcpy(buf, h, len);
            buf[len] = 0;
            return buf;
        }
    }
    return NULL;
}

void aw_http_resp_free(aw_http_resp *r)
{
    free(r->head);
    free(r->body);
    memset(r, 0, sizeof *r);
}

/* ---- server-sent events ------------------------------------------------------------ */

int aw_sse_open(aw_sse *s, uint16_t port, const char *path, const char *last_id, int timeout_ms)
{
    memset(s, 0, sizeof *s);
    s->fd = dial(port);
    if (s->fd < 0)
        return -1;
    char req[2048], lei[300] = "";
    if (last_id)
        snprintf(lei, sizeof lei, "Last-Event-ID: %s\r\n", last_id);
    snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nAccept: text/event-stream\r\n%s\r\n", path, port,
             lei);
    if (send_all(s->fd, req, strlen(req)))
        return -1;
    int64_t until = now_ms() + timeout_ms;
    char *end;
    while (!(end = s->raw ? strstr(s->raw, "\r\n\r\n") : NULL))
        if (now_ms() >= until || read_some(s->fd, &s->raw, &s->raw_len, (int)(until - now_ms())) < 0)
            return -1;
    aw_http_resp head = {.head = strndup(s->raw, (size_t)(end - s->raw))};
    s->status = parse_status(head.head);
    char te[64];
    s->chunked = aw_http_header(&head, "Transfer-Encoding", te, sizeof te) && !strcasecmp(te, "chunked");
    free(head.head);
    size_t used = (size_t)(end - s->raw) + 4;
    memmove(s->raw, s->raw + used, s->raw_len - used);
    s->raw_len -= used;
    return 0;
}

/* Move decoded bytes from raw to text. */
static void decode(aw_sse *s)
{
    if (!s->chunked) {
        add(&s->text, &s->text_len, s->raw ? s->raw : "", s->raw_len);
        s->raw_len = 0;
        return;
    }
    if (s->raw_len && dechunk(&s->raw, &s->raw_len, &s->text, &s->text_len))
        s->closed = true;
}

/* One whole event block (up to a blank line) taken from the text, or NULL. */
static char *take_block(aw_sse *s)
{
    char *end = s->text ? strstr(s->text, "\n\n") : NULL;
    if (!end)
        return NULL;
    size_t n = (size_t)(end - s->text) + 2;
    char *block = strndup(s->text, n);
    memmove(s->text, s->text + n, s->text_len - n + 1);
    s->text_len -= n;
    return block;
}

int aw_sse_next(aw_sse *s, char **id, char **data, int timeout_ms)
{
    *id = *data = NULL;
    int64_t until = now_ms() + timeout_ms;
    for (;;) {
        decode(s);
        char *block;
        while ((block = take_block(s))) {
            char *got_id = NULL, *got_data = NULL;
            for (char *line = strtok(block, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] == ':')
                    s->comments++;
                else if (!strncmp(line, "id: ", 4))
                    got_id = strdup(line + 4);
                else if (!strncmp(line, "data: ", 6))
                    got_data = strdup(line + 6);
            }
            free(block);
            if (got_data) {
                *id = got_id;
                *data = got_data;
                return 0;
            }
            free(got_id);
        }
        if (s->closed || now_ms() >= until)
            return -1;
        if (read_some(s->fd, &s->raw, &s->raw_len, (int)(until - now_ms())) < 0)
            s->closed = true;
    }
}

void aw_sse_close(aw_sse *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->raw);
    free(s->text);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
