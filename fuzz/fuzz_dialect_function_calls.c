/* Fuzz the function_calls dialect reader through the extractor: see dialect_fuzz.h. */
#include "dialect_fuzz.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
    return dialect_fuzz_one(AW_DIALECT_FUNCTION_CALLS, data, size);
}
