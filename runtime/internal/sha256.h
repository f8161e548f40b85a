/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for signing webhook
 * bodies: small enough to keep here rather than tie the runtime to one TLS
 * library's crypto (libcurl may be built on OpenSSL, GnuTLS or others).
 * Checked against FIPS 180-4's examples and RFC 4231's vectors
 * (tests/test_sink_webhook.c). Not installed. */
#ifndef AW_SHA256_H
#define AW_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define AW_SHA256_SIZE 32

typedef struct aw_sha256 {
    uint32_t h[8];
    uint64_t length;   /* bytes hashed so far */
    unsigned char block[64];
    size_t used;       /* bytes in block */
} aw_sha256;

void aw_sha256_init(aw_sha256 *c);
void aw_sha256_update(aw_sha256 *c, const void *p, size_t n);
void aw_sha256_final(aw_sha256 *c, unsigned char out[AW_SHA256_SIZE]);

void aw_hmac_sha256(const void *key, size_t key_len, const void *msg, size_t msg_len,
                    unsigned char out[AW_SHA256_SIZE]);
/* The MAC as 64 lowercase hex digits and a NUL. */
void aw_hmac_sha256_hex(const void *key, size_t key_len, const void *msg, size_t msg_len, char out[65]);

#endif
