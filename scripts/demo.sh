#!/bin/sh
# Runs a real, noisy command through spillway, then shows the saved file and
# reads part of it back.
set -eu
export SPILLWAY_OUTPUT_DIR="${SPILLWAY_OUTPUT_DIR:-$PWD/.spillway-demo}"
echo "\$ spillway run -- npx tsc -b --verbose --force tsconfig.json"
status=0
pnpm exec spillway run -- npx tsc -b --verbose --force tsconfig.json || status=$?
name=$(ls -t "$SPILLWAY_OUTPUT_DIR" | head -n 1)
echo
echo "\$ ls -l $SPILLWAY_OUTPUT_DIR"
ls -l "$SPILLWAY_OUTPUT_DIR"
echo
echo "\$ spillway read $name --offset 20 --limit 5"
pnpm exec spillway read "$name" --offset 20 --limit 5
echo
echo "\$ spillway grep 'Building project' $name --max-results 3"
pnpm exec spillway grep 'Building project' "$name" --max-results 3
echo "(the command exited with $status)"
