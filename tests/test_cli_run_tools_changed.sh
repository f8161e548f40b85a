#!/usr/bin/env bash
# A tool list that changes during a run (an MCP server's
# notifications/tools/list_changed) is offered from the next turn on: the
# hostile test server's `change` tool drops `echo` and adds `added`; the
# next request's notice names h__added and no longer h__echo, and a call of
# the new tool runs.
set -euo pipefail
cli=${AW_CLI:?run through ctest}
src=${AW_SOURCE_DIR:?run through ctest}
command -v node >/dev/null || { echo "node is needed (make test-deps)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=1a2b3c4d
cat >"$tmp/replay.jsonl" <<JSON
{"expect": ["h__echo", "h__change"], "absent": ["h__added"], "text": "<ai-agent-$n-0001 tool=\"h__change\">{}</ai-agent-$n-0001>"}
{"expect": ["h__added", "changed"], "absent": ["tool=\"h__echo\""], "text": "<ai-agent-$n-0011 tool=\"h__added\">{}</ai-agent-$n-0011>"}
{"text": "<ai-agent-$n-FINAL tool=\"agent__final_report\" status=\"success\" format=\"text\">done</ai-agent-$n-FINAL>"}
JSON
set +e
out=$("$cli" run --no-store --model "replay:$tmp/replay.jsonl" --transport xml --nonce $n \
      --mcp "h=node $src/tests/mcp/hostile_server.js normal" --mcp-log "$tmp/servers.log" \
      --accounting "$tmp/acc.jsonl" --format text --quiet "change the tools" 2>"$tmp/err")
status=$?
set -e
if [ "$status" -ne 0 ] || [ "$out" != done ]; then
    echo "FAILED: exit $status, stdout '$out'"; cat "$tmp/err"; exit 1
fi
grep -q '"command":"h__added"' "$tmp/acc.jsonl" || { echo "FAILED: h__added did not run"; cat "$tmp/acc.jsonl"; exit 1; }
echo "ok: the changed tool list was offered on the next turn and its new tool ran"
