#!/bin/sh
# count_lines {"path": "session.jsonl"}: how many lines a file has.
set -eu
. "$(dirname "$0")/args.sh"
path=$(arg path)
[ -n "$path" ] || { echo "count_lines: 'path' is required" >&2; exit 2; }
inside "$path" || { echo "count_lines: '$path' is outside the examples" >&2; exit 2; }
[ -f "$path" ] || { echo "count_lines: no file '$path'" >&2; exit 1; }
printf '%s lines in %s\n' "$(wc -l <"$path" | tr -d ' ')" "$path"
