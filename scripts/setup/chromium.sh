#!/usr/bin/env bash
# Debian's headless Chromium (the package chromium-headless-shell: Chromium's headless shell, without
# the windowed browser's compositing), for the docs' browser tests: a fresh machine starts without it,
# and `npx playwright install` cannot download a browser here. Installed once, before the tests, so no
# test's time limit runs while apt works. Waits for dpkg's lock rather than failing on it.
set -euo pipefail
chromium=/usr/bin/chromium-headless-shell
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "$chromium is missing: install Debian's chromium-headless-shell as root (apt-get install chromium-headless-shell)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt=(apt-get -qq -o DPkg::Lock::Timeout=600)
"${apt[@]}" update
"${apt[@]}" install -y chromium-headless-shell > /dev/null
"$chromium" --version
