#!/usr/bin/env bash
# Installs, from Debian's packages and without prompting, the programs whose
# real output some tests mask (php-cli for `json_encode`, xxd, bsdextrautils
# for `hexdump -C`) when they are missing. The tests skip a program that is
# not there, saying which; this keeps CI from skipping them. Needs root.
set -euo pipefail
missing=()
command -v php >/dev/null 2>&1 || missing+=(php-cli)
command -v xxd >/dev/null 2>&1 || missing+=(xxd)
command -v hexdump >/dev/null 2>&1 || missing+=(bsdextrautils)
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
echo "test tools: php $(php -r 'echo PHP_VERSION;'), $(xxd -v 2>&1 | head -1), hexdump $(command -v hexdump)" >&2
