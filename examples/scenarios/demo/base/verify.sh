#!/bin/sh
# Verifies the project: what CI runs.
cd "$(dirname "$0")" || exit 2
exec sh tests/run.sh
