#!/usr/bin/env bash
# The json command end to end: validate, format, lines, repair; exit
# statuses (0 ok, 1 input rejected, 2 usage), FILE:line:col messages, stdin
# with and without -, --help at every level, option errors.
set -u
AW=${AW_CLI:?AW_CLI not set}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name expected actual
  if [ "$2" != "$3" ]; then echo "FAIL $1"; echo "  want: $2"; echo "  got:  $3"; fail=1; else echo "ok   $1"; fi
}
# run the command; sets out, err (stdout and stderr, without the last
# newline, as $(...) would) and rc
run() {
  "$AW" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}
run_in() { # stdin-text args...
  local input=$1
  shift
  printf '%s' "$input" | "$AW" "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

printf '{"b": [1, 2.50, -0, 1e21, "\\u00e9\\ud800"],\n "10": {}, "a": null, "2": true, "b": "last"}\n' >"$tmp/doc.json"
printf '{"a": 1,\n  "b" 2}\n' >"$tmp/bad.json"

# ---- validate ------------------------------------------------------------------
run json validate "$tmp/doc.json"
check "validate good: exit" 0 "$rc"
check "validate good: silent" "" "$out$err"
run json validate "$tmp/bad.json"
check "validate bad: exit" 1 "$rc"
check "validate bad: message" "$tmp/bad.json:2:7: unexpected '2': expected ':' after an object key" "$err"
check "validate bad: no output" "" "$out"
run_in '[1, 2' json validate -
check "validate stdin (-): exit" 1 "$rc"
check "validate stdin (-): message" "<stdin>:1:6: unexpected end of input" "$err"
run_in '[1, 2]' json validate
check "validate stdin (no FILE)" "0:" "$rc:$out$err"
run_in $'{"\xc3\xa9":"x",  ]' json validate
check "validate: columns count characters" "<stdin>:1:12: unexpected ']': expected a string key" "$err"
run_in '' json validate
check "validate empty: exit" 1 "$rc"
check "validate empty: message" "<stdin>:1:1: unexpected end of input" "$err"
run_in $'\xef\xbb\xbf{}' json validate
check "validate BOM refused" 1 "$rc"
run_in $'\xef\xbb\xbf{}' json validate --allow-bom
check "validate --allow-bom" 0 "$rc"
run_in $'"\xff"' json validate
check "validate bad UTF-8: exit" 1 "$rc"
case $err in "<stdin>:1:2: "*) r=ok ;; *) r="$err" ;; esac
check "validate bad UTF-8: place" ok "$r"
run_in '[[1]]' json validate --max-depth 1
check "validate --max-depth 1" 1 "$rc"
run_in '[[1]]' json validate --max-depth=2
check "validate --max-depth=2" 0 "$rc"
run json validate "$tmp/missing.json"
check "validate missing file: exit" 1 "$rc"
check "validate missing file: message" "agentwire: $tmp/missing.json: No such file or directory" "$err"
run json validate "$tmp/doc.json" "$tmp/doc.json"
check "validate two files" 2 "$rc"
run json validate --compact "$tmp/doc.json"
check "validate --compact is not an option" 2 "$rc"

# ---- format ----------------------------------------------------------------------
run json format "$tmp/doc.json"
check "format compact" '{"2":true,"10":{},"b":"last","a":null}' "$out"
check "format ends with a newline" "$(printf '%s\n' '{"2":true,"10":{},"b":"last","a":null}' | od -c)" "$(od -c <"$tmp/out")"
run_in '[1.50, -0, 1e21, 1E-7, 0.1, 100e-2, 9007199254740993, 1e400, "\u0001\u001f\/\ud83d\ude00\udc00", {}]' json format
check "format numbers and strings" $'[1.5,0,1e+21,1e-7,0.1,1,9007199254740992,null,"\\u0001\\u001f/\xf0\x9f\x98\x80\\udc00",{}]' "$out"
run json format --indent 2 "$tmp/doc.json"
check "format --indent 2" '{
  "2": true,
  "10": {},
  "b": "last",
  "a": null
}' "$out"
run_in '{"a":[1,{"b":[]}]}' json format --indent 4 -
check "format --indent 4 from -" '{
    "a": [
        1,
        {
            "b": []
        }
    ]
}' "$out"
run_in '[[]]' json format --indent=10
check "format --indent=10" "$(printf '[\n          []\n]')" "$out"
run_in '[[]]' json format --indent 0
check "format --indent 0" "[[]]" "$out"
run_in '[[]]' json format --indent 1
check "format --indent 1" "$(printf '[\n []\n]')" "$out"
for bad in 11 -1 x 2.5 "" 99999999999999999999; do
  run_in '[]' json format --indent "$bad"
  check "format --indent '$bad': exit" 2 "$rc"
  check "format --indent '$bad': no output" "" "$out"
done
check "format --indent 11: message" "agentwire: option '--indent' wants a whole number from 0 to 10, not '99999999999999999999'" "$err"
run_in '[]' json format --indent
check "format --indent without a value: exit" 2 "$rc"
check "format --indent without a value: message" "agentwire json format: option '--indent' needs a value
Try 'agentwire json format --help'." "$err"
run json format "$tmp/bad.json"
check "format bad: exit" 1 "$rc"
check "format bad: message" "$tmp/bad.json:2:7: unexpected '2': expected ':' after an object key" "$err"
check "format bad: no output" "" "$out"
run json format "$tmp/missing.json"
check "format missing file" "1:agentwire: $tmp/missing.json: No such file or directory" "$rc:$err"

