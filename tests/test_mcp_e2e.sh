#!/usr/bin/env bash
# End to end with the real MCP servers (npm @modelcontextprotocol/server-
# filesystem and server-everything, pinned in tests/mcp/package-lock.json):
# `agentwire run` on a replayed model that calls their tools (files read and
# written in a temporary directory, echo, a sum, an image, a resource, a
# long-running call, a refused path) and checks what the model is sent;
# `agentwire mcp list` and `agentwire mcp call`, with their exit statuses.
set -euo pipefail
cli=${AW_CLI:?run through ctest}
src=${AW_SOURCE_DIR:?run through ctest}
mods=$src/tests/mcp/node_modules
if [ ! -d "$mods/@modelcontextprotocol/server-everything" ]; then
    (cd "$src/tests/mcp" && npm ci --silent --no-audit --no-fund)
fi
fs_js=$mods/@modelcontextprotocol/server-filesystem/dist/index.js
ev_js=$mods/@modelcontextprotocol/server-everything/dist/index.js
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0
check() { # NAME COMMAND...: the command must succeed
    if "${@:2}"; then echo "ok $1"; passes=$((passes + 1)); else echo "FAILED $1"; fails=$((fails + 1)); fi
}

mkdir "$tmp/work"
echo "hello from the file" >"$tmp/work/in.txt"
cat >"$tmp/mcp.json" <<JSON
{"mcpServers": {
  "fs": {"command": "node", "args": ["$fs_js", "$tmp/work"], "comment": "unknown keys are ignored"},
  "ev": {"command": "node", "args": ["$ev_js", "stdio"], "env": {"AW_E2E": "1"}}}}
JSON

