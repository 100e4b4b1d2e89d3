# String helpers.

# lc VALUE: prints VALUE in lower case.
lc() {
    printf '%s\n' "$1" | tr '[:upper:]' '[:lower:]'
}
