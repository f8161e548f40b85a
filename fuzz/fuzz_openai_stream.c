/* Fuzz the openai provider's reply reader (openai_stream.c) without a
 * socket: Chat Completions event streams and whole replies. The chunking
 * must change nothing the caller sees; no input may crash, hang or leak. */
#include "internal/openai.h"
#include "reply_harness.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    return fz_reply(&aw_openai_reader_ops, data, size);
}
