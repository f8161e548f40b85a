/* MiniMax M2 and later: the <invoke> grammar (dialect_function_calls.c)
 * in its own wrapper.
 *
 *   <minimax:tool_call>
 *   <invoke name="bash">
 *   <parameter name="command">ls -la</parameter>
 *   </invoke>
 *   </minimax:tool_call>
 *
 * A wrapper without its closing tag runs to the end of the reply. */
#include <string.h>

#include "internal/dialect.h"

#define LEN(s) (sizeof(s) - 1)
static const char open_tag[] = "<minimax:tool_call>";
static const char close_tag[] = "</minimax:tool_call>";
static const char form[] = "<minimax:tool_call><invoke name=\"NAME\"><parameter name=\"KEY\">VALUE</parameter></invoke></minimax:tool_call>";

static long scan(aw_dialect_scan *s, const char *p, size_t n, int at_end) {
    size_t from = s->pos ? s->pos : LEN(open_tag);
    size_t at = aw__dialect_find(p, n, from, close_tag, LEN(close_tag));
    if (at == SIZE_MAX) {
        s->pos = aw__dialect_resume(n, LEN(close_tag)) > from ? aw__dialect_resume(n, LEN(close_tag)) : from;
        return at_end ? (long)n : AW_DIALECT_MORE;
    }
    return (long)(at + LEN(close_tag));
}

static int parse(const char *p, size_t n, aw_dialect_out *out) {
    return aw__invoke_parse(p, n, (aw_text){p, n}, "minimax", form, out);
}

static const aw_dialect_trigger triggers[] = {{open_tag, LEN(open_tag), AW_DT_ANYWHERE}};

const aw_dialect aw__dialect_minimax = {"minimax", AW_DIALECT_MINIMAX, triggers, 1, NULL, NULL, 1, scan, parse, &aw__dialect_function_calls};
