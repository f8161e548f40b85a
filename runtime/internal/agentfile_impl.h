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
};

/* Record a problem in file at line:column (0: no place). Returns 0, or
 * AW_ENOMEM. */
int aw__agent_problem_in(aw_agent_file *f, aw_agent_severity sev, const char *file, size_t line, size_t column,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/* The same in the agent file itself, at a node (NULL: no place). */
static inline size_t aw__agent_line(const aw_yaml_node *n) { return n ? n->line : 0; }
static inline size_t aw__agent_column(const aw_yaml_node *n) { return n ? n->column : 0; }
#define aw__agent_problem(f, sev, at, ...)                                                                             \
    aw__agent_problem_in((f), (sev), (f)->def.path, aw__agent_line(at), aw__agent_column(at), __VA_ARGS__)

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
