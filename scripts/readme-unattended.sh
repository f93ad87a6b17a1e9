#!/usr/bin/env bash
# Runs the README's test command, the first code block under its
# "## Build and test" heading, the way a new user's script, a CI job or an
# agent's shell tool would: with no terminal (stdin from /dev/null, in a
# session of its own), with an empty npm cache so that nothing npx needs is
# already there, and with npm's `yes` setting false, as some machines set it.
# Every other npm setting of the user's is kept, so what fails here fails for
# the README, not for this script. Exits with the block's status.
set -euo pipefail
cd "$(dirname "$0")/.."
heading="## Build and test"
block="$(awk -v heading="$heading" '
  $0 == heading { under = 1; next }
  under && /^## / { exit }
  under && /^```sh$/ { inside = 1; next }
  inside && /^```$/ { exit }
  inside { print }
' README.md)"
if [ -z "$block" ]; then
  echo "readme-unattended: the README has no \`\`\`sh block under \"$heading\"" >&2
  exit 2
fi
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
printf 'readme-unattended: running, with no terminal and an empty npm cache:\n%s\n' "$block" >&2
npm_config_cache="$cache" npm_config_yes=false \
  setsid -w sh -e -c "$block" </dev/null