# ---- a run whose model calls the servers' tools --------------------------------
# (one model reply a line: the calls, then the final report once the results
# it expects are in the request)
cat >"$tmp/replay.jsonl" <<JSON
{"expect": ["fs__read_text_file", "fs__write_file", "ev__echo", "ev__get-sum"], "tool_calls": [ {"id": "c1", "name": "fs__read_text_file", "arguments": {"path": "$tmp/work/in.txt"}}, {"id": "c2", "name": "fs__write_file", "arguments": {"path": "$tmp/work/out.txt", "content": "written by the model"}}, {"id": "c3", "name": "ev__echo", "arguments": {"message": "hello"}}, {"id": "c4", "name": "ev__get-sum", "arguments": {"a": 2, "b": 3}}, {"id": "c5", "name": "ev__get-tiny-image", "arguments": {}}, {"id": "c6", "name": "ev__trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3}}, {"id": "c7", "name": "ev__get-resource-reference", "arguments": {"resourceType": "Blob", "resourceId": 2}}, {"id": "c8", "name": "fs__read_text_file", "arguments": {"path": "/etc/hostname"}}]}
{"expect": ["hello from the file", "Successfully wrote to", "Echo: hello", "The sum of 2 and 3 is 5.", "[image: image/png, 4 KB]", "Long running operation completed. Duration: 1 seconds, Steps: 3.", "[resource: demo://resource/dynamic/blob/2, text/plain, ", "Access denied - path outside allowed directories"], "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "all read and written"}}]}
JSON
set +e
out=$("$cli" run --model "replay:$tmp/replay.jsonl" --transport native --mcp-config "$tmp/mcp.json" \
      --mcp-log "$tmp/servers.log" --thread "$tmp/thread.xml" --quiet "use the tools" 2>"$tmp/run.err")
status=$?
set -e
check "run exits 0" test "$status" -eq 0
check "run prints the report" test "$out" = "all read and written"
check "the file was written" grep -qx "written by the model" "$tmp/work/out.txt"
check "the image is described, not pasted" bash -c "grep -q '\[image: image/png, 4 KB\]' '$tmp/thread.xml' && ! grep -q iVBORw0KGgo '$tmp/thread.xml'"
# the blob holds the server's toLocaleTimeString(), whose length changes with
# the hour and the locale (55 bytes at 9:59:59 PM, 56 at 10:00:00 PM)
check "the blob resource is described with its size" \
    grep -Eq '\[resource: demo://resource/dynamic/blob/2, text/plain, [0-9]+ bytes\]' "$tmp/thread.xml"
check "servers' stderr went to the log" grep -q "^fs: Secure MCP Filesystem Server running on stdio" "$tmp/servers.log"
check "nothing on stderr" test ! -s "$tmp/run.err"
[ "$status" -eq 0 ] || cat "$tmp/run.err"

# the same server given as --mcp
cat >"$tmp/replay2.jsonl" <<JSON
{"tool_calls": [{"id": "c1", "name": "ev__echo", "arguments": {"message": "from a spec"}}]}
{"expect": ["Echo: from a spec"], "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "spec ok"}}]}
JSON
check "--mcp spec" test "$("$cli" run --model "replay:$tmp/replay2.jsonl" --transport native --quiet \
    --mcp "ev=node '$ev_js' stdio" "echo" 2>&1)" = "spec ok"

# a run goes on through a server that cannot start and one that crashes
# (restarted once), with a hostile server whose tool list comes in pages
cat >"$tmp/hostile.json" <<JSON
{"mcpServers": {"gone": {"command": "/nonexistent/server"},
                "h": {"command": "node", "args": ["$src/tests/mcp/hostile_server.js", "paged"]}}}
JSON
cat >"$tmp/replay3.jsonl" <<JSON
{"expect": ["h__grandchild", "h__dotted_name_x"], "tool_calls": [{"id": "c1", "name": "h__crash", "arguments": {}}]}
{"expect": ["server 'h' exited (killed by signal 9) during the call"], "tool_calls": [{"id": "c2", "name": "h__echo", "arguments": {"text": "after the restart"}}]}
{"expect": ["echo: after the restart"], "tool_calls": [{"id": "f", "name": "agent__final_report", "arguments": {"status": "success", "content": "survived"}}]}
JSON
set +e
out=$("$cli" run --model "replay:$tmp/replay3.jsonl" --transport native --mcp-config "$tmp/hostile.json" --quiet "crash" 2>"$tmp/run3.err")
status=$?
set -e
check "a crashed server is restarted within the run" test "$status:$out" = "0:survived"
check "a server that cannot start is named" grep -q "mcp server 'gone': cannot run '/nonexistent/server': No such file or directory; its tools are left out" "$tmp/run3.err"

# ---- agentwire mcp list / call -----------------------------------------------------
"$cli" mcp list --mcp-config "$tmp/mcp.json" >"$tmp/list.jsonl"
check "list names tools as the model sees them" grep -q '^{"server":"ev","name":"ev__echo","description":"Echoes back the input string","input_schema":{' "$tmp/list.jsonl"
check "list has both servers" grep -q '"name":"fs__write_file"' "$tmp/list.jsonl"
check "call prints the text" test "$("$cli" mcp call --mcp-config "$tmp/mcp.json" ev echo '{"message":"hi"}')" = "Echo: hi"
check "call takes SERVER__TOOL" test "$("$cli" mcp call --mcp-config "$tmp/mcp.json" ev ev__get-sum '{"a":1,"b":1}')" = "The sum of 1 and 1 is 2."
check "call --json keeps structuredContent" bash -c "'$cli' mcp call --json --mcp-config '$tmp/mcp.json' ev get-structured-content '{\"location\":\"Chicago\"}' | grep -q '\"structured\":{\"temperature\":'"

expect_status() { # WANT NAME COMMAND...
    set +e
    "${@:3}" >"$tmp/o" 2>"$tmp/e"
    local got=$?
    set -e
    check "$2 (exit $1)" test "$got" -eq "$1"
}
expect_status 1 "a failing call" "$cli" mcp call --mcp-config "$tmp/mcp.json" fs read_text_file '{"path":"/etc/hostname"}'
check "its reason on stderr" grep -q "Access denied" "$tmp/e"
expect_status 1 "an unknown server" "$cli" mcp call --mcp-config "$tmp/mcp.json" nope echo
expect_status 2 "no server given" "$cli" mcp list
expect_status 2 "bad arguments JSON" "$cli" mcp call --mcp-config "$tmp/mcp.json" ev echo '[1'
expect_status 0 "help" "$cli" mcp --help
expect_status 0 "list help" "$cli" mcp list --help
check "run --help names the MCP options" bash -c "'$cli' run --help | grep -q -- '--mcp-config FILE'"

cat >"$tmp/bad.json" <<JSON
{"mcpServers": {"gone": {"command": "/nonexistent/server"}, "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
                "ev": {"command": "node", "args": ["$ev_js", "stdio"]}}}
JSON
expect_status 1 "list with servers that cannot be used" "$cli" mcp list --mcp-config "$tmp/bad.json"
check "their errors as JSON lines" grep -q '^{"server":"gone","error":"cannot run '"'"'/nonexistent/server'"'"': No such file or directory"}$' "$tmp/o"
check "named as unsupported" grep -q '^{"server":"web","error":"its transport '"'"'http'"'"' is not supported' "$tmp/o"
check "the others listed" grep -q '"name":"ev__echo"' "$tmp/o"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
