/* Fuzz the anthropic provider's reply reader (anthropic_stream.c) without
 * a socket: Messages API event streams and whole replies. The chunking must
 * change nothing the caller sees; no input may crash, hang or leak. */
#include "internal/anthropic.h"
#include "reply_harness.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    return fz_reply(&aw_anthropic_reader_ops, data, size);
}
