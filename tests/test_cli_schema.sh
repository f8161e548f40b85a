#!/usr/bin/env bash
# agentwire schema validate | check, run as a user would: one JSON line per
# instance (a document or JSON lines), exit statuses 0/1/2, file:line:col
# for JSON errors, the keyword location for schema errors, --draft,
# --format-assert, --ref; and the schema errors in transport extract's
# rejection records.
set -u
. "$(dirname "$0")/support/cli_expect.sh"

cat >"$tmp/tool.json" <<'J'
{"type": "object",
 "properties": {"path": {"type": "string", "pattern": "^/"}, "head": {"type": "integer"}},
 "required": ["path"], "additionalProperties": false}
J
printf '{"path": "/etc"}\n\n{"path": 3, "x": 1}\n{"head": 1}\n' >"$tmp/calls.jsonl"

status "validate JSON lines" 1 "$AW" schema validate --schema "$tmp/tool.json" "$tmp/calls.jsonl"
check "validate JSON lines (stdout)" '{"valid":true}
{"valid":false,"errors":[{"instanceLocation":"/path","keywordLocation":"/properties/path/type","error":"expected string, got number 3"},{"instanceLocation":"/x","keywordLocation":"/additionalProperties","error":"property \"x\" is not allowed"}]}
{"valid":false,"errors":[{"instanceLocation":"","keywordLocation":"/required","error":"missing required property \"path\""}]}' "$(cat "$tmp/out")"

printf '{\n  "path": "/a",\n  "head": 2\n}\n' >"$tmp/one.json"
status "validate one document" 0 "$AW" schema validate --schema "$tmp/tool.json" "$tmp/one.json"
check "validate one document (stdout)" '{"valid":true}' "$(cat "$tmp/out")"
status "validate stdin" 0 sh -c "printf '{\"path\":\"/\"}' | '$AW' schema validate --schema '$tmp/tool.json' -"
check "validate stdin (stdout)" '{"valid":true}' "$(cat "$tmp/out")"

printf '{"path": "/a"}\n{"path": \n{"path": "/b"}\n' >"$tmp/broken.jsonl"
status "a line that is not JSON" 1 "$AW" schema validate --schema "$tmp/tool.json" "$tmp/broken.jsonl"
check "a line that is not JSON (stderr)" "$tmp/broken.jsonl:2:10: unexpected end of input" "$(cat "$tmp/err")"
check "a line that is not JSON (others checked)" '{"valid":true}
{"valid":true}' "$(cat "$tmp/out")"

printf '{"type": "object",\n "properties": {"a": {"minLength": -1}}}' >"$tmp/bad.json"
status "schema rejected" 1 "$AW" schema validate --schema "$tmp/bad.json" "$tmp/one.json"
check "schema rejected (stderr)" "$tmp/bad.json: /properties/a/minLength: must be a non-negative integer" "$(cat "$tmp/err")"
printf '{"type": "object",\n "required": [1,]}' >"$tmp/notjson.json"
status "schema not JSON" 1 "$AW" schema validate --schema "$tmp/notjson.json" "$tmp/one.json"
check "schema not JSON (stderr)" "$tmp/notjson.json:2:17: trailing comma before ']'" "$(cat "$tmp/err")"

# dialects and formats
printf '{"items": [{"type": "string"}], "additionalItems": false}' >"$tmp/d7.json"
status "--draft 7" 1 sh -c "printf '[\"a\", 1]' | '$AW' schema validate --draft 7 --schema '$tmp/d7.json'"
check "--draft 7 (stdout)" '{"valid":false,"errors":[{"instanceLocation":"/1","keywordLocation":"/additionalItems","error":"item 1 is not allowed (no items beyond the listed ones)"}]}' "$(cat "$tmp/out")"
status "--draft 2020-12 refuses a tuple items" 1 sh -c "printf '[]' | '$AW' schema validate --schema '$tmp/d7.json'"
status "--draft unknown" 2 "$AW" schema validate --draft 4 --schema "$tmp/d7.json"
printf '{"format": "email"}' >"$tmp/email.json"
status "format annotates" 0 sh -c "printf '\"not an email\"' | '$AW' schema validate --schema '$tmp/email.json'"
status "--format-assert" 1 sh -c "printf '\"not an email\"' | '$AW' schema validate --format-assert --schema '$tmp/email.json'"
check "--format-assert (stdout)" '{"valid":false,"errors":[{"instanceLocation":"","keywordLocation":"/format","error":"string \"not an email\" is not a valid email"}]}' "$(cat "$tmp/out")"

