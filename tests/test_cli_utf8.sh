#!/bin/sh
# Every command's output is valid UTF-8 (issue 17, part 2): bytes that are
# not UTF-8 become U+FFFD, one per maximal subpart (the Unicode Standard's
# practice); a lone surrogate escape ("\ud800" in JSON input) is one U+FFFD
# in every form; no JSON record carries a lone "\udxxx" escape; surrogates
# in three bytes each (CESU-8) are never joined into an astral character.
#
#   tests/test_cli_utf8.sh AGENTWIRE SOURCE_DIR
set -u

. "$(dirname "$0")/support/cli_checks.sh"
R=$(printf '\357\277\275') # U+FFFD

# is WANT NAME: stdout is exactly WANT (a final newline dropped)
is() {
    checks=$((checks + 1))
    got=$(cat "$T/out")
    [ "$got" = "$1" ] || fail "$2: got '$got', wanted '$1'"
}

contains() { has "$1" "$2" "$T/out"; }

# clean NAME: stdout holds no lone-surrogate escape and no bytes that are
# not UTF-8 (iconv from UTF-8 refuses ill-formed input, surrogates too)
clean() {
    checks=$((checks + 1))
    # a \u not itself escaped ("\\ud800" is the text \ud800, which is fine)
    if grep -qiE '(^|[^\\])(\\\\)*\\ud[89a-f][0-9a-f]{2}' "$T/out"; then fail "$1: a lone surrogate escape: $(head -c 300 "$T/out")"; fi
    checks=$((checks + 1))
    iconv -f UTF-8 -t UTF-8 "$T/out" >/dev/null 2>&1 || fail "$1: output is not valid UTF-8"
}

# ---- messages toolcalls: raw text ---------------------------------------
printf 'hi \355\247\267 there' >"$T/lone.txt"
run_on "$T/lone.txt" 0 "toolcalls lone surrogate bytes" messages toolcalls
is '{"tool_calls":[],"text":"hi '"$R$R$R"' there","errors":[]}' "toolcalls: ED A7 B7 is three maximal subparts"
clean "toolcalls lone"

printf 'a \355\240\275\355\270\200 b \342\202 c \360\237\230 d \300\257' >"$T/cesu.txt"
run_on "$T/cesu.txt" 0 "toolcalls CESU-8 and cut characters" messages toolcalls
is '{"tool_calls":[],"text":"a '"$R$R$R$R$R$R"' b '"$R"' c '"$R"' d '"$R$R"'","errors":[]}' \
    "toolcalls: CESU-8 is six, a cut character one, an overlong two"
clean "toolcalls CESU-8"

printf 'x\n```json\n{"tool_calls":[{"name":"a","id":"\\ud800","args":{"q":"\\udfff\\ud83d\\ude00"}}]}\n```\n' >"$T/fenced.txt"
run_on "$T/fenced.txt" 0 "toolcalls escaped lone surrogates" messages toolcalls
is '{"tool_calls":[{"id":"'"$R"'","name":"a","args":{"q":"'"$R"'😀"}}],"text":"x\n","errors":[]}' \
    "toolcalls: an escaped lone surrogate is one U+FFFD, an escaped pair the character"
clean "toolcalls fenced"

# ---- transport extract: the reply as raw bytes --------------------------
cat >"$T/tools.json" <<'JSON'
[{"name": "search", "description": "Search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]
JSON
X="transport extract --nonce 1a2b3c4d --tools $T/tools.json --mode xml --turn 1"
printf 'hi \355\247\267 <ai-agent-1a2b3c4d-0001 tool="search">{"q": "\\ud800 \342\202"}</ai-agent-1a2b3c4d-0001><ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success" format="markdown">done \355\240\275\355\270\200.</ai-agent-1a2b3c4d-FINAL>' >"$T/reply.txt"
for chunk in "" "--chunk 1" "--chunk 5"; do
    run_on "$T/reply.txt" 0 "extract $chunk" $X $chunk --events
    contains '"content":"done '"$R$R$R$R$R$R"'."' "extract $chunk: final content, CESU-8 six U+FFFD"
    contains '"args":{"q":"'"$R $R"'"}' "extract $chunk: call args, escaped lone surrogate one, cut character one"
    [ -z "$chunk" ] && contains '"kind":"text","text":"hi '"$R$R$R"' "' "extract --events: text"
    clean "extract $chunk"
done
run_on "$T/reply.txt" 0 "extract --visible" $X --visible
is "hi $R$R$R " "extract --visible"

# ---- messages encode: JSON input, lone surrogate escapes ---------------
printf '[{"type":"human","content":"<thread>\\ud800"}]' >"$T/pass.json"
run_on "$T/pass.json" 0 "encode pass-through" messages encode
is "<thread>$R" "encode: a passed-through thread is scrubbed, one U+FFFD"
clean "encode pass-through"
run_on "$T/pass.json" 0 "encode pass-through text" messages encode --encoding text
is "[User]
<thread>$R" "encode text: one U+FFFD for one lone surrogate, as in XML"
clean "encode text pass-through"

printf '[{"role":"user","content":"a\\udc00b\\ud83d\\ude00"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\\"x\\":1}"}}]},{"role":"tool","tool_call_id":"c1","content":"\\ud800\\udbff"}]' >"$T/lone.json"
run_on "$T/lone.json" 0 "encode xml" messages encode
contains "a${R}b😀" "encode xml: human"
contains ">$R$R</event>" "encode xml: tool output, two lone surrogates two U+FFFD"
clean "encode xml"
run_on "$T/lone.json" 0 "encode text" messages encode --encoding text
contains "a${R}b😀" "encode text: user"
contains "[Tool Result]
$R$R" "encode text: tool result"
clean "encode text"

# ---- thread, envelope, contract: records as JSON -------------------------
printf '{"type":"message","role":"user","content":"q \\ud800","iteration":1}\n' >"$T/events.jsonl"
run_on "$T/events.jsonl" 0 "thread encode" thread encode
contains "q $R" "thread encode"
clean "thread encode"
printf '<thread>\n  <event type="human" id="0" iteration="0">q &#xFFFD;</event>\n</thread>' >"$T/t.xml"
run_on "$T/t.xml" 0 "thread decode" thread decode
clean "thread decode"

printf '{"event":"tool_started","at":"2025-01-01T00:00:00Z","tool_call_id":"c\\ud800","tool_name":"s","args":{"q":"\\udfff"}}\n' >"$T/env.jsonl"
run_on "$T/env.jsonl" 0 "envelope" envelope
contains "c$R" "envelope: lone surrogate in a field"
clean "envelope"

finish
