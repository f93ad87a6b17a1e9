#!/bin/sh
# Runs a real, noisy command through spillway (the core package's own test
# suite, verbose), then shows the saved file and reads part of it back.
set -eu
export SPILLWAY_OUTPUT_DIR="${SPILLWAY_OUTPUT_DIR:-$PWD/.spillway-demo}"
show() { printf '\n$ %s\n' "$*"; }

show spillway run -- pnpm exec vitest run --reporter=verbose packages/core
status=0
pnpm exec spillway run -- pnpm exec vitest run --reporter=verbose packages/core || status=$?
name=$(ls -t "$SPILLWAY_OUTPUT_DIR" | head -n 1)

show ls -l "$SPILLWAY_OUTPUT_DIR"
ls -l "$SPILLWAY_OUTPUT_DIR"

show spillway read "$name" --offset 40 --limit 5
pnpm exec spillway read "$name" --offset 40 --limit 5

show spillway grep "'Tests|Test Files'" "$name"
pnpm exec spillway grep 'Tests|Test Files' "$name"
exit "$status"
