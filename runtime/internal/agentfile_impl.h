/* An agent file as read, shared by the files that read it:
 *   agentfile.c       the frontmatter, problems, the simple keys
 *   agentfile_refs.c  the keys that name other files or carry JSON
 *                     (mcpServers, agents, schema, inputSchema, contract)
 * Not installed. */
#ifndef AW_AGENTFILE_IMPL_H
#define AW_AGENTFILE_IMPL_H

#include "agentwire/agentfile.h"
#include "internal/rt_arena.h"
#include "internal/yaml_tree.h"

struct aw_agent_file {
    const aw_allocator *alloc;
    aw_arena arena;             /* the def's strings and arrays, the YAML tree */
    aw_agent_def def;
    const aw_yaml_node *root;   /* the frontmatter, NULL when none */
    aw_json_doc *json;          /* schemas and MCP configurations */
    aw_agent_problem *problems;
    size_t nproblems, cap_problems;
    bool failed;                /* some problem is an error */
    bool tools_none;            /* `tools` allows nothing that can exist */
    bool oom;
};

/* Record a problem at node (NULL: no place). Returns 0, or AW_ENOMEM. */
int aw__agent_problem(aw_agent_file *f, aw_agent_severity sev, const aw_yaml_node *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same in another file, at a place of its own. */
int aw__agent_problem_in(aw_agent_file *f, aw_agent_severity sev, const char *file, size_t line, size_t column,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/* A referenced file read whole into out: a regular file of at most
 * AW_AGENT_FILE_MAX bytes (a FIFO named there must not hang the reader). */
int aw__agent_read_file(const char *path, aw_buf *out, aw_error *err);

/* A path written in the file, resolved against its directory (arena). */
char *aw__agent_path(aw_agent_file *f, const char *p);

/* The keys that reference files or carry JSON (agentfile_refs.c); each
 * returns 0 or AW_ENOMEM, type problems being recorded. */
int aw__agent_read_mcp(aw_agent_file *f, const aw_yaml_node *v);
int aw__agent_read_agents(aw_agent_file *f, const aw_yaml_node *v);
int aw__agent_read_schema(aw_agent_file *f, const aw_yaml_node *v);
int aw__agent_read_input_schema(aw_agent_file *f, const aw_yaml_node *v);
int aw__agent_read_contract(aw_agent_file *f, const aw_yaml_node *v);

#endif
