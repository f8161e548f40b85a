#!/usr/bin/env bash
# agentwire contract validate | parse | build | prompt, run as a user would:
# outputs, every error with its path and line:col, exit statuses 0/1/2,
# --contract NAME|FILE, --strict, --extract.
set -u
. "$(dirname "$0")/support/cli_expect.sh"

# ---- fixtures ------------------------------------------------------------------
cat >"$tmp/reply.xml" <<'X'
<llmResponse>
  <response>For college savings, 529 plans &amp; more.</response>
  <analysis>
    <subject name="college-savings" description="Saving for school" isNew="true">
      <keyword term="529-plan" confidence="0.95" />
    </subject>
    <summaryUpdate>User asked about saving.</summaryUpdate>
  </analysis>
</llmResponse>
X
cat >"$tmp/bad.xml" <<'X'
<llmResponse>
  <response></response>
  <analysis>
    <subject name="a" description="d" isNew="true"/>
    <subject name="b" description="d" isNew="yes">
      <keyword term="t" confidence="1.5"/>
      <keyword confidence="0.5"/>
    </subject>
  </analysis>
</llmResponse>
X
cat >"$tmp/query.xml" <<'X'
<llmQuery>
  <userMessage>How much should we save for college?</userMessage>
  <context topicId="family-planning-2025" messageCount="12">
    <activeSubjects>family planning, education costs</activeSubjects>
    <recentKeywords>children, university, tuition, savings</recentKeywords>
  </context>
</llmQuery>
X
cat >"$tmp/ticket.json" <<'J'
{
  "format": "1.0",
  "name": "ticket",
  "version": "1.0.0",
  "root": {
    "name": "ticket",
    "attributes": [
      {"name": "id", "type": "integer", "min": 1, "required": true},
      {"name": "priority", "type": "enum", "values": ["low", "normal", "high"], "required": true}
    ],
    "children": [
      {"name": "title", "text": {"required": true, "maxLength": 40}, "description": "one-line summary"},
      {"name": "step", "min": 1, "max": "unbounded", "text": {"required": true}, "description": "what to do"}
    ]
  }
}
J

# ---- validate --------------------------------------------------------------------
status "validate good reply" 0 "$AW" contract validate "$tmp/reply.xml"
check "validate good reply prints nothing" "" "$(cat "$tmp/out" "$tmp/err")"
status "validate with explicit builtin" 0 "$AW" contract validate --contract llmResponse "$tmp/reply.xml"
status "validate stdin" 0 "$AW" contract validate - <"$tmp/reply.xml"
status "validate bad reply" 1 "$AW" contract validate "$tmp/bad.xml"
check "validate lists every error" "$tmp/bad.xml:2:3: empty_text: /llmResponse/response: response must not be empty
$tmp/bad.xml:5:5: bad_value: /llmResponse/analysis/subject[2]/@isNew: must be \"true\" or \"false\", not \"yes\"
$tmp/bad.xml:6:7: bad_value: /llmResponse/analysis/subject[2]/keyword[1]/@confidence: must be from 0 to 1, not 1.5
$tmp/bad.xml:7:7: missing_attribute: /llmResponse/analysis/subject[2]/keyword[2]/@term: required attribute term is missing
$tmp/bad.xml:3:3: missing_element: /llmResponse/analysis/summaryUpdate: required element <summaryUpdate> is missing" "$(cat "$tmp/err")"
check "validate bad reply stdout empty" "" "$(cat "$tmp/out")"
status "validate stdin name" 1 "$AW" contract validate <"$tmp/bad.xml"
check "stdin is named <stdin>" "<stdin>:2:3: empty_text: /llmResponse/response: response must not be empty" "$(head -1 "$tmp/err")"
printf '<llmResponse>\n  <response>x</respons>\n</llmResponse>\n' >"$tmp/broken.xml"
status "validate malformed" 1 "$AW" contract validate "$tmp/broken.xml"
check "malformed line:col" "$tmp/broken.xml:2:16: malformed: malformed XML: mismatched tag" "$(cat "$tmp/err")"
printf '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<llmResponse><response>&x;</response></llmResponse>\n' >"$tmp/xxe.xml"
status "external entity refused" 1 "$AW" contract validate "$tmp/xxe.xml"
check "external entity message" "$tmp/xxe.xml:1:13: malformed: a DOCTYPE is not allowed (entity and DTD processing are refused)" "$(cat "$tmp/err")"
status "query against the response contract" 1 "$AW" contract validate "$tmp/query.xml"
check "wrong root" "$tmp/query.xml:1:1: wrong_root: /llmResponse: the root element must be <llmResponse>, not <llmQuery>" "$(cat "$tmp/err")"
status "query against llmQuery" 0 "$AW" contract validate --contract llmQuery "$tmp/query.xml"

