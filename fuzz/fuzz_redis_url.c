/* Fuzz the Redis destination's URL reader (runtime/redis_url.c): any text
 * after redis:// is read or refused in words, never a crash. What it
 * reads must hold: a host, a port from 1 to 65535, the printed name
 * without the password, and (without credentials) the name read again
 * giving the same parts. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/buf.h"
#include "internal/redis_url.h"

static int same(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    aw_buf url;
    aw_buf_init(&url, NULL);
    if (aw_buf_append_str(&url, "redis://") || aw_buf_append(&url, data, size) || aw_buf_reserve(&url, 1)) {
        aw_buf_free(&url);
        return 0;
    }
    url.data[url.len] = 0; /* the text stops at a NUL, as a command-line argument does */
    aw_redis_url u;
    aw_error err;
    if (aw__redis_url_parse(NULL, url.data, &u, &err) == 0) {
        if (!u.host || !*u.host || u.port < 1 || u.port > 65535 || u.db < 0 || !u.name)
            abort();
        if (u.password) {
            /* ":PASSWORD@" cannot be in a name without it: the user has
             * no ':' (the first one ends it) and the host no '@' (the
             * last one starts it) */
            aw_buf pw;
            aw_buf_init(&pw, NULL);
            if (!aw_buf_putc(&pw, ':') && !aw_buf_append_str(&pw, u.password) && !aw_buf_putc(&pw, '@') &&
                !aw_buf_reserve(&pw, 1)) {
                pw.data[pw.len] = 0;
                if (strstr(u.name, pw.data))
                    abort(); /* the password printed */
            }
            aw_buf_free(&pw);
        }
        aw_redis_url again;
        /* a user comes only with a password, which the name leaves out
         * (redis://USER@HOST is for reading, not a URL to give back) */
        if (!u.user && !strchr(u.host, '/') && !strchr(u.host, '@') && !strchr(u.host, ']')) {
            if (aw__redis_url_parse(NULL, u.name, &again, &err) != 0)
                abort(); /* the name it prints is not a URL it reads */
            if (!same(again.host, u.host) || again.port != u.port || again.db != u.db || again.user)
                abort();
            aw__redis_url_free(NULL, &again);
        }
    } else if (!err.message[0]) {
        abort(); /* refused without saying why */
    }
    aw__redis_url_free(NULL, &u);
    aw_buf_free(&url);
    return 0;
}
