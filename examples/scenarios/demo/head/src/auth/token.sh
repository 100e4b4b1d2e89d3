# Session tokens.

# token_new USER: prints a fresh random token for USER.
token_new() {
    seed=$(od -An -N4 -tu4 /dev/urandom)
    printf '%s-%s\n' "$1" "$(trim "$seed")"
}