# ---- --strict ----------------------------------------------------------------------
sed 's|<summaryUpdate>|<mood>calm</mood><summaryUpdate lang="en">|' "$tmp/reply.xml" >"$tmp/extra.xml"
status "unknowns are fine by default" 0 "$AW" contract validate "$tmp/extra.xml"
status "unknowns rejected by --strict" 1 "$AW" contract validate --strict "$tmp/extra.xml"
check "strict errors" "$tmp/extra.xml:7:5: unknown_element: /llmResponse/analysis/mood: element <mood> is not part of the contract
$tmp/extra.xml:7:22: unknown_attribute: /llmResponse/analysis/summaryUpdate/@lang: attribute lang is not part of the contract" "$(cat "$tmp/err")"
status "parse --strict" 1 "$AW" contract parse --strict "$tmp/extra.xml"
check "parse --strict first error" "$tmp/extra.xml:7:5: unknown_element: /llmResponse/analysis/mood: element <mood> is not part of the contract" "$(cat "$tmp/err")"

# ---- --extract ------------------------------------------------------------------
{
  printf 'Sure! I will answer in the <llmResponse> format you asked for:\n\n```xml\n'
  cat "$tmp/reply.xml"
  printf '```\n\nAnything else?\n'
} >"$tmp/reply.md"
status "prose without --extract" 1 "$AW" contract validate "$tmp/reply.md"
check "prose is malformed" "malformed" "$(cut -d: -f4 "$tmp/err" | tr -d ' ')"
status "prose with --extract" 0 "$AW" contract validate --extract "$tmp/reply.md"
status "parse --extract" 0 "$AW" contract parse --extract "$tmp/reply.md"
check "parse --extract output" '{"response":"For college savings, 529 plans & more.","analysis":{"subject":[{"name":"college-savings","description":"Saving for school","isNew":true,"keyword":[{"term":"529-plan","confidence":0.95}]}],"summaryUpdate":"User asked about saving."}}' "$(cat "$tmp/out")"
{
  printf 'Here you go:\n'
  cat "$tmp/bad.xml"
} >"$tmp/bad.md"
status "extract keeps positions in the whole text" 1 "$AW" contract validate --extract "$tmp/bad.md"
check "extract positions" "$tmp/bad.md:3:3: empty_text: /llmResponse/response: response must not be empty" "$(head -1 "$tmp/err")"
printf 'No XML at all.\n' >"$tmp/none.md"
status "extract finds nothing" 1 "$AW" contract validate --extract "$tmp/none.md"
check "not found" "$tmp/none.md:1:1: not_found: no complete <llmResponse> document in the text" "$(cat "$tmp/err")"

# ---- parse -----------------------------------------------------------------------
status "parse reply" 0 "$AW" contract parse "$tmp/reply.xml"
check "parse reply output" '{"response":"For college savings, 529 plans & more.","analysis":{"subject":[{"name":"college-savings","description":"Saving for school","isNew":true,"keyword":[{"term":"529-plan","confidence":0.95}]}],"summaryUpdate":"User asked about saving."}}' "$(cat "$tmp/out")"
check "parse output ends with a newline" "1" "$(wc -l <"$tmp/out" | tr -d ' ')"
status "parse query" 0 "$AW" contract parse --contract llmQuery "$tmp/query.xml"
check "parse query output" '{"userMessage":"How much should we save for college?","context":{"topicId":"family-planning-2025","messageCount":12,"activeSubjects":["family planning","education costs"],"recentKeywords":["children","university","tuition","savings"]}}' "$(cat "$tmp/out")"
status "parse bad reply" 1 "$AW" contract parse "$tmp/bad.xml"
check "parse reports the first error only" "$tmp/bad.xml:2:3: empty_text: /llmResponse/response: response must not be empty" "$(cat "$tmp/err")"
check "parse bad reply stdout empty" "" "$(cat "$tmp/out")"

