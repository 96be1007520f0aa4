#!/usr/bin/env bash
# Debian's Chromium, for the docs' browser test: a fresh machine starts without it, and
# `npx playwright install` cannot download a browser here. Installed once, before the tests, so no
# test's time limit runs while apt works. Waits for dpkg's lock rather than failing on it.
set -euo pipefail
chromium=/usr/bin/chromium
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "$chromium is missing: install Debian's chromium as root (apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -qq -o DPkg::Lock::Timeout=600)
"${apt[@]}" update
"${apt[@]}" install -y chromium > /dev/null
"$chromium" --version
