/* The Redis destination's URL (runtime/redis_url.c): the parts read, the
 * defaults, every refusal in words, a name that never holds the password,
 * and allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "failalloc.h"
#include "internal/redis_url.h"
#include "testutil.h"

static void read_ok(const char *url, const char *host, int port, int db, const char *user, const char *password,
                    const char *name)
{
    aw_redis_url u;
    aw_error err;
    if (aw__redis_url_parse(NULL, url, &u, &err) != 0)
        fail_msg("%s: %s", url, err.message);
    assert_string_equal(u.host, host);
    assert_int_equal(u.port, port);
    assert_int_equal(u.db, db);
    if (user)
        assert_string_equal(u.user, user);
    else
        assert_null(u.user);
    if (password)
        assert_string_equal(u.password, password);
    else
        assert_null(u.password);
    assert_string_equal(u.name, name);
    aw__redis_url_free(NULL, &u);
}

static void refused(const char *url, const char *why)
{
    aw_redis_url u;
    aw_error err;
    assert_int_equal(aw__redis_url_parse(NULL, url, &u, &err), AW_EINVAL);
    if (!strstr(err.message, why))
        fail_msg("%s: '%s' does not say '%s'", url, err.message, why);
    aw__redis_url_free(NULL, &u);
}

static void test_parts_and_defaults(void **state)
{
    (void)state;
    read_ok("redis://127.0.0.1", "127.0.0.1", 6379, 0, NULL, NULL, "redis://127.0.0.1:6379/0");
    read_ok("redis://cache:6380/2", "cache", 6380, 2, NULL, NULL, "redis://cache:6380/2");
    read_ok("redis://cache/", "cache", 6379, 0, NULL, NULL, "redis://cache:6379/0");
    read_ok("REDIS://cache:1", "cache", 1, 0, NULL, NULL, "redis://cache:1/0");
    read_ok("redis://[::1]:7000/3", "::1", 7000, 3, NULL, NULL, "redis://[::1]:7000/3");
    read_ok("redis://[fe80::1%eth0]", "fe80::1%eth0", 6379, 0, NULL, NULL, "redis://[fe80::1%eth0]:6379/0");
}

static void test_credentials_never_in_the_name(void **state)
{
    (void)state;
    read_ok("redis://:s3cret@cache:6379/0", "cache", 6379, 0, NULL, "s3cret", "redis://cache:6379/0");
    read_ok("redis://app:s3cret@cache/1", "cache", 6379, 1, "app", "s3cret", "redis://app@cache:6379/1");
    /* a password holding '@' and '/': the last '@' ends it */
    read_ok("redis://:p@ss/w@cache:6379/0", "cache", 6379, 0, NULL, "p@ss/w", "redis://cache:6379/0");
}

static void test_refusals_say_why(void **state)
{
    (void)state;
    refused("http://cache", "starts with redis://");
    refused("redis://user@cache", "write the password as redis://:PASSWORD@HOST:PORT");
    refused("redis://", "no host");
    refused("redis://:6379/0", "no host");
    refused("redis://[::1", "closing ]");
    refused("redis://[[]", "IPv6 address");
    refused("redis://[cache]:6379", "IPv6 address");
    refused("redis://[]:6379", "no host");
    refused("redis://ca che:6379", "may not hold spaces");
    refused("redis://cache:0", "port must be a number from 1 to 65535");
    refused("redis://cache:65536", "port must be a number from 1 to 65535");
    refused("redis://cache:x", "port must be a number from 1 to 65535");
    refused("redis://cache:6379x", "port must be a number from 1 to 65535");
    refused("redis://cache:6379/x", "database must be a number");
    refused("redis://cache:6379/-1", "database must be a number");
    refused("redis://[::1]x", "unexpected 'x' after the host");
}

static void test_a_refusal_never_quotes_the_password(void **state)
{
    (void)state;
    aw_redis_url u;
    aw_error err;
    assert_int_equal(aw__redis_url_parse(NULL, "redis://:hunter2@cache:99999/0", &u, &err), AW_EINVAL);
    assert_null(strstr(err.message, "hunter2"));
    aw__redis_url_free(NULL, &u);
    assert_int_equal(aw__redis_url_parse(NULL, "redis://:hunter2@cache:6379/0?x", &u, &err), AW_EINVAL);
    assert_null(strstr(err.message, "hunter2"));
    aw__redis_url_free(NULL, &u);
}

static int alloc_run(const aw_allocator *a, void *ctx)
{
    (void)ctx;
    aw_redis_url u;
    aw_error err;
    int rc = aw__redis_url_parse(a, "redis://app:s3cret@[::1]:6380/4", &u, &err);
    aw__redis_url_free(a, &u);
    return rc;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    assert_true(aw_failalloc_run(alloc_run, NULL, 0) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parts_and_defaults),
        cmocka_unit_test(test_credentials_never_in_the_name),
        cmocka_unit_test(test_refusals_say_why),
        cmocka_unit_test(test_a_refusal_never_quotes_the_password),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
