/* SHA-256 and HMAC-SHA256 (internal/sha256.h), written from FIPS 180-4
 * section 6.2 and RFC 2104. */
#include <string.h>

#include "internal/sha256.h"

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void compress(uint32_t h[8], const unsigned char *b)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)b[i * 4] << 24 | (uint32_t)b[i * 4 + 1] << 16 | (uint32_t)b[i * 4 + 2] << 8 | b[i * 4 + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], bb = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & bb) ^ (a & c) ^ (bb & c));
        hh = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = bb;
        bb = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += bb;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
}

void aw_sha256_init(aw_sha256 *c)
{
    static const uint32_t init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, init, sizeof init);
    c->length = 0;
    c->used = 0;
}

void aw_sha256_update(aw_sha256 *c, const void *data, size_t n)
{
    const unsigned char *p = data;
    c->length += n;
    if (c->used) {
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, p, take);
        c->used += take;
        p += take;
        n -= take;
        if (c->used < 64)
            return;
        compress(c->h, c->block);
        c->used = 0;
    }
    for (; n >= 64; p += 64, n -= 64)
        compress(c->h, p);
    memcpy(c->block, p, n);
    c->used = n;
}

void aw_sha256_final(aw_sha256 *c, unsigned char out[AW_SHA256_SIZE])
{
    uint64_t bits = c->length * 8;
    unsigned char pad[72] = {0x80};
    /* 0x80, zeros up to 56 mod 64, then the length in bits, big-endian */
    size_t padlen = c->used < 56 ? 56 - c->used : 120 - c->used;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    aw_sha256_update(c, pad, padlen + 8);
    for (int i = 0; i < 8; i++) {
        out[i * 4] = (unsigned char)(c->h[i] >> 24);
        out[i * 4 + 1] = (unsigned char)(c->h[i] >> 16);
        out[i * 4 + 2] = (unsigned char)(c->h[i] >> 8);
        out[i * 4 + 3] = (unsigned char)c->h[i];
    }
}

void aw_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len, unsigned char out[AW_SHA256_SIZE])
{
    unsigned char k[64] = {0}, pad[64], inner[AW_SHA256_SIZE];
    aw_sha256 c;
    if (key_len > 64) { /* a long key is hashed first (RFC 2104 section 2) */
        aw_sha256_init(&c);
        aw_sha256_update(&c, key, key_len);
        aw_sha256_final(&c, k);
    } else if (key_len) {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    aw_sha256_init(&c);
    aw_sha256_update(&c, pad, 64);
    aw_sha256_update(&c, msg, msg_len);
    aw_sha256_final(&c, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    aw_sha256_init(&c);
    aw_sha256_update(&c, pad, 64);
    aw_sha256_update(&c, inner, sizeof inner);
    aw_sha256_final(&c, out);
    memset(k, 0, sizeof k);
    memset(pad, 0, sizeof pad);
}

void aw_hmac_sha256_hex(const void *key, size_t key_len, const void *msg, size_t msg_len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char mac[AW_SHA256_SIZE];
    aw_hmac_sha256(key, key_len, msg, msg_len, mac);
    for (int i = 0; i < AW_SHA256_SIZE; i++) {
        out[i * 2] = hex[mac[i] >> 4];
        out[i * 2 + 1] = hex[mac[i] & 15];
    }
    out[64] = 0;
}
