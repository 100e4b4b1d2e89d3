#!/bin/sh
# The test suite: sh tests/run.sh (exit status 0 when every test passes).
cd "$(dirname "$0")/.." || exit 2

. src/util/strings.sh
. src/auth/password.sh
. src/auth/token.sh
. src/auth/session.sh
. src/auth/login.sh

failures=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; failures=$((failures + 1)); }
expect_eq() { # NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}
expect_ok() { # NAME COMMAND...
    name=$1; shift
    if "$@"; then pass "$name"; else fail "$name"; fi
}
expect_fail() { # NAME COMMAND...
    name=$1; shift
    if "$@"; then fail "$name"; else pass "$name"; fi
}

work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
AUTH_DB=$work/users
SESSION_DIR=$work/sessions
mkdir "$SESSION_DIR"
printf 'ada:lovelace\ngrace:hopper\n' > "$AUTH_DB"

expect_eq "lc lower-cases" "hello" "$(lc HeLLo)"
expect_eq "trim strips spaces" "a b" "$(trim '  a b  ')"
expect_eq "trim strips tabs" "a" "$(trim "$(printf '\ta\t')")"
expect_ok "is_blank on blanks" is_blank "   "
expect_fail "is_blank on text" is_blank " x "
expect_ok "right password" password_check ada lovelace
expect_fail "wrong password" password_check ada babbage
expect_fail "another user's password" password_check ada hopper

token=$(token_new ada)
case $token in
    ada-[0-9]*) pass "a token names its user" ;;
    *) fail "a token names its user (got '$token')" ;;
esac
expect_fail "two tokens differ" [ "$token" = "$(token_new ada)" ]

id=$(login grace hopper)
expect_eq "login opens a session" "grace" "$(session_user "$id")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ] || exit 1
