#!/usr/bin/env bash
# Installs Debian's Chromium (/usr/bin/chromium) for the web view's browser
# tests when it is missing, without prompting. Playwright's playwright-core
# drives it; it never downloads a browser of its own. Needs root (apt-get).
set -euo pipefail
if [ ! -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq chromium >&2
fi
echo "chromium: $(/usr/bin/chromium --version 2>/dev/null)" >&2