# references by URI, never fetched
printf '{"$id": "https://example.com/main.json", "properties": {"p": {"$ref": "defs.json#/$defs/path"}}}' >"$tmp/main.json"
printf '{"$defs": {"path": {"type": "string"}}}' >"$tmp/defs.json"
status "unresolved \$ref" 1 sh -c "printf '{}' | '$AW' schema validate --schema '$tmp/main.json'"
check "unresolved \$ref (stderr)" "$tmp/main.json: /properties/p/\$ref: cannot resolve \"defs.json#/\$defs/path\" (https://example.com/defs.json#/\$defs/path)" "$(cat "$tmp/err")"
status "--ref" 1 sh -c "printf '{\"p\": 1}' | '$AW' schema validate --ref 'https://example.com/defs.json=$tmp/defs.json' --schema '$tmp/main.json'"
check "--ref (stdout)" '{"valid":false,"errors":[{"instanceLocation":"/p","keywordLocation":"/properties/p/$ref/type","absoluteKeywordLocation":"https://example.com/defs.json#/$defs/path/type","error":"expected string, got number 1"}]}' "$(cat "$tmp/out")"
status "--ref without =" 2 "$AW" schema validate --ref nothing --schema "$tmp/main.json"
status "--schema missing" 2 "$AW" schema validate "$tmp/one.json"
status "unknown option" 2 "$AW" schema validate --schema "$tmp/tool.json" --fast
status "--max-errors" 1 sh -c "printf '[1,2,3]' | '$AW' schema validate --max-errors 1 --schema '$SRC/schemas/draft2020-12/meta/core.json'"
printf '{"items": {"type": "string"}}' >"$tmp/strings.json"
status "--max-errors 1" 1 sh -c "printf '[1,2,3]' | '$AW' schema validate --max-errors 1 --schema '$tmp/strings.json'"
check "--max-errors 1 (stdout)" '{"valid":false,"errors":[{"instanceLocation":"/0","keywordLocation":"/items/type","error":"expected string, got number 1"}],"truncated":true}' "$(cat "$tmp/out")"

# check
status "check a valid schema" 0 "$AW" schema check "$tmp/tool.json"
check "check a valid schema (stdout)" '{"valid":true}' "$(cat "$tmp/out")"
printf '{"type": "strnig", "properties": {"a": {"pattern": "(?i)a"}}}' >"$tmp/wrong.json"
status "check an invalid schema" 1 "$AW" schema check "$tmp/wrong.json"
check "check an invalid schema (stderr)" "$tmp/wrong.json: /properties/a/pattern: string \"(?i)a\" is not a valid regex
$tmp/wrong.json: /type: string \"strnig\" is not one of \"array\", \"boolean\", \"integer\", \"null\", \"number\", \"object\", \"string\"
$tmp/wrong.json: /type: expected array, got string \"strnig\"
$tmp/wrong.json: /type: matches none of the 2 anyOf schemas" "$(cat "$tmp/err")"
printf '{"$schema": "http://json-schema.org/draft-07/schema#", "exclusiveMinimum": true}' >"$tmp/wrong7.json"
status "check draft-07 by \$schema" 1 "$AW" schema check "$tmp/wrong7.json"
check "check draft-07 by \$schema (stderr)" "$tmp/wrong7.json: /exclusiveMinimum: expected number, got boolean true" "$(cat "$tmp/err")"
printf '{"$ref": "#/$defs/none"}' >"$tmp/dangling.json"
status "check: what only compiling finds" 1 "$AW" schema check "$tmp/dangling.json"
check "check: what only compiling finds (stderr)" "$tmp/dangling.json: /\$ref: cannot resolve \"#/\$defs/none\"" "$(cat "$tmp/err")"
printf '{"$schema": "https://json-schema.org/draft/2019-09/schema"}' >"$tmp/2019.json"
status "check an unknown dialect" 1 "$AW" schema check "$tmp/2019.json"
status "check the 2020-12 meta-schema" 0 "$AW" schema check "$SRC/schemas/draft2020-12/schema.json"
status "check without FILE" 2 "$AW" schema check
status "schema --help" 0 "$AW" schema --help
grep -q 'schema validate --schema FILE\|validate --schema FILE' "$tmp/out"; check "schema --help names validate" 0 "$?"
status "top-level --help names schema" 0 "$AW" --help
grep -q '^  schema ' "$tmp/out"; check "top-level --help lists schema" 0 "$?"

# transport extract: schema errors in the rejection records and the final report
printf '[{"name": "read_file", "inputSchema": %s}]' "$(cat "$tmp/tool.json")" >"$tmp/tools.json"
printf '{"type": "object", "required": ["summary"]}' >"$tmp/final.json"
cat >"$tmp/reply.txt" <<'R'
<ai-agent-1a2b3c4d-0001 tool="read_file">{"path": "etc"}</ai-agent-1a2b3c4d-0001>
<ai-agent-1a2b3c4d-FINAL tool="agent__final_report" status="success" format="json">{"sum": 1}</ai-agent-1a2b3c4d-FINAL>
R
status "transport extract with schemas" 0 "$AW" transport extract --nonce 1a2b3c4d --mode xml --turn 1 --tools "$tmp/tools.json" --format json --schema "$tmp/final.json" "$tmp/reply.txt"
check "transport extract: rejection record" '{"kind":"rejected","slot":"0001","tool":"read_file","reason":"invalid_arguments","message":"Tool `read_file` arguments do not match its schema: /path: string \"etc\" does not match the pattern \"^/\". Fix the arguments and call again.","errors":[{"instanceLocation":"/path","keywordLocation":"/properties/path/pattern","error":"string \"etc\" does not match the pattern \"^/\""}]}' "$(sed -n 1p "$tmp/out")"
check "transport extract: final report" '{"kind":"final","status":"success","format":"json","content":"{\"sum\": 1}","json":{"sum":1},"truncated":false,"repairs":[],"command":"agent__final_report_xml","schema_valid":false,"schema_errors":[{"instanceLocation":"","keywordLocation":"/required","error":"missing required property \"summary\""}]}' "$(sed -n 2p "$tmp/out")"
printf '[{"name": "t", "inputSchema": {"pattern": "("}}]' >"$tmp/badtools.json"
status "transport with a tool schema that does not compile" 1 "$AW" transport extract --nonce 1a2b3c4d --mode xml --turn 1 --tools "$tmp/badtools.json" "$tmp/reply.txt"
grep -q 'tool `t`: /pattern: invalid regular expression' "$tmp/err"; check "the tool is named" 0 "$?"

exit $fail
