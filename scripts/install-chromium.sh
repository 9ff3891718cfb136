#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (as root: apt-get; the
# browser download of Playwright does not work here, so playwright-core drives this one). Prints
# the browser's path. Idempotent.
set -euo pipefail
bin=/usr/bin/chromium
if [ ! -x "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "install-chromium: Chromium is missing and installing it needs root: apt-get install -y chromium" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  # one apt at a time (the test harness installs PostgreSQL under the same lock, tests/services/pg.py)
  exec 9>/tmp/cardroom-apt.lock
  flock 9
  if [ ! -x "$bin" ]; then
    apt-get update >/dev/null
    apt-get install -y --no-install-recommends chromium >/dev/null
  fi
  exec 9>&-
fi
"$bin" --version >/dev/null 2>&1 || { echo "install-chromium: $bin does not run" >&2; exit 1; }
echo "$bin"
