# Shared by the demo's tools: read the call's JSON arguments from stdin.
# `arg NAME` prints the string value of NAME: plain strings only (no
# escapes), which is all these tools take; no jq, no python.
ARGS=$(cat)

arg() {
    printf '%s' "$ARGS" | tr '\n' ' ' |
        sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"\\\\]*\)\".*/\1/p"
}

# `inside PATH`: PATH is relative and stays under the working directory.
inside() {
    case "$1" in
    /* | .. | ../* | */.. | */../*) return 1 ;;
    esac
    return 0
}
