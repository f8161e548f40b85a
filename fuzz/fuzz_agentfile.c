/* Fuzz the agent-file reader: any bytes as an agent file. Input that does
 * not start with "---" is wrapped into a frontmatter ("---\n" INPUT
 * "\n---\nbody"), so the fuzzer spends its time in the YAML and the keys
 * rather than finding the delimiter. The file lies in a directory that
 * does not exist, so relative paths name nothing. A read must end in 0 or
 * AW_EVALID, agree with its problems (an error among them exactly when it
 * failed), place every problem within the text, fill every string of the
 * definition, and give models and allow patterns that resolve without
 * crashing. */
#include <stdlib.h>
#include <string.h>

#include "agentwire/agentfile.h"

static size_t lines_of(const char *p, size_t n)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += p[i] == '\n';
    return lines;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *text = (const char *)data;
    char *wrapped = NULL;
    size_t len = size;
    if (size < 3 || memcmp(data, "---", 3) != 0) {
        wrapped = malloc(size + 32);
        if (!wrapped)
            return 0;
        memcpy(wrapped, "---\n", 4);
        memcpy(wrapped + 4, data, size);
        memcpy(wrapped + 4 + size, "\n---\nbody", 9);
        len = size + 13;
        text = wrapped;
    }
    aw_agent_file *f = NULL;
    aw_error err;
    int rc = aw_agent_file_parse(text, len, "/nonexistent-aw-fuzz/agent.md", NULL, &f, &err);
    if (rc != 0 && rc != AW_EVALID)
        abort();
    if (!f)
        abort();
    size_t n = 0, errors = 0, lines = lines_of(text, len);
    const aw_agent_problem *p = aw_agent_file_problems(f, &n);
    for (size_t i = 0; i < n; i++) {
        if (!p[i].message || !p[i].message[0] || !p[i].file)
            abort();
        /* a problem in the agent file is placed within it */
        if (!strcmp(p[i].file, "/nonexistent-aw-fuzz/agent.md") && p[i].line > lines)
            abort();
        errors += p[i].severity == AW_AGENT_ERROR;
    }
    if ((errors > 0) != (rc == AW_EVALID) || aw_agent_file_failed(f) != (rc == AW_EVALID))
        abort();
    const aw_agent_def *d = aw_agent_file_def(f);
    if (!d->name || !d->tool_name || !d->description || !d->system_prompt || strncmp(d->tool_name, "agent__", 7))
        abort();
    for (size_t i = 0; i < d->tool_count; i++)
        if (!d->tools[i])
            abort();
    for (size_t i = 0; i < d->mcp_count; i++)
        if (!aw_json_is_object(d->mcp[i].config))
            abort();
    if (rc == 0) {
        const char *inherit[] = {"replay:x.jsonl"}, *cl[] = {"claude-cli"};
        aw_agent_models ctx = {inherit, 1, cl, (size & 1) ? 1 : 0};
        char **specs = NULL;
        size_t count = 0;
        if (aw_agent_resolve_models(d, &ctx, NULL, &specs, &count, &err) == 0) {
            for (size_t i = 0; i < count; i++)
                if (!specs[i] || !specs[i][0])
                    abort();
            aw_agent_specs_free(NULL, specs, count);
        }
        const char **patterns = NULL;
        size_t np = 0;
        bool none = false;
        if (aw_agent_allow_patterns(d, NULL, &patterns, &np, &none))
            abort();
        aw_free(NULL, patterns);
    }
    aw_agent_file_free(f);
    free(wrapped);
    return 0;
}
