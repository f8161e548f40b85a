/* SHA-256 and HMAC-SHA256 (runtime/sha256.c), which sign webhook bodies:
 * FIPS 180-4's examples (one block, two blocks, a million bytes fed in
 * pieces of every size) and every test case of RFC 4231 (keys shorter
 * than, equal to and longer than a block; test case 5's truncation is
 * checked on its first 128 bits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "internal/sha256.h"

static void hex_of(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static void check_sha(const char *msg, size_t n, const char *want)
{
    unsigned char d[AW_SHA256_SIZE];
    char hex[65];
    aw_sha256 c;
    aw_sha256_init(&c);
    aw_sha256_update(&c, msg, n);
    aw_sha256_final(&c, d);
    hex_of(d, sizeof d, hex);
    assert_string_equal(hex, want);
}

static void test_fips_examples(void **state)
{
    (void)state;
    check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha(two, strlen(two), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* 55, 56 and 64 bytes: the padding's edges */
    char buf[130];
    memset(buf, 'a', sizeof buf);
    check_sha(buf, 55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
    check_sha(buf, 56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
    check_sha(buf, 64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

static void test_a_million_in_pieces(void **state)
{
    (void)state;
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    for (size_t piece = 1; piece <= 131; piece += 13) {
        aw_sha256 c;
        aw_sha256_init(&c);
        for (size_t off = 0; off < 1000000; off += piece)
            aw_sha256_update(&c, a + off, off + piece > 1000000 ? 1000000 - off : piece);
        unsigned char d[AW_SHA256_SIZE];
        char hex[65];
        aw_sha256_final(&c, d);
        hex_of(d, sizeof d, hex);
        assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    }
    free(a);
}

static size_t unhex(const char *h, unsigned char *out)
{
    size_t n = strlen(h) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        out[i] = (unsigned char)v;
    }
    return n;
}

static void test_rfc4231(void **state)
{
    (void)state;
    static const struct {
        const char *key, *data, *mac; /* hex */
    } cases[] = {
        {"0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "4869205468657265",
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"4a656665", "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
         "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {"0102030405060708090a0b0c0d0e0f10111213141516171819",
         "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd",
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {"0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c", "546573742057697468205472756e636174696f6e",
         "a3b6167473100ee06e0c796c2955552b"},
        {NULL /* 131 bytes of 0xaa */,
         "54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d2048617368204b6579204669727374",
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {NULL /* 131 bytes of 0xaa */,
         "5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a65206b657920616e642061"
         "206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865206b6579206e6565647320746f20626520686173686564"
         "206265666f7265206265696e6720757365642062792074686520484d414320616c676f726974686d2e",
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char key[200], data[200], mac[AW_SHA256_SIZE];
        size_t kn = cases[i].key ? unhex(cases[i].key, key) : 131, dn = unhex(cases[i].data, data);
        if (!cases[i].key)
            memset(key, 0xaa, kn);
        aw_hmac_sha256(key, kn, data, dn, mac);
        char hex[65];
        hex_of(mac, sizeof mac, hex);
        size_t want = strlen(cases[i].mac);
        if (strncmp(hex, cases[i].mac, want) != 0)
            fail_msg("RFC 4231 test case %zu: got %s", i + 1, hex);
        char hex2[65];
        aw_hmac_sha256_hex(key, kn, data, dn, hex2);
        assert_string_equal(hex, hex2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fips_examples),
        cmocka_unit_test(test_a_million_in_pieces),
        cmocka_unit_test(test_rfc4231),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
