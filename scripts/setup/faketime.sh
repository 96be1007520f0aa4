#!/usr/bin/env bash
# libfaketime (Debian's `faketime` package, which brings libfaketime) for the pinned-instants test
# (test/contract-suite/pinned-instants.test.ts): the sandbox and the contract suite each run under a
# pinned instant of the week (weekdays, a weekend, evenings around the settlement cut-off, the nights
# the Sydney clocks change), their whole process moved, the HTTP Date header included. Installed once,
# before the tests, so no test's time limit runs while apt works; waits for dpkg's lock rather than
# failing on it.
#
# Prints one line on stdout: `faketime: ok (<library>)`, or `faketime: missing (why)`. Exits 0 either
# way: on a machine where it cannot be installed the test skips, saying why.
set -uo pipefail
# shellcheck source=scripts/setup/debian.sh
source "$(dirname "$0")/debian.sh"

# The library the test preloads (the multithreaded build: Node runs threads), where Debian puts it.
library() {
  local found
  for found in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1 /usr/local/lib/faketime/libfaketimeMT.so.1; do
    [[ -f $found ]] && { echo "$found"; return 0; }
  done
  return 1
}

library >/dev/null || debian_install faketime libfaketime faketime

if lib=$(library); then echo "faketime: ok ($lib)"; else echo "faketime: missing (package: faketime)"; fi