# ---- build -----------------------------------------------------------------------
status "build query" 0 "$AW" contract build --contract llmQuery - <<<'{"userMessage":"How much should we save for college?","context":{"topicId":"family-planning-2025","messageCount":12,"activeSubjects":["family planning","education costs"],"recentKeywords":["children","university","tuition","savings"]}}'
check "build query is the seed's layout" "$(cat "$tmp/query.xml")" "$(cat "$tmp/out")"
"$AW" contract parse --contract llmQuery "$tmp/query.xml" | "$AW" contract build --contract llmQuery >"$tmp/rt.xml"
check "parse | build round trip" "$(cat "$tmp/query.xml")" "$(cat "$tmp/rt.xml")"
status "build escapes" 0 "$AW" contract build --contract llmQuery - <<<'{"userMessage":"a < b & \"c\"","context":{"topicId":"x\u0027y","messageCount":0}}'
check "build escapes output" '<llmQuery>
  <userMessage>a &lt; b &amp; &quot;c&quot;</userMessage>
  <context topicId="x&apos;y" messageCount="0" />
</llmQuery>' "$(cat "$tmp/out")"
status "build bad value" 1 "$AW" contract build - <<<'{"response":"r","analysis":{"subject":[{"name":"a","description":"b","isNew":true,"keyword":[{"term":"t","confidence":1.5}]}],"summaryUpdate":""}}'
check "build bad value message" "<stdin>: bad_value: /llmResponse/analysis/subject[1]/keyword[1]/@confidence: must be from 0 to 1, not 1.5" "$(cat "$tmp/err")"
check "build bad value stdout empty" "" "$(cat "$tmp/out")"
status "build wrong shape" 1 "$AW" contract build - <<<'[1]'
check "build wrong shape message" "<stdin>: /llmResponse: expected an object" "$(cat "$tmp/err")"
printf '{"response":\n' >"$tmp/broken.json"
status "build broken JSON" 1 "$AW" contract build "$tmp/broken.json"
check "build broken JSON message" "$tmp/broken.json:2:1: unexpected end of input" "$(cat "$tmp/err")"

# ---- prompt ----------------------------------------------------------------------
status "prompt" 0 "$AW" contract prompt
check "prompt first line" "You are an AI assistant. Always respond using this XML format:" "$(head -1 "$tmp/out")"
check "prompt last line" '- Use lowercase, hyphenated terms for names (e.g., "college-savings")' "$(tail -1 "$tmp/out")"
check "prompt is 20 lines" "20" "$(wc -l <"$tmp/out" | tr -d ' ')"
status "prompt llmQuery" 0 "$AW" contract prompt --contract llmQuery
check "prompt llmQuery mentions the limit" "- the text of <userMessage> has at most 10000 characters" "$(grep 10000 "$tmp/out")"

# ---- a contract file -------------------------------------------------------------
printf '<ticket id="7" priority="high">\n  <title>Login fails</title>\n  <step>Reproduce</step>\n  <step>Fix</step>\n</ticket>\n' >"$tmp/t.xml"
status "user contract validate" 0 "$AW" contract validate --contract "$tmp/ticket.json" "$tmp/t.xml"
status "user contract parse" 0 "$AW" contract parse --contract "$tmp/ticket.json" "$tmp/t.xml"
check "user contract parse output" '{"id":7,"priority":"high","title":"Login fails","step":["Reproduce","Fix"]}' "$(cat "$tmp/out")"
"$AW" contract build --contract "$tmp/ticket.json" "$tmp/out" >"$tmp/t2.xml"
check "user contract build" "$(cat "$tmp/t.xml")" "$(cat "$tmp/t2.xml")"
status "user contract prompt" 0 "$AW" contract prompt --contract "$tmp/ticket.json"
check "user contract prompt body" '<ticket id="integer" priority="low|normal|high">
  <title>[one-line summary]</title>
  <step>[what to do]</step>
  <!-- Repeat <step> 1 or more times -->
