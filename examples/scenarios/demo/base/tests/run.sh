#!/bin/sh
# The test suite: sh tests/run.sh (exit status 0 when every test passes).
cd "$(dirname "$0")/.." || exit 2

. src/util/strings.sh

failures=0
pass() { echo "ok - $1"; }
fail() { echo "FAIL - $1"; failures=$((failures + 1)); }
expect_eq() { # NAME EXPECTED ACTUAL
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1 (expected '$2', got '$3')"; fi
}

expect_eq "lc lower-cases" "hello" "$(lc HeLLo)"

echo "$failures failure(s)"
[ "$failures" -eq 0 ] || exit 1
