#!/usr/bin/env bash
# The third-party tools of the compatibility matrix (docs/TOOLS.md): their own pinned package in
# scripts/tools (kept out of the package's dependencies so that `npm ci` stays light), and Java from
# Debian's packages for Specmatic. Says why when something cannot be installed; never fails CI for it
# (the matrix then reports the tool as not run, with the reason).
set -uo pipefail
cd "$(dirname "$0")/../tools"
if ! npm ci --no-audit --no-fund --loglevel=error; then
  echo "tools: npm ci in scripts/tools failed (is the npm registry reachable?); the matrix will say which tools are missing"
fi
if ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null) \
      || echo "tools: apt-get could not install openjdk-17-jre-headless; Specmatic will not run"
  else
    echo "tools: no java and no root apt-get to install openjdk-17-jre-headless; Specmatic will not run"
  fi
fi