</ticket>' "$(sed -n 3,7p "$tmp/out")"
printf '<ticket id="0" priority="urgent"><title>t</title></ticket>' >"$tmp/t3.xml"
status "user contract errors" 1 "$AW" contract validate --contract "$tmp/ticket.json" "$tmp/t3.xml"
check "user contract error list" "$tmp/t3.xml:1:1: bad_value: /ticket/@id: must be at least 1, not 0
$tmp/t3.xml:1:1: bad_value: /ticket/@priority: must be one of the listed values, not \"urgent\"
$tmp/t3.xml:1:1: missing_element: /ticket/step: required element <step> is missing" "$(cat "$tmp/err")"
sed 's/"format": "1.0"/"format": "2.0"/' "$tmp/ticket.json" >"$tmp/ticket2.json"
status "contract major version refused" 1 "$AW" contract validate --contract "$tmp/ticket2.json" "$tmp/t.xml"
check "major version message" "$tmp/ticket2.json: contract format version 2.0 is not supported (this agentwire reads 1.x)" "$(cat "$tmp/err")"
sed 's/"format": "1.0"/"format": "1.4"/' "$tmp/ticket.json" >"$tmp/ticket14.json"
status "contract minor version accepted" 0 "$AW" contract validate --contract "$tmp/ticket14.json" "$tmp/t.xml"
printf '{"format":"1.0","root":{"name":"a b"}}' >"$tmp/badname.json"
status "bad contract" 1 "$AW" contract prompt --contract "$tmp/badname.json"
check "bad contract message" "$tmp/badname.json: contract element: 'name' must be an XML element name" "$(cat "$tmp/err")"
status "missing contract file" 2 "$AW" contract validate --contract "$tmp/nope.json" "$tmp/t.xml"
check "missing contract message" "agentwire contract validate: --contract '$tmp/nope.json' is not a file (No such file or directory), and no built-in contract named '$tmp/nope.json' (try llmQuery or llmResponse)" "$(head -1 "$tmp/err")"
status "built-in contracts as files" 0 "$AW" contract validate --contract "$SRC/contracts/llmResponse.json" "$tmp/reply.xml"
"$AW" contract prompt --contract "$SRC/contracts/llmResponse.json" >"$tmp/p1"
"$AW" contract prompt >"$tmp/p2"
check "file and built-in prompts agree" "$(cat "$tmp/p2")" "$(cat "$tmp/p1")"

# ---- usage errors ----------------------------------------------------------------
status "no command" 2 "$AW" contract
status "unknown command" 2 "$AW" contract check "$tmp/reply.xml"
status "unknown option" 2 "$AW" contract validate --lenient "$tmp/reply.xml"
status "--strict is not for build" 2 "$AW" contract build --strict "$tmp/reply.xml"
status "--extract is not for prompt" 2 "$AW" contract prompt --extract
status "prompt takes no FILE" 2 "$AW" contract prompt "$tmp/reply.xml"
check "prompt takes no FILE message" "agentwire contract prompt: takes no FILE" "$(head -1 "$tmp/err")"
status "--contract needs a value" 2 "$AW" contract validate --contract
status "two files" 2 "$AW" contract validate "$tmp/reply.xml" "$tmp/query.xml"
status "missing input file" 1 "$AW" contract validate "$tmp/nope.xml"
status "help" 0 "$AW" contract --help
check "help text" "Usage: agentwire contract COMMAND [--contract NAME|FILE] [options] [FILE]" "$(head -1 "$tmp/out")"
status "verb help" 0 "$AW" contract validate --help
status "--contract=VALUE" 0 "$AW" contract validate --contract=llmQuery "$tmp/query.xml"

exit $fail
