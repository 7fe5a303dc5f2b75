#!/usr/bin/env sh
# The peers `npm run bench -- search` times the service against: grep (always there) and ripgrep,
# Debian's package ripgrep. Installs it when rg is missing; needs root or sudo.
set -eu
if command -v rg >/dev/null 2>&1; then
  rg --version | head -n 1
  exit 0
fi
run() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
export DEBIAN_FRONTEND=noninteractive
run apt-get update -qq
run apt-get install -y -qq --no-install-recommends ripgrep >/dev/null
rg --version | head -n 1
