# String helpers.

# lc VALUE: prints VALUE in lower case.
lc() {
    printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]'
}

# trim VALUE: prints VALUE without leading and trailing blanks.
trim() {
    printf '%s\n' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'
}

# is_blank VALUE: succeeds when VALUE is empty or only blanks.
is_blank() {
    s=$(trim "$1")
    [ -z "$s" ]
}
