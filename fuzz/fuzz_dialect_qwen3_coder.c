/* Fuzz the qwen3_coder dialect reader through the extractor: see dialect_fuzz.h. */
#include "dialect_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    return dialect_fuzz_one(AW_DIALECT_QWEN3_CODER, data, size);
}
