#!/usr/bin/env bash
# Issue 18 in `agentwire run`: a tool call a model wrote in its own dialect
# and its server left in the text is recovered and run like a native call
# (accounting source "recovered" with the dialect, the result in the next
# request, the markup gone from the visible text); a reply that made native
# calls keeps only those; --recover-calls off and the xml transport recover
# nothing; recovered arguments are validated against the tool's schema.
set -uo pipefail
cli=${AW_CLI:?run through ctest}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # NAME COMMAND...
    if "${@:2}"; then echo "ok $1"; else echo "FAILED $1"; fails=$((fails + 1)); fi
}
cat >"$tmp/tools.json" <<'JSON'
[{"name": "add", "description": "add two integers",
  "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                   "required": ["a", "b"], "additionalProperties": false},
  "command": ["sh", "-c", "cat; echo; echo ran >>\"$0\"", "RANLOG"]}]
JSON
sed -i "s|RANLOG|$tmp/ran.log|" "$tmp/tools.json"
run() { # REPLAY-LINES OPTIONS...: runs agentwire, sets out and status
    printf '%s\n' "$1" >"$tmp/replay.jsonl"
    rm -f "$tmp/ran.log" "$tmp/acc.jsonl"
    out=$("$cli" run --no-store --model "replay:$tmp/replay.jsonl" --tools "$tmp/tools.json" \
          --accounting "$tmp/acc.jsonl" "${@:2}" "add them" 2>"$tmp/err")
    status=$?
}

# 1. Qwen3-Coder's XML form, as vLLM leaves it in the content: run, typed by the schema
run '{"text": "Adding.\n<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>"}
{"expect": ["{\"a\":1,\"b\":2}"], "absent": ["<function=add>"], "text": "It is 3."}' --transport native --visible
check "recovered call: exit 0 and the answer" test "$status" -eq 0 -a "$out" = "It is 3."
check "recovered call ran once" test "$(wc -l <"$tmp/ran.log" 2>/dev/null)" = 1
check "accounting says recovered, qwen3_coder" grep -q '"source":"recovered","dialect":"qwen3_coder","command":"add"' "$tmp/acc.jsonl"
check "visible text without the markup" bash -c "grep -q '^Adding\.' '$tmp/err' && ! grep -q '<function=add>' '$tmp/err'"

# 2. a reply with a native call: the call in its text is left aside
run '{"text": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 5, \"b\": 5}}</tool_call>", "tool_calls": [{"id": "n1", "name": "add", "arguments": "{\"a\": 1, \"b\": 1}"}]}
{"expect": ["{\"a\":1,\"b\":1}"], "absent": ["{\"a\":5,\"b\":5}"], "text": "done"}' --transport native
check "native calls win: exit 0" test "$status" -eq 0
check "native calls win: one call ran" test "$(wc -l <"$tmp/ran.log" 2>/dev/null)" = 1
check "native calls win: no recovered row" bash -c "! grep -q recovered '$tmp/acc.jsonl'"

# 3. --recover-calls off: the text is the answer, nothing runs
run '{"text": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"}' --transport native --recover-calls off
check "off: nothing ran" test ! -e "$tmp/ran.log"
check "off: the text is the answer" bash -c "printf '%s' \"\$1\" | grep -q '<tool_call>'" _ "$out"

# 4. xml-final recovers too; arguments that break the schema are refused in
#    the feedback and the model's corrected call runs
run '{"text": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": \"one\", \"b\": 2}}</tool_call>"}
{"expect": ["/a: expected integer"], "text": "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"}
{"expect": ["{\"a\":1,\"b\":2}"], "text": "<ai-agent-0badcafe-FINAL tool=\"agent__final_report\" status=\"success\" format=\"markdown\">3</ai-agent-0badcafe-FINAL>"}' \
    --transport xml-final --nonce 0badcafe
check "xml-final: exit 0 and the report" test "$status" -eq 0 -a "$out" = 3
check "xml-final: only the valid call ran" test "$(wc -l <"$tmp/ran.log" 2>/dev/null)" = 1

# 5. an unknown option value is a usage error
"$cli" run --model replay:x --recover-calls klingon "t" >/dev/null 2>"$tmp/err"
check "unknown dialect: exit 2" test $? -eq 2

[ "$fails" -eq 0 ] || { cat "$tmp/err"; exit 1; }
