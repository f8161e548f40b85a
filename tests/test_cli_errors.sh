#!/bin/sh
# Issue 17, part 4: errors name FILE:line:col everywhere, help lists every
# command, contract names and codes agree, hints where a user goes wrong.
#
#   tests/test_cli_errors.sh AGENTWIRE SOURCE_DIR
set -u

. "$(dirname "$0")/support/cli_checks.sh"

# ---- messages encode: line and column of the message, index from 0 --------
printf '[\n  {"role":"user","content":"a"},\n  {"role":5}\n]' >"$T/m1.json"
run 1 "encode bad role" messages encode "$T/m1.json"
has "m1.json:3:3: message 1: 'role' must be a string" "encode bad role" "$T/err"
printf '{"system":"s",\n "messages": [{"role":"user","content":"\303\251"}, {"role":"user","content":[{"type":"text","text":1}]}]}' >"$T/m2.json"
run 1 "encode bad part" messages encode "$T/m2.json"
has "m2.json:2:46: message 1: 'content[0].text' must be a string" "encode bad part (columns in characters)" "$T/err"
printf '[{"role":"x\\"]"},\n{"type":"human"}]' >"$T/m3.json"
run 1 "encode unknown role" messages encode --format openai "$T/m3.json"
has "m3.json:1:2: message 0: unknown role" "encode unknown role, a string holding ] before" "$T/err"
run 1 "encode JSON error" messages encode "$T/m1.json" 
printf '[{"role":"user",]' >"$T/m4.json"
run 1 "encode not JSON" messages encode "$T/m4.json"
has "m4.json:1:17: " "encode not JSON" "$T/err"

# ---- help lists every command ----------------------------------------------
run 0 "top help" --help
cp "$T/out" "$T/help"
for pair in "json validate|format|lines|repair" "thread encode|decode" "messages encode|toolcalls|detect" \
    "transport next|past|extract" "contract validate|parse|build|prompt" "snapshot slim|restore"; do
    has "  $pair" "top-level help" "$T/help"
    group=${pair%% *}
    for cmd in $(echo "${pair#* }" | tr '|' ' '); do
        run 0 "$group $cmd --help" "$group" "$cmd" --help
    done
done
has "  envelope" "top-level help" "$T/help"
has "  run " "top-level help" "$T/help"
run 0 "run --help" run --help

# ---- contract: unknown --contract names the built-in ones -----------------
printf '<llmResponse/>' >"$T/r.xml"
run 2 "unknown --contract" contract validate --contract llmResponce "$T/r.xml"
has "llmQuery or llmResponse" "unknown --contract lists the built-ins" "$T/err"
has "'llmResponce'" "unknown --contract names it" "$T/err"

# ---- contract: parse and validate report malformed XML alike ----------------
printf '<llmResponse><a>' >"$T/bad.xml"
run 1 "validate malformed" contract validate "$T/bad.xml"
cp "$T/err" "$T/validate.err"
run 1 "parse malformed" contract parse "$T/bad.xml"
checks=$((checks + 1))
cmp -s "$T/err" "$T/validate.err" || fail "parse and validate differ: $(cat "$T/err") / $(cat "$T/validate.err")"
has "bad.xml:1:17: malformed: malformed XML" "malformed code" "$T/err"
printf '<llmResponse><bogus/></llmResponse>' >"$T/missing.xml"
run 1 "parse missing" contract parse "$T/missing.xml"
has "missing.xml:1:1: missing_element: /llmResponse/" "parse names the code as validate does" "$T/err"

# ---- contract: a fenced reply without --extract hints at it ---------------
printf 'Here it is:\n```xml\n<llmResponse><response>hi</response></llmResponse>\n```\n' >"$T/fenced.txt"
for verb in validate parse; do
    run 1 "$verb fenced" contract "$verb" "$T/fenced.txt"
    has "fenced.txt: hint: the XML is in a \`\`\` fence; --extract" "$verb fenced hint" "$T/err"
    "$CLI" contract "$verb" --extract "$T/fenced.txt" >"$T/out" 2>"$T/err"
    lacks "hint" "$verb --extract: no hint" "$T/err"
done
run 1 "validate plain bad" contract validate "$T/bad.xml"
lacks "hint" "a reply that is XML gets no hint" "$T/err"

# ---- envelope: misnamed fields are errors, with line and column -------------
printf '{"event":"stream_chunk","chunk":"a"}\n  {"event":"stream_chunk","txt":"x"}\n{"event":"tool_completed","toolCallId":"a","tool_name":"b"}\n' >"$T/env.jsonl"
run 1 "envelope misnamed" envelope "$T/env.jsonl"
has "env.jsonl:2:3: a stream_chunk event has no field 'txt' (its fields: chunk, is_complete, tokens_delta)" "envelope txt" "$T/err"
has "env.jsonl:3:1: a tool_completed event has no field 'toolCallId'" "envelope toolCallId" "$T/err"
has '"chunk":"a"' "envelope keeps the good line" "$T/out"

# ---- thread encode: unknown types said once per type, with the place --------
printf '{"type":"human","content":"a"}\n{"type":"human","content":"b"}\n' >"$T/ev.jsonl"
run 0 "thread encode unknown type" thread encode "$T/ev.jsonl"
has "ev.jsonl:1:9: warning: event type 'human'" "unknown type placed" "$T/err"
run 1 "thread encode --strict" thread encode --strict "$T/ev.jsonl"
has "ev.jsonl:1:9: event type 'human'" "unknown type rejected" "$T/err"

finish
