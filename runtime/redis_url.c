/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] read into its parts
 * (internal/redis_url.h). */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agentwire/buf.h"
#include "internal/redis_url.h"
#include "internal/rt_util.h"

/* A host name or IPv4 address (anything a resolver may take, but what
 * would make the printed URL mean something else), or within [ ] an IPv6
 * address with an optional %zone. */
static bool host_chars_ok(const char *h, size_t n, bool bracketed)
{
    bool colon = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        if (bracketed) {
            if (c == '%') { /* the zone: letters, digits, '-', '_', '.' */
                for (i++; i < n; i++)
                    if (!isalnum((unsigned char)h[i]) && !strchr("-_.", h[i]))
                        return false;
            } else if (!isxdigit(c) && c != ':' && c != '.') {
                return false;
            }
            colon = colon || c == ':';
        } else if (c <= ' ' || c == 0x7f || strchr("[]?#\\", c)) {
            return false;
        }
    }
    return !bracketed || colon;
}

/* redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; HOST may be [IPv6]. */
int aw__redis_url_parse(const aw_allocator *a, const char *url, aw_redis_url *u, aw_error *err)
{
    memset(u, 0, sizeof *u);
    if (strncasecmp(url, "redis://", 8) != 0)
        return aw_rt_error(err, AW_EINVAL, "redis URL: it starts with redis://");
    const char *p = url + strlen("redis://");
    const char *at = strrchr(p, '@');
    const char *slash = strchr(at ? at : p, '/');
    if (at && slash && slash < at)
        at = NULL;
    if (at) {
        const char *colon = memchr(p, ':', (size_t)(at - p));
        if (!colon)
            return aw_rt_error(err, AW_EINVAL, "redis URL: write the password as redis://:PASSWORD@HOST:PORT");
        if (colon > p && !(u->user = aw_rt_strndup(a, p, (size_t)(colon - p))))
            return AW_ENOMEM;
        if (!(u->password = aw_rt_strndup(a, colon + 1, (size_t)(at - colon - 1))))
            return AW_ENOMEM;
        p = at + 1;
    }
    const char *host_end, *after;
    bool bracketed = *p == '[';
    if (*p == '[') {
        host_end = strchr(p, ']');
        if (!host_end)
            return aw_rt_error(err, AW_EINVAL, "redis URL: an IPv6 host needs its closing ]");
        p++;
        after = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/");
        after = host_end;
    }
    if (host_end > p && !host_chars_ok(p, (size_t)(host_end - p), bracketed))
        return aw_rt_error(err, AW_EINVAL,
                           bracketed ? "redis URL: between [ and ] goes an IPv6 address (hex digits and ':')"
                                     : "redis URL: the host may not hold spaces, control characters, [, ], ?, # or \\");
    if (host_end == p)
        return aw_rt_error(err, AW_EINVAL, "redis URL: no host (redis://HOST:PORT/DB)");
    if (!(u->host = aw_rt_strndup(a, p, (size_t)(host_end - p))))
        return AW_ENOMEM;
    u->port = 6379;
    if (*after == ':') {
        char *end;
        long port = strtol(after + 1, &end, 10);
        if (end == after + 1 || port < 1 || port > 65535 || (*end && *end != '/'))
            return aw_rt_error(err, AW_EINVAL, "redis URL: the port must be a number from 1 to 65535");
        u->port = (int)port;
        after = end;
    }
    if (*after == '/' && after[1]) {
        char *end;
        long db = strtol(after + 1, &end, 10);
        if (end == after + 1 || *end || db < 0 || db > 1000000)
            return aw_rt_error(err, AW_EINVAL, "redis URL: the database must be a number (redis://HOST:PORT/0)");
        u->db = (int)db;
    } else if (*after && strcmp(after, "/") != 0) {
        return aw_rt_error(err, AW_EINVAL, "redis URL: unexpected '%s' after the host", after);
    }
    aw_buf name;
    aw_buf_init(&name, a);
    /* the name leaves the password out: it is printed */
    int rc = aw_buf_printf(&name, "redis://%s%s%s%s%s:%d/%d", u->user ? u->user : "", u->user ? "@" : "",
                           strchr(u->host, ':') ? "[" : "", u->host, strchr(u->host, ':') ? "]" : "", u->port, u->db);
    if (rc || !(u->name = aw_buf_detach(&name, NULL))) {
        aw_buf_free(&name);
        return AW_ENOMEM;
    }
    return 0;
}

void aw__redis_url_free(const aw_allocator *a, aw_redis_url *u)
{
    aw_free(a, u->host);
    aw_free(a, u->user);
    if (u->password) {
        memset(u->password, 0, strlen(u->password));
        aw_free(a, u->password);
    }
    aw_free(a, u->name);
    memset(u, 0, sizeof *u);
}
