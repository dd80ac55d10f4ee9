#!/usr/bin/env bash
# Debian's Chromium for the page's tests in a real browser, installed once and reused.
# Prints how long the install took (0 when it was already there).
set -euo pipefail

started=$(date +%s)
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
fi
echo $(( $(date +%s) - started ))
