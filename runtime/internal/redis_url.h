/* A Redis destination's URL, redis://[[USER]:PASSWORD@]HOST[:PORT][/DB],
 * read apart from the sink (sink_redis.c) so that it can be fuzzed
 * without connecting anywhere (fuzz/fuzz_redis_url.c). */
#ifndef AW_RT_REDIS_URL_H
#define AW_RT_REDIS_URL_H

#include "agentwire/alloc.h"
#include "agentwire/error.h"

typedef struct aw_redis_url {
    char *host, *user, *password; /* user and password NULL when not given */
    int port, db;                 /* 6379 and 0 by default */
    char *name;                   /* the URL to print: no password in it */
} aw_redis_url;

/* 0, or AW_EINVAL with err saying what is wrong (the password never
 * quoted), or AW_ENOMEM. On failure u holds what was read so far:
 * aw__redis_url_free it either way. */
int aw__redis_url_parse(const aw_allocator *a, const char *url, aw_redis_url *u, aw_error *err);
/* Frees u's strings, the password overwritten first. */
void aw__redis_url_free(const aw_allocator *a, aw_redis_url *u);

#endif
