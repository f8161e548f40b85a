#!/bin/sh
# list_files {"dir": "."}: the files of a directory, one a line: size in
# bytes, then the name.
set -eu
. "$(dirname "$0")/args.sh"
dir=$(arg dir)
dir=${dir:-.}
inside "$dir" || { echo "list_files: '$dir' is outside the examples" >&2; exit 2; }
[ -d "$dir" ] || { echo "list_files: no directory '$dir'" >&2; exit 1; }
for f in "$dir"/*; do
    [ -f "$f" ] && printf '%s %s\n' "$(wc -c <"$f" | tr -d ' ')" "${f#./}"
done
exit 0
