#!/usr/bin/env bash
# The JSON writer through the command against node itself: 10,000 random
# documents (tests/vectors/json/random_docs.js, fixed seed: deep and wide,
# random Unicode with lone surrogates, doubles of every kind, index-like and
# duplicate keys, lines past 64 KiB, CRLF and blank lines) must come out of
#   agentwire json lines --compact          as JSON.stringify(JSON.parse(line))
#   agentwire json format --indent N        as JSON.stringify(value, null, N)
# byte for byte. Without node: "skipped: node not found", exit 0.
#
#   AW_CLI=build/agentwire tests/test_json_node.sh
# AW_JSON_NODE_DOCS (10000) and AW_JSON_NODE_SEED change the corpus.
set -u
AW=${AW_CLI:?AW_CLI not set}
SRC=${AW_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v node >/dev/null 2>&1; then
  echo "skipped: node not found"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/aw-json-node.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
COUNT=${AW_JSON_NODE_DOCS:-10000}
SEED=${AW_JSON_NODE_SEED:-20260116}
node "$SRC/tests/vectors/json/random_docs.js" "$tmp" "$COUNT" "$SEED" || { echo "FAIL generator"; exit 1; }
fail=0

# Show document N (1-based) of docs_plain.txt with the expected and actual
# outputs, cut to 600 bytes each.
show() { # n expected-file actual-file
  echo "  document $1: $(sed -n "$1p" "$tmp/docs_plain.txt" | head -c 600)"
  echo "  want:     $(sed -n "$1p" "$2" | head -c 600)"
  echo "  got:      $(sed -n "$1p" "$3" | head -c 600)"
}

# 1. every document, one line each
"$AW" json lines --compact "$tmp/docs.jsonl" >"$tmp/got.jsonl" 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL json lines exit $rc"
  head -5 "$tmp/err.txt"
  fail=1
fi
if cmp -s "$tmp/compact.jsonl" "$tmp/got.jsonl"; then
  echo "ok   json lines --compact: $COUNT documents as JSON.stringify writes them"
else
  n=$(cmp "$tmp/compact.jsonl" "$tmp/got.jsonl" 2>&1 | awk '/differ/ {print $NF; exit} /EOF/ {print 0}')
  [ -n "$n" ] && [ "$n" != 0 ] || n=$(( $(wc -l <"$tmp/got.jsonl") + 1 ))
  echo "FAIL json lines --compact: first difference on output line $n"
  show "$n" "$tmp/compact.jsonl" "$tmp/got.jsonl"
  echo "  ($(diff "$tmp/compact.jsonl" "$tmp/got.jsonl" | grep -c '^<') lines differ)"
  fail=1
fi

# 2. the same from stdin, through format one whole array (every 25th document)
for n in 2 4 10; do
  "$AW" json format --indent "$n" - <"$tmp/pretty.json" >"$tmp/pretty.got" 2>"$tmp/err.txt"
  rc=$?
  if [ $rc -eq 0 ] && cmp -s "$tmp/pretty$n.txt" "$tmp/pretty.got"; then
    echo "ok   json format --indent $n: $(( (COUNT + 24) / 25 )) documents in one array"
  else
    line=$(cmp "$tmp/pretty$n.txt" "$tmp/pretty.got" 2>&1 | awk '/differ/ {print $NF; exit}')
    echo "FAIL json format --indent $n (exit $rc): first difference on line ${line:-?}"
    head -3 "$tmp/err.txt"
    [ -n "$line" ] && diff <(sed -n "$((line > 3 ? line - 3 : 1)),$((line + 3))p" "$tmp/pretty$n.txt") \
                           <(sed -n "$((line > 3 ? line - 3 : 1)),$((line + 3))p" "$tmp/pretty.got") | head -20
    fail=1
  fi
done

# 3. single documents, by file, at the indents from 0 to 10 in turn
bad=0 total=0
for f in "$tmp"/single/*.json; do
  base=${f%.json}
  n=${base##*-}
  total=$((total + 1))
  "$AW" json format --indent "$n" "$f" >"$tmp/one.got" 2>"$tmp/err.txt"
  if ! cmp -s "$base.want" "$tmp/one.got"; then
    if [ $bad -eq 0 ]; then
      echo "FAIL json format --indent $n $(basename "$f")"
      echo "  document: $(head -c 600 "$f")"
      echo "  want:     $(head -c 600 "$base.want")"
      echo "  got:      $(head -c 600 "$tmp/one.got")"
      head -3 "$tmp/err.txt"
    fi
    bad=$((bad + 1))
  fi
done
if [ $bad -eq 0 ]; then echo "ok   json format --indent 0..10: $total documents"; else echo "FAIL $bad of $total single documents"; fail=1; fi
exit $fail
