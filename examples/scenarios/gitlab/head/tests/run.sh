#!/bin/sh
# The tests: sh tests/run.sh from the project's root.
. ./lib/greet.sh
fail=0
check() {
    if [ "$2" = "$3" ]; then
        echo "ok - $1"
    else
        echo "FAIL - $1: got '$2', want '$3'"
        fail=1
    fi
}
check "default greeting" "$(greet Ada)" "Hello, Ada!"
check "custom greeting" "$(greet Ada Hi)" "Hi, Ada!"
check "everyone" "$(greet_all Ada Grace)" "$(printf 'Hello, Ada!\nHello, Grace!')"
exit $fail
