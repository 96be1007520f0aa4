#!/usr/bin/env bash
# npm run test:beside [-- vitest arguments]: `npm test` while two CPU-bound processes run beside it,
# as on a CI runner or a laptop that is busy with something else. A test that passes alone and fails
# here depends on timing (a wait by time instead of readiness, a time-out too short for a loaded
# machine, a port it did not reserve): fix its cause, do not re-run until green.
#
#   npm run test:beside                          # the whole suite, two busy loops beside it
#   npm run test:beside -- test/mock/mock.test.ts  # some files
#   PGW_LOAD_PROCESSES=4 npm run test:beside      # more load
#   PGW_BESIDE_SCRIPT=test:times npm run test:beside   # the run's CPU and wall figures too (test:times)
#
# The busy loops are this script's own children, stopped by their process ids when the run ends,
# however it ends. The exit status is the test run's.
set -u
count=${PGW_LOAD_PROCESSES:-2}
script=${PGW_BESIDE_SCRIPT:-test}
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  pids=()
}
trap stop EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < count; i++)); do
  sh -c 'while :; do :; done' &
  pids+=("$!")
done
echo "test:beside: ${count} CPU-bound processes beside the tests (pids ${pids[*]}), load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
npm run "$script" -- "$@"
status=$?
echo "test:beside: load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) at the end; npm run ${script} exited ${status}"
exit "$status"
