#!/usr/bin/env bash
# The differential test against ajv (issue 11): tests/schema-ajv/differential.js
# generates thousands of instances (near-valid, then mutated) for the tool
# schemas of two real MCP servers (@modelcontextprotocol/server-filesystem
# and server-everything, their tools/list answers in fixtures/) and
# OpenAI-style function definitions, and records ajv's verdict on each
# (ajv + ajv-formats, pinned by tests/schema-ajv/package-lock.json; draft-07
# or 2020-12 by $schema, formats asserted). `agentwire schema validate
# --format-assert` judges the same instances; every verdict must agree, or
# the difference must be one of ajv's documented deviations from the
# specification (tests/schema-ajv/deviations.js lists them and the rule
# that recognises each). Without node: "skipped: node not found", exit 0.
# The first run installs the pinned packages (npm ci).
#
#   AW_CLI=build/agentwire tests/test_schema_ajv.sh
# AW_SCHEMA_AJV_INSTANCES (150) sets the instances per schema.
set -u
AW=${AW_CLI:?AW_CLI not set}
SRC=${AW_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
dir=$SRC/tests/schema-ajv
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "skipped: node not found"
  exit 0
fi
if [ ! -d "$dir/node_modules/ajv-formats" ]; then
  (cd "$dir" && npm ci --silent --no-audit --no-fund) || { echo "FAIL npm ci in $dir (the npm registry must be reachable once)"; exit 1; }
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aw-schema-ajv.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
node "$dir/differential.js" "$tmp" "${AW_SCHEMA_AJV_INSTANCES:-150}" || { echo "FAIL generator"; exit 1; }

total=0 agree=0
: >"$tmp/differ.tsv"
while IFS=$'\t' read -r id name draft; do
  "$AW" schema validate --format-assert --schema "$tmp/$id.schema.json" "$tmp/$id.jsonl" >"$tmp/$id.out" 2>"$tmp/$id.err"
  rc=$?
  if [ "$rc" -gt 1 ] || [ -s "$tmp/$id.err" ]; then
    echo "FAIL $name: agentwire exit $rc: $(head -c 400 "$tmp/$id.err")"
    exit 1
  fi
  n=$(wc -l <"$tmp/$id.jsonl")
  [ "$(wc -l <"$tmp/$id.out")" -eq "$n" ] || { echo "FAIL $name: $n instances, $(wc -l <"$tmp/$id.out") verdicts"; exit 1; }
  sed 's/^{"valid":\(true\|false\).*/\1/' "$tmp/$id.out" >"$tmp/$id.aw"
  # the instances where the verdicts differ, with agentwire's output
  paste "$tmp/$id.ajv" "$tmp/$id.aw" "$tmp/$id.jsonl" "$tmp/$id.out" |
    awk -F'\t' -v s="$tmp/$id.schema.json" '$1 != $2 { print s "\t" $3 "\t" $4 }' >>"$tmp/differ.tsv"
  total=$((total + n))
done <"$tmp/index.tsv"
differ=$(wc -l <"$tmp/differ.tsv")
echo "$total instances over $(wc -l <"$tmp/index.tsv") schemas: $((total - differ)) verdicts agree with ajv, $differ differ"
[ "$total" -ge 5000 ] || { echo "FAIL only $total instances"; exit 1; }
if [ "$differ" -gt 0 ]; then
  node "$dir/deviations.js" <"$tmp/differ.tsv" || { echo "FAIL differences that are not documented ajv deviations"; exit 1; }
fi
echo "ok   ajv differential"
