#!/usr/bin/env sh
# The browser the end-to-end tests drive: Debian's Chromium (playwright-core never downloads one).
# Installs it when /usr/bin/chromium is missing; needs root (CI runs as root) or sudo.
set -eu
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