# ---- lines -----------------------------------------------------------------------
printf '{"b":1, "a" : [1.0]}\nnot json\n\n   \n[1,\n{"2":0,"1":0}\r\n"\\ud800"\n{"x":1}' >"$tmp/lines.jsonl"
run json lines "$tmp/lines.jsonl"
check "lines: exit" 1 "$rc"
check "lines: no output without --compact" "" "$out"
check "lines: every bad line" "$tmp/lines.jsonl:2:1: unexpected 'n': expected a value
$tmp/lines.jsonl:5:4: unexpected end of input
$tmp/lines.jsonl: 2 of 8 lines are not valid JSON" "$err"
run json lines --compact "$tmp/lines.jsonl"
check "lines --compact: exit" 1 "$rc"
check "lines --compact: good lines" '{"b":1,"a":[1]}
{"1":0,"2":0}
"\ud800"
{"x":1}' "$out"
run_in $'{"a":1}\r\n\n[2]\n' json lines --compact
check "lines --compact stdin, CRLF, blank" "0:"'{"a":1}
[2]:' "$rc:$out:$err"
run_in $'{"a":1}\n' json lines -
check "lines all good" "0::" "$rc:$out:$err"
run_in '' json lines --compact
check "lines empty input" "0::" "$rc:$out:$err"
run_in $'[1]\n[[2]]\n' json lines --max-depth 1
check "lines --max-depth" "1:<stdin>:2:2: nesting deeper than 1 levels" "$rc:$(head -1 "$tmp/err")"
run json lines --indent 2 "$tmp/lines.jsonl"
check "lines --indent is not an option" 2 "$rc"
run json lines "$tmp/missing.jsonl"
check "lines missing file" "1:agentwire: $tmp/missing.jsonl: No such file or directory" "$rc:$err"
# a long line (past the command's 64 KiB read chunks) among short ones
awk 'BEGIN { printf "[1]\n["; for (i = 0; i < 30000; i++) printf "%s\"x%d\"", (i ? "," : ""), i; printf "]\n[2]\n" }' >"$tmp/long.jsonl"
run json lines --compact "$tmp/long.jsonl"
check "lines long line: exit" 0 "$rc"
check "lines long line: output" "$(cat "$tmp/long.jsonl")" "$out"

# ---- repair ----------------------------------------------------------------------
run_in "{'a': 1, b: [1, 2,],}" json repair
check "repair: exit" 0 "$rc"
check "repair: output" '{"a":1,"b":[1,2]}' "$out"
check "repair: steps" "repaired: single_quotes
repaired: unquoted_keys
repaired: trailing_comma" "$err"
run_in "{'a': 1, b: [1, 2,],}" json repair --quiet
check "repair --quiet" '0:{"a":1,"b":[1,2]}:' "$rc:$out:$err"
run_in "{'a': 1}" json repair -q -
check "repair -q -" '0:{"a":1}:' "$rc:$out:$err"
printf ' {"b":[],\n "a":{}} ' >"$tmp/valid.json"
run json repair "$tmp/valid.json"
check "repair valid JSON: unchanged" "0:$(cat "$tmp/valid.json"):" "$rc:$out:$err"
run_in '```json
{"a": 1
```' json repair
check "repair fenced, unclosed" '0:{"a":1}' "$rc:$out"
check "repair fenced, unclosed: steps" "repaired: code_fence
repaired: unclosed" "$err"
run_in '' json repair
check "repair nothing: exit" 1 "$rc"
check "repair nothing: message" "<stdin>:1:1: no JSON value found" "$err"
check "repair nothing: no output" "" "$out"
run json repair "$tmp/missing.json"
check "repair missing file" "1:agentwire: $tmp/missing.json: No such file or directory" "$rc:$err"
run json repair --indent 2 "$tmp/valid.json"
check "repair unknown option" "2:agentwire json repair: unknown option '--indent'
Try 'agentwire json repair --help'." "$rc:$err"

# ---- help and usage ----------------------------------------------------------------
for args in "--help" "json --help" "json -h" "json validate --help" "json format --help" "json lines --help" \
            "json repair --help" "json format -h" "json repair -h" "json lines -h"; do
  # shellcheck disable=SC2086
  run $args
  check "$args: exit" 0 "$rc"
  case $out in *Usage*|*usage*) r=ok ;; *) r="no usage text" ;; esac
  check "$args: text on stdout" ok "$r"
done
run json format --help
case $out in *"--indent N"*) r=ok ;; *) r="$out" ;; esac
check "json format --help names --indent" ok "$r"
run json repair --help
case $out in *"--quiet"*) r=ok ;; *) r="$out" ;; esac
check "json repair --help names --quiet" ok "$r"
run json
check "json without a command: exit" 2 "$rc"
run json frob
check "json unknown command" "2:agentwire json: unknown command 'frob'
Try 'agentwire json --help'." "$rc:$err"
for cmd in validate format lines repair; do
  run json $cmd --no-such-option "$tmp/doc.json"
  check "json $cmd unknown option: exit" 2 "$rc"
  case $err in *"unknown option '--no-such-option'"*) r=ok ;; *) r="$err" ;; esac
  check "json $cmd unknown option: message" ok "$r"
  run json $cmd -z "$tmp/doc.json"
  check "json $cmd unknown short option" 2 "$rc"
done
exit $fail
