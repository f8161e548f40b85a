/* The built-in contracts: contracts/llmQuery.json and
 * contracts/llmResponse.json, embedded at build time (CMake writes their
 * bytes into contract_builtins.h), so they are the same data a user's
 * contract is, loaded by the same code. */
#include <string.h>

#include "contract_builtins.h"
#include "internal/contract.h"
#include "internal/errors.h"

int aw_contract_builtin(const char *name, const aw_allocator *alloc, aw_contract **out, aw_error *err) {
    if (!name || !out) return aw__error_set(err, AW_EINVAL, "invalid arguments");
    if (!strcmp(name, "llmQuery"))
        return aw_contract_load((const char *)aw_builtin_llmQuery, sizeof aw_builtin_llmQuery - 1, alloc, out, err);
    if (!strcmp(name, "llmResponse"))
        return aw_contract_load((const char *)aw_builtin_llmResponse, sizeof aw_builtin_llmResponse - 1, alloc, out,
                                err);
    *out = NULL;
    return aw__error_set(err, AW_EINVAL, "no built-in contract named '%s' (try llmQuery or llmResponse)", name);
}
