#!/bin/sh
# grep {"pattern": "tool_call", "path": "session.jsonl"}: the lines of a file
# holding a fixed string, numbered, each cut to 160 characters.
set -eu
. "$(dirname "$0")/args.sh"
pattern=$(arg pattern)
path=$(arg path)
[ -n "$pattern" ] && [ -n "$path" ] || { echo "grep: 'pattern' and 'path' are required" >&2; exit 2; }
inside "$path" || { echo "grep: '$path' is outside the examples" >&2; exit 2; }
[ -f "$path" ] || { echo "grep: no file '$path'" >&2; exit 1; }
found=$(grep -n -F -- "$pattern" "$path" | cut -c1-160)
printf '%s\n' "${found:-no line holds '$pattern'}"
